"""Round trip (issue 25's "done when"): every demo patient's chart exported as a FHIR R4
bundle and read back, as a `fhir_bundle` upload, into an empty data dir holding only the
same patient, gives the same chart rows; the one thing it adds is the LOINC code the
export looks up by name for a lab row read without one."""

from __future__ import annotations

import json
import os
from datetime import date

import pytest

from core.services.admin.patients import add_patient, list_patients
from core.services.exchange.fhir_export import export_fhir
from core.services.ingest.demo import build_demo_documents, load_demo, read_demo_dir
from core.services.review.facts import chart_view
from core.services.workbench import open_workbench
from domain.policy.facts.analytes import analyte, canonical_analyte
from domain.settings import reload_settings
from tests.support.accounts import seed_test_accounts
from tests.support.pipeline import ingest

# What a chart row says clinically (its id, source and supporting documents differ by design).
_SKIP = {"id", "source", "document_ids", "critical"}


def looked_up_loinc(row: dict) -> str | None:
    """The LOINC code the export gives a lab row read without one: the analyte
    vocabulary's usual code for its name and unit (the one thing a round trip adds)."""
    found = analyte(canonical_analyte(row["test_name"], None, row.get("unit")) or "")
    return found.loinc[0] if found and found.loinc else None


def rows(wb, patient_id: int, *, as_exported: bool = False) -> dict[str, list[str]]:
    out = {}
    for section, items in chart_view(wb, patient_id).items():
        shown = []
        for row in items:
            row = {k: v for k, v in row.items() if k not in _SKIP}
            if as_exported and section == "labs" and not row.get("loinc"):
                row["loinc"] = looked_up_loinc(row)
            shown.append(json.dumps(row, sort_keys=True, default=str))
        out[section] = sorted(shown)
    return out


@pytest.fixture
def empty_workbench(tmp_path):
    previous = os.environ.get("WORKBENCH_DATA_DIR")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "other" / "data"))
        mp.setenv("WORKBENCH_JOB_PROCESS", "off")
        other = open_workbench(reload_settings())
        seed_test_accounts(other)
        yield other
        other.close()
    reload_settings()
    assert os.environ.get("WORKBENCH_DATA_DIR") == previous


def test_every_demo_patients_chart_comes_back_the_same_through_fhir(wb, tmp_path, empty_workbench):
    load_demo(wb, read_demo_dir(build_demo_documents(tmp_path / "demo")))
    demo = [p for p in list_patients(wb) if p["mrn"].startswith("DEMO-")]
    compared = 0
    for patient in demo:
        before = rows(wb, patient["id"], as_exported=True)
        bundle = json.dumps(export_fhir(wb, mrn=patient["mrn"]).bundle).encode()
        twin = add_patient(empty_workbench, mrn=patient["mrn"], first=patient["first_name"],
                           last=patient["last_name"], dob=date.fromisoformat(str(patient["dob"])),
                           sex=patient.get("sex"), by="dr.reviewer")
        report = ingest(empty_workbench, twin, bundle, "fhir_bundle", f"{patient['mrn']}.json")
        assert report["job"]["status"] == "succeeded", report["job"]
        after = rows(empty_workbench, twin["id"])
        for section in before:
            assert after[section] == before[section], (patient["mrn"], section,
                                                       sorted(set(before[section]) - set(after[section])),
                                                       sorted(set(after[section]) - set(before[section])))
        compared += sum(len(v) for v in before.values())
    assert compared >= 20  # DEMO-1001's chart alone holds labs, medications, allergies and family history
