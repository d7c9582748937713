"""No module reaches into another's private names, the project's or a library's, except
behind one adapter per library that says why (issue 22).

Every source file outside tests/ is read with ``ast``. A reach is:

* ``obj._name`` where ``obj`` is not ``self``/``cls`` and not a class of the same module
  (``cell._tc``, ``ws._cells``, ``engine._data``, ``module._helper``);
* ``from module import _name``, or importing from a private module (``a._b``);
* ``getattr``/``setattr``/``hasattr``/``delattr`` with a private name written out;
* in a class whose base comes from another module: a private method nothing in the
  module calls (an override of the base's private hook, such as multiprocessing's
  ``_launch``), or ``self._name`` that the module never sets (the base's private
  attribute).

Not reaches: dunders (``__file__``, ``obj.__class__``), the namedtuple API
(``_replace``, ``_asdict``, ``_fields``, ``_make``, ``_field_defaults``: public by
the library's own convention), and the documented ``os._exit``. A module's own private
names used inside it are fine; a test may still patch private names (tests/ is not read).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The one adapter per library allowed to reach into its private names, and why.
ADAPTERS = {
    "extract/formats/office/docx_internals.py":
        "python-docx 1.2.0: Document._body (the parent for paragraphs and tables built from the "
        "body's XML, content controls included) and _Cell._tc (what makes a merged cell repeated "
        "across grid columns one cell)",
    "extract/formats/office/xlsx_internals.py":
        "openpyxl 3.1.5: Worksheet._cells, the only sparse view of a sheet; every public walk "
        "creates each empty cell up to max_row",
    "ui/streamlit_internals.py":
        "Streamlit 1.67.0: _calculate_file_id and MediaFileManager._file_metadata, to drop one "
        "built download from the unauthenticated /media store; no public call does",
    "core/services/ingest/forkserver_internals.py":
        "CPython 3.11 multiprocessing: ForkServerProcess._Popen and Popen._launch (with its _fds, "
        "process _name) overridden so a job's child is prepared without the parent's __main__",
}

# Reaches in files other changes own, left for the merge: (path, name) -> reason. An
# entry that no longer matches a reach fails ``test_pending_entries_are_still_needed``.
PENDING: dict[tuple[str, str], str] = {}  # (path, name): why a reach waits for another change

NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}
DOCUMENTED = {("os", "_exit")}  # os._exit is in the os module's documentation
ATTRIBUTE_CALLS = {"getattr", "setattr", "hasattr", "delattr"}


@dataclass(frozen=True)
class Reach:
    line: int
    name: str
    how: str


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__")) \
        and name not in NAMEDTUPLE_API


def source_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py")
                  if not any(part.startswith(".") or part in ("tests", "__pycache__")
                             for part in p.relative_to(ROOT).parts))


def registered(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a decorator hands the method to someone (pydantic's ``@field_validator``,
    say), so that it is not a hook the base class calls by name."""
    plain = {"staticmethod", "classmethod", "property", "override"}
    return any(ast.unparse(d).split(".")[-1] not in plain for d in method.decorator_list)


def reaches(source: str) -> list[Reach]:
    """Every reach into a private name that ``source`` makes (see the module docstring)."""
    tree = ast.parse(source)
    own_classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    mentioned = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)}
    mentioned |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assigned = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)}
    assigned |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    assigned |= {n.name for n in ast.walk(tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}

    def foreign(base: ast.expr) -> bool:
        """Whether a base class comes from another module (the project's or a library's)."""
        root = base
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.value if not isinstance(root, ast.Call) else root.func
        return not (isinstance(root, ast.Name) and root.id in own_classes)

    found: list[Reach] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            owner = node.value
            if isinstance(owner, ast.Name) and (owner.id in ("self", "cls") or owner.id in own_classes
                                                or (owner.id, node.attr) in DOCUMENTED):
                continue
            found.append(Reach(node.lineno, node.attr, f"{ast.unparse(node)}"))
        elif isinstance(node, ast.ImportFrom):
            if node.module and any(is_private(part) for part in node.module.split(".")):
                found.append(Reach(node.lineno, node.module, f"from {node.module} import ..."))
            for a in node.names:
                if is_private(a.name):
                    found.append(Reach(node.lineno, a.name, f"from {node.module or '.'} import {a.name}"))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if any(is_private(part) for part in a.name.split(".")):
                    found.append(Reach(node.lineno, a.name, f"import {a.name}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ATTRIBUTE_CALLS
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and is_private(node.args[1].value)
              and not (isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls"))):
            found.append(Reach(node.lineno, node.args[1].value, ast.unparse(node)))
        elif isinstance(node, ast.ClassDef) and any(foreign(b) for b in node.bases):
            for item in node.body:
                if (isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_private(item.name)
                        and item.name not in mentioned and not registered(item)):
                    found.append(Reach(item.lineno, item.name,
                                       f"{node.name}.{item.name} overrides a hook of a base class from another "
                                       "module"))
            for sub in ast.walk(node):
                if (isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Load) and is_private(sub.attr)
                        and isinstance(sub.value, ast.Name) and sub.value.id in ("self", "cls")
                        and sub.attr not in assigned):
                    found.append(Reach(sub.lineno, sub.attr,
                                       f"{ast.unparse(sub)}: a private attribute of {node.name}'s base class "
                                       "from another module"))
    return sorted(set(found), key=lambda r: (r.line, r.name))


# ----------------------------------------------------------------------------- the source


def all_reaches() -> dict[str, list[Reach]]:
    out: dict[str, list[Reach]] = {}
    for path in source_files():
        found = reaches(path.read_text())
        if found:
            out[path.relative_to(ROOT).as_posix()] = found
    return out


def test_no_private_name_reach_outside_the_adapters():
    bad = [f"{path}:{r.line}: {r.how}"
           for path, found in all_reaches().items() if path not in ADAPTERS
           for r in found if (path, r.name) not in PENDING]
    assert not bad, ("reaches into private names outside the adapters (make the name public, move the code "
                     "to the module that owns it, or go through the library's adapter):\n" + "\n".join(bad))


def test_every_adapter_exists_and_says_why():
    for path, reason in ADAPTERS.items():
        file = ROOT / path
        assert file.is_file(), f"{path} is listed as an adapter but does not exist"
        doc = ast.get_docstring(ast.parse(file.read_text())) or ""
        said = all(words in doc for words in ("Why the public API is not enough", "Checked against", "What breaks"))
        assert reason and said, f"{path}: the docstring must say why the public API is not enough, which " \
                                "version it was checked against, and what breaks if the library changes"


def test_pending_entries_are_still_needed():
    found = all_reaches()
    stale = [f"{path} {name}" for path, name in PENDING if not any(r.name == name for r in found.get(path, []))]
    assert not stale, "fixed, so remove from PENDING: " + ", ".join(stale)


# ----------------------------------------------------------------------------- the scan itself


def names(source: str) -> list[str]:
    return [r.name for r in reaches(source)]


@pytest.mark.parametrize("source,expected", [
    ("key = id(cell._tc)", ["_tc"]),
    ("filled = ws._cells.items()", ["_cells"]),
    ("from x import _y", ["_y"]),
    ("from extract.formats.office.docx import _marked_text", ["_marked_text"]),
    ("from streamlit.runtime._internal import thing", ["streamlit.runtime._internal"]),
    ("import pkg._private", ["pkg._private"]),
    ("value = getattr(store, '_file_metadata')", ["_file_metadata"]),
    ("import extract\nextract.formats._helper()", ["_helper"]),
    ("super()._launch(p)", ["_launch"]),
    ("from multiprocessing import popen_forkserver\n"
     "class P(popen_forkserver.Popen):\n"
     "    def _launch(self, process_obj):\n"
     "        return self._fds", ["_launch", "_fds"]),
    ("import argparse\nclass A(argparse.ArgumentParser):\n    def _print_message(self, m, f=None): pass",
     ["_print_message"]),
    ("from domain.models import Base\nclass C(Base):\n    def _hook(self): return self._base_state",
     ["_hook", "_base_state"]),
    ("from multiprocessing.context import ForkServerProcess\nclass J(ForkServerProcess):\n"
     "    @staticmethod\n    def _Popen(process_obj): return None", ["_Popen"]),
])
def test_the_scan_catches(source, expected):
    assert sorted(names(source)) == sorted(expected)


@pytest.mark.parametrize("source", [
    "self._x = 1\nprint(self._x, cls._y)",
    "print(__file__, __name__, obj.__class__, obj.__dict__, type(x).__mro__)",
    "row._replace(a=1); row._asdict(); Row._fields; Row._make([1]); Row._field_defaults",
    "import os\nos._exit(1)",
    "from __future__ import annotations\nfrom x import y as _y",
    "_helper()\n_CONSTANT = 1\ndef _private(): return _CONSTANT",
    "class Cache:\n    _shared = {}\n\ndef clear():\n    Cache._shared.clear()",
    "handler = getattr(self, '_' + kind)",
    # a private method of a class on a base of the same module, or one the module itself calls
    "class Base:\n    def _hook(self): self._state = 1\nclass C(Base):\n    def _hook(self): return self._state",
    "from pydantic import BaseModel, field_validator\nclass M(BaseModel):\n"
    "    @field_validator('x')\n    def _positive(cls, v): return v",
    "import socketserver\nclass H(socketserver.BaseRequestHandler):\n"
    "    def handle(self): self._answer()\n    def _answer(self): self._sent = True\n"
    "    def again(self): return self._sent",
])
def test_the_scan_ignores(source):
    assert names(source) == []
