"""Before and after a ranking change, judged where the ranking changed: the pairs that enter
and the pairs that leave each type's top tier.

Two fresh samples of a top tier, one before and one after a change, share most of their
pairs' fate, so their difference is mostly sampling noise: ± 7 points at 120 pairs a cell,
when a change moves 10–15 % of the tier.  The tier's share of acceptable pairs moves only
through the pairs that change, and when both tiers hold n pairs

    Δ = (n_in · p_in − n_out · p_out) / n

with p_in, p_out the acceptable shares of the entering and leaving pairs.  So
:func:`draw_tier_changes` samples those two sets (uniform within each, seeded) and
:func:`tier_change` estimates Δ with a 95 % interval (normal approximation, the two samples
independent).  A sample of 50 + 50 gives about ± 2 points where a tier sample of 120 gives ± 7.

Why not count the judged pairs that land in the new tier: the entering pairs come from
deeper in the ranking, where few pairs were ever judged, so that count sees the pairs that
leave and hardly any of those that take their place (a thesaurus penalty that count scored
at +1.5 to +2.4 points lost 1.3–1.6 points when judged here: docs/benchmarks/rank.md).

When a change also changes how many pairs of a type are ranked (a filter), the tiers differ
in size and Δ depends on the pairs both keep: :func:`tier_change` then gives the two shares
and no Δ.  (Counted in distinct text pairs, two tiers of one ranking size can still differ by
a few pairs ranked under two labels; n is then the new tier's.)
"""
from __future__ import annotations

import math

import polars as pl

from cppdb import schema as S
from devtools.blind import TYPES, join_ratings, without_excluded
from cppdb.rank.judged import ACCEPTABLE
from cppdb.rank.tiers import in_top

ENTERING, LEAVING = "entering", "leaving"


def _tier(ranked: pl.DataFrame, pair_type: str, share: float) -> pl.DataFrame:
    """The distinct pairs (one row per text pair: a pair ranked under two labels is judged
    once) of the top ``share`` of ``pair_type``."""
    return (ranked.filter(pl.col(S.TYPE) == pair_type).filter(in_top(share))
            .select(S.TYPE, S.SOURCE, S.TARGET).unique(maintain_order=True))


def draw_tier_changes(before: pl.DataFrame, after: pl.DataFrame, per_set: int,
                      exclude: pl.DataFrame | None = None, seed: int = 13,
                      share: float = 0.2) -> pl.DataFrame:
    """Key rows: up to ``per_set`` pairs entering and leaving the top ``share`` of each type
    (``cell`` = entering | leaving), with the tier sizes and both sets' sizes on every row (a
    set whose pairs were all excluded still counts in the tier's change); pairs of
    ``exclude`` (:func:`devtools.blind.excluded_keys`) are not drawn — the shares then
    speak for the unjudged part of each set only, so leave it out unless the pairs judged
    before are few."""
    parts = []
    for t_index, pair_type in enumerate(TYPES):
        old, new = _tier(before, pair_type, share), _tier(after, pair_type, share)
        sets = {ENTERING: new.join(old, on=[S.SOURCE, S.TARGET], how="anti"),
                LEAVING: old.join(new, on=[S.SOURCE, S.TARGET], how="anti")}
        sizes = {"tier_before": old.height, "tier_after": new.height,
                 "ranked_before": before.filter(pl.col(S.TYPE) == pair_type).height,
                 "ranked_after": after.filter(pl.col(S.TYPE) == pair_type).height,
                 **{f"{cell}_size": members.height for cell, members in sets.items()}}
        for s_index, (cell, members) in enumerate(sets.items()):
            pool = members.sort(S.SOURCE, S.TARGET)
            if exclude is not None:
                pool = without_excluded(pool, exclude)
            chosen = pool.sample(min(per_set, pool.height), seed=seed + 10 * t_index + s_index,
                                 shuffle=True)
            parts.append(chosen.with_columns(pl.lit(cell).alias("cell"),
                                             pl.lit(members.height).alias("set_size"),
                                             *[pl.lit(v).alias(k) for k, v in sizes.items()]))
    keys = pl.concat(parts, how="vertical_relaxed")
    return keys.select("cell", S.TYPE, S.SOURCE, S.TARGET, "set_size", *sizes)


def tier_change(key: pl.DataFrame, ratings: pl.DataFrame) -> pl.DataFrame:
    """Per type: each set's size, judged n and acceptable share, and Δ (points of the tier's
    acceptable share) with its 95 % half-width; Δ is null, with ``delta_note`` saying why,
    when the rankings differ in size or a non-empty set has no judged pair."""
    joined = join_ratings(key, ratings).filter(pl.col("rating").is_not_null())
    rows = []
    for pair_type in TYPES:
        part = joined.filter(pl.col(S.TYPE) == pair_type)
        if part.is_empty():
            continue
        row: dict = {"type": pair_type, "tier_before": int(part["tier_before"][0]),
                     "tier_after": int(part["tier_after"][0])}
        terms = []
        for cell in (ENTERING, LEAVING):
            rated = part.filter(pl.col("cell") == cell)
            size = int(part[f"{cell}_size"][0])
            p = float((rated["rating"] >= ACCEPTABLE).mean()) if rated.height else None
            row.update({f"{cell}_size": size, f"{cell}_judged": rated.height,
                        f"{cell}_acceptable": p})
            terms.append((size, p, rated.height))
        (n_in, p_in, k_in), (n_out, p_out, k_out) = terms
        # the tiers are the same share of rankings of one size unless a filter changed; their
        # distinct text pairs may still differ by a few (pairs ranked under two labels)
        same_size = row["tier_after"] > 0 and part["ranked_before"][0] == part["ranked_after"][0]
        known = (p_in is not None or n_in == 0) and (p_out is not None or n_out == 0)
        if same_size and known:
            n = row["tier_after"]
            p_in, p_out = p_in or 0.0, p_out or 0.0
            variance = sum((size / n) ** 2 * p * (1 - p) / k
                           for size, p, k in ((n_in, p_in, k_in), (n_out, p_out, k_out)) if k)
            row.update({"delta": (n_in * p_in - n_out * p_out) / n,
                        "delta_ci95": 1.96 * math.sqrt(variance), "delta_note": None})
        else:
            why = ("the rankings differ in size" if not same_size
                   else "a set has no judged pair")
            row.update({"delta": None, "delta_ci95": None, "delta_note": why})
        rows.append(row)
    return pl.DataFrame(rows)


def format_tier_change(table: pl.DataFrame) -> str:
    def pct(value: float | None) -> str:
        return "–" if value is None else f"{value:.1%}"

    lines = ["| type | tier | entering: judged, acceptable | leaving: judged, acceptable "
             "| tier change (points) |", "|---|---|---|---|---|"]
    for r in table.iter_rows(named=True):
        tier = (f"{r['tier_after']}" if r["tier_before"] == r["tier_after"]
                else f"{r['tier_before']} → {r['tier_after']}")
        change = (f"– ({r['delta_note']})" if r["delta"] is None
                  else f"{100 * r['delta']:+.1f} ± {100 * r['delta_ci95']:.1f}")
        sets = " | ".join(f"{r[f'{c}_size']} pairs: {r[f'{c}_judged']}, "
                          f"{pct(r[f'{c}_acceptable'])}" for c in (ENTERING, LEAVING))
        lines.append(f"| {r['type']} | {tier} | {sets} | {change} |")
    return "\n".join(lines)
