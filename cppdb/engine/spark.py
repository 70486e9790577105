"""The Spark engine (``--engine spark``, the ``[spark]`` extra): chunks as Spark tasks, and a
Spark session for relational stages.

* Chunks: a DataFrame of ``(start, stop)`` ranges, one per partition, ``mapInPandas`` calls the
  stage's own per-chunk function, which writes its part file atomically into the run
  directory (so the run directory must be on storage every executor sees: local disk for
  ``local[N]``, a shared mount on a cluster).  Parts already on disk are not recomputed, so a
  killed run resumes exactly as on the local engine.
* Relational stages (the pivot) get the session through :meth:`sql_session` and run their own
  Spark SQL (``cppdb.extractors.pivot_sql``): the engine knows no stage.
"""
from __future__ import annotations

import atexit
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from cppdb.engine import Engine
from cppdb.errors import BackendUnavailableError



def local_shuffle_partitions(master: str | None) -> int | None:
    """Shuffle partitions for ``local[N]`` / ``local[*]`` / ``local`` /
    ``local-cluster[N,C,MB]`` masters: 2 per core; None for cluster masters (their own
    configuration decides)."""
    import re

    if master is None or not master.startswith("local"):
        return None
    cluster = re.fullmatch(r"local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,\s*\d+\s*\]", master.strip())
    if cluster is not None:                       # N workers of C cores on this machine
        return max(2, 2 * int(cluster.group(1)) * int(cluster.group(2)))
    match = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\s*\d+)?\])?", master.strip())
    if match is None:
        return None
    cores = match.group(1)
    if cores is None:
        n = 1                                    # plain "local" is one thread
    elif cores == "*":
        n = os.cpu_count() or 1
    else:
        n = int(cores)
    return max(2, 2 * n)


class SparkEngine(Engine):
    name = "spark"
    remote = True
    requires = (("pyspark", "pyspark"),)
    install_hint = "pip install 'cppdb[spark]' and a Java 17 runtime (apt install openjdk-17-jre-headless)"
    description = "Apache Spark: chunks as tasks (mapInPandas), the pivot as Spark SQL"

    def __init__(self, master: str | None = None, session: Any = None) -> None:
        self.master = master
        self._session = session

    @classmethod
    def open(cls, *, master: str | None = None, session: Any = None) -> "SparkEngine":
        return cls(master=master, session=session)

    def check(self) -> None:
        super().check()
        if self._session is None and shutil.which("java") is None \
                and not os.environ.get("JAVA_HOME"):
            raise BackendUnavailableError("the Spark engine needs a Java runtime (17 or later)",
                                          hint="apt install openjdk-17-jre-headless, or set "
                                               "JAVA_HOME")

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["master"] = self.session.sparkContext.master if self._session else self.master
        return info

    @property
    def session(self) -> Any:
        if self._session is None:
            self.check()
            from pyspark.sql import SparkSession

            # executors run this interpreter (and so this cppdb) unless the user chose otherwise
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            builder = (SparkSession.builder.appName("cppdb")
                       .config("spark.ui.showConsoleProgress", "false"))
            if self.master:
                builder = builder.master(self.master)
            partitions = local_shuffle_partitions(self.master)
            if partitions:
                # Spark's 200 shuffle partitions are sized for clusters: on one machine every
                # window/join of the pivot would run 200 tiny tasks
                builder = builder.config("spark.sql.shuffle.partitions", str(partitions))
            self._session = builder.getOrCreate()
            self._session.sparkContext.setLogLevel("ERROR")
            # a session this engine made is stopped before the interpreter exits: left to the
            # JVM's shutdown, a local-cluster master relaunches the executors it is losing
            # and logs dozens of errors after a run that succeeded
            atexit.register(self._session.stop)
        return self._session

    # -- chunks --------------------------------------------------------------------------------
    def map_chunks(self, compute: Callable[[int, int], None],
                   chunks: Sequence[tuple[int, int]]) -> None:
        if not chunks:
            return
        import pandas as pd

        spark = self.session

        def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            for batch in batches:
                for start, stop in zip(batch["start"], batch["stop"]):
                    compute(int(start), int(stop))
                yield pd.DataFrame({"start": batch["start"]})

        ranges = spark.createDataFrame(pd.DataFrame(list(chunks), columns=["start", "stop"]))
        done = (ranges.repartition(len(chunks)).mapInPandas(run, "start long")
                .count())
        if done != len(chunks):
            raise RuntimeError(f"Spark ran {done} of {len(chunks)} chunks")

    def share(self, value: Any) -> Any:
        return self.session.sparkContext.broadcast(value)

    def sql_session(self) -> Any:
        return self.session
