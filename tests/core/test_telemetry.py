"""PHI-free telemetry: allowlisted keys only, patient_ref instead of ids."""

import json

from core import telemetry
from domain.policy.access.log_keys import patient_ref, scrub


def test_scrub_drops_keys_not_on_the_allowlist():
    clean = scrub({"job_id": 3, "patient_name": "Marisol Quintero-Vale", "quote": "LDL 148", "prompt": "x",
                   "status": "succeeded", "latency_ms": {"extract": 12.5, "bad key!": 3}})
    assert clean == {"job_id": 3, "status": "succeeded", "latency_ms": {"extract": 12.5}}


def test_scrub_drops_free_text_smuggled_into_allowed_keys():
    clean = scrub({"status": "Patient Marisol Quintero-Vale has diabetes", "error_code": "needs_ocr"})
    assert clean == {"error_code": "needs_ocr"}


def test_patient_ref_is_a_stable_short_hmac():
    a = patient_ref(17, "secret-1")
    assert a == patient_ref(17, "secret-1")
    assert a != patient_ref(17, "secret-2") != patient_ref(18, "secret-1")
    assert a.startswith("patient:") and len(a) == len("patient:") + 12


def test_log_file_never_holds_a_planted_name(settings):
    planted = "Zebulon Quattlebaum"
    telemetry.emit("job_finished", settings=settings, patient_id=42, job_id=1, status="succeeded",
                   patient_name=planted, fact_text=f"{planted} LDL 148", error_code=planted, counts={planted: 1})
    text = "".join(p.read_text() for p in settings.logs_dir.glob("*.jsonl"))
    assert planted not in text and "Zebulon" not in text
    record = json.loads(text.splitlines()[-1])
    assert record["patient_ref"] == patient_ref(42, telemetry.app_secret(settings))
    assert "patient_id" not in record and record["job_id"] == 1
