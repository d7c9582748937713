"""The gate's rubrics: each scores one case true or false, with a reason in words.

A rubric never skips: when a case has nothing it applies to (no deletion, no question),
the rubric holds and says so. Structural rubrics check what must hold in every case
(citations re-found in the source, nothing from an untrusted document in the chart, no
identifier in a log); expectation rubrics compare with what the case file says the
workbench must show. Checks read the workbench's outputs, never its internals, and the
citation checks are written here afresh rather than borrowed from the code they check.
"""

from __future__ import annotations

from typing import Any, Callable

from golden.absence_rubrics import absence_checked
from golden.citation_rubrics import (bounding_box_present, box_on_words, citation_present, citation_verified,
                                     schema_valid)
from golden.expectation_rubrics import (document_fact_expectations, factually_consistent, guideline_retrieval,
                                        promotion_expectations, safe_refusal)
from golden.observation import Observation
from golden.safety_rubrics import (deleted_document_not_retrieved, identity_safe, no_duplicate_promotion,
                                   no_phi_in_logs, no_wrong_patient, retraction_complete)
from golden.verdicts import Verdict


RUBRICS: dict[str, Callable[..., Verdict]] = {
    "schema_valid": schema_valid,
    "citation_present": citation_present,
    "citation_verified": citation_verified,
    "bounding_box_present": bounding_box_present,
    "box_on_words": box_on_words,
    "factually_consistent": factually_consistent,
    "identity_safe": identity_safe,
    "no_wrong_patient": no_wrong_patient,
    "safe_refusal": safe_refusal,
    "no_phi_in_logs": no_phi_in_logs,
    "retraction_complete": retraction_complete,
    "deleted_document_not_retrieved": deleted_document_not_retrieved,
    "no_duplicate_promotion": no_duplicate_promotion,
    "promotion_expectations": promotion_expectations,
    "document_fact_expectations": document_fact_expectations,
    "guideline_retrieval": guideline_retrieval,
    "absence_checked": absence_checked,
}


def score(obs: Observation, leaks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for name, rubric in RUBRICS.items():
        try:
            passed, reason = rubric(obs, leaks) if name == "no_phi_in_logs" else rubric(obs)
        except Exception as exc:  # noqa: BLE001 - a rubric that cannot decide fails, it is never skipped
            passed, reason = False, f"the check itself failed: {type(exc).__name__}: {exc}"
        out[name] = {"passed": bool(passed), "reason": reason}
    return out
