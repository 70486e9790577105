"""Engines: where the per-chunk work of a stage and the relational pivot run.

The stages are the same on every engine (``cppdb.stages``); the engine is a property of the
run.  ``local`` (default) runs chunks in this process (or its process pool) and the pivot in
polars; ``spark`` (``cppdb.engine.spark``, the ``[spark]`` extra) runs the chunks as Spark
tasks calling the same per-chunk functions and the pivot as Spark SQL.  Both write the same
Parquet artifacts into the run directory, so later stages and commands do not care which
engine wrote them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cppdb import schema as S
from cppdb.errors import ConfigError
from cppdb.registry import CAPABILITIES, Backend

ENGINES = ("local", "spark")


class Engine(Backend):
    """Runs a list of independent chunk computations, and the pivot."""

    def map_chunks(self, compute: Callable[[int, int], None],
                   chunks: Sequence[tuple[int, int]]) -> None:
        """Call ``compute(start, stop)`` for every chunk (it writes its own outputs)."""
        raise NotImplementedError

    def pivot(self, occurrences: Path, kind: str, work_dir: Path, settings: Any,
              pruned: dict[str, int] | None = None) -> list[Path]:
        """Pair files of one occurrence kind (see :func:`cppdb.extractors.pivot.pivot`);
        ``pruned`` receives the number of units each pruning rule removed."""
        raise NotImplementedError


class LocalEngine(Engine):
    name = "local"
    description = "this machine: polars + a process pool (the default)"

    def map_chunks(self, compute: Callable[[int, int], None],
                   chunks: Sequence[tuple[int, int]]) -> None:
        for start, stop in chunks:
            compute(start, stop)

    def pivot(self, occurrences: Path, kind: str, work_dir: Path, settings: Any,
              pruned: dict[str, int] | None = None) -> list[Path]:
        import polars as pl

        from cppdb.extractors.pivot import pivot

        return pivot(pl.scan_parquet(occurrences).filter(pl.col(S.KIND) == kind), kind,
                     work_dir, settings, pruned)


def make_engine(name: str = "local", *, master: str | None = None,
                session: Any = None) -> Engine:
    """``local``, or ``spark`` on ``master`` (``local[N]``, ``spark://…``, ``yarn``,
    ``k8s://…``) or on an existing ``SparkSession``."""
    if session is not None:
        name = "spark"
    name = CAPABILITIES["engine"].registered.get(name, name)     # cppdb.spark.v1 -> spark
    if name == "local":
        if master is not None:
            raise ConfigError("--spark-master needs --engine spark")
        return LocalEngine()
    if name == "spark":
        from cppdb.engine.spark import SparkEngine

        return SparkEngine(master=master, session=session)
    raise ConfigError(f"unknown engine {name!r}", hint=f"choose one of {', '.join(ENGINES)} "
                      f"(or {', '.join(CAPABILITIES['engine'].registered)})")
