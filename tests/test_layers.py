"""Imports flow one way (DESIGN §2): pages/CLI -> services -> extract/retrieve/storage
-> models and policies. Checked on the source, so a new shortcut fails here, and every
source file outside tests/ falls under at least one rule, so a new folder cannot escape."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

UI = ("ui", "app_pages", "streamlit")
CLI = ("core.__main__", "core.commands")  # the command line and the commands it runs
DATABASES = ("duckdb", "lancedb", "tantivy")
TOOLS = ("golden", "bench")  # the eval gate and the benchmarks drive the product; it never imports them back


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


def modules(pattern: str, *, keep: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The dotted names of the modules matching ``pattern`` (packages' __init__ left
    out: a package name would cover its kept modules too), except ``keep``."""
    names = (".".join(p.relative_to(ROOT).with_suffix("").parts) for p in files(pattern) if p.stem != "__init__")
    return tuple(n for n in names if n not in keep)


REPOSITORIES = modules("storage/*_repo.py") + ("storage.db", "storage.migrations")
# The app runs a command handed over by a CLI beside it through this one module only.
CLI_BUT_HANDOVER = ("core.__main__",) + modules("core/commands/*.py", keep=("core.commands.handover",))

RULES = [
    # (files, forbidden import prefixes, why)
    (("core/models.py", "core/content.py", "core/errors.py", "core/clock.py", "core/policy/*.py"),
     ("core.services", "core.settings", "core.telemetry", "extract", "retrieve", "storage", "corpus", "pymupdf")
     + UI + CLI + DATABASES + TOOLS,
     "models and policies are pure"),
    (("core/__init__.py", "core/settings.py", "core/telemetry.py"),
     ("core.services", "retrieve", "corpus") + UI + CLI + DATABASES + TOOLS,
     "settings and telemetry read the environment and write logs, nothing above them"),
    (("extract/*.py",), ("storage", "core.services", "retrieve", "corpus") + UI + CLI + DATABASES + TOOLS,
     "extract/ never touches the database or the UI"),
    (("storage/*.py",), ("core.services", "extract", "retrieve", "corpus") + UI + CLI + TOOLS,
     "storage knows no services, corpus types or UI"),
    (("retrieve/*.py",), ("core.services", "extract", "duckdb") + REPOSITORIES + UI + CLI + TOOLS,
     "retrieval searches stores it is given: no services, repositories, DuckDB or UI"),
    (("corpus/*.py",), ("core.services", "storage", "retrieve", "extract") + UI + CLI + DATABASES + TOOLS,
     "the corpus is checked-in text and its loader, nothing else"),
    (("core/services/*.py",), UI + CLI + ("bench",), "services never import the UI or the CLI"),
    (("core/__main__.py", "core/commands/*.py"), UI + ("bench",), "the CLI is a front end over the services"),
    (("ui/*.py",), ("storage", "extract", "retrieve", "corpus") + ("app_pages",) + CLI_BUT_HANDOVER
     + DATABASES + TOOLS,
     "the UI helpers call services; only the app's endpoint handler comes from the commands"),
    (("app_pages/*.py", "Home.py", "app.py"), ("storage", "extract", "retrieve", "corpus", "core.settings", "core.telemetry")
     + CLI + DATABASES + TOOLS,
     "pages call services and ui/; no SQL, extractors, retrieval or CLI in a page"),
    (("golden/*.py", "bench/*.py"), ("ui", "app_pages") + CLI, "the eval gate and benchmarks use the product's "
                                                               "services, not its UI or CLI module"),
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


def test_every_source_file_is_under_a_rule():
    covered = {p for patterns, _, _ in RULES for p in files(*patterns)}
    sources = {p for p in ROOT.rglob("*.py")
               if not {"tests", ".venv", "__pycache__"} & set(p.relative_to(ROOT).parts)
               and not any(part.startswith(".") for part in p.relative_to(ROOT).parts)}
    missing = sorted(str(p.relative_to(ROOT)) for p in sources - covered)
    assert not missing, f"add these to a rule in tests/test_layers.py: {missing}"
