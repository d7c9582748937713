"""Supervisor routing, evidence retrieval and cited answers, on real ingested documents."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from datetime import date
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from domain.models import AnswerItem, AnswerSections, Citation, EvidenceItem
from domain.policy.answers.verifier import RetrievedEvidence, check_drafted_sentence, verify_answer
from domain.policy.questions.intent import Intent, parse_question
from domain.policy.answers.supervisor import route
from domain.policy.questions.unsafe_requests import Unsafe
from core.services.answer.answering import ask
from core.services.ingest.ingestion import ingest_now
from core.services.admin.patients import add_patient
from core.services.review.retraction import delete_document
from core.services.workbench import open_workbench
from domain.settings import Settings
from golden.fixtures import INTAKE_CASES, LAB_CASES, render_intake, render_lab
from tests.support.accounts import seed_test_accounts

WREN_LAB, WREN_INTAKE = LAB_CASES[5], INTAKE_CASES[1]
ODALYS_LAB, ODALYS_INTAKE = LAB_CASES[2], INTAKE_CASES[0]


# ---------------------------------------------------------------- routing (pure)
@pytest.mark.parametrize("question, topics, intent, unsafe, guidelines", [
    ("What is her latest A1c?", ("a1c",), Intent.LOOKUP, (), False),
    ("Show me the hemoglobin A1c", ("a1c",), Intent.LOOKUP, (), False),
    ("What was her HbA1c?", ("a1c",), Intent.LOOKUP, (), False),
    ("What deserves attention in her labs?", ("labs",), Intent.ATTENTION, (), True),
    ("Is her LDL too high?", ("ldl",), Intent.ATTENTION, (), True),
    ("How often should A1c be checked?", ("a1c",), Intent.GUIDELINE, (), True),
    ("What does the guideline say about blood pressure follow-up?", ("blood_pressure",), Intent.GUIDELINE, (), True),
    ("List her medications", ("medications",), Intent.LOOKUP, (), False),
    ("Any drug allergies?", ("allergies",), Intent.LOOKUP, (), False),
    ("What dose of metformin should she take?", ("medications",), Intent.LOOKUP, (Unsafe.DOSING,), False),
    ("Should I stop her lisinopril?", ("medications",), Intent.LOOKUP, (Unsafe.MEDICATION_CHANGE,), False),
    ("Should we start her on a statin?", ("medications",), Intent.LOOKUP, (Unsafe.MEDICATION_CHANGE,), False),
    # Asking what the record documents is a look-up (it used to be refused as a diagnosis).
    ("Does she have diabetes?", ("diabetes",), Intent.LOOKUP, (), False),
    ("Based on her labs, does she have diabetes?", ("diabetes",), Intent.LOOKUP, (Unsafe.DIAGNOSIS,), False),
    ("Should I double her metformin?", ("medications",), Intent.LOOKUP, (Unsafe.DOSING,), False),
    ("How should I treat her cholesterol?", ("cholesterol",), Intent.LOOKUP, (Unsafe.TREATMENT,), False),
])
def test_routing_table(question, topics, intent, unsafe, guidelines):
    parsed = parse_question(question)
    plan = route(parsed)
    assert parsed.topics == topics and parsed.intent == intent
    assert set(unsafe) <= set(parsed.unsafe) and bool(parsed.unsafe) is bool(unsafe)
    assert plan.need_guidelines is guidelines and plan.refused is bool(unsafe)


def test_follow_up_inherits_topic_and_intent():
    first = parse_question("Does her A1c deserve attention?")
    follow = parse_question("and her LDL?", first)
    assert follow.follow_up and follow.topics == ("ldl",) and follow.intent is Intent.ATTENTION
    again = parse_question("what about the date?", follow)
    assert again.topics == ("ldl",) and "topics" in again.inherited


# ---------------------------------------------------------------- verifier (pure)
def _cit(source_id, field, quote, source_type="lab_pdf"):
    return Citation(source_type=source_type, source_id=source_id, page_or_section="page 1",
                    field_or_chunk_id=field, quote_or_value=quote)


def test_verifier_removes_uncited_and_unretrieved_claims():
    lab = _cit("documents:1", "results[0]", "LDL 148")
    review = _cit("documents:2", "allergies[0]", "? sulfa")
    chunk = _cit("acc#ldl", "acc#ldl", "LDL follow-up", "guideline")
    ev = RetrievedEvidence.of([
        EvidenceItem(evidence_id="fact:1", kind="document_fact", text="LDL 148", citations=[lab]),
        EvidenceItem(evidence_id="fact:2", kind="needs_review", text="? sulfa", citations=[review]),
        EvidenceItem(evidence_id="guideline:acc#ldl", kind="guideline", text="LDL", citations=[chunk]),
    ])
    sections = AnswerSections(
        patient_findings=[
            AnswerItem(text="LDL 148", citations=[lab]),
            AnswerItem(text="uncited claim"),
            AnswerItem(text="other document", citations=[_cit("documents:9", "results[0]", "LDL 148")]),
            AnswerItem(text="review used as fact", citations=[review]),
            AnswerItem(text="attention without guideline", citations=[lab], kind="attention"),
            AnswerItem(text="attention", citations=[lab, chunk], kind="attention"),
        ],
        needs_review=[AnswerItem(text="? sulfa", citations=[review])],
        guideline_evidence=[AnswerItem(text="LDL", citations=[chunk]),
                            AnswerItem(text="made-up chunk", citations=[_cit("x#y", "x#y", "z", "guideline")])],
        missing=[AnswerItem(text="No TSH found.")],
    )
    kept, removed = verify_answer(sections, ev)
    assert [i.text for i in kept.patient_findings] == ["LDL 148", "attention"]
    assert [i.text for i in kept.guideline_evidence] == ["LDL"] and len(kept.needs_review) == 1
    assert len(kept.missing) == 1 and len(removed) == 5


def test_drafted_sentences_need_markers_and_known_values():
    evidence = {"E1": "LDL Cholesterol 148 mg/dL (reference <100; flagged high), collected 2026-04-10"}
    assert check_drafted_sentence("Her LDL was 148 mg/dL on 2026-04-10 [E1].", evidence) is None
    assert "marker" in check_drafted_sentence("Her LDL was 148 mg/dL.", evidence)
    assert "162" in check_drafted_sentence("Her LDL was 162 mg/dL [E1].", evidence)
    assert "E7" in check_drafted_sentence("Her LDL was high [E7].", evidence)


# ---------------------------------------------------------------- end to end
def _ingest(wb, patient, data, doc_type, name):
    """Attach and read now (vectors indexed too), as the CLI's ingest does."""
    ingested = ingest_now(wb, patient_id=patient["id"], source=name, data=data, filename=name,
                          doc_type=doc_type, by="dr.reviewer")
    job = ingested.report["job"]
    assert job["status"] == "succeeded", job["error_message"]
    return ingested.attached.document["id"]


def _chart_patient(wb, p):
    return add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=date.fromisoformat(p.dob), sex=p.sex,
                       by="dr.reviewer")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from core.services.answer.corpus import index_guideline_corpus

    wb = open_workbench(Settings(data_dir=tmp_path_factory.mktemp("answers")))
    seed_test_accounts(wb)
    index_guideline_corpus(wb)
    wren = _chart_patient(wb, WREN_LAB.patient)
    odalys = _chart_patient(wb, ODALYS_LAB.patient)
    docs = {
        "wren_lab": _ingest(wb, wren, render_lab(WREN_LAB), "lab_pdf", "wren-lab.pdf"),
        "wren_intake": _ingest(wb, wren, render_intake(WREN_INTAKE), "intake_form", "wren-intake.pdf"),
        "odalys_lab": _ingest(wb, odalys, render_lab(ODALYS_LAB), "lab_pdf", "odalys-lab.pdf"),
        "odalys_intake": _ingest(wb, odalys, render_intake(ODALYS_INTAKE), "intake_form", "odalys-intake.pdf"),
    }
    yield {"wb": wb, "wren": wren, "odalys": odalys, "docs": docs}
    wb.close()


def _cited_documents(payload) -> set[str]:
    return {c["source_id"] for items in payload["sections"].values() for i in items for c in i["citations"]
            if c["source_id"].startswith("documents:")}


def _texts(payload, section) -> str:
    return " | ".join(i["text"] for i in payload["sections"][section])


def test_lookup_cites_the_value_as_stored(world):
    out = ask(world["wb"], world["wren"]["id"], "What is her latest A1c?").payload
    a1c = next(r for r in WREN_LAB.results if "A1c" in r.test_name)
    findings = out["sections"]["patient_findings"]
    assert findings and all("A1c" in f["text"] for f in findings)
    assert f"{a1c.value} {a1c.unit}" in findings[0]["text"] and WREN_LAB.collection_date in findings[0]["text"]
    cit = findings[0]["citations"][0]
    assert cit["source_id"] == f"documents:{world['docs']['wren_lab']}" and cit["bounding_box"] and cit["page"] == 1
    assert out["sections"]["guideline_evidence"] == [] and not out["refused"]


def test_attention_lines_cite_a_finding_and_a_retrieved_guideline(world):
    out = ask(world["wb"], world["wren"]["id"], "What deserves attention in her labs?").payload
    attention = [i for i in out["sections"]["patient_findings"] if i["kind"] == "attention"]
    assert attention
    retrieved = {c["field_or_chunk_id"] for i in out["sections"]["guideline_evidence"] for c in i["citations"]}
    for line in attention:
        kinds = {c["source_type"] for c in line["citations"]}
        assert "guideline" in kinds and "lab_pdf" in kinds
        assert {c["field_or_chunk_id"] for c in line["citations"] if c["source_type"] == "guideline"} <= retrieved
    # a red flag on the intake form bears on every clinical answer
    assert "Chest pain" in _texts(out, "needs_review")


@pytest.mark.parametrize("question, unsafe", [
    ("What dose of atorvastatin should she take?", "dosing"),
    ("Should I stop her aspirin?", "medication_change"),
    ("Based on her labs, does she have heart disease?", "diagnosis"),
    ("Should I double her atorvastatin?", "dosing"),
])
def test_unsafe_requests_are_refused_and_narrowed(world, question, unsafe):
    out = ask(world["wb"], world["wren"]["id"], question).payload
    assert out["refused"] is True and unsafe in out["question"]["unsafe"]
    assert "can't" in out["refusal_reason"] and "Instead" in out["refusal_reason"]
    assert out["sections"]["guideline_evidence"] == []
    for item in out["sections"]["patient_findings"]:  # what is said is still cited
        assert item["citations"]


def test_medication_question_surfaces_the_uncertain_allergy(world):
    out = ask(world["wb"], world["wren"]["id"], "What medications is she on?").payload
    assert "Atorvastatin" in _texts(out, "patient_findings")
    assert "sulfa" in _texts(out, "needs_review").lower()
    assert "sulfa" not in _texts(out, "patient_findings").lower()  # never used as verified evidence


def test_missing_data_is_said_to_be_missing(world):
    out = ask(world["wb"], world["wren"]["id"], "What was her TSH?").payload
    assert out["sections"]["patient_findings"] == []
    assert _texts(out, "missing") == "No TSH result found in the chart or in this patient's active documents."
    out = ask(world["wb"], world["wren"]["id"], "Any thyroid tests?").payload
    assert "No thyroid tests found" in _texts(out, "missing")


def test_out_of_corpus_guideline_question_reports_not_found(world):
    out = ask(world["wb"], world["wren"]["id"], "What do the guidelines recommend for treating a sprained ankle?"
              ).payload
    assert out["sections"]["guideline_evidence"] == []
    assert "No guideline" in _texts(out, "missing") or "No patient evidence" in _texts(out, "missing")


def test_follow_up_is_grounded_in_the_previous_turn(world):
    wb, wren = world["wb"], world["wren"]
    first = ask(wb, wren["id"], "What is her latest A1c?")
    follow = ask(wb, wren["id"], "and her LDL?", previous=first.parsed).payload
    assert follow["question"]["follow_up"] and follow["question"]["topics"] == ["ldl"]
    assert all("LDL" in i["text"] for i in follow["sections"]["patient_findings"])


def test_patient_isolation(world):
    wb = world["wb"]
    for question in ("List her medications", "What deserves attention in her labs?", "cough and fever"):
        out = ask(wb, world["odalys"]["id"], question).payload
        cited = _cited_documents(out)
        assert cited <= {f"documents:{world['docs']['odalys_lab']}", f"documents:{world['docs']['odalys_intake']}"}
    out = ask(wb, world["wren"]["id"], "List her medications").payload
    assert "Metformin" not in _texts(out, "patient_findings")  # Odalys's drug


def test_handoffs_are_recorded(world):
    from storage import audit_repo

    out = ask(world["wb"], world["wren"]["id"], "How often should her A1c be checked?").payload
    with world["wb"].db.cursor() as cur:
        rows = audit_repo.handoffs(cur, request_id=out["request_id"])
    path = [(r["source_node"], r["destination_node"]) for r in rows]
    assert path[:4] == [("supervisor", "evidence-retriever"), ("evidence-retriever", "supervisor"),
                        ("supervisor", "answer-composer"), ("answer-composer", "answer-verifier")]
    assert all(r["latency_ms"] is not None for r in rows)


def test_deleted_document_is_never_cited(tmp_path):
    wb = open_workbench(Settings(data_dir=tmp_path / "data"))
    seed_test_accounts(wb)
    try:
        wren = _chart_patient(wb, WREN_LAB.patient)
        lab = _ingest(wb, wren, render_lab(WREN_LAB), "lab_pdf", "wrong-patient-upload.pdf")  # vectors indexed
        before = ask(wb, wren["id"], "What is her LDL?").payload
        assert f"documents:{lab}" in _cited_documents(before)
        free_text = "lipoprotein and fat values"  # no topic or test name: answered through the vectors
        via_vectors = ask(wb, wren["id"], free_text).payload
        assert via_vectors["question"]["topics"] == [] and f"documents:{lab}" in _cited_documents(via_vectors)
        delete_document(wb, lab, by="dr.reviewer")
        for question in ("What is her LDL?", "labs", "cholesterol results", free_text):
            after = ask(wb, wren["id"], question).payload
            assert f"documents:{lab}" not in _cited_documents(after)
        assert "No LDL cholesterol result found" in _texts(ask(wb, wren["id"], "What is her LDL?").payload, "missing")
    finally:
        wb.close()


# ---------------------------------------------------------------- drafter stand-in
class _StandIn(BaseHTTPRequestHandler):
    reply = ""
    seen: list = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _StandIn.seen.append(body)
        payload = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": _StandIn.reply}}],
                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def stand_in():
    server = HTTPServer(("127.0.0.1", 0), _StandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()


@pytest.mark.parametrize("reply, accepted", [
    ("Her most recent hemoglobin A1c is recorded in the chart [E1].", True),
    ("Her A1c was 9.4% [E1].", False),  # an invented value
    ("Her A1c is fine.", False),  # no marker
])
def test_drafter_stand_in(world, stand_in, reply, accepted):
    from core.services.answer.drafting import OpenAICompatibleDrafter

    settings = Settings(data_dir=world["wb"].settings.data_dir, openai_api_key="test-key", openai_base_url=stand_in,
                        openai_model="stand-in-model", drafter="openai")
    _StandIn.reply, _StandIn.seen = reply, []
    out = ask(world["wb"], world["wren"]["id"], "What is her latest A1c?",
              drafter=OpenAICompatibleDrafter.from_settings(settings)).payload
    assert _StandIn.seen and _StandIn.seen[0]["model"] == "stand-in-model"
    assert "[E1]" in _StandIn.seen[0]["messages"][1]["content"]
    assert out["drafted"] is accepted
    assert (reply in out["text"]) is accepted
    assert "Patient Findings:" in out["text"]  # the cited deterministic answer is always there
    drafting = [h for h in out["handoffs"] if h["destination_node"] == "answer-drafter"][0]
    assert drafting["outcome"] == ("accepted" if accepted else "rejected_fallback")


@pytest.mark.parametrize("test_name, topic", [("TSH", "thyroid"), ("LDL Cholesterol", "ldl"),
                                              ("Hemoglobin A1c", "a1c"), ("Cholesterol, Total", "cholesterol"),
                                              ("WBC", "cbc"), ("Ferritin", "labs")])
def test_a_lab_belongs_to_its_most_specific_topic(test_name, topic):
    from domain.policy.questions.topics import primary_topic, topics_of

    assert primary_topic(topics_of("lab_result", {"test_name": test_name}, test_name)) == topic


# ---------------------------------------------------------------- a chart with history, critical results and codes
def _ines_case():
    from golden.fixtures import ExpectedLab as L, LabCase, Patient

    ines = Patient("Ines", "Okonkwo-Lind", "1962-05-03", "IN40211", sex="F")
    earlier = LabCase("ines_earlier", "classic", ines, "2025-10-01", (
        ("Complete Blood Count", (L("WBC", "7.2", "x10E3/uL", "3.4-10.8", "normal"),
                                  L("Platelets", "210", "x10E3/uL", "150-450", "normal"))),
        ("Comprehensive Metabolic Panel", (L("Potassium", "5.4", "mmol/L", "3.5-5.2", "high", "H"),
                                           L("Sodium", "140", "mmol/L", "134-144", "normal"))),
        ("Lipid Panel", (L("LDL Cholesterol", "162", "mg/dL", "<100", "high", "H"),)),
        ("Hemoglobin A1c", (L("Hemoglobin A1c", "8.4", "%", "<5.7", "high", "H"),)),
    ))
    latest = LabCase("ines_latest", "classic", ines, "2026-04-10", (
        ("Complete Blood Count", (L("WBC", "32.5", "x10E3/uL", "3.4-10.8", "critical_high", "HH"),
                                  L("Hemoglobin", "12.0", "g/dL", "11.1-15.9", "normal"),
                                  L("Platelets", "198", "x10E3/uL", "150-450", "normal"))),
        ("Comprehensive Metabolic Panel", (L("Glucose", "131", "mg/dL", "65-99", "high", "H"),
                                           L("Creatinine", "0.80", "mg/dL", "0.57-1.00", "normal"),
                                           L("Sodium", "138", "mmol/L", "134-144", "normal"),
                                           L("Potassium", "4.6", "mmol/L", "3.5-5.2", "normal"))),
        ("Lipid Panel", (L("Cholesterol, Total", "180", "mg/dL", "100-199", "normal"),
                         L("LDL Cholesterol", "148", "mg/dL", "<100", "high", "H"),
                         L("HDL Cholesterol", "52", "mg/dL", ">39", "normal"))),
        ("Hemoglobin A1c", (L("Hemoglobin A1c", "7.9", "%", "<5.7", "high", "H"),)),
    ))
    return ines, earlier, latest


@pytest.fixture(scope="module")
def ines(tmp_path_factory):
    """Two lab reports six months apart (a trend, a critical WBC, normal results to
    count), plus chart rows entered by hand: a coded diabetes problem, metformin and
    a penicillin allergy."""
    from core.services.answer.corpus import index_guideline_corpus

    wb = open_workbench(Settings(data_dir=tmp_path_factory.mktemp("ines")))
    seed_test_accounts(wb)
    index_guideline_corpus(wb)
    person, earlier, latest = _ines_case()
    patient = _chart_patient(wb, person)
    docs = {"earlier": _ingest(wb, patient, render_lab(earlier), "lab_pdf", "ines-2025.pdf"),
            "latest": _ingest(wb, patient, render_lab(latest), "lab_pdf", "ines-2026.pdf")}
    with wb.db.cursor() as cur:
        cur.execute("INSERT INTO chart_problems (patient_id, description, code) VALUES (?, ?, ?)",
                    [patient["id"], "Type 2 diabetes mellitus", "E11.9"])
        cur.execute("INSERT INTO chart_medications (patient_id, name, dose, frequency) VALUES (?, ?, ?, ?)",
                    [patient["id"], "Metformin", "1000 mg", "twice daily"])
        cur.execute("INSERT INTO chart_allergies (patient_id, substance, reaction) VALUES (?, ?, ?)",
                    [patient["id"], "Penicillin", "hives"])
    yield {"wb": wb, "patient": patient, "docs": docs, "earlier": earlier, "latest": latest}
    wb.close()


def _all_items_cited(payload) -> bool:
    return all(i["citations"] for name in ("patient_findings", "needs_review", "guideline_evidence")
               for i in payload["sections"][name])


def test_a_condition_look_up_answers_from_the_record(ines):
    # Issue 5: "Does she have diabetes?" was refused and Missing claimed no evidence.
    out = ask(ines["wb"], ines["patient"]["id"], "Does she have diabetes?").payload
    assert out["refused"] is False and out["refusal_reason"] is None
    assert "does not diagnose" in out["caveat"] and "does not diagnose" in out["text"]
    findings = _texts(out, "patient_findings")
    assert out["sections"]["patient_findings"][0]["text"].startswith("Problem: Type 2 diabetes mellitus (E11.9)")
    assert "Hemoglobin A1c 7.9 %" in findings and "Glucose 131" in findings  # the related labs
    assert "Potassium" not in findings and "WBC" not in findings
    assert "diabetes" not in _texts(out, "missing").lower()
    assert _all_items_cited(out) and out["verifier"]["removed"] == 0


def test_an_allergy_look_up_is_answered(ines):
    out = ask(ines["wb"], ines["patient"]["id"], "Does he have any allergies?").payload
    assert out["refused"] is False and "Allergy: Penicillin (reaction: hives)" in _texts(out, "patient_findings")
    assert _texts(out, "missing") == "" and _all_items_cited(out)


def test_deciding_from_the_labs_is_still_declined(ines):
    out = ask(ines["wb"], ines["patient"]["id"], "Based on these labs, does she have diabetes?").payload
    assert out["refused"] is True and out["question"]["unsafe"] == ["diagnosis"]
    assert "can't make or confirm a diagnosis" in out["refusal_reason"]
    assert out["sections"]["guideline_evidence"] == [] and _all_items_cited(out)


def test_doubling_a_drug_is_declined_and_narrowed_to_the_record(ines):
    # Issue 6: "Should I double her metformin?" was answered as a medication list.
    out = ask(ines["wb"], ines["patient"]["id"], "Should I double her metformin?").payload
    assert out["refused"] is True and "dosing" in out["question"]["unsafe"]
    assert "can't recommend or change a dose" in out["refusal_reason"] and "Instead" in out["refusal_reason"]
    assert "Medication: Metformin 1000 mg twice daily" in _texts(out, "patient_findings")
    assert _all_items_cited(out)


@pytest.mark.parametrize("question", ["What's the weather in Paris tomorrow?", "Write me a poem"])
def test_an_unrelated_question_does_not_borrow_the_last_topic(ines, question):
    # Issue 6: these were treated as follow-ups and answered with the previous findings.
    wb, pid = ines["wb"], ines["patient"]["id"]
    first = ask(wb, pid, "What is her latest A1c?")
    out = ask(wb, pid, question, previous=first.parsed).payload
    assert out["refused"] is True and "outside what this workbench answers" in out["refusal_reason"]
    assert out["question"]["follow_up"] is False and out["question"]["topics"] == []
    assert all(items == [] for items in out["sections"].values())
    assert "A1c" not in out["text"]


def test_a_real_follow_up_still_leans_on_the_previous_topic(ines):
    wb, pid = ines["wb"], ines["patient"]["id"]
    first = ask(wb, pid, "What is her latest A1c?")
    out = ask(wb, pid, "when was that?", previous=first.parsed).payload
    assert out["question"]["follow_up"] and out["question"]["topics"] == ["a1c"]
    assert "2026-04-10" in out["sections"]["patient_findings"][0]["text"]
    # An ellipsis naming a test outside the vocabulary asks about that test, not the last topic.
    attention = ask(wb, pid, "Is her LDL too high?")
    potassium = ask(wb, pid, "and her potassium?", previous=attention.parsed).payload
    texts = _texts(potassium, "patient_findings")
    assert "Potassium 4.6 mmol/L" in texts and "previous 5.4 mmol/L on 2025-10-01 (high)" in texts
    assert "LDL" not in texts


def test_critical_results_lead_and_are_named_critical(ines):
    # Issue 7: a critical result must come first in attention answers and say so.
    out = ask(ines["wb"], ines["patient"]["id"], "Anything critical in her labs?").payload
    first = out["sections"]["patient_findings"][0]
    assert first["text"].startswith("Critical: WBC 32.5") and "critical high" in first["text"]
    assert first["citations"][0]["source_id"] == f"documents:{ines['docs']['latest']}"


def test_an_attention_finding_without_guidance_says_so(ines):
    # Issue 9: no guideline passage clears the threshold for the WBC: Missing must say so.
    out = ask(ines["wb"], ines["patient"]["id"], "What deserves attention in her labs?").payload
    missing = _texts(out, "missing")
    assert "No guideline evidence was retrieved for" in missing and "WBC" in missing
    wbc = next(i for i in out["sections"]["patient_findings"] if "WBC" in i["text"])
    assert wbc["kind"] == "finding" and "Related guideline" not in wbc["text"]


def test_an_attention_answer_lists_abnormal_results_with_trend_and_counts_the_rest(ines):
    # Issue 10: it listed every result; now abnormal and critical only, with trend and guidance.
    out = ask(ines["wb"], ines["patient"]["id"], "What deserves attention in her labs?").payload
    findings = out["sections"]["patient_findings"]
    texts = [i["text"] for i in findings]
    assert len(findings) == 5, texts  # WBC, A1c, glucose, LDL + one count line
    assert texts[0].startswith("Critical: WBC 32.5")
    a1c = next(t for t in texts if "Hemoglobin A1c" in t)
    assert "7.9 %" in a1c and "previous 8.4 % on 2025-10-01 (high)" in a1c and "Related guideline" in a1c
    ldl = next(t for t in texts if "LDL" in t)
    assert "previous 162 mg/dL on 2025-10-01" in ldl
    # Lipids and glycemic results each read together.
    order = [next(k for k in ("WBC", "A1c", "Glucose", "LDL") if k in t) for t in texts[:4]]
    assert order.index("Glucose") == order.index("A1c") + 1
    for name in ("Sodium", "Platelets", "Creatinine", "HDL", "Hemoglobin 12.0", "Potassium"):
        assert not any(name in t for t in texts), name  # normal results are counted, not listed
    summary = findings[-1]
    assert summary["kind"] == "summary" and summary["text"].startswith("7 other results were within range")
    assert len(summary["citations"]) == 7  # Hgb, platelets, creatinine, Na, K, cholesterol, HDL
    attention = [i for i in findings if i["kind"] == "attention"]
    retrieved = {c["field_or_chunk_id"] for i in out["sections"]["guideline_evidence"] for c in i["citations"]}
    assert attention and all({c["field_or_chunk_id"] for c in i["citations"] if c["source_type"] == "guideline"}
                             <= retrieved for i in attention)
    assert out["verifier"]["removed"] == 0


def test_a_look_up_for_one_test_gives_the_latest_value_then_its_history(ines):
    out = ask(ines["wb"], ines["patient"]["id"], "What is her A1c?").payload
    texts = [i["text"] for i in out["sections"]["patient_findings"]]
    assert len(texts) == 2
    assert texts[0].startswith("Hemoglobin A1c 7.9 %") and "2026-04-10" in texts[0]
    assert texts[1].startswith("Earlier result: Hemoglobin A1c 8.4 %") and "2025-10-01" in texts[1]


def test_a_look_up_names_a_critical_result_critical(ines):
    out = ask(ines["wb"], ines["patient"]["id"], "What was her white count?").payload
    assert out["sections"]["patient_findings"][0]["text"].startswith("Critical: WBC 32.5")


@pytest.mark.parametrize("question, first, excluded", [
    ("What was her hemoglobin?", "Hemoglobin 12.0 g/dL", ("WBC", "Platelets", "Hemoglobin A1c")),
    ("Her potassium and creatinine?", "Potassium 4.6", ("Sodium", "Glucose")),
    ("how's her blood sugar", "Glucose 131", ("Sodium", "Hemoglobin A1c")),
])
def test_a_look_up_that_names_a_test_gets_that_test_not_its_panel(ines, question, first, excluded):
    out = ask(ines["wb"], ines["patient"]["id"], question).payload
    texts = [i["text"] for i in out["sections"]["patient_findings"]]
    assert any(t.startswith(first) for t in texts[:2]), texts
    assert not any(t.split(" ")[0] in excluded or t.startswith(excluded) for t in texts), texts
    assert not out["sections"]["missing"], out["sections"]["missing"]


def test_a_named_test_is_not_answered_with_other_lab_like_findings(tmp_path):
    # Found on a held-out chart: "What was her potassium?" listed her blood pressure
    # readings (a blood pressure is a lab-like topic) as the answer's findings.
    wb = open_workbench(Settings(data_dir=tmp_path / "data"))
    try:
        seed_test_accounts(wb)
        person, earlier, _ = _ines_case()
        patient = _chart_patient(wb, person)
        _ingest(wb, patient, render_lab(earlier), "lab_pdf", "ines-2025.pdf")
        with wb.db.cursor() as cur:
            cur.execute("INSERT INTO chart_vital_signs (patient_id, kind, value, unit, systolic, diastolic, "
                        "measured_at) VALUES (?, 'blood_pressure', '148/92', 'mmHg', '148', '92', '2025-10-01')",
                        [patient["id"]])
        asked = lambda q: [i["text"] for i in ask(wb, patient["id"], q).payload["sections"]["patient_findings"]]  # noqa: E731
        potassium = asked("What was her potassium?")
        assert potassium and all(t.startswith("Potassium") for t in potassium), potassium
        both = asked("What was her potassium and her blood pressure?")
        assert any(t.startswith("Potassium") for t in both) and any("148/92" in t for t in both), both
    finally:
        wb.close()


def test_a_named_test_not_on_record_is_missing_not_a_panel_dump(ines):
    out = ask(ines["wb"], ines["patient"]["id"], "What was her ferritin?").payload
    assert out["sections"]["patient_findings"] == []
    assert "No Ferritin result found" in _texts(out, "missing")


def test_a_look_up_of_something_not_on_record_says_so(ines):
    out = ask(ines["wb"], ines["patient"]["id"], "Is she on apixaban?").payload
    assert "No “apixaban” found among this patient's medications" in _texts(out, "missing")
    assert "Metformin" in _texts(out, "patient_findings")  # what she is on, for context


# ---------------------------------------------------------------- how a mention was meant
def _set_context(wb, patient_id, fact_text_like, context) -> None:
    from storage import record_version

    with wb.db.cursor() as cur:
        cur.execute("UPDATE document_facts SET context = ? WHERE patient_id = ? AND fact_text LIKE ?",
                    [json.dumps(context), patient_id, fact_text_like])
        record_version.bump(cur, [patient_id], "test")  # a write behind the repositories says so itself


def test_denied_and_family_mentions_are_not_the_patients_findings(tmp_path):
    wb = open_workbench(Settings(data_dir=tmp_path / "data"))
    seed_test_accounts(wb)
    try:
        odalys = _chart_patient(wb, ODALYS_LAB.patient)
        wren = _chart_patient(wb, WREN_LAB.patient)
        _ingest(wb, odalys, render_intake(ODALYS_INTAKE), "intake_form", "odalys-intake.pdf")
        _ingest(wb, wren, render_intake(WREN_INTAKE), "intake_form", "wren-intake.pdf")
        before = ask(wb, odalys["id"], "Does she have diabetes?").payload
        assert "Type 2 diabetes" in _texts(before, "patient_findings")
        assert "Mother" not in _texts(before, "patient_findings")  # a relative's diabetes is not hers
        red = ask(wb, wren["id"], "What are his medications?").payload
        assert "Chest pain" in _texts(red, "needs_review")  # a red flag bears on every answer

        denied = {"negated": True, "experiencer": "patient", "temporality": "current", "uncertain": False,
                  "triggers": ["denies"]}
        _set_context(wb, odalys["id"], "%Type 2 diabetes%", denied)
        _set_context(wb, wren["id"], "%Chest pain%", denied)
        after = ask(wb, odalys["id"], "Does she have diabetes?").payload
        assert "diabetes" not in _texts(after, "patient_findings").lower()
        missing = after["sections"]["missing"]
        assert any("No diabetes is recorded" in i["text"] for i in missing)
        shown = [i for i in missing if "(denied)" in i["text"]]
        assert shown and shown[0]["citations"] and after["verifier"]["removed"] == 0
        assert any("(family history)" in i["text"] or "Family history" in i["text"] for i in missing)
        quiet = ask(wb, wren["id"], "What are his medications?").payload
        assert "Chest pain" not in _texts(quiet, "needs_review")  # a denied symptom raises no red flag
    finally:
        wb.close()


# ---------------------------------------------------------------- declined requests still show what bears on them
@pytest.mark.parametrize("question", ["What's the diagnosis?", "Is this pneumonia?", "Should he go to the ER?",
                                      "What's the prognosis?"])
def test_a_declined_request_still_shows_the_red_flags(world, question):
    # "What's the diagnosis?" used to retrieve no patient evidence, so the red flag on
    # record (chest pain in the intake, a needs-review finding) never reached the clinician.
    out = ask(world["wb"], world["wren"]["id"], question).payload
    assert out["refused"] is True and out["question"]["disposition"] in ("narrow", "refuse")
    assert "Chest pain" in _texts(out, "needs_review")
    assert "red flags on record are always shown" in out["refusal_reason"]
    assert out["sections"]["guideline_evidence"] == [] and out["verifier"]["removed"] == 0


# A blood count as an HL7 ORU reports it: LOINC codes and LOINC long names, a critical white count.
_CBC_OBX = (
    ("6690-2", "Leukocytes [#/volume] in Blood by Automated count", "48.3", "10*3/uL", "4.0-10.5", "HH"),
    ("718-7", "Hemoglobin [Mass/volume] in Blood", "9.8", "g/dL", "13.2-16.6", "L"),
    ("4544-3", "Hematocrit [Volume Fraction] of Blood by Automated count", "30.1", "%", "38.3-48.6", "L"),
    ("777-3", "Platelets [#/volume] in Blood by Automated count", "162", "10*3/uL", "150-400", "N"),
    ("2823-3", "Potassium [Moles/volume] in Serum or Plasma", "4.1", "mmol/L", "3.5-5.1", "N"),
)


@pytest.fixture(scope="module")
def tobias(tmp_path_factory):
    wb = open_workbench(Settings(data_dir=tmp_path_factory.mktemp("tobias")))
    seed_test_accounts(wb)
    patient = add_patient(wb, mrn="NG-77120", first="Tobias", last="Brandt", dob=date(1958, 2, 22), sex="M",
                          by="dr.reviewer")
    segments = ["MSH|^~\\&|LAB|NORTHGATE LAB|EHR|CLINIC|20250905101500||ORU^R01^ORU_R01|CBC0042|P|2.5.1",
                "PID|1||NG-77120^^^CLINIC^MR||BRANDT^TOBIAS^^^^^L||19580222|M",
                "OBR|1|ORD9|FIL9|58410-2^CBC panel^LN|||20250905080000|||||||||||||||20250905100000|||F"]
    segments += [f"OBX|{n}|NM|{code}^{name}^LN||{value}|{unit}^^UCUM|{ref}|{flag}|||F|||20250905080000"
                 for n, (code, name, value, unit, ref, flag) in enumerate(_CBC_OBX, 1)]
    _ingest(wb, patient, "\r".join(segments).encode(), "hl7v2_message", "cbc.hl7")
    yield {"wb": wb, "patient": patient}
    wb.close()


def test_a_blood_count_in_loinc_names_belongs_to_the_blood_count(tobias):
    # Topics come from the canonical analyte, not from patterns on the printed name:
    # "Leukocytes [#/volume] in Blood" is the white count.
    out = ask(tobias["wb"], tobias["patient"]["id"], "Give me his blood count").payload
    texts = _texts(out, "patient_findings")
    for name in ("Leukocytes", "Hemoglobin", "Hematocrit", "Platelets"):
        assert name in texts, (name, texts)
    assert "Potassium" not in texts
    anemia = ask(tobias["wb"], tobias["patient"]["id"], "Does he have anemia?").payload
    assert "Hemoglobin [Mass/volume] in Blood 9.8 g/dL" in _texts(anemia, "patient_findings")


@pytest.mark.parametrize("question", ["Is this pneumonia?", "Is he septic?", "Can I send him home?"])
def test_a_refusal_with_nothing_named_shows_only_the_critical_results(tobias, question):
    out = ask(tobias["wb"], tobias["patient"]["id"], question).payload
    assert out["refused"] is True and out["question"]["disposition"] == "refuse"
    findings = [i["text"] for i in out["sections"]["patient_findings"]]
    assert len(findings) == 1 and findings[0].startswith("Critical: Leukocytes"), findings
    assert out["sections"]["missing"] == [] and out["sections"]["guideline_evidence"] == []
    assert out["sections"]["patient_findings"][0]["citations"] and out["verifier"]["removed"] == 0


def test_a_narrowed_decision_shows_what_was_asked_before_the_safety_findings(tobias):
    out = ask(tobias["wb"], tobias["patient"]["id"], "What could explain his low hemoglobin?").payload
    assert out["question"]["disposition"] == "narrow" and "Hemoglobin" in out["refusal_reason"]
    findings = [i["text"] for i in out["sections"]["patient_findings"]]
    assert findings[0].startswith("Hemoglobin [Mass/volume] in Blood 9.8") and "Critical: Leukocytes" in findings[1]
    assert len(findings) == 2, findings


def test_a_follow_up_keeps_the_test_the_previous_turn_named(tobias):
    wb, pid = tobias["wb"], tobias["patient"]["id"]
    first = ask(wb, pid, "What was his platelet count?")
    assert [i["text"].split(" [")[0] for i in first.payload["sections"]["patient_findings"]] == ["Platelets"]
    out = ask(wb, pid, "when was that?", previous=first.parsed).payload
    texts = [i["text"] for i in out["sections"]["patient_findings"]]
    assert len(texts) == 1 and texts[0].startswith("Platelets") and "2025-09-05" in texts[0]


def test_each_named_test_not_on_record_is_said_to_be_missing(tobias):
    out = ask(tobias["wb"], tobias["patient"]["id"], "His potassium and ferritin?").payload
    assert "Potassium" in _texts(out, "patient_findings")
    assert _texts(out, "missing") == "No Ferritin result found in the chart or in this patient's active documents."


def test_a_long_panel_is_never_cut_short_silently():
    from core.services.answer.evidence import PER_TOPIC_LIMIT, _limited
    from core.services.answer.evidence_items import EvidenceBundle

    items = [EvidenceItem(evidence_id=f"fact:{n}", kind="document_fact", fact_type="lab_result", topic="cbc",
                          text=f"Result {n}", citations=[]) for n in range(PER_TOPIC_LIMIT + 3)]
    bundle = EvidenceBundle()
    kept = _limited(items, bundle)
    assert [i.evidence_id for i in kept] == [f"fact:{n}" for n in range(PER_TOPIC_LIMIT)]
    assert bundle.missing == [(None, f"3 more blood count entries are on record and not listed here (the first "
                                     f"{PER_TOPIC_LIMIT} are); ask about a test or item by name to see it.")]


# ---------------------------------------------------------------- therapy requests, free terms, text reports
@pytest.mark.parametrize("question", ["Which antibiotic would be best for her?",
                                      "Can you suggest a cough syrup for her?", "Recommend something for her fever"])
def test_a_therapy_request_shows_the_allergies_medications_and_pregnancy(world, question):
    # "What antibiotic should I prescribe?" was refused with empty sections: the penicillin
    # allergy and the possible pregnancy never reached the clinician choosing a drug.
    out = ask(world["wb"], world["odalys"]["id"], question).payload
    assert out["refused"] is True and out["question"]["disposition"] == "narrow"
    assert "can't recommend treatment" in out["refusal_reason"] and "pregnancy" in out["refusal_reason"]
    findings = _texts(out, "patient_findings")
    assert "Allergy: Penicillin" in findings and "Metformin" in findings
    assert "pregnant" in _texts(out, "needs_review")
    assert f"documents:{world['docs']['odalys_intake']}" in _cited_documents(out)
    assert out["sections"]["guideline_evidence"] == [] and _all_items_cited(out) and out["verifier"]["removed"] == 0
    for drug in ("amoxicillin", "azithromycin", "doxycycline", "acetaminophen", "ibuprofen"):
        assert drug not in out["text"].lower()


def test_a_therapy_request_with_nothing_on_record_says_what_is_missing(tmp_path):
    wb = open_workbench(Settings(data_dir=tmp_path / "data"))
    seed_test_accounts(wb)
    try:
        patient = add_patient(wb, mrn="EV-33019", first="Evander", last="Quill", dob=date(1966, 1, 9), sex="M",
                              by="dr.reviewer")
        out = ask(wb, patient["id"], "Which antibiotic would you pick for him?").payload
        assert out["question"]["disposition"] == "narrow"
        missing = _texts(out, "missing")
        assert "No allergies found" in missing and "No medications found" in missing
        assert "pregnan" not in missing.lower()  # a pregnancy the record does not mention is not said either way
        assert "No patient evidence matching" not in missing
    finally:
        wb.close()


@pytest.mark.parametrize("question, wording, drug", [
    ("Time to take her off the lisinopril?", "starting, stopping or switching", "Lisinopril"),
    ("Let's go ahead and stop the vitamin D", "starting, stopping or switching", "Vitamin D"),
    ("Would 850 mg of metformin suit her better?", "recommend or change a dose", "Metformin 500 mg"),
    ("How many milligrams of lisinopril should she get?", "recommend or change a dose", "Lisinopril 10 mg"),
    ("I'm planning to pause her metformin", "starting, stopping or switching", "Metformin"),
])
def test_everyday_medication_changes_are_declined_and_narrowed(world, question, wording, drug):
    out = ask(world["wb"], world["odalys"]["id"], question).payload
    assert out["refused"] is True and out["question"]["disposition"] == "narrow", out["question"]["rules"]
    assert wording in out["refusal_reason"]
    assert drug in _texts(out, "patient_findings") and "pregnant" in _texts(out, "needs_review")
    assert _all_items_cited(out)


@pytest.mark.parametrize("question, never", [
    ("Is the letter from Bartholomew Quince in her chart?", ("Bartholomew", "Quince", "letter from")),
    ("Is Bartholomew Quince on her problem list?", ("Bartholomew", "Quince")),
    ("Does she have anything from Mercy Hospital on file?", ("Mercy", "anything from")),
    ("What allergies does she have on file?", ("on file",)),
    ("Does she have a dog?", ("dog",)),
])
def test_an_answer_never_repeats_free_text_that_is_not_a_clinical_term(ines, question, never):
    out = ask(ines["wb"], ines["patient"]["id"], question).payload
    assert out["refused"] is False
    for words in never:
        assert words.lower() not in out["text"].lower(), out["text"]


def test_a_clinical_term_not_on_record_is_still_named(ines):
    out = ask(ines["wb"], ines["patient"]["id"], "Has she been diagnosed with fibromyalgia?").payload
    assert "No “fibromyalgia” found among this patient's problems" in _texts(out, "missing")
    dog = ask(ines["wb"], ines["patient"]["id"], "Does she have a dog?").payload
    assert "No entry matching what you asked about was found among this patient's problems" in _texts(dog, "missing")


# A radiology report as an HL7 MDM sends it: one TX observation per printed line, a header
# and a signature around the findings; the hedged impression is held for review.
_RADIOLOGY_LINES = ("EXAM:", "CHEST PA AND LATERAL", "ORDERING PHYSICIAN:", "Ingram Falk", "FINDINGS:",
                    "Two views of the chest were obtained. There is a small left pleural effusion",
                    "with blunting of the costophrenic angle. Heart size is normal.", "IMPRESSION:",
                    "Small left pleural effusion, possibly early pneumonia.", "Dictated by: Ingram Falk",
                    "Accession: 88A7F2C91")


@pytest.fixture(scope="module")
def rosalind(tmp_path_factory):
    wb = open_workbench(Settings(data_dir=tmp_path_factory.mktemp("rosalind")))
    seed_test_accounts(wb)
    patient = add_patient(wb, mrn="RB-55012", first="Rosalind", last="Achterberg", dob=date(1971, 8, 14), sex="F",
                          by="dr.reviewer")
    segments = ["MSH|^~\\&|RIS|RIVERBEND|EHR|CLINIC|20260311120000||MDM^T02^MDM_T02|MDM0091|P|2.5.1",
                "EVN|T02|20260311120000", "PID|1||RB-55012^^^CLINIC^MR||ACHTERBERG^ROSALIND||19710814|F",
                "TXA|1|RAD|TX|20260311100000||||||||DOC88|||||AU"]
    segments += [f"OBX|{n}|TX|18748-4^Diagnostic imaging study^LN||{line}||||||F|||20260311100000"
                 for n, line in enumerate(_RADIOLOGY_LINES, 1)]
    doc = _ingest(wb, patient, "\r".join(segments).encode(), "hl7v2_message", "chest.hl7")
    yield {"wb": wb, "patient": patient, "doc": doc}
    wb.close()


@pytest.mark.parametrize("question", ["What did her chest x-ray show?", "Any findings on the radiograph?",
                                      "What did the imaging report say?", "Show me her CXR"])
def test_an_imaging_question_gets_the_report_findings_in_reading_order(rosalind, question):
    out = ask(rosalind["wb"], rosalind["patient"]["id"], question).payload
    assert out["refused"] is False and out["question"]["topics"] == ["imaging"]
    findings = [i["text"] for i in out["sections"]["patient_findings"]]
    assert findings == ["Report text: CHEST PA AND LATERAL",
                        "Report text: Two views of the chest were obtained. There is a small left pleural effusion",
                        "Report text: with blunting of the costophrenic angle. Heart size is normal."]
    assert "possibly early pneumonia" in _texts(out, "needs_review")
    for furniture in ("Ingram Falk", "Accession", "IMPRESSION:", "EXAM:"):
        assert furniture not in out["text"]
    assert _cited_documents(out) == {f"documents:{rosalind['doc']}"} and out["verifier"]["removed"] == 0


def test_a_finding_held_for_review_is_never_reported_missing(rosalind):
    wb, pid = rosalind["wb"], rosalind["patient"]["id"]
    out = ask(wb, pid, "Does she have pneumonia on record?").payload
    assert "possibly early pneumonia" in _texts(out, "needs_review")
    assert "No “pneumonia” found" not in out["text"]
    assert "written only in findings held for review" in _texts(out, "missing")
    effusion = ask(wb, pid, "Was there an effusion?").payload
    assert effusion["question"]["disposition"] == "answer"
    assert "small left pleural effusion" in _texts(effusion, "patient_findings")
    assert "Small left pleural effusion" in _texts(effusion, "needs_review")
    assert not effusion["sections"]["missing"]
    absent = ask(wb, pid, "Has there been any pneumothorax?").payload
    assert "No “pneumothorax” found" in _texts(absent, "missing")


def test_a_low_glucose_is_not_given_diabetes_screening_guidance(world):
    wb = world["wb"]
    patient = add_patient(wb, mrn="LG-40417", first="Leontyne", last="Vasko", dob=date(1949, 3, 2), sex="F",
                          by="dr.reviewer")
    segments = ["MSH|^~\\&|LAB|RIVERBEND LAB|EHR|CLINIC|20260302101500||ORU^R01^ORU_R01|LG0001|P|2.5.1",
                "PID|1||LG-40417^^^CLINIC^MR||VASKO^LEONTYNE||19490302|F",
                "OBR|1|ORD1|FIL1|80048^Basic metabolic panel^C4|||20260302083000|||||||||||||||20260302101000|||F",
                "OBX|1|NM|2345-7^Glucose^LN||41|mg/dL|70-99|LL|||F|||20260302083000"]
    _ingest(wb, patient, "\r".join(segments).encode(), "hl7v2_message", "glucose.hl7")
    out = ask(wb, patient["id"], "Anything critical in her labs?").payload
    line = out["sections"]["patient_findings"][0]["text"]
    assert line.startswith("Critical: Glucose 41") and "Screening" not in line
    assert "Hypoglycemia" in line  # the guidance that bears on a low glucose
    assert "screening" not in _texts(out, "guideline_evidence").lower()


def test_a_drafter_that_fails_falls_back_to_the_verified_answer(wb):
    from core.services.answer.answering import ask
    from core.services.admin.patients import add_patient
    from golden.fixtures import LAB_CASES, render_lab

    case = LAB_CASES[0]
    p = case.patient
    patient = add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=p.dob, sex=p.sex, by="dr.reviewer")
    ingest_now(wb, patient_id=patient["id"], source="lab.pdf", data=render_lab(case), filename="lab.pdf",
               doc_type="lab_pdf", by="dr.reviewer")
    calls = []

    class Down:
        def draft(self, question, evidence):
            calls.append(question)
            raise TimeoutError("provider timed out")

    payload = ask(wb, patient["id"], "What was her A1c?", drafter=Down()).payload
    assert calls, "the drafter was asked"
    assert payload["drafted"] is False and "7.9" in payload["text"]
    drafting = [h for h in payload["handoffs"] if h["task_type"] == "drafting"]
    assert drafting and "TimeoutError" in (drafting[0]["error_reason"] or "")


@contextmanager
def _golden_chart(tmp_path, case_id: str, key: str, doc_type: str):
    """A workbench holding one golden case's patient and document, read as the CLI does;
    yields a function from a question to its findings' texts."""
    from golden.cases import load_cases
    from golden.documents import build_spec

    case = next(iter(load_cases(only=[case_id])))
    data, name = build_spec(case.documents[key], case.patients, key=key)
    wb = open_workbench(Settings(data_dir=tmp_path / "data"))
    try:
        seed_test_accounts(wb)
        (p,) = case.patients.values()
        patient = add_patient(wb, mrn=p["mrn"], first=p["first"], last=p["last"], dob=date.fromisoformat(p["dob"]),
                              sex=p["sex"], by="dr.reviewer")
        _ingest(wb, patient, data, doc_type, name)
        yield lambda q: [i["text"] for i in ask(wb, patient["id"], q).payload["sections"]["patient_findings"]]
    finally:
        wb.close()


def test_a_question_about_one_day_gets_that_days_results(tmp_path):
    # Asked after the answer rules: "What was her sodium on 2 Dec?" of a flowsheet led with
    # the 3 December sodium (the latest), the one asked for among the earlier results.
    from domain.policy.questions.asked_dates import asked_date

    assert asked_date("sodium on 02/12") is None  # figures only: day or month first is not said
    with _golden_chart(tmp_path, "lab-layout-flowsheet", "report", "lab_pdf") as asked:
        assert asked("What was his sodium on 2 Dec?") == [
            "Na 130 mmol/L (reference 133-146; flagged low), collected 2026-12-02"]
        day = asked("What were his bloods on the 1st of December?")
        assert len(day) == 7 and all(t.endswith("collected 2026-12-01") for t in day), day
        assert len(asked("What was his sodium on 5 Dec?")) == 3  # no result that day: every date, latest first


def test_a_drug_the_question_names_leads_even_when_it_was_not_given(tmp_path):
    # "Was she given co-amoxiclav?" of a discharge summary saying it was avoided: after
    # affirmed findings were put first, the answer led with clarithromycin.
    with _golden_chart(tmp_path, "referral-docx-discharge-avoided-drug", "summary", "referral_docx") as findings:
        assert findings("Was she given co-amoxiclav?")[0] == "Medication: co-amoxiclav (not given or not taken)"
        current = findings("What medications is she taking?")
        assert current[0].startswith("Medication: Clarithromycin")  # affirmed first when nothing is named
        assert current.index("Medication: co-amoxiclav (not given or not taken)") > current.index(
            "Medication: Metformin 500 mg twice daily")


def test_a_medicine_whose_printed_status_says_it_is_not_taken_comes_after_those_taken(wb):
    # A heart-failure workbook written after the rule: its "Held" spironolactone, first in
    # the sheet, was listed among the medicines taken now.
    from tests.support.file_builders import sheets_workbook
    from tests.support.pipeline import ingest

    patient = add_patient(wb, mrn="HF-30117", first="Orla", last="Brennan-Achebe", dob=date(1949, 2, 11), sex="F",
                          by="dr.reviewer")
    ingest(wb, patient, sheets_workbook({
        "Patient": [["Name", "Orla Brennan-Achebe"], ["Date of birth", "1949-02-11"], ["MRN", "HF-30117"]],
        "Medicines": [["Drug", "Strength", "Directions", "Status"], ["Spironolactone", "25 mg", "once daily", "Held"],
                      ["Furosemide", "40 mg", "twice daily", "Continue"], ["Bisoprolol", "2.5 mg", "once daily", ""]]}),
        "clinical_workbook", "meds.xlsx")
    findings = [i["text"] for i in ask(wb, patient["id"], "What medications is she on?").payload["sections"][
        "patient_findings"]]
    assert findings[-1] == "Medication: Spironolactone 25 mg once daily (Held)", findings
    assert {t.split(" ")[1] for t in findings[:-1]} == {"Furosemide", "Bisoprolol"}
