"""The ground every layer stands on: domain types, normalized content, errors, the clock, settings
(read from the environment, no file I/O), reading limits, and the clinical policies. Imports
nothing else of the project (tests/test_layers.py)."""
