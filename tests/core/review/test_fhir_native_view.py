"""A FHIR bundle shown natively: the cited resource as a tree with the element read
marked (service), on the Documents page through AppTest, and a resource that failed
validation listed as such beside the review item that names it."""

from __future__ import annotations

from datetime import date

import pytest

from core.services.admin.patients import add_patient
from core.services.review import document_view as dv
from core.services.review import native_views
from core.services.review.facts import document_report
from domain.errors import NotFound
from tests.support import fhir_bundles as F
from tests.support.app_support import documents_page
from tests.support.pipeline import ingest
from ui.inert import md_text


@pytest.fixture(autouse=True)
def _fresh_caches():
    dv.clear_caches()
    yield
    dv.clear_caches()


def _bundle_on_chart(wb, doc=None):
    patient = add_patient(wb, mrn="WB-FH-3301", first="Odalys", last="Brennerman", dob=date(1961, 7, 19),
                          sex="F", by="dr.reviewer")
    report = ingest(wb, patient, F.as_bytes(doc or F.patient_bundle()), "fhir_bundle", name="export.json")
    return patient, report["document_id"], document_report(wb, report["document_id"])["facts"]


def test_the_cited_element_is_marked_in_its_resource_tree(wb):
    _, doc, facts = _bundle_on_chart(wb)
    view = dv.document_view(wb, doc)
    assert (view.kind, view.paged) == ("fhir", False)
    potassium = next(f for f in facts if f["structured_value"].get("test_name") == "Potassium")
    tree = native_views.fhir_tree(wb, potassium["citation"], document_id=doc)
    assert tree.resource == "Bundle.entry[1].resource"
    cited = {r["path"]: r["value"] for r in tree.rows if r["cited"]}
    assert cited["Bundle.entry[1].resource.valueQuantity.value"] == "6.1"
    assert "Bundle.entry[1].resource.code" not in cited  # only the element read and what it holds
    assert {r["path"] for r in tree.rows if r["on_path"]} == {"Bundle.entry[1].resource"}
    assert [r["cited"] for r in tree.resources].count(True) == 1 and len(tree.resources) == 9
    with pytest.raises(NotFound):
        native_views.fhir_tree(wb, {**potassium["citation"], "page_or_section": "Bundle.entry[99].resource.code"},
                               document_id=doc)


def test_documents_page_shows_the_bundle_tree_for_a_chosen_fact(app_env):
    patient, doc, facts = _bundle_on_chart(app_env)
    bp = next(f for f in facts if f["fact_type"] == "vital_sign")
    at = documents_page(patient["id"], document=str(doc), fact=str(bp["fact_id"]))
    shown = " ".join(m.value for m in at.markdown)
    assert md_text("Bundle.entry[4].resource.component[0].valueQuantity") in shown and "“152”" in shown
    frames = [d.value for d in at.dataframe]
    tree = next(f for f in frames if list(f.columns) == ["element", "value"])
    assert "152" in set(tree["value"]) and any(e.strip() == "valueQuantity" for e in tree["element"])
    listing = next(f for f in frames if list(f.columns) == ["resource", "what", "read"])
    assert len(listing) == 9


def test_a_resource_that_failed_validation_is_listed_as_such(app_env):
    bad = F.lab("2823-3", "Potassium", 5.0, "mmol/L")
    bad["valueQuantity"]["value"] = "five"
    patient, doc, facts = _bundle_on_chart(app_env, F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19",
                                                                       "WB-FH-3301"), bad))
    unread = next(f for f in facts if f["fact_type"] == "unread_content")
    tree = native_views.fhir_tree(app_env, unread["citation"], document_id=doc)
    assert tree.resource == "Bundle.entry[1].resource"
    assert [r["valid"] for r in tree.resources] == [True, False]
    at = documents_page(patient["id"], document=str(doc), fact=str(unread["fact_id"]))
    assert md_text("Bundle.entry[1].resource") in " ".join(m.value for m in at.markdown)


def test_payloads_in_a_bundle_are_shown_as_text(app_env):
    from tests.support.inert_support import IMG, LINK, SCRIPT, assert_inert, shown_markdown

    patient, doc, facts = _bundle_on_chart(app_env, F.bundle(
        F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"),
        F.lab("2951-2", f"Sodium {IMG} {LINK}", 139, "mmol/L"),
        F.allergy(f"Penicillin {SCRIPT}", "764146007")))
    for fact in facts:
        if fact["fact_type"] in ("lab_result", "allergy"):
            at = documents_page(patient["id"], document=str(doc), fact=str(fact["fact_id"]))
            assert_inert(shown_markdown(at))
