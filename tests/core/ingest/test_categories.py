"""Category mappings (issue 12: an admin's change): what a clinic calls a document,
mapped to the reader that extracts it. Only an admin (or the shell operator) may change
one; each change is audited with the account; an unmapped category stores uploads
without reading them."""

from __future__ import annotations

import pytest

from domain.errors import BadInput, Forbidden
from core.services.ingest.categories import map_category
from core.services.ingest.ingestion import attach_and_extract, list_categories
from storage import audit_repo


def _mapping(wb, name):
    return {c["name"]: c["doc_type"] for c in list_categories(wb)}.get(name, "absent")


def test_an_admin_maps_a_new_category_and_uploads_in_it_are_read_as_that_type(wb, demo_patient):
    cat = map_category(wb, "  Outside   labs ", "lab_pdf", by="dr.admin")
    assert cat["name"] == "Outside labs" and cat["doc_type"] == "lab_pdf"
    attached = attach_and_extract(wb, patient_id=demo_patient["id"], source="x.pdf", data=b"%PDF-1.4 x",
                                  filename="x.pdf", category="outside labs", by="dr.reviewer")
    assert attached.job is not None and attached.job["doc_type"] == "lab_pdf"


def test_unmapping_stores_later_uploads_without_a_job_and_the_audit_keeps_before_and_after(wb, demo_patient):
    cat = map_category(wb, "Outside labs", "lab_pdf", by="dr.admin")
    map_category(wb, "Outside labs", None, by="dr.admin")
    assert _mapping(wb, "Outside labs") is None
    attached = attach_and_extract(wb, patient_id=demo_patient["id"], source="y.pdf", data=b"%PDF-1.4 y",
                                  filename="y.pdf", category="Outside labs", by="dr.reviewer")
    assert attached.job is None
    with wb.db.cursor() as cur:
        rows = audit_repo.review_decisions(cur, "category", cat["id"])
        cur.execute("SELECT id FROM users WHERE username = 'dr.admin'")
        admin_id = cur.fetchone()[0]
    assert [(r["before_state"], r["after_state"]) for r in rows] == [
        ({"doc_type": None}, {"doc_type": "lab_pdf"}), ({"doc_type": "lab_pdf"}, {"doc_type": None})]
    assert {r["actor"] for r in rows} == {"dr.admin"} and {r["user_id"] for r in rows} == {admin_id}


def test_mapping_to_the_same_type_again_writes_nothing(wb):
    cat = map_category(wb, "Faxes", "fax_packet", by="dr.admin")
    map_category(wb, "faxes", "fax_packet", by="dr.admin")  # names match without regard to case
    with wb.db.cursor() as cur:
        assert len(audit_repo.review_decisions(cur, "category", cat["id"])) == 1


@pytest.mark.parametrize("by", ["dr.reviewer", "dr.viewer", "system:demo"])
def test_only_an_admin_or_the_shell_operator_may_change_a_mapping(wb, by):
    before = list_categories(wb)
    with pytest.raises(Forbidden):
        map_category(wb, "Faxes", "lab_pdf", by=by)
    assert list_categories(wb) == before
    assert map_category(wb, "Shell mapped", "hl7v2_message", by="os:tester")["doc_type"] == "hl7v2_message"


@pytest.mark.parametrize("name, doc_type, code", [("", "lab_pdf", "bad_category"), ("x" * 61, "lab_pdf", "bad_category"),
                                                  ("Scans", "scan", "unsupported_doc_type")])
def test_bad_names_and_unknown_types_are_refused(wb, name, doc_type, code):
    with pytest.raises(BadInput) as err:
        map_category(wb, name, doc_type, by="dr.admin")
    assert err.value.code == code
