"""Layers as a test: no module of ``cppdb/`` imports a higher layer, and no import cycle;
the product imports none of the development trees (``bench/``, ``devtools/``, ``tests/``).

The layer order is declared once, in docs/ARCHITECTURE.md §2 (the ``layers`` block), and
read from there; which tree may import which is declared once, in ``MAY_IMPORT`` below.
Every ``import`` counts — also the lazy ones inside functions and those under
``TYPE_CHECKING`` — since each is a dependency a reader must follow.
"""
from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cppdb"
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
ROOT_MODULE = "(root)"                       # the name of cppdb/__init__.py in the layer list

# The repository's code trees and the trees each may import: the product only itself, the
# development tools the product, the benchmarks both, the tests anything but the benchmarks.
MAY_IMPORT: dict[str, set[str]] = {
    "cppdb": {"cppdb"},
    "devtools": {"cppdb", "devtools"},
    "bench": {"cppdb", "devtools", "bench"},
    "tests": {"cppdb", "devtools", "tests"},
}
DEVELOPMENT = ("bench", "devtools")          # no import cycle inside or between these
# Imports across trees tolerated while other work moves the helper (importer, imported module
# -> why).  Each must still exist — the test fails once it is gone, so the list only shrinks.
PENDING_TREES: dict[tuple[str, str], str] = {}

# Upward edges tolerated while some other work removes them (edge -> why).  Each must still
# exist — the test fails once it is gone, so the list only shrinks; today it is empty.
PENDING: dict[tuple[str, str], str] = {}


def declared_layers(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """``name: module module …`` lines of the ```` ```text layers ```` block, lowest first."""
    block = text.split("```text layers\n", 1)[1].split("```", 1)[0]
    layers = []
    for line in block.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, modules = line.partition(":")
            layers.append((name.strip(), tuple(modules.split())))
    return layers


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """What one import statement names: ``a.b`` for ``from a import b`` (a module or not)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:                                # relative: from the module's package
        anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
        base = ".".join(anchor + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" for alias in node.names]


def imported_names(module: str, source: str, is_package: bool) -> list[str]:
    """Every dotted name one module's import statements name (relative ones resolved)."""
    return [name for node in ast.walk(ast.parse(source))
            for name in _targets(node, module, is_package)]


def module_graph(sources: Mapping[str, tuple[str, bool]],
                 packages: tuple[str, ...] = ("cppdb",)) -> dict[str, set[str]]:
    """Module → the modules of ``packages`` it imports; ``sources`` maps a module name to its
    source text and whether it is a package's ``__init__``.  A name that is not a module
    (``from a import f``) is an edge to the module that defines it (``a``)."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for module, (source, is_package) in sources.items():
        for name in imported_names(module, source, is_package):
            if name.split(".")[0] not in packages:
                continue
            while name not in sources and "." in name:
                name = name.rpartition(".")[0]
            if name in sources and name != module:
                graph[module].add(name)
    return graph


def package_sources(root: Path = PACKAGE) -> dict[str, tuple[str, bool]]:
    return {_module_name(path, root): (path.read_text("utf-8"), path.name == "__init__.py")
            for path in sorted(root.rglob("*.py"))}


def forbidden_imports(sources: Mapping[str, tuple[str, bool]],
                      may_import: Mapping[str, set[str]] = MAY_IMPORT) -> list[str]:
    """``module imports name`` for each import of a repository tree its own tree may not use."""
    found = []
    for module, (source, is_package) in sources.items():
        allowed = may_import[module.split(".")[0]]
        for name in imported_names(module, source, is_package):
            tree = name.split(".")[0]
            if tree in may_import and tree not in allowed:
                found.append(f"{module} imports {name}")
    return sorted(found)


def tree_sources(trees: tuple[str, ...]) -> dict[str, tuple[str, bool]]:
    return {name: text for tree in trees for name, text in package_sources(ROOT / tree).items()}


def layer_index(module: str, layers: list[tuple[str, tuple[str, ...]]],
                package: str = "cppdb") -> int:
    """The layer of the longest declared prefix of ``module``; a module in no layer fails."""
    relative = module[len(package) + 1:] if module != package else ROOT_MODULE
    best, index = -1, None
    for i, (_, members) in enumerate(layers):
        for member in members:
            if relative == member or relative.startswith(member + "."):
                if len(member) > best:
                    best, index = len(member), i
    if index is None:
        raise AssertionError(f"{module} is in no layer of docs/ARCHITECTURE.md §2")
    return index


def upward_imports(graph: Mapping[str, set[str]], layers: list[tuple[str, tuple[str, ...]]]
                   ) -> list[tuple[str, str]]:
    return sorted((a, b) for a, targets in graph.items() for b in targets
                  if layer_index(b, layers) > layer_index(a, layers))


def import_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return sorted(cycles)


@pytest.fixture(scope="module")
def layers():
    return declared_layers(ARCHITECTURE.read_text("utf-8"))


@pytest.fixture(scope="module")
def graph():
    return module_graph(package_sources())


def test_every_module_is_in_a_layer(graph, layers):
    for module in graph:
        layer_index(module, layers)


def test_no_module_imports_a_higher_layer(graph, layers):
    upward = upward_imports(graph, layers)
    names = [name for name, _ in layers]
    report = [f"{a} ({names[layer_index(a, layers)]}) imports {b} "
              f"({names[layer_index(b, layers)]})" for a, b in upward if (a, b) not in PENDING]
    assert not report, "\n".join(report)
    gone = [edge for edge in PENDING if edge not in upward]
    assert not gone, f"no longer imported, remove from PENDING: {gone}"


def test_no_import_cycle(graph):
    assert import_cycles(graph) == []


def test_the_checks_fire_on_a_synthetic_package(layers):
    sources = {
        "cppdb": ("", True),
        "cppdb.errors": ("from cppdb.text import normalize\n", False),      # core → text: up
        "cppdb.text": ("", True),
        "cppdb.text.normalize": ("from cppdb import errors\n", False),
        "cppdb.rank": ("", True),
        "cppdb.rank.a": ("def f():\n    from cppdb.rank.b import g\n", False),  # lazy, a cycle
        "cppdb.rank.b": ("from . import a\nfrom cppdb.rank import a as again\n", False),
    }
    graph = module_graph(sources)
    assert graph["cppdb.errors"] == {"cppdb.text.normalize"}
    assert graph["cppdb.rank.b"] == {"cppdb.rank.a"}
    assert upward_imports(graph, layers) == [("cppdb.errors", "cppdb.text.normalize")]
    assert import_cycles(graph) == [["cppdb.errors", "cppdb.text.normalize"],
                                    ["cppdb.rank.a", "cppdb.rank.b"]]
    with pytest.raises(AssertionError, match="in no layer"):
        layer_index("cppdb.nowhere", layers)


def test_each_tree_imports_only_the_trees_it_may():
    found = forbidden_imports(tree_sources(tuple(MAY_IMPORT)))
    pending = {f"{a} imports {b}" for a, b in PENDING_TREES}
    assert [f for f in found if f.rpartition(".")[0] not in pending and f not in pending] == []
    gone = [edge for edge in pending
            if not any(f == edge or f.rpartition(".")[0] == edge for f in found)]
    assert not gone, f"no longer imported, remove from PENDING_TREES: {gone}"


def test_the_development_trees_have_no_import_cycle():
    assert import_cycles(module_graph(tree_sources(DEVELOPMENT), DEVELOPMENT)) == []


def test_the_tree_check_fires_on_synthetic_modules():
    sources = {
        "cppdb.a": ("def f():\n    from devtools import screens\n", False),  # product → dev
        "devtools.b": ("from bench.common import record\nfrom cppdb import a\n", False),
        "tests.test_c": ("import bench.bench_rank\nimport polars\n", False),
        "bench.d": ("from devtools.b import x\nfrom . import common\n", False),
    }
    assert forbidden_imports(sources) == ["cppdb.a imports devtools.screens",
                                          "devtools.b imports bench.common.record",
                                          "tests.test_c imports bench.bench_rank"]


# -- engines: chunks go where the run's engine puts them; no stage branches on its name ------
ENGINE_NAMES = {"local", "spark"}


def engine_branches(source: str) -> list[int]:
    """Lines comparing something with an engine's name (``engine.name != "local"``)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Constant) and s.value in ENGINE_NAMES for s in sides):
                lines.append(node.lineno)
    return lines


def test_an_engine_branch_is_found():                           # the must-fire case
    assert engine_branches('if engine.name != "local":\n    pass\n') == [1]
    assert engine_branches('run.run_parts(ALIGNMENT, n, chunk, part)\n') == []


def test_no_module_outside_the_engine_branches_on_an_engine_name():
    found = {module: lines for module, (source, _) in package_sources().items()
             if not module.startswith("cppdb.engine")
             and (lines := engine_branches(source))}
    assert found == {}, f"engine-name branches outside cppdb/engine: {found}"
