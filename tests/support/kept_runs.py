"""A seeded run (tests.support.eval_fixtures) with its fixture documents kept the way the
gate keeps them: bytes under ``<data dir>/eval-results/documents/<sha256>``, named per
case in ``kept_documents`` (docs/evals.md). Shared by the service, page and browser tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from core.services.evals.sources import keep_document
from tests.support.eval_fixtures import fixture_document, make_run, write_run


def keep_fixture_documents(data_dir: Path, run: dict[str, Any],
                           build: Callable[[str, str], tuple[bytes, str]] = fixture_document) -> dict[str, Any]:
    """A copy of ``run`` whose cases keep every document ``build`` can make (others are
    left out, as a case that could not upload one)."""
    run = json.loads(json.dumps(run))
    results_dir = Path(data_dir) / "eval-results"
    for case in run["results"]:
        kept = {}
        for name in ((case.get("actual") or {}).get("documents") or {}):
            try:
                data, filename = build(case["case_id"], name)
            except KeyError:
                continue
            kept[name] = keep_document(results_dir, data, filename)
        case["kept_documents"] = kept
    return run


def write_kept_run(data_dir: Path, run: dict[str, Any] | None = None, **kwargs: Any) -> Path:
    """``write_run`` of ``run`` (default: ``make_run(**kwargs)``) with its documents kept."""
    return write_run(data_dir, keep_fixture_documents(data_dir, run or make_run(**kwargs)))
