"""Garbled OCR test names and units read against the analyte vocabulary: proposed only
when one analyte is close and no other is as close, never across a short abbreviation."""

from __future__ import annotations

import pytest

from domain.policy.facts.analytes import all_analytes, canonical_analyte, known_name
from domain.policy.facts.ocr_readings import edit_distance, lookalike_known_name, ocr_name_reading, ocr_unit_reading


def test_edit_distance_counts_insertions_deletions_and_substitutions():
    assert edit_distance("cholesterol", "cholesterol") == 0
    assert edit_distance("cholestorol", "cholesterol") == 1
    assert edit_distance("platlets", "platelets") == 1
    assert edit_distance("mye/dl", "mg/dl") == 2
    assert edit_distance("", "abc") == 3


@pytest.mark.parametrize("printed, reading, analyte_id", [
    # seen on faxed pages
    ("Cholestorol Total", "Cholesterol Total", "cholesterol_total"),
    ("Chofesterof Total", "Cholesterol Total", "cholesterol_total"),
    ("Triglycorides", "Triglycerides", "triglycerides"),
    ("'Triglycérides", "Triglycerides", "triglycerides"),
    ("Platolets", "Platelets", "platelets"),
    ("HDL. Cholesterol", "HDL Cholesterol", "hdl"),
    ("Hemoglobin Alc", "Hemoglobin A1c", "hba1c"),
    # written after the rule, not seen on any page
    ("Creatinlne", "Creatinine", "creatinine"),
    ("HEMOGLOBlN", "HEMOGLOBIN", "hemoglobin"),
    ("Potasium", "Potassium", "potassium"),
    ("Magnesum", "Magnesium", "magnesium"),
    ("Hematocrlt", "Hematocrit", "hematocrit"),
    ("oGFR", "EGFR", "egfr"),
    ("hdl-cholestorol", "hdl cholesterol", "hdl"),
])
def test_a_name_a_letter_or_two_from_one_test_is_read_as_it_in_the_printed_case(printed, reading, analyte_id):
    assert not known_name(printed)
    assert ocr_name_reading(printed) == reading
    assert canonical_analyte(reading) == analyte_id


@pytest.mark.parametrize("printed", [
    "LOL Cholesterol",   # LDL or HDL? a short abbreviation is never guessed
    "IDL Cholesterol",
    "ADL Choleonterol",
    "Hemoglobin Ale",    # "Ale" is not "A1c": two letters never stand for each other in a short word
    "Pot tse",
    "Glico",             # too far from "glucose"
    "Creatine",          # another substance: two letters shorter than "Creatinine" (tried after the rule)
    "Neutrophlls",       # percent or absolute count: as close to both
    "Patient weight",
    "Sodium",            # known as printed: nothing to propose
    "Cholesterol, Total",
])
def test_a_short_abbreviation_a_far_garble_or_a_known_name_is_never_read_as_another(printed):
    assert ocr_name_reading(printed) is None


def test_no_vocabulary_name_is_read_as_another():
    for a in all_analytes():
        for name in (a.display, *a.synonyms):
            assert ocr_name_reading(name) is None, name


def test_a_garble_halfway_between_two_tests_settles_nothing(monkeypatch):
    # Two made-up tests one letter apart ("ferritin", "ferrotin"): a reading one letter
    # from each is as close to both, so none is proposed; one nearer the first is read.
    from domain.policy.facts import ocr_readings

    monkeypatch.setattr(ocr_readings, "vocabulary_names", lambda: {"ferritin": ("a",), "ferrotin": ("b",)})
    ocr_readings._names_by_length.cache_clear()
    ocr_readings.ocr_name_reading.cache_clear()
    try:
        assert ocr_readings.ocr_name_reading("Ferratin") is None
        assert ocr_readings.ocr_name_reading("Ferritim") == "Ferritin"
    finally:
        ocr_readings._names_by_length.cache_clear()
        ocr_readings.ocr_name_reading.cache_clear()


def test_a_hyphenated_abbreviation_is_held_to_an_exact_match():
    # "HDL-Cholesterol" and "LDL-Cholesterol" are one letter apart as written: the
    # abbreviation is a short word of its own, never read as the other.
    assert ocr_name_reading("IDL-Cholesterol") is None
    assert ocr_name_reading("hs-Tnl") is None  # troponin I or T: never guessed


@pytest.mark.parametrize("printed, analyte_name, reading", [
    ("mye/dl", "Creatinine", "mg/dL"),
    ("migdl,", "LDL Cholesterol", "mg/dL"),
    ("x1016/uL", "RBC", "x10E6/uL"),
    ("mmoI/L", "Sodium", "mmol/L"),          # written after the rule
])
def test_a_garbled_unit_is_read_as_one_of_its_own_tests_units(printed, analyte_name, reading):
    assert ocr_unit_reading(printed, canonical_analyte(analyte_name)) == reading


@pytest.mark.parametrize("printed, analyte_name", [
    ("g/d.", "Hemoglobin"),   # g/dL or g/L: ten times apart, so never guessed
    ("mma", "Sodium"),        # too far
    ("mg/dL", "Glucose"),     # printed as the vocabulary writes it
    ("mg/dL.", "Creatinine"), # the same unit up to edge punctuation or case: kept as printed
    ("x10E3/UL", "WBC"),
    ("mye/dl", "Unknown test"),
    ("ml", "Creatinine"),     # two letters: mL or mg?
])
def test_a_unit_as_close_to_two_units_too_far_or_of_no_known_test_is_not_read(printed, analyte_name):
    assert ocr_unit_reading(printed, canonical_analyte(analyte_name)) is None


@pytest.mark.parametrize("printed", ["LOL Cholesterol", "ADL Cholesterol", "Sodlum", "TSN", "Ferritln"])
def test_a_name_one_letter_from_a_known_name_is_too_close_to_chart_as_printed(printed):
    # Not read as that test (a short word's letters carry the meaning), but not charted
    # as printed either: the extractor sends it to review with the near name.
    assert lookalike_known_name(printed) is not None


@pytest.mark.parametrize("printed, near", [
    ("Potassiuin", "Potassium"),     # a fax's "m" read as "in": two edits, one letter longer
    ("Magnesiurn", "Magnesium"),
    ("Bilirubln Totai", "Bilirubin Total"),
    ("LOL Cholesterol", "LDL Cholesterol"),
])
def test_a_name_two_edits_from_a_known_name_is_held_with_that_name_in_the_printed_case(printed, near):
    assert lookalike_known_name(printed) == near


@pytest.mark.parametrize("printed", [
    "Lactose",        # two edits from Lactate in seven letters: more than one per four
    "Creatine",       # two letters shorter than Creatinine: another substance
    "Immature Granulocytes",
])
def test_a_name_further_than_two_edits_or_with_another_length_is_not_held_for_its_spelling(printed):
    assert lookalike_known_name(printed) is None


@pytest.mark.parametrize("printed", ["LDL Cholesterol", "Glucose", "Vitamin B12", "Platelet Count", "Creatine",
                                     "Lipase Activity", "Zinc Protoporphyrin"])
def test_a_known_name_or_one_far_from_every_known_name_is_not_flagged(printed):
    assert lookalike_known_name(printed) is None


def test_one_edit_apart_agrees_with_the_edit_distance():
    """The one-pass test the label reader uses says exactly what edit_distance == 1 says."""
    import random

    from domain.policy.facts.ocr_readings import edit_distance, one_edit_apart

    rng = random.Random(7)
    for _ in range(20_000):
        a, b = ("".join(rng.choice("abc") for _ in range(rng.randint(0, 6))) for _ in range(2))
        assert one_edit_apart(a, b) == (edit_distance(a, b) == 1), (a, b)
    assert one_edit_apart("Descriptlon", "Description") and one_edit_apart("Roported", "Reported")
    assert not one_edit_apart("Reported", "Reported") and not one_edit_apart("Report", "Reported")


def test_speck_accents_names_the_accented_letters_of_a_name():
    from domain.policy.facts.ocr_readings import speck_accents

    assert speck_accents("Albutérol inhaler") == "é"
    assert speck_accents("Ácido acetilsalicílico") == "Áí"
    assert speck_accents("Albuterol") == "" and speck_accents("µg 5") == ""


def test_alike_letters_apart_allows_two_letters_a_fax_prints_alike_in_a_long_word():
    from domain.policy.facts.ocr_readings import alike_letters_apart

    assert alike_letters_apart("roforence", "reference") and alike_letters_apart("collectod", "collected")
    assert not alike_letters_apart("reference", "reference")  # the same word: nothing to read
    assert not alike_letters_apart("roforonco", "reference")  # three letters off
    assert not alike_letters_apart("rexerence", "reference")  # x is no lookalike of f
    assert not alike_letters_apart("rosult", "result")  # under eight letters: one edit only, elsewhere
