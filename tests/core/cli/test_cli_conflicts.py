"""A finding that differs from the chart, decided from the command line (issue 26):
`review approve-fact` alone is refused with exit 2, naming the chart's value and the
three choices, and changes nothing; `--resolution keep-both` keeps both values."""

from __future__ import annotations

import dataclasses

from golden.fixtures import LAB_CASES, render_lab
from tests.support.cli_support import as_json, cli

CASE = LAB_CASES[0]


def test_a_conflict_needs_an_explicit_resolution(tmp_path):
    d = tmp_path / "data"
    as_json(cli(d, "init", "--json"))
    as_json(cli(d, "user", "add", "--username", "dr.cli", "--role", "reviewer", "--json",
                stdin="cli-reviewer-amber-heron\n"))
    p = CASE.patient
    as_json(cli(d, "patient", "add", "--mrn", p.mrn, "--first", p.first, "--last", p.last, "--dob", p.dob, "--json"))
    panel, rows = CASE.panels[0]
    changed = dataclasses.replace(CASE, panels=((panel, (dataclasses.replace(rows[0], value="12.9"), *rows[1:])),
                                                *CASE.panels[1:]))
    reports = []
    for name, data in (("first.pdf", render_lab(CASE)), ("second.pdf", render_lab(changed))):
        (tmp_path / name).write_bytes(data)
        reports.append(as_json(cli(d, "ingest", str(tmp_path / name), "--patient", p.mrn, "--doc-type", "lab_pdf",
                                   "--json")))
    conflict = next(f for f in reports[1]["facts"] if f["promotion_status"] == "conflict_needs_review")

    refused = cli(d, "review", "approve-fact", "--fact", str(conflict["fact_id"]), "--by", "dr.cli", "--json",
                  check=False)
    assert refused.returncode == 2
    assert "resolution_required" in refused.stderr and "first.pdf" in refused.stderr
    assert all(word in refused.stderr for word in ("replace", "keep-both", "keep-chart"))

    decided = as_json(cli(d, "review", "approve-fact", "--fact", str(conflict["fact_id"]), "--by", "dr.cli",
                          "--resolution", "keep-both", "--json"))
    assert decided["promotion_status"] == "promoted"
    chart = as_json(cli(d, "chart", "--patient", p.mrn, "--json"))
    labs = chart.get("labs") or chart.get("chart_lab_results") or []
    assert sorted(r["value"] for r in labs if r["test_name"] == rows[0].test_name) == sorted([rows[0].value, "12.9"])
