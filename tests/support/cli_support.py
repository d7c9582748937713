"""The CLI run as a user runs it: ``python -m core ...`` in a subprocess, with the
environment `make run` gives it (tests/support/browser_support.make_run_env)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.browser_support import make_run_env
from tests.support.paths import REPO_ROOT


def cli(data_dir, *args, check=True, stdin=""):
    """One command on ``data_dir``; its CompletedProcess (exit 0 asserted unless ``check=False``)."""
    env = make_run_env(data_dir)  # the production defaults: ingest reads in the forkserver child
    proc = subprocess.run([sys.executable, "-m", "core", *args], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=300, input=stdin)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def as_json(proc):
    """The one JSON object a ``--json`` command printed (nothing else on stdout)."""
    lines = [l for l in proc.stdout.splitlines() if l.strip()]  # noqa: E741
    assert len(lines) == 1, proc.stdout  # exactly one JSON object on stdout
    return json.loads(lines[0])


def two_labs_in_conflict(tmp_path, case, cli_init):
    """A reviewer, ``case``'s patient and two of its lab reports uploaded through the CLI,
    the second with its first result changed (12.9), so that result waits as a conflict
    with the chart. Returns (data dir, the two ingest reports, the conflicting fact, the
    first panel's rows). ``cli_init``: the conftest fixture (a copy of `core init`'s data dir)."""
    import dataclasses

    from golden.fixtures import render_lab

    d = cli_init(tmp_path / "data")
    as_json(cli(d, "user", "add", "--username", "dr.cli", "--role", "reviewer", "--json",
                stdin="cli-reviewer-amber-heron\n"))
    p = case.patient
    as_json(cli(d, "patient", "add", "--mrn", p.mrn, "--first", p.first, "--last", p.last, "--dob", p.dob, "--json"))
    panel, rows = case.panels[0]
    changed = dataclasses.replace(case, panels=((panel, (dataclasses.replace(rows[0], value="12.9"), *rows[1:])),
                                                *case.panels[1:]))
    reports = []
    for name, data in (("first.pdf", render_lab(case)), ("second.pdf", render_lab(changed))):
        (tmp_path / name).write_bytes(data)
        reports.append(as_json(cli(d, "ingest", str(tmp_path / name), "--patient", p.mrn, "--doc-type", "lab_pdf",
                                   "--json")))
    conflict = next(f for f in reports[1]["facts"] if f["promotion_status"] == "conflict_needs_review")
    return d, reports, conflict, rows
