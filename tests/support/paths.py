"""Where the repository and the real sample data are."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
# Real sample files written by others, beside the clone; the ``shared_data`` fixture
# (tests/conftest.py) skips a test cleanly when they are absent.
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
