"""Results told in sentences of a letter: the analyte vocabulary's names, a value and
its unit (glued or spaced), when the sentence says so; targets, thresholds, ranges
and doses are not results. Written after the rules."""

from __future__ import annotations

import pytest

from extract.values.prose_labs import lab_values_in


def told(sentence: str) -> list[tuple[str, str, str, str | None]]:
    return [(m.test_name, m.value, m.unit, m.when.text if m.when else None) for m in lab_values_in(sentence)]


@pytest.mark.parametrize("sentence, expected", [
    ("Her ferritin was 11 ug/L and haemoglobin 104 g/L on 14/05/2024.",
     [("ferritin", "11", "ug/L", None), ("haemoglobin", "104", "g/L", "on 14/05/2024")]),
    ("His PSA has risen to 6.8 ng/mL over the past year.", [("PSA", "6.8", "ng/mL", None)]),
    ("Sodium 128 mmol/L yesterday, with a urea of 9.1 mmol/L.",
     [("Sodium", "128", "mmol/L", "yesterday"), ("urea", "9.1", "mmol/L", None)]),
    ("Her A1c came back at 9.4% in early June.", [("A1c", "9.4", "%", "in early June")]),
    ("The INR was 1.9 two weeks ago.", [("INR", "1.9", "", "two weeks ago")]),
    # a change told "from ... to ...": the result now is the second number (a held-out letter's eGFR went unread)
    ("Her eGFR has fallen from 41 to 28 mL/min over six months.", [("eGFR", "28", "mL/min", None)]),
    ("Her creatinine rose from 120 to 171 umol/L last week.", [("creatinine", "171", "umol/L", "last week")]),
    # A held-out NZ letter: a date in brackets before the colon is no part of the first name,
    # and urate is reported in mmol/L there; the date goes with each result (ninth session).
    ("Bloods (02/12/2026): ALP 131 U/L, urate 0.51 mmol/L and TSH 3.2 mIU/L.",
     [("ALP", "131", "U/L", "02/12/2026"), ("urate", "0.51", "mmol/L", "02/12/2026"),
      ("TSH", "3.2", "mIU/L", "02/12/2026")]),
    # a specimen named before the result: the urine's protein, never the blood's (fourteenth session)
    ("Her glucose was 9.4 mmol/L and her urine showed protein 0.8 g/L.",
     [("glucose", "9.4", "mmol/L", None), ("protein (urine)", "0.8", "g/L", None)]),
    ("CSF protein 0.9 g/L, glucose 2.1 mmol/L.", [("protein (CSF)", "0.9", "g/L", None),
                                                 ("glucose (CSF)", "2.1", "mmol/L", None)]),
    # a specimen said of something else in the sentence is no specimen of the result
    ("She was fluid overloaded and her sodium was 128 mmol/L.", [("sodium", "128", "mmol/L", None)]),
    ("Sputum was sent and her CRP was 88 mg/L.", [("CRP", "88", "mg/L", None)]),
    ("Urine culture showed no growth and her creatinine was 120 umol/L.", [("creatinine", "120", "umol/L", None)]),
    ("She had a urinalysis on 26/03, which showed protein 0.8 g/L.", [("protein (urine)", "0.8", "g/L", None)]),
    # an emergency summary's lactate went unread: the vocabulary had no lactate (eleventh wave)
    ("Investigations: sodium 131 mmol/L, lactate 1.8 mmol/L, procalcitonin 0.4 ng/mL.",
     [("sodium", "131", "mmol/L", None), ("lactate", "1.8", "mmol/L", None), ("procalcitonin", "0.4", "ng/mL", None)]),
])
def test_results_in_a_sentence(sentence, expected):
    assert told(sentence) == expected


@pytest.mark.parametrize("sentence", [
    "We aim for a target HbA1c below 53 mmol/mol.",
    "Please keep her INR between 2 and 3.",
    "An INR of 2 to 3 is the goal.",
    "Keep her potassium from 4 to 5 mmol/L.",  # no verb of change: a range
    "She takes potassium chloride 600 mg twice daily.",  # a dose, not a result
    "If the potassium rises above 6 please stop the ramipril.",
])
def test_targets_thresholds_ranges_and_doses_are_not_results(sentence):
    assert told(sentence) == []


def test_a_number_a_scan_split_at_its_point_is_no_result_of_its_first_part():
    # A faxed "5.9 mmol/L" read as "5 9 mmol/L": "potassium 5" would be a wrong value. The
    # creatinine beside it is read; the potassium is left for the coverage guard to report.
    assert told("Her potassium was 5 9 mmol/L and her creatinine 148 umol/L.") == [
        ("creatinine", "148", "umol/L", None)]
    assert told("Her eGFR is 31 and her urea 9.") == [("eGFR", "31", "", None), ("urea", "9", "", None)]


def test_the_mention_is_quoted_as_printed():
    sentence = "Most recently her creatinine was 143 umol/L."
    (m,) = lab_values_in(sentence)
    assert m.mention.text == "creatinine was 143 umol/L" and sentence[m.mention.start:m.mention.end] == m.mention.text


@pytest.mark.parametrize("sentence, readings", [
    ("Bloods 03/12/2026: Hb 98 g/L, MCV 71 fL", [("Hb", "03/12/2026"), ("MCV", "03/12/2026")]),
    ("Recent labs (10/30/2026) - creatinine 1.6 mg/dL, K 5.4 mmol/L two weeks ago",
     [("creatinine", "10/30/2026"), ("K", "two weeks ago")]),
    ("On 02.11.2026 the TSH was 7.2 mIU/L", [("TSH", "02.11.2026")]),
    ("Labs pending: TSH 7.2 mIU/L", [("TSH", None)]),  # no date said first: none given
])
def test_a_date_said_before_the_results_goes_with_each_of_them(sentence, readings):
    assert [(r.test_name, r.when.text if r.when else None) for r in lab_values_in(sentence)] == readings
