"""Eval runs for reviewers: stored runs of the gate, their report, background runs, cited sources."""
