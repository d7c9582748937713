"""Frequencies, routes and doses read as one value (issue 24, defect 3): "BID" and
"twice a day" are one frequency, so two documents that write them differently agree."""

from __future__ import annotations

import re

import pytest

from domain.policy.facts import medication_schedule as schedule
from domain.policy.facts.fingerprints import clinical_content_fingerprint, clinical_key


@pytest.mark.parametrize("written, canonical", [
    ("BID", "twice daily"), ("b.i.d.", "twice daily"), ("twice a day", "twice daily"), ("Q12H", "twice daily"),
    ("every 12 hours", "twice daily"), ("bd", "twice daily"), ("2x daily", "twice daily"),
    ("TDS", "three times daily"), ("t.i.d", "three times daily"), ("q8h", "three times daily"),
    ("QDS", "four times daily"), ("od", "once daily"), ("Daily", "once daily"), ("q24h", "once daily"),
    ("nocte", "at night"), ("qhs", "at night"), ("at bedtime", "at night"), ("PRN", "as needed"),
    ("when required", "as needed"), ("weekly", "once weekly"), ("alternate days", "every other day"),
])
def test_frequency_wordings_read_as_one_value(written, canonical):
    assert schedule.frequency(written) == canonical


@pytest.mark.parametrize("written, canonical", [
    ("PO", "oral"), ("p.o.", "oral"), ("by mouth", "oral"), ("orally", "oral"), ("IV", "intravenous"),
    ("subcut", "subcutaneous"), ("SC", "subcutaneous"), ("inhaled", "inhalation"), ("SL", "sublingual"),
])
def test_route_wordings_read_as_one_value(written, canonical):
    assert schedule.route(written) == canonical


@pytest.mark.parametrize("written, canonical", [
    ("1000 mg", "1000 mg"), ("1000mg", "1000 mg"), ("1 g", "1000 mg"), ("0.5 g", "500 mg"),
    ("100 micrograms", "100 mcg"), ("100 µg", "100 mcg"), ("10 units", "10 units"), ("2 puffs", None),
])
def test_doses_in_one_unit(written, canonical):
    assert schedule.dose(written) == canonical


def test_different_schedules_stay_different_and_unknown_wordings_are_compared_as_printed():
    assert schedule.frequency("in the morning") != schedule.frequency("daily")  # timing is a reviewer's call
    assert schedule.frequency("tid") != schedule.frequency("bid")
    assert schedule.frequency("with breakfast and tea") is None
    assert schedule.comparable("frequency", "with breakfast and tea") == "with breakfast and tea"
    assert schedule.comparable("name", "BID") == "BID"  # only the schedule fields are read


def _med(name, dose, frequency, route=None):
    return {"name": name, "dose": dose, "frequency": frequency, "route": route}


@pytest.mark.parametrize("first, second", [
    (_med("metformin", "1000 mg", "BID"), _med("Metformin", "1000 mg", "twice a day")),
    (_med("Lisinopril", "10mg", "od"), _med("lisinopril", "10 mg", "once daily", "by mouth")),
    (_med("Amoxicillin", "500 mg", "TDS", "PO"), _med("amoxicillin", "0.5 g", "every 8 hours", "oral")),
])
def test_the_same_medication_written_two_ways_is_one_clinical_content(first, second):
    assert clinical_key(7, "medication", first, "") == clinical_key(7, "medication", second, "")
    assert clinical_content_fingerprint(7, "medication", first, "") == \
        clinical_content_fingerprint(7, "medication", second, "")


@pytest.mark.parametrize("first, second", [
    (_med("metformin", "1000 mg", "BID"), _med("metformin", "500 mg", "twice a day")),
    (_med("metformin", "1000 mg", "BID"), _med("metformin", "1000 mg", "TID")),
    (_med("insulin glargine", "20 units", "at night"), _med("insulin glargine", "20 units", "in the morning")),
])
def test_a_real_difference_is_still_a_conflict(first, second):
    assert clinical_key(7, "medication", first, "") == clinical_key(7, "medication", second, "")
    assert clinical_content_fingerprint(7, "medication", first, "") != \
        clinical_content_fingerprint(7, "medication", second, "")


@pytest.mark.parametrize("line, found", [
    ("Metformin 500 mg b.i.d. with food", "b.i.d."), ("Atorvastatin 40 mg nocte", "nocte"),
    ("Salbutamol 2 puffs q4h prn", "q4h"), ("Apixaban 5 mg twice a day", "twice a day"),
])
def test_the_running_text_pattern_finds_the_vocabulary(line, found):
    assert schedule.running_text_pattern("frequencies").search(line).group(1) == found


def test_the_running_text_pattern_leaves_ordinary_words():
    pattern = schedule.running_text_pattern("frequencies")
    assert pattern.search("Keep on taking it, apply to the top of the foot") is None


@pytest.mark.parametrize("printed", ["500 mg", "0.5mg", "1 gm", "5/325 mg", "1-2 puffs", "1 or 2 tablets",
                                     "20 units", "10 mg/ml", "1%", "100 micrograms"])
def test_the_one_dose_pattern_reads_an_amount_as_printed(printed):
    assert re.fullmatch(schedule.dose_amount_pattern(), printed, re.I)


@pytest.mark.parametrize("printed", ["500", "mg", "5 mgs of", "2 tabletsx", "10 mmHg"])
def test_the_one_dose_pattern_reads_no_amount_without_its_unit(printed):
    assert not re.fullmatch(schedule.dose_amount_pattern(), printed, re.I)


def test_strengths_can_be_left_out_where_a_percent_is_a_result():
    assert not re.fullmatch(schedule.dose_amount_pattern(strengths=False), "7%", re.I)
    assert schedule.dose_unit_words() >= {"mg", "gm", "tablets", "puff"}
