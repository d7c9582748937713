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
