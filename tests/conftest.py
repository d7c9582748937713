"""Shared fixtures: a throwaway data dir per test, and the real sample data dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """Real sample files written by others; skip cleanly in a clone without them."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real sample data not found at {SHARED_DATA} (clone without ../shared)")
    return SHARED_DATA


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(d))
    return d
