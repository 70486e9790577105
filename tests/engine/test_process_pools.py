"""One process-pool factory (``cppdb.engine.pools.process_pool``): its workers ignore Ctrl-C
and run the pool's own initializer, start by the method asked for, and start at once when
asked; no module outside ``cppdb/engine/`` makes a pool of its own."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from cppdb.engine.pools import process_pool

PACKAGE = Path(__file__).resolve().parents[2] / "cppdb"
_STATE: dict[str, object] = {}


def _remember(value: str) -> None:
    _STATE["value"] = value


def _worker_state() -> tuple[object, bool, int]:
    return _STATE.get("value"), signal.getsignal(signal.SIGINT) is signal.SIG_IGN, os.getpid()


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_workers_run_die_with_parent_then_the_initializer(method):
    with process_pool(2, start_method=method, initializer=_remember,
                      initargs=(f"loaded by {method}",)) as pool:
        assert pool._mp_context.get_start_method() == method
        value, ignores_ctrl_c, pid = pool.submit(_worker_state).result(timeout=120)
    assert value == f"loaded by {method}" and ignores_ctrl_c and pid != os.getpid()


def test_start_now_starts_every_worker_before_the_first_task():
    lazy = process_pool(2, start_method="fork")
    eager = process_pool(2, start_method="fork", start_now=True)
    try:
        assert len(lazy._processes) == 0
        assert len(eager._processes) == 2
        assert eager.submit(_worker_state).result(timeout=120)[0] is None
    finally:
        lazy.shutdown()
        eager.shutdown()


def pool_makers(root: Path) -> list[str]:
    """Modules under ``root`` outside ``engine/`` that name ``ProcessPoolExecutor``."""
    return sorted(str(path.relative_to(root)) for path in root.rglob("*.py")
                  if "ProcessPoolExecutor" in path.read_text("utf-8")
                  and path.relative_to(root).parts[0] != "engine")


def test_a_pool_made_outside_the_engine_is_found(tmp_path):          # the must-fire case
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "pools.py").write_text("from concurrent.futures import "
                                                  "ProcessPoolExecutor\n")
    (tmp_path / "ocr").mkdir()
    (tmp_path / "ocr" / "batch.py").write_text("pool = ProcessPoolExecutor(2)\n")
    (tmp_path / "ocr" / "page.py").write_text("pool = process_pool(2)\n")
    assert pool_makers(tmp_path) == ["ocr/batch.py"]


def test_only_the_engine_makes_process_pools():
    assert pool_makers(PACKAGE) == []
