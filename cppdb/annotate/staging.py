"""Stage the annotate stage's input: stream the parallel text once into the run directory.

The usable pairs go to a Parquet file (``id``, ``zh``, ``en``, ``pretokenized``; row groups
of ``annotate.chunk_size``) and the problem lines to ``rejected.jsonl``, batch by batch, so
the driver never holds the corpus.  Every engine's chunks then read only their own rows.
Both files are written atomically (the Parquet last), so a staged file on disk is complete:
an interrupted run resumes from it without reading the input again.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from cppdb.io import atomic_path
from cppdb.readers.parallel import ParallelSource, ParallelText, problem_of
from cppdb.readers.stream import EncodingRedetected
from cppdb.schema import ID

STAGED_INPUT = ".annotate-input.parquet"
_META = b"cppdb.staged"


@dataclass(frozen=True)
class StagedInput:
    """A staged input file and what staging counted."""

    path: Path
    pairs: int
    rejected: int
    pretokenized: bool
    identity: str = ""


def staged_frame(ids: list[int], zh: list, en: list, pretokenized: bool) -> pl.DataFrame:
    """One batch of usable pairs in the staged schema."""
    kind = pl.List(pl.String) if pretokenized else pl.String
    items = (lambda xs: [list(x) for x in xs]) if pretokenized else list
    frame = pl.DataFrame({ID: ids, "zh": items(zh), "en": items(en)},
                         schema={ID: pl.Int64, "zh": kind, "en": kind})
    return frame.with_columns(pl.lit(pretokenized).alias("pretokenized"))


def stage_source(source: ParallelSource | ParallelText, path: Path, rejected: Path, *,
                 batch_rows: int) -> StagedInput:
    """Stream ``source`` into ``path`` (usable pairs) and ``rejected`` (problems); reuse a
    complete staged file left by an interrupted run."""
    if isinstance(source, ParallelText):
        source = _InMemory(source)
    if path.exists() and rejected.exists():
        staged = read_staged(path)
        if staged.identity == _identity(source):
            return staged
    while True:
        try:
            return _write_staged(source, path, rejected, batch_rows)
        except EncodingRedetected as redo:   # the head sample misled: read again, once
            source.redetected(redo)


def _write_staged(source: ParallelSource, path: Path, rejected: Path,
                  batch_rows: int) -> StagedInput:
    import pyarrow.parquet as pq

    pretokenized = source.pretokenized
    schema = staged_frame([], [], [], pretokenized).to_arrow().schema
    pairs = problems = 0
    # the Parquet is renamed last (outer context): a staged file on disk has its rejected file
    with atomic_path(path) as tmp:
        with atomic_path(rejected) as rej_tmp, rej_tmp.open("w", encoding="utf-8") as rej, \
                pq.ParquetWriter(tmp, schema) as writer:
            usable: list = []
            for row in source.rows():
                if row[3] is not None:
                    rej.write(json.dumps(problem_of(row).to_record(source.source),
                                         ensure_ascii=False) + "\n")
                    problems += 1
                    continue
                usable.append(row)
                if len(usable) == batch_rows:       # one row group per annotate chunk
                    pairs += _write_group(writer, schema, usable, pretokenized)
                    usable = []
            if usable:
                pairs += _write_group(writer, schema, usable, pretokenized)
            writer.add_key_value_metadata({_META: json.dumps(
                {"pairs": pairs, "rejected": problems, "pretokenized": pretokenized,
                 "identity": _identity(source)})})
    return StagedInput(path, pairs, problems, pretokenized, _identity(source))


def _write_group(writer: Any, schema: Any, rows: list, pretokenized: bool) -> int:
    frame = staged_frame([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                         pretokenized)
    writer.write_table(frame.to_arrow().cast(schema), row_group_size=len(rows))
    return len(rows)


def read_staged(path: Path) -> StagedInput:
    import pyarrow.parquet as pq

    meta = json.loads(pq.read_metadata(path).metadata[_META])
    return StagedInput(path, int(meta["pairs"]), int(meta["rejected"]),
                       bool(meta["pretokenized"]), meta.get("identity", ""))


def _identity(source: ParallelSource) -> str:
    """What the staged rows depend on besides the files' bytes (the run's fingerprint has
    their checksums): a staged file of another input form, limit or length limit is redone."""
    if isinstance(source, _InMemory):
        return json.dumps({"in_memory": source.source, "pairs": len(source.text),
                           "problems": len(source.text.problems)})
    return json.dumps({"kind": source.kind, "files": [str(f) for f in source.files],
                       "limit": source.limit, "line_limit": source.line_limit,
                       "max_chars": source.max_chars})


def read_staged_rows(path: str | Path, start: int, stop: int) -> ParallelText:
    """Rows ``[start, stop)`` of a staged file (only their row groups are read)."""
    rows = pl.scan_parquet(path).slice(start, stop - start).collect()
    pretokenized = bool(rows["pretokenized"][0]) if rows.height else False
    convert = (lambda xs: tuple(tuple(x) for x in xs)) if pretokenized else tuple
    return ParallelText(tuple(rows[ID].to_list()), convert(rows["zh"].to_list()),
                        convert(rows["en"].to_list()), pretokenized=pretokenized)


class _InMemory(ParallelSource):
    """A ParallelText already in memory, served as a source (tests, API callers)."""

    def __init__(self, text: ParallelText) -> None:
        super().__init__("pretokenized" if text.pretokenized else "pair", (), 0, text.source)
        self.text = text

    def rows(self):  # type: ignore[override]
        rows = [(i, z, e, None) for i, z, e in zip(self.text.ids, self.text.zh, self.text.en)]
        rows += [(p.line - 1, p.zh, p.en, p.reason) for p in self.text.problems]
        return iter(sorted(rows, key=lambda r: r[0]))
