"""Score adjustments for pairs that give the user (almost) the same words back (issue 25).

A paraphrase database is valuable for the *different* wordings it holds.  The ranker
predicts a 1–5 rating, and raters accept 男孩 / 这个男孩 as readily as 男孩 / 小伙子, so a
ranking by predicted rating alone fills the top tiers with the first kind.  Two penalties,
in rating points, move such pairs down; they stay in the table (and in ``XL``), so nothing is
lost and a user who wants them sets both to 0:

``containment_penalty``
    off pairs where one side is the other with words added anywhere: its words (slots
    included) appear in order in the other's, or its character text is a substring of the
    other's (男孩 / 这个男孩, 腐败 和 [NP1] / 腐败 和 其他 [NP1]) — the ``in order``
    containment ``cppdb evaluate`` reports (:func:`cppdb.features.table.contained_in_order`),
    so a word inserted mid-phrase is no way around the penalty;
``diversity_penalty`` × max(0, ``diversity_target`` − ED÷len)
    off pairs in proportion to how much of their wording they share, with ED÷len the
    character edit distance over the longer side of the *template words*
    (:func:`cppdb.features.table.template_text`) — ``cppdb evaluate``'s
    ``template_normalised_edit_distance``, one definition for both
    (:func:`cppdb.features.table.pair_edit_distances`), so what the ranking pays for is what
    the evaluation reports.  For phrases and sentences that is their character text; for
    patterns it leaves out the slots, which both sides share by construction (counted as
    text they would make every pattern look like an echo, most of all a short one); patterns
    take ``pattern_diversity_penalty`` instead of ``diversity_penalty``.
"""
from __future__ import annotations

from typing import NamedTuple

import polars as pl

from cppdb import schema as S
from cppdb.features.table import contained_in_order, pair_edit_distances
from cppdb.rank.tiers import SCORE


class NoveltySettings(NamedTuple):
    containment_penalty: float
    diversity_penalty: float
    diversity_target: float
    pattern_diversity_penalty: float


def normalised_edit_distance(frame: pl.DataFrame) -> pl.Series:
    """ED÷len of each row's source and target template words (the evaluation's definition)."""
    _, ned = pair_edit_distances(frame[S.SOURCE].to_list(), frame[S.TARGET].to_list(),
                                 template=True)
    return pl.Series("ned", ned, dtype=pl.Float64)


def penalise_sameness(scored: pl.DataFrame, containment_penalty: float,
                      diversity_penalty: float, diversity_target: float,
                      pattern_diversity_penalty: float | None = None) -> pl.DataFrame:
    """``scored`` with both penalties taken off its ``score`` column (patterns, told by the
    ``type`` column, take ``pattern_diversity_penalty``; None = ``diversity_penalty``)."""
    if pattern_diversity_penalty is None:
        pattern_diversity_penalty = diversity_penalty
    penalty = pl.lit(0.0)
    if containment_penalty and scored.height:
        same_words = contained_in_order(scored[S.SOURCE].to_list(), scored[S.TARGET].to_list())
        penalty = penalty + containment_penalty * pl.lit(pl.Series(same_words, dtype=pl.Float64))
    if (diversity_penalty or pattern_diversity_penalty) and scored.height:
        shortfall = pl.lit((diversity_target - normalised_edit_distance(scored)).clip(0.0, None))
        weight = pl.lit(diversity_penalty)
        if S.TYPE in scored.columns:
            weight = (pl.when(pl.col(S.TYPE) == "pattern").then(pattern_diversity_penalty)
                      .otherwise(diversity_penalty))
        penalty = penalty + weight * shortfall
    return scored.with_columns((pl.col(SCORE) - penalty).alias(SCORE))


def settings_from_config(section: dict) -> NoveltySettings:
    return NoveltySettings(float(section["containment_penalty"]),
                           float(section["diversity_penalty"]),
                           float(section["diversity_target"]),
                           float(section["pattern_diversity_penalty"]))
