"""Imports of cppdb's own modules sit at the top of each module: at most ``LIMIT`` stay inside
function bodies, each with a one-line comment saying why (an import cycle, or keeping
``cppdb --help`` free of stage code), on its line or on the line above its group."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "cppdb"
LIMIT = 20


def _own(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "cppdb"
    return isinstance(node, ast.Import) and any(a.name.split(".")[0] == "cppdb"
                                                for a in node.names)


def lazy_imports(source: str) -> list[tuple[int, bool]]:
    """(line, has a reason) of each import of a cppdb module inside a function body; the
    reason is a comment on the import's line, or on the line above its run of imports."""
    lines = source.splitlines()
    found: dict[int, bool] = {}
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if _own(node) and node.lineno not in found:
                above = node.lineno - 2
                while above >= 0 and lines[above].lstrip().startswith(("from ", "import ")):
                    above -= 1
                reason = "#" in lines[node.lineno - 1] or (
                    above >= 0 and lines[above].lstrip().startswith("#"))
                found[node.lineno] = reason
    return sorted(found.items())


def test_lazy_imports_are_found_with_and_without_a_reason():       # the must-fire case
    source = ('import cppdb.io\n'
              'def f():\n'
              '    from cppdb.run import RunDir\n'
              '    import numpy\n'
              'def g():\n'
              '    # lazy: an import cycle (the target imports this module)\n'
              '    from cppdb.rank import pipeline\n'
              '    from cppdb.rank.pairs import read_pairs\n'
              '    from . import sibling  # the package imports this module\n')
    assert lazy_imports(source) == [(3, False), (7, True), (8, True), (9, True)]


def test_few_imports_of_cppdb_modules_inside_functions_each_with_a_reason():
    found = {f"{path.relative_to(PACKAGE.parent)}:{line}": reason
             for path in sorted(PACKAGE.rglob("*.py"))
             for line, reason in lazy_imports(path.read_text("utf-8"))}
    assert [where for where, reason in found.items() if not reason] == []
    assert len(found) <= LIMIT, "\n".join(found)
