"""Which pair table a database path means: a run directory, an HF export, or one export file.

* a run directory after ``cppdb rank``: ``RUN/ranking/ranked_pairs.parquet`` (scores, ranks,
  tiers) joined with the ``f_*`` columns of ``RUN/ranking/features.parquet`` when present;
* a run directory before ranking: its phrase/pattern/sentence pair tables, unscored;
* a directory written by ``cppdb export --format hf``: its ``data/**/*.parquet`` shards;
* a file written by ``cppdb export`` (``.parquet``, ``.jsonl``, ``.tsv``, ``.ppdb``).

The index lives next to the data (``RUN/lookup/index.duckdb``, ``DIR/lookup.duckdb`` or
``FILE.lookup.duckdb``) and is rebuilt when any source file changes (size or mtime).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.export import read_pairs
from cppdb.rank.pairs import pair_table_paths

RANKING_DIR = S.RANKING_DIR
RANKED, FEATURES = S.RANKED_FILE, S.FEATURES_FILE
HF_DATA_DIR = "data"


@dataclass(frozen=True)
class PairSource:
    kind: str                 # "ranked-run" | "run" | "hf" | "file"
    files: tuple[Path, ...]   # every file the index depends on
    index_path: Path
    #: the run directory behind the pairs (its model, features and occurrences explain a
    #: score: ``cppdb lookup --explain``); None for an export
    run_dir: Path | None = None

    def fingerprint(self, version: str) -> str:
        digest = hashlib.sha256(version.encode())
        for path in self.files:
            stat = path.stat()
            digest.update(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
        return digest.hexdigest()[:16]


def resolve_source(path: str | Path, index_path: str | Path | None = None) -> PairSource:
    """Find the pair table(s) behind ``path``; raise E200 when there is none."""
    path = Path(path)
    if not path.exists():
        raise BadInputError(f"database {path} does not exist",
                            hint="pass a run directory (after `cppdb extract-*`, ideally "
                                 "`cppdb rank`) or a file written by `cppdb export`")
    if path.is_file():
        kind, files, index = "file", (path,), path.with_name(path.name + ".lookup.duckdb")
    elif (path / RANKING_DIR / RANKED).exists():
        ranked = path / RANKING_DIR / RANKED
        extra = (path / RANKING_DIR / FEATURES,) if (path / RANKING_DIR / FEATURES).exists() else ()
        kind, files, index = "ranked-run", (ranked, *extra), path / "lookup" / "index.duckdb"
    elif (path / HF_DATA_DIR).is_dir() and any((path / HF_DATA_DIR).rglob("*.parquet")):
        kind, files = "hf", tuple(sorted((path / HF_DATA_DIR).rglob("*.parquet")))
        index = path / "lookup.duckdb"
    else:
        kind, files, index = "run", tuple(pair_table_paths(path)), path / "lookup" / "index.duckdb"
    run_dir = path if kind in ("ranked-run", "run") else None
    return PairSource(kind, files, Path(index_path) if index_path else index, run_dir)


def _ranked_with_features(ranked: Path, features: Path | None) -> pl.LazyFrame:
    lf = pl.scan_parquet(ranked)
    if features is None:
        return lf
    names = pl.scan_parquet(features).collect_schema().names()
    wanted = [n for n in names if n.startswith("f_")]
    if not wanted:
        return lf
    # a pair is ranked once per LHS label, each row with its own pivots and features
    keys = [S.TYPE, S.SOURCE, S.TARGET]
    if S.LHS in names and S.LHS in lf.collect_schema().names():
        keys.insert(1, S.LHS)
    feats = pl.scan_parquet(features).select(keys + wanted).unique(keys, keep="first")
    return lf.join(feats, on=keys, how="left", maintain_order="left", nulls_equal=True)


def scan_pairs(source: PairSource) -> pl.LazyFrame:
    """The pair table as one LazyFrame (columns as written by the pipelines/exports)."""
    if source.kind == "ranked-run":
        feats = source.files[1] if len(source.files) > 1 else None
        return _ranked_with_features(source.files[0], feats)
    if source.kind in ("hf", "run"):
        return pl.concat([pl.scan_parquet(p) for p in source.files], how="diagonal_relaxed")

    return read_pairs(source.files[0]).lazy()
