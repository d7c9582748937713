"""One test per parsing rule in extract.text_rules."""

from __future__ import annotations

from datetime import date

import pytest

from extract import text_rules as tr

TODAY = date(2026, 11, 29)


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
    assert tr.parse_date(text, today=TODAY) == iso


@pytest.mark.parametrize("text", [
    "03/2024",  # no day
    "2024",
    "02/30/2026",  # no such day
    "13/01/2026",  # no month 13
    "July 2026",
    "Collected: 04/10/2026",  # a label is not part of a date
    "65-99",
    "",
])
def test_parse_date_rejects_incomplete_or_invalid(text):
    assert tr.parse_date(text, today=TODAY) is None


def test_find_date_locates_date_inside_text():
    m = tr.find_date("Specimen collected: Jul 22 2026 0815", today=TODAY)
    assert m is not None and m.iso == "2026-07-22"
    assert "Specimen collected: Jul 22 2026 0815"[m.start:m.end] == "Jul 22 2026"


def test_two_digit_year_pivots_on_today():
    assert tr.parse_date("1/5/27", today=date(2026, 1, 1)) == "2027-01-05"
    assert tr.parse_date("1/5/28", today=date(2026, 1, 1)) == "1928-01-05"


@pytest.mark.parametrize("text, first, middle, last", [
    ("QUENNEVILLE, MARISOL T", "MARISOL", "T", "QUENNEVILLE"),
    ("Doe-Smith, Jane A.", "Jane", "A", "Doe-Smith"),
    ("Jane A. Doe-Smith", "Jane", "A", "Doe-Smith"),
    ("Tobias Ferreira-Lund", "Tobias", "", "Ferreira-Lund"),
    ("Mary O'Brien", "Mary", "", "O'Brien"),
    ("Dr. Ana Ruiz", "Ana", "", "Ruiz"),
])
def test_parse_person_name(text, first, middle, last):
    name = tr.parse_person_name(text)
    assert name == tr.PersonName(first=first, last=last, middle=middle)


@pytest.mark.parametrize("text", ["Jane", "DOB 01/02/1960", "", "12345", "Smith,"])
def test_parse_person_name_rejects_non_names(text):
    assert tr.parse_person_name(text) is None


def test_person_name_display_fixes_all_caps():
    assert tr.parse_person_name("OYELARAN-VOSS, KASIMIR").display == "Kasimir Oyelaran-Voss"


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
])
def test_parse_reference_range(text, expected):
    assert tr.parse_reference_range(text) == expected


@pytest.mark.parametrize("text", ["hello", "100 apples", "", "See note", "65-"])
def test_parse_reference_range_rejects(text):
    assert tr.parse_reference_range(text) is None


@pytest.mark.parametrize("text, expected", [
    ("7.9 H", ("7.9", "H")),
    ("11.8H", ("11.8", "H")),
    ("6.8 HH", ("6.8", "HH")),
    ("38L", ("38", "L")),
    ("7.9 High", ("7.9", "High")),
    ("<0.5", ("<0.5", None)),
    (">60", (">60", None)),
    ("1,234", ("1,234", None)),
    ("1:40", ("1:40", None)),
    ("Negative", ("Negative", None)),
    ("POS", ("POS", None)),
    ("Not detected", ("Not detected", None)),
    ("Positive A", ("Positive", "A")),
])
def test_split_value_flag(text, expected):
    assert tr.split_value_flag(text) == expected


@pytest.mark.parametrize("text", ["abc", "Page 1", "04/10/2026", "", "mg/dL"])
def test_split_value_flag_rejects_non_values(text):
    assert tr.split_value_flag(text) is None


@pytest.mark.parametrize("text, flag", [
    ("H", "high"), ("High", "high"), ("HIGH", "high"),
    ("L", "low"), ("Low", "low"),
    ("HH", "critical_high"), ("LL", "critical_low"),
    ("critical high", "critical_high"), ("Critical Low", "critical_low"),
    ("A", "abnormal"), ("ABN", "abnormal"), ("abnormal", "abnormal"), ("*", "abnormal"),
    ("N", "normal"), ("normal", "normal"),
])
def test_parse_flag_vocabulary(text, flag):
    assert tr.parse_flag(text) == flag


def test_bare_critical_takes_direction_from_value_and_range():
    assert tr.parse_flag("critical", "6.8", "3.5-5.2") == "critical_high"
    assert tr.parse_flag("Critical", "2.1", "3.5-5.2") == "critical_low"
    assert tr.parse_flag("critical") == "abnormal"


@pytest.mark.parametrize("text", ["", "Final", "mg/dL", "x"])
def test_parse_flag_rejects_non_flags(text):
    assert tr.parse_flag(text) is None


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
    assert tr.derive_flag(value, rng) == flag


@pytest.mark.parametrize("value, rng", [("148", ""), ("Yellow", "Negative"), ("abc", "65-99"), ("7", "See note")])
def test_derive_flag_none_when_not_comparable(value, rng):
    assert tr.derive_flag(value, rng) is None


@pytest.mark.parametrize("token, is_unit", [
    ("mg/dL", True), ("%", True), ("x10E3/uL", True), ("10^3/uL", True), ("mL/min/1.73m2", True),
    ("fL", True), ("mmol/L", True), ("IU/L", True),
    ("H", False), ("Negative", False), ("Springfield", False), ("Suite", False), ("65-99", False),
])
def test_looks_like_unit(token, is_unit):
    assert tr.looks_like_unit(token) is is_unit


@pytest.mark.parametrize("text, expected", [
    ("xlOE3/uL", "x10E3/uL"),
    ("x1oE6/uL", "x10E6/uL"),
    ("x IOE3/uL", "x 10E3/uL"),  # an OCR split kept as read, its "10" repaired
    ("x10E3/uL", "x10E3/uL"),
    ("x1l0E3/uL", "x1l0E3/uL"),  # one letter too many: which one is noise? left as read
    ("%o", "%o"),
    ("mg/dL", "mg/dL"),
    ("lOE3/uL", "lOE3/uL"),  # without the "x" it is not a power-of-ten unit
])
def test_repair_ocr_unit_only_touches_the_ten_of_a_power_of_ten(text, expected):
    assert tr.repair_ocr_unit(text) == expected


@pytest.mark.parametrize("text, garbled", [
    ("1l.8", True), ("l3.1", True), ("1O5", True), ("142l", True),
    ("11.8", False), ("142L", False), ("79H", False),  # values, not garbled
    ("Alc", False), ("lO", False), ("200.", False), ("x1l0E3/uL", False),  # no digit, or not number-shaped
])
def test_garbled_number_spots_letters_in_a_number_without_reading_it(text, garbled):
    assert tr.garbled_number(text) is garbled
