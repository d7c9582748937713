"""Page logic through Streamlit's AppTest (headless, no browser)."""

from pathlib import Path

from tests.support.app_support import app, clinician_markdown, run_home

ROOT = Path(__file__).resolve().parents[2]


def test_home_shows_patient_picker_upload_and_documents(app_env, demo_patient):
    from core.services.admin.access_audit import events

    at = run_home()
    assert not at.exception, at.exception
    picker = at.sidebar.selectbox[0]
    assert any("Quintero-Vale" in str(o) for o in picker.options)
    # Nobody has chosen a patient yet (and this user viewed none): no chart opens, no view is logged.
    assert picker.value is None and any("Choose a patient in the sidebar" in i.value for i in at.info)
    assert not events(app_env, actor="dr.reviewer", event="view_chart")
    picker.set_value(demo_patient["id"]).run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Chart overview"
    # Uploading lives on the Documents page; the overview links there and welcomes a new chart.
    assert any(link.proto.label.startswith("Upload or open documents") for link in at.get("page_link"))
    assert any("Welcome to the review workbench" in i.value for i in at.info)
    assert any("No documents on this chart yet" in i.value for i in at.info)


def test_home_lists_a_stored_document_with_its_job(app_env, demo_patient, tmp_path):
    from core.services.ingest.ingestion import attach_and_extract

    f = tmp_path / "lab.pdf"
    f.write_bytes(b"%PDF-1.4 not parsed in this test")
    attach_and_extract(app_env, patient_id=demo_patient["id"], source=f, doc_type="lab_pdf", by="dr.alice")
    at = run_home(patient_id=demo_patient["id"])
    assert not at.exception, at.exception
    table = at.get("dataframe")[0].value
    assert list(table["file"]) == ["lab.pdf"]
    assert table["status"].iloc[0] == "waiting to be read"


def _ingest_lab(wb):
    from datetime import date

    from core.services.admin.patients import add_patient
    from core.services.ingest.worker import Worker
    from golden.fixtures import LAB_CASES, render_lab

    case = LAB_CASES[0]
    p = case.patient
    patient = add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=date.fromisoformat(p.dob), sex=p.sex,
                          by="dr.alice")
    from core.services.ingest.ingestion import attach_and_extract

    attached = attach_and_extract(wb, patient_id=patient["id"], source="lab.pdf", data=render_lab(case),
                                  filename="lab.pdf", doc_type="lab_pdf", by="dr.alice")
    Worker(wb).run_specific(attached.job["id"])
    return patient, case


def test_chat_page_answers_with_citations_and_refuses(app_env):
    patient, case = _ingest_lab(app_env)
    at = run_home(patient_id=patient["id"])
    at.switch_page("app_pages/chat.py").run()
    assert not at.exception, at.exception
    at.chat_input[0].set_value("What is her latest A1c?").run()
    assert not at.exception, at.exception
    texts = " ".join(m.value for m in at.markdown)
    a1c = next(r for r in case.results if "A1c" in r.test_name)
    assert f"{a1c.value} {a1c.unit}" in texts and "Patient Findings" in texts
    # Citations read in plain words (file name and place); the internal ids only on hover.
    cited = next(t for t in at.toggle if t.label.startswith("Source: lab.pdf, page "))
    assert "documents:" not in cited.label and "documents:" in cited.help
    assert not any("documents:" in t.label for t in at.toggle)
    assert any(c.value.startswith("About: ") for c in at.caption)  # how the question was read, in words
    cited.set_value(True).run()
    assert not at.exception, at.exception
    (page,) = at.get("bidi_component")  # the viewer, the cited box emphasised
    import json

    boxes = json.loads(page.proto.json)["boxes"]
    assert [b["cls"] for b in boxes if b["selected"]] == ["cited"]
    at.chat_input[0].set_value("and her LDL?").run()
    texts = " ".join(m.value for m in at.markdown)
    assert "LDL Cholesterol" in texts
    at.chat_input[0].set_value("Should I double her metformin dose?").run()
    assert any("can't recommend or change a dose" in w.value for w in at.warning)
    # An old answer still links a document deleted since: it says so, and when and by whom.
    from core.services.review.retraction import delete_document
    from storage import documents_repo

    with app_env.db.cursor() as cur:
        (doc,) = documents_repo.for_patient(cur, patient["id"])
    delete_document(app_env, doc["id"], by="dr.alice")
    at.run()
    gone = next(t for t in at.toggle if t.label.startswith("Source: lab.pdf, page "))
    assert gone.label.endswith("(deleted)") and gone.value  # still open from before
    assert any(w.value.startswith("This source was deleted on ") and w.value.endswith("by dr.alice.")
               for w in at.warning)


def test_facts_are_grouped_by_certainty_on_the_overview(app_env):
    patient, case = _ingest_lab(app_env)
    at = run_home(patient_id=patient["id"])
    assert not at.exception, at.exception
    labels = [e.label for e in at.expander]
    assert any(l.startswith(f"Checked against the page and added to the chart — {len(case.results)}") for l in labels)
    table = at.get("dataframe")[0].value
    assert table["status"].iloc[0] == "read" and table["patient match"].iloc[0] == "matches this patient"


def test_review_queue_approves_a_quarantined_document(app_env):
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.admin.patients import get_patient
    from core.services.ingest.worker import Worker
    from golden.fixtures import LAB_CASES, render_lab

    someone = get_patient(app_env, mrn="DEMO-1002")
    attached = attach_and_extract(app_env, patient_id=someone["id"], source="x.pdf", data=render_lab(LAB_CASES[0]),
                                  filename="x.pdf", doc_type="lab_pdf", by="dr.alice")
    Worker(app_env).run_specific(attached.job["id"])
    at = run_home(patient_id=someone["id"])
    at.switch_page("app_pages/review_queue.py").run()
    assert not at.exception, at.exception
    assert any("names another patient: kept off this chart" in m.value for m in at.markdown)
    assert not any("identity_mismatch_quarantined" in m for m in clinician_markdown(at))  # plain words only
    from core.services.review.facts import document_report

    # A mismatch is approved only with a written reason and a ticked confirmation.
    next(b for b in at.button if b.label == "Approve identity").click().run()
    assert any("written reason" in e.value for e in at.error)
    assert document_report(app_env, attached.document["id"])["identity"]["status"] == "identity_mismatch_quarantined"
    next(t for t in at.text_input if t.label.startswith("Reason")).input("scanned under the mother's chart").run()
    next(c for c in at.checkbox if c.label.startswith("I have checked")).check().run()
    next(b for b in at.button if b.label == "Approve identity").click().run()
    assert not at.exception, at.exception
    assert document_report(app_env, attached.document["id"])["identity"]["status"] == "identity_review_approved"


def test_the_url_keeps_the_chosen_patient(app_env):
    from core.services.admin.patients import get_patient

    second = get_patient(app_env, mrn="DEMO-1003")
    at = app(patient=second["id"]).run()
    assert not at.exception, at.exception
    assert at.sidebar.selectbox[0].value == second["id"]  # a reload opens the same chart
    first = get_patient(app_env, mrn="DEMO-1001")
    at.sidebar.selectbox[0].set_value(first["id"]).run()
    assert at.query_params["patient"] == [str(first["id"])] or at.query_params["patient"] == str(first["id"])
