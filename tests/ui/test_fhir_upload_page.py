"""A FHIR bundle uploaded on the Documents page: its category is suggested from its bytes
(whatever its name), it is stored and queued as a fhir_bundle job, and once read the page
says what was found."""

from __future__ import annotations

from datetime import date

from core.services.admin.patients import add_patient, chart_documents
from core.services.ingest.worker import Worker
from tests.support import fhir_bundles as F
from tests.support.app_support import documents_page


def test_a_bundle_is_suggested_stored_queued_and_read(app_env):
    patient = add_patient(app_env, mrn="WB-FH-3301", first="Odalys", last="Brennerman", dob=date(1961, 7, 19),
                          sex="F", by="dr.reviewer")
    at = documents_page(patient["id"])
    at.file_uploader[0].set_value([("export.txt", F.as_bytes(F.patient_bundle()), "text/plain")]).run()
    assert not at.exception, at.exception
    assert [s.value for s in at.selectbox if s.key and s.key.startswith("upload-cat-")] == ["FHIR Bundle"]
    next(b for b in at.button if b.label == "Upload 1 file").click().run()
    assert not at.exception, at.exception
    (stored,) = chart_documents(app_env, patient["id"])
    assert (stored["doc_type"], stored["job_status"]) == ("fhir_bundle", "pending")
    Worker(app_env).run_specific(stored["job_id"])
    at.run()
    assert "export.txt: read, 7 added to the chart · 3 kept with the document." in [s.value for s in at.success]
