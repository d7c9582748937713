"""What a FHIR resource's status lets a fact become: the table's answers, fail-closed
for what it does not know, and the strictest of several statuses winning."""

from __future__ import annotations

import pytest

from domain.policy.facts.fhir_reading import (NO_KNOWN_ALLERGY, UCUM_VITAL_UNITS, VITAL_SIGN_LOINC, status_reading,
                                              strictest)
from domain.policy.facts.vital_signs import VITAL_SIGNS


@pytest.mark.parametrize("resource, element, code, treatment", [
    ("Observation", "status", "final", "chart"),
    ("Observation", "status", "corrected", "chart"),
    ("Observation", "status", "preliminary", "review"),
    ("Observation", "status", "registered", "not_done"),
    ("Observation", "status", "entered-in-error", "withdrawn"),
    ("Observation", "status", None, "review"),  # required and absent: invalid R4, never charted
    ("Observation", "status", "made-up", "review"),
    ("AllergyIntolerance", "verificationStatus", "unconfirmed", "review"),
    ("AllergyIntolerance", "verificationStatus", "refuted", "document"),
    ("AllergyIntolerance", "verificationStatus", None, "chart"),  # optional and absent says nothing
    ("Condition", "verificationStatus", "differential", "review"),
    ("Condition", "clinicalStatus", "resolved", "document"),
    ("MedicationStatement", "status", "stopped", "document"),
    ("MedicationRequest", "status", "draft", "review"),
])
def test_status_readings(resource, element, code, treatment):
    reading = status_reading(resource, element, code)
    assert reading.treatment == treatment
    assert (reading.reason is None) == (treatment == "chart")


def test_the_strictest_status_wins():
    confirmed = status_reading("Condition", "verificationStatus", "confirmed")
    resolved = status_reading("Condition", "clinicalStatus", "resolved")
    withdrawn = status_reading("Condition", "verificationStatus", "entered-in-error")
    assert strictest(confirmed, resolved).treatment == "document"
    assert strictest(resolved, withdrawn, confirmed).treatment == "withdrawn"


def test_vocabulary_names_only_known_signs_and_units():
    assert set(VITAL_SIGN_LOINC.values()) <= set(VITAL_SIGNS)
    units = {u for sign in VITAL_SIGNS.values() for u in sign.units}
    assert set(UCUM_VITAL_UNITS.values()) <= units
    assert NO_KNOWN_ALLERGY["409137002"] == "No known drug allergies"
