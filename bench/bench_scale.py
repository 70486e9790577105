"""End to end at scale: ``extract-bilingual`` + ``rank`` + ``export`` on a corpus, per engine.

The corpus comes from ``devtools/make_corpus.py``: either SYNTHETIC Tatoeba-shaped pairs
(``--tatoeba``, 6–8 English words) or real pairs sampled from a template such as the news
corpus of docs/corpora.md (``--template``, optionally one ``--length-bucket``).  Each row
says which (``corpus_kind`` from ``CORPUS.json``; a corpus without one is an older synthetic
corpus) and its English words per sentence, so numbers of the two kinds are never mixed up.

Each command runs as its own process under ``/usr/bin/time -v`` (its peak RSS, including its
worker processes' own peaks are not summed: the figure is the largest single process; the
summed RSS of the process tree is sampled too, ``peak_tree_rss_mb``), and
the per-stage seconds and counts come from the run's manifest.  The load average at start
and end is recorded: the machine is shared, so absolute times are pessimistic.

    python -m devtools.make_corpus --tatoeba cmn.txt --pairs 100000 --out /tmp/c100k --work /tmp/seed
    python -m devtools.make_corpus --template corpus.tsv --pairs 100000 --length-bucket 20 \
        --out /tmp/n100k-w20
    python -m bench.bench_scale --corpus /tmp/c100k --out /tmp/scale-100k [--engine spark] [--skip-rank]

``--engine`` applies to both commands.  ``--rank-only`` ranks an extracted run (``--out``)
again, its old ``ranking/`` removed first (rank on both engines from one extraction):

    python -m bench.bench_scale --out /tmp/scale-100k --rank-only --engine spark \
        --set features.embedding=false
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import record
from devtools.make_corpus import corpus_info


def _timed_command(args: list[str]) -> dict[str, Any]:
    """Wall time, the largest single process's peak RSS (``time -v``) and the peak of the
    summed RSS of the whole process tree (sampled every 0.5 s: the driver, a JVM and its
    Python workers together)."""
    import psutil

    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as log:     # a file, not a pipe: nothing blocks on it
        proc = subprocess.Popen(["/usr/bin/time", "-v", *args], stdout=subprocess.DEVNULL,
                                stderr=log, text=True)
        root, tree_peak = psutil.Process(proc.pid), 0
        while proc.poll() is None:
            try:
                members = [root, *root.children(recursive=True)]
                tree_peak = max(tree_peak, sum(_rss(p) for p in members))
            except psutil.Error:
                pass
            time.sleep(0.5)
        log.seek(0)
        err = log.read()
    seconds = round(time.perf_counter() - start, 1)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{err[-3000:]}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    return {"seconds": seconds, "peak_rss_mb": round(int(rss.group(1)) / 1024) if rss else None,
            "peak_tree_rss_mb": round(tree_peak / 2**20)}


def _rss(process: Any) -> int:
    import psutil

    try:
        return process.memory_info().rss
    except psutil.Error:                 # ended between listing and reading
        return 0


def _stages(manifest: Path) -> dict[str, Any]:
    info = json.loads(manifest.read_text("utf-8"))
    return {name: {"seconds": s.get("seconds"), "rows": s.get("rows", {})}
            for name, s in info["stages"].items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, help="CORPUS.zh / CORPUS.en")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--engine", default="local")
    parser.add_argument("--spark-master", default="local[2]")
    parser.add_argument("--rank-only", action="store_true",
                        help="--out is an extracted run: remove its ranking/ and rank it")
    parser.add_argument("--set", action="append", default=[], dest="overrides")
    parser.add_argument("--skip-rank", action="store_true",
                        help="extract-bilingual only (e.g. to compare engines on it alone)")
    args = parser.parse_args()
    if args.corpus is None and not args.rank_only:
        parser.error("--corpus is needed unless --rank-only")
    cppdb = [sys.executable, "-m", "cppdb.cli"]
    sets = [x for item in args.overrides for x in ("--set", item)]
    engine = ["--engine", args.engine] + (["--spark-master", args.spark_master]
                                          if args.engine == "spark" else [])
    load_start = os.getloadavg()
    row: dict[str, Any] = {}
    if args.rank_only:
        shutil.rmtree(args.out / "ranking", ignore_errors=True)
        row["run"] = str(args.out)
        row["pairs"] = _stages(args.out / "manifest.json")["annotate"]["rows"].get(
            "annotations.parquet")
    else:
        row["corpus"] = str(args.corpus)
        row |= corpus_info(args.corpus)
        row["extract_bilingual"] = _timed_command(
            cppdb + ["extract-bilingual", "--zh", f"{args.corpus}.zh", "--en",
                     f"{args.corpus}.en", "-o", str(args.out), "--quiet", *engine, *sets])
        row["extract_stages"] = _stages(args.out / "manifest.json")
    rank = (None if args.skip_rank else
            _timed_command(cppdb + ["rank", str(args.out), "--quiet", *engine, *sets]))
    # the exported top 20 % of every type, as the README's last step writes it
    exported = (None if args.skip_rank else
                _timed_command(cppdb + ["export", str(args.out), "--top", "20%",
                                        "--format", "ppdb", "--quiet", *sets]))
    record("scale", {
        **row, "engine": args.engine + (f" {args.spark_master}" if args.engine == "spark"
                                        else ""),
        "overrides": args.overrides, "rank": rank, "export": exported,
        "rank_stages": None if rank is None else _stages(args.out / "ranking" / "manifest.json"),
        "loadavg_start": [round(x, 2) for x in load_start],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()]})


if __name__ == "__main__":
    main()
