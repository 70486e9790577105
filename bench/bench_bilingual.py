"""Benchmarks of bilingual extraction: extract+pivot throughput, and pivot at scale.

    python -m bench.bench_bilingual                      # both, default sizes
    python -m bench.bench_bilingual extract --sentences 20000
    python -m bench.bench_bilingual pivot --sentences 1000000 100000
    python -m bench.bench_bilingual tatoeba runs/tatoeba-bilingual   # needs ../shared/data
    python -m bench.bench_bilingual stages RUN_DIR    # extract+pivot on a run's annotations
    python -m bench.bench_bilingual pivot-engines RUN_DIR [local[2]]   # polars vs Spark pivot

* ``extract`` — synthetic annotated + aligned sentence pairs (Zipfian vocabulary, CTB/Penn
  tags, nested NP spans, near-diagonal links with 10% noise) go through the extract and
  pivot stages of a run directory: sentence pairs per second after annotation+alignment.
* ``pivot`` — a generated occurrence table (``--phrase-rate`` phrase and ``--pattern-rate``
  pattern occurrences per sentence pair, Zipfian English sides, several Chinese sides per
  English one) is pivoted in a fresh subprocess per size, so peak memory is per size.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import resource

from bench.common import peak_rss_mb, record

AREA = "bilingual"
ZH_TAGS = np.array(["NN", "NN", "NN", "VV", "VV", "AD", "P", "DEG", "NR", "CD", "M", "PN",
                    "JJ", "LC", "AS", "PU"])
EN_TAGS = np.array(["NN", "NN", "NNS", "DT", "DT", "JJ", "IN", "VBD", "VBZ", "PRP", "RB",
                    "NNP", "CD", "CC", "."])


def _spans(n: int, rng: np.random.Generator, tags: np.ndarray) -> tuple[list, list, list]:
    """POS spans for each token, base NPs of 1–3 tokens, and NPs joining two base NPs."""
    starts, ends, labels = list(range(n)), list(range(1, n + 1)), list(tags)
    base, i = [], 0
    while i < n:
        width = int(rng.integers(1, 4))
        if rng.random() < 0.5 and i + width <= n:
            base.append((i, i + width))
            i += width + int(rng.integers(0, 3))
        else:
            i += 1
    for a, b in base:
        starts.append(a), ends.append(b), labels.append("NP")
    for (a, _), (_, d) in zip(base, base[1:]):
        if d - a <= 8 and rng.random() < 0.5:
            starts.append(a), ends.append(d), labels.append("NP")
    return starts, ends, labels


def synthetic_corpus(n: int, seed: int = 7) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Annotation and alignment tables of ``n`` synthetic sentence pairs."""
    rng = np.random.default_rng(seed)
    rows: dict[str, list] = {k: [] for k in (
        "id", "zh_tokens", "zh_pos", "zh_span_start", "zh_span_end", "zh_span_label",
        "en_tokens", "en_pos", "en_span_start", "en_span_end", "en_span_label")}
    link_zh, link_en = [], []
    for sid in range(n):
        nz = int(rng.integers(6, 21))
        ne = max(3, int(nz * rng.uniform(1.0, 1.4)))
        zw = np.minimum(rng.zipf(1.3, nz), 20000)
        ew = np.minimum(rng.zipf(1.3, ne), 20000)
        zt, et = ZH_TAGS[rng.integers(0, len(ZH_TAGS), nz)], EN_TAGS[rng.integers(0, len(EN_TAGS), ne)]
        rows["id"].append(sid)
        rows["zh_tokens"].append([f"z{w}" for w in zw]), rows["zh_pos"].append(list(zt))
        rows["en_tokens"].append([f"e{w}" for w in ew]), rows["en_pos"].append(list(et))
        for lang, length, tags in (("zh", nz, zt), ("en", ne, et)):
            s, e, lab = _spans(length, rng, tags)
            rows[f"{lang}_span_start"].append(s), rows[f"{lang}_span_end"].append(e)
            rows[f"{lang}_span_label"].append(lab)
        diag = np.clip(np.round(np.arange(nz) * ne / nz + rng.normal(0, 0.7, nz)), 0, ne - 1)
        keep = rng.random(nz) < 0.85
        lz = list(np.arange(nz)[keep]) + list(rng.integers(0, nz, nz // 10))
        le = list(diag[keep].astype(int)) + list(rng.integers(0, ne, nz // 10))
        link_zh.append([int(x) for x in lz]), link_en.append([int(x) for x in le])
    ann = pl.DataFrame(rows).with_columns(
        [pl.col(c).cast(pl.List(pl.Int32)) for c in rows if c.endswith(("start", "end"))])
    align = pl.DataFrame({"id": list(range(n)), "link_zh": link_zh, "link_en": link_en},
                         schema={"id": pl.Int64, "link_zh": pl.List(pl.Int32),
                                 "link_en": pl.List(pl.Int32)})
    return ann, align


def cpu_seconds() -> float:
    """User+system CPU of this process and its reaped children (pool workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def bench_extract(n: int) -> dict:
    from cppdb.config import load_config
    from cppdb.extractors.bilingual import ALIGNMENT, ANNOTATIONS, run_stage
    from cppdb.run import RunDir

    ann, align = synthetic_corpus(n)
    config = load_config()
    with tempfile.TemporaryDirectory() as tmp:
        run = RunDir(Path(tmp) / "run", config, command="bench")
        with run.stage("annotate") as st:
            st.write_parquet(ANNOTATIONS, ann)
        with run.stage("align") as st:
            st.write_parquet(ALIGNMENT, align)
        section = config.section("bilingual")
        start, cpu0 = time.perf_counter(), cpu_seconds()
        run_stage(run, config, "extract")
        mid, cpu1 = time.perf_counter(), cpu_seconds()
        run_stage(run, config, "pivot")
        end, cpu2 = time.perf_counter(), cpu_seconds()
        rows = {**run.stage_info("extract")["rows"], **run.stage_info("pivot")["rows"]}
        modes = run.stage_info("extract")["notes"]["aligned_phrase_pairs_per_mode"]
    return record(AREA, {
        "benchmark": "extract+pivot (synthetic annotated corpus)", "sentence_pairs": n,
        "extract_s": round(mid - start, 2), "pivot_s": round(end - mid, 2),
        "extract_cpu_s": round(cpu1 - cpu0, 2), "pivot_cpu_s": round(cpu2 - cpu1, 2),
        "sentence_pairs_per_s": round(n / (end - start), 1),
        # wall time on a shared machine understates; CPU seconds / 2 cores is the 2-core rate
        "sentence_pairs_per_s_2cores_from_cpu": round(n / ((cpu2 - cpu0) / 2), 1),
        "load_average": os.getloadavg()[0], "rows": rows,
        "aligned_phrase_pairs_per_mode": modes, "workers": section["workers"]})


def bench_stages(source_run: Path) -> dict:
    """Extract + pivot on the real annotations and alignments of an existing run directory
    (e.g. a Tatoeba run): the same measurement as ``extract`` on real spans (VP/IP included)."""
    from cppdb.config import load_config
    from cppdb.extractors.bilingual import ALIGNMENT, ANNOTATIONS, run_stage
    from cppdb.run import RunDir

    ann = pl.read_parquet(source_run / ANNOTATIONS)
    align = pl.read_parquet(source_run / ALIGNMENT)
    config = load_config()
    with tempfile.TemporaryDirectory() as tmp:
        run = RunDir(Path(tmp) / "run", config, command="bench")
        with run.stage("annotate") as st:
            st.write_parquet(ANNOTATIONS, ann)
        with run.stage("align") as st:
            st.write_parquet(ALIGNMENT, align)
        section = config.section("bilingual")
        start, cpu0 = time.perf_counter(), cpu_seconds()
        run_stage(run, config, "extract")
        mid, cpu1 = time.perf_counter(), cpu_seconds()
        run_stage(run, config, "pivot")
        end, cpu2 = time.perf_counter(), cpu_seconds()
        rows = {**run.stage_info("extract")["rows"], **run.stage_info("pivot")["rows"]}
    n = ann.height
    return record(AREA, {
        "benchmark": f"extract+pivot on real annotations ({source_run.name})", "sentence_pairs": n,
        "extract_s": round(mid - start, 2), "pivot_s": round(end - mid, 2),
        "extract_cpu_s": round(cpu1 - cpu0, 2), "pivot_cpu_s": round(cpu2 - cpu1, 2),
        "sentence_pairs_per_s": round(n / (end - start), 1),
        "sentence_pairs_per_s_2cores_from_cpu": round(n / ((cpu2 - cpu0) / 2), 1),
        "load_average": os.getloadavg()[0], "rows": rows, "workers": section["workers"]})


def synthetic_occurrences(n_sentences: int, path: Path, *, phrase_rate: float,
                          pattern_rate: float, seed: int = 11, batch: int = 2_000_000) -> int:
    """Write a generated occurrence table (written in batches, so generation stays small)."""
    rng = np.random.default_rng(seed)
    total = 0
    files = []
    for kind, rate in (("phrase", phrase_rate), ("pattern", pattern_rate)):
        n_rows = int(n_sentences * rate)
        for start in range(0, n_rows, batch):
            m = min(batch, n_rows - start)
            e = np.minimum(rng.zipf(1.15, m), 5_000_000)            # English side
            j = np.minimum(rng.geometric(0.45, m), 30) - 1           # which translation
            z = (e // 2) * 31 + j                                    # shared across 2 e's
            two = rng.random(m) < 0.4 if kind == "pattern" else np.zeros(m, dtype=bool)
            sentence = (np.arange(start, start + m) * n_sentences) // max(n_rows, 1)
            frame = pl.DataFrame({"e": e, "z": z, "two": two, "sw": rng.random(m) < 0.2,
                                  "id": sentence})
            slot_zh = pl.when(pl.col("two")).then(pl.lit("[NP1] 的 [NP2]")).otherwise(pl.lit("[NP1]"))
            slot_en = pl.when(pl.col("two")).then(pl.lit("[NP1] of [NP2]")).otherwise(pl.lit("[NP1]"))
            zh = pl.format("z{} 之 z{}", pl.col("z"), pl.col("z") % 997)
            en = pl.format("e{} e{}", pl.col("e"), pl.col("e") % 991)
            if kind == "pattern":
                zh = pl.concat_str([zh, slot_zh], separator=" ")
                en = pl.concat_str([en, slot_en], separator=" ")
            out = frame.select(
                id=pl.col("id").cast(pl.Int64),
                lhs=pl.lit("NP"),
                slot_sig=(pl.when(pl.col("two")).then(pl.lit("NP|NP")).otherwise(pl.lit("NP"))
                          if kind == "pattern" else pl.lit("")),
                en=en, zh=zh, swapped=pl.col("sw") & pl.col("two"),
                kind=pl.lit(kind),
                align=pl.lit([0, 65537, 131073], dtype=pl.List(pl.Int32)),  # 0-0 1-1 2-1
                **{col: pl.lit(0 if col.endswith("start") else 2, dtype=pl.Int32)
                   for col in ("zh_start", "zh_end", "en_start", "en_end")})
            out = out.with_columns(zh_pos=pl.col("zh").str.replace_all(r"[^ ]+", "NN"))
            file = path.parent / f"{path.stem}-{kind}-{start:012d}.parquet"
            out.write_parquet(file)
            files.append(file)
            total += m
    pl.scan_parquet(files).sink_parquet(path)
    for file in files:
        file.unlink()
    return total


def _pivot_child(path: str, work: str) -> None:
    """Run in a fresh process: pivot both kinds, print seconds, rows and peak memory."""
    from cppdb.extractors.pivot import PivotSettings, pivot

    start = time.perf_counter()
    rows = {}
    occ = pl.scan_parquet(path)
    for kind in ("phrase", "pattern"):
        parts = pivot(occ.filter(pl.col("kind") == kind), kind, Path(work) / kind,
                      PivotSettings())
        rows[f"{kind}_pairs"] = (pl.scan_parquet(parts).select(pl.len()).collect().item()
                                 if parts else 0)
    print(json.dumps({"seconds": round(time.perf_counter() - start, 2), "rows": rows,
                      "cpu_s": round(cpu_seconds(), 1), "load_average": os.getloadavg()[0],
                      "child_peak_rss_mb": peak_rss_mb()}))


def bench_pivot(sizes: list[int], phrase_rate: float, pattern_rate: float) -> list[dict]:
    results = []
    for n in sizes:
        with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:
            path = Path(tmp) / "occurrences.parquet"
            n_occ = synthetic_occurrences(n, path, phrase_rate=phrase_rate,
                                          pattern_rate=pattern_rate)
            child = subprocess.run(
                [sys.executable, "-m", "bench.bench_bilingual", "_pivot-child", str(path),
                 str(Path(tmp) / "work")], capture_output=True, text=True, check=True)
            info = json.loads(child.stdout.strip().splitlines()[-1])
        results.append(record(AREA, {
            "benchmark": "pivot (generated occurrence table)", "sentence_pairs": n,
            "occurrence_rows": n_occ, "phrase_rate": phrase_rate, "pattern_rate": pattern_rate,
            **info}))
    return results


def bench_pivot_engines(run_dir: Path, master: str = "local[2]") -> dict:
    """The pivot of a run's occurrences on the local engine and on Spark (``master``): wall
    seconds per kind (Spark's include its jobs, not the JVM start) and whether the pair
    tables are equal."""
    from cppdb.config import load_config
    from cppdb.engine import LocalEngine
    from cppdb.engine.spark import SparkEngine
    from cppdb.config import resolve
    from cppdb.extractors.bilingual import pivot_pairs, pivot_settings
    from cppdb.extractors.settings import BilingualSettings

    settings = pivot_settings(resolve(BilingualSettings, load_config()))
    occurrences = run_dir / "phrase_occurrences.parquet"
    spark = SparkEngine(master=master)
    spark.session                                    # JVM start-up is not the pivot's cost
    result: dict = {"run": str(run_dir), "master": master,
                    "occurrences": pl.scan_parquet(occurrences).select(pl.len()).collect().item(),
                    "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("phrase", "pattern"):
            tables = {}
            for name, engine in (("local", LocalEngine()), ("spark", spark)):
                start = time.perf_counter()
                parts = pivot_pairs(engine, occurrences, kind, Path(tmp) / f"{name}-{kind}",
                                    settings)
                order = ["lhs", "source", "target"]
                tables[name] = pl.read_parquet(parts).sort(order)
                result[f"{kind}_{name}_s"] = round(time.perf_counter() - start, 1)
            result[f"{kind}_pairs"] = tables["local"].height
            result[f"{kind}_equal"] = tables["local"].equals(tables["spark"])
    result["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    record("pivot_engines", result)
    print(json.dumps(result, indent=1))
    return result


def bench_tatoeba(run_dir: Path, samples: int = 30, seed: int = 3) -> dict:
    """End to end on ../shared/data/tatoeba-cmn with the offline backends; samples to judge."""
    from bench.common import shared_data
    from cppdb.config import load_config
    from cppdb.extractors.bilingual import extract_bilingual
    from devtools.prepare_corpus import tatoeba_inputs

    tsv = shared_data("tatoeba-cmn", "cmn.txt")
    if tsv is None:
        raise SystemExit("../shared/data/tatoeba-cmn/cmn.txt is not on this machine")
    zh, en = tatoeba_inputs(tsv, run_dir.parent / "tatoeba-input")
    start, cpu0 = time.perf_counter(), cpu_seconds()
    result = extract_bilingual(zh, en, run_dir, load_config())
    row = record(AREA, {"benchmark": "tatoeba-cmn end to end (offline backends)",
                        "seconds": round(time.perf_counter() - start, 1),
                        "cpu_s": round(cpu_seconds() - cpu0, 1), **result.to_json()})
    for name, path in (("phrase", result.phrase_pairs), ("pattern", result.pattern_pairs)):
        frame = pl.read_parquet(path)
        # one direction per pair, then a seeded sample
        frame = frame.filter(pl.col("source") < pl.col("target"))
        sample = frame.sample(min(samples, frame.height), seed=seed, shuffle=True)
        cols = ["lhs", "source", "target", "p_t_given_s", "p_s_given_t", "count", "pivots"]
        out = run_dir / f"sample_{name}_pairs.jsonl"
        sample.select(cols).write_ndjson(out)
        print(f"sample of {name} pairs: {out}")
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", default="all",
                        choices=["all", "extract", "stages", "pivot", "pivot-engines", "tatoeba",
                                 "_pivot-child"])
    parser.add_argument("args", nargs="*")
    parser.add_argument("--sentences", type=int, nargs="+", default=None)
    parser.add_argument("--phrase-rate", type=float, default=6.0)
    parser.add_argument("--pattern-rate", type=float, default=12.0)
    opts = parser.parse_args(argv)
    if opts.what == "_pivot-child":
        _pivot_child(*opts.args)
        return
    if opts.what == "stages":
        bench_stages(Path(opts.args[0]))
        return
    if opts.what == "pivot-engines":
        bench_pivot_engines(Path(opts.args[0]), *opts.args[1:2])
        return
    if opts.what == "tatoeba":
        bench_tatoeba(Path(opts.args[0]) if opts.args else Path("runs/tatoeba-bilingual"))
        return
    if opts.what in ("all", "extract"):
        for n in opts.sentences or [20000]:
            bench_extract(n)
    if opts.what in ("all", "pivot"):
        bench_pivot(opts.sentences if opts.what == "pivot" and opts.sentences
                    else [100_000, 1_000_000], opts.phrase_rate, opts.pattern_rate)


if __name__ == "__main__":
    main()
