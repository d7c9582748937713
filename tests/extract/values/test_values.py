"""The value rules (extract.values.numbers, extract.values.dates, extract.values.ranges, extract.values.flags): dates,
numbers, units, ranges, flags, wording; and the prose-list phrases. Every extractor reads printed values through these rules, so each rule
is tested once here; tests/extract/values/test_value_rules_across_formats.py checks the formats agree."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from domain.policy.facts.analytes import usual_units_problem
from extract.values import lists as P
from extract.values import text_rules as tr
from extract.values import numbers as V
from extract.values.dates import ParsedDate, find_date, hl7_date, parse_date
from extract.values.flags import FlagReading, derive_flag, flag_meaning, read_flag_key, resolve_flag
from extract.values.ranges import (
    CriticalLimits, labelled_critical_limits, parse_critical_limits, parse_range, parse_reference_range, range_problem,
    split_range_unit,
)

TODAY = date(2026, 11, 29)


@pytest.mark.parametrize(
    "text",
    ["January 31, 2020", "1-31-2020", "01/31/2020", "31/01/2020", "Jan 31, 2020", "2020-01-31", "1/31/2020",
     "31 Jan 2020", "31-Jan-2020", "20200131", "2020-01-31T10:15:00", "31.01.2020", "Jan. 31st, 2020"],
)
def test_the_same_day_written_many_ways(text):
    parsed = parse_date(text)
    assert parsed is not None and parsed.iso == "2020-01-31"
    assert parsed.precision == "day"
    assert not parsed.ambiguous


def test_date_objects_and_ambiguity():
    assert parse_date(datetime(2024, 3, 12, 9, 30)).iso == "2024-03-12"
    assert parse_date(date(1978, 3, 14)).iso == "1978-03-14"
    swapped = parse_date("03/04/2020")
    assert swapped.iso == "2020-03-04" and swapped.ambiguous  # US reading, flagged
    assert parse_date("04/04/2020").ambiguous is False  # same either way
    assert parse_date("1/2/20").ambiguous  # two-digit year


@pytest.mark.parametrize("text,precision", [("03/2024", "month"), ("March 2024", "month"), ("2024-03", "month"),
                                            ("2024", "year")])
def test_partial_dates_have_no_iso(text, precision):
    parsed = parse_date(text)
    assert parsed.iso is None and parsed.precision == precision


@pytest.mark.parametrize("text", ["02/30/2020", "13/13/2020", "Formatted YYYY-MM-DD", "", "0001-01-01", None, 42])
def test_non_dates(text):
    assert parse_date(text) is None


@pytest.mark.parametrize(
    "ts,expected",
    [("20080815", "2008-08-15"), ("200808151030-0700", "2008-08-15"), ("20080818183002.1-0700", "2008-08-18"),
     ("20201220182805+0000", "2020-12-20"), ("196203520", None), ("10131113", None), ("2008", None),
     ("DOB", None), ("", None)],
)
def test_hl7_timestamps_keep_the_printed_date(ts, expected):
    assert hl7_date(ts) == expected


@pytest.mark.parametrize(
    "text,low,high",
    [("70_105", 70, 105), ("4.3 to 6.2", 4.3, 6.2), ("0.0 - 5.6", 0.0, 5.6), ("28-217", 28, 217),
     ("150000 to 350000", 150000, 350000), ("<9 mcg/dL:  Acceptable background lead exposure", None, 9),
     (">1.0", 1.0, None), ("\u2264 5", None, 5)],
)
def test_ranges(text, low, high):
    r = parse_range(text)
    assert (r.low, r.high) == (low, high)


@pytest.mark.parametrize("text", ["^^10.000000", "Negative", "", "see comment"])
def test_unreadable_ranges(text):
    assert parse_range(text) is None


@pytest.mark.parametrize(
    "flags,expected",
    [(["H"], "high"), (["L"], "low"), (["HH"], "critical_high"), (["LL"], "critical_low"), (["N"], "normal"),
     (["A"], "abnormal"), (["H", "POS"], "high"), (["H", "L"], "abnormal"), ([], "unknown"), (["?"], "unknown"),
     (["R"], "abnormal"), (["S"], "normal"), (["high"], "high")],
)
def test_flags(flags, expected):
    assert resolve_flag(flags).flag == expected


def test_derived_flags_and_disagreement():
    assert derive_flag("36", "<30") == "high"
    assert derive_flag("30", "<30") == "high"  # "<" excludes the limit
    assert derive_flag("5.9", "3.5-5.1") == "high"
    assert derive_flag("118", "120-150") == "low"
    assert derive_flag("139", "135-145") == "normal"
    assert derive_flag("Negative", "negative") == "normal"
    # A result printed below a limit lies inside a range that starts at 0 (nothing is below
    # it): a cumulative CRP "<4" against "0-5" was "unknown" (UK renal report, written after).
    assert derive_flag("<0.5", "0-5") == "normal" and derive_flag("<4", "0-5") == "normal"
    assert derive_flag("<4", "0-3") is None  # 0 up to 4: on either side of 3
    assert derive_flag("<1", "-2-2") is None  # a range below 0: "<1" could be under -2
    assert derive_flag("<4", "1-5") is None  # could lie on either side of 1
    assert derive_flag("7.9", "") is None
    assert resolve_flag(["N"], "5.9", "3.5-5.1").disagreement
    assert resolve_flag(["HH"], "5.9", "3.5-5.1").disagreement is None
    assert resolve_flag(["A"], "5.9", "3.5-5.1").disagreement is None
    # "abnormal" ("A", or "*" by a page's key) printed on a value inside its range: a person looks
    # (an Australian report written after the rule starred its potassium 5.8 against 3.5-5.2).
    inside = resolve_flag(["A"], "4.4", "3.5-5.1")
    assert inside.flag == "abnormal" and "disagrees" in inside.disagreement
    assert resolve_flag(["A"], "Positive", "Negative").disagreement is None


@pytest.mark.parametrize("text,meant", [
    ("haemolysed", True), ("Sample hemolyzed.", True), ("insufficient sample", True), ("QNS", True),
    ("not done", True), ("Test not performed", True), ("cancelled", True), ("to follow", True), ("pending", True),
    ("Not detected", False), ("Negative", False), ("5.9", False), ("haemolysed 5.9", False), ("see comment", False),
])
def test_a_cell_that_says_no_result_was_given(text, meant):
    assert V.not_resulted(text) is meant


def test_numbers_and_units():
    assert V.parse_number("105,600") == 105600
    assert V.parse_number("1,250") == 1250  # three digits after a comma: always thousands
    assert V.parse_number("7,9") == 7.9 and V.parse_number("12,05") == 12.05  # a decimal comma
    assert V.parse_number("7,9,1") is None
    assert V.parse_number("<0.5") is None
    assert V.is_numeric_result(">= 32") and V.is_numeric_result("5.8") and not V.is_numeric_result("NOVALUE")
    assert V.split_value_unit("7.9 %") == ("7.9", "%")
    assert V.split_value_unit("182 mg/dL") == ("182", "mg/dL")
    assert V.split_value_unit("Detected") == ("Detected", "")


def test_unit_plausibility():
    assert "unusual" in usual_units_problem("Hemoglobin A1C", "mg/dL")
    assert usual_units_problem("HbA1c", "%") is None
    assert usual_units_problem("Glucose", "mg/dL") is None


def test_medication_phrases():
    assert P.parse_medication("Metformin 500 mg twice daily") == {
        "name": "Metformin", "dose": "500 mg", "frequency": "twice daily", "route": None}
    assert P.parse_medication("Salbutamol inhaler 2 puffs PRN")["frequency"] == "PRN"
    assert P.parse_medication("Ramipril 5 mg PO once daily")["route"] == "PO"
    assert P.parse_medication("Aspirin") == {"name": "Aspirin", "dose": None, "frequency": None, "route": None}


def test_allergy_phrases():
    assert P.parse_allergy("Penicillin (rash)")["reaction"] == "rash"
    assert P.parse_allergy("Codeine - nausea, moderate")["severity"] == "moderate"
    assert P.parse_allergy("Peanut: anaphylaxis")["severity"] == "severe"
    assert P.parse_allergy("NKDA")["no_known_allergies"] is True
    assert P.parse_allergy("No known drug allergies")["no_known_allergies"] is True


def test_problem_phrases_and_items():
    assert P.parse_problem("Hypertension (I10)") == {"code": "I10", "description": "Hypertension",
                                                     "coding_system": "ICD-10"}
    assert P.parse_problem("Asthma")["code"] is None
    assert P.split_items("Penicillin (rash, hives); ? sulfa") == ["Penicillin (rash, hives)", "? sulfa"]
    assert P.split_items("- Metformin 500 mg\n- Lisinopril 10 mg") == ["Metformin 500 mg", "Lisinopril 10 mg"]
    assert P.split_items("a, b", commas=False) == ["a, b"]


@pytest.mark.parametrize("written, items", [
    # A piece that only says how bad, how settled, which side or since when stays with its item
    ("Asthma, mild; Hypertension", ["Asthma, mild", "Hypertension"]),
    ("Type 2 diabetes, diet controlled, gout", ["Type 2 diabetes, diet controlled", "gout"]),
    ("Knee pain, left, reflux", ["Knee pain, left", "reflux"]),
    ("Diabetes, diagnosed 2015, asthma", ["Diabetes, diagnosed 2015", "asthma"]),
    ("Stroke, 3 years ago", ["Stroke, 3 years ago"]),
    ("Atrial fibrillation, on warfarin; Back pain, lower", ["Atrial fibrillation, on warfarin", "Back pain, lower"]),
    ("Hypothyroidism, osteoarthritis, both knees", ["Hypothyroidism", "osteoarthritis, both knees"]),
    ("Kidney stones, x2, 2018, migraines, occasional", ["Kidney stones, x2, 2018", "migraines, occasional"]),
    # where a condition is: a discharge summary's diagnosis (written after the rule)
    ("Community-acquired pneumonia, right lower lobe", ["Community-acquired pneumonia, right lower lobe"]),
    ("Cellulitis, left lower leg; gout", ["Cellulitis, left lower leg", "gout"]),
    # ... and a piece that names something is an item of its own
    ("asthma, eczema, hay fever", ["asthma", "eczema", "hay fever"]),
    ("Left knee, right hip", ["Left knee", "right hip"]),  # sites listed, not a condition's site
    ("Osteoarthritis: left knee, right hip", ["Osteoarthritis: left knee", "right hip"]),
    ("Depression, post-traumatic stress disorder", ["Depression", "post-traumatic stress disorder"]),
    ("Anxiety, in situ carcinoma of cervix", ["Anxiety", "in situ carcinoma of cervix"]),
])
def test_a_qualifier_after_a_comma_stays_with_its_item(written, items):
    assert P.split_items(written) == items
    assert all(item in written for item in items)  # substrings, so a quote still verifies


@pytest.mark.parametrize("written, dose", [
    ("Ceftriaxone 1 gm IV daily", "1 gm"),  # "gm" was not a unit: the dose stayed in the name
    ("Prednisone 10 mg and 5 mg on alternate days", "10 mg and 5 mg"),  # the 5 mg was dropped unsaid
    ("Prednisone 10 mg alternating with 5 mg", "10 mg alternating with 5 mg"),
    ("Paracetamol 1 or 2 tablets four times daily", "1 or 2 tablets"),
    ("Salbutamol 1-2 puffs as needed", "1-2 puffs"),
    ("Oxycodone 5 to 10 mg every 4 hours", "5 to 10 mg"),
    ("Co-codamol 30/500 mg qds", "30/500 mg"),
    ("Hydrocortisone 1% cream", "1%"),
    ("Metformin 500 mg twice daily for 10 days", "500 mg"),
])
def test_a_dose_is_read_whole_as_printed(written, dose):
    med = P.parse_medication(written)
    assert med["dose"] == dose
    assert dose not in med["name"]


def test_a_severity_after_a_comma_is_the_allergy_s_severity_not_its_substance():
    assert P.parse_allergy("Latex, severe") == {"substance": "Latex", "reaction": None, "severity": "severe",
                                                     "no_known_allergies": False}
    # a qualifier that is no severity stays where it was written: nothing else would hold it
    assert P.parse_allergy("Peanuts, suspected")["substance"] == "Peanuts, suspected"




def test_confidence():
    assert V.confidence(0.95, [0.5, 0.5]) == 0.24
    assert V.confidence(2.0, []) == 0.99 and V.confidence(0.0, []) == 0.05
    assert V.contains_normalized("a  b\n c", "b c") and not V.contains_normalized("abc", "  ")


# ---------------------------------------------------------------------------- rules first written for pages


@pytest.mark.parametrize("text, iso", [
    ("2026-04-10", "2026-04-10"),
    ("2026/04/10", "2026-04-10"),
    ("4/10/2026", "2026-04-10"),
    ("04/10/2026", "2026-04-10"),
    ("04-10-2026", "2026-04-10"),
    ("7/22/58", "1958-07-22"),
    ("4/10/26", "2026-04-10"),
    ("22 July 1958", "1958-07-22"),
    ("July 22, 1958", "1958-07-22"),
    ("Jul 22 1958", "1958-07-22"),
    ("Jul. 22, 1958", "1958-07-22"),
    ("22-Jul-1958", "1958-07-22"),
    ("22-JUL-1958", "1958-07-22"),
    ("Sept 3, 2020", "2020-09-03"),
    ("March 1st, 2024", "2024-03-01"),
    ("04/10/2026 08:15", "2026-04-10"),
    ("04/10/2026 8:15 AM", "2026-04-10"),
])
def test_parse_date_formats(text, iso):
    assert parse_date(text, today=TODAY).iso == iso


@pytest.mark.parametrize("text", [
    "03/2024",  # no day
    "2024",
    "02/30/2026",  # no such day
    "13/13/2026",  # no month 13 either way round
    "July 2026",
    "Collected: 04/10/2026",  # a label is not part of a date
    "65-99",
    "",
])
def test_parse_date_rejects_incomplete_or_invalid(text):
    parsed = parse_date(text, today=TODAY)
    assert parsed is None or parsed.iso is None


def test_find_date_locates_date_inside_text():
    m = find_date("Specimen collected: Jul 22 2026 0815", today=TODAY)
    assert m is not None and m.iso == "2026-07-22"
    assert "Specimen collected: Jul 22 2026 0815"[m.start:m.end] == "Jul 22 2026"


def test_two_digit_year_pivots_on_today():
    assert parse_date("1/5/27", today=date(2026, 1, 1)).iso == "2027-01-05"
    assert parse_date("1/5/28", today=date(2026, 1, 1)).iso == "1928-01-05"



@pytest.mark.parametrize("text, expected", [
    ("65-99", ("65-99", "")),
    ("3.4 - 10.8", ("3.4 - 10.8", "")),
    ("<5.7", ("<5.7", "")),
    (">=60", (">=60", "")),
    ("> 60", ("> 60", "")),
    ("65-99 mg/dL", ("65-99", "mg/dL")),
    ("3.5-5.2 mmol/L", ("3.5-5.2", "mmol/L")),
    (">59 mL/min/1.73m2", (">59", "mL/min/1.73m2")),
    ("(3.4-10.8)", ("3.4-10.8", "")),
    ("Ref: <100", ("<100", "")),
    ("0.5 to 1.2", ("0.5 to 1.2", "")),
    ("Negative", ("Negative", "")),
    # How some US labs print ">=" and "<=", and a percentage said to be of a total.
    ("> OR = 60 mL/min/1.73m2", (">=60", "mL/min/1.73m2")),
    ("< or = 5.6", ("<=5.6", "")),
    ("<5.7 % of total Hgb", ("<5.7", "%")),
])
def test_parse_reference_range(text, expected):
    assert parse_reference_range(text) == expected


@pytest.mark.parametrize("text", ["hello", "100 apples", "", "See note", "65-"])
def test_parse_reference_range_rejects(text):
    assert parse_reference_range(text) is None


def test_a_spelled_comparator_bounds_the_range():
    assert parse_range("> OR = 60") == parse_range(">=60")
    assert parse_range("< OR = 5.6 mmol/L") == parse_range("<=5.6")


@pytest.mark.parametrize("text, flag", [
    ("H", "high"), ("High", "high"), ("HIGH", "high"),
    ("L", "low"), ("Low", "low"),
    ("HH", "critical_high"), ("LL", "critical_low"),
    ("critical high", "critical_high"), ("Critical Low", "critical_low"),
    ("A", "abnormal"), ("ABN", "abnormal"), ("abnormal", "abnormal"), ("*", "abnormal"),
    ("N", "normal"), ("normal", "normal"),
])
def test_flag_vocabulary(text, flag):
    assert flag_meaning(text) == flag
    assert flag_meaning(text, in_text=True) == flag  # all of these are flags beside a value too
    assert resolve_flag([text]) == FlagReading(flag, False)


def test_bare_critical_takes_direction_from_value_and_range():
    assert resolve_flag(["critical"], "6.8", "3.5-5.2").flag == "critical_high"
    assert resolve_flag(["Critical"], "2.1", "3.5-5.2").flag == "critical_low"
    # No direction to be had: still critical (fail closed), never "abnormal".
    assert resolve_flag(["critical"]).flag == "critical_high"


@pytest.mark.parametrize("text", ["", "Final", "mg/dL", "x"])
def test_flag_meaning_rejects_non_flags(text):
    assert flag_meaning(text) is None


@pytest.mark.parametrize("value, rng, flag", [
    ("148", "<100", "high"),
    ("99", "65-99", "normal"),
    ("65", "65-99", "normal"),
    ("64.9", "65-99", "low"),
    ("100", "<100", "high"),  # "<100" excludes 100
    ("100", "<=100", "normal"),
    ("60", ">=60", "normal"),
    ("60", ">60", "low"),
    ("38", ">39", "low"),
    (">60", ">59", "normal"),
    ("<0.5", "<1.0", "normal"),
    ("3.4", "3.4 - 10.8", "normal"),
    ("Positive", "Negative", "abnormal"),
    ("Negative", "Negative", "normal"),
    ("Not detected", "Not detected", "normal"),
])
def test_derive_flag(value, rng, flag):
    assert derive_flag(value, rng) == flag


@pytest.mark.parametrize("value, rng", [("148", ""), ("Yellow", "Negative"), ("abc", "65-99"), ("7", "See note")])
def test_derive_flag_none_when_not_comparable(value, rng):
    assert derive_flag(value, rng) is None


@pytest.mark.parametrize("token, is_unit", [
    ("mg/dL", True), ("%", True), ("x10E3/uL", True), ("10^3/uL", True), ("mL/min/1.73m2", True),
    ("fL", True), ("mmol/L", True), ("IU/L", True),
    ("H", False), ("Negative", False), ("Springfield", False), ("Suite", False), ("65-99", False),
    # Counts per microscope field or volume open with the slash.
    ("/hpf", True), ("/HPF", True), ("/LPF", True), ("/uL", True),
    ("/2", False), ("/S", False), ("/", False),
])
def test_looks_like_unit(token, is_unit):
    assert V.looks_like_unit(token) is is_unit


# ---------------------------------------------------------------------------- merged rules (one answer per question)


def test_one_date_rule_for_every_format():
    # Day-first only when it is the one possible reading; month-first otherwise, marked ambiguous.
    assert parse_date("13/01/2026", today=TODAY) == ParsedDate("2026-01-13", "day", False)
    assert parse_date("04/10/2026", today=TODAY) == ParsedDate("2026-04-10", "day", True)
    # Two-digit years pivot on today, not on a fixed year.
    assert parse_date("7/22/58", today=TODAY).iso == "1958-07-22"
    assert parse_date("4/10/26", today=TODAY).iso == "2026-04-10"
    # A trailing time of day is part of a date field; other words are not.
    assert parse_date("2024-03-12 09:05", today=TODAY).iso == "2024-03-12"
    assert parse_date("7/22/58 (age 67)", today=TODAY) is None
    assert parse_date("Jan 22 2024", today=TODAY).iso == "2024-01-22"  # a year is no time of day
    assert parse_date("DOB 7/22/58", today=TODAY) is None  # a label is not part of a date
    m = find_date("ref (3.4-10.8) collected 31.01.2020", today=TODAY)
    assert m.iso == "2020-01-31"  # a range is never read as a date


@pytest.mark.parametrize("value,rng,flag", [
    ("<0.01", "<0.04", "normal"), (">90", ">60", "normal"), ("<5", "15-150", "low"), (">500", "0-200", "high"),
    ("<10", "5-20", None),  # below 10 may be below 5 or not: not guessed
    ("<0.5", "0-5", "normal"),  # nothing lies below a range that starts at 0
    ("<1", "-2 to +2", None), (">=60", ">=60", "normal"), ("<=4", "<4", None), ("<4", "<=4", "normal"),
    ("-3", "-2 to +2", "low"), ("1,250", "150-1,000", "high"),
])
def test_comparator_values_are_compared_as_intervals(value, rng, flag):
    assert derive_flag(value, rng) == flag


@pytest.mark.parametrize("value,rng,flag", [
    ("Positive", "Negative", "abnormal"), ("Reactive", "Non-reactive", "abnormal"), ("Not detected", "Negative", "normal"),
    ("Negative", "Positive", "abnormal"), ("Abnormal", "Normal", "abnormal"), ("Abnormal", "", "abnormal"),
    ("Normal", "Normal", "normal"), ("Clear", "Clear", "normal"), ("Positive", "", None), ("Trace", "Negative", None),
])
def test_qualitative_results_compare_by_meaning(value, rng, flag):
    assert derive_flag(value, rng) == flag


@pytest.mark.parametrize("printed,value,rng,flag,assumed", [
    (["AA"], "2.1", "3.5-5.0", "critical_low", False),  # direction from the range
    (["AA"], "7.2", "3.5-5.0", "critical_high", False),
    (["AA"], "Positive", "Negative", "critical_high", True),  # no direction to be had: kept critical
    (["CRIT"], "38", "70-99", "critical_low", False),
    (["panic"], "38", "", "critical_high", True),
    (["!!"], "6.9", "3.5-5.0", "critical_high", False),
    (["AA", "L"], "4.0", "", "critical_low", False),  # a printed direction beside it
    (["HH", "LL"], "2.0", "3.5-5.0", "critical_low", False),  # contradictory: the value decides
    (["C"], "7.0", "3.5-5.0", "critical_high", False),  # "C" in a flag field
])
def test_critical_flags_are_never_downgraded(printed, value, rng, flag, assumed):
    reading = resolve_flag(printed, value, rng)
    assert (reading.flag, reading.direction_assumed, reading.derived) == (flag, assumed, False)
    assert any("without a direction" in r for r in reading.review_reasons()) is assumed


@pytest.mark.parametrize("printed,value,rng,flag", [
    ("Crit H", "6.9", "3.5-5.0", "critical_high"),  # a flag column that spells it in two words
    ("Crit L", "38", "70-99", "critical_low"),
    ("CRIT L", "3.6", "3.5-5.0", "critical_low"),  # the printed direction wins over the value
    ("H, POS", ">11.0", "<1.0", "high"),
    ("H*", "6.9", "3.5-5.0", "critical_high"),
    ("PANIC", "6.1", "8.6-10.3", "critical_low"),
])
def test_a_printed_flag_is_read_whole_then_word_by_word(printed, value, rng, flag):
    reading = resolve_flag([printed], value, rng)
    assert (reading.flag, reading.derived, reading.unrecognised) == (flag, False, ())


def test_a_printed_critical_direction_is_kept_and_a_contradicting_value_sent_to_review():
    reading = resolve_flag(["Crit L"], "6.9", "3.5-5.0")
    assert reading.flag == "critical_low" and "disagrees" in reading.disagreement
    both = resolve_flag(["HH", "LL"], "2.0", "3.5-5.0")
    assert both.flag == "critical_low" and "contradict" in both.disagreement  # the value decides, a person checks


def test_a_flag_word_not_understood_is_sent_to_review_never_dropped():
    reading = resolve_flag(["CRITICAL - called to ward"], "6.9", "3.5-5.0")
    assert reading.flag == "critical_high"  # the word that is understood still counts
    assert reading.unrecognised == ("called", "to", "ward")
    assert "'called to ward' is not one the rules know" in reading.review_reasons()[0]
    unknown = resolve_flag(["U"], "148", "<100")
    assert (unknown.flag, unknown.derived) == ("high", True) and unknown.review_reasons()


def test_critical_limits_raise_a_flag_and_are_read_in_their_usual_spellings():
    limits = parse_critical_limits("<2.5 or >6.5")
    assert (limits.low, limits.high) == (2.5, 6.5)
    assert parse_critical_limits("Critical: >30") == CriticalLimits(None, 30.0)
    assert parse_critical_limits("2.5 - 6.5") == CriticalLimits(2.5, 6.5)
    assert parse_critical_limits("see note") is None
    column = "<2.5 or >6.5"
    assert resolve_flag([], "1.9", "3.5-5.0", critical_column=column) == FlagReading(
        "critical_low", True, critical_range=column)
    assert resolve_flag(["H"], "6.9", "3.5-5.0", critical_column=column).flag == "critical_high"
    assert resolve_flag(["L"], "3.0", "3.5-5.0", critical_column=column).flag == "low"  # not past the limit
    assert resolve_flag([], "2.5", "3.5-5.0", critical_column=column).flag == "low"  # "<2.5" excludes 2.5
    upgraded = resolve_flag(["N"], "7.4", "3.5-5.0", critical_column=column)
    assert upgraded.flag == "critical_high" and "critical limits" in upgraded.disagreement
    # Labelled in the range or in a note when there is no column; the column wins.
    assert resolve_flag([], "1.9", "3.5-5.0 (critical <2.5 or >6.5)").flag == "critical_low"
    noted = resolve_flag([], "1.9", "3.5-5.0", notes=["Specimen hemolyzed", "Panic values: <2.5 or >6.5"])
    assert (noted.flag, noted.critical_range) == ("critical_low", "Panic values: <2.5 or >6.5")
    assert resolve_flag([], "1.9", "3.5-5.0 (critical <1.5)", critical_column=column).flag == "critical_low"
    printed, inline = labelled_critical_limits("3.5-5.0 (critical <2.5 or >6.5)")
    assert printed == "critical <2.5 or >6.5" and (inline.low, inline.high) == (2.5, 6.5)
    assert labelled_critical_limits("Critical values are phoned to the ordering clinician.") is None
    assert labelled_critical_limits("Critical value called to Dr Ames at 14:35 >2 h after draw") is None
    assert labelled_critical_limits("Panic values: <40 or >400 mg/dL")[0] == "Panic values: <40 or >400"
    assert parse_range("3.5-5.0 (critical <2.5 or >6.5)") == V.RangeBounds(3.5, 5.0)


def test_critical_limits_printed_but_unreadable_go_to_review():
    unread = resolve_flag(["H"], "6.9", "3.5-5.0", critical_column="see note 3")
    assert unread.flag == "high" and unread.critical_unread
    assert "could not be read" in unread.review_reasons()[0]
    for nothing in ("N/A", "-", ""):  # a column that states no limits
        reading = resolve_flag(["H"], "6.9", "3.5-5.0", critical_column=nothing)
        assert (reading.critical_range, reading.review_reasons()) == ("", [])


def test_resolve_flag_order_and_review_reasons():
    assert resolve_flag([], "148", "<100") == FlagReading("high", True)
    assert resolve_flag(["U"], "148", "<100") == FlagReading("high", True, unrecognised=("U",))
    assert resolve_flag([], "4.1", "3.4-10.8", in_range=False).flag == "abnormal"  # the column says so
    assert resolve_flag([], "11.8", "3.4-10.8", in_range=False) == FlagReading("high", True)
    assert resolve_flag([], "Yellow", "", in_range=True) == FlagReading("normal", False)
    assert resolve_flag([], "7", "") == FlagReading("unknown", False)
    disagree = resolve_flag(["N"], "6.4", "3.5-5.1")
    assert disagree.flag == "normal" and "disagrees" in disagree.review_reasons()[0]  # as printed, checked
    assert resolve_flag(["H", "POS"], ">11.0", "<1.0").disagreement is None


def test_flag_words_beside_a_value_are_a_narrower_set():
    for code in ("<", ">", "S", "R", "POS", "NEG", "C", "DET"):
        assert flag_meaning(code) is not None and flag_meaning(code, in_text=True) is None
        assert not tr.is_flag_word(code)
    for code in ("H", "HH", "AA", "CRIT", "!!", "*", "Abnormal", "critical low"):
        assert tr.is_flag_word(code)


@pytest.mark.parametrize("text", ["1+", "4+", "+", "+++", "Few", "rare", "Many", "None seen", "Dark yellow",
                                  "pale straw", "Colourless"])
def test_urine_grades_counts_and_shades_are_results_printed_as_words(text):
    assert V.is_qualitative(text)


@pytest.mark.parametrize("text", ["5+", "2", "+++++", "Red", "Red cell count", "dark", "few days"])
def test_what_is_no_urine_word(text):
    assert not V.is_qualitative(text)


@pytest.mark.parametrize("text", ["Immune", "Non-immune", "not immune"])
def test_an_immunity_screen_prints_its_result_as_a_word(text):
    # A held-out antenatal screen's "Rubella IgG | Immune" was dropped without a word.
    assert V.is_qualitative(text)


def test_units_and_qualitative_words():
    assert V.split_value_unit("<0.5 mg/L") == ("<0.5", "mg/L")
    assert V.split_value_unit("7.9 H") == ("7.9 H", "")  # a flag is not a unit
    assert V.is_qualitative("Abnormal") and V.is_qualitative("not detected") and not V.is_qualitative("7.9")
    assert V.value_bounds("<0.1") == V.RangeBounds(None, 0.1, high_inclusive=False)
    assert V.value_bounds("7.9") == V.RangeBounds(7.9, 7.9) and V.value_bounds("Positive") is None


def test_unit_plausibility_by_loinc_code():
    assert "unusual" in usual_units_problem("GHB", "mg/dL", loinc="4548-4")
    assert usual_units_problem("GHB", "mg/dL") is None  # an unknown name alone says nothing


@pytest.mark.parametrize("value,rng,flag", [
    ("7,9", "12,0-16,0", "low"), ("13,5", "12,0-16,0", "normal"), ("4,2", "<5,7", "normal"),
    ("7.9", "12.0-16.0", "low"), ("1,250", "150-1,000", "high"),
    ("1,250", "0,5-1,5", None),  # thousands or a decimal comma? not compared
    ("0,057", "0.00-0.10", None),  # 0.057 or 57? a thousands group after a zero is not compared
    ("4.6", "3.5-5,2", "normal"),  # one reading only (5,2 cannot be thousands): compared, and sent to review
])
def test_a_decimal_comma_is_read_where_it_cannot_be_a_thousands_separator(value, rng, flag):
    assert derive_flag(value, rng) == flag


def _lab_proposal(value: str, rng: str):
    from domain.models import BoundingBox, Citation, FactProposal

    return FactProposal(
        fact_type="lab_result", fact_text=f"Potassium {value} mmol/L {rng}",
        structured_value={"test_name": "Potassium", "value": value, "unit": "mmol/L", "reference_range": rng,
                          "collection_date": "2026-09-03", "abnormal_flag": derive_flag(value, rng) or "unknown"},
        citation=Citation(source_type="lab_pdf", source_id="documents:1", page_or_section="page 1",
                          field_or_chunk_id="results[0]", quote_or_value=f"Potassium {value}", page=1,
                          bounding_box=BoundingBox(x=0.1, y=0.2, width=0.3, height=0.02)),
        confidence=0.97)


@pytest.mark.parametrize("value,rng,doubt", [
    ("4.6", "3.5-5,2", "'5,2' has a comma where '4.6' has a decimal point"),  # the demo scan's misread
    ("5,2", "3.5-5.0", "'5,2' has a comma where '3.5' has a decimal point"),
    ("1,250", "0,5-1,5", "'0,5' has a decimal comma but '1,250' a thousands comma"),
    ("0,057", "<0,10", "'0,057' could be a decimal comma or a thousands separator"),
    ("4,6", "3,5-5,2", None),  # European throughout: one story
    ("1,200", "150-400", None),  # a thousands separator
    ("1,200", "1,000-1,500", None),
    ("12,500.5", "10,000.0-15,000.0", None),  # thousands with decimal points
    ("4.6", "3.5-5.2", None),
    ("4.6", "3.5-5.2 (critical <2.5 or >6.5)", None),
])
def test_a_result_whose_decimal_separator_is_in_doubt_goes_to_review(value, rng, doubt):
    from domain.models import Certainty
    from domain.policy.facts.certainty import classify, decimal_separator_doubt

    found = decimal_separator_doubt(value, rng)
    out = classify(_lab_proposal(value, rng), citation_verified=True, paged=True, ocr=True)
    if doubt is None:
        assert found is None and out.certainty is Certainty.VERIFIED, out.reason
    else:
        assert doubt in found.reason and out.certainty is Certainty.NEEDS_REVIEW
        assert out.reason.startswith("decimal separator in doubt") and "check the printed number" in out.reason


@pytest.mark.parametrize("rng,unit,expected", [
    ("3.5 - 5.0 mmol/L", "", ("3.5 - 5.0", "mmol/L")),  # the unit printed in the range cell
    ("3.5 - 5.0 mmol/L", "mmol/l", ("3.5 - 5.0", "mmol/l")),
    ("3.5 - 5.0 mmol/L", "mEq/L", ("3.5 - 5.0 mmol/L", "mEq/L")),  # another unit: kept as printed
    ("<10 ug/dL", "ug/dL", ("<10", "ug/dL")),
    ("3.5-5.0 (critical <2.5 or >6.5)", "mmol/L", ("3.5-5.0 (critical <2.5 or >6.5)", "mmol/L")),
    ("Negative", "", ("Negative", "")),
])
def test_a_unit_printed_inside_the_range(rng, unit, expected):
    assert split_range_unit(rng, unit) == expected


@pytest.mark.parametrize("cell,expected", [
    # critical limits printed in the range cell, before or after its unit: the unit is found
    ("3.5-5.0 (critical <2.5 or >6.5) mmol/L", ("3.5-5.0 (critical <2.5 or >6.5)", "mmol/L")),
    ("3.5-5.0 mmol/L (critical <2.5 or >6.5)", ("3.5-5.0 (critical <2.5 or >6.5)", "mmol/L")),
    ("135 - 145 (Panic: <120, >160) mEq/L", ("135 - 145 (Panic: <120, >160)", "mEq/L")),
    ("70-99 mg/dL [Critical values <40 or >400]", ("70-99 [Critical values <40 or >400]", "mg/dL")),
    ("(12.0-16.0 (crit <7.0) g/dL)", ("12.0-16.0 (crit <7.0)", "g/dL")),
    ("150-450 x10E3/uL; alert <50", ("150-450; alert <50", "x10E3/uL")),
    ("0.8-1.1 (critical >5.0)", ("0.8-1.1 (critical >5.0)", "")),
])
def test_a_range_cell_with_critical_limits_still_gives_its_unit(cell, expected):
    assert parse_reference_range(cell) == expected
    rng, unit = split_range_unit(cell, "")
    assert (rng, unit) == expected
    # the limits stay readable from the stored range
    assert labelled_critical_limits(rng) is not None


@pytest.mark.parametrize("cell", [
    "3.5-5.0 (critical see note) mmol/L",  # limits not readable: the cell is not a range we know
    "critical <2.5 or >6.5",  # limits without a range
    "Negative (critical >1)",
    "3.5-5.0 (critical <2.5) apples",  # not a unit
])
def test_a_range_cell_whose_note_cannot_be_read_is_not_parsed(cell):
    assert parse_reference_range(cell) is None


def test_critical_low_by_limits_printed_with_the_unit_in_the_range():
    rng, unit = split_range_unit("3.5-5.0 (critical <2.5 or >6.5) mmol/L", "")
    reading = resolve_flag([], "2.3", rng)
    assert (unit, reading.flag, reading.review_reasons()) == ("mmol/L", "critical_low", [])


@pytest.mark.parametrize("value,rng,printed", [
    ("6.8", "41.1-15.9", ["LL"]),  # OCR read 11.1 as 41.1
    ("4.1", "(10.8-3.4)", []),
    ("139", "145 - 135", ["N"]),
    ("0.9", "1.1 to 0.8", []),
    ("250", "450-150", ["L"]),
    ("4.1", "3.5-5.0 (critical <6.5 or >2.5)", []),  # critical limits the wrong way round
    ("4.1", "3.5-5.0 (critical <4.0)", []),  # a normal value would be critical
    ("120", "70-99 (panic >90)", []),
])
def test_a_range_that_cannot_be_right_is_never_taken_on_trust(value, rng, printed):
    reading = resolve_flag(printed, value, rng)
    reasons = reading.review_reasons()
    assert any("cannot be right" in r for r in reasons), reasons
    assert any(f < 1 for _, f in reading.doubts())


@pytest.mark.parametrize("value,rng", [
    ("6.8", "11.1-15.9"), ("1", "-2-2"), ("5", "5-5"), ("2.3", "3.5-5.0 (critical <2.5 or >6.5)"),
    ("148", "<100"), ("Negative", "Negative"), ("7", ""), ("135", "135-145 (critical <120)"),
])
def test_ordinary_ranges_raise_no_doubt(value, rng):
    assert range_problem(rng, parse_critical_limits(rng) if "critical" in rng else None) is None
    assert not [r for r in resolve_flag([], value, rng).review_reasons() if "cannot be right" in r]


# --------------------------------------------------------------------------- a page's flag key (issue 23)

@pytest.mark.parametrize("line, key", [
    ("\u25b2 high  \u25bc low  \u203c critical", {"\u25b2": "high", "\u25bc": "low", "!!": "critical"}),
    ("\u203c = critical", {"!!": "critical"}),
    ("Key: * abnormal", {"*": "abnormal"}),
    ("H High L Low HH critical high", {"H": "high", "L": "low", "HH": "critical_high"}),
    ("Flags: \u2191=Above range, \u2193=Below range", {"\u2191": "high", "\u2193": "low"}),
    ("* = critical value", {"*": "critical"}),
    # a key written as a sentence, as Australian reports print it
    ("* denotes result outside the reference range.", {"*": "abnormal"}),
    ("* indicates a value outside the reference interval", {"*": "abnormal"}),
    ("! means critical result", {"!": "critical"}),
    # a fax read "▲" as "a" and "▼" as "v": an article only in a key written as a sentence
    ("Key: !! critical a high v low", {"!!": "critical"}),
    # a minus sign defined by "=" is a sign of the key, not a separator (written after the rule)
    ("+ = above reference range, - = below reference range", {"+": "high", "-": "low"}),
])
def test_a_printed_flag_key_is_read_as_symbol_to_meaning(line, key):
    assert read_flag_key(line) == key


@pytest.mark.parametrize("line", [
    "A abnormal",  # one letter code alone: too common in prose to be a key
    "Potassium 6.6 high",
    "7.1 CRIT",  # a value and its flag, not a key
    "Comment: high values were repeated",
    "The result is high",
    "A denotes abnormal",  # a letter code needs a second pair, written as a sentence too
    "Key: - = not done",  # a dash for a test not done is no flag
    "",
])
def test_lines_that_are_not_flag_keys(line):
    assert read_flag_key(line) is None


def test_a_star_the_key_calls_out_of_range_makes_h_and_l_high_and_low_not_critical():
    """"Sodium 131 *L" on a report whose key says "* denotes result outside the reference
    range": a low sodium, not the critical one "*L" means where no key says otherwise."""
    key = read_flag_key("* denotes result outside the reference range.")
    assert [flag_meaning(f, key=key) for f in ("*L", "*H", "H*", "*", "L")] == ["low", "high", "high", "abnormal", "low"]
    assert [flag_meaning(f) for f in ("*L", "*H")] == ["critical_low", "critical_high"]
    assert flag_meaning("*H", key=read_flag_key("* = critical")) == "critical_high"
    assert resolve_flag(["*L"], "131", "135-145", key=key).flag == "low"
    assert not resolve_flag(["*L"], "131", "135-145", key=key).doubts()


@pytest.mark.parametrize("printed", ["*L", "L*", "*H", "H*"])
def test_a_star_beside_a_direction_without_a_key_stays_critical_and_goes_to_a_person(printed):
    """Written after the key rule: a report whose key is phrased another way ("Results
    outside the reference range are marked *", which no rule reads) or absent. Which
    the star means, critical or only outside the range, is not guessed either way."""
    assert read_flag_key("Results outside the reference range are marked *") is None
    reading = resolve_flag([printed], "131" if "L" in printed else "151", "135-145")
    assert reading.flag.startswith("critical_")
    assert any("prints no key saying which" in reason for reason in reading.review_reasons())


def test_a_key_overrides_the_default_vocabulary_and_an_unknown_sign_is_reported():
    key = read_flag_key("* = critical")
    assert resolve_flag(["*"], "6.1", "8.6-10.3").flag == "abnormal"
    assert resolve_flag(["*"], "6.1", "8.6-10.3", key=key).flag == "critical_low"
    unknown = resolve_flag(["\u25c6"], "151", "135-145")  # a diamond: no default meaning
    assert unknown.unrecognised == ("\u25c6",) and unknown.flag == "high" and unknown.derived
    assert resolve_flag(["\u25c6"], "151", "135-145", key=read_flag_key("\u25c6 high")).flag == "high"
    # Triangles pointing up or down say what arrows do.
    assert resolve_flag(["\u25bc"], "129", "135-145").flag == "low"


# --------------------------------------------------------------------------- range cells OCR lost a dash of

@pytest.mark.parametrize("printed, reading", [
    ("134144", "134-144"),       # the dash lost between two whole numbers
    ("3.410.8", "3.4-10.8"),     # ... between two decimals
    ("0.571.00", "0.57-1.00"),
    ("3.5.5.2", "3.5-5.2"),      # the dash read as a point
    ("6 24", "6-24"),            # the dash lost, the gap kept
    ("(0-149", "0-149"),         # half a bracket
    ("150450", "150-450"),       # written after the rule
    ("2.64.4", "2.6-4.4"),
    ("1.0051.030", "1.005-1.030"),
    ("6599 mg/dL", "65-99 mg/dL"),  # the unit printed in the cell stays
    ("3.55.2 mmol/L", "3.5-5.2 mmol/L"),
    ("377-5.28", "3.77-5.28"),      # a range that falls lost a decimal point
    ("1005-1.030", "1.005-1.030"),
    ("11115.9", "11.1-15.9"),       # a dash and a point lost: one reading only
    ("11115.9 g/dL", "11.1-15.9 g/dL"),
    ("150-4.50", "1.50-4.50"),     # written after the rule
    ("3.5-5 .2", "3.5-5.2"),       # a gap before the point
    ("<5 .7", "<5.7"),
    ("0=149", "0-149"),            # "=" for the dash
    ("3,5-5.2", "3.5-5.2"),        # a comma beside points
    ("3.77-5,28", "3.77-5.28"),
])
def test_an_ocr_range_cell_that_lost_its_dash_reads_one_way_only(printed, reading):
    from extract.values.ranges import repair_ocr_range

    assert repair_ocr_range(printed) == reading


@pytest.mark.parametrize("printed", [
    "65-99",       # already a range
    "0.5-10",      # rises: never "repaired" into 0.5-1.0
    "3.4-108",
    "<9", "100", "Negative", "4,.77-5,2%", "",
    "13 4144",     # ends of very different size
    "<6,7",        # a decimal comma alone may be printed so: not changed
    "3,5-5,2",
])
def test_an_ocr_range_cell_that_reads_no_single_way_is_left_unread(printed):
    from extract.values.ranges import repair_ocr_range

    assert repair_ocr_range(printed) is None
