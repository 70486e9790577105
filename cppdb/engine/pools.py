"""Process pools: the one place ``cppdb`` makes one.

Every pool's workers run :func:`cppdb.workers.die_with_parent` before the pool's own
initializer, so a worker ignores Ctrl-C and never outlives this process.  The start method is
the caller's choice: ``spawn`` by default, since forking after polars, jieba or torch started
threads can deadlock the child; ``fork`` where the workers should inherit models already
loaded here (``annotate.start_method``) or where ``spawn`` would re-run a script's
``__main__`` (OCR on Linux).
"""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

from cppdb.workers import pool_initializer


def process_pool(workers: int, *, start_method: str = "spawn",
                 initializer: Callable[..., Any] | None = None,
                 initargs: tuple[Any, ...] = (),
                 start_now: bool = False) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes started by ``start_method``; each runs
    :func:`~cppdb.workers.die_with_parent`, then ``initializer(*initargs)``.

    ``start_now`` starts every worker from the calling thread before returning, instead of
    on the first tasks: the workers then load their models while the caller works, and they
    die with this thread's process only — Linux ends a worker when the *thread* that spawned
    it exits (``PR_SET_PDEATHSIG``), so a pool fed from a short-lived thread must start its
    workers here."""
    pool = ProcessPoolExecutor(workers, mp_context=get_context(start_method),
                               **pool_initializer(initializer, initargs))
    if start_now:
        for _ in range(workers):
            pool.submit(int)        # the submitting thread spawns the workers
    return pool
