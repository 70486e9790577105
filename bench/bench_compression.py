"""Compression corpus: ablation on the bundled news pairs, and throughput (pairs/s).

Run: ``.venv/bin/python -m bench.bench_compression [--pairs 3000] [--workers 1,2]``

* Ablation (data/news/pairs.jsonl + pairs.tsv + paragraphs.jsonl, 65 pairs): word match vs
  + abbreviation vs + paraphrase-aware, each with and without DTT; and the paper's literal
  content-overlap filter for reference.  The paraphrase table is PARAPHRASES below — written by
  hand for these headlines (no bilingual run over data/parallel existed when this was written),
  so the paraphrase rows show what the method does *given* a table with those entries.
* BERT-align (Zhao et al. 2022) over the bundled e5-small token vectors (``e5-tokens``),
  after the other methods, as the paper's fallback for words none of them aligns.
* Throughput: the bundled pairs repeated (ids made unique) to ``--pairs`` pairs, methods
  word+abbrev+paraphrase with DTT, offline backends (jieba + udchinese), per worker count.
* ``--corpus DIR``: a real headline corpus prepared by ``devtools.prepare_headlines`` built with
  every default (only ``--paraphrases RUN``, a cppdb-ranked run, is given) at each ``--sizes``
  (``corpus.<N>.jsonl``; ``all`` = ``corpus.jsonl``), each size in a fresh process so its peak
  RSS is its own: kept / rejected per filter, pairs/s, peak RSS, growth.  The hand-written
  table above is not used here.

    .venv/bin/python -m bench.bench_compression --corpus /work/corpora/headlines-zh \\
        --paraphrases /work/runs/long-zhen --sizes 10000,30000,all --keep-runs /work/runs/headlines
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import tempfile
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import polars as pl

from bench.common import record, timer
from cppdb.config import load_config, resolve
from cppdb.extractors.compression.builder import build_compression
from cppdb.extractors.compression.settings import CompressionToml

REPO = Path(__file__).resolve().parents[1]
NEWS = REPO / "data" / "news"

# headline word/phrase <TAB> sentence paraphrase <TAB> score (hand-made for the bundled pairs)
PARAPHRASES = """留守\t剩余\t0.9
逝世\t去世\t0.95
抵京\t抵达 北京\t0.8
访华\t对 中国 进行 访问\t0.6
抓获\t逮捕\t0.8
死亡\t丧生\t0.85
物价\t消费 价格\t0.7
上涨\t上升\t0.9
启用\t投入 使用\t0.8
夺冠\t获得 冠军\t0.85
签约\t签署 协议\t0.8
共建\t共同 建设\t0.85
获救\t救出\t0.8
暴雨\t大雨\t0.7
首日\t第一 天\t0.8
客流\t旅客\t0.5
跳河\t跳入 河中\t0.7
受伤\t受 轻伤\t0.6
外长\t外交 部长\t0.8
学术会议\t学术 会议\t0.9
创新高\t创下 新高\t0.9
"""

ABLATION = [
    ("word", ["word"], True),
    ("word", ["word"], False),
    ("word+abbrev", ["word", "abbrev"], True),
    ("word+abbrev", ["word", "abbrev"], False),
    ("word+abbrev+paraphrase", ["word", "abbrev", "paraphrase"], True),
    ("word+abbrev+paraphrase", ["word", "abbrev", "paraphrase"], False),
]
# BERT-align over the bundled e5-small token vectors (layer 7 unless named), after the others
E5_BERT = {"compression.bert_encoder": "e5-tokens"}
BERT_ABLATION = [
    ("bert(e5, layer 7) alone", ["bert"], True, {}),
    ("word+bert(e5)", ["word", "bert"], True, {}),
    ("word+abbrev+bert(e5)", ["word", "abbrev", "bert"], True, {}),
    ("word+abbrev+paraphrase+bert(e5)", ["word", "abbrev", "paraphrase", "bert"], True, {}),
    ("word+abbrev+paraphrase+bert(e5, min cosine 0.6)", ["word", "abbrev", "paraphrase", "bert"],
     True, {"compression.bert_min_cosine": 0.6}),
    ("word+abbrev+paraphrase+bert(e5, layer 12)", ["word", "abbrev", "paraphrase", "bert"], True,
     {"compression.bert_layer": 12}),
]


def bundled_pairs(path: Path) -> int:
    """All bundled news pairs (JSONL, TSV, text-field JSONL) as one JSONL file."""
    rows = [json.loads(line) for line in (NEWS / "pairs.jsonl").read_text("utf-8").splitlines()
            if line.strip()]
    tsv = (NEWS / "pairs.tsv").read_text("utf-8").splitlines()
    header = tsv[0].split("\t")
    rows += [dict(zip(header, line.split("\t")), id=f"t{i:03d}")
             for i, line in enumerate(tsv[1:], start=1) if line.strip()]
    rows += [json.loads(line) for line in
             (NEWS / "paragraphs.jsonl").read_text("utf-8").splitlines() if line.strip()]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return len(rows)


def _summary(out: Path, report: dict) -> dict:
    records = pl.read_parquet(out / "records.parquet")
    tagged = records.filter(pl.col("n_headline_content") > 0)   # pairs that reached alignment
    aligned_any = int(tagged["n_headline_aligned"].sum() or 0)
    content_any = int(tagged["n_headline_content"].sum() or 0)
    return {"pairs_in": report["input_pairs"], "kept": report["kept"],
            "rejected_by_rule": {k: v for k, v in report["rejected_by_rule"].items() if v},
            "aligned_pairs": tagged.height,
            "headline_tokens_aligned_all": aligned_any,
            "headline_content_words_all": content_any,
            "kept_keywords": report["keywords_total"],
            "kept_headline_tokens_aligned": report["headline_tokens_aligned"],
            "kept_headline_content_words": report["headline_content_words"],
            "links_by_method": {m: s["links"] for m, s in report["alignment"].items()},
            "dtt_added": report["dtt_added"],
            "mean_compression_rate": report["compression_rate"].get("mean"),
            "median_compression_rate": report["compression_rate"].get("median")}


# The alignment-aware overlap rule (the paper's rule is the default and keeps 3 of 65 here).
ALIGNMENT_AWARE = {"compression.overlap_denominator": "headline_content",
                   "compression.overlap_source": "alignment"}


def ablation(work: Path, only: str = "") -> None:
    pairs = work / "bundled.jsonl"
    bundled_pairs(pairs)
    table = work / "paraphrases.tsv"
    table.write_text(PARAPHRASES, "utf-8")
    variants = [(n, m, d, dict(ALIGNMENT_AWARE)) for n, m, d in ABLATION]
    variants.append(("word (paper filter: R over S tokens, word match; the default)",
                     ["word"], True, {}))
    variants += [(n, m, d, {**ALIGNMENT_AWARE, **E5_BERT, **extra})
                 for n, m, d, extra in BERT_ABLATION]
    variants = [v for v in variants if only in v[0]]
    for index, (name, methods, dtt, overrides) in enumerate(variants):
        out = work / f"ablation-{index}"
        config = load_config(overrides=overrides)
        result = build_compression(pairs, out, config, methods=methods, dtt=dtt,
                                   paraphrases=table if "paraphrase" in methods else None)
        record("compression", {"bench": "ablation", "methods": name, "dtt": dtt,
                               **_summary(out, result.report)})


def throughput(work: Path, n_pairs: int, workers: list[int],
               methods: tuple[str, ...] = ("word", "abbrev", "paraphrase")) -> None:
    base = work / "bundled.jsonl"
    if not base.exists():
        bundled_pairs(base)
    rows = [json.loads(line) for line in base.read_text("utf-8").splitlines()]
    big = work / "throughput.jsonl"
    with big.open("w", encoding="utf-8") as handle:
        for i in range(n_pairs):
            row = dict(rows[i % len(rows)], id=f"r{i}")
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    table = work / "paraphrases.tsv"
    table.write_text(PARAPHRASES, "utf-8")
    for count in workers:
        out = work / f"throughput-{count}"
        config = load_config(overrides={**ALIGNMENT_AWARE, **E5_BERT,
                                        "compression.workers": count})
        with timer() as clock:
            result = build_compression(big, out, config, paraphrases=table,
                                       methods=list(methods))
        manifest = json.loads((out / "manifest.json").read_text("utf-8"))
        stage = manifest["stages"]["compress"]["seconds"]
        record("compression", {
            "bench": "throughput", "pairs": n_pairs, "workers": count,
            "kept": result.report["kept"], "seconds_total": clock["seconds"],
            "seconds_compress_stage": stage,
            "pairs_per_s_total": round(n_pairs / clock["seconds"], 1),
            "pairs_per_s_stage": round(n_pairs / stage, 1),
            "methods": "+".join(methods), "loadavg_1min": round(os.getloadavg()[0], 2),
            "backends": _backends()})


def _backends() -> str:
    """The parser the default config runs (read from it, not assumed)."""
    toml = resolve(CompressionToml, load_config())
    return f"jieba + {toml.parser}(tagger={toml.udchinese_tagger})"


def _corpus_input(corpus: Path, size: str) -> Path:
    path = corpus / ("corpus.jsonl" if size == "all" else f"corpus.{int(size)}.jsonl")
    if not path.is_file():
        raise SystemExit(f"{path} does not exist: prepare it with `python -m "
                         "devtools.prepare_headlines --subsets ...` (see docs/corpora.md)")
    return path


def _build_defaults(pairs: str, out: str, paraphrases: str | None) -> dict:
    """One default build in this (fresh) process: the report's counts, time and own peak RSS."""
    with timer() as clock:
        result = build_compression(pairs, out, load_config(), paraphrases=paraphrases,
                                   fresh=True)
    report = result.report
    stage = json.loads((Path(out) / "manifest.json").read_text("utf-8"))["stages"]
    return {"report": report, "seconds_total": clock["seconds"],
            "seconds_compress_stage": stage["compress"]["seconds"],
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def _code_state() -> dict:
    """The commit the build ran at, and whether the compression code differed from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              check=False).stdout.strip()
    return {"git_head": git("rev-parse", "--short", "HEAD"),
            "compression_code_modified": bool(git("status", "--porcelain", "--",
                                                  "cppdb/extractors/compression"))}


def corpus_build(corpus: Path, sizes: list[str], paraphrases: Path | None,
                 runs: Path) -> list[dict]:
    """Build the prepared corpus with every default at each size; one result row per size."""
    rows = []
    for size in sizes:
        pairs = _corpus_input(corpus, size)
        out = runs / f"{corpus.name}-{size}"
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
            got = pool.submit(_build_defaults, str(pairs), str(out),
                              str(paraphrases) if paraphrases else None).result()
        report = got["report"]
        n = report["input_pairs"]
        rows.append(record("compression", {
            "bench": "corpus", "corpus": str(pairs), "pairs": n, "run": str(out),
            "paraphrase_table": report.get("paraphrase_table"),
            "methods": "+".join(report["methods"]), "kept": report["kept"],
            "rejected": report["rejected"], "kept_fraction": report["kept_fraction"],
            "rejected_by_rule": report["rejected_by_rule"],
            "links_by_method": {m: s["links"] for m, s in report["alignment"].items()},
            "dtt_added": report["dtt_added"],
            "mean_compression_rate": report["compression_rate"].get("mean"),
            "median_compression_rate": report["compression_rate"].get("median"),
            "seconds_total": got["seconds_total"],
            "seconds_compress_stage": got["seconds_compress_stage"],
            "pairs_per_s_total": round(n / got["seconds_total"], 1),
            "peak_rss_mb": got["peak_rss_mb"], "loadavg_1min": round(os.getloadavg()[0], 2),
            "backends": _backends(), **_code_state()}))
    print(corpus_table(rows))
    return rows


def corpus_table(rows: list[dict]) -> str:
    """The growth table of docs/benchmarks/compression.md, from the corpus rows."""
    rules = list(rows[0]["rejected_by_rule"]) if rows else []
    lines = ["| pairs | kept | " + " | ".join(rules) + " | seconds | pairs/s | peak RSS MB |",
             "|---" * (len(rules) + 5) + "|"]
    for row in rows:
        counts = " | ".join(f"{row['rejected_by_rule'][r]:,}" for r in rules)
        lines.append(f"| {row['pairs']:,} | {row['kept']:,} ({100 * row['kept_fraction']:.1f} %)"
                     f" | {counts} | {row['seconds_total']:.0f} | {row['pairs_per_s_total']:.0f}"
                     f" | {row['peak_rss_mb']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--skip-ablation", action="store_true")
    parser.add_argument("--only", default="", help="run only ablation rows whose name has this")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--with-bert", action="store_true",
                        help="throughput with BERT-align(e5) added to the methods")
    parser.add_argument("--corpus", type=Path,
                        help="a prepared headline corpus folder: build it with every default "
                             "instead of the bundled-pair benchmarks")
    parser.add_argument("--sizes", default="10000,30000,all",
                        help="--corpus: subset sizes (corpus.<N>.jsonl) and/or 'all'")
    parser.add_argument("--paraphrases", type=Path,
                        help="--corpus: paraphrase table, a cppdb-ranked run directory")
    parser.add_argument("--keep-runs", type=Path,
                        help="--corpus: write the runs here (default: a temporary folder)")
    args = parser.parse_args()
    if args.corpus is not None:
        sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
        with tempfile.TemporaryDirectory(prefix="bench-compression-") as tmp:
            corpus_build(args.corpus, sizes, args.paraphrases, args.keep_runs or Path(tmp))
        return
    with tempfile.TemporaryDirectory(prefix="bench-compression-") as tmp:
        work = Path(tmp)
        if not args.skip_ablation:
            ablation(work, args.only)
        if not args.skip_throughput:
            methods = ("word", "abbrev", "paraphrase") + (("bert",) if args.with_bert else ())
            throughput(work, args.pairs, [int(w) for w in args.workers.split(",")], methods)


if __name__ == "__main__":
    main()
