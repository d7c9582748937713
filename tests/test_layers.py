"""Imports flow one way (DESIGN §2): pages/CLI -> services -> extract/retrieve/storage
-> models and policies. Checked on the source, so a new shortcut fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def files(*patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in ROOT.glob(pattern))


RULES = [
    # (files, forbidden import prefixes, why)
    (("core/models.py", "core/content.py", "core/errors.py", "core/policy/*.py"),
     ("core.services", "core.settings", "core.telemetry", "extract", "retrieve", "storage", "ui", "app_pages",
      "streamlit", "duckdb", "lancedb", "tantivy", "pymupdf"),
     "models and policies are pure"),
    (("extract/*.py",), ("storage", "core.services", "retrieve", "ui", "app_pages", "duckdb", "streamlit"),
     "extract/ never touches the database or the UI"),
    (("storage/*.py",), ("core.services", "extract", "ui", "app_pages", "streamlit"),
     "storage knows no services or UI"),
    (("retrieve/*.py",), ("core.services", "ui", "app_pages", "streamlit"), "retrieval knows no services or UI"),
    (("app_pages/*.py", "Home.py", "ui/*.py"), ("storage", "duckdb", "extract", "retrieve"),
     "pages call services; no SQL or extractors in a page"),
    (("core/services/*.py", "core/__main__.py"), ("streamlit", "ui", "app_pages"), "services never import the UI"),
]


@pytest.mark.parametrize("patterns, forbidden, why", RULES, ids=[r[2] for r in RULES])
def test_imports_respect_the_layers(patterns, forbidden, why):
    offenders = []
    for path in files(*patterns):
        for module in imported_modules(path):
            if any(module == f or module.startswith(f + ".") for f in forbidden):
                offenders.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not offenders, f"{why}: " + "; ".join(offenders)


def test_every_rule_looks_at_real_files():
    for patterns, _, why in RULES:
        assert files(*patterns), why
