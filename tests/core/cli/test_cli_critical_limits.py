"""End to end through `core ingest` with the production settings (a subprocess, the
forkserver child reading the PDF): a typed lab report printing potassium 6.9 mmol/L
with only "H" is charted critical_high, its citation saying the limit made it so."""

from __future__ import annotations

import pytest

from golden.fixtures import LabCase, Patient, render_lab
from golden.ground_truth import ExpectedLab
from tests.support.cli_support import as_json, cli


@pytest.mark.parametrize("layout", ["dotted", "split_range"])
def test_a_potassium_printed_only_high_is_charted_critical_by_its_limit(tmp_path, layout, cli_init):
    data = cli_init(tmp_path / "data")
    p = Patient("Evander", "Quillfeather-Obi", "1949-06-17", "EQ-720315", sex="M")
    as_json(cli(data, "patient", "add", "--mrn", p.mrn, "--first", p.first, "--last", p.last, "--dob", p.dob,
                "--json"))
    case = LabCase("potassium_only_h", layout, p, "2026-09-14", (
        ("Renal Panel", (ExpectedLab("Potassium", "6.9", "mmol/L", "3.5-5.1", "critical_high", "H"),
                         ExpectedLab("Sodium", "137", "mmol/L", "135-145", "normal"),
                         ExpectedLab("Creatinine", "1.42", "mg/dL", "0.70-1.30", "high", "H"))),),
        lab_name="Fenwick Street Pathology")
    pdf = tmp_path / "renal.pdf"
    pdf.write_bytes(render_lab(case))
    out = as_json(cli(data, "ingest", str(pdf), "--patient", p.mrn, "--doc-type", "lab_pdf", "--json"))
    assert out["job"]["status"] == "succeeded" and out["identity"]["status"] == "identity_verified"
    facts = {f["structured_value"]["test_name"]: f for f in out["facts"] if f["fact_type"] == "lab_result"}
    k = facts["Potassium"]
    assert k["structured_value"]["value"] == "6.9"
    assert k["structured_value"]["abnormal_flag"] == "critical_high"
    assert k["structured_value"]["printed_flag"] == "high"
    assert k["structured_value"]["critical_basis"] == "critical limit >= 6.2 mmol/L (Kost, JAMA 1990)"
    assert "critical by critical limit >= 6.2 mmol/L (Kost, JAMA 1990); the report printed high" in k["fact_text"]
    assert k["certainty"] == "verified" and k["promotion_status"] == "promoted"
    assert k["citation"]["quote_or_value"].startswith("6.9") or "6.9" in k["citation"]["quote_or_value"]
    # Inside the limits nothing changes: the creatinine stays high, the sodium normal.
    assert facts["Creatinine"]["structured_value"]["abnormal_flag"] == "high"
    assert "critical_basis" not in facts["Creatinine"]["structured_value"]
    assert facts["Sodium"]["structured_value"]["abnormal_flag"] == "normal"
    chart = as_json(cli(data, "chart", "--patient", p.mrn, "--json"))
    row = next(r for r in chart["labs"] if r["test_name"] == "Potassium")
    assert row["critical"] is True and row["critical_basis"].startswith("critical limit >= 6.2 mmol/L")
