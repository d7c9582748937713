"""FHIR R4 JSON as received: the JSON with the place of every value, and the normaliser
that turns a Bundle or a single resource into validated, cited element sections."""
