"""The extract-bilingual stages after annotation (align → extract → pivot) on one machine: a
GPU box (16 cores + one GPU) or this one, from annotations made elsewhere.

    python -m bench.bench_stage_device --annotations RUN_A/annotations.parquet \
        --annotations RUN_B/annotations.parquet --workers 12 --out result.json

The annotation files are concatenated (ids renumbered) into a fresh run directory, then each
stage runs as the product runs it (``run_stage``), with every default except
``align_words.workers`` / ``bilingual.workers`` (``--workers``; the GPU layout) and ``--set``.
The report gives each stage's seconds and pairs/s, the align stage's parts — the statistical
aligner's training on its ``max_train_pairs`` sample, how many slices the fixed aligners
prefetched meanwhile (``align_words.prefetch``), the decoding pass — the peak GPU memory and
the peak resident memory of this process and of its largest child.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

from bench.common import peak_rss_mb

STAGES = ("align", "extract", "pivot")


def _facts() -> dict[str, Any]:
    facts: dict[str, Any] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                             "cpu": platform.processor() or platform.machine()}
    try:
        import torch

        facts["torch"] = torch.__version__
        if torch.cuda.is_available():
            facts["gpu"] = torch.cuda.get_device_name(0)
    except ImportError:
        facts["torch"] = None
    return facts


def _annotations(paths: list[Path], limit: int) -> pl.DataFrame:
    """The files one after the other, ids renumbered 0…n-1 (each file's own ids restart)."""
    frames = [pl.read_parquet(p) for p in paths]
    columns = [c for c in frames[0].columns if all(c in f.columns for f in frames)]
    frame = pl.concat([f.select(columns) for f in frames], how="vertical_relaxed")
    if limit:
        frame = frame.head(limit)
    return frame.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("id"))


def _timed_training(box: dict[str, float]) -> None:
    """Record how long the statistical aligner's training takes inside the align stage (the
    name the extractor calls it by)."""
    import cppdb.extractors.bilingual as stage

    real = stage.train_ensemble

    def train(zh, en, config):
        start = time.perf_counter()
        try:
            return real(zh, en, config)
        finally:
            box["train_seconds"] = round(time.perf_counter() - start, 2)

    stage.train_ensemble = train


def run(paths: list[Path], workers: int, overrides: list[str], limit: int,
        stages: tuple[str, ...], keep: Path | None) -> dict[str, Any]:
    from cppdb.config import load_config
    from cppdb.extractors.bilingual import ANNOTATIONS, run_stage
    from cppdb.run import RunDir

    frame = _annotations(paths, limit)
    settings = [f"align_words.workers={workers}", f"bilingual.workers={workers}", *overrides]
    config = load_config(overrides=settings)
    box: dict[str, float] = {}
    _timed_training(box)
    report: dict[str, Any] = {"pairs": frame.height, "workers": workers, "settings": settings,
                              "en_words_per_pair": round(float(
                                  frame["en_tokens"].list.len().mean() or 0), 1),
                              **_facts()}
    with tempfile.TemporaryDirectory() as tmp:
        root = keep or Path(tmp) / "run"
        run_dir = RunDir(root, config, command="bench", fresh=True)
        with run_dir.stage("annotate") as st:
            st.write_parquet(ANNOTATIONS, frame)
        del frame
        total = 0.0
        for name in stages:
            start = time.perf_counter()
            run_stage(run_dir, config, name)
            seconds = time.perf_counter() - start
            total += seconds
            report[f"{name}_seconds"] = round(seconds, 2)
            report[f"{name}_pairs_per_s"] = round(report["pairs"] / seconds, 1)
            print(json.dumps({name: round(seconds, 2)}), flush=True)
        manifest = json.loads((root / "manifest.json").read_text("utf-8"))
        report["align_notes"] = manifest["stages"].get("align", {}).get("notes", {})
        report["counts"] = {name: manifest["stages"].get(name, {}).get("counts", {})
                            for name in stages}
    report.update(box)
    if "train_seconds" in box and "align_seconds" in report:
        report["align_after_training_seconds"] = round(report["align_seconds"]
                                                       - box["train_seconds"], 2)
    report["stages_seconds"] = round(total, 2)
    report["stages_pairs_per_s"] = round(report["pairs"] / total, 1)
    report["peak_rss_mb"] = peak_rss_mb()
    try:
        import torch

        if torch.cuda.is_available():
            report["gpu_peak_mb_this_process"] = round(torch.cuda.max_memory_allocated() / 2**20)
    except ImportError:
        pass
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotations", type=Path, action="append", required=True,
                        help="an annotations.parquet (repeatable: concatenated)")
    parser.add_argument("--workers", type=int, default=1,
                        help="align_words.workers and bilingual.workers (GPU box: ~10-12)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        help="another setting, section.key=value (repeatable)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N pairs")
    parser.add_argument("--stages", default=",".join(STAGES),
                        help=f"comma-separated, in order (default {','.join(STAGES)})")
    parser.add_argument("--keep", type=Path, help="run directory to keep (default: temporary)")
    parser.add_argument("--out", type=Path, help="write the report here as JSON")
    args = parser.parse_args(argv)
    stages = tuple(s for s in args.stages.split(",") if s)
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        parser.error(f"unknown stage(s) {unknown}; choose from {STAGES}")
    report = run(args.annotations, args.workers, args.overrides, args.limit, stages, args.keep)
    text = json.dumps(report, indent=1, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", "utf-8")


if __name__ == "__main__":
    main()
