"""Score adjustments for pairs that give the user (almost) the same words back (issue 25).

A paraphrase database is valuable for the *different* wordings it holds.  The ranker
predicts a 1–5 rating, and raters accept 男孩 / 这个男孩 as readily as 男孩 / 小伙子, so a
ranking by predicted rating alone fills the top tiers with the first kind.  Two penalties,
in rating points, move such pairs down; they stay in the table (and in ``XL``), so nothing is
lost and a user who wants them sets both to 0:

``containment_penalty``
    off pairs where one side's character text contains the other's;
``diversity_penalty`` × max(0, ``diversity_target`` − ED÷len)
    off pairs in proportion to how many of their characters they share, with ED÷len the
    character edit distance over the longer side — the diversity column of ``cppdb
    evaluate`` (:func:`cppdb.evaluate.tables.edit_distances`), so what the ranking pays
    for is what the evaluation reports.
"""
from __future__ import annotations

import polars as pl

from cppdb import schema as S
from cppdb.features.table import char_text, contained
from cppdb.rank.tiers import SCORE
from cppdb.text.distance import edit_distances


def normalised_edit_distance(frame: pl.DataFrame) -> pl.Series:
    """ED÷len of each row's source and target character text."""
    chars = frame.select(char_text(S.SOURCE).alias("s"), char_text(S.TARGET).alias("t"))
    _, ned = edit_distances(chars["s"].to_list(), chars["t"].to_list())
    return pl.Series("ned", ned, dtype=pl.Float64)


def penalise_sameness(scored: pl.DataFrame, containment_penalty: float,
                      diversity_penalty: float, diversity_target: float) -> pl.DataFrame:
    """``scored`` with both penalties taken off its ``score`` column."""
    penalty = pl.lit(0.0)
    if containment_penalty:
        penalty = penalty + containment_penalty * contained().cast(pl.Float64)
    if diversity_penalty and scored.height:
        shortfall = (diversity_target - normalised_edit_distance(scored)).clip(0.0, None)
        penalty = penalty + diversity_penalty * pl.lit(shortfall)
    return scored.with_columns((pl.col(SCORE) - penalty).alias(SCORE))


def settings_from_config(section: dict) -> tuple[float, float, float]:
    return (float(section["containment_penalty"]), float(section["diversity_penalty"]),
            float(section["diversity_target"]))
