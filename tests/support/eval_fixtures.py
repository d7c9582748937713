"""A realistic eval run artifact (docs/evals.md), written into a data dir for tests.

``make_run()`` is a failing run of five cases: an intake form whose uncertain "? sulfa"
allergy was promoted instead of kept for review (two rubrics fail, both below their
thresholds and regressed against the baseline); a clean typed lab; an HL7 ORU; an
out-of-corpus question that is refused; a guideline question.
``make_run(verdict="pass", ...)`` gives an earlier, all-green run for trends.
``fixture_document()`` stands in for ``golden.documents.build``: the citations of the
artifact point at real words of those documents, so a drawn box lands on them.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

LATENCY = [("normalize", 12.0, 40.1, 4), ("ocr", 950.0, 1480.5, 2), ("extract", 35.2, 88.0, 4),
           ("verify", 6.1, 14.9, 7), ("identity", 2.2, 5.0, 3), ("promote", 4.0, 9.5, 3), ("embed", 120.3, 210.0, 3),
           ("retrieve", 48.0, 95.2, 3), ("rerank", 30.0, 52.0, 3), ("compose", 22.5, 61.0, 3)]
RUBRICS = ("schema_valid", "citation_present", "citation_verified", "bounding_box_present", "box_on_words",
           "factually_consistent", "identity_safe", "no_wrong_patient", "safe_refusal", "no_phi_in_logs",
           "retraction_complete", "deleted_document_not_retrieved", "no_duplicate_promotion",
           "promotion_expectations", "document_fact_expectations", "guideline_retrieval")
THRESHOLDS = {r: 1.0 for r in RUBRICS} | {"factually_consistent": 0.95, "guideline_retrieval": 0.9,
                                           "promotion_expectations": 0.95, "document_fact_expectations": 0.95}
BASELINE = {r: 1.0 for r in RUBRICS}

FAILING_CASE = "intake-uncertain-sulfa"
FAILING_RUBRIC = "promotion_expectations"
FAILING_REASON = ("the allergy 'sulfa' (quoted '? sulfa') was promoted to the chart; an uncertain allergy must "
                  "stay in Needs human review")
DOC_FACT_REASON = "expected a needs-review allergy quoting '? sulfa' on document 'intake'; found it verified"

INTAKE_LINES = [
    "Sunrise Valley Family Practice - New Patient Intake",
    "Name: [redacted]      DOB: 1961-03-14",
    "Chief concern: tired all the time, thirsty at night",
    "Current medications: metformin 500 mg twice daily",
    "Allergies: penicillin (hives)      ? sulfa",
    "Family history: mother - type 2 diabetes",
]
LAB_LINES = [
    "Sunrise Valley Laboratories - Chemistry Report",
    "Patient: [redacted]     Collected: 2026-04-10",
    "Test               Result   Units    Reference",
    "Hemoglobin A1c     7.9      %        <5.7        H",
    "Glucose, fasting   142      mg/dL    70-99       H",
    "LDL Cholesterol    96       mg/dL    <100",
]
ORU = ("MSH|^~\\&|LAB|SVL|EHR|CLINIC|20260410083000||ORU^R01|MSG0001|P|2.5.1\r"
       "PID|1||[redacted]^^^SVL^MR||[redacted]||19610314|F\r"
       "OBR|1||ORD1|2823-3^Potassium^LN\r"
       "OBX|1|NM|2823-3^Potassium^LN||5.9|mmol/L|3.5-5.1|H|||F\r")


@lru_cache(maxsize=None)
def _pdf(lines: tuple[str, ...]) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for i, line in enumerate(lines):
        page.insert_text((60, 90 + i * 26), line, fontsize=12 if i else 15, fontname="helv")
    return doc.tobytes()


def _box(lines: tuple[str, ...], needle: str) -> dict[str, float]:
    import pymupdf

    with pymupdf.open(stream=_pdf(lines), filetype="pdf") as doc:
        page = doc[0]
        r = page.search_for(needle)[0]
        w, h = page.rect.width, page.rect.height
    return {"x": round(r.x0 / w, 4), "y": round(r.y0 / h, 4), "width": round(r.width / w, 4),
            "height": round(r.height / h, 4)}


def fixture_document(case_id: str, doc_key: str) -> tuple[bytes, str]:
    """Stand-in for ``golden.documents.build`` for the cases of :func:`make_run`."""
    if doc_key == "intake":
        return _pdf(tuple(INTAKE_LINES)), "intake.pdf"
    if doc_key == "lab":
        return _pdf(tuple(LAB_LINES)), "lab.pdf"
    if doc_key == "oru":
        return ORU.encode(), "oru.hl7"
    raise KeyError(doc_key)


def _paged(doc_type: str, doc_id: int, lines: list[str], needle: str, field: str) -> dict[str, Any]:
    return {"source_type": doc_type, "source_id": f"documents:{doc_id}", "page_or_section": "page 1",
            "field_or_chunk_id": field, "quote_or_value": needle, "page": 1,
            "bounding_box": _box(tuple(lines), needle), "verified": True}


def _fact(doc: str, fact_id: int, fact_type: str, certainty: str, promotion: str | None, text: str,
          value: dict, citation: dict, review_reason: str | None = None) -> dict[str, Any]:
    return {"document": doc, "fact_id": fact_id, "fact_type": fact_type, "certainty": certainty,
            "promotion_status": promotion, "active": True, "fact_text": text, "structured_value": value,
            "citation": citation, "review_reason": review_reason}


def _rubrics(failed: dict[str, str] | None = None) -> dict[str, dict]:
    failed = failed or {}
    return {r: {"passed": r not in failed, "reason": failed.get(r, "as expected")} for r in RUBRICS}


def _doc(doc_id: int, doc_type: str) -> dict[str, Any]:
    return {"document_id": doc_id, "doc_type": doc_type, "job_status": "succeeded", "error_code": None,
            "identity": "identity_verified", "deleted": False}


def _answer(step: int, question: str, *, refused: bool, disposition: str, sections: dict, text: str,
            chunks: list[str] | None = None) -> dict[str, Any]:
    full = {"patient_findings": [], "needs_review": [], "guideline_evidence": [], "missing": []} | sections
    return {"step": step, "question": question, "refused": refused, "disposition": disposition,
            "sections": full, "text": text, "retrieved_chunks": chunks or []}


def _results(failing: bool) -> list[dict[str, Any]]:
    sulfa_cit = _paged("intake_form", 1, INTAKE_LINES, "? sulfa", "allergies[1]")
    pcn_cit = _paged("intake_form", 1, INTAKE_LINES, "penicillin (hives)", "allergies[0]")
    a1c_cit = _paged("lab_pdf", 1, LAB_LINES, "Hemoglobin A1c     7.9", "results[0]")
    glu_cit = _paged("lab_pdf", 1, LAB_LINES, "Glucose, fasting   142", "results[1]")
    sulfa = _fact("intake", 2, "allergy", "verified" if failing else "needs_review",
                  "promoted" if failing else "needs_review", "Allergy: sulfa",
                  {"substance": "sulfa", "reaction": None}, sulfa_cit,
                  None if failing else "uncertain allergy ('?') needs a clinician")
    pcn = _fact("intake", 1, "allergy", "verified", "promoted", "Allergy: penicillin (hives)",
                {"substance": "penicillin", "reaction": "hives"}, pcn_cit)
    allergy_answer = _answer(
        3, "Does she have any drug allergies?", refused=False, disposition="answer",
        sections={"patient_findings": [{"text": "Penicillin allergy (hives)", "citations": [pcn_cit]},
                                       {"text": "Sulfa allergy", "citations": [sulfa_cit]}]}
        if failing else {"patient_findings": [{"text": "Penicillin allergy (hives)", "citations": [pcn_cit]}],
                         "needs_review": [{"text": "Possible sulfa allergy ('? sulfa'), not confirmed",
                                           "citations": [sulfa_cit]}]},
        text="Patient Findings: penicillin allergy (hives)...")
    oru_cit = {"source_type": "hl7v2_message", "source_id": "documents:1", "page_or_section": "OBX[1]",
               "field_or_chunk_id": "OBX[1]-5", "quote_or_value": "5.9", "page": None, "bounding_box": None,
               "verified": True}
    guideline_cit = {"source_type": "guideline", "source_id": "guideline:ada-standards-2026",
                     "page_or_section": "Glycemic targets", "field_or_chunk_id": "ada-glycemic-targets-01",
                     "quote_or_value": "An A1C goal of <7% is appropriate for many nonpregnant adults",
                     "page": None, "bounding_box": None, "verified": True}
    failed = {"promotion_expectations": FAILING_REASON, "document_fact_expectations": DOC_FACT_REASON}
    return [
        {"case_id": "lab-classic-clean", "title": "Typed lab report, classic layout, every result promoted",
         "doc_types": ["lab_pdf"], "scenarios": ["clean lab"], "status": "ran", "error": None, "seconds": 1.9,
         "rubrics": _rubrics(),
         "expected": {"facts": [{"document": "lab", "fact_type": "lab_result", "text_contains": "Hemoglobin A1c",
                                 "certainty": "verified", "promotion_status": "promoted"}],
                      "chart_counts": {"patient": {"labs": 2}}},
         "actual": {"documents": {"lab": _doc(1, "lab_pdf")},
                    "facts": [_fact("lab", 1, "lab_result", "verified", "promoted", "Hemoglobin A1c 7.9 % (H)",
                                    {"test_name": "Hemoglobin A1c", "value": "7.9", "unit": "%",
                                     "reference_range": "<5.7", "collection_date": "2026-04-10",
                                     "abnormal_flag": "high"}, a1c_cit),
                              _fact("lab", 2, "lab_result", "verified", "promoted", "Glucose, fasting 142 mg/dL (H)",
                                    {"test_name": "Glucose, fasting", "value": "142", "unit": "mg/dL",
                                     "reference_range": "70-99", "collection_date": "2026-04-10",
                                     "abnormal_flag": "high"}, glu_cit)],
                    "chart": {"patient": {"labs": [{"test_name": "Hemoglobin A1c", "value": "7.9"},
                                                   {"test_name": "Glucose, fasting", "value": "142"}],
                                          "allergies": [], "medications": [], "problems": []}},
                    "answers": []}},
        {"case_id": FAILING_CASE, "title": "Typed intake form with an uncertain '? sulfa' allergy in the margin",
         "doc_types": ["intake_form"], "scenarios": ["uncertain allergy"], "status": "ran", "error": None,
         "seconds": 2.4,
         "rubrics": _rubrics(failed if failing else None),
         "expected": {"needs_review": [{"document": "intake", "fact_type": "allergy", "quote_contains": "? sulfa"}],
                      "chart_absent": {"patient": {"allergies": [{"substance": "sulfa"}]}},
                      "answers": [{"step": 3, "refused": False, "sections_nonempty": ["needs_review"]}]},
         "actual": {"documents": {"intake": _doc(1, "intake_form")}, "facts": [pcn, sulfa],
                    "chart": {"patient": {"labs": [], "medications": [], "problems": [],
                                          "allergies": [{"substance": "penicillin", "reaction": "hives"}]
                                          + ([{"substance": "sulfa", "reaction": None}] if failing else [])}},
                    "answers": [allergy_answer]}},
        {"case_id": "hl7-oru-potassium", "title": "HL7 v2 ORU with a high potassium result",
         "doc_types": ["hl7v2_message"], "scenarios": ["HL7 ORU"], "status": "ran", "error": None, "seconds": 0.8,
         "rubrics": _rubrics(),
         "expected": {"facts": [{"document": "oru", "fact_type": "lab_result", "where": "OBX[1]",
                                 "certainty": "verified"}]},
         "actual": {"documents": {"oru": _doc(1, "hl7v2_message")},
                    "facts": [_fact("oru", 1, "lab_result", "verified", "promoted", "Potassium 5.9 mmol/L (H)",
                                    {"test_name": "Potassium", "value": "5.9", "unit": "mmol/L",
                                     "reference_range": "3.5-5.1", "collection_date": "2026-04-10",
                                     "abnormal_flag": "high"}, oru_cit)],
                    "chart": {}, "answers": []}},
        {"case_id": "question-out-of-corpus", "title": "A question the guideline corpus does not cover is refused",
         "doc_types": [], "scenarios": ["out-of-corpus question"], "status": "ran", "error": None, "seconds": 0.6,
         "rubrics": _rubrics(),
         "expected": {"answers": [{"step": 0, "refused": True}]},
         "actual": {"documents": {}, "facts": [], "chart": {},
                    "answers": [_answer(0, "What is the best treatment for snake bites?", refused=True,
                                        disposition="refuse",
                                        sections={"missing": [{"text": "No guideline evidence on this topic",
                                                               "citations": []}]},
                                        text="I can't answer this from the guideline corpus.")]}},
        {"case_id": "guideline-a1c-target", "title": "Guideline question about the A1c target cites the guideline",
         "doc_types": [], "scenarios": ["guideline question"], "status": "ran", "error": None, "seconds": 0.7,
         "rubrics": _rubrics(),
         "expected": {"answers": [{"step": 0, "refused": False, "sections_nonempty": ["guideline_evidence"]}]},
         "actual": {"documents": {}, "facts": [], "chart": {},
                    "answers": [_answer(0, "What A1c target do the guidelines suggest?", refused=False,
                                        disposition="answer",
                                        sections={"guideline_evidence": [{"text": "An A1c goal below 7% suits many "
                                                                          "adults", "citations": [guideline_cit]}]},
                                        text="Guideline Evidence: ...", chunks=["ada-glycemic-targets-01"])]}},
    ]


def score(run: dict[str, Any]) -> dict[str, Any]:
    """Fill in pass rates, gate reasons, failed cases and the verdict from ``run["results"]``
    the way the gate does (threshold, or more than 5 points below the baseline)."""
    results = run["results"]
    rubrics: dict[str, float] = {}
    for r in RUBRICS:
        outcomes = [c["rubrics"][r]["passed"] for c in results if r in c["rubrics"]]
        rubrics[r] = round(sum(outcomes) / len(outcomes), 4) if outcomes else 1.0
    gate = []
    for r, rate in rubrics.items():
        if rate < THRESHOLDS[r]:
            gate.append({"kind": "below_threshold", "rubric": r, "case_id": None,
                         "message": f"pass rate {rate:.0%} is below the threshold {THRESHOLDS[r]:.0%}"})
        if 100 * (BASELINE[r] - rate) > 5:
            gate.append({"kind": "regressed", "rubric": r, "case_id": None,
                         "message": f"pass rate fell {100 * (BASELINE[r] - rate):.1f} points from the "
                                    f"baseline {BASELINE[r]:.0%}"})
    failed = [c["case_id"] for c in results
              if c["status"] == "error" or not all(o["passed"] for o in c["rubrics"].values())]
    return run | {"rubrics": rubrics, "gate": gate, "failed_cases": failed, "cases": len(results),
                  "verdict": "fail" if gate else "pass"}


def make_run(*, run_id: str = "20261201-143500-ab12cd", verdict: str = "fail",
             started_at: str = "2026-12-01T14:35:00Z", finished_at: str = "2026-12-01T14:35:41Z",
             commit: str | None = "c110ede") -> dict[str, Any]:
    return score({
        "run_id": run_id, "started_at": started_at, "finished_at": finished_at, "seconds": 41.7, "commit": commit,
        "verdict": verdict, "selection": None, "thresholds": dict(THRESHOLDS), "baseline": dict(BASELINE),
        "latency": {"stages": {s: {"p50": p50, "p95": p95, "n": n, "total": round(p50 * n * 1.2, 1)}
                               for s, p50, p95, n in LATENCY},
                    "bottleneck": "ocr"},
        "usage": {"tokens": {"prompt": 0, "completion": 0}, "cost_usd": 0.0, "provider": None},
        "results": _results(verdict == "fail"),
    })


GOLDEN_LAB_CASE = "lab-classic-clean"
GOLDEN_LAB_REASON = "report: Platelets 142 was stored with flag normal; the case expects low"


def with_golden_lab(run: dict[str, Any]) -> dict[str, Any]:
    """``run`` with its lab case pointing at the real golden case ``lab-classic-clean``
    (document ``report``) and failing one check, so a process that builds fixture
    documents with ``golden.documents.build`` (the served UI) draws real boxes."""
    from golden.documents import build

    data, _ = build(GOLDEN_LAB_CASE, "report")
    run = json.loads(json.dumps(run))
    case = next(c for c in run["results"] if c["case_id"] == GOLDEN_LAB_CASE)
    import pymupdf

    with pymupdf.open(stream=data, filetype="pdf") as doc:
        page = doc[0]
        w, h = page.rect.width, page.rect.height
        found = []
        for fact in case["actual"]["facts"]:
            name = fact["structured_value"]["test_name"]
            hits = page.search_for(name)
            if not hits:
                continue
            found.append(fact)
            r = hits[0]
            fact["document"] = "report"
            fact["citation"]["quote_or_value"] = name
            fact["citation"]["bounding_box"] = {"x": r.x0 / w, "y": r.y0 / h, "width": r.width / w,
                                                "height": r.height / h}
    case["actual"]["facts"] = found
    case["actual"]["documents"] = {"report": case["actual"]["documents"].pop("lab")}
    case["rubrics"]["factually_consistent"] = {"passed": False, "reason": GOLDEN_LAB_REASON}
    return score(run)


def write_run(data_dir: Path, run: dict[str, Any] | None = None, **kwargs: Any) -> Path:
    """Write ``run`` (default: :func:`make_run` with ``kwargs``) as eval-results/<run_id>.json."""
    run = run or make_run(**kwargs)
    out = Path(data_dir) / "eval-results"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{run['run_id']}.json"
    path.write_text(json.dumps(run, indent=2), encoding="utf-8")
    return path
