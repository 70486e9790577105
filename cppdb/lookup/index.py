"""The DuckDB index file of a pair table: built once, queried in milliseconds.

Why DuckDB: it reads Parquet natively (the build streams the pair table without loading it
into Python), stores columns compressed, and a table *sorted by the lookup key* lets its
zone maps (per-row-group min/max) skip all but one or two row groups of 16k rows for
``key = ?``, so no separate B-tree is needed (an ART index on ``key`` was not faster).  SQLite would need every row converted through Python (or a
CSV detour) and a B-tree index that is larger than the data; see docs/lookup.md for the
measurements behind the choice.

Tables: ``pairs`` (every column of the pair table + ``key``, ``shape``, ``fixed``,
``order_score`` and ``relation_group`` (:mod:`cppdb.rank.relation_groups`), sorted by type, key, order_score desc), ``pattern_keys`` (one row per
distinct pattern source: ``key``, ``fixed``) for fixed-word search, and ``meta``.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

from cppdb import schema as S
from cppdb.errors import BackendUnavailableError
from cppdb.lookup.keys import key_exprs
from cppdb.lookup.source import PairSource, scan_pairs
from cppdb.rank.relation_groups import GROUP, group_expr, label_expr

INDEX_VERSION = "cppdb-lookup/2"
ORDER = "order_score"
ROW_GROUP_SIZE = 16_384
SCORE = "score"


def connect(path: Path, read_only: bool = True) -> Any:
    try:
        import duckdb
    except ImportError as exc:
        raise BackendUnavailableError("the lookup index needs duckdb, which is not installed",
                                      hint="pip install duckdb") from exc
    return duckdb.connect(str(path), read_only=read_only)


def _order_expr(names: list[str]) -> pl.Expr:
    """What ranks paraphrases: the ranker's score, else the pivot probability, else count."""
    for name in (SCORE, S.P_TGT_GIVEN_SRC, S.COUNT):
        if name in names:
            return pl.col(name).cast(pl.Float64).alias(ORDER)
    return pl.lit(0.0).alias(ORDER)


def _prepared(source: PairSource) -> pl.LazyFrame:
    lf = scan_pairs(source)
    names = lf.collect_schema().names()
    if S.TYPE not in names:
        lf = lf.with_columns(pl.lit("phrase").alias(S.TYPE))
    # the group is stored, not computed per query: `--relation` filters before the LIMIT
    return lf.with_columns(*key_exprs(S.SOURCE), _order_expr(names),
                           group_expr(label_expr(names)).alias(GROUP))


def stored_fingerprint(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        con = connect(path)
    except Exception:   # a half-written or foreign file: rebuild it
        return None
    try:
        row = con.execute("SELECT value FROM meta WHERE name = 'fingerprint'").fetchone()
        return row[0] if row else None
    except Exception:
        return None
    finally:
        con.close()


def build_index(source: PairSource, threads: int = 2, memory_limit: str = "1GB") -> dict[str, Any]:
    """Write ``source.index_path`` atomically; return build statistics."""
    started = time.perf_counter()
    target = source.index_path
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".lookup-", dir=target.parent))
    try:
        staged = work / "pairs.parquet"
        _prepared(source).sink_parquet(staged)
        tmp_db = work / "index.duckdb"
        con = connect(Path(":memory:"), read_only=False)
        try:
            # small row groups: a key lookup reads one group of 16k rows, not of 123k
            con.execute(f"ATTACH '{tmp_db}' AS built (ROW_GROUP_SIZE {ROW_GROUP_SIZE})")
            con.execute("USE built")
            con.execute(f"SET threads = {int(threads)}")
            con.execute(f"SET memory_limit = '{memory_limit}'")
            con.execute(f"SET temp_directory = '{work / 'spill'}'")
            con.execute("SET preserve_insertion_order = false")
            con.execute(f"CREATE TABLE pairs AS SELECT * FROM read_parquet('{staged}') "
                        f"ORDER BY {S.TYPE}, key, {ORDER} DESC, {S.TARGET}")
            con.execute("CREATE TABLE pattern_keys AS SELECT key, any_value(fixed) AS fixed "
                        f"FROM pairs WHERE {S.TYPE} = 'pattern' GROUP BY key ORDER BY fixed")
            rows = con.execute("SELECT count(*) FROM pairs").fetchone()[0]
            con.execute("CREATE TABLE meta (name VARCHAR, value VARCHAR)")
            meta = {"fingerprint": source.fingerprint(INDEX_VERSION), "kind": source.kind,
                    "version": INDEX_VERSION, "rows": str(rows),
                    "sources": "\n".join(str(p) for p in source.files)}
            con.executemany("INSERT INTO meta VALUES (?, ?)", list(meta.items()))
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp_db, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"rows": rows, "seconds": time.perf_counter() - started,
            "bytes": target.stat().st_size, "path": str(target)}


def ensure_index(source: PairSource, rebuild: bool = False) -> dict[str, Any] | None:
    """Build the index when it is missing, stale (a source file changed) or ``rebuild``."""
    current = source.fingerprint(INDEX_VERSION)
    if not rebuild and stored_fingerprint(source.index_path) == current:
        return None
    return build_index(source)
