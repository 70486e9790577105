"""Same answer twice at a real size: `extract-bilingual` + `rank` + `export` on the first N
Tatoeba pairs, run twice as separate `cppdb` processes in fresh run directories with the
default configuration; every output file is compared byte by byte.

    python -m bench.bench_determinism [--pairs 3000] [--tatoeba PATH] [--work DIR]

Without ../shared/data (or --tatoeba) it runs on the bundled sample.  The row records the
number of files compared, the differing files (none expected) and each run's wall time.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import record, shared_data

REPO = Path(__file__).resolve().parents[1]
#: files whose bytes legitimately differ between runs (timestamps, the writer's lock)
VOLATILE = {"manifest.json", ".lock"}


def _outputs(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in VOLATILE}


def _cppdb(*args: str) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run([sys.executable, "-m", "cppdb.cli", *args, "-q"], check=True, env=env,
                   cwd=REPO)


def _one_run(inputs: list[str], out: Path) -> float:
    started = time.perf_counter()
    _cppdb("extract-bilingual", *inputs, "-o", str(out))
    _cppdb("rank", str(out))
    _cppdb("export", str(out), "--top", "20%", "--format", "ppdb", "-o", str(out / "top20.ppdb"))
    return round(time.perf_counter() - started, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--tatoeba", type=Path, default=shared_data("tatoeba-cmn", "cmn.txt"))
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="cppdb-determinism-"))
    if args.tatoeba is not None:
        lines = args.tatoeba.read_text("utf-8").splitlines()[:args.pairs]
        corpus = work / "tatoeba.tsv"
        corpus.parent.mkdir(parents=True, exist_ok=True)
        corpus.write_text("\n".join(lines) + "\n", "utf-8")
        # extract-bilingual reads a Tatoeba TSV through --parallel
        inputs, data = ["--parallel", str(corpus)], f"tatoeba first {len(lines)}"
    else:
        par = REPO / "data" / "parallel"
        inputs, data = ["--zh", str(par / "sample.zh"), "--en", str(par / "sample.en")], "bundled sample"
    runs = [work / "run-a", work / "run-b"]
    seconds = []
    for run in runs:
        shutil.rmtree(run, ignore_errors=True)
        seconds.append(_one_run(inputs, run))
    first, second = (_outputs(run) for run in runs)
    differing = sorted(name for name in first.keys() | second.keys()
                       if first.get(name) != second.get(name))
    record("determinism", {"data": data, "files_compared": len(first), "differing": differing,
                           "identical": not differing, "seconds_per_run": seconds,
                           "load": os.getloadavg()[0]})
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
