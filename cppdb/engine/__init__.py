"""Engines: where the per-chunk work of a stage runs, and which SQL session relational
stages may use.

The stages are the same on every engine (``cppdb.stages``); the engine is a property of the
run and knows no stage.  ``local`` (default) runs chunks in this process (or its process
pool) and lends no SQL session, so relational stages run their polars plan; ``spark``
(``cppdb.engine.spark``, the ``[spark]`` extra) runs the chunks as Spark tasks calling the
same per-chunk functions and lends its session (the pivot's Spark SQL plan lives with the
pivot, ``cppdb.extractors.pivot_sql``).  Both write the same Parquet artifacts into the run
directory, so later stages and commands do not care which engine wrote them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from cppdb.engine.pools import process_pool
from cppdb.errors import ConfigError
from cppdb.io import write_parquet_atomic
from cppdb.registry import CAPABILITIES, Backend, backend_class
from cppdb.run import chunk_ranges, part_path


class Engine(Backend):
    """Runs a list of independent chunk computations; may lend relational stages a SQL session."""

    #: whether chunks run outside this process (then the runner ships them, see
    #: ``StageHandle.run_parts``); an engine that runs them here computes them in place
    remote: bool = False

    @classmethod
    def open(cls, *, master: str | None = None, session: Any = None) -> "Engine":
        """The engine for a cluster ``master`` or an existing session; engines that run in
        this process take neither."""
        if master is not None or session is not None:
            raise ConfigError("--spark-master needs --engine spark")
        return cls()

    def map_chunks(self, compute: Callable[[int, int], None],
                   chunks: Sequence[tuple[int, int]]) -> None:
        """Call ``compute(start, stop)`` for every chunk (it writes its own outputs)."""
        raise NotImplementedError

    def share(self, value: Any) -> Any:
        """A handle whose ``.value`` is ``value`` inside every chunk computation: a Spark
        broadcast (shipped once per executor, not once per task) or the value itself."""
        return Shared(value)

    def compute_parts(self, parts_dir: Path, n_items: int, chunk_size: int,
                      part: Callable[[int, int], Any]) -> None:
        """See :func:`compute_parts` (the runner calls this, never a stage)."""
        compute_parts(self, parts_dir, n_items, chunk_size, part)

    def sql_session(self) -> Any:
        """A distributed SQL session (Spark) that relational stages may run on, or None: they
        then run their polars plan in this process."""
        return None


class Shared:
    """What :meth:`Engine.share` returns on engines that run chunks in this process."""

    def __init__(self, value: Any) -> None:
        self.value = value


def compute_parts(engine: Engine, parts_dir: Path, n_items: int, chunk_size: int,
                  part: Callable[[int, int], Any]) -> None:
    """On a distributed engine, compute every chunk not yet on disk as one task; ``part``
    (picklable: a module-level function bound to paths and settings) returns the chunk's
    frame, written to the name ``RunDir.run_chunked`` looks for, which then only assembles.
    On the local engine nothing happens here: ``run_chunked`` computes the chunks itself."""
    if not engine.remote:
        return

    Path(parts_dir).mkdir(parents=True, exist_ok=True)
    missing = [(a, b) for a, b in chunk_ranges(n_items, chunk_size)
               if not part_path(parts_dir, a).exists()]
    engine.map_chunks(partial(_write_part, str(parts_dir), part), missing)


def _write_part(parts_dir: str, part: Callable[[int, int], Any], start: int, stop: int) -> None:
    write_parquet_atomic(part_path(Path(parts_dir), start), part(start, stop))


class LocalPool:
    """The local engine's process pool for the chunks a stage computes in this process:
    started on first use (never when the chunks all ran elsewhere), ``None`` for one worker."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: Any = None

    def get(self) -> Any:
        if self._pool is None and self.workers > 1:
            self._pool = process_pool(self.workers)
        return self._pool

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


class LocalEngine(Engine):
    name = "local"
    description = "this machine: polars + a process pool (the default)"

    def map_chunks(self, compute: Callable[[int, int], None],
                   chunks: Sequence[tuple[int, int]]) -> None:
        for start, stop in chunks:
            compute(start, stop)


def make_engine(name: str = "local", *, master: str | None = None,
                session: Any = None) -> Engine:
    """``local``, or ``spark`` on ``master`` (``local[N]``, ``spark://…``, ``yarn``,
    ``k8s://…``) or on an existing ``SparkSession``."""
    if session is not None:
        name = "spark"
    capability = CAPABILITIES["engine"]
    if name not in capability.backends and name not in capability.registered:
        raise ConfigError(f"unknown engine {name!r}",
                          hint=f"choose one of {', '.join(capability.backends)} "
                               f"(or {', '.join(capability.registered)})")
    engine = backend_class("engine", name)            # the registry, like every backend
    return engine.open(master=master, session=session)  # type: ignore[attr-defined]
