"""Shared helpers of the benchmarks: timing, peak memory, result rows.

Every benchmark is a module ``bench/bench_<area>.py`` with a ``main()`` that calls
:func:`record` once per measured configuration.  Rows are appended to
``bench/results/<area>.jsonl``; ``docs/BENCHMARKS.md`` quotes them.
"""
from __future__ import annotations

import json
import os
import platform
import resource
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_data(*parts: str) -> Path | None:
    """A path under ../shared/data if present (developer machines), else None.

    Always None under ``CPPDB_BENCH_BUNDLED_ONLY=1`` (`make bench`: bundled data only)."""
    if os.environ.get("CPPDB_BENCH_BUNDLED_ONLY") == "1":
        return None
    path = SHARED_DATA.joinpath(*parts)
    return path if path.exists() else None


def peak_rss_mb() -> float:
    """Peak resident memory of this process and its finished children, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, kids) / 1024, 1)


@contextmanager
def timer() -> Iterator[dict[str, float]]:
    box: dict[str, float] = {}
    start = time.perf_counter()
    try:
        yield box
    finally:
        box["seconds"] = round(time.perf_counter() - start, 3)


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn()
    return result, round(time.perf_counter() - start, 3)


def record(area: str, row: dict[str, Any]) -> dict[str, Any]:
    """Append one result row (with machine facts) and print it."""
    full = {"area": area, "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "cores": os.cpu_count(), "python": platform.python_version(),
            "peak_rss_mb": peak_rss_mb(), **row}
    RESULTS.mkdir(parents=True, exist_ok=True)
    with (RESULTS / f"{area}.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps(full, ensure_ascii=False) + "\n")
    sys.stdout.write(json.dumps(full, ensure_ascii=False) + "\n")
    return full
