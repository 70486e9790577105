"""One matrix per pair and aligner, for a chunk of pairs: the aligners side by side in threads,
a pair an aligner fails on isolated.  Used by the align stage in this process
(:mod:`cppdb.align.words.api`) and by its worker processes (:mod:`cppdb.align.words.pool`).
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from cppdb.align.words.base import MATRIX_BATCH_PAIRS, TokenPair, WordAligner
from cppdb.errors import CppdbError


@dataclass(frozen=True)
class RejectedPair:
    """An input pair that was not aligned (its links are empty) and why."""

    index: int
    reason: str


def side_by_side(aligners: dict[str, WordAligner],
                 work: Callable[[WordAligner], list[np.ndarray]]) -> dict[str, list[np.ndarray]]:
    """``work`` of every aligner, run in threads side by side.

    The encoder aligner spends its time in torch/BLAS calls that release the GIL; the
    dictionary's Python runs meanwhile instead of after it (3% of the align stage at news
    length on 2 cores; thot's calls hold the GIL, so overlapping its training gains nothing).
    Each aligner's matrices are its own, so the result does not depend on the scheduling.
    """
    if len(aligners) == 1:
        return {name: work(aligner) for name, aligner in aligners.items()}
    pool = _side_pool(len(aligners))
    futures = {name: pool.submit(work, aligner) for name, aligner in aligners.items()}
    return {name: future.result() for name, future in futures.items()}


_SIDE_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}
_SIDE_POOLS_LOCK = threading.Lock()


def _side_pool(size: int) -> ThreadPoolExecutor:
    """One long-lived pool per width, not one per chunk: every new thread that calls torch
    gets an OpenMP thread team of its own that outlives it, so a pool per chunk grew the
    align stage by ~0.5 GB per 10k news pairs (docs/benchmarks/scale.md).  Keyed by process
    too: a forked child (a Spark Python worker) has none of its parent's threads."""
    key = (os.getpid(), size)
    with _SIDE_POOLS_LOCK:
        pool = _SIDE_POOLS.get(key)
        if pool is None:
            pool = _SIDE_POOLS[key] = ThreadPoolExecutor(max_workers=size,
                                                         thread_name_prefix="aligner")
        return pool


def _batch_matrices(aligner: WordAligner, batch: Sequence[TokenPair],
                    lemmas: Sequence[Sequence[str]] | None, first: int,
                    failed: list[RejectedPair]) -> list[np.ndarray]:
    """``aligner.align`` of a batch; if it raises, pair by pair, so that one pair the aligner
    cannot handle (a character no rule foresaw: ``int('²')``) costs that pair this aligner's
    votes — an all-zero matrix, recorded in ``failed`` — and not the whole run."""
    try:
        return aligner.align(batch, en_lemmas=lemmas)
    except CppdbError:
        raise           # coded errors (settings, missing backends) are the run's, not a pair's
    except Exception:   # noqa: BLE001 — isolated below, pair by pair
        out: list[np.ndarray] = []
        for k, pair in enumerate(batch):
            try:
                out.extend(aligner.align([pair], en_lemmas=None if lemmas is None
                                         else [lemmas[k]]))
            except Exception as exc:  # noqa: BLE001 — recorded, the pair keeps the others
                failed.append(RejectedPair(first + k, f"{aligner.name} failed "
                                                      f"({type(exc).__name__}: {exc})"))
                out.append(np.zeros((len(pair[0]), len(pair[1])), dtype=np.float32))
        return out


def chunk_matrices(aligners: dict[str, WordAligner], chunk: Sequence[TokenPair],
                    lemmas: Sequence[Sequence[str]] | None, trained_start: int | None,
                    failed: list[RejectedPair] | None = None) -> dict[str, list[np.ndarray]]:
    """Every aligner's matrices for one chunk; trained aligners reuse the training alignments
    of pairs ``trained_start …`` (``None``: the chunk was not in training, decode it).  Pairs
    an aligner failed on (indices in ``chunk``) are appended to ``failed``."""
    failures: list[RejectedPair] = [] if failed is None else failed

    def work(aligner: WordAligner) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for start in range(0, len(chunk), MATRIX_BATCH_PAIRS):
            batch = chunk[start:start + MATRIX_BATCH_PAIRS]
            if trained_start is None or not aligner.needs_training:
                batch_lemmas = None if lemmas is None else \
                    lemmas[start:start + MATRIX_BATCH_PAIRS]
                out.extend(_batch_matrices(aligner, batch, batch_lemmas, start, failures))
            else:
                out.extend(aligner.align_trained(  # type: ignore[attr-defined]
                    batch, trained_start + start))
        return out

    return side_by_side(aligners, work)
