"""Unit conversion as data: one analyte in two units is one quantity, converted both ways
with the factors chemistry gives, and refused (None) wherever the table cannot tell."""

from __future__ import annotations

import json

import pytest

from domain.policy.facts.analytes import all_analytes, analyte, normalize_unit
from domain.policy.facts.unit_conversion import (
    TABLE_PATH, convert, dimension, display_number, factor, read_number, same_quantity, table_version,
)


# (analyte, value, from unit, expected value, to unit): textbook SI conversions.
CONVERSIONS = [
    ("creatinine", 1.0, "mg/dL", 88.4, "umol/L"),
    ("creatinine", 1.0, "mg/dL", 0.0884, "mmol/L"),
    ("glucose", 100, "mg/dL", 5.55, "mmol/L"),
    ("glucose_fasting", 126, "mg/dL", 6.99, "mmol/L"),
    ("calcium", 10.0, "mg/dL", 2.495, "mmol/L"),
    ("magnesium", 2.0, "mEq/L", 1.0, "mmol/L"),
    ("magnesium", 1.0, "mmol/L", 2.43, "mg/dL"),
    ("phosphorus", 3.1, "mg/dL", 1.0, "mmol/L"),
    ("cholesterol_total", 200, "mg/dL", 5.17, "mmol/L"),
    ("ldl", 3.0, "mmol/L", 116.0, "mg/dL"),
    ("hdl", 40, "mg/dL", 1.03, "mmol/L"),
    ("triglycerides", 150, "mg/dL", 1.69, "mmol/L"),
    ("bun", 28.0, "mg/dL", 10.0, "mmol/L"),
    ("urea", 10.0, "mmol/L", 60.06, "mg/dL"),
    ("uric_acid", 6.0, "mg/dL", 357, "umol/L"),
    ("bilirubin_total", 1.0, "mg/dL", 17.1, "umol/L"),
    ("hemoglobin", 13.5, "g/dL", 135, "g/L"),
    ("hemoglobin", 10.0, "g/dL", 6.21, "mmol/L"),
    ("albumin", 4.0, "g/dL", 40, "g/L"),
    ("crp", 12, "mg/L", 1.2, "mg/dL"),
    ("wbc", 7.2, "x10^9/L", 7.2, "x10E3/uL"),
    ("wbc", 7.2, "K/uL", 7200, "/uL"),
    ("platelets", 150000, "/uL", 150, "x10^9/L"),
    ("rbc", 4.5, "x10E6/uL", 4.5, "x10^12/L"),
    ("hematocrit", 42, "%", 0.42, "L/L"),
    ("potassium", 5.1, "mEq/L", 5.1, "mmol/L"),
    ("sodium", 140, "mmol/L", 140, "mEq/L"),
    ("troponin_i", 0.05, "ng/mL", 50, "ng/L"),
    ("ferritin", 30, "ng/mL", 30, "ug/L"),
    ("tsh", 2.0, "uIU/mL", 2.0, "mIU/L"),
    ("free_t4", 1.2, "ng/dL", 15.4, "pmol/L"),
    ("vitamin_d_25oh", 30, "ng/mL", 74.9, "nmol/L"),
    ("vitamin_b12", 400, "pg/mL", 295, "pmol/L"),
    ("iron", 100, "ug/dL", 17.9, "umol/L"),
]


@pytest.mark.parametrize("analyte_id,value,unit,expected,target", CONVERSIONS)
def test_a_value_converts_both_ways(analyte_id, value, unit, expected, target):
    there = convert(value, analyte_id, unit, target)
    assert there == pytest.approx(expected, rel=0.01)
    assert convert(there, analyte_id, target, unit) == pytest.approx(value, rel=1e-9)


def test_spellings_of_one_unit_are_one_unit():
    """Case, micro signs and spaces do not count (normalize_unit), as in analytes.json."""
    assert factor("creatinine", "\u00b5mol/L", "umol/L") == 1.0
    assert factor("creatinine", "\u03bcmol/l", "mg/dL") == pytest.approx(1 / 88.4, rel=1e-3)
    assert factor("wbc", "x10 E3/uL", "x10^9/L") == 1.0
    assert factor("some_unknown_test", "widgets", "Widgets") == 1.0  # the same spelling is the same unit


@pytest.mark.parametrize("analyte_id,unit,target", [
    ("platelets", "G/L", "x10^9/L"),     # French giga per litre reads as grams once lower-cased: refused
    ("potassium", "mg/dL", "mmol/L"),    # potassium is never printed by mass: a misprint, not 1.8 mmol/L
    ("calcium", "mEq/L", "mmol/L"),      # not a unit the vocabulary lists for calcium
    ("hba1c", "%", "mmol/mol"),          # IFCC units are another analyte, and not a factor apart
    ("egfr", "mL/min", "mL/min/1.73m2"), # not normalised to body surface: another quantity
    ("creatinine", "furlongs", "mg/dL"), # unknown spelling
    (None, "mg/dL", "mmol/L"),           # no analyte, no chemistry
    ("glucose", "", "mg/dL"),            # no unit
])
def test_a_conversion_the_table_cannot_make_is_refused(analyte_id, unit, target):
    assert factor(analyte_id, unit, target) is None


def test_every_usual_unit_of_an_analyte_converts_to_its_others():
    """The usual units analytes.json lists for one analyte are all one quantity, unless
    the analyte is known to mix two (egfr with and without body-surface normalisation,
    uacr in mg/g and mg/mmol, a dipstick's empty unit); a unit that makes the result
    another analyte (HbA1c in mmol/mol) is that analyte's."""
    mixed = {"egfr", "uacr", "urine_protein", "urine_glucose", "urine_ketones"}
    for a in all_analytes():
        if a.id in mixed:
            continue
        units = [u for u in a.units if u and normalize_unit(u) not in a.unit_variants]
        for u in units:
            for v in units:
                assert factor(a.id, u, v) is not None, (a.id, u, v)


def test_the_table_is_versioned_and_cites_its_references():
    data = json.loads(TABLE_PATH.read_text())
    assert table_version() == data["version"]
    assert all(row["reference"] in data["references"] for row in data["analytes"])
    assert all(analyte(row["analyte"]) is not None for row in data["analytes"])
    assert dimension("mg/dL") == "mass" and dimension("mmol/L") == "substance" and dimension("parsecs") is None
    spellings = [normalize_unit(u) for u in data["units"]]
    assert len(spellings) == len(set(spellings))


@pytest.mark.parametrize("text,value,cmp,step", [
    ("6.9", 6.9, "", 0.1), ("6,9", 6.9, "", 0.1), ("1,200", 1200, "", 1), ("12,500.5", 12500.5, "", 0.1),
    ("<0.01", 0.01, "<", 0.01), ("> 10", 10, ">", 1), ("\u22655.0", 5.0, ">=", 0.1), ("-2", -2, "", 1),
])
def test_a_printed_number_is_read_with_its_rounding(text, value, cmp, step):
    n = read_number(text)
    assert n is not None and n.value == pytest.approx(value) and n.comparator == cmp and n.step == pytest.approx(step)


@pytest.mark.parametrize("text", ["0,057", "1.250,5", "Negative", "3.5-5.1", "", "6.9 H", "1,2,3"])
def test_what_is_not_one_plain_number_is_not_read(text):
    assert read_number(text) is None


def test_same_quantity_allows_only_the_rounding_of_what_was_printed():
    assert same_quantity("creatinine", "88", "umol/L", "1.0", "mg/dL") is True
    assert same_quantity("creatinine", "1.00", "mg/dL", "88", "\u00b5mol/L") is True
    assert same_quantity("creatinine", "88", "umol/L", "1.2", "mg/dL") is False
    assert same_quantity("glucose", "5.5", "mmol/L", "99", "mg/dL") is True
    assert same_quantity("glucose", "5.5", "mmol/L", "110", "mg/dL") is False
    assert same_quantity("potassium", "5.1", "mEq/L", "5.1", "mmol/L") is True
    assert same_quantity("creatinine", "<0.5", "mg/dL", "0.4", "mg/dL") is None  # a comparator tells no value
    assert same_quantity("platelets", "150", "G/L", "150", "x10^9/L") is None  # refused unit: cannot tell


def test_a_limit_is_the_same_as_the_same_limit_however_it_is_spaced():
    # a scan of a typed lab closed the gap in "< 3": the chart's bilirubin became a conflict with itself
    assert same_quantity("bilirubin", "<3", "umol/L", "< 3", "umol/L") is True
    assert same_quantity("egfr", "> 60", "mL/min/1.73m2", ">60", "mL/min/1.73m2") is True
    assert same_quantity("bilirubin", "<3", "umol/L", "<5", "umol/L") is False
    assert same_quantity("egfr", ">60", "mL/min/1.73m2", "<60", "mL/min/1.73m2") is None  # the other side
    assert same_quantity("bilirubin", "<3", "umol/L", "3", "umol/L") is None  # a limit beside a value


def test_a_converted_value_keeps_a_readable_precision():
    assert display_number(0.9955, like="1.4") == "0.996"
    assert display_number(88.4) == "88.4"
    assert display_number(5.5506, like="6.1") == "5.55"
    assert display_number(150.0, like="140") == "150"
