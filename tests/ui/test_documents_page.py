"""The Documents page through AppTest: plain status and the fact list, a multi-file
upload that stores and queues each file, and delete with a preview then a sentence."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from golden.demo import DOCUMENTS
from tests.support.app_support import (clinician_markdown, document_metrics, document_picker, documents_page,
                                       sign_in_session)

ROOT = Path(__file__).resolve().parents[2]


def _load(wb, *filenames: str) -> dict[str, int]:
    from core.services.ingest.demo import load_demo

    return {d["filename"]: d["document_id"]
            for d in load_demo(wb, [d for d in DOCUMENTS if d.filename in filenames])}


def test_a_read_document_shows_its_plain_status_and_its_facts(app_env, demo_patient):
    docs = _load(app_env, "demo-lab-typed.pdf", "demo-wrong-patient-lab.pdf")
    at = documents_page(demo_patient["id"], document=str(docs["demo-lab-typed.pdf"]))
    assert document_picker(at).value == docs["demo-lab-typed.pdf"]
    assert document_metrics(at) == {"Status": "read", "Patient match": "matches this patient",
                                    "What happened": "read, 10 added to the chart"}
    facts = at.get("dataframe")[0].value
    assert len(facts) == 10
    assert facts["where"].iloc[0] == "page 1, row ‘WBC’"  # plain location, not results[0]
    assert set(facts["status"]) == {"checked against the page, added to the chart"}
    assert "Facts (10)" in " ".join(m.value for m in at.markdown)

    document_picker(at).set_value(docs["demo-wrong-patient-lab.pdf"]).run()
    assert document_metrics(at)["Patient match"] == "names another patient: kept off this chart"
    assert document_metrics(at)["What happened"] == "held: names another patient"  # never "9 verified"
    assert set(at.get("dataframe")[0].value["status"]) == {"on hold — names another patient: kept off this chart"}
    assert not any("identity_mismatch_quarantined" in m for m in clinician_markdown(at))
    support = [m.value for e in at.expander if e.label == "Details for support" for m in e.markdown]
    assert any("identity_mismatch_quarantined" in m for m in support)  # kept, folded, for those who need it


def test_a_multi_file_upload_stores_each_file_and_queues_its_job(app_env, demo_patient):
    from core.services.admin.patients import chart_documents

    by_name = {d.filename: d for d in DOCUMENTS}
    at = documents_page(demo_patient["id"])
    assert any("No documents on this chart yet" in i.value for i in at.info)
    at.file_uploader[0].set_value([
        ("potassium.hl7", by_name["demo-critical-potassium.hl7"].build(), "text/plain"),
        ("trend.xlsx", by_name["demo-workbook.xlsx"].build(), "application/octet-stream"),
    ]).run()
    assert not at.exception, at.exception
    # The category is suggested from each file's bytes.
    assert [s.value for s in at.selectbox if s.key and s.key.startswith("upload-cat-")] == \
        ["HL7 v2 Message", "Clinical Workbook"]
    next(b for b in at.button if b.label == "Upload 2 files").click().run()
    assert not at.exception, at.exception
    stored = {d["filename"]: d for d in chart_documents(app_env, demo_patient["id"])}
    assert set(stored) == {"potassium.hl7", "trend.xlsx"}
    assert {d["job_status"] for d in stored.values()} == {"pending"}
    assert {d["doc_type"] for d in stored.values()} == {"hl7v2_message", "clinical_workbook"}
    bars = [p.proto.text if hasattr(p, "proto") else "" for p in at.get("progress")]
    assert sorted(bars) == ["potassium.hl7: stored, waiting to be read", "trend.xlsx: stored, waiting to be read"]

    from core.services.ingest.worker import Worker

    for d in stored.values():
        Worker(app_env).run_specific(d["job_id"])
    at.run()
    notices = [s.value for s in at.success]
    assert "potassium.hl7: read, 2 added to the chart." in notices and "trend.xlsx: read, 2 added to the chart." in notices


def test_the_upload_notice_says_a_report_of_another_patient_is_held_never_verified(app_env, demo_patient):
    from core.services.admin.patients import chart_documents
    from core.services.ingest.worker import Worker

    by_name = {d.filename: d for d in DOCUMENTS}
    at = documents_page(demo_patient["id"])
    at.file_uploader[0].set_value([
        ("outside-lab.pdf", by_name["demo-wrong-patient-lab.pdf"].build(), "application/pdf"),
        ("repeat.pdf", by_name["demo-lab-repeat.pdf"].build(), "application/pdf"),
    ]).run()
    next(b for b in at.button if b.label == "Upload 2 files").click().run()
    assert not at.exception, at.exception
    for d in chart_documents(app_env, demo_patient["id"]):
        Worker(app_env).run_specific(d["job_id"])
    at.run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["outside-lab.pdf: held: names another patient."]
    said = " ".join(n.value for n in [*at.success, *at.warning, *at.error])
    assert "verified" not in said
    # a report that only repeats the chart: said as it is, without a warning
    assert any(s.value.startswith("repeat.pdf: read, ") and "added to the chart" in s.value for s in at.success)


def test_delete_previews_the_impact_then_says_what_happened(app_env, demo_patient):
    from storage import documents_repo

    docs = _load(app_env, "demo-lab-typed.pdf", "demo-workbook.xlsx")
    lab = docs["demo-lab-typed.pdf"]
    at = documents_page(demo_patient["id"], document=str(lab))
    next(b for b in at.button if b.label == "Delete this document…").click().run()
    preview = " ".join(w.value for w in at.warning)
    assert "takes out its 10 finding(s) (10 of them added to the chart)" in preview
    assert "9 chart row(s) will be taken out of the chart" in preview
    assert "1 chart row(s) stay because another document still supports them: Hemoglobin A1c (demo-workbook.xlsx)" \
        in preview
    with app_env.db.cursor() as cur:
        assert not documents_repo.by_id(cur, lab)["deleted"]  # a preview changes nothing

    next(b for b in at.button if b.label == "Yes, delete it and take out its findings").click().run()
    assert not at.exception, at.exception
    with app_env.db.cursor() as cur:
        row = documents_repo.by_id(cur, lab)
    assert row["deleted"] and row["deleted_by"] == "dr.reviewer"  # the signed-in user
    assert any(s.value.startswith("demo-lab-typed.pdf was deleted. Its 10 finding(s) were taken out (10 had been "
                                  "added to the chart); 9 chart row(s)") for s in at.success)
    assert document_metrics(at)["Status"].startswith("deleted on ")
    assert any(w.value.startswith("This document was deleted on ") for w in at.warning)
    assert any(o.startswith("demo-lab-typed.pdf · lab report · deleted on ") for o in document_picker(at).options)
    assert not any(b.label == "Delete this document…" for b in at.button)


def _overlay(at) -> dict:
    import json

    (element,) = at.get("bidi_component")
    assert element.proto.component_name == "cdw_page_overlay"
    return json.loads(element.proto.json)


def test_the_viewer_draws_every_box_and_follows_a_fact_link(app_env, demo_patient):
    from core.services.review.facts import document_report

    fax = _load(app_env, "demo-fax-packet.pdf")["demo-fax-packet.pdf"]
    facts = document_report(app_env, fax)["facts"]
    on_page = {n: [f for f in facts if f["citation"]["page"] == n and f["citation"]["bounding_box"]] for n in (1, 2, 3)}
    other_patients = on_page[3][2]  # a result on the page of another patient
    at = documents_page(demo_patient["id"], document=str(fax), fact=str(other_patients["fact_id"]))
    drawn = _overlay(at)
    assert drawn["src"].startswith("data:image/")
    assert len(drawn["boxes"]) == len(on_page[3])  # the linked fact's page, every box on it
    assert {b["cls"] for b in drawn["boxes"]} == {"held"}  # that page names another patient
    assert [b["id"] for b in drawn["boxes"] if b["selected"]] == [other_patients["fact_id"]]
    assert any(c.value.startswith(f"Chosen: **{other_patients['fact_text']}**") for c in at.caption)
    assert not any(w.value.startswith("Page 1:") for w in at.warning)  # the cover page's warning is not shown here
    pages = next(p for p in at.get("button_group") if p.proto.label == "Page")
    assert len(pages.proto.options) == 3

    at.query_params["fact"] = str(on_page[2][0]["fact_id"])
    at.run()
    drawn = _overlay(at)
    assert len(drawn["boxes"]) == len(on_page[2]) and {b["cls"] for b in drawn["boxes"]} == {"verified"}


def test_a_chat_citation_opens_the_viewer_at_the_cited_place(app_env, demo_patient):
    from core.services.review.facts import document_report

    docs = _load(app_env, "demo-lab-typed.pdf", "demo-critical-potassium.hl7")
    lab_cite = document_report(app_env, docs["demo-lab-typed.pdf"])["facts"][2]["citation"]
    hl7_cite = document_report(app_env, docs["demo-critical-potassium.hl7"])["facts"][0]["citation"]

    def page(lab_cite, hl7_cite):
        from ui.runtime import workbench
        from ui.widgets import show_citation

        show_citation(workbench(), lab_cite, key="lab")
        show_citation(workbench(), hl7_cite, key="hl7")

    at = sign_in_session(AppTest.from_function(page, args=(lab_cite, hl7_cite), default_timeout=60), wb=app_env)
    at.session_state["patient_id"] = demo_patient["id"]
    at.run()
    assert not at.exception, at.exception
    assert not at.get("bidi_component") and not at.get("dataframe")  # closed until asked
    for toggle in at.toggle:
        toggle.set_value(True)
    at.run()
    assert not at.exception, at.exception
    drawn = _overlay(at)
    cited = [b for b in drawn["boxes"] if b["cls"] == "cited"]
    assert len(cited) == 1 and cited[0]["selected"] and cited[0]["x"] == lab_cite["bounding_box"]["x"]
    assert len(drawn["boxes"]) == 10  # the other boxes of the page stay visible
    segment = at.get("dataframe")[0].value
    assert "OBX 1" in set(segment["segment"]) and "6.8" in set(segment["value"])
    assert any(c.value.startswith("Test: Potassium · unit: mmol/L") for c in at.caption)
    # Each opened source is one view in the access audit, for the signed-in user and the patient.
    from core.services.admin.access_audit import VIEW_DOCUMENT, events

    def views() -> set:
        return {(e["actor"], e["patient_id"], e["object_id"]) for e in events(app_env, event=VIEW_DOCUMENT)}

    expected = {("dr.reviewer", demo_patient["id"], str(docs[name]))
                for name in ("demo-lab-typed.pdf", "demo-critical-potassium.hl7")}
    assert views() == expected
    at.run()  # the same sources still open: no new rows
    assert len(events(app_env, event=VIEW_DOCUMENT)) == 2


def test_a_document_with_results_no_reader_read_says_so_instead_of_a_plain_success(app_env):
    from golden.coverage_layouts import LAYOUTS
    from tests.support.pipeline import CASE, chart_patient, ingest

    layout = LAYOUTS["results in sentences"]  # a letter whose results the lab reader takes only in part
    patient = chart_patient(app_env, CASE.patient)
    report = ingest(app_env, patient, layout.build(), layout.doc_type, "letter.pdf")
    unread = report["job"]["counts"]["unread_content"]
    at = documents_page(patient["id"], document=str(report["document_id"]))
    status = document_metrics(at)["Status"]
    assert status == f"read, but {unread} results were not read — see review"
    warnings = " ".join(w.value for w in at.warning)
    assert f"{unread} results were printed on this document but not read" in warnings
    # The picker says what happened, outcome first: the letter names no one this chart can
    # match, so its findings wait on the patient match; the results no reader read are said too.
    said = f"held: patient match needs review · {unread} results were not read"
    assert document_metrics(at)["What happened"] == said
    assert f"letter.pdf · lab report · {said}" in document_picker(at).options[0]
