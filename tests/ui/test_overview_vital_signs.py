"""The chart overview shows the patient's charted vital signs: the latest reading of
each sign in one line, and every reading in the chart rows, in plain words."""

from __future__ import annotations

from datetime import date

from tests.support.app_support import run_home
from tests.support.file_builders import sheets_workbook
from tests.support.pipeline import ingest


def test_the_overview_shows_the_latest_vital_signs_and_every_charted_reading(app_env):
    from core.services.admin.patients import add_patient

    patient = add_patient(app_env, mrn="PV-30871", first="Philippa", last="Vandermolen", dob=date(1971, 7, 2),
                          sex="F", by="dr.reviewer")
    book = sheets_workbook({
        "Who": [["Patient", "Philippa Vandermolen"], ["DOB", "1971-07-02"], ["MRN", "PV-30871"]],
        "Obs": [["Recorded", "BP", "Pulse", "SpO2"],
                ["2026-06-01 09:00", "152/94", 112, "95%"],
                ["2026-06-02 09:00", "141/88", 96, "97%"]],
    })
    ingest(app_env, patient, book, "clinical_workbook", "obs.xlsx")
    at = run_home(patient_id=patient["id"])
    assert not at.exception, at.exception
    line = next(m.value for m in at.markdown if m.value.startswith("**Latest vital signs"))
    assert "BP 141/88 mmHg (2026-06-02 09:00)" in line and "Pulse 96 /min" in line and "SpO2 97%" in line
    assert "152/94" not in line  # only the latest of each sign
    assert any(m.value.startswith("**Vital signs** (6)") for m in at.markdown)
    table = next(d.value for d in at.dataframe if "sign" in d.value.columns)
    assert set(table["value"]) == {"152/94", "141/88", "112", "96", "95", "97"}
    assert set(table["sign"]) == {"blood pressure", "pulse", "oxygen saturation"}
    assert set(table["measured"]) == {"2026-06-01 09:00", "2026-06-02 09:00"}
