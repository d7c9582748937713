"""Supervisor routing, evidence retrieval and cited answers, on real ingested documents."""

from __future__ import annotations

import json
import threading
from datetime import date
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from core.models import AnswerItem, AnswerSections, Citation, EvidenceItem
from core.policy.answer_verifier import RetrievedEvidence, check_drafted_sentence, verify_answer
from core.policy.questions import Intent, Unsafe, parse_question
from core.policy.supervisor import route
from core.services.answering import ask
from core.services.ingestion import attach_and_extract
from core.services.patients import add_patient
from core.services.retraction import delete_document
from core.services.worker import Worker
from core.services.workbench import open_workbench
from core.settings import Settings
from golden.fixtures import INTAKE_CASES, LAB_CASES, render_intake, render_lab

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
    ("Does she have diabetes?", (), Intent.LOOKUP, (Unsafe.DIAGNOSIS,), False),
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
    attached = attach_and_extract(wb, patient_id=patient["id"], source=name, data=data, filename=name,
                                  doc_type=doc_type)
    job = Worker(wb).run_specific(attached.job["id"])
    assert job["status"] == "succeeded", job["error_message"]
    return attached.document["id"]


def _chart_patient(wb, p):
    return add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=date.fromisoformat(p.dob), sex=p.sex)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from core.services.corpus import index_guideline_corpus
    from core.services.fact_vectors import index_pending

    wb = open_workbench(Settings(data_dir=tmp_path_factory.mktemp("answers")))
    index_guideline_corpus(wb)
    wren = _chart_patient(wb, WREN_LAB.patient)
    odalys = _chart_patient(wb, ODALYS_LAB.patient)
    docs = {
        "wren_lab": _ingest(wb, wren, render_lab(WREN_LAB), "lab_pdf", "wren-lab.pdf"),
        "wren_intake": _ingest(wb, wren, render_intake(WREN_INTAKE), "intake_form", "wren-intake.pdf"),
        "odalys_lab": _ingest(wb, odalys, render_lab(ODALYS_LAB), "lab_pdf", "odalys-lab.pdf"),
        "odalys_intake": _ingest(wb, odalys, render_intake(ODALYS_INTAKE), "intake_form", "odalys-intake.pdf"),
    }
    index_pending(wb)
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
    ("Does she have heart disease?", "diagnosis"),
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
    try:
        wren = _chart_patient(wb, WREN_LAB.patient)
        lab = _ingest(wb, wren, render_lab(WREN_LAB), "lab_pdf", "wrong-patient-upload.pdf")
        from core.services.fact_vectors import index_pending

        index_pending(wb)
        before = ask(wb, wren["id"], "What is her LDL?").payload
        assert f"documents:{lab}" in _cited_documents(before)
        free_text = "triglyceride and lipoprotein values"  # no topic word: answered through the vectors
        via_vectors = ask(wb, wren["id"], free_text).payload
        assert via_vectors["question"]["topics"] == [] and f"documents:{lab}" in _cited_documents(via_vectors)
        delete_document(wb, lab)
        for question in ("What is her LDL?", "labs", "cholesterol results", free_text):
            after = ask(wb, wren["id"], question).payload
            assert f"documents:{lab}" not in _cited_documents(after)
        assert "No LDL cholesterol found" in _texts(ask(wb, wren["id"], "What is her LDL?").payload, "missing")
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
    from core.services.drafting import OpenAICompatibleDrafter

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
    from core.services.evidence import primary_topic, topics_of

    assert primary_topic(topics_of("lab_result", {"test_name": test_name}, test_name)) == topic
