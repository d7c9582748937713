"""FHIR R4 JSON (doc_type ``fhir_bundle``): normalised resources -> identity and cited facts."""
