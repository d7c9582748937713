"""The house as the folders show it (docs/architecture.md), checked on the source.

Ground to top: ``domain`` (models, content, errors, settings, limits, policy) imports
nothing else of the project; ``extract``, ``storage``, ``retrieve`` and ``corpus`` stand
on it; ``core.services`` (grouped by use case) orchestrates them; the CLI
(``core.__main__``, ``core.commands``) and the UI (``ui``, ``app_pages``) are front ends
over the services. ``golden`` and ``bench`` are clients: nothing of the product imports
them. Every import counts wherever it is written, inside a function too, so an import
moved into a function cannot dodge a rule; every source file falls under a rule, so a
new folder cannot escape; and no package imports one that imports it back.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PRODUCT = ("domain", "extract", "storage", "retrieve", "corpus", "core", "ui", "app_pages", "Home", "app")
TOOLS = ("golden", "bench")  # the eval gate and the benchmarks drive the product; it never imports them
UI = ("ui", "app_pages", "streamlit")
CLI = ("core.__main__", "core.commands")
DATABASES = ("duckdb", "lancedb", "tantivy")
DOC_TYPES = ("extract.lab", "extract.intake", "extract.referral", "extract.workbook", "extract.hl7", "extract.fax")


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function or class; for
    ``from package import name`` both ``package`` and ``package.name`` (the name may be
    a module)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def files(*patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in ROOT.glob(pattern) if "__pycache__" not in p.parts)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def project_imports(path: Path) -> set[str]:
    return {m for m in imported_modules(path) if within(m, PRODUCT + TOOLS)}


SERVICE_GROUPS = ("admin", "checks", "review", "answer", "ingest", "interfaces", "evals", "brief", "exchange",
                  "backfill")
# A service group imports only the shared context (core.services.workbench) and the
# groups it names here: accounts and patients are the floor, review curates the chart,
# ingest reads documents into it (and promotes through review), interfaces receive
# from outside systems and hand to ingest; checks run the chart checks, which every
# writer of the chart runs again and answers cite.
SERVICE_GROUP_MAY_USE = {
    "admin": (),
    "checks": ("admin",),
    "review": ("admin", "checks"),
    "answer": ("admin", "checks"),
    "ingest": ("admin", "review", "checks"),
    "interfaces": ("admin", "review", "ingest", "checks"),
    "evals": (),
    # The patient brief reads the chart as answers do; its alerts come from the chart
    # checks (issue 24) when the build has them.
    "brief": ("admin", "review", "answer", "checks"),
    "exchange": ("admin",),
    # The batch backfill stores through the upload and persists through the worker's job.
    "backfill": ("admin", "ingest"),
}


def allowed_only(*prefixes: str):
    """Of the project's own modules only these (libraries are other rules' business)."""
    return lambda module: not within(module, PRODUCT + TOOLS) or within(module, prefixes)


RULES = [
    # (files, is an import allowed?, why)
    (("domain/**/*.py",), allowed_only("domain"),
     "the ground (domain) imports nothing else of the project"),
    (("domain/policy/**/*.py",), lambda m: not within(m, ("domain.settings",)),
     "policies are pure: they take values, they do not read the environment"),
    (("extract/**/*.py",), allowed_only("domain", "extract"),
     "extract/ stands on the ground only: no database, services, retrieval or UI"),
    (("extract/values/*.py",), allowed_only("domain", "extract.values"),
     "value rules (numbers, dates, ranges, flags, lists, labels) know no format or document type"),
    (("extract/formats/**/*.py",), allowed_only("domain", "extract.formats", "extract.values", "extract.sniff"),
     "formats turn bytes into content; they know no document type and no registry"),
    (("extract/fax/*.py",), lambda m: not within(m, ("extract.workbook", "extract.hl7", "extract.registry"))
     and (not within(m, ("extract.referral",)) or m == "extract.referral.extractor"
          or m.startswith("extract.referral.extractor.")),
     "a fax packet is made of lab, intake and letter pages, and reads them with those readers only "
     "(a letter by the letter reader's entry point)"),
    (("storage/*.py",), allowed_only("domain", "storage"),
     "storage knows no services, extraction, retrieval or UI"),
    (("retrieve/*.py",), lambda m: within(m, ("domain", "retrieve", "corpus", "storage.protocols", "storage.keyword_index",
                                              "storage.vector_store")) or not within(m, PRODUCT + TOOLS),
     "retrieval searches the stores it is given: no services, repositories, DuckDB or UI"),
    (("retrieve/*.py",), lambda m: not within(m, ("duckdb",) + UI), "retrieval never opens DuckDB or draws"),
    (("corpus/*.py",), allowed_only("domain", "corpus"), "the corpus is checked-in text and its loader"),
    (("domain/**/*.py", "extract/**/*.py", "corpus/*.py"), lambda m: not within(m, DATABASES + UI),
     "the ground, extraction and the corpus open no database and draw nothing"),
    (("core/__init__.py", "core/services/**/*.py", "core/telemetry.py", "core/collector.py"),
     lambda m: not within(m, UI + CLI + TOOLS + ("core.__main__",)),
     "services never import the UI, the CLI or a client of the product"),
    (("core/__main__.py", "core/commands/*.py"), lambda m: not within(m, UI + TOOLS),
     "the CLI is a front end over the services"),
    (("ui/*.py",), lambda m: not within(m, ("storage", "extract", "retrieve", "corpus", "app_pages") + DATABASES
                                        + TOOLS + CLI) or m == "core.commands.handover"
     or m.startswith("core.commands.handover."),
     "the UI helpers call services; only the app's endpoint handler comes from the commands"),
    (("app_pages/*.py", "Home.py", "app.py"),
     lambda m: not within(m, ("storage", "extract", "retrieve", "corpus", "domain.settings", "core.telemetry")
                          + CLI + DATABASES + TOOLS),
     "pages call services and ui/; no SQL, extractors, retrieval, settings or CLI in a page"),
    (("golden/*.py", "bench/*.py"), lambda m: not within(m, ("ui", "app_pages") + CLI),
     "the eval gate and benchmarks drive the product's services, not its UI or CLI module"),
]


def _doc_type_rule(path: Path, module: str) -> bool:
    """A document type's modules may import their own package, not another's."""
    own = ".".join(module_name(path).split(".")[:2])
    return not within(module, DOC_TYPES + ("extract.registry", "extract.normalize")) or within(module, (own,))


def _service_group_rule(path: Path, module: str) -> bool:
    group = module_name(path).split(".")[2]
    if not within(module, ("core.services",)) or module == "core.services" or within(module, ("core.services.workbench",)):
        return True
    target = module.split(".")[2]
    return target == group or target in SERVICE_GROUP_MAY_USE[group]


PATH_RULES = [
    # rules that depend on which file imports
    (("extract/lab/*.py", "extract/intake/*.py", "extract/referral/*.py", "extract/workbook/*.py",
      "extract/hl7/*.py"), _doc_type_rule,
     "a document type reads content, never another document type's package or the registry"),
    (tuple(f"core/services/{g}/*.py" for g in SERVICE_GROUPS), _service_group_rule,
     "a service group uses only the groups beneath it (SERVICE_GROUP_MAY_USE)"),
]


@pytest.mark.parametrize("patterns, allowed, why", RULES, ids=[r[2] for r in RULES])
def test_imports_respect_the_layers(patterns, allowed, why):
    offenders = [f"{path.relative_to(ROOT)} imports {module}"
                 for path in files(*patterns) for module in sorted(imported_modules(path)) if not allowed(module)]
    assert not offenders, f"{why}: " + "; ".join(offenders)


@pytest.mark.parametrize("patterns, allowed, why", PATH_RULES, ids=[r[2] for r in PATH_RULES])
def test_imports_respect_the_layers_inside_a_layer(patterns, allowed, why):
    offenders = [f"{path.relative_to(ROOT)} imports {module}"
                 for path in files(*patterns) for module in sorted(project_imports(path)) if not allowed(path, module)]
    assert not offenders, f"{why}: " + "; ".join(offenders)


def test_nothing_of_the_product_imports_golden_or_bench():
    offenders = [f"{p.relative_to(ROOT)} imports {m}" for p in product_files()
                 for m in sorted(imported_modules(p)) if within(m, TOOLS)]
    assert not offenders, "golden/ and bench/ are clients of the product: " + "; ".join(offenders)


def test_an_import_inside_a_function_is_checked_like_any_other(tmp_path):
    source = tmp_path / "hidden.py"
    source.write_text("def later():\n    from storage import facts_repo\n    import golden.gate\n")
    assert {"storage", "storage.facts_repo", "golden.gate"} <= imported_modules(source)


def product_files() -> list[Path]:
    return [p for p in source_files() if p.relative_to(ROOT).parts[0] not in TOOLS]


def source_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py")
                  if not {"tests", ".venv", "__pycache__"} & set(p.relative_to(ROOT).parts)
                  and not any(part.startswith(".") for part in p.relative_to(ROOT).parts))


def import_graph(depth: int | None = None) -> dict[str, set[str]]:
    """Which source module (or package, cut to ``depth`` parts) imports which."""
    modules = {module_name(p): p for p in source_files()}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    def cut(name: str) -> str:
        return ".".join(name.split(".")[:depth]) if depth else name

    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for imported in imported_modules(path):
            target = resolve(imported)
            # a package's __init__ and its own modules are one thing
            if target and not (name + ".").startswith(target + ".") and cut(target) != cut(name):
                graph[cut(name)].add(cut(target))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("depth", [None, 1, 2, 3], ids=["modules", "top folders", "packages", "subpackages"])
def test_no_cycle_between_modules_or_packages(depth):
    found = cycles(import_graph(depth))
    assert not found, f"these import each other (at depth {depth}): {found}"


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_rule_looks_at_real_files():
    for patterns, _, why in RULES + PATH_RULES:
        assert files(*patterns), why


def test_every_source_file_is_under_a_rule():
    covered = {p for patterns, _, _ in RULES for p in files(*patterns)}
    missing = sorted(str(p.relative_to(ROOT)) for p in set(source_files()) - covered)
    assert not missing, f"add these to a rule in tests/test_layers.py: {missing}"
