"""Critical limits by analyte: the table (versioned, cited, in units the conversion table
knows) and the rule: a value past a limit is critical whatever was printed, a printed
critical flag is kept inside the limits, and the basis says which of the two it was."""

from __future__ import annotations

import json

import pytest

from domain.models import Citation, FactProposal
from domain.policy.facts.analytes import analyte
from domain.policy.facts.critical_limits import (
    PRINTED_FLAG, TABLE_PATH, all_limits, apply_critical_limits, critical_basis_text, critical_limit,
    limit_crossed, table_version, with_critical_limits,
)
from domain.policy.facts.unit_conversion import factor

# The analytes the critical-value lists of nearly every laboratory name.
REQUIRED = {"potassium", "sodium", "glucose", "calcium", "hemoglobin", "platelets", "wbc", "inr", "troponin_i",
            "magnesium", "phosphorus", "co2", "bicarbonate", "creatinine"}


def lab(test_name, value, unit, flag="unknown", **more):
    return {"test_name": test_name, "value": value, "unit": unit, "reference_range": "", "abnormal_flag": flag,
            **more}


# ------------------------------------------------------------------ the table
def test_the_table_is_versioned_and_every_row_cites_a_reference():
    data = json.loads(TABLE_PATH.read_text())
    assert table_version() == data["version"] and data["version"]
    for row in data["limits"]:
        ref = data["references"][row["source"]]
        assert ref["short"] and ref["citation"]
        assert "http" not in ref["citation"]  # named, not linked: nothing to go stale or be invented


def test_the_table_covers_the_analytes_every_critical_list_names():
    assert REQUIRED <= {limit.analyte for limit in all_limits()}


@pytest.mark.parametrize("limit", all_limits(), ids=lambda limit: limit.analyte)
def test_each_limit_is_in_a_unit_every_usual_unit_of_its_analyte_converts_to(limit):
    entry = analyte(limit.analyte)
    assert entry is not None
    assert limit.low is None or limit.high is None or limit.low < limit.high
    for unit in entry.units:
        if entry.unitless or unit:
            assert factor(limit.analyte, unit, limit.unit) is not None, unit


# ------------------------------------------------------------------ the rule
@pytest.mark.parametrize("value,unit,flag", [
    ("6.9", "mmol/L", "critical_high"), ("6.2", "mmol/L", "critical_high"),  # at the limit counts
    ("6.1", "mmol/L", None), ("2.8", "mEq/L", "critical_low"), ("2.9", "mEq/L", None),
    ("> 7.0", "mmol/L", "critical_high"), ("<7.0", "mmol/L", None), ("6,9", "mmol/L", "critical_high"),
])
def test_a_potassium_is_judged_by_its_value(value, unit, flag):
    crossing = limit_crossed(value, unit, "potassium")
    assert (crossing.flag if crossing else None) == flag


def test_a_value_past_a_limit_is_critical_whatever_was_printed():
    out = apply_critical_limits(lab("Potassium", "6.9", "mmol/L", "high"))
    assert out["abnormal_flag"] == "critical_high" and out["printed_flag"] == "high"
    assert out["critical_basis"] == "critical limit >= 6.2 mmol/L (Kost, JAMA 1990)"
    assert critical_basis_text(out) == ("critical by critical limit >= 6.2 mmol/L (Kost, JAMA 1990); "
                                        "the report printed high")


def test_a_flag_derived_from_the_range_is_not_called_printed():
    out = apply_critical_limits(lab("Sodium", "117", "mmol/L", "low", flag_derived=True))
    assert out["abnormal_flag"] == "critical_low" and "printed_flag" not in out
    assert critical_basis_text(out).endswith("the report printed no critical flag")


def test_a_value_with_no_flag_at_all_is_raised_too():
    out = apply_critical_limits(lab("Hgb", "5.9", "g/dL"))
    assert out["abnormal_flag"] == "critical_low"
    assert out["critical_basis"] == "critical limit <= 66 g/L = 6.60 g/dL (Kost, JAMA 1990)"


@pytest.mark.parametrize("name,value,unit,flag", [
    ("Creatinine", "7.5", "mg/dL", "critical_high"), ("Creatinine", "650", "umol/L", None),
    ("Creatinine", "663", "\u00b5mol/L", "critical_high"), ("Glucose", "45", "mg/dL", "critical_low"),
    ("Glucose", "2.4", "mmol/L", "critical_low"), ("Glucose", "500", "mg/dL", "critical_high"),
    ("Platelets", "30000", "/uL", "critical_low"), ("PLT", "30", "K/uL", "critical_low"),
    ("Platelet count", "40", "x10^9/L", None), ("WBC", "1.5", "x10E3/uL", "critical_low"),
    ("Calcium", "13.2", "mg/dL", "critical_high"), ("Calcium", "3.0", "mmol/L", None),
    ("Magnesium", "0.9", "mg/dL", "critical_low"), ("INR", "5.6", "", "critical_high"),
    ("INR", "3.9", "", None), ("Troponin I", "0.52", "ng/mL", "critical_high"),
    ("Troponin I", "520", "ng/L", "critical_high"), ("Hematocrit", "16", "%", "critical_low"),
    ("Bicarbonate", "9", "mEq/L", "critical_low"), ("Arterial pH", "7.12", "", "critical_low"),
    ("pH", "7.12", "", None),  # urine or blood? a name two analytes share is not compared
])
def test_a_value_in_any_unit_of_its_analyte_is_compared_after_conversion(name, value, unit, flag):
    assert apply_critical_limits(lab(name, value, unit, "unknown"))["abnormal_flag"] == (flag or "unknown")


def test_a_printed_critical_flag_is_kept_inside_the_limits():
    out = apply_critical_limits(lab("Potassium", "5.9", "mmol/L", "critical_high"))
    assert out["abnormal_flag"] == "critical_high" and out["critical_basis"] == PRINTED_FLAG
    assert critical_basis_text(out) == "critical by printed flag"


def test_printed_critical_limits_are_named_as_the_basis():
    out = apply_critical_limits(lab("Potassium", "2.3", "mmol/L", "critical_low", flag_derived=True,
                                    critical_range="<2.5 or >6.5"))
    assert out["critical_basis"] == "printed critical limits <2.5 or >6.5"


def test_a_printed_critical_flag_is_never_turned_around_by_the_limit():
    # Printed critical low on a high value: the print is kept (the extractor's disagreement
    # rule sends it to review); the limit never lowers or flips a critical flag.
    out = apply_critical_limits(lab("Potassium", "6.9", "mmol/L", "critical_low"))
    assert out["abnormal_flag"] == "critical_low" and out["critical_basis"] == PRINTED_FLAG


@pytest.mark.parametrize("value,unit", [
    ("6.9", "mg/dL"),        # a unit potassium is never printed in: not compared (review by the unit rules)
    ("6.9", ""),             # no unit: incomplete, not compared
    ("6.9", "widgets"),      # unknown spelling
    ("haemolysed", "mmol/L"),
    ("0,057", "mmol/L"),     # decimal separator in doubt
])
def test_a_value_that_cannot_be_put_in_the_limits_unit_is_not_compared(value, unit):
    out = apply_critical_limits(lab("Potassium", value, unit, "high"))
    assert out["abnormal_flag"] == "high" and "critical_basis" not in out


def test_an_analyte_without_a_limit_or_an_unknown_test_is_not_compared():
    assert apply_critical_limits(lab("ALT", "2400", "U/L", "high"))["abnormal_flag"] == "high"
    assert apply_critical_limits(lab("Zinc protoporphyrin", "900", "ug/dL", "high"))["abnormal_flag"] == "high"
    assert critical_limit("troponin_i_hs") is None  # assay-specific: out of scope


def test_the_rule_applies_once():
    once = apply_critical_limits(lab("Potassium", "6.9", "mmol/L", "high"))
    assert apply_critical_limits(once) == once


def _proposal(fact_type, value, text):
    cite = Citation(source_type="lab_pdf", source_id="documents:1", page_or_section="page 1",
                    field_or_chunk_id="results[0]", quote_or_value="6.9")
    return FactProposal(fact_type=fact_type, fact_text=text, structured_value=value, citation=cite, confidence=0.9)


def test_a_proposal_raised_by_a_limit_says_why_in_its_text():
    p = with_critical_limits(_proposal("lab_result", lab("K", "7.1", "mmol/L", "high"), "K 7.1 mmol/L H"))
    assert p.structured_value["abnormal_flag"] == "critical_high"
    assert p.fact_text == ("K 7.1 mmol/L H (critical by critical limit >= 6.2 mmol/L (Kost, JAMA 1990); "
                           "the report printed high)")
    printed = with_critical_limits(_proposal("lab_result", lab("K", "7.1", "mmol/L", "critical_high"), "K 7.1 HH"))
    assert printed.fact_text == "K 7.1 HH" and printed.structured_value["critical_basis"] == PRINTED_FLAG
    other = _proposal("vital_sign", {"kind": "heart_rate", "value": "190", "unit": "bpm"}, "HR 190")
    assert with_critical_limits(other) == other


def test_a_corrected_value_undoes_what_the_limit_did_and_is_judged_afresh():
    from domain.policy.facts.critical_limits import after_correction

    raised = apply_critical_limits(lab("Potassium", "6.9", "mmol/L", "high"))
    lower = after_correction({**raised, "value": "4.9"}, {"value": "4.9"})
    assert lower["abnormal_flag"] == "high" and "critical_basis" not in lower and "printed_flag" not in lower
    still = after_correction({**raised, "unit": "mEq/L"}, {"unit": "mEq/L"})
    assert still["abnormal_flag"] == "critical_high" and still["printed_flag"] == "high"


def test_a_flag_a_reviewer_sets_is_theirs_but_the_limit_still_applies():
    from domain.policy.facts.critical_limits import REVIEWER_FLAG, after_correction

    raised = apply_critical_limits(lab("Potassium", "6.9", "mmol/L", "high"))
    set_critical = after_correction({**raised, "abnormal_flag": "critical_high"}, {"abnormal_flag": "critical_high"})
    assert set_critical["critical_basis"] == REVIEWER_FLAG and "printed_flag" not in set_critical
    set_high = after_correction({**raised, "abnormal_flag": "high"}, {"abnormal_flag": "high"})
    assert set_high["abnormal_flag"] == "critical_high" and set_high["reviewer_flag"] == "high"
    assert critical_basis_text(set_high).endswith("a reviewer set high")
    # A correction of the date alone leaves the judgement as it was.
    assert after_correction({**raised, "collection_date": "2026-01-02"}, {"collection_date": "2026-01-02"}) == {
        **raised, "collection_date": "2026-01-02"}
