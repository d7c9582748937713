"""Pure value helpers: dates, ranges, flags, medication/allergy/problem phrases."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from extract import values as V


@pytest.mark.parametrize(
    "text",
    ["January 31, 2020", "1-31-2020", "01/31/2020", "31/01/2020", "Jan 31, 2020", "2020-01-31", "1/31/2020",
     "31 Jan 2020", "31-Jan-2020", "20200131", "2020-01-31T10:15:00", "31.01.2020", "Jan. 31st, 2020"],
)
def test_the_same_day_written_many_ways(text):
    parsed = V.parse_date(text)
    assert parsed is not None and parsed.iso == "2020-01-31"
    assert parsed.precision == "day"
    assert not parsed.ambiguous


def test_date_objects_and_ambiguity():
    assert V.parse_date(datetime(2024, 3, 12, 9, 30)).iso == "2024-03-12"
    assert V.parse_date(date(1978, 3, 14)).iso == "1978-03-14"
    swapped = V.parse_date("03/04/2020")
    assert swapped.iso == "2020-03-04" and swapped.ambiguous  # US reading, flagged
    assert V.parse_date("04/04/2020").ambiguous is False  # same either way
    assert V.parse_date("1/2/20").ambiguous  # two-digit year


@pytest.mark.parametrize("text,precision", [("03/2024", "month"), ("March 2024", "month"), ("2024-03", "month"),
                                            ("2024", "year")])
def test_partial_dates_have_no_iso(text, precision):
    parsed = V.parse_date(text)
    assert parsed.iso is None and parsed.precision == precision


@pytest.mark.parametrize("text", ["02/30/2020", "13/13/2020", "Formatted YYYY-MM-DD", "", "0001-01-01", None, 42])
def test_non_dates(text):
    assert V.parse_date(text) is None


@pytest.mark.parametrize(
    "ts,expected",
    [("20080815", "2008-08-15"), ("200808151030-0700", "2008-08-15"), ("20080818183002.1-0700", "2008-08-18"),
     ("20201220182805+0000", "2020-12-20"), ("196203520", None), ("10131113", None), ("2008", None),
     ("DOB", None), ("", None)],
)
def test_hl7_timestamps_keep_the_printed_date(ts, expected):
    assert V.hl7_date(ts) == expected


@pytest.mark.parametrize(
    "text,low,high",
    [("70_105", 70, 105), ("4.3 to 6.2", 4.3, 6.2), ("0.0 - 5.6", 0.0, 5.6), ("28-217", 28, 217),
     ("150000 to 350000", 150000, 350000), ("<9 mcg/dL:  Acceptable background lead exposure", None, 9),
     (">1.0", 1.0, None), ("\u2264 5", None, 5)],
)
def test_ranges(text, low, high):
    r = V.parse_range(text)
    assert (r.low, r.high) == (low, high)


@pytest.mark.parametrize("text", ["^^10.000000", "Negative", "", "see comment"])
def test_unreadable_ranges(text):
    assert V.parse_range(text) is None


@pytest.mark.parametrize(
    "flags,expected",
    [(["H"], "high"), (["L"], "low"), (["HH"], "critical_high"), (["LL"], "critical_low"), (["N"], "normal"),
     (["A"], "abnormal"), (["H", "POS"], "high"), (["H", "L"], "abnormal"), ([], "unknown"), (["?"], "unknown"),
     (["R"], "abnormal"), (["S"], "normal"), (["high"], "high")],
)
def test_flags(flags, expected):
    assert V.combine_flags(flags) == expected


def test_derived_flags_and_disagreement():
    assert V.derive_flag("36", "<30") == "high"
    assert V.derive_flag("30", "<30") == "high"  # "<" excludes the limit
    assert V.derive_flag("5.9", "3.5-5.1") == "high"
    assert V.derive_flag("118", "120-150") == "low"
    assert V.derive_flag("139", "135-145") == "normal"
    assert V.derive_flag("Negative", "negative") == "normal"
    assert V.derive_flag("<0.5", "0-5") is None  # a comparator is never compared
    assert V.derive_flag("7.9", "") is None
    assert V.flags_disagree("normal", "high")
    assert not V.flags_disagree("critical_high", "high")
    assert not V.flags_disagree("abnormal", "high")


def test_numbers_and_units():
    assert V.parse_number("105,600") == 105600
    assert V.parse_number("<0.5") is None
    assert V.is_numeric_result(">= 32") and V.is_numeric_result("5.8") and not V.is_numeric_result("NOVALUE")
    assert V.split_value_unit("7.9 %") == ("7.9", "%")
    assert V.split_value_unit("182 mg/dL") == ("182", "mg/dL")
    assert V.split_value_unit("Detected") == ("Detected", "")


def test_unit_plausibility():
    assert "unusual" in V.implausible_unit("Hemoglobin A1C ", "mg/dL")
    assert V.implausible_unit("HbA1c", "%") is None
    assert V.implausible_unit("Glucose", "mg/dL") is None


def test_medication_phrases():
    assert V.parse_medication("Metformin 500 mg twice daily") == {
        "name": "Metformin", "dose": "500 mg", "frequency": "twice daily", "route": None}
    assert V.parse_medication("Salbutamol inhaler 2 puffs PRN")["frequency"] == "PRN"
    assert V.parse_medication("Ramipril 5 mg PO once daily")["route"] == "PO"
    assert V.parse_medication("Aspirin") == {"name": "Aspirin", "dose": None, "frequency": None, "route": None}


def test_allergy_phrases():
    assert V.parse_allergy("Penicillin (rash)")["reaction"] == "rash"
    assert V.parse_allergy("Codeine - nausea, moderate")["severity"] == "moderate"
    assert V.parse_allergy("Peanut: anaphylaxis")["severity"] == "severe"
    assert V.parse_allergy("NKDA")["no_known_allergies"] is True
    assert V.parse_allergy("No known drug allergies")["no_known_allergies"] is True


def test_problem_phrases_and_items():
    assert V.parse_problem("Hypertension (I10)") == {"code": "I10", "description": "Hypertension",
                                                     "coding_system": "ICD-10"}
    assert V.parse_problem("Asthma")["code"] is None
    assert V.split_items("Penicillin (rash, hives); ? sulfa") == ["Penicillin (rash, hives)", "? sulfa"]
    assert V.split_items("- Metformin 500 mg\n- Lisinopril 10 mg") == ["Metformin 500 mg", "Lisinopril 10 mg"]
    assert V.split_items("a, b", commas=False) == ["a, b"]


def test_uncertainty_and_confidence():
    assert V.uncertainty_cue("? sulfa") == "?"
    assert V.uncertainty_cue("possible latex allergy") == "possible"
    assert V.uncertainty_cue("Penicillin") is None
    assert V.confidence(0.95, [0.5, 0.5]) == 0.24
    assert V.confidence(2.0, []) == 0.99 and V.confidence(0.0, []) == 0.05
    assert V.contains_normalized("a  b\n c", "b c") and not V.contains_normalized("abc", "  ")
