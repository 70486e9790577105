"""Score adjustments for pairs that give the user (almost) the same words back.

A paraphrase database is valuable for the *different* wordings it holds.  The ranker scores
on the 1–5 rating scale (an expected rating, or ``1 + 4·P(acceptable)``: cppdb.rank.ranker),
and raters accept 男孩 / 这个男孩 as readily as 男孩 / 小伙子, so a ranking by that score
alone fills the top tiers with the first kind.  Two penalties, in points of that scale, move
such pairs down; they stay in the table (and in ``XL``), so nothing is lost and a user who
wants them sets both to 0 (and ``tier_diversity`` to ``{}``):

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

``tier_diversity`` (per type: ``{phrase = 0.70, pattern = 0.60}``)
    states the diversity a type's first tier (``rank.tiers``' smallest share, S = 20 %)
    must reach instead of a fixed penalty: the ranking takes the *smallest* diversity penalty
    in [0, ``max_diversity_penalty``] whose first tier's mean ED÷len is at least the target
    (:func:`tier_penalty`), so each corpus pays no more acceptability for diversity than the
    line needs.  A fixed penalty gave 0.713 on Tatoeba and 0.747 on a news-length corpus:
    the second paid for diversity it was not asked for.  Types without a target take the
    fixed penalties; the penalties chosen are noted in the ranking's manifest.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError
from cppdb.features.table import contained_in_order, pair_edit_distances
from cppdb.rank.tiers import SCORE, TIE_BREAK, tier_size

_RANK = toml_defaults("rank")


#: bisection steps of :func:`tier_penalty` (the penalty is found to max/2**STEPS)
STEPS = 30


@dataclass(frozen=True)
class NoveltySettings:
    """The novelty keys of ``[rank]`` (what :func:`penalise_sameness` takes)."""

    containment_penalty: float = _RANK["containment_penalty"]
    diversity_penalty: float = _RANK["diversity_penalty"]
    diversity_target: float = _RANK["diversity_target"]
    pattern_diversity_penalty: float = _RANK["pattern_diversity_penalty"]
    tier_diversity: Mapping[str, float] = field(
        default_factory=lambda: dict(_RANK["tier_diversity"]))
    max_diversity_penalty: float = _RANK["max_diversity_penalty"]

    def __post_init__(self) -> None:
        targets = self.tier_diversity
        bad = {k: v for k, v in targets.items()
               if k not in S.PAIR_TYPES or isinstance(v, bool) or not isinstance(v, (int, float))
               or not 0.0 <= v <= 1.0}
        if bad:
            raise ConfigError(f"setting 'rank.tier_diversity' has bad entries {bad}",
                              hint=f"a table of pair type ({', '.join(S.PAIR_TYPES)}) → ED÷len "
                                   "in [0, 1], e.g. {phrase = 0.70, pattern = 0.60}; {} = fixed "
                                   "penalties")
        # the loader checks only the types the defaults name (phrase, pattern): a sentence
        # target given as an integer is made a float here
        object.__setattr__(self, "tier_diversity", {k: float(v) for k, v in targets.items()})


def normalised_edit_distance(frame: pl.DataFrame) -> pl.Series:
    """ED÷len of each row's source and target template words (the evaluation's definition)."""
    _, ned = pair_edit_distances(frame[S.SOURCE].to_list(), frame[S.TARGET].to_list(),
                                 template=True)
    return pl.Series("ned", ned, dtype=pl.Float64)


def penalise_sameness(scored: pl.DataFrame, containment_penalty: float,
                      diversity_penalty: float, diversity_target: float,
                      pattern_diversity_penalty: float | None = None,
                      tier_diversity: dict[str, float] | None = None,
                      max_diversity_penalty: float = 4.0,
                      tier_share: float = 0.2, demoted: np.ndarray | None = None
                      ) -> tuple[pl.DataFrame, dict[str, float]]:
    """``scored`` with both penalties taken off its ``score`` column, and the diversity
    penalty each type took.  Patterns, told by the ``type`` column, take
    ``pattern_diversity_penalty`` (None = ``diversity_penalty``); a type with a
    ``tier_diversity`` target takes the smallest penalty whose top ``tier_share`` reaches it
    (module docstring), never counting the ``demoted`` rows (they rank below all others, so
    they are in no first tier)."""
    if pattern_diversity_penalty is None:
        pattern_diversity_penalty = diversity_penalty
    tier_diversity = tier_diversity or {}
    if scored.height == 0:
        return scored, {}
    score = scored[SCORE].cast(pl.Float64).to_numpy().copy()
    if containment_penalty:
        same_words = contained_in_order(scored[S.SOURCE].to_list(), scored[S.TARGET].to_list())
        score -= containment_penalty * np.asarray(same_words, dtype=np.float64)
    types = (scored[S.TYPE].to_numpy() if S.TYPE in scored.columns
             else np.full(scored.height, "", dtype=object))
    fixed = {"pattern": pattern_diversity_penalty}
    ned = normalised_edit_distance(scored).to_numpy()
    shortfall = np.clip(diversity_target - ned, 0.0, None)
    order_key = _tie_order(scored)
    # a demoted row cannot be in the tier the target is for
    ranked_score = score if demoted is None else np.where(demoted, -np.inf, score)
    chosen: dict[str, float] = {}
    for kind in sorted(set(types.tolist())):
        rows = np.flatnonzero(types == kind)
        if kind in tier_diversity:
            weight = tier_penalty(ranked_score[rows], ned[rows], shortfall[rows],
                                  order_key[rows], tier_share, tier_diversity[kind],
                                  max_diversity_penalty)
        else:
            weight = fixed.get(kind, diversity_penalty)
        chosen[kind] = weight
        score[rows] -= weight * shortfall[rows]
    return scored.with_columns(pl.Series(SCORE, score)), chosen


def _tie_order(scored: pl.DataFrame) -> np.ndarray:
    """Each row's place in the tiers' tie-break order: ties of score break as they do there."""
    keys = scored.select(pl.struct(*TIE_BREAK).rank("dense").alias("k"))["k"]
    return keys.to_numpy()


def _top_rows(score: np.ndarray, order_key: np.ndarray, size: int) -> np.ndarray:
    return np.lexsort((order_key, -score))[:size]


def tier_penalty(score: np.ndarray, ned: np.ndarray, shortfall: np.ndarray,
                 order_key: np.ndarray, share: float, target: float,
                 max_penalty: float) -> float:
    """The smallest penalty λ in [0, ``max_penalty``] whose top ``share`` of rows by
    ``score − λ·shortfall`` has a mean ``ned`` ≥ ``target`` (``max_penalty`` when none has;
    0 when no penalty is needed).  A larger λ moves rows that share more wording down, so
    the top's diversity grows with λ; bisection finds the line to ``max_penalty``/2**STEPS
    and returns the upper end, where the line is met."""
    size = tier_size(len(score), share)
    if size == 0:
        return 0.0

    def reaches(weight: float) -> bool:
        top = _top_rows(score - weight * shortfall, order_key, size)
        return float(ned[top].mean()) >= target

    if reaches(0.0):
        return 0.0
    if not reaches(max_penalty):
        return float(max_penalty)
    low, high = 0.0, float(max_penalty)
    for _ in range(STEPS):
        middle = (low + high) / 2
        if reaches(middle):
            high = middle
        else:
            low = middle
    # shown to 6 decimals, rounded up: rounding down could fall just short of the line
    shown = math.ceil(high * 1e6) / 1e6
    return shown if reaches(shown) else high
