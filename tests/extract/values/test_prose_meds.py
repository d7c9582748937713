"""Medications told in sentences: names by stem or by the list of stemless drugs,
with the dose, route and frequency printed after each, in British and American
wording; a drug named without being taken, and an allergy's substance, are not
medications. Written after the rules."""

from __future__ import annotations

import pytest

from extract.values.prose_meds import medications_in


def told(sentence: str, exclude=()) -> list[tuple[str, str | None, str | None, str | None]]:
    return [(m.name.text, m.dose, m.route, m.frequency) for m in medications_in(sentence, exclude)]


@pytest.mark.parametrize("sentence, expected", [
    ("He takes rosuvastatin 10 mg at night and bisoprolol 2.5 mg once daily.",
     [("rosuvastatin", "10 mg", None, "at night"), ("bisoprolol", "2.5 mg", None, "once daily")]),
    ("She was commenced on sertraline 50 mg PO qam by her psychiatrist.",
     [("sertraline", "50 mg", "PO", "qam")]),
    ("Her regular medicines are digoxin 125 micrograms od, edoxaban 60 mg od and furosemide 40 mg bd.",
     [("digoxin", "125 micrograms", None, "od"), ("edoxaban", "60 mg", None, "od"),
      ("furosemide", "40 mg", None, "bd")]),
    ("He continues on insulin glargine 18 units subcutaneously at bedtime.",
     [("insulin glargine", "18 units", "subcutaneously", "at bedtime")]),
    ("She remains on alendronic acid 70 mg once weekly.", [("alendronic acid", "70 mg", None, "once weekly")]),
    ("He uses tiotropium 2.5 micrograms inhaled once a day.", [("tiotropium", "2.5 micrograms", "inhaled", "once a day")]),
    ("She takes Fosamax 70 mg every week.", [("Fosamax", "70 mg", None, "every week")]),
    ("He is on clopidogrel.", [("clopidogrel", None, None, None)]),
])
def test_medications_with_dose_route_and_frequency(sentence, expected):
    assert told(sentence) == expected


@pytest.mark.parametrize("sentence", [
    "Penicillin is the most likely culprit.",  # named, not taken, no dose
    "Her HbA1c was 64 mmol/mol in June.",
    "She lost 5 kg over the summer.",
    "The amlodipine question can wait until clinic.",
    # "on" cues a medicine, but a vital sign's name before its percentage is no drug
    "On examination her pulse was 92 and irregular, and saturations 96% on air.",
])
def test_sentences_that_tell_of_no_medication(sentence):
    assert told(sentence) == []


def test_an_allergy_substance_is_not_a_medication():
    sentence = "She takes ramipril 5 mg daily; amoxicillin caused a rash."
    at = sentence.index("amoxicillin")
    assert told(sentence, [(at, at + len("amoxicillin"))]) == [("ramipril", "5 mg", None, "daily")]


def test_the_mention_is_quoted_as_printed():
    sentence = "Metoprolol succinate 47.5 mg by mouth daily was continued."
    (m,) = medications_in(sentence)
    assert m.mention.text == "Metoprolol succinate 47.5 mg by mouth daily"
    assert sentence[m.mention.start:m.mention.end] == m.mention.text


def test_a_medicines_lists_label_cues_every_name_printed_before_a_dose():
    # The list's text without its "Current meds:" label, as the letter reader hands it over.
    listed = "Synthroid 100 mcg daily, Eliquis 5mg BID, metoprolol succinate 50mg daily, Vit D3 2000 IU qAM"
    assert [m.name.text for m in medications_in(listed)] == ["metoprolol succinate", "Vit D3"]  # known names only
    read = medications_in(listed, listed=True)
    assert [m.name.text for m in read] == ["Synthroid", "Eliquis", "metoprolol succinate", "Vit D3"]
    assert [(m.dose, m.frequency) for m in read][:2] == [("100 mcg", "daily"), ("5mg", "BID")]


@pytest.mark.parametrize("sentence, name", [
    ("She takes Vitamin D3 1000 IU daily", "Vitamin D3"),
    ("He is on vitamin b12 1000 mcg daily", "vitamin b12"),
    ("She takes vitamin a lot of the time", "vitamin"),  # "a" is an article, not vitamin A
])
def test_a_vitamin_keeps_its_letter(sentence, name):
    assert [m.name.text for m in medications_in(sentence)][:1] == [name]


# A letter's sentence that stops, starts or changes a medicine says so: a held-out
# cardiology letter's "stop amlodipine 5 mg (ankle swelling)" was read as amlodipine 5 mg
# with no status, so approving it charted a stopped medicine as taken. These wordings were
# written after the rule (domain/policy/facts/medication_status.status_in_sentence).
@pytest.mark.parametrize("sentence, expected", [
    ("On the ward we discontinued his nifedipine 20 mg twice daily because of oedema.",
     [("nifedipine", "20 mg", "discontinued")]),
    ("Please hold metformin 1 g bd until her eGFR is rechecked.", [("metformin", "1 g", "held")]),
    ("Sertraline 100 mg daily has been ceased.", [("Sertraline", "100 mg", "ceased")]),
    ("Her losartan was reduced from 100 mg to 50 mg daily.", [("losartan", "50 mg", "dose reduced")]),
    ("We commenced dapagliflozin 10 mg once daily and stopped gliclazide and sitagliptin.",
     [("dapagliflozin", "10 mg", "started"), ("gliclazide", None, "stopped"), ("sitagliptin", None, "stopped")]),
    ("He was changed over from ramipril 10 mg to candesartan 8 mg daily.",
     [("ramipril", "10 mg", "stopped"), ("candesartan", "8 mg", "started")]),
    ("She no longer takes aspirin 75 mg.", [("aspirin", "75 mg", "no longer taking")]),
    ("Do not stop edoxaban 60 mg daily before the endoscopy.", [("edoxaban", "60 mg", "not stop")]),
    ("He takes rosuvastatin 10 mg at night.", [("rosuvastatin", "10 mg", None)]),
])
def test_a_sentence_that_stops_starts_or_changes_a_medicine_gives_its_status(sentence, expected):
    assert [(m.name.text, m.dose, m.status) for m in medications_in(sentence)] == expected
