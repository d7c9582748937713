"""Chart checks: run the rule table (domain/policy/checks) over a patient's live,
trusted chart, keep the alerts it raises, withdraw the ones whose facts went, and
record a clinician's acknowledgement."""
