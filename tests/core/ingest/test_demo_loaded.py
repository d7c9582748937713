"""Whether the sample documents are loaded (core/services/ingest/demo.py, demo_loaded):
the overview's welcome box points to them, or to `python -m core demo`."""

from __future__ import annotations

from golden.demo import DOCUMENTS


def test_the_welcome_knows_whether_the_demo_is_loaded(wb, demo_patient):
    from core.services.ingest.demo import demo_loaded, load_demo

    assert demo_loaded(wb) is False
    load_demo(wb, [d for d in DOCUMENTS if d.filename == "demo-critical-potassium.hl7"])
    assert demo_loaded(wb) is True
