"""The docs keep up with the code: ARCHITECTURE's backend table names every registered
backend and its artifact table every schema of cppdb/schema.py; every doc names only files
and settings that exist; README and the pages stay short enough to be reference."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import polars as pl
import pytest

from cppdb import schema
from cppdb.registry import CAPABILITIES

DOC = (Path(__file__).resolve().parents[2] / "docs" / "ARCHITECTURE.md").read_text("utf-8")


def _section(title: str) -> str:
    start = DOC.index(title)
    return DOC[start:DOC.index("\n## ", start) if "\n## " in DOC[start:] else len(DOC)]


@pytest.mark.parametrize("capability", sorted(CAPABILITIES))
def test_backend_table_lists_every_registered_name(capability):
    rows = [line for line in _section("### 5.1 Registry").splitlines()
            if line.startswith(f"| `{capability}`") or f"/ `{capability}`" in line]
    assert rows, f"no row for capability {capability}"
    for name in CAPABILITIES[capability].registered:
        assert any(f"`{name}`" in row for row in rows), f"{name} missing from its row"


SCHEMAS = sorted(name for name, value in vars(schema).items()
                 if name.isupper() and isinstance(value, dict)
                 and all(isinstance(v, (pl.DataType, type)) for v in value.values()))


@pytest.mark.parametrize("name", SCHEMAS)
def test_artifact_table_names_every_schema(name):
    assert f"`{name}`" in _section("## 4. Artifacts and schemas")


def test_schemas_were_found():
    assert {"PAIR_COLUMNS", "OCCURRENCE_SCHEMA", "COMPRESSION_RECORD_SCHEMA"} <= set(SCHEMAS)


# -- every doc names files that exist and settings that exist --------------------------------
ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PATH_REF = re.compile(r"`((?:cppdb|devtools|bench|tests|docs|data)/[\w./-]*[\w/])")
SETTING_REF = re.compile(r"`([a-z_]+)\.([a-z_][a-z_0-9.-]*)(?=[`\s=])")
FILE_SUFFIXES = (".parquet", ".json", ".jsonl", ".md", ".py", ".toml", ".tsv", ".txt")
#: outputs of the benchmarks, not files of the repository
GENERATED = ("bench/results",)
# Stale references that their docs' owners are fixing in other work (doc, reference -> why).
# Each must still be there — the test fails once it is gone, so the list only shrinks.
PENDING: dict[tuple[str, str], str] = {
    ("docs/corpora.md", "data/nejm-open-access.tar.gz"): "a path inside a downloaded archive",
    ("docs/corpora.md", "data/ted_raw/ted_train_en-zh.raw"): "a path inside a downloaded archive",
}


def _defaults() -> dict[str, dict]:
    return {path.stem: tomllib.loads(path.read_text("utf-8"))
            for path in (ROOT / "cppdb" / "defaults").glob("*.toml")}


def stale_references(doc: Path, text: str, defaults: dict[str, dict]) -> set[tuple[str, str]]:
    """(doc, reference) for each backticked repository path that does not exist and each
    ``section.key`` setting the defaults do not have (``features.table.X``, a module of a
    package named like a section, is not a setting)."""
    name = doc.relative_to(ROOT).as_posix()
    found = {(name, ref) for ref in PATH_REF.findall(text)
             if not ref.startswith(GENERATED) and not (ROOT / ref.rstrip("/")).exists()}
    for section, key in SETTING_REF.findall(text):
        first = key.split(".")[0]
        if (section not in defaults or f".{key}".endswith(FILE_SUFFIXES)
                or (ROOT / "cppdb" / section / f"{first}.py").exists()):
            continue
        node: object = defaults[section]
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            found.add((name, f"{section}.{key}"))
    return found


def test_docs_name_only_files_and_settings_that_exist():
    defaults = _defaults()
    found = set().union(*(stale_references(doc, doc.read_text("utf-8"), defaults)
                          for doc in DOCS))
    assert sorted(found - set(PENDING)) == []
    assert sorted(set(PENDING) - found) == [], "fixed: remove from PENDING"


def test_a_stale_reference_is_found():                          # the must-fire case
    doc = ROOT / "docs" / "x.md"
    text = ("`cppdb/nowhere.py`, `cppdb/schema.py`, `rank.no_such_key`, `rank.tier_diversity`,"
            " `features.table.contained_in_order`, `bench/results/rank.jsonl`\n")
    assert stale_references(doc, text, _defaults()) == {("docs/x.md", "cppdb/nowhere.py"),
                                                        ("docs/x.md", "rank.no_such_key")}


# -- docs are reference: README and every page stay short enough to read -----------------------
README_LINES = 160
DOC_LINES = 400
# Pages over the limit while their owners shorten them (page -> why); the list only shrinks.
LONG_PAGES: dict[str, str] = {}


def test_readme_and_docs_are_short():
    assert len((ROOT / "README.md").read_text("utf-8").splitlines()) <= README_LINES
    long = {doc.relative_to(ROOT).as_posix() for doc in DOCS[1:]
            if len(doc.read_text("utf-8").splitlines()) > DOC_LINES}
    assert sorted(long - set(LONG_PAGES)) == []
    assert sorted(set(LONG_PAGES) - long) == [], "short now: remove from LONG_PAGES"
