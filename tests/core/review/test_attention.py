"""Red flags at the top of the overview (core/services/review/attention.py): a finding of
this patient whose words raise one; never another patient's page or a closed finding."""

from __future__ import annotations

from golden.demo import DOCUMENTS


def test_red_flags_are_this_patients_live_findings_only(wb, demo_patient):
    from core.services.ingest.demo import load_demo
    from core.services.review.attention import red_flag_findings

    load_demo(wb, [d for d in DOCUMENTS if d.filename in ("demo-intake.pdf", "demo-wrong-patient-lab.pdf")])
    flags = red_flag_findings(wb, demo_patient["id"])
    assert flags and {f["filename"] for f in flags} == {"demo-intake.pdf"}
    assert any("chest pain" in f["red_flag"].lower() for f in flags)
    assert all(f["identity_status"] != "identity_mismatch_quarantined" for f in flags if "identity_status" in f)

