"""The align stage on one machine's device (a GPU, or the CPU): pairs/s at news length.

    python -m bench.bench_align_device --annotations RUN/annotations.parquet --n 20000 \
        --device cuda --out result.json

Reads already-annotated pairs (``zh_tokens``, ``en_tokens``, ``en_lemma`` of a run's
``annotations.parquet``: the annotate stage is not what is measured) and times what the
``extract-bilingual`` align stage runs on them: ``align_tokenized`` with the configured
ensemble (thot trained on the pairs, CC-CEDICT, simalign-e5 on ``--device``).  Then each
aligner alone on the same pairs, so that the report says which one bounds the stage.  The
first 256 pairs are aligned once before timing (model load, CUDA start-up, kernel choice).

``--stage-workers W`` times the product's own align stage (``run_stage(run, config, "align")``
on a run directory holding the annotations) with ``align_words.train_sample = --train-sample``
and ``align_words.workers = W``: the trained ensemble saved once, chunks split over W local
worker processes.  ``--processes P[,P2…]`` also times the layout an engine with P executors runs (``align_part`` of the
``train_sample`` path): the ensemble trained once, pickled to P worker processes (thot's model
travels as its files, e5 loads on the worker's device), and the pairs aligned in chunks there.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pickle
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl

from bench.common import peak_rss_mb


def _load(path: Path, n: int) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    frame = pl.read_parquet(path, columns=["zh_tokens", "en_tokens", "en_lemma"]).head(n)
    zh = [list(x) for x in frame["zh_tokens"].to_list()]
    en = [list(x) for x in frame["en_tokens"].to_list()]
    lemmas = [list(x) for x in frame["en_lemma"].to_list()]
    return zh, en, lemmas


def _device_facts(device: str) -> dict[str, Any]:
    import torch

    facts: dict[str, Any] = {"torch": torch.__version__, "cpus": os.cpu_count(),
                             "cpu": platform.processor() or platform.machine()}
    if torch.cuda.is_available() and device != "cpu":
        facts["gpu"] = torch.cuda.get_device_name(0)
    return facts


def _gpu_peak_mb() -> float | None:
    import torch

    if not torch.cuda.is_available():
        return None
    return round(torch.cuda.max_memory_allocated() / 2**20, 1)


_WORKER: dict[str, Any] = {}


def _worker_start(blob: bytes, threads: int) -> None:
    """The ensemble, and the worker's share of the cores (as the product's pool workers)."""
    from cppdb.workers import limit_threads

    _WORKER["ensemble"] = pickle.loads(blob)
    limit_threads(threads)


def _worker_align(chunk: tuple[list, list, list]) -> int:
    from cppdb.align.words.api import align_with

    zh, en, lemmas = chunk
    links, _ = align_with(_WORKER["ensemble"], zh, en, lemmas)
    return sum(map(len, links))


def in_processes(zh: list, en: list, lemmas: list, settings: Any, processes: list[int],
                 chunk: int) -> list[dict[str, Any]]:
    """Train once here, then for each count P align in P spawned workers, ``chunk`` pairs
    per task."""
    from cppdb.align.words.api import train_ensemble

    start = time.perf_counter()
    blob = pickle.dumps(train_ensemble(zh, en, settings))
    trained = time.perf_counter() - start
    tasks = [(zh[k:k + chunk], en[k:k + chunk], lemmas[k:k + chunk])
             for k in range(0, len(zh), chunk)]
    context = multiprocessing.get_context("spawn")     # CUDA cannot cross a fork
    rows = []
    for count in processes:
        threads = max(1, (os.cpu_count() or 1) // count)
        with ProcessPoolExecutor(count, mp_context=context, initializer=_worker_start,
                                 initargs=(blob, threads)) as pool:
            list(pool.map(_worker_align, [(zh[:64], en[:64], lemmas[:64])] * count))
            begin = time.perf_counter()
            links = sum(pool.map(_worker_align, tasks))
            aligned = time.perf_counter() - begin
        rows.append({"processes": count, "threads_per_process": threads, "chunk_pairs": chunk,
                     "train_seconds": round(trained, 2), "align_seconds": round(aligned, 2),
                     "links": links, "align_pairs_per_s": round(len(zh) / aligned, 1),
                     "stage_pairs_per_s": round(len(zh) / (trained + aligned), 1)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def in_stage(annotations: Path, n: int, device: str, workers: int, train_sample: int
             ) -> dict[str, Any]:
    """The extract-bilingual align stage itself on ``n`` annotated pairs."""
    import tempfile

    from cppdb import schema as S
    from cppdb.config import load_config
    from cppdb.extractors.bilingual import ALIGNMENT, ANNOTATIONS, run_stage
    from cppdb.run import RunDir

    frame = pl.read_parquet(annotations, columns=["zh_tokens", "en_tokens", "en_lemma"])
    frame = frame.head(n).with_row_index(S.ID).with_columns(pl.col(S.ID).cast(pl.Int64))
    config = load_config(overrides={"align_words.simalign-e5.device": device,
                                    "align_words.workers": workers,
                                    "align_words.train_sample": train_sample})
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = RunDir(Path(tmp) / "run", config, command="bench")
        with run_dir.stage("annotate") as st:
            st.write_parquet(ANNOTATIONS, frame)
        start = time.perf_counter()
        run_stage(run_dir, config, "align")
        seconds = time.perf_counter() - start
        links = pl.read_parquet(run_dir.path(ALIGNMENT))["link_zh"].list.len().sum()
    return {"pairs": frame.height, "workers": workers, "train_sample": train_sample,
            "stage_seconds": round(seconds, 2), "links": int(links),
            "stage_pairs_per_s": round(frame.height / seconds, 1)}


def run(annotations: Path, n: int, device: str, alone: bool, processes: list[int] | None = None,
        chunk: int = 1000, stage: bool = True, overrides: list[str] | None = None
        ) -> dict[str, Any]:
    from cppdb.align.words.api import align_tokenized, build_aligners, compute_matrices
    from cppdb.align.words.settings import AlignWordsSettings
    from cppdb.config import load_config, resolve

    zh, en, lemmas = _load(annotations, n)
    words = sum(map(len, en)) / max(len(en), 1)
    config = load_config(overrides=[f"align_words.simalign-e5.device={device}",
                                     *(overrides or [])])
    settings = resolve(AlignWordsSettings, config)
    aligners, _ = build_aligners(settings)
    placement = {name: (getattr(a, "placement", lambda: "")() or "cpu") for name, a in aligners.items()}
    report: dict[str, Any] = {
        "pairs": len(zh), "en_words_per_sentence": round(words, 2), "device": device,
        "placement": placement, **_device_facts(device), "overrides": overrides or [],
        "signatures": [a.signature() for a in aligners.values()]}
    if stage:
        align_tokenized(zh[:256], en[:256], settings, en_lemmas=lemmas[:256])      # warm-up
        start = time.perf_counter()
        result = align_tokenized(zh, en, settings, en_lemmas=lemmas)
        seconds = time.perf_counter() - start
        report.update({"stage_seconds": round(seconds, 2),
                       "stage_pairs_per_s": round(len(zh) / seconds, 1),
                       "links": sum(map(len, result.links)),
                       "aligners": list(result.aligners_used)})
    if alone and stage:
        pairs = list(zip(zh, en))
        report["alone"] = {}
        for name in result.aligners_used:
            one, _ = build_aligners(settings, [name])
            start = time.perf_counter()
            compute_matrices(one, pairs, en_lemmas=lemmas)
            took = time.perf_counter() - start
            report["alone"][name] = {"seconds": round(took, 2),
                                     "pairs_per_s": round(len(pairs) / took, 1)}
    if processes:
        report["in_processes"] = in_processes(zh, en, lemmas, settings, processes, chunk)
    report["peak_rss_mb"] = round(peak_rss_mb(), 1)
    report["gpu_peak_mb"] = _gpu_peak_mb()
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotations", type=Path, required=True)
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--device", default="auto", help="auto|cpu|cuda|cuda:N (simalign-e5)")
    parser.add_argument("--alone", action="store_true", help="also time each aligner alone")
    parser.add_argument("--processes", default="",
                        help="also align in P worker processes (an engine's executors); "
                             "a comma list times several counts with one trained model")
    parser.add_argument("--no-stage", action="store_true",
                        help="skip the single-process stage timing (with --processes)")
    parser.add_argument("--set", action="append", default=[], dest="overrides",
                        help="a setting, key=value (repeatable)")
    parser.add_argument("--chunk", type=int, default=1000, help="pairs per worker task")
    parser.add_argument("--stage-workers", type=int, default=0,
                        help="only time the align stage itself with align_words.workers = W")
    parser.add_argument("--train-sample", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.stage_workers:
        report = {**in_stage(args.annotations, args.n, args.device, args.stage_workers,
                             args.train_sample), **_device_facts(args.device),
                  "peak_rss_mb": round(peak_rss_mb(), 1)}
    else:
        counts = [int(p) for p in args.processes.split(",") if p.strip()]
        report = run(args.annotations, args.n, args.device, args.alone, counts, args.chunk,
                     stage=not args.no_stage, overrides=args.overrides)
    text = json.dumps(report, indent=1, ensure_ascii=False)
    print(text, flush=True)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
