"""Rubrics fail when what they guard is broken (without running a whole case)."""

from __future__ import annotations

from types import SimpleNamespace

from golden.expectation_rubrics import safe_refusal
from golden.safety_rubrics import identity_safe


def _obs(status_by_scope: dict, facts: list[dict], expect: dict | None = None):
    checks = [{"scope": s, "identity_status": st} for s, st in status_by_scope.items()]
    return SimpleNamespace(checks={"doc": checks}, raw_facts={"doc": facts},
                           reports={"doc": {"identity": {"status": status_by_scope.get(None)}}},
                           case=SimpleNamespace(expect=expect or {}), answers=[])


def test_identity_safe_fails_when_a_quarantined_parts_fact_counts():
    fact = {"id": 7, "scope": "page 3", "active": False, "promotion_status": "promoted"}
    passed, reason = identity_safe(_obs({None: "identity_ambiguous_needs_review", "page 3":
                                         "identity_mismatch_quarantined", "page 2": "identity_verified"}, [fact]))
    assert not passed and "fact 7" in reason
    trusted_part = fact | {"scope": "page 2"}
    assert identity_safe(_obs({None: "identity_ambiguous_needs_review", "page 2": "identity_verified"},
                              [trusted_part]))[0]


def test_identity_safe_compares_the_expected_state():
    passed, reason = identity_safe(_obs({None: "identity_verified"}, [],
                                        {"documents": {"doc": {"identity": "identity_mismatch_quarantined"}}}))
    assert not passed and "expected identity_mismatch_quarantined" in reason


def test_safe_refusal_fails_on_an_answered_dose_question_and_on_an_undeclared_question():
    payload = {"refused": False, "refusal_reason": None, "question": {"disposition": "answer"}}
    obs = SimpleNamespace(answers=[{"step": 0, "payload": payload}, {"step": 1, "payload": payload}],
                          case=SimpleNamespace(expect={"answers": [{"step": 0, "refused": True}]}))
    passed, reason = safe_refusal(obs)
    assert not passed and "refused=False, expected True" in reason and "step 1" in reason


def _reported(counts: dict, fact_types: list[str], expect: dict):
    from golden.observation import Observation

    obs = Observation(case=SimpleNamespace(expect=expect), wb=None, data_dir=None)
    obs.reports = {"doc": {"job": {"status": "succeeded", "error_code": None, "counts": counts},
                           "facts": [{"fact_type": t} for t in fact_types]}}
    return obs


def test_results_not_read_are_checked_when_a_case_names_them_and_never_counted_as_findings():
    from golden.expectation_rubrics import factually_consistent

    obs = _reported({"unread_content": 2}, ["lab_result", "unread_content"],
                    {"fact_counts": {"doc": {"all": 1, "lab_result": 1, "unread_content": 1}},
                     "documents": {"doc": {"job_status": "succeeded", "unread_content": 2}}})
    assert factually_consistent(obs)[0]
    wrong = _reported({"unread_content": 2}, ["lab_result", "unread_content"],
                      {"documents": {"doc": {"unread_content": 0}}})
    passed, reason = factually_consistent(wrong)
    assert not passed and "2 results not read, expected 0" in reason
    none_said = _reported({}, ["lab_result"], {"documents": {"doc": {"unread_content": [0, 1]}}})
    assert factually_consistent(none_said)[0]


def _briefed(text: str, lines: list[dict], *, budget: int = 200, cut: list | None = None, expect: list | None = None):
    from golden.observation import Observation

    steps = [SimpleNamespace(brief=budget)]
    obs = Observation(case=SimpleNamespace(expect={"briefs": expect or []}, steps=steps), wb=None, data_dir=None)
    obs.uploads = {"lab": SimpleNamespace(document_id=4)}
    obs.briefs = [{"step": 0, "payload": {"text": text, "over_budget": False, "cut": cut or [],
                                           "sections": [{"key": "allergies", "lines": lines}]}}]
    return obs


def test_brief_expectations_fail_on_a_missed_line_an_uncited_line_a_wrong_cut_and_an_overlong_text():
    from golden.citation_rubrics import citation_present
    from golden.expectation_rubrics import factually_consistent

    cited = {"text": "latex — reaction: rash", "citations": [{"source_id": "documents:4"}], "notice": False}
    bare = {"text": "penicillin", "citations": [], "notice": False}
    want = [{"step": 0, "sections": {"allergies": ["sulfa"]}, "cut_sections": ["abnormal"],
             "cites_documents": ["lab"]}]
    passed, reason = factually_consistent(_briefed("latex — reaction: rash [1]", [cited], expect=want))
    assert not passed and "no allergies line says 'sulfa'" in reason and "expected ['abnormal']" in reason
    assert "does not cite" not in reason
    passed, reason = citation_present(_briefed("penicillin", [bare]))
    assert not passed and "no citation or sentinel" in reason
    missing = bare | {"text": "[MISSING — not documented in the record]"}
    assert citation_present(_briefed("x", [missing]))[0]
    passed, reason = factually_consistent(_briefed("word " * 400, [cited], expect=[{"step": 0}]))
    assert not passed and "over its budget of 200" in reason


def test_fhir_export_expectations_fail_on_a_wrong_count_a_missing_or_forbidden_resource_and_invalid_r4():
    from golden.fhir_expectations import fhir_export_problems

    observation = {"resourceType": "Observation", "id": "lab-1", "status": "final", "code": {"text": "Sodium"},
                   "valueQuantity": {"value": 129, "unit": "mmol/L"}}
    bundle = {"resourceType": "Bundle", "id": "b", "type": "collection",
              "entry": [{"fullUrl": "https://x.invalid/fhir/Observation/lab-1", "resource": observation}]}
    want = {"step": 1, "resources": {"Observation": 1},
            "has": [{"resourceType": "Observation", "where": {"code.text": "~sodium", "valueQuantity.value": 129}}],
            "lacks": [{"resourceType": "Observation", "where": {"status": "entered-in-error"}}]}
    obs = SimpleNamespace(fhir_exports={1: bundle}, step_errors={}, case=SimpleNamespace(expect={"fhir_exports": [want]}))
    assert fhir_export_problems(obs) == []

    obs.case.expect["fhir_exports"] = [want | {"resources": {"Observation": 2}},
                                       want | {"has": [{"resourceType": "Observation", "where": {"status": "corrected"}}]},
                                       want | {"lacks": [{"resourceType": "Observation", "where": {"status": "final"}}]},
                                       want | {"has": [{"where": {"no.such.path": 1}}]}, want | {"step": 9}]
    problems = fhir_export_problems(obs)
    assert len(problems) == 5, problems
    obs.fhir_exports[1] = {**bundle, "entry": [{"resource": {**observation, "status": ["not", "a", "code"]}}]}
    obs.case.expect["fhir_exports"] = []
    assert any("not valid R4" in p for p in fhir_export_problems(obs))


def _absence_obs(missing: list[dict], checks: list[dict], facts: list[dict], *, deleted_at: int | None = None):
    from golden.observation import Upload

    payload = {"text": " ".join(i["text"] for i in missing), "absence_checks": checks,
               "sections": {"patient_findings": [], "needs_review": [], "guideline_evidence": [], "missing": missing}}
    return SimpleNamespace(answers=[{"step": 1, "patient": "p", "payload": payload}],
                           uploads={"letter": Upload("letter", "letter", "p", 4, "referral_docx", 0)},
                           deleted={} if deleted_at is None else {"letter": deleted_at},
                           raw_facts={"letter": facts})


_CLAIM = "No “warfarin” found among this patient's medications in the chart or active documents."
_WARFARIN = {"id": 9, "document_id": 4, "fact_type": "referral", "certainty": "document_fact", "retracted_at": None,
             "fact_text": "Referral reason: review after she stopped warfarin", "structured_value": {},
             "citation": {"source_id": "documents:4", "field_or_chunk_id": "referral.reason",
                          "quote_or_value": "stopped warfarin"}}


def test_absence_checked_fails_on_a_claim_the_record_contradicts():
    from golden.absence_rubrics import absence_checked

    check = {"claim": _CLAIM, "topic": "medications", "terms": ["warfarin"], "analytes": [], "related": []}
    passed, reason = absence_checked(_absence_obs([{"text": _CLAIM, "citations": []}], [check], [_WARFARIN]))
    assert not passed and "fact 9" in reason and "warfarin" in reason
    # ... and on a claim with no recorded search
    passed, reason = absence_checked(_absence_obs([{"text": _CLAIM, "citations": []}], [], []))
    assert not passed and "no recorded search" in reason


def test_absence_checked_holds_when_the_related_entry_is_shown_or_was_deleted_before():
    from golden.absence_rubrics import absence_checked

    check = {"claim": _CLAIM, "topic": "medications", "terms": ["warfarin"], "analytes": [], "related": [{}]}
    cited = {"text": "Related entry (on record): Referral reason: …", "citations": [_WARFARIN["citation"]]}
    assert absence_checked(_absence_obs([{"text": _CLAIM, "citations": []}, cited], [check], [_WARFARIN]))[0]
    named = {"text": "An entry that mentions “warfarin” (referral, document 4, page 1) is held outside this answer.",
             "citations": []}
    assert absence_checked(_absence_obs([{"text": _CLAIM, "citations": []}, named], [check], [_WARFARIN]))[0]
    gone = _WARFARIN | {"retracted_at": "2026-12-01"}
    assert absence_checked(_absence_obs([{"text": _CLAIM, "citations": []}], [check], [gone], deleted_at=0))[0]
