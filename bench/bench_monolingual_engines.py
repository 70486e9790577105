"""``extract-monolingual`` over a generated collection of document pairs, per engine.

The collection is ``devtools/doc_collection.py``'s invented book in two versions: ``--pairs``
chapters (200) in each, no extra or merged chapters, ``--events`` events per chapter (150–250:
about 180 sentences and 3,000 characters a chapter, a short novel chapter), files with random
names in random order, so automatic document pairing has real work to do.  Each engine runs
the whole command as its own process under ``/usr/bin/time -v`` (peak RSS = the largest
single process of the tree: the driver, the JVM or one Python worker); the per-stage seconds
and counts come from the run's manifest, and the bead and pair tables of the two engines are
compared.  The load average at start and end is recorded (the machine is shared).

    python -m bench.bench_monolingual_engines --out /tmp/mono-engines
    cd /tmp && PYTHONPATH=/old/checkout:/this/checkout python -m bench.bench_monolingual_engines \
        --out /tmp/mono-engines --engines local --label before     # the same, older code
    python -m bench.bench_monolingual_engines --out /tmp/mono-engines --engines spark \\
        --spark-master 'local[2]' --set monolingual.chunk_size=2
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.bench_scale import _stages, _timed_command
from bench.common import record
from devtools.doc_collection import make_collection

COMPARED = ("beads.parquet", "sentence_pairs.parquet", "low_confidence_pairs.parquet")


def make_inputs(root: Path, pairs: int, events: tuple[int, int], seed: int) -> list[Path]:
    """The two version directories, made once per size and seed: reused only when ``root``
    holds a collection made with the same arguments (``made_with.json``)."""
    dirs = [root / "v0", root / "v1"]
    made_with = {"pairs": pairs, "events": list(events), "seed": seed}
    stamp = root / "made_with.json"
    if not stamp.exists() or json.loads(stamp.read_text("utf-8")) != made_with:
        shutil.rmtree(root, ignore_errors=True)
        make_collection(root, seed, versions=2, chapters=pairs, extras=0, merged=False,
                        events=events)
        stamp.write_text(json.dumps(made_with), "utf-8")
    return dirs


def collection_size(dirs: list[Path]) -> dict[str, Any]:
    files = [p for d in dirs for p in sorted(d.iterdir())]
    chars = [len(p.read_text("utf-8")) for p in files]
    return {"files": len(files), "characters": sum(chars),
            "mean_chapter_characters": round(sum(chars) / max(1, len(chars)))}


def run_engine(dirs: list[Path], out: Path, engine: str, master: str,
               overrides: list[str]) -> dict[str, Any]:
    cppdb = [sys.executable, "-m", "cppdb.cli"]
    sets = [x for item in overrides for x in ("--set", item)]
    # local is the default: no flag, so an older checkout (PYTHONPATH) can be measured too
    chosen = [] if engine == "local" else ["--engine", engine, "--spark-master", master]
    shutil.rmtree(out, ignore_errors=True)
    load_start = os.getloadavg()[0]
    timing = _timed_command(cppdb + ["extract-monolingual", *map(str, dirs), "-o", str(out),
                                     "--quiet", *chosen, *sets])
    stages = _stages(out / "manifest.json")
    units = stages["read"]["rows"].get("units.parquet")
    return {"engine": engine if engine == "local" else f"spark {master}",
            "command_seconds": timing["seconds"], "peak_rss_mb": timing["peak_rss_mb"],
            "stage_seconds": {name: s["seconds"] for name, s in stages.items()},
            "units": units, "groups": stages["documents"]["rows"].get("groups"),
            "unpaired": stages["documents"]["rows"].get("unpaired"),
            "beads": stages["align"]["rows"].get("beads.parquet"),
            "sentence_pairs": stages["pairs"]["rows"].get("sentence_pairs.parquet"),
            "load_start_end": [round(load_start, 2), round(os.getloadavg()[0], 2)]}


def same_tables(first: Path, second: Path) -> dict[str, bool]:
    import polars as pl

    return {table: pl.read_parquet(first / table).equals(pl.read_parquet(second / table))
            for table in COMPARED}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="collection + run directories",
                        default=Path(tempfile.gettempdir()) / "cppdb-bench-monolingual-engines")
    parser.add_argument("--pairs", type=int, default=200, help="chapters per version")
    parser.add_argument("--events", type=int, nargs=2, default=(150, 250),
                        help="events per chapter (min max)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engines", nargs="+", default=["local", "spark"])
    parser.add_argument("--spark-master", default="local[2]")
    parser.add_argument("--set", action="append", default=[], dest="overrides")
    parser.add_argument("--label", default="", help="names the rows (e.g. the code measured)")
    args = parser.parse_args()
    dirs = make_inputs(args.out / "collection", args.pairs, tuple(args.events), args.seed)
    size = collection_size(dirs)
    runs = {}
    for engine in args.engines:
        runs[engine] = args.out / f"run-{engine}{'-' + args.label if args.label else ''}"
        row = run_engine(dirs, runs[engine], engine, args.spark_master, args.overrides)
        if engine != "local" and "local" in runs:
            row["tables_equal_to_local"] = same_tables(runs["local"], runs[engine])
        record("monolingual_engines", {"label": args.label, "chapters_per_version": args.pairs,
                                       "events": list(args.events), "seed": args.seed,
                                       "overrides": args.overrides, **size, **row})
    print(json.dumps({name: str(path) for name, path in runs.items()}))


if __name__ == "__main__":
    main()
