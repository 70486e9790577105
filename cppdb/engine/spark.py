"""The Spark engine (``--engine spark``, the ``[spark]`` extra): chunks as Spark tasks, the pivot
as Spark SQL.

* Chunks: a DataFrame of ``(start, stop)`` ranges, one per partition, ``mapInPandas`` calls the
  stage's own per-chunk function, which writes its part file atomically into the run
  directory (so the run directory must be on storage every executor sees: local disk for
  ``local[N]``, a shared mount on a cluster).  Parts already on disk are not recomputed, so a
  killed run resumes exactly as on the local engine.
* Pivot: units c(z,e), p(z|e), the rank of z under e and p(e|z) are Spark SQL aggregations
  and windows; the self-join of the Chinese sides within an English pivot is a Spark join
  with the same ``max_per_pivot`` pruning; the contributions are repartitioned by
  (LHS, source) and every partition is summed into pairs by the polars function the local
  engine uses (``mapInArrow``), so the p(z2|z1) = Σ_e p(z2|e)·p(e|z1) sums, anchors and
  composed alignments are computed by one piece of code.
"""
from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from cppdb import schema as S
from cppdb.engine import Engine
from cppdb.errors import BackendUnavailableError

UNIT_KEYS = list(S.UNIT_KEYS)
PIVOT_KEYS = list(S.PIVOT_KEYS)


def local_shuffle_partitions(master: str | None) -> int | None:
    """Shuffle partitions for ``local[N]`` / ``local[*]`` / ``local`` masters: 2 per core;
    None for cluster masters (their own configuration decides)."""
    import re

    if master is None or not master.startswith("local"):
        return None
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

    # -- pivot ---------------------------------------------------------------------------------
    def pivot(self, occurrences: Path, kind: str, work_dir: Path, settings: Any,
              pruned: dict[str, int] | None = None) -> list[Path]:
        if work_dir.exists():
            shutil.rmtree(work_dir)
        occ = self.session.read.parquet(str(occurrences))
        occ = occ.filter(occ[S.KIND] == kind)
        units = _units(occ).cache()
        kept, counts = _prune(units, settings)
        if pruned is not None:
            for name, count in counts.items():
                pruned[name] = pruned.get(name, 0) + count
        contributions = _contributions(kept, settings.max_per_pivot)
        out = work_dir / "pairs"
        _aggregate(contributions, kind, settings).write.parquet(str(out))
        return sorted(out.glob("part-*.parquet"))


def _units(occ: Any) -> Any:
    """c(z,e) with its most frequent alignment and POS; p(z|e), rank of z under e, p(e|z)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    per_align = occ.groupBy(*UNIT_KEYS, S.ALIGN, S.ZH_POS).agg(F.count("*").alias("n"))
    best = Window.partitionBy(*UNIT_KEYS).orderBy(F.desc("n"), F.asc(S.ALIGN), F.asc(S.ZH_POS))
    units = (per_align.withColumn(S.C_ZE, F.sum("n").over(Window.partitionBy(*UNIT_KEYS)))
             .withColumn("_best", F.row_number().over(best))
             .filter(F.col("_best") == 1).drop("_best", "n"))
    by_count = Window.partitionBy(*PIVOT_KEYS).orderBy(F.desc(S.C_ZE), F.asc(S.ZH),
                                                       F.asc(S.SWAPPED))
    by_pivot = Window.partitionBy(S.LHS, S.ZH).orderBy(F.desc(S.C_ZE), F.asc(S.EN),
                                                       F.asc(S.SLOT_SIG), F.asc(S.SWAPPED))
    return (units
            .withColumn(S.P_Z_GIVEN_E,
                        F.col(S.C_ZE) / F.sum(S.C_ZE).over(Window.partitionBy(*PIVOT_KEYS)))
            .withColumn(S.RANK_IN_E, F.row_number().over(by_count).cast("long"))
            .withColumn(S.C_Z, F.sum(S.C_ZE).over(Window.partitionBy(S.LHS, S.ZH)))
            .withColumn(S.P_E_GIVEN_Z, F.col(S.C_ZE) / F.col(S.C_Z))
            .withColumn(S.RANK_IN_Z, F.row_number().over(by_pivot).cast("long")))


def _pruning_masks(settings: Any) -> dict[str, Any]:
    """The polars pivot's pruning rules (``cppdb.extractors.pivot.pruning_masks``) in SQL."""
    from pyspark.sql import functions as F

    from cppdb.extractors.pivot import active_threshold_rules
    from cppdb.text.function_words import ENGLISH_FUNCTION_WORDS, SLOT

    masks: dict[str, Any] = {}
    if settings.skip_function_pivots:
        words = F.array(*[F.lit(w) for w in sorted(ENGLISH_FUNCTION_WORDS)])
        masks["function_pivot"] = F.forall(
            F.split(F.col(S.EN), " "),
            lambda t: F.array_contains(words, F.lower(t)) | t.rlike(SLOT.pattern))
    for rule, column, op, value in active_threshold_rules(settings):
        masks[rule] = F.col(column) < value if op == "<" else F.col(column) > value
    return masks


def _prune(units: Any, settings: Any) -> tuple[Any, dict[str, int]]:
    """Units no rule prunes, and how many units each rule removes first (rules in order)."""
    from pyspark.sql import functions as F

    masks = _pruning_masks(settings)
    if not masks:
        return units, {}
    flagged = units.select("*", *[F.coalesce(m, F.lit(False)).alias(f"_prune_{name}")
                                  for name, m in masks.items()])
    firsts, taken = [], F.lit(False)
    for name in masks:
        flag = F.col(f"_prune_{name}")
        firsts.append(F.sum((flag & ~taken).cast("long")).alias(name))
        taken = taken | flag
    row = flagged.agg(*firsts).collect()[0]
    counts = {name: int(row[name] or 0) for name in masks}
    kept = flagged.filter(~taken).drop(*[f"_prune_{name}" for name in masks])
    return kept, counts


def _swap_slots(column: Any) -> Any:
    """[X1] ↔ [X2] in a pattern (Java regex; the same rewrite as the polars pivot)."""
    from pyspark.sql import functions as F

    placeholder = "\ue000"
    once = F.regexp_replace(column, r"(\[[^\]\s]+?)1\]", "$1" + placeholder + "]")
    twice = F.regexp_replace(once, r"(\[[^\]\s]+?)2\]", "$11]")
    return F.regexp_replace(twice, placeholder, "2")


def _contributions(units: Any, max_per_pivot: int) -> Any:
    """The self-join of the Chinese sides of every English pivot (top ``max_per_pivot``)."""
    from pyspark.sql import functions as F

    from cppdb.extractors.pivot import CONTRIBUTION_CARRIED

    kept = units.filter(F.col(S.RANK_IN_E) <= max_per_pivot)

    def side(index: int) -> Any:
        return kept.select(*PIVOT_KEYS, *[F.col(names[0]).alias(names[index])
                                          for names in S.CONTRIBUTION_SIDES])

    pairs = (side(1).join(side(2), on=PIVOT_KEYS)
             .filter(F.col(S.SOURCE) != F.col(S.TARGET_RAW)))
    target = F.when(F.col(S.SWAP1) != F.col(S.SWAP2), _swap_slots(F.col(S.TARGET_RAW))) \
        .otherwise(F.col(S.TARGET_RAW))
    return pairs.select(
        *CONTRIBUTION_CARRIED, target.alias(S.TARGET),
        (F.col(S.P_Z2_E) * F.col(S.P_E_Z1)).alias(S.FWD),
        (F.col(S.P_Z1_E) * F.col(S.P_E_Z2)).alias(S.BWD),
        F.least(S.C1, S.C2).alias(S.JOINT))


def _aggregate(contributions: Any, kind: str, settings: Any) -> Any:
    """Pairs per (LHS, source) partition, summed by the local engine's polars function."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from cppdb.extractors.pivot import empty_pair_table

    schema = _spark_schema(empty_pair_table().schema)
    arrow_schema = to_arrow_schema(schema)
    max_anchors = settings.max_anchors

    def summed(batches: Iterator[Any]) -> Iterator[Any]:
        import polars as pl
        import pyarrow as pa

        from cppdb.extractors.pivot import _aggregate_pairs, _finalise

        tables = [pa.Table.from_batches([b]) for b in batches]
        if not tables:
            return
        frame = pl.from_arrow(pa.concat_tables(tables))
        if frame.height == 0:
            return
        pairs = _finalise(_aggregate_pairs(frame, kind, max_anchors))
        yield from pairs.to_arrow().cast(arrow_schema).to_batches()

    n = max(1, contributions.sparkSession.sparkContext.defaultParallelism)
    return contributions.repartition(n, S.LHS, S.SOURCE).mapInArrow(summed, schema)


def _spark_schema(polars_schema: Any) -> Any:
    import polars as pl
    from pyspark.sql import types as T

    def convert(dtype: Any) -> Any:
        if isinstance(dtype, pl.List):
            return T.ArrayType(convert(dtype.inner))
        return {pl.String: T.StringType(), pl.Int64: T.LongType(), pl.Int32: T.IntegerType(),
                pl.Float64: T.DoubleType(), pl.Boolean: T.BooleanType()}[dtype.base_type()]

    return T.StructType([T.StructField(name, convert(dtype)) for name, dtype in
                         polars_schema.items()])
