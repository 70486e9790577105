"""Rich progress bars that disappear under ``--quiet`` or when stderr is not a terminal."""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

_QUIET = False


def set_quiet(quiet: bool) -> None:
    global _QUIET
    _QUIET = quiet


def console() -> Console:
    """Console for human-readable messages (stderr, so stdout stays machine-readable)."""
    return Console(stderr=True, quiet=_QUIET, soft_wrap=True)


@contextmanager
def progress_bar(total: int | None, description: str) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``; shows a bar on an interactive stderr unless quiet."""
    if _QUIET or not sys.stderr.isatty():
        yield lambda n=1: None
        return
    columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn()]
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)
