"""The relation mix: the share of each relation label among the pairs of each type and tier.

The label is the one an export writes and ``cppdb lookup`` shows
(:mod:`cppdb.rank.relation_groups`): the ranked table's ``relation`` (the classifier's,
:mod:`cppdb.rank.relations`, or the rule's ``Exclusion``), any PPDB 2.0 label a pair file
carries, the containment test's ``ForwardEntailment`` / ``ReverseEntailment`` for a table
without relations, and ``undecided`` where nothing says anything.  Tiers are nested as the
ranker made them (S ⊂ M ⊂ L ⊂ XL): the pairs of tier
M are those whose smallest tier is S or M, so the shares of a tier describe what
``cppdb lookup --tier M`` returns.  A run's pruned pairs (``ranking/pruned_pairs.parquet``,
low-ranked OtherRelated / Independent pairs out of the table) follow as the row ``pruned``.
The shares are a census of the tier, not a sample, so they carry no interval.  The mix says
what the tiers hold by the classifier's account; the classifier's accuracy is in
docs/benchmarks/rank.md, "Relations".
"""
from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from cppdb import schema as S
from cppdb.rank.relation_groups import (GROUP, LABEL, LABEL_ORDER, UNDECIDED, group_expr,
                                        label_expr)

TIER = "tier"
#: the mix's row of the pairs the ranking pruned (cppdb.rank.tiers.prune_unrelated)
PRUNED = "pruned"
#: the label of the pairs no test decided, as the mix names it ("" in an export)
UNDECIDED_NAME = "undecided"
MIX_SCHEMA = {"type": pl.String, "tier": pl.String, "relation": pl.String, "group": pl.String,
              "pairs": pl.Int64, "share": pl.Float64}


def relation_mix(ranking: pl.DataFrame, tiers: Sequence[str],
                 pruned: pl.DataFrame | None = None) -> pl.DataFrame | None:
    """One row per (type, tier, relation label): ``pairs`` of that label in the tier and
    their ``share`` of the tier's pairs of that type; tiers in ``tiers`` order (smallest
    first), then ``pruned`` (the pruned pairs, when there are any), labels in PPDB 2.0's
    order.  None for a ranking without a ``tier`` column."""
    if TIER not in ranking.columns:
        return None
    labelled = ranking.select(
        pl.col(S.TYPE) if S.TYPE in ranking.columns else pl.lit("phrase").alias(S.TYPE),
        TIER, label_expr(ranking.columns))
    parts = [labelled.filter(pl.col(TIER).is_in(list(tiers[:index + 1])))
             .with_columns(pl.lit(name).alias("_tier")).drop(TIER)
             for index, name in enumerate(tiers)]
    if pruned is not None and pruned.height:
        parts.append(pruned.select(S.TYPE, label_expr(pruned.columns))
                     .with_columns(pl.lit(PRUNED).alias("_tier")))
        tiers = [*tiers, PRUNED]
    counts = (pl.concat(parts).group_by(S.TYPE, "_tier", LABEL).len("pairs")
              .with_columns((pl.col("pairs") / pl.col("pairs").sum().over(S.TYPE, "_tier"))
                            .alias("share")))
    order = {name: index for index, name in enumerate(LABEL_ORDER)}
    return (counts.with_columns(
                pl.col(LABEL).replace_strict(order, default=len(order),
                                             return_dtype=pl.Int32).alias("_label"),
                pl.col("_tier").replace_strict({t: i for i, t in enumerate(tiers)},
                                               return_dtype=pl.Int32).alias("_order"),
                group_expr(pl.col(LABEL)).alias(GROUP))
            .sort(S.TYPE, "_order", "_label", LABEL)
            .select(pl.col(S.TYPE).alias("type"), pl.col("_tier").alias("tier"),
                    pl.when(pl.col(LABEL) == UNDECIDED).then(pl.lit(UNDECIDED_NAME))
                    .otherwise(pl.col(LABEL)).alias("relation"),
                    pl.col(GROUP).alias("group"), pl.col("pairs").cast(pl.Int64), "share")
            .cast(MIX_SCHEMA))
