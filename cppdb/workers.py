"""Worker processes: how many a ``workers`` setting asks for, and that they never outlive
their parent.

Every ``workers`` setting (``annotate``, ``bilingual``, ``compression``, ``ocr``) means one
thing, resolved by :func:`resolve_workers` alone: the number of worker processes of that
stage's pool; 0 = all cores, 1 = in this process (no pool), n = n processes.  Threads inside
one process are ``threads`` settings, never ``workers``.

Every process pool passes :func:`die_with_parent` as (part of) its initializer: a worker
ignores Ctrl-C (the terminal sends it to the whole process group; the parent handles it once
and prints one line instead of one traceback per worker), asks Linux to kill it when the
parent dies (``prctl(PR_SET_PDEATHSIG)``, which also covers SIGKILL of the parent), and on
other systems polls for the parent's exit from a daemon thread.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from cppdb.errors import ConfigError

PR_SET_PDEATHSIG = 1
POLL_SECONDS = 1.0


def available_cores() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one: a container
    or ``taskset`` limit, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def limit_threads(threads: int) -> None:
    """A worker's share of the cores for every math library loaded now (torch, OpenMP, BLAS):
    call it after the models are loaded, or a runtime they bring keeps all cores — 16 workers
    of 16 threads each on 16 cores align at half the rate of one-thread workers."""
    import importlib.util

    from threadpoolctl import threadpool_limits

    threadpool_limits(threads)
    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.set_num_threads(threads)


def threads_per_worker(workers: int) -> int:
    """A pool worker's share of the cores for its math libraries (at least one)."""
    return max(1, available_cores() // workers)


def split_range(start: int, stop: int, parts: int) -> list[tuple[int, int]]:
    """``[start, stop)`` cut into at most ``parts`` consecutive ranges of near-equal size (a
    chunk's tasks for a local pool)."""
    step = max(1, -(-(stop - start) // parts))
    return [(a, min(a + step, stop)) for a in range(start, stop, step)]


def resolve_workers(setting: int, key: str, *, all_cores_cap: int = 0) -> int:
    """The worker processes the ``workers`` setting ``key`` (e.g. ``"annotate.workers"``)
    asks for: ``setting`` if > 0 (1 = in this process), all cores if 0 — at most
    ``all_cores_cap`` of them when that is > 0 (a stage whose workers each hold large models
    names its cap as a setting of its own).  A negative count is a ConfigError."""
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < 0:
        raise ConfigError(f"setting '{key}' = {setting!r} is not a number of worker processes",
                          hint="0 = all cores, 1 = in this process, n = n processes")
    if setting > 0:
        return setting
    cores = available_cores()
    return min(cores, all_cores_cap) if all_cores_cap > 0 else cores


def _watch_parent(parent_pid: int) -> None:
    while True:
        if os.getppid() != parent_pid:
            os._exit(1)                 # orphaned: the parent is gone, nobody reads our results
        time.sleep(POLL_SECONDS)


def die_with_parent(parent_pid: int) -> None:
    """Pool initializer: make this worker exit when the process ``parent_pid`` ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass                        # no prctl: the watcher thread below still works
    if os.getppid() != parent_pid:      # the parent died before prctl took effect
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()


def _chained(initializer: Callable[..., Any] | None, parent_pid: int, *args: Any) -> None:
    die_with_parent(parent_pid)
    if initializer is not None:
        initializer(*args)


def pool_initializer(initializer: Callable[..., Any] | None = None,
                     initargs: tuple[Any, ...] = ()) -> dict[str, Any]:
    """``initializer``/``initargs`` keywords for a process pool that add
    :func:`die_with_parent` in front of the pool's own initializer (if any)."""
    return {"initializer": _chained, "initargs": (initializer, os.getpid(), *initargs)}
