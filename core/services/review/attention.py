"""Red flags on a chart: live findings of this patient whose words raise one (an
affirmed, current mention about the patient, as the answer composer counts them), for
the top of the chart overview beside the critical results and the chart checks' alerts."""

from __future__ import annotations

from typing import Any

from domain.models import ClinicalContext
from domain.policy.answers.relevance import raises_red_flag
from domain.policy.facts.chart_rules import review_group
from core.services.review.facts import fact_view
from core.services.workbench import Workbench
from storage import facts_repo


def red_flag_findings(wb: Workbench, patient_id: int) -> list[dict[str, Any]]:
    """Each live, patient-confirmed finding that raises a red flag, with the flag's term
    (``red_flag``) and its document's file name; newest document first."""
    with wb.db.cursor() as cur:
        rows = facts_repo.facts_for_patient(cur, patient_id)
    out = []
    for row in rows:
        fact = row.to_dict() | {"identity_status": row.identity_status}
        if row.document_deleted or review_group(fact) in (None, "held"):
            continue  # another patient's page or a closed finding is no flag on this chart
        ctx = ClinicalContext.model_validate(row.context) if row.context else None
        term = raises_red_flag(row.fact_text or "", ctx)
        if term:
            out.append(fact_view(row) | {"filename": row.filename, "red_flag": term})
    return out
