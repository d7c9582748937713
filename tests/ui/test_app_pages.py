"""Whole-app pages through AppTest: sidebar, first-run welcome, adding a patient, plain
words on the overview, and the Operations page (jobs, retry, queue, heartbeat, latency);
plus the operations service underneath."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.support.app_support import failed_job, fresh_app_runtime, home, operations_page

ROOT = Path(__file__).resolve().parents[2]
INTERNAL_CODES = ("identity_mismatch_quarantined", "identity_verified", "not_promotable", "awaiting_identity",
                  "results[0]", "OBX[1]", "needs_review", "document_fact", "succeeded", "lab_pdf")
# The workbench's own words a clinician should not have to learn (issue 26, "Plain words").
INTERNAL_WORDS = ("not chart truth", "held back", "quarantined", "promoted", "superseded", "retracts", "OBX 1",
                  "LOINC", "from documents", "verified", "document fact", "fact 1")


@pytest.fixture
def empty_env(settings, monkeypatch):
    """A data dir with no patients at all (the runtime's demo seeding switched off)."""
    from core.services.workbench import open_workbench

    bench = open_workbench(settings)
    fresh_app_runtime(monkeypatch)
    monkeypatch.setattr("ui.runtime.seed_demo_patients", lambda wb: 0)
    yield bench
    st.cache_resource.clear()
    bench.close()


def patient_card(at: AppTest) -> str:
    """The sidebar's card of the chosen patient (below the signed-in user)."""
    return next(m.value for m in at.sidebar.markdown if "MRN " in m.value)


def shown(at: AppTest) -> str:
    """Every piece of text the page shows (markdown, captions, notices, tables, labels),
    but for what is folded into "Details for support" (the internal words, on purpose)."""
    support = {m.value for e in at.expander if e.label == "Details for support" for m in e.markdown}
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success", "title", "subheader")
             for e in getattr(at, kind) if e.value not in support]
    parts += [e.label for e in at.expander]
    parts += [d.value.to_string() for d in at.dataframe]
    return "\n".join(str(p) for p in parts)


def patients_in_db(wb) -> list[dict]:
    from core.services.admin.patients import list_patients

    return list_patients(wb)


def fill_patient_form(at: AppTest, *, mrn: str, first: str, last: str, dob: date | None, sex: str = "F") -> AppTest:
    by_label = {t.label: t for t in at.text_input}
    by_label["MRN"].input(mrn)
    by_label["First name"].input(first)
    by_label["Last name"].input(last)
    if dob is not None:
        next(d for d in at.date_input if d.label == "Date of birth").set_value(dob)
    next(r for r in at.radio if r.label == "Sex").set_value(sex)
    next(b for b in at.button if b.label == "Add patient").click()
    return at.run()


def _load(wb, *filenames: str) -> None:
    from core.services.ingest.demo import load_demo
    from golden.demo import DOCUMENTS

    load_demo(wb, [d for d in DOCUMENTS if d.filename in filenames])


# --- first run and adding a patient ----------------------------------------------------------

def test_an_empty_data_dir_welcomes_and_offers_the_add_patient_form(empty_env):
    at = home()
    assert not at.exception, at.exception
    text = shown(at)
    assert "Welcome to the review workbench" in text and "Add a patient with the form below" in text
    assert "python -m core demo" in text
    assert "No patients yet" in at.sidebar.info[0].value
    assert {t.label for t in at.text_input} >= {"MRN", "First name", "Last name"}


def test_adding_a_patient_inserts_the_row_and_selects_it_in_the_url(empty_env):
    at = home()
    at = fill_patient_form(at, mrn="ZX-77", first="Ines", last="Calloway", dob=date(1984, 6, 30))
    assert not at.exception, at.exception
    rows = patients_in_db(empty_env)
    assert [(p["mrn"], p["first_name"], p["last_name"], p["dob"], p["sex"]) for p in rows] == [
        ("ZX-77", "Ines", "Calloway", date(1984, 6, 30), "F")]
    new_id = rows[0]["id"]
    assert at.query_params["patient"] in ([str(new_id)], str(new_id))
    assert at.sidebar.selectbox[0].value == new_id
    assert any("Added Ines Calloway (MRN ZX-77)" in s.value for s in at.success)
    # The new patient has no documents yet: the welcome says what to do next.
    assert "Upload the patient's documents on the **Documents** page" in shown(at)


def test_adding_a_patient_next_to_others_selects_the_new_one(app_env):
    at = home()
    first_choice = at.sidebar.selectbox[0].value
    at = fill_patient_form(at, mrn="NEW-1", first="Rafe", last="Abbott", dob=date(1970, 1, 2), sex="M")
    assert not at.exception, at.exception
    added = next(p for p in patients_in_db(app_env) if p["mrn"] == "NEW-1")
    assert at.sidebar.selectbox[0].value == added["id"] != first_choice
    assert "Rafe Abbott" in patient_card(at)


def test_a_duplicate_mrn_is_refused_with_a_clear_error_and_nothing_is_inserted(app_env):
    before = len(patients_in_db(app_env))
    at = fill_patient_form(home(), mrn="DEMO-1001", first="Someone", last="Else", dob=date(1990, 5, 5))
    assert any("Patient not added: A patient with MRN DEMO-1001 already exists." == e.value for e in at.error)
    assert len(patients_in_db(app_env)) == before


def test_missing_names_and_date_are_refused_with_clear_errors(app_env):
    before = len(patients_in_db(app_env))
    at = fill_patient_form(home(), mrn="NEW-2", first="", last="", dob=None)
    assert any("needs a first name, a last name" in e.value for e in at.error)
    at = fill_patient_form(at, mrn="NEW-2", first="Ada", last="Moss", dob=None)
    assert any("needs a date of birth" in e.value for e in at.error)
    assert len(patients_in_db(app_env)) == before


def test_add_patient_service_validates_dates(wb):
    from domain.errors import BadInput
    from core.services.admin.patients import add_patient

    for dob, words in (("1990-13-01", "YYYY-MM-DD"), (date.today() + timedelta(days=1), "in the future"),
                       ("1850-01-01", "before 1900")):
        with pytest.raises(BadInput, match=words) as err:
            add_patient(wb, mrn="D-1", first="A", last="B", dob=dob, by="dr.alice")
        assert err.value.code == "bad_date"


# --- sidebar and overview ----------------------------------------------------------------------

def test_the_sidebar_shows_name_mrn_dob_and_sex(app_env, demo_patient):
    at = home(patient=demo_patient["id"])
    card = patient_card(at)
    assert "Marisol Quintero-Vale" in card and "MRN DEMO-1001" in card and "Born 14 Mar 1961" in card
    assert "female" in card


def test_the_sidebar_card_shows_a_typed_name_as_inert_text(app_env):
    from core.services.admin.patients import add_patient
    from ui.inert import md_text

    first, last = "![x](http://127.0.0.1:9/p.png)", ":red[Vale]"
    added = add_patient(app_env, mrn="**M-1**", first=first, last=last, dob="1961-03-14", by="dr.alice")
    at = home(patient=added["id"])
    card = patient_card(at)
    assert f"**{md_text(first)} {md_text(last)}**" in card and f"MRN {md_text('**M-1**')}" in card
    assert first not in card and last not in card


def test_the_overview_speaks_plain_words_and_links_to_the_documents_page(app_env, demo_patient):
    _load(app_env, "demo-lab-typed.pdf", "demo-intake.pdf", "demo-wrong-patient-lab.pdf",
          "demo-critical-potassium.hl7")
    at = home(patient=demo_patient["id"])
    assert not at.exception, at.exception
    text = shown(at)
    for code in INTERNAL_CODES + INTERNAL_WORDS:
        assert code not in text, code
    table = at.dataframe[0].value.set_index("file")
    assert table.loc["demo-wrong-patient-lab.pdf", "patient match"] == "names another patient: kept off this chart"
    assert table.loc["demo-wrong-patient-lab.pdf", "what happened"] == "held: names another patient"
    assert table.loc["demo-lab-typed.pdf", "status"] == "read"
    assert table.loc["demo-lab-typed.pdf", "patient match"] == "matches this patient"
    assert table.loc["demo-lab-typed.pdf", "type"] == "lab report"
    assert table.loc["demo-lab-typed.pdf", "what happened"] == "read, 10 added to the chart"
    assert "page 1, row ‘LDL Cholesterol’ of demo-lab-typed.pdf · checked against the page, added to the chart" in text
    assert "result 1 (Potassium) of demo-critical-potassium.hl7" in text
    assert "on hold until the patient is confirmed (names another patient: kept off this chart)" in text
    assert any(e.value.startswith("Critical: Potassium 6.8 mmol/L") for e in at.error)  # the banner stays
    assert not any(s.label == "Category" for s in at.selectbox)  # uploading moved to the Documents page
    links = [(link.proto.label, link.proto.page, link.proto.query_string) for link in at.get("page_link")]
    assert ("Upload or open documents on the Documents page", "documents", f"patient={demo_patient['id']}") in links
    viewer = [q for label, page, q in links if label == "Show in viewer"]
    assert len(viewer) == sum(int(e.label.rsplit("— ", 1)[1]) for e in at.expander if "— " in e.label)
    assert all(q.startswith(f"patient={demo_patient['id']}&document=") for q in viewer)


def test_a_job_that_found_nothing_reads_as_a_warning(app_env, demo_patient):
    import pymupdf

    from core.services.ingest.ingestion import attach_and_extract
    from core.services.ingest.worker import Worker

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Clinic newsletter: flu shots are available on Tuesdays.")
    attached = attach_and_extract(app_env, patient_id=demo_patient["id"], source="note.pdf", data=doc.tobytes(),
                                  filename="note.pdf", doc_type="lab_pdf", by="dr.alice")
    Worker(app_env).run_specific(attached.job["id"])
    at = home(patient=demo_patient["id"])
    table = at.dataframe[0].value
    assert list(table["status"]) == ["read, nothing found"] and list(table["what happened"]) == ["read, nothing found"]
    assert any("note.pdf was read but nothing was found in it (No lab result rows were recognised.)" in w.value
               for w in at.warning)


# --- Operations ---------------------------------------------------------------------------------

def test_operations_lists_a_failed_job_and_retry_requeues_it(app_env, demo_patient):
    from storage import audit_repo, jobs_repo

    job = failed_job(app_env, demo_patient["id"])
    at = operations_page()
    jobs = at.dataframe[0].value.set_index("job")
    assert jobs.loc[job["id"], "status"] == "could not be read"
    assert jobs.loc[job["id"], "error"] == "corrupt file"
    assert jobs.loc[job["id"], "message"].startswith("The file is not a readable PDF")
    assert "bad.pdf" not in shown(at)  # PHI-free: no file names
    assert next(m for m in at.metric if m.label == "Failed").value == "1"
    next(b for b in at.button if b.key == f"retry-{job['id']}").click().run()
    assert not at.exception, at.exception
    assert any(f"Job {job['id']} is back in the queue" in s.value for s in at.success)
    with app_env.db.cursor() as cur:
        row = jobs_repo.by_id(cur, job["id"])
        audit = audit_repo.review_decisions(cur, "job", job["id"])
    assert (row.status, row.attempts, row.error_code, row.error_message) == ("pending", 0, None, None)
    assert [(a["decision"], a["before_state"]["status"], a["after_state"]["status"]) for a in audit] == [
        ("retry", "failed", "pending")]
    assert next(m for m in at.metric if m.label == "Waiting in the queue").value == "1"


def test_operations_shows_queue_depth_worker_heartbeat_latency_and_handoffs(app_env, demo_patient):
    from core.services.ingest.worker import Worker

    _load(app_env, "demo-lab-typed.pdf")
    Worker(app_env, worker_id="intake-extractor:ops").beat("idle")
    at = operations_page()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Waiting in the queue"] == "0" and metrics["Being read now"] == "0"
    beat = next(s.value for s in at.success if "Worker intake-extractor:ops" in s.value)
    assert "idle, waiting for work, last seen" in beat and " s ago" in beat
    handoffs = next(d.value for d in at.dataframe if "to" in d.value.columns)
    assert list(handoffs[["from", "to", "outcome"]].iloc[0]) == ["supervisor", "intake-extractor", "succeeded"]
    assert len(at.get("vega_lite_chart")) == 1  # p50/p95 per stage
    assert any("opening the file 1" in c.value for c in at.caption)


def test_operations_says_in_plain_words_when_the_workers_process_is_gone(app_env, demo_patient):
    from core.services.ingest.worker import Worker
    from tests.support.heartbeats import beat_from, ended_process

    pid, token = ended_process()
    Worker(app_env, worker_id=f"intake-extractor:{pid}:1").beat("idle")  # its row: seen just now
    beat_from(app_env, pid=pid, process=token)  # its heartbeat file: fresh by its age, but its process is gone
    at = operations_page()
    (error,) = [e.value for e in at.error if "worker is not running" in e.value]
    assert f"the worker process (pid {pid}) has stopped" in error and "make run" in error
    assert not [b.value for b in at.success if "Worker" in b.value], "a gone worker is never shown as fresh"


# --- the operations service -------------------------------------------------------------------

def test_retry_job_refuses_jobs_that_are_not_failed_or_whose_document_is_deleted(wb, demo_patient):
    from domain.errors import BadInput, NotFound
    from core.services.ingest import operations
    from core.services.review.retraction import delete_document

    job = failed_job(wb, demo_patient["id"])
    requeued = operations.retry_job(wb, job["id"], by="dr.ops")
    assert (requeued["status"], requeued["attempts"]) == ("pending", 0)  # a retry resets the attempts
    again = operations.retry_job(wb, job["id"], by="dr.ops")  # a double click queues it once
    assert again["status"] == "pending"
    from storage import audit_repo

    with wb.db.cursor() as cur:
        assert len(audit_repo.review_decisions(cur, "job", job["id"])) == 1
    _load(wb, "demo-lab-typed.pdf")
    from core.services.review.facts import patient_documents

    done = next(d for d in patient_documents(wb, demo_patient["id"]) if d["filename"] == "demo-lab-typed.pdf")
    with pytest.raises(BadInput) as err:
        operations.retry_job(wb, done["job_id"], by="dr.ops")
    assert err.value.code == "job_not_failed" and "only a failed job can be retried" in err.value.message
    with pytest.raises(NotFound):
        operations.retry_job(wb, 99999, by="dr.ops")
    other = failed_job(wb, demo_patient["id"])
    delete_document(wb, other["document_id"], by="dr.ops")
    with pytest.raises(BadInput) as err:
        operations.retry_job(wb, other["id"], by="dr.ops")
    assert err.value.code == "document_deleted"


def test_a_retried_job_runs_again_as_the_same_job(wb, demo_patient):
    from core.services.ingest import operations
    from core.services.ingest.worker import Worker
    from storage import jobs_repo

    job = failed_job(wb, demo_patient["id"])
    operations.retry_job(wb, job["id"], by="dr.ops")
    rerun = Worker(wb).run_once()
    assert rerun["id"] == job["id"] and rerun["attempts"] == 1 and rerun["error_code"] == "corrupt_file"
    with wb.db.cursor() as cur:
        assert jobs_repo.queue_counts(cur)["pending"] == 0


def test_stage_latency_gives_p50_and_p95_per_job_stage_and_answer_stage(wb, demo_patient):
    from core.services.ingest import operations
    from storage import audit_repo, jobs_repo

    with wb.db.cursor() as cur:
        for i, ms in enumerate((10.0, 20.0, 30.0, 40.0, 100.0), start=1):
            job = jobs_repo.enqueue(cur, patient_id=demo_patient["id"], document_id=i, doc_type="lab_pdf")
            jobs_repo.finish(cur, job.id, status="succeeded", timings={"normalize": ms, "extract": ms / 10,
                                                                         "ocr": 0.0, "total": ms * 2})
        failed = jobs_repo.enqueue(cur, patient_id=demo_patient["id"], document_id=9, doc_type="lab_pdf")
        jobs_repo.finish(cur, failed.id, status="failed", timings={"normalize": 5000.0})
        for ms in (5.0, 7.0):
            audit_repo.add_handoff(cur, request_id="r1", job_id=None, source_node="evidence-retriever",
                                   destination_node="supervisor", decision_reason="patient=1", task_type="x",
                                   outcome="sufficient", latency_ms=ms)
    rows = {r["stage"]: r for r in operations.stage_latency(wb)}
    assert (rows["normalize"]["p50_ms"], rows["normalize"]["p95_ms"], rows["normalize"]["n"]) == (30.0, 100.0, 5)
    assert (rows["extract"]["p50_ms"], rows["extract"]["p95_ms"]) == (3.0, 10.0)
    assert "ocr" not in rows  # jobs without OCR say nothing about OCR speed
    assert rows["retrieve"] == {"stage": "retrieve", "kind": "answer", "p50_ms": 5.0, "p95_ms": 7.0, "n": 2}
    assert [r["stage"] for r in operations.stage_latency(wb)][-1] == "retrieve"


def test_workers_are_fresh_or_stale_by_the_health_threshold(wb):
    from core.services.ingest import operations
    from core.services.ingest.worker import Worker

    Worker(wb, worker_id="w-fresh").beat("idle")
    Worker(wb, worker_id="w-stopped").beat("stopped")
    later = datetime.utcnow() + timedelta(seconds=5)
    by_id = {w["worker_id"]: w for w in operations.workers(wb, now=later)}
    assert by_id["w-fresh"]["fresh"] and not by_id["w-stopped"]["fresh"]
    much_later = later + timedelta(seconds=by_id["w-fresh"]["stale_after_seconds"] + 1)
    assert not operations.workers(wb, now=much_later)[0]["fresh"]


# --- where a citation points, in words -------------------------------------------------------

@pytest.mark.parametrize("where, fact, words", [
    ("OBX[3]-5", {"structured_value": {"test_name": "Glucose"}}, "result 3 (Glucose)"),
    # a file of several messages names the message; a field without a row label names the field
    ("message 2 OBX[1]-5", {"structured_value": {"test_name": "Lead"}}, "message 2, result 1 (Lead)"),
    ("PID[1]-7", {"structured_value": {"field": "date_of_birth", "value": "2023-05-04"}}, "patient details 1, birth date"),
    ("message 1 PID[1]-11", {"structured_value": {"field": "address"}}, "message 1, patient details 1, address"),
    ("NTE[2]-3", None, "note 2, text"),
    # a field the glossary does not name is counted, never printed as a code
    ("ZXY[2]-9", None, "segment ZXY 2, item 9"),
    ("OBX[1]-5", {"structured_value": {"observation": "Status in immunization series"}},
     "result 1 (Status in immunization series)"),
    # sheet names as openpyxl gives them: spaces, '!' inside, Excel's own quoting
    ("Sheet 1!B3", {"structured_value": {"test_name": "Sodium"}}, "sheet Sheet 1, row 3, column B (Sodium)"),
    ("Labs!2024!A7:F7", None, "sheet Labs!2024, row 7"),
    ("Labs!2024!A7:F9", None, "sheet Labs!2024, rows 7–9"),
    ("'Sheet 1'!B3", None, "sheet Sheet 1, row 3, column B"),
    ("'Dr O''Hara'!C2", None, "sheet Dr O'Hara, row 2, column C"),
    ("Flowsheet!C3:C4", None, "sheet Flowsheet, rows 3–4"),  # a reading joined down a column
    # DOCX locators (extract/formats/office/docx.py) are already words
    ("table 2 row 3 col 1", {"structured_value": {"substance": "Penicillin"}}, "table 2 row 3 col 1"),
    ("paragraph 7", None, "paragraph 7"),
    ("page 2", {"structured_value": {"test_name": "WBC"}}, "page 2, row ‘WBC’"),
    ("", None, "—"),
])
def test_location_words_every_locator_the_readers_write(where, fact, words):
    from ui import labels

    assert labels.location({"page_or_section": where}, fact) == words


def test_location_words_real_hl7_batches_and_a_workbook_with_odd_sheet_names(wb, demo_patient, shared_data):
    """Every citation from real HL7 files (a batch of 20 messages, a two-message file,
    PID fields) and from a workbook made now reads as words, never as the raw locator."""
    import io

    import openpyxl

    from core.services.ingest.ingestion import attach_and_extract
    from core.services.ingest.worker import Worker
    from storage import facts_repo
    from ui import labels

    book = openpyxl.Workbook()
    for title in ("Labs!2024", "Sheet 1"):
        ws = book.create_sheet(title)
        for row in (["Test", "Result", "Units", "Reference range", "Collected"],
                    ["Sodium", 139, "mmol/L", "135-145", "2024-03-12"]):
            ws.append(row)
    del book["Sheet"]
    buf = io.BytesIO()
    book.save(buf)
    sources = [(shared_data / "hl7" / name, "hl7v2_message", None) for name in (
        "rs_BATCH_FHS_BHS_20x_ORU_R01_v2.5.1_CR.hl7", "cdc_iis_VXU_V04_v2.5.1_broken_encoding_2msgs.hl7",
        "cdc_ti_ADT_A01_v2.3_MN_newborn.hl7")] + [("odd-sheets.xlsx", "clinical_workbook", buf.getvalue())]
    said: dict[str, str] = {}
    for source, doc_type, data in sources:
        attached = attach_and_extract(wb, patient_id=demo_patient["id"], source=source, doc_type=doc_type, data=data,
                                      filename=Path(source).name if data else None, by="dr.alice")
        Worker(wb, worker_id="w").run_specific(attached.job["id"])
        with wb.db.cursor() as cur:
            for fact in facts_repo.facts_for_document(cur, attached.document["id"]):
                said[fact.citation["page_or_section"]] = labels.location(fact.citation, fact.to_dict())
    assert len(said) > 100
    raw = {where: words for where, words in said.items()
           if re.search(r"[A-Z][A-Z0-9]{2}\[\d+\]|![A-Z]+\d|\b(OBX|PID|NTE|OBR|MSH|RXA|ORC) \d|field \d", words)
           or words == where}
    assert raw == {}
    assert said["message 20 OBX[1]-5"].startswith("message 20, result 1 (")
    assert said["PID[1]-7"] == "patient details 1, birth date"
    assert said["Labs!2024!A2:E2"] == "sheet Labs!2024, row 2 (Sodium)"
    assert said["Sheet 1!A2:E2"] == "sheet Sheet 1, row 2 (Sodium)"


def test_an_admin_maps_a_document_category_on_operations(app_env, demo_patient):
    from core.services.ingest.ingestion import list_categories

    at = operations_page()
    name = next(t for t in at.text_input if t.label == "Category")
    name.set_value("Outside labs")
    kind = next(s for s in at.selectbox if s.label == "Read as")
    kind.set_value("lab_pdf")
    next(b for b in at.button if b.label == "Save mapping").click().run()
    assert not at.exception, at.exception
    assert {c["name"]: c["doc_type"] for c in list_categories(app_env)}["Outside labs"] == "lab_pdf"
    assert any("Outside labs: lab report." in s.value for s in at.success), [s.value for s in at.success]
    rows = next(d.value for d in at.dataframe if "read as" in d.value.columns)
    assert "Outside labs" in set(rows["category"])


def test_a_failure_sentence_says_once_that_the_original_is_kept():
    from ui import labels

    limit = ("The process reading this document ended abruptly; the original is kept. "
             "The file may be damaged or built to exhaust the reader.")
    assert labels.failure_sentence(limit, "resource_limit") == limit  # no second "kept", no ".."
    assert labels.failure_sentence("The PDF is encrypted", "encrypted_pdf") == \
        "The PDF is encrypted. The original file is kept."
    assert labels.failure_sentence(None, "corrupt_file") == "Corrupt file. The original file is kept."
