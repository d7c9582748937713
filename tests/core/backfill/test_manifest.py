"""The manifest: a header in any order or none, relative paths from the manifest's
folder, comments and blank lines skipped, and a row that is not one kept as a bad row
with its line number (never a crash)."""

from pathlib import Path

import pytest

from core.services.backfill.manifest import BAD_ROW, read_manifest
from domain.errors import BadInput


def test_a_header_names_the_columns_in_any_order(tmp_path):
    m = tmp_path / "m.csv"
    m.write_text("Doc Type,MRN,File\nlab_pdf,MRN-1,a.pdf\n\n# a note\nIntake Form, MRN-2 ,/abs/b.pdf\n")
    rows = read_manifest(m)
    assert [(r.line, r.path, r.mrn, r.kind, r.error) for r in rows] == [
        (2, tmp_path / "a.pdf", "MRN-1", "lab_pdf", None),
        (5, Path("/abs/b.pdf"), "MRN-2", "Intake Form", None)]


def test_without_a_header_the_columns_are_path_mrn_kind(tmp_path):
    (tmp_path / "sub").mkdir()
    m = tmp_path / "sub" / "m.csv"
    m.write_text("docs/x.pdf,M9,Lab Report\n")
    [row] = read_manifest(m)
    assert (row.line, row.path, row.mrn, row.kind) == (1, tmp_path / "sub" / "docs" / "x.pdf", "M9", "Lab Report")


def test_short_and_empty_rows_are_bad_rows_with_their_lines(tmp_path):
    m = tmp_path / "m.csv"
    m.write_text("path,mrn,category\nonly.pdf\n,M1,lab_pdf\nx.pdf,,lab_pdf\ny.pdf,M2,lab_pdf\n")
    rows = read_manifest(m)
    assert [(r.line, r.error) for r in rows] == [(2, BAD_ROW), (3, BAD_ROW), (4, BAD_ROW), (5, None)]


def test_a_missing_manifest_is_bad_input(tmp_path):
    with pytest.raises(BadInput) as err:
        read_manifest(tmp_path / "nope.csv")
    assert err.value.code == "manifest_not_found"
