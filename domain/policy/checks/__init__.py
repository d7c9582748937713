"""Chart checks (issue 24): drug-lab, drug-allergy, record-consistency and
missing-indication rules kept as data (rules.json, medication_classes.json,
indications.json) and a pure evaluator that turns a patient's chart facts into
alerts, each citing every fact it rests on. They point to evidence; never advice."""
