"""`make bench`: the benchmarks that need no argument, on bundled data (data/) only.

Each runs in its own process (its peak memory is its own), at a size that finishes in
minutes on a shared 2-core machine; the published numbers come from the larger sizes and
corpora named in docs/BENCHMARKS.md, which also says how to run the benchmarks that need a
corpus or a run directory (they are not in this list).  ``CPPDB_BENCH_BUNDLED_ONLY=1`` makes
every benchmark ignore ``../shared/data``, so that this list measures the same data on a
developer machine as on a fresh clone.

    python -m bench.run_all                 # every benchmark of BENCHMARKS below
    python -m bench.run_all --list          # their command lines
    python -m bench.run_all --only lookup   # those whose module name contains "lookup"
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# (module, arguments): the one list of what `make bench` runs.
BENCHMARKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("bench.bench_align_sentences", ("--speed", "--sizes", "1000,2000")),
    ("bench.bench_align_words", ("--speed-only", "--sizes", "2000")),
    ("bench.bench_annotate", ("500",)),
    ("bench.bench_bilingual", ("extract", "--sentences", "2000")),
    ("bench.bench_bilingual", ("pivot", "--sentences", "20000")),
    ("bench.bench_compression", ("--pairs", "300", "--workers", "1")),
    ("bench.bench_cue_times", ("speed", "--pairs", "100000")),
    ("bench.bench_determinism", ()),                  # the bundled sample, run twice
    ("bench.bench_document_pairing", ("--seeds", "0")),
    ("bench.bench_e5_tokens", ("speed", "--n", "200")),
    ("bench.bench_links", ()),
    ("bench.bench_lookup", ("--pairs", "100000")),
    ("bench.bench_meaning_margin", ("speed", "--pairs", "20000")),
    # a small book: the meaning margin encodes every line (10 chapters took 10 min here)
    ("bench.bench_monolingual_engines", ("--engines", "local", "--pairs", "4",
                                         "--events", "40", "60")),
    ("bench.bench_ocr", ("--limit", "10", "--no-pages")),
    ("bench.bench_ocr_pages", ("--pages", "2", "--workers", "")),
    ("bench.bench_rank", ("scale", "20000")),
    ("bench.bench_rank", ("embed", "256")),
)


def command(module: str, args: tuple[str, ...]) -> list[str]:
    return [sys.executable, "-m", module, *args]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print the commands and stop")
    parser.add_argument("--only", default="", help="run the modules whose name contains this")
    opts = parser.parse_args(argv)
    chosen = [(m, a) for m, a in BENCHMARKS if opts.only in m]
    env = {**os.environ, "CPPDB_BENCH_BUNDLED_ONLY": "1"}
    failed = []
    for module, args in chosen:
        line = " ".join(["python -m", module, *args])
        if opts.list:
            print(line)
            continue
        print(f"== {line}", flush=True)
        start = time.perf_counter()
        code = subprocess.call(command(module, args), cwd=REPO, env=env)
        print(f"== {module}: exit {code}, {time.perf_counter() - start:.0f} s", flush=True)
        if code:
            failed.append(line)
    if failed:
        print("failed:\n  " + "\n  ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
