"""Worker processes that never outlive their parent.

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

PR_SET_PDEATHSIG = 1
POLL_SECONDS = 1.0


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
    """``initializer``/``initargs`` keywords for ``ProcessPoolExecutor`` that add
    :func:`die_with_parent` in front of the pool's own initializer (if any)."""
    return {"initializer": _chained, "initargs": (initializer, os.getpid(), *initargs)}
