"""The test tree mirrors the code (issue 22), and its modules stand alone.

- Every test file sits in a folder named for the source package it tests: tests/<pkg>/...
  where <pkg>/... is a package of the source (tests/core/<use case> stands for
  core/services/<use case>, tests/core/cli for core/commands), or in browser/ (the served
  app in chromium) or golden/; the tests of the repository's own layout sit at the root.
- No test module or support module imports a test module or a conftest: what several
  modules share is in tests/support/ (builders) or a conftest (fixtures), so running one
  test file never runs, or depends on, another's module code.
- The folder, module and test names in the marker tables (tests/support/markers.py)
  still name something, so a moved file cannot silently leave its group.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.markers import FOLDER_MARKERS, LEAD_FILES, MODULE_MARKERS, TEST_MARKERS, markers_for

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# Folders of tests that mirror no one package: the app served and driven in chromium,
# and the golden set's own tests (golden/ is also a package). support/ holds no tests.
EXTRA_FOLDERS = {"browser", "golden"}
SUPPORT = "support"
# Tests of the repository's layout as a whole, at the root of tests/.
ROOT_TESTS = {"test_layers.py", "test_private_names.py", "test_test_tree.py"}
# Test folders named for what the code does, where its package lies deeper.
ALIASES = {"core/cli": "core/commands",
           **{f"core/{p.name}": f"core/services/{p.name}" for p in (ROOT / "core" / "services").iterdir()
              if (p / "__init__.py").is_file()}}


def _python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def _test_files() -> list[Path]:
    return [p for p in _python_files() if p.name.startswith("test_")]


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _imported(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """(line, dotted name) of every module the file at ``path`` (or ``source``, as if it
    sat there) imports, at any depth of its code; ``from a import b`` gives a.b as well
    as a (b may be a module); relative imports are resolved from the file's package."""
    package = _module_name(path).rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text() if source is None else source, str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def _is_test_module_or_conftest(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] == "tests" and any(p.startswith("test_") or p == "conftest" for p in parts[1:])


@pytest.mark.parametrize("path", _python_files(), ids=lambda p: p.relative_to(TESTS).as_posix())
def test_no_module_imports_a_test_module_or_a_conftest(path):
    bad = [f"line {line}: {name}" for line, name in _imported(path) if _is_test_module_or_conftest(name)]
    assert not bad, f"{path.relative_to(ROOT)} imports test code; move what it shares to tests/support/: {bad}"


def test_the_import_check_sees_every_form_of_import():
    source = ("import tests.core.cli.test_cli\nfrom tests.conftest import x\nfrom tests.core import test_jobs\n"
              "def f():\n    from ..review.test_roles import y\n    from . import conftest\n"
              "from tests.support.accounts import TEST_PASSWORD\nfrom .helpers import z\n")
    names = [name for _, name in _imported(TESTS / "core" / "ingest" / "test_probe.py", source)]
    flagged = {n for n in names if _is_test_module_or_conftest(n)}
    assert flagged >= {"tests.core.cli.test_cli", "tests.conftest", "tests.core.test_jobs",
                       "tests.core.review.test_roles", "tests.core.ingest.conftest"}, flagged
    assert not [n for n in flagged if n.startswith(("tests.support", "tests.core.ingest.helpers"))], flagged


def _mirrors(folder: str) -> bool:
    if folder in ALIASES:
        return True
    source = ROOT / folder
    return source.is_dir() and any(source.glob("*.py"))


@pytest.mark.parametrize("path", _test_files(), ids=lambda p: p.relative_to(TESTS).as_posix())
def test_every_test_file_sits_in_a_folder_that_mirrors_the_code(path):
    rel = path.relative_to(TESTS)
    folder = rel.parent.as_posix()
    if folder == ".":
        assert rel.name in ROOT_TESTS, f"{rel}: only the tests of the repository's layout sit at the root"
        return
    top = rel.parts[0]
    assert top != SUPPORT, f"{rel}: tests/support holds shared builders, not tests (pytest would collect it)"
    if top in EXTRA_FOLDERS:
        return
    assert _mirrors(folder), (f"{rel}: tests/{folder} mirrors no source package ({folder}/ is none, "
                              f"nor is any alias of it: {sorted(ALIASES)})")


def test_every_test_folder_is_a_package():
    """Test modules are imported by their place (tests.core.cli.test_cli): two files of one
    name in two folders must not collide."""
    missing = sorted({p.parent.relative_to(TESTS).as_posix() for p in _python_files()
                      if p.parent != TESTS and not (p.parent / "__init__.py").is_file()})
    assert missing == []


def _defined_tests(path: Path) -> set[str]:
    return {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)
            and n.name.startswith("test_")}


def test_every_marker_table_entry_names_a_folder_a_file_or_a_test():
    missing = [f for f in FOLDER_MARKERS if not (TESTS / f).is_dir()]
    missing += [f for f in (*MODULE_MARKERS, *LEAD_FILES) if not (TESTS / f).is_file()]
    for key in TEST_MARKERS:
        file, name = key.split("::")
        if not (TESTS / file).is_file() or name not in _defined_tests(TESTS / file):
            missing.append(key)
    assert missing == []


def test_the_groups_follow_the_folders():
    for path in (TESTS / "browser").glob("test_*.py"):
        assert "browser" in markers_for(path, "test_anything"), path
    for path in _test_files():
        if path.parent.name != "browser":
            assert "browser" not in markers_for(path, "test_anything"), f"{path}: chromium tests live in tests/browser"
    assert markers_for(TESTS / "core" / "cli" / "test_cli.py", "test_anything") == {"slow"}
    assert markers_for(TESTS / "extract" / "formats" / "test_pdf_normalize.py", "test_anything") == set()
    assert markers_for(TESTS / "core" / "ingest" / "test_stage_timings.py",
                       "test_scanned_lab_job_reports_ocr_time") == {"ocr"}
