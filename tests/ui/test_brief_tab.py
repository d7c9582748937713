"""The Brief tab of the chart overview: the patient's cited brief, its budget, the cut
list and the PDF download, in AppTest."""

from __future__ import annotations

from datetime import date

from tests.support.app_support import run_home
from tests.support.file_builders import sheets_workbook
from tests.support.pipeline import ingest


def test_the_overview_has_a_brief_tab_that_cuts_to_its_budget(app_env):
    from core.services.admin.patients import add_patient

    patient = add_patient(app_env, mrn="BT-60217", first="Ruairi", last="Castellanos", dob=date(1958, 12, 1),
                          sex="M", by="dr.reviewer")
    ingest(app_env, patient, sheets_workbook({
        "Who": [["Patient", "Ruairi Castellanos"], ["DOB", "1958-12-01"], ["MRN", "BT-60217"]],
        "Results": [["Date", "Test", "Result", "Units", "Reference range"],
                    ["2026-08-14", "Potassium", 5.8, "mmol/L", "3.5-5.1"],
                    ["2026-08-14", "Sodium", 129, "mmol/L", "135-145"]]}), "clinical_workbook", "bmp.xlsx")
    at = run_home(patient_id=patient["id"])
    assert not at.exception, at.exception
    assert [t.label for t in at.tabs] == ["Brief"]
    shown = "\n".join(m.value for m in at.tabs[0].markdown)
    assert "**Abnormal results and trends**" in shown and "Potassium 5.8 mmol/L (high; ref 3.5-5.1)" in shown
    assert "MISSING — not documented in the record" in shown and "BT-60217" in shown  # escaped for markdown
    assert "Nothing was cut" in at.tabs[0].caption[0].value
    assert any("bmp.xlsx" in m.value for m in at.tabs[0].expander[0].markdown)
    at.tabs[0].number_input[0].set_value(100).run()
    assert not at.exception, at.exception
    cut = at.tabs[0].caption[0].value
    assert "Cut to fit the budget of 100 tokens" in cut
    shown = "\n".join(m.value for m in at.tabs[0].markdown)
    assert "Potassium 5.8" not in shown and "Castellanos" in shown  # identity is never cut
