"""docs/ARCHITECTURE.md keeps up with the code: its backend table names every registered
backend, its artifact table every schema of cppdb/schema.py."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cppdb import schema
from cppdb.registry import CAPABILITIES

DOC = (Path(__file__).resolve().parents[1] / "docs" / "ARCHITECTURE.md").read_text("utf-8")


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
