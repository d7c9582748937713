"""One analyte in two units is one thing: the same value in two units is no conflict (a
different one is), and a series of results in two units is one trend shown in one unit,
each earlier value beside what it printed."""

from __future__ import annotations

from domain.models import Citation, EvidenceItem
from domain.policy.answers.lab_series import build_series, test_key as series_key, trend_text
from domain.policy.facts.fingerprints import clinical_content_fingerprint, clinical_key, same_measurement


def creat(value, unit, date="2026-03-02", name="Creatinine"):
    return {"test_name": name, "value": value, "unit": unit, "collection_date": date}


def test_the_same_creatinine_in_two_units_is_one_key_and_the_same_measurement():
    a, b = creat("88", "umol/L"), creat("1.0", "mg/dL", name="Creatinine, Serum")
    assert clinical_key(1, "lab_result", a, "") == clinical_key(1, "lab_result", b, "")
    # The printed values differ, so the content fingerprint does; the measurement is the same.
    assert clinical_content_fingerprint(1, "lab_result", a, "") != clinical_content_fingerprint(1, "lab_result", b, "")
    assert same_measurement("lab_result", a, b) and same_measurement("lab_result", b, a)


def test_a_different_value_after_conversion_is_still_a_conflict():
    assert not same_measurement("lab_result", creat("88", "umol/L"), creat("1.4", "mg/dL"))
    assert not same_measurement("lab_result", creat("88", "umol/L"), creat("88", "mg/dL"))


def test_what_cannot_be_converted_is_never_called_the_same():
    assert not same_measurement("lab_result", creat("Pending", "umol/L"), creat("Pending", "mg/dL"))
    assert not same_measurement("lab_result", creat("150", "G/L", name="Platelets"), creat("150", "x10^9/L",
                                                                                             name="Platelets"))
    # Two analytes under no shared key are never compared, nor facts that are not labs.
    assert not same_measurement("lab_result", creat("1.0", "mg/dL"), creat("1.0", "mg/dL", name="Urine creatinine"))
    assert not same_measurement("medication", {"name": "metformin", "dose": "500 mg"},
                                {"name": "metformin", "dose": "0.5 g"})


def item(n, value, unit, date, flag="normal"):
    cite = Citation(source_type="hl7v2_message", source_id=f"documents:{n}", page_or_section="OBX 1",
                    field_or_chunk_id="OBX[1]", quote_or_value=value)
    return EvidenceItem(evidence_id=f"fact:{n}", kind="chart", fact_type="lab_result", topic="renal",
                        text=f"Creatinine {value} {unit}", citations=[cite], date=date,
                        structured={"test_name": "Creatinine", "value": value, "unit": unit,
                                    "collection_date": date, "abnormal_flag": flag})


def test_creatinine_in_umol_and_in_mg_is_one_series_shown_in_the_latest_unit():
    older, newer = item(1, "88", "\u00b5mol/L", "2026-01-10"), item(2, "1.6", "mg/dL", "2026-03-02", "high")
    assert series_key("Creatinine", "umol/L") == series_key("Creatinine", "mg/dL") == "analyte:creatinine"
    [series] = build_series([older, newer])
    assert [i.evidence_id for i in series.items] == ["fact:2", "fact:1"]
    assert series.display_unit == "mg/dL"
    assert trend_text(series) == "previous 0.995 mg/dL (printed 88 \u00b5mol/L) on 2026-01-10 (normal)"


def test_the_series_unit_follows_its_latest_result():
    [series] = build_series([item(1, "1.0", "mg/dL", "2026-01-10"), item(2, "141", "umol/L", "2026-03-02")])
    assert trend_text(series) == "previous 88.4 umol/L (printed 1.0 mg/dL) on 2026-01-10 (normal)"


def test_a_unit_that_does_not_convert_is_shown_as_printed():
    [series] = build_series([item(1, "1.0", "furlongs", "2026-01-10"), item(2, "1.2", "mg/dL", "2026-03-02")])
    assert trend_text(series) == "previous 1.0 furlongs on 2026-01-10 (normal)"
    [same] = build_series([item(1, "0.9", "mg/dL", "2026-01-10"), item(2, "1.2", "mg/dL", "2026-03-02")])
    assert trend_text(same) == "previous 0.9 mg/dL on 2026-01-10 (normal)"
