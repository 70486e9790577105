"""Lookup index: build time, index size and query latency on generated pair tables.

    nice python -m bench.bench_lookup [--pairs 1000000 10000000] [--sqlite]

A synthetic ranked run (``ranking/ranked_pairs.parquet``) is generated with polars,
streaming and seeded: 10 targets per source, 20 % of the sources are two-slot patterns,
2–3 tokens per side from a vocabulary of 40,000 random CJK words, uniform scores with
tiers at the 20/40/60 % score quantiles.  Then :func:`cppdb.open_database` builds the DuckDB
index, and 300 phrase lookups (existing sources, typed without spaces), 100 pattern lookups
by fixed words, 100 pattern lookups with slots and 100 misses are timed through the Python
API (normalisation included).  ``--sqlite`` also builds the same table in SQLite with a
B-tree on the key, for the choice of backend (docs/lookup.md).
"""
from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import time
from pathlib import Path

import numpy as np
import polars as pl

from bench.common import record

VOCAB, TARGETS_PER_SOURCE, MOD = 40_000, 10, 2_147_483_647
WORK = Path("/tmp/cppdb-bench-lookup")


def vocabulary(seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 4, VOCAB)
    codes = rng.integers(0x4E00, 0x9FA5, lengths.sum())
    words, at = [], 0
    for n in lengths:
        words.append("".join(map(chr, codes[at:at + n])))
        at += n
    from cppdb.text.convert import default_converter

    # the pipelines write simplified script; so must the synthetic data
    words = default_converter().convert(words)
    return pl.DataFrame({"w": pl.Series(words).unique(maintain_order=True)}).with_row_index("wid")


def _side(ids: pl.Expr, vocab_n: int, prefix: str) -> list[pl.Expr]:
    return [(ids % vocab_n).alias(f"{prefix}_a"), ((ids // vocab_n) % vocab_n).alias(f"{prefix}_b")]


def generate(run: Path, n_pairs: int, seed: int = 0) -> Path:
    """Write RUN/ranking/ranked_pairs.parquet with ``n_pairs`` rows (streaming)."""
    vocab = vocabulary(seed)
    v = vocab.height
    n_sources = max(1, n_pairs // TARGETS_PER_SOURCE)
    i = pl.col("i")
    lf = (pl.LazyFrame().select(pl.int_range(0, n_pairs, dtype=pl.Int64).alias("i"))
          .with_columns((i // TARGETS_PER_SOURCE).alias("sid"),
                        (((i * 69_621 + seed) % MOD) % n_sources).alias("tid"),
                        (1 + 4 * ((i * 48_271 + 11 + seed) % MOD) / MOD).alias("score")))
    lf = lf.with_columns(*_side(pl.col("sid"), v, "s"), *_side(pl.col("tid"), v, "t"))
    words = vocab.lazy()
    for col in ("s_a", "s_b", "t_a", "t_b"):
        lf = lf.join(words.rename({"wid": col, "w": f"{col}_w"}).with_columns(
            pl.col(col).cast(pl.Int64)), on=col, how="left")
    pattern = (pl.col("sid") % 5 == 0)
    src = pl.concat_str([pl.col("s_a_w"), pl.col("s_b_w")], separator=" ")
    tgt = pl.concat_str([pl.col("t_a_w"), pl.col("t_b_w")], separator=" ")
    score = pl.col("score")
    lf = lf.select(
        pl.when(pattern).then(pl.lit("[NP1] ") + src + pl.lit(" [NP2]")).otherwise(src)
        .alias("source"),
        pl.when(pattern).then(pl.lit("[NP1] ") + tgt + pl.lit(" [NP2]")).otherwise(tgt)
        .alias("target"),
        pl.when(pattern).then(pl.lit("pattern")).otherwise(pl.lit("phrase")).alias("type"),
        pl.when(pattern).then(pl.lit("VP")).otherwise(pl.lit("NP")).alias("lhs"),
        (pl.col("i") % 7 + 1).alias("count"), (pl.col("i") % 3 + 1).alias("n_pivots"),
        (1 / (pl.col("i") % 9 + 1)).alias("p_t_given_s"),
        pl.concat_list([pl.lit("pivot ") + pl.col("s_a").cast(pl.String)]).alias("pivots"),
        pl.lit("bilingual").alias("origin"), score,
        pl.col("i").alias("rank"),
        pl.when(score >= 4.2).then(pl.lit("S")).when(score >= 3.4).then(pl.lit("M"))
        .when(score >= 2.6).then(pl.lit("L")).otherwise(pl.lit("XL")).alias("tier"))
    out = run / "ranking" / "ranked_pairs.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    lf.sink_parquet(out)
    return out


def queries(ranked: Path, n: int, seed: int = 1) -> dict[str, list[str]]:
    lf = pl.scan_parquet(ranked)
    total = lf.select(pl.len()).collect().item()
    rng = np.random.default_rng(seed)
    rows = sorted(rng.choice(total, size=min(total, 4 * n), replace=False).tolist())
    picked = lf.with_row_index("row").filter(pl.col("row").is_in(rows)).select(
        "source", "type").collect()
    phrases = picked.filter(pl.col("type") == "phrase")["source"].to_list()[:3 * n]
    patterns = picked.filter(pl.col("type") == "pattern")["source"].to_list()[:n]
    return {"phrase": [p.replace(" ", "") for p in phrases],          # typed without spaces
            "pattern_words": [p.split(" ")[1] + p.split(" ")[2] for p in patterns],
            "pattern_slots": [p.replace(" ", "") for p in patterns],
            "miss": ["不存在" + str(k) for k in range(n)]}


def _latencies(fn, texts: list[str]) -> tuple[list[float], int]:
    times, found = [], 0
    for text in texts:
        start = time.perf_counter()
        found += fn(text).height > 0
        times.append((time.perf_counter() - start) * 1000)
    return times, found


def _pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 2)


def bench_duckdb(run: Path, n_pairs: int, texts: dict[str, list[str]]) -> None:
    import cppdb

    for old in (run / "lookup",):
        shutil.rmtree(old, ignore_errors=True)
    start = time.perf_counter()
    db = cppdb.open_database(run)
    build = time.perf_counter() - start
    calls = {"phrase": lambda t: db.paraphrases(t, top=10),
             "pattern_words": lambda t: db.patterns(t, top=10),
             "pattern_slots": lambda t: db.patterns(t, top=10),
             "miss": lambda t: db.paraphrases(t, top=10)}
    db.paraphrases(texts["phrase"][0])     # warm the connection
    row = {"backend": "duckdb", "pairs": n_pairs, "build_seconds": round(build, 1),
           "index_mb": round(db.path.stat().st_size / 2**20, 1),
           "parquet_mb": round((run / "ranking" / "ranked_pairs.parquet").stat().st_size
                               / 2**20, 1)}
    for kind, fn in calls.items():
        times, found = _latencies(fn, texts[kind])
        row.update({f"{kind}_n": len(times), f"{kind}_found": found,
                    f"{kind}_p50_ms": _pct(times, 50), f"{kind}_p95_ms": _pct(times, 95),
                    f"{kind}_mean_ms": round(statistics.fmean(times), 2)})
    db.close()
    record("lookup", row)


def bench_sqlite(run: Path, n_pairs: int, texts: dict[str, list[str]]) -> None:
    """The alternative: the same key/score table in SQLite with a B-tree on (key, score)."""
    path = WORK / f"sqlite-{n_pairs}.db"
    path.unlink(missing_ok=True)
    start = time.perf_counter()
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE pairs (key TEXT, type TEXT, source TEXT, target TEXT, "
                "score REAL, tier TEXT)")
    lf = pl.scan_parquet(run / "ranking" / "ranked_pairs.parquet").select(
        pl.col("source").str.replace_all(" ", "").alias("key"), "type", "source", "target",
        "score", "tier")
    for batch in lf.collect_batches(chunk_size=200_000):
        con.executemany("INSERT INTO pairs VALUES (?, ?, ?, ?, ?, ?)", batch.iter_rows())
    con.execute("CREATE INDEX by_key ON pairs (key, score DESC)")
    con.commit()
    build = time.perf_counter() - start
    times, found = _latencies(lambda t: pl.DataFrame(con.execute(
        "SELECT * FROM pairs WHERE key = ? ORDER BY score DESC LIMIT 10", (t,)).fetchall(), orient="row"),
        texts["phrase"])
    words, _ = _latencies(lambda t: pl.DataFrame(con.execute(
        "SELECT * FROM pairs WHERE type = 'pattern' AND instr(key, ?) > 0 ORDER BY score DESC "
        "LIMIT 10", (t,)).fetchall(), orient="row"), texts["pattern_words"][:20])
    con.close()
    record("lookup", {"backend": "sqlite", "pairs": n_pairs, "build_seconds": round(build, 1),
                      "index_mb": round(path.stat().st_size / 2**20, 1),
                      "phrase_found": found, "phrase_p50_ms": _pct(times, 50),
                      "phrase_p95_ms": _pct(times, 95),
                      "pattern_words_p50_ms (20 queries, full scan)": _pct(words, 50)})
    path.unlink()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--sqlite", action="store_true")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    for n in args.pairs:
        run = WORK / f"run-{n}"
        start = time.perf_counter()
        ranked = generate(run, n)
        print(f"generated {n:,} pairs in {time.perf_counter() - start:.1f} s", flush=True)
        texts = queries(ranked, args.queries)
        bench_duckdb(run, n, texts)
        if args.sqlite:
            bench_sqlite(run, n, texts)
        shutil.rmtree(run, ignore_errors=True)


if __name__ == "__main__":
    main()
