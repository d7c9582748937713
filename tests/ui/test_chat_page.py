"""The Chat page through AppTest: suggested questions asked in one click, the answer's
two opening lines, records that disagree flagged with both sources, empty sections
folded into one line."""

from __future__ import annotations

import dataclasses

from streamlit.testing.v1 import AppTest

from golden.fixtures import INTAKE_CASES, render_intake
from golden.ground_truth import ExpectedAllergy, ExpectedMedication
from tests.support.app_support import app
from tests.support.pipeline import chart_patient, ingest

BASE = INTAKE_CASES[0]


def _chart(wb) -> dict:
    patient = chart_patient(wb, BASE.patient)
    common = dict(notes=(), review_terms=(), margin_note=None, past_history="",
                  medications=(ExpectedMedication("Lisinopril", "10 mg", "daily", "Lisinopril 10 mg daily"),))
    ingest(wb, patient, render_intake(dataclasses.replace(BASE, name="nkda", allergies_printed="NKDA", allergies=(),
                                                          **common)), "intake_form", "intake-march.pdf")
    ingest(wb, patient, render_intake(dataclasses.replace(
        BASE, name="pcn", allergies_printed="Penicillin (hives)", allergies=(ExpectedAllergy("Penicillin", "hives"),),
        phone="(541) 555-0142", **common)), "intake_form", "intake-june.pdf")
    return patient


def _open(patient_id: int) -> AppTest:
    at = app(timeout=90)
    at.session_state["patient_id"] = patient_id
    at.run()
    at.switch_page("app_pages/chat.py").run()
    assert not at.exception, at.exception
    return at


def test_a_suggested_question_is_asked_in_one_click_and_the_answer_opens_with_its_summary(app_env):
    patient = _chart(app_env)
    at = _open(patient["id"])
    suggested = [b for b in at.button if b.key and b.key.startswith(f"suggest-{patient['id']}-")]
    labels = [b.label for b in suggested]
    assert "What allergies are on record?" in labels and "What medications is she taking?" in labels
    assert all("labs" not in label for label in labels)  # no lab result on record: not offered
    next(b for b in suggested if b.label == "What allergies are on record?").click().run()
    assert not at.exception, at.exception
    (summary,) = [i.value for i in at.info]
    first, second = summary.split("  \n")
    assert first.startswith("Allergy: Penicillin") or first.startswith("No known drug allergies")
    assert second == "Also: 1 disagreement in the record to check."
    flag = next(m.value for m in at.markdown if m.value.startswith(":red[**Records disagree:**]"))
    assert "Penicillin" in flag and "No known drug allergies" in flag
    sources = [t.label for t in at.toggle]
    assert any("intake-march.pdf" in s for s in sources) and any("intake-june.pdf" in s for s in sources)
    # Empty sections fold into one line instead of a heading over "none" each.
    assert any(c.value.startswith("Nothing under: ") and "Guideline Evidence" in c.value for c in at.caption)
    assert not any(m.value == "**Guideline Evidence**" for m in at.markdown)
    assert any(e.label.startswith("How this answer was made") for e in at.expander)


def test_a_refusal_says_so_in_its_summary(app_env):
    patient = _chart(app_env)
    at = _open(patient["id"])
    at.chat_input[0].set_value("Which antibiotic should I prescribe her?").run()
    assert not at.exception, at.exception
    (summary,) = [w.value for w in at.warning]
    assert summary.startswith("This is a refusal: I can't recommend treatment.")
    assert any(m.value.startswith(":red[**Records disagree:**]") for m in at.markdown)


def test_an_empty_record_offers_no_suggestion(app_env):
    patient = chart_patient(app_env, BASE.patient)
    at = _open(patient["id"])
    assert not [b for b in at.button if b.key and b.key.startswith("suggest-")]
    assert not any(c.value == "Suggested questions" for c in at.caption)
