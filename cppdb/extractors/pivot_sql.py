"""The pivot in Spark SQL, for engines with a distributed SQL session (``--engine spark``).

The same relational steps as :func:`cppdb.extractors.pivot.pivot`: units c(z,e), p(z|e), the
rank of z under e and p(e|z) are SQL aggregations and windows; the self-join of the Chinese
sides within an English pivot is a join with the same ``max_per_pivot`` pruning; the
contributions are repartitioned by (LHS, source) and every partition is summed into pairs by
the polars function of the local pivot (``mapInArrow``), so the p(z2|z1) = Σ_e p(z2|e)·p(e|z1)
sums, anchors, evidence and composed alignments are computed by one piece of code.  The
parity tests (tests/engine/test_spark_engine.py) hold the two to the same tables.
"""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cppdb import schema as S
from cppdb.extractors.pivot import (
    CONTRIBUTION_CARRIED,
    PLACE_SOURCES,
    PivotSettings,
    active_threshold_rules,
    aggregate_pairs,
    empty_pair_table,
    finalise,
)
from cppdb.text.function_words import ENGLISH_FUNCTION_WORDS, SLOT

UNIT_KEYS = list(S.UNIT_KEYS)
PIVOT_KEYS = list(S.PIVOT_KEYS)


def pivot_sql(session: Any, occurrences: Path, kind: str, work_dir: Path,
              settings: PivotSettings, pruned: dict[str, int] | None = None) -> list[Path]:
    """Pair files of one occurrence kind, computed on ``session``; ``pruned`` receives the
    number of units each pruning rule removed."""
    if work_dir.exists():
        shutil.rmtree(work_dir)
    occ = session.read.parquet(str(occurrences))
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
             .filter(F.col("_best") == 1).drop("_best", "n")
             .join(_unit_evidence(occ), on=list(UNIT_KEYS), how="left"))
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


def _unit_evidence(occ: Any) -> Any:
    """The polars pivot's ``_unit_evidence``: first/last sentence, distinct sentences, and
    the unit's one place (null when it occurs at several)."""
    from pyspark.sql import functions as F

    spans = [agg for col in PLACE_SOURCES
             for agg in (F.min(col).alias(f"_lo_{col}"), F.max(col).alias(f"_hi_{col}"))]
    per_unit = occ.groupBy(*UNIT_KEYS).agg(
        F.min(S.ID).alias(S.SENT_FIRST), F.max(S.ID).alias(S.SENT_LAST),
        F.countDistinct(S.ID).cast("long").alias(S.N_SENT), *spans)
    one_place = F.col(S.SENT_FIRST) == F.col(S.SENT_LAST)
    for col in PLACE_SOURCES:
        one_place = one_place & (F.col(f"_lo_{col}") == F.col(f"_hi_{col}"))
    return per_unit.select(
        *UNIT_KEYS, S.SENT_FIRST, S.SENT_LAST, S.N_SENT,
        *[F.when(one_place, F.col(f"_lo_{col}")).cast("int").alias(name)
          for col, name in zip(PLACE_SOURCES, S.PLACE, strict=True)])


def _evidence_flags() -> list[Any]:
    """The polars pivot's ``evidence_flags`` in SQL (sides suffixed 1 and 2)."""
    from pyspark.sql import functions as F

    def c(name: str, side: str) -> Any:
        return F.col(name + side)

    zs, ze, es, ee = S.PLACE
    one_sentence = ((c(S.SENT_FIRST, "1") == c(S.SENT_LAST, "1"))
                    & (c(S.SENT_FIRST, "2") == c(S.SENT_LAST, "2"))
                    & (c(S.SENT_FIRST, "1") == c(S.SENT_FIRST, "2")))
    inside_12 = (c(zs, "1") >= c(zs, "2")) & (c(ze, "1") <= c(ze, "2"))
    inside_21 = (c(zs, "2") >= c(zs, "1")) & (c(ze, "2") <= c(ze, "1"))
    nested = (one_sentence & (c(es, "1") == c(es, "2")) & (c(ee, "1") == c(ee, "2"))
              & (inside_12 | inside_21))
    return [(~one_sentence).alias(S.CROSS), F.coalesce(nested, F.lit(False)).alias(S.NESTED),
            F.least(c(S.N_SENT, "1"), c(S.N_SENT, "2")).alias(S.JOINT_SENT)]


def _pruning_masks(settings: Any) -> dict[str, Any]:
    """The polars pivot's pruning rules (:func:`~cppdb.extractors.pivot.pruning_masks`) in SQL."""
    from pyspark.sql import functions as F

    masks: dict[str, Any] = {}
    if settings.prune_function_pivots:
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

    kept = units.filter(F.col(S.RANK_IN_E) <= max_per_pivot)

    def side(index: int) -> Any:
        return kept.select(*PIVOT_KEYS, *[F.col(names[0]).alias(names[index])
                                          for names in S.CONTRIBUTION_SIDES],
                           *[F.col(name).alias(f"{name}{index}") for name in S.UNIT_EVIDENCE])

    pairs = (side(1).join(side(2), on=PIVOT_KEYS)
             .filter(F.col(S.SOURCE) != F.col(S.TARGET_RAW)))
    target = F.when(F.col(S.SWAP1) != F.col(S.SWAP2), _swap_slots(F.col(S.TARGET_RAW))) \
        .otherwise(F.col(S.TARGET_RAW))
    return pairs.select(
        *CONTRIBUTION_CARRIED, *_evidence_flags(), target.alias(S.TARGET),
        (F.col(S.P_Z2_E) * F.col(S.P_E_Z1)).alias(S.FWD),
        (F.col(S.P_Z1_E) * F.col(S.P_E_Z2)).alias(S.BWD),
        F.least(S.C1, S.C2).alias(S.JOINT))


def _aggregate(contributions: Any, kind: str, settings: Any) -> Any:
    """Pairs per (LHS, source) partition, summed by the local engine's polars function."""
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = _spark_schema(empty_pair_table().schema)
    arrow_schema = to_arrow_schema(schema)
    max_anchors = settings.max_anchors

    def summed(batches: Iterator[Any]) -> Iterator[Any]:
        import polars as pl
        import pyarrow as pa

        tables = [pa.Table.from_batches([b]) for b in batches]
        if not tables:
            return
        frame = pl.from_arrow(pa.concat_tables(tables))
        if frame.height == 0:
            return
        pairs = finalise(aggregate_pairs(frame, kind, max_anchors))
        yield from pairs.to_arrow().cast(arrow_schema).to_batches()

    n = max(1, contributions.sparkSession.sparkContext.defaultParallelism)
    return contributions.repartition(n, S.LHS, S.SOURCE).mapInArrow(summed, schema)


def _spark_schema(polars_schema: Any) -> Any:
    import polars as pl
    from pyspark.sql import types as T

    def convert(dtype: Any) -> Any:
        if isinstance(dtype, pl.List):
            return T.ArrayType(convert(dtype.inner))
        if isinstance(dtype, pl.Struct):
            return T.StructType([T.StructField(f.name, convert(f.dtype)) for f in dtype.fields])
        return {pl.String: T.StringType(), pl.Int64: T.LongType(), pl.Int32: T.IntegerType(),
                pl.Float64: T.DoubleType(), pl.Boolean: T.BooleanType()}[dtype.base_type()]

    return T.StructType([T.StructField(name, convert(dtype)) for name, dtype in
                         polars_schema.items()])
