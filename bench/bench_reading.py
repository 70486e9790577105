"""Reading + staging the annotate stage's input: wall seconds and peak RSS vs corpus size.

Each measurement runs in a fresh process (its own ``ru_maxrss``): the streamed reader of
this tree (:func:`cppdb.annotate.staging.stage_source`: head-sample detection, incremental
decoding, Parquet row groups of ``--chunk`` pairs) and, with ``--old-tree``, the whole-file
reader of an older checkout (``read_parallel_input`` then ``stage_input``), for comparison.

    git archive f75edf0 | tar -x -C /tmp/old-tree          # the tree before streaming
    python -m bench.bench_reading --zh syn1m.zh --en syn1m.en --sizes 100000 300000 1000000 \
        --work /tmp/reading [--old-tree /tmp/old-tree]

Smaller corpora are the first N lines of the given files (``head``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common import record

_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
mode, zh, en, out, chunk = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4]), int(sys.argv[5])
start = time.perf_counter()
if mode == "old":
    from cppdb.annotate.pipeline import stage_input
    from cppdb.io import write_jsonl_atomic
    from cppdb.readers.parallel import read_parallel_input
    text, _ = read_parallel_input(zh, en, None, max_chars=2000)
    write_jsonl_atomic(out.with_suffix(".jsonl"), (p.to_record(text.source) for p in text.problems))
    stage_input(text, out)
    pairs, rejected = len(text), len(text.problems)
else:
    from cppdb.annotate.staging import stage_source
    from cppdb.readers.parallel import open_parallel_input
    staged = stage_source(open_parallel_input(zh, en, None, max_chars=2000), out,
                          out.with_suffix(".jsonl"), batch_rows=chunk)
    pairs, rejected = staged.pairs, staged.rejected
seconds = time.perf_counter() - start
print(json.dumps({"seconds": round(seconds, 2), "pairs": pairs, "rejected": rejected,
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def _head(src: Path, n: int, work: Path) -> Path:
    out = work / f"{src.stem}.{n}{src.suffix}"
    if not out.exists():
        with src.open("rb") as inp, out.open("wb") as dst:
            for i, line in enumerate(inp):
                if i >= n:
                    break
                dst.write(line)
    return out


def _measure(tree: Path, mode: str, zh: Path, en: Path, work: Path, chunk: int
             ) -> dict[str, Any]:
    out = work / f"staged-{mode}-{zh.stem}.parquet"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", _CHILD, mode, str(zh), str(en), str(out),
                           str(chunk)], env=env, capture_output=True, text=True, check=True)
    out.unlink(missing_ok=True)
    out.with_suffix(".jsonl").unlink(missing_ok=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zh", type=Path, required=True)
    parser.add_argument("--en", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--chunk", type=int, default=20_000, help="annotate.chunk_size")
    parser.add_argument("--old-tree", type=Path, help="checkout with the whole-file reader")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).resolve().parents[1]
    trees = [("stream", here)] + ([("old", args.old_tree)] if args.old_tree else [])
    for size in args.sizes:
        zh, en = _head(args.zh, size, args.work), _head(args.en, size, args.work)
        mb = round((zh.stat().st_size + en.stat().st_size) / 1e6, 1)
        for mode, tree in trees:
            row = _measure(tree, mode, zh, en, args.work, args.chunk)
            record("reading", {"reader": mode, "lines": size, "input_mb": mb,
                               "chunk": args.chunk, **row,
                               "load": round(os.getloadavg()[0], 2)})


if __name__ == "__main__":
    main()
