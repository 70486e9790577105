"""The aligners that need no training (CC-CEDICT, simalign-e5) compute their matrices while the
statistical one trains on its sample.

On the sampled path the corpus waits for thot: training the 100k-pair sample takes minutes on
two processes, while the encoder (the costliest fixed aligner, on a GPU when there is one) and
the other cores idle.  Prefetching starts worker processes that compute the fixed aligners'
matrices of the slices the decoding pass will align, in its order, and keep each slice on disk
until that pass reads it: the pass then computes only thot's matrices for that slice.  A slice
is cut exactly as the decoding pass cuts it and encoded in the same batches, so its matrices —
and the links — are those the pass would have computed itself.  Training ends the prefetching:
slices still queued are dropped and computed by the pass as before.  The decoding pass runs in
the same worker processes, which keep their fixed aligners loaded: one pool start for the
stage.
"""
from __future__ import annotations

import json
import pickle
import shutil
import threading
from collections.abc import Sequence
from concurrent.futures import Future, wait
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.align.words.api import screen_pairs
from cppdb.align.words.base import CHUNK_PAIRS, WordAligner
from cppdb.align.words.matrices import RejectedPair, chunk_matrices
from cppdb.engine.pools import process_pool
from cppdb.io import atomic_path
from cppdb.progress import console
from cppdb.workers import limit_threads, threads_per_worker

#: a worker's fixed aligners and their screening limit, set once by the pool initializer
_WORKER: dict[str, object] = {}
_WARM_PAIR = (["我们"], ["we"])


def slice_file(folder: Path, start: int, stop: int) -> Path:
    """Where the fixed matrices of annotation rows ``[start, stop)`` are kept."""
    return folder / f"{start:012d}-{stop:012d}.npz"


def read_slice(folder: Path | None, start: int, stop: int
               ) -> tuple[dict[str, list[np.ndarray]], list[RejectedPair]] | None:
    """The prefetched matrices of rows ``[start, stop)`` (per aligner, in the order of the
    slice's kept pairs) and the pairs a fixed aligner failed on; None when not prefetched."""
    if folder is None:
        return None
    path = slice_file(folder, start, stop)
    if not path.exists():
        return None
    with np.load(path, allow_pickle=False) as stored:
        meta = json.loads(str(stored["meta"]))
        matrices = {name: _unflatten(stored[f"{name}.values"], stored[f"{name}.shapes"])
                    for name in meta["aligners"]}
    failed = [RejectedPair(int(i), str(reason)) for i, reason in meta["failed"]]
    return matrices, failed


def _unflatten(values: np.ndarray, shapes: np.ndarray) -> list[np.ndarray]:
    out, offset = [], 0
    for rows, cols in shapes.tolist():
        out.append(values[offset:offset + rows * cols].reshape(rows, cols))
        offset += rows * cols
    return out


def _start_worker(blob: bytes, max_tokens: int, workers: int) -> None:
    """Pool initializer: the fixed aligners with their models loaded (a first pair warms the
    encoder on its device), then this worker's share of the cores."""
    aligners = pickle.loads(blob)
    for aligner in aligners.values():
        aligner.align([_WARM_PAIR], en_lemmas=[list(_WARM_PAIR[1])])
    _WORKER.update(aligners=aligners, max_tokens=max_tokens, workers=workers)
    limit_threads(threads_per_worker(workers))


def compute_slice(ann_path: str, folder: str, start: int, stop: int) -> int:
    """A worker's task: the fixed matrices of rows ``[start, stop)``, screened and cut into
    chunks as :func:`cppdb.align.words.api.align_with` does, written to the slice's file."""
    aligners: dict[str, WordAligner] = _WORKER["aligners"]    # type: ignore[assignment]
    zh, en, lemma = S.ann("zh", "tokens"), S.ann("en", "tokens"), S.ann("en", "lemma")
    scan = pl.scan_parquet(ann_path)
    has_lemma = lemma in scan.collect_schema().names()
    part = scan.slice(start, stop - start).select([zh, en] + ([lemma] if has_lemma else [])
                                                   ).collect()
    zh_rows, en_rows = part[zh].to_list(), part[en].to_list()
    kept, _ = screen_pairs(zh_rows, en_rows, int(_WORKER["max_tokens"]))  # type: ignore[arg-type]
    pairs = [(list(zh_rows[k]), list(en_rows[k])) for k in kept]
    lemmas = _kept_lemmas(part[lemma].to_list(), en_rows, kept) if has_lemma else None
    matrices: dict[str, list[np.ndarray]] = {name: [] for name in aligners}
    failed: list[RejectedPair] = []
    for first in range(0, len(pairs), CHUNK_PAIRS):
        chunk_failed: list[RejectedPair] = []
        mats = chunk_matrices(aligners, pairs[first:first + CHUNK_PAIRS],
                              None if lemmas is None else lemmas[first:first + CHUNK_PAIRS],
                              None, chunk_failed)
        for name in aligners:
            matrices[name].extend(mats[name])
        failed.extend(RejectedPair(first + f.index, f.reason) for f in chunk_failed)
    _write_slice(slice_file(Path(folder), start, stop), matrices, failed)
    return len(pairs)


def _kept_lemmas(lemmas: list[Sequence[str] | None], en_rows: list[Sequence[str]],
                 kept: list[int]) -> list[list[str]] | None:
    """The lemmas of the kept pairs, when every row has one per token (as the pass's
    ``_usable_lemmas`` decides over the whole slice)."""
    rows = [list(x or ()) for x in lemmas]
    if any(len(a) != len(b) for a, b in zip(rows, en_rows)):
        return None
    return [rows[k] for k in kept]


def _write_slice(path: Path, matrices: dict[str, list[np.ndarray]],
                 failed: list[RejectedPair]) -> None:
    arrays: dict[str, np.ndarray] = {}
    for name, mats in matrices.items():
        arrays[f"{name}.values"] = (np.concatenate([m.ravel() for m in mats]).astype(np.float32)
                                    if mats else np.zeros(0, dtype=np.float32))
        arrays[f"{name}.shapes"] = np.array([m.shape for m in mats], dtype=np.int64
                                            ).reshape(-1, 2)
    meta = {"aligners": list(matrices), "failed": [[f.index, f.reason] for f in failed]}
    arrays["meta"] = np.array(json.dumps(meta, ensure_ascii=False))
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)


class Prefetch:
    """``workers`` processes computing the fixed aligners' matrices of ``slices`` (in order)
    into ``folder`` until :meth:`stop_feeding`; at most two slices per worker are queued at a
    time, so stopping drops little work.  The same processes then decode (:meth:`submit` with
    :func:`worker_ensemble`): their fixed aligners stay loaded, only the trained one travels."""

    def __init__(self, ann_path: Path, aligners: dict[str, WordAligner], max_tokens: int,
                 slices: Sequence[tuple[int, int]], folder: Path, workers: int) -> None:
        self.folder = folder
        self.workers = workers
        self._ann_path = str(ann_path)
        self._slices = list(slices)
        self._stopping = threading.Event()
        self._sent: list[Future] = []
        #: the first failure of a worker (its slice is then aligned by the pass as usual)
        self.error: str | None = None
        folder.mkdir(parents=True, exist_ok=True)
        blob = pickle.dumps(aligners, protocol=pickle.HIGHEST_PROTOCOL)
        # every worker started from this thread: Linux ends a pool worker when the *thread*
        # that spawned it exits (PR_SET_PDEATHSIG), and the feeder thread ends early
        self._pool = process_pool(workers, initializer=_start_worker,
                                  initargs=(blob, max_tokens, workers), start_now=True)
        self._in_flight = threading.Semaphore(2 * workers)
        self._feeder = threading.Thread(target=self._feed, name="prefetch", daemon=True)
        self._feeder.start()

    def _feed(self) -> None:
        for start, stop in self._slices:
            self._in_flight.acquire()
            if self._stopping.is_set():
                return
            if slice_file(self.folder, start, stop).exists():   # a resumed run's slice
                self._in_flight.release()
                continue
            future = self._pool.submit(compute_slice, self._ann_path, str(self.folder),
                                       start, stop)
            self._sent.append(future)
            future.add_done_callback(lambda f, key=(start, stop): self._finished(f, key))

    def _finished(self, future: Future, key: tuple[int, int]) -> None:
        self._in_flight.release()
        if future.cancelled():
            return
        error = future.exception()
        if error is not None and self.error is None:
            self.error = f"rows {key[0]}..{key[1] - 1}: {type(error).__name__}: {error}"

    def stop_feeding(self) -> int:
        """Queue no more slices and wait for the running ones; the number of slices on
        disk.  The workers stay for :meth:`submit`."""
        self._stopping.set()
        self._in_flight.release()          # wake the feeder if it waits for a free place
        self._feeder.join()
        wait(self._sent)
        if self.error is not None:
            console().print(f"[yellow]align: prefetching stopped early ({self.error}); the "
                            "decoding pass computes the remaining slices itself[/yellow]")
        return sum(1 for a, b in self._slices if slice_file(self.folder, a, b).exists())

    def submit(self, fn: Any, *args: Any) -> Future:
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        """End the workers and remove what is left of the prefetched slices."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self.folder, ignore_errors=True)


def trained_part(ensemble: Any) -> Any:
    """What the decoding workers need besides their own fixed aligners: the ensemble with
    only its trained aligners (and the order of all of them)."""
    from dataclasses import replace

    trained = {n: a for n, a in ensemble.aligners.items() if a.needs_training}
    return replace(ensemble, aligners=trained), tuple(ensemble.aligners)


@lru_cache(maxsize=1)
def worker_ensemble(model_file: str) -> SimpleNamespace:
    """In a prefetch worker: the trained aligners from ``model_file`` (see
    :func:`trained_part`) joined with the fixed ones this worker already holds."""
    from dataclasses import replace

    with open(model_file, "rb") as handle:
        trained, order = pickle.load(handle)
    fixed: dict[str, WordAligner] = _WORKER["aligners"]     # type: ignore[assignment]
    aligners = {name: trained.aligners.get(name) or fixed[name] for name in order}
    limit_threads(threads_per_worker(int(_WORKER["workers"])))  # the runtime thot brings too
    return SimpleNamespace(value=replace(trained, aligners=aligners))
