"""Worker processes for the aligners that need no training (CC-CEDICT, simalign-e5) while the
statistical one, trained on the whole corpus here, reuses its own training alignments.

On 2 cores two one-thread encoder processes align about 10 % more pairs per second than one
process whose torch uses both cores (its Python — tokenising, word vectors, the dictionary —
runs one thread at a time), and this process decodes meanwhile.  Each worker unpickles the
aligners once, loads their models at start-up (while thot trains here) and then gets slices of
a chunk.  Slices are cut the same way on every run, so the same settings give the same
links; the encoder's batches differ from one process's, and with them the last bits of a
few similarities (2 of 400 news pairs got a different link set in bf16).
"""
from __future__ import annotations

import pickle
from collections.abc import Sequence
from concurrent.futures import Future

import numpy as np

from cppdb.align.words.base import TokenPair, WordAligner
from cppdb.align.words.matrices import RejectedPair, chunk_matrices
from cppdb.engine.pools import process_pool
from cppdb.workers import limit_threads, split_range, threads_per_worker

#: a worker's aligners, set once by the pool initializer
_ALIGNERS: dict[str, WordAligner] = {}
_WARM_PAIR: TokenPair = (["我们"], ["we"])


def _start_worker(blob: bytes, threads: int) -> None:
    """Pool initializer: this worker's aligners with their models loaded, then its share of the
    cores (after loading, so the runtimes the models bring are limited too)."""
    _ALIGNERS.clear()
    _ALIGNERS.update(pickle.loads(blob))
    for aligner in _ALIGNERS.values():
        aligner.align([_WARM_PAIR], en_lemmas=[list(_WARM_PAIR[1])])
    limit_threads(threads)


def _slice_matrices(pairs: Sequence[TokenPair], lemmas: Sequence[Sequence[str]] | None
                    ) -> tuple[dict[str, list[np.ndarray]], list[RejectedPair]]:
    failed: list[RejectedPair] = []
    return chunk_matrices(_ALIGNERS, pairs, lemmas, None, failed), failed


class FixedAlignerPool:
    """``workers`` processes computing the matrices of ``aligners`` (none of them trained)."""

    def __init__(self, aligners: dict[str, WordAligner], workers: int) -> None:
        self.names = tuple(aligners)
        self.workers = workers
        threads = threads_per_worker(workers)
        blob = pickle.dumps(aligners, protocol=pickle.HIGHEST_PROTOCOL)
        # started now: the workers load their models while this process trains
        self._pool = process_pool(workers, initializer=_start_worker, initargs=(blob, threads),
                                  start_now=True)

    def submit(self, pairs: Sequence[TokenPair], lemmas: Sequence[Sequence[str]] | None
               ) -> list[tuple[int, Future]]:
        """Slices of ``pairs`` (two per worker) sent off; collect them with :meth:`collect`."""
        return [(start, self._pool.submit(_slice_matrices, pairs[start:stop],
                                          None if lemmas is None else lemmas[start:stop]))
                for start, stop in split_range(0, len(pairs), 2 * self.workers)]

    def collect(self, sent: list[tuple[int, Future]]
                ) -> tuple[dict[str, list[np.ndarray]], list[tuple[int, RejectedPair]]]:
        """Matrices per aligner in pair order, and (slice start, failure) of failed pairs."""
        matrices: dict[str, list[np.ndarray]] = {name: [] for name in self.names}
        failed: list[tuple[int, RejectedPair]] = []
        for start, future in sent:
            part, part_failed = future.result()
            for name in self.names:
                matrices[name].extend(part[name])
            failed.extend((start, f) for f in part_failed)
        return matrices, failed

    def shutdown(self) -> None:
        self._pool.shutdown(cancel_futures=True)
