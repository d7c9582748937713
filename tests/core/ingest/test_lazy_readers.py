"""A command that reads a few documents and ends (`core ingest`, `retry`, `demo`,
`backfill`) starts its forkserver cold (``sandbox.read_lazily``): nothing imported or
warmed up front, the child imports the reader its document needs, and the child keeps
what every job's child has: a process group of its own, the same ceilings. Run in a
child interpreter: the forkserver is one per process, and a cold one must not reach the
other tests' server. The CLI tests (tests/core/cli) read every document this way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

_SCRIPT = """
import json, os, sys
from core.services.ingest import sandbox
from core.services.ingest.sandbox import run_isolated
from domain.errors import ExtractionError
from tests.support.reader_probe import loaded, read_typed_lab, hog
sandbox.read_lazily()
answer = {"me": os.getpgrp(), "child": run_isolated(loaded, (), timeout=60, memory_mb=512, method="forkserver")}
answer["lab"] = run_isolated(read_typed_lab, (), timeout=60, memory_mb=1024, method="forkserver")
try:
    run_isolated(hog, (), timeout=60, memory_mb=300, method="forkserver")
except ExtractionError as exc:
    answer["hog"] = exc.code
print(json.dumps(answer))
"""


def test_a_cold_forkserver_child_imports_only_what_its_job_needs_and_keeps_its_ceilings():
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=180,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    child = answer["child"]
    assert child["group"] != answer["me"]  # Ctrl-C to the terminal's group does not reach it
    assert child["openblas_threads"] == "1"
    assert not child["readers_imported"], child  # nothing warmed up front
    assert answer["lab"] == ["Sodium", "Potassium"]  # a typed page read in such a child
    assert answer["hog"] == "resource_limit"  # the memory ceiling holds as for a warm child


def test_a_command_called_in_process_leaves_the_callers_forkserver_warm(data_dir, monkeypatch, capsys):
    """Only ``python -m core`` (its own process) reads cold: a test calling ``main`` for
    `demo` had left its whole test worker's forkserver cold, and a later job's child then
    loaded the OCR models itself under a tight memory ceiling."""
    from core.__main__ import main
    from core.services.ingest import sandbox

    monkeypatch.setattr(sandbox, "_warm", True)  # put back whatever this test does
    code = main(["ingest", "--json", "--patient", "NOBODY", "--doc-type", "lab_pdf", str(data_dir / "missing.pdf")])
    assert code != 0 and "not found" in capsys.readouterr().err.lower()
    assert sandbox._warm is True
