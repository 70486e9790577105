"""Ranks, top-k% selection and PPDB-style nested size tiers.

Within each pair type (phrase / pattern / sentence) pairs are ordered by ``score``
(descending; ties broken by source, then target, so the order is total and reproducible).
``rank`` is the 1-based position and ``percentile`` = rank / n (the share of the type's pairs
at or above this one).

Tiers (``rank.tiers``, default S = 20 %, M = 40 %, L = 60 %, XL = 100 %) are nested by
construction: tier T holds the ``ceil(share_T · n)`` best pairs of each type, so S ⊂ M ⊂ L ⊂
XL and sizes are exact.  The *score cut-off* of a tier is the score of its last pair; every
pair of the tier scores at least that much (pairs demoted below the others, Exclusion pairs,
aside).  ``tier`` is the smallest tier holding the pair.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError, ConfigError

RANK, PERCENTILE, TIER, SCORE = "rank", "percentile", "tier", "score"
#: how ties of score are broken, after it (the order is total, so runs reproduce)
TIE_BREAK = (S.SOURCE, S.TARGET)
#: share · n is not exact in binary (0.55 · 100 = 55.00000000000001): a hair under it keeps
#: the ceiling from adding a pair
_SLACK = 1e-9


def tier_size(n: int, share: float) -> int:
    """How many of ``n`` pairs the top ``share`` holds: ``ceil(share · n)``."""
    return math.ceil(n * share - _SLACK)


def _tier_size(n: pl.Expr, share: float) -> pl.Expr:
    return (n * share - _SLACK).ceil()


@dataclass(frozen=True)
class Tier:
    name: str
    share: float


def tier_list(shares: Mapping[str, float]) -> tuple[Tier, ...]:
    """The tiers of the ``rank.tiers`` table (name → share of each type's best pairs)."""
    tiers = tuple(Tier(name, float(share)) for name, share in shares.items())
    values = [t.share for t in tiers]
    if not tiers or values != sorted(values) or not 0 < values[0] or values[-1] != 1.0:
        raise ConfigError(f"rank.tiers must grow strictly up to 1.0, got {dict(shares)}",
                            hint='e.g. tiers = {S = 0.2, M = 0.4, L = 0.6, XL = 1.0}')
    return tiers


def add_ranks(frame: pl.DataFrame, tiers: tuple[Tier, ...], last: str | None = None
              ) -> pl.DataFrame:
    """Add ``rank``, ``percentile`` and ``tier`` per pair type, best pair first.

    ``last``: a boolean column; its true rows rank below every other pair of their type (by
    score among themselves), so they enter a tier only after all the others."""
    demoted = [pl.col(last).fill_null(False)] if last else []
    ordered = frame.sort([pl.col(S.TYPE), *demoted, pl.col(SCORE), *map(pl.col, TIE_BREAK)],
                         descending=[False, *(False for _ in demoted), True,
                                     *(False for _ in TIE_BREAK)], nulls_last=True)
    n = pl.len().over(S.TYPE)
    rank = pl.int_range(1, pl.len() + 1).over(S.TYPE)
    tier: pl.Expr = pl.lit(None, dtype=pl.String)
    for t in reversed(tiers):
        tier = pl.when(rank <= _tier_size(n, t.share)).then(pl.lit(t.name)).otherwise(tier)
    return ordered.with_columns(rank.cast(pl.Int64).alias(RANK),
                                (rank / n).alias(PERCENTILE), tier.alias(TIER))


def prune_unrelated(scored: pl.DataFrame, relations: tuple[str, ...], below: float
                    ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(kept, pruned): a pair of ``relations`` whose score is not among the best ``below``
    of its type's pairs is pruned; its position counts the pairs scored strictly higher, so
    ties and the row order do not decide."""
    if not relations or below >= 1:
        return scored, scored.clear()
    position = (pl.col(SCORE).rank("min", descending=True).over(S.TYPE)
                / pl.len().over(S.TYPE))
    out = pl.col(S.RELATION).is_in(list(relations)).fill_null(False) & (position > below)
    marked = scored.with_columns(out.alias("_pruned"))
    return (marked.filter(~pl.col("_pruned")).drop("_pruned"),
            marked.filter(pl.col("_pruned")).drop("_pruned")
            .sort(S.TYPE, SCORE, *TIE_BREAK, nulls_last=True,
                  descending=[False, True, *(False for _ in TIE_BREAK)]))


def parse_top(text: str | float, tiers: tuple[Tier, ...] = ()) -> float:
    """``"20%"``, ``"0.2"``, ``0.2`` or a tier name (``"S"``) → a share in (0, 1]."""
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        raw = text.strip()
        named = {t.name.lower(): t.share for t in tiers}
        if raw.lower() in named:
            return named[raw.lower()]
        match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(%?)", raw)
        if not match:
            raise BadInputError(f"--top {text!r} is not a share",
                                hint="write e.g. 20% or 0.2, or a tier name: "
                                     + ", ".join(t.name for t in tiers))
        value = float(match.group(1)) / (100 if match.group(2) else 1)
    if not 0 < value <= 1:
        raise BadInputError(f"--top {text!r} must be a share in (0, 100%]")
    return value


def in_top(share: float) -> pl.Expr:
    """True for the best ``ceil(share · n)`` pairs of each type (needs ``rank`` and ``type``)."""
    return pl.col(RANK) <= _tier_size(pl.len().over(S.TYPE), share)


def select_top(ranked: pl.DataFrame, share: float, pair_type: str | None = None) -> pl.DataFrame:
    """The best ``ceil(share · n)`` pairs of each type (or of ``pair_type`` only)."""
    frame = ranked
    if pair_type is not None:
        if pair_type not in S.PAIR_TYPES:
            raise BadInputError(f"unknown pair type {pair_type!r}",
                                hint=f"choose one of {', '.join(S.PAIR_TYPES)}")
        frame = frame.filter(pl.col(S.TYPE) == pair_type)
    return frame.filter(in_top(share)).sort(S.TYPE, RANK)


def tier_table(ranked: pl.DataFrame, tiers: tuple[Tier, ...]) -> pl.DataFrame:
    """Per type and tier: share, number of pairs and score cut-off (documented in exports)."""
    rows = []
    for pair_type in ranked[S.TYPE].unique(maintain_order=True).to_list():
        part = ranked.filter(pl.col(S.TYPE) == pair_type).sort(RANK)
        for t in tiers:
            size = tier_size(part.height, t.share)
            cutoff = part[SCORE].head(size).min() if size else None
            rows.append({"type": pair_type, "tier": t.name, "share": t.share, "pairs": size,
                         "score_cutoff": cutoff})
    return pl.DataFrame(rows, schema=S.TIERS_SCHEMA)
