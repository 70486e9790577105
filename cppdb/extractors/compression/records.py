"""``records.parquet`` of build-compression: outcomes as typed rows, and the output lines.

Each row has the columns of :data:`cppdb.schema.COMPRESSION_RECORD_SCHEMA`.  The lines of
``compressions.jsonl`` and ``rejected.jsonl`` are rebuilt from a row by :func:`output_record`,
so the Parquet table is the one source of both files and of ``report.json``.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import polars as pl

from cppdb.extractors.compression.pipeline import Outcome
from cppdb.schema import COMPRESSION_RECORD_SCHEMA

#: the output fields of a pair that was parsed and compressed, in output order
COMPRESSED_FIELDS = ("tokens", "upos", "heads", "deprels", "labels", "compression", "links",
                     "keywords", "dtt_added", "compression_rate", "compression_chars",
                     "headline_chars", "sentence_chars", "headline_ratio")
ROUNDED = frozenset({"compression_rate", "headline_ratio"})   # 4 places in the output


def _cell(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def outcome_frame(outcomes: Sequence[Outcome]) -> pl.DataFrame:
    """One typed row per outcome."""
    rows = [{name: _cell(getattr(o, name)) for name in COMPRESSION_RECORD_SCHEMA}
            for o in outcomes]
    return pl.DataFrame(rows, schema=COMPRESSION_RECORD_SCHEMA)


def _link(link: dict[str, Any]) -> dict[str, Any]:
    """A link as ``Link.to_json`` wrote it (``matched`` only where there is one)."""
    return {k: v for k, v in link.items() if k != "matched" or v}


def output_record(row: dict[str, Any]) -> dict[str, Any]:
    """The JSONL object of one records.parquet row (``DataFrame.iter_rows(named=True)``):
    carried input fields, line, headline, sentence, then what the pair reached."""
    record: dict[str, Any] = {c["name"]: json.loads(c["json"]) for c in row["carried"]}
    record.update(line=row["line"], headline=row["headline"], sentence=row["sentence"])
    if row["tokens"] is None:                 # rejected before parsing
        record.update(rule=row["rule"], detail=row["detail"])
        if row["links"] is not None:
            record["links"] = [_link(link) for link in row["links"]]
        return record
    for name in COMPRESSED_FIELDS:
        value = row[name]
        if name == "links":
            value = [_link(link) for link in value]
        record[name] = round(value, 4) if name in ROUNDED else value
    if row["status"] == "rejected":           # compressed, then rejected (too long)
        record.update(rule=row["rule"], detail=row["detail"])
    return record
