"""One test per parsing rule in extract.values.text_rules."""

from __future__ import annotations

import pytest

from extract.values import text_rules as tr


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


@pytest.mark.parametrize("text, expected", [
    ("xlOE3/uL", "x10E3/uL"),
    ("x1oE6/uL", "x10E6/uL"),
    ("x IOE3/uL", "x 10E3/uL"),  # an OCR split kept as read, its "10" repaired
    ("x10E3/uL", "x10E3/uL"),
    ("x1l0E3/uL", "x10E3/uL"),  # a stroke too many: only "10" can stand there (sent to review, see below)
    ("x100E3/uL", "x100E3/uL"),  # printed digits are not OCR's doing: left as read
    ("%o", "%o"),
    ("mg/dL", "mg/dL"),
    ("lOE3/uL", "lOE3/uL"),  # without the "x" it is not a power-of-ten unit
    ("x10\u00b09/L", "x10^9/L"),  # a fax's caret read as a degree sign (a held-out lab's platelets)
    ("xlO\u00b09/L", "x10^9/L"),
    ("\u00b0C", "\u00b0C"),  # a degree sign where a degree belongs stays
])
def test_repair_ocr_unit_only_touches_the_ten_of_a_power_of_ten(text, expected):
    assert tr.repair_ocr_unit(text) == expected


@pytest.mark.parametrize("text, doubtful", [
    ("x1l0E3/uL", True), ("x1l0E6/uL", True), ("xI|0E9/L", True), ("x1OOE3/uL", True),  # a character dropped
    ("xlOE3/uL", False), ("x1oE6/uL", False), ("x10E3/uL", False), ("mg/dL", False), ("x100E3/uL", False),
])
def test_a_unit_repaired_by_dropping_a_character_says_so(text, doubtful):
    doubt = tr.ocr_unit_doubt(text)
    assert (doubt is not None) is doubtful
    if doubt:
        assert repr(text) in doubt and tr.repair_ocr_unit(text) in doubt


@pytest.mark.parametrize("text, garbled", [
    ("1l.8", True), ("l3.1", True), ("1O5", True), ("142l", True),
    ("11.8", False), ("142L", False), ("79H", False),  # values, not garbled
    ("Alc", False), ("lO", False), ("200.", False), ("x1l0E3/uL", False),  # no digit, or not number-shaped
])
def test_garbled_number_spots_letters_in_a_number_without_reading_it(text, garbled):
    assert tr.garbled_number(text) is garbled


@pytest.mark.parametrize("text, expected", [
    ("2.1AA", ("2.1", "AA")), ("7.1CRIT", ("7.1", "CRIT")), ("139N", ("139", "N")), ("6.9!!", ("6.9", "!!")), ("11.2*", ("11.2", "*")),
    ("6.8 CRIT", ("6.8", "CRIT")), ("Positive Abnormal", ("Positive", "Abnormal")), ("Abnormal", ("Abnormal", None)),
    ("6.1PANIC", ("6.1", "PANIC")), ("7,9L", ("7,9", "L")), ("7,9", ("7,9", None)),  # a decimal comma is a number
])
def test_every_inline_flag_of_the_value_rules_can_be_glued(text, expected):
    assert tr.split_value_flag(text) == expected


@pytest.mark.parametrize("text", ["7.9 POS", "139 S", "5 <"])
def test_field_only_codes_are_not_inline_flags(text):
    assert tr.split_value_flag(text) is None


@pytest.mark.parametrize("text", ["37.0C", "12.5V", "10h"])
def test_letters_that_are_not_glued_flags(text):
    assert tr.split_value_flag(text) is None
