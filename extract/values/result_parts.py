"""The labels a report prints before the parts of a result written out rather than in
columns ("Result: 6.2 mmol/L   Reference: 3.5 - 5.3 mmol/L   Flag: H"): kept as data, read
by the lab reader (``extract.lab.rows.labelled_result``) and by the coverage guard, which
takes a value after a result label for a result whoever reads it."""

from __future__ import annotations

# The label's last word -> what the words after it are.
PART_MEANINGS = {"result": "result", "results": "result", "value": "result", "reference": "reference",
                 "ref": "reference", "range": "reference", "interval": "reference", "units": "units",
                 "unit": "units", "flag": "flag"}
PART_LABELS = frozenset(PART_MEANINGS)
# First words of two-word labels ("Reference range:", "Your result:", "Normal range:").
PART_LABEL_FIRSTS = frozenset({"reference", "ref", "ref.", "normal", "your", "test"})
RESULT_LABELS = frozenset(word for word, meaning in PART_MEANINGS.items() if meaning == "result")
# Labels before the test's own name on such a row ("Test: Sodium  Result: 129 mmol/L").
NAME_LABELS = frozenset({"test", "test name", "analyte", "investigation", "examination"})
