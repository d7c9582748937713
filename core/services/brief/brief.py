"""The patient brief as a use case: compose the cited lines, cut them to the token
budget by the policy's fixed priority, and hand out the text, the JSON answer of the
CLI contract (DESIGN §9) and the printable PDF."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from domain.errors import BadInput
from domain.policy.answers.brief_budget import DEFAULT_BUDGET_TOKENS, SECTIONS, BriefLine, Fitted, fit
from core.services.admin.patients import chart_documents, get_patient
from core.services.brief.compose import compose, document_label
from core.services.brief.render import footnotes, render_text, section_title
from core.services.brief.tokens import TOKENIZER_NAME, count_tokens
from core.services.workbench import Workbench

MIN_BUDGET = 100  # below this not even a patient's identity fits


@dataclass(frozen=True)
class Brief:
    patient: dict[str, Any]
    fitted: Fitted
    names: dict[str, str]  # "documents:3" -> its file name
    text: str

    @property
    def lines(self) -> list[BriefLine]:
        return self.fitted.lines

    def payload(self) -> dict[str, Any]:
        notes, marks = footnotes(self.lines, self.names)
        by_number = {n.number: n for n in notes}
        sections = []
        for key in SECTIONS:
            mine = [(line, m) for line, m in zip(self.lines, marks) if line.section == key]
            kept, total = self.fitted.shown.get(key, (0, 0))
            if not total:
                continue
            sections.append({
                "key": key, "title": section_title(key, (kept, total)), "shown": kept, "total": total,
                "lines": [{"text": line.text, "sentinels": list(line.sentinels), "notice": line.notice,
                           "footnotes": m,
                           "citations": [c.model_dump(mode="json", exclude_none=True) for c in line.citations]}
                          for line, m in mine]})
        return {
            "patient_mrn": self.patient["mrn"], "sections": sections, "tokens": self.fitted.tokens,
            "budget": self.fitted.budget, "over_budget": self.fitted.over_budget, "tokenizer": TOKENIZER_NAME,
            "cut": [{"section": s, "title": SECTIONS[s], "lines_cut": n, "lines": of} for s, n, of in self.fitted.cut],
            "cut_count": sum(n for _, n, _ in self.fitted.cut),
            "footnotes": [{"number": n, "document": by_number[n].document, "place": by_number[n].place,
                           "quote": by_number[n].quote} for n in sorted(by_number)],
            "text": self.text,
        }


def patient_brief(wb: Workbench, *, mrn: str | None = None, patient_id: int | None = None,
                  budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> Brief:
    if budget_tokens < MIN_BUDGET:
        raise BadInput(f"A brief's budget is at least {MIN_BUDGET} tokens.", code="bad_budget")
    patient = get_patient(wb, mrn=mrn, patient_id=patient_id)
    names = {f"documents:{d['id']}": document_label(d) for d in chart_documents(wb, patient["id"])}
    lines = compose(wb, patient)
    fitted = fit(lines, budget_tokens, lambda kept, cut: count_tokens(render_text(kept, cut, budget_tokens, names)))
    return Brief(patient, fitted, names, render_text(fitted.lines, fitted.cut, budget_tokens, names))
