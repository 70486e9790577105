"""The English pivots of one bilingual pair with their probabilities, recounted from the run.

The pivot step keeps only each pair's pivot strings (``pivots``, best first); its unit
tables are work files it removes.  The probabilities are counts of the run's aligned
occurrences (``phrase_occurrences.parquet``), exactly as the pivot step counts them
(:mod:`cppdb.extractors.pivot`): for an English pivot e (with the pair's LHS and slot
labels), ``p(e|z1) = c(z1, e) / c(z1)`` and ``p(z2|e) = c(z2, e) / c(e)``, and the pair's
``p_t_given_s`` is the sum of their products over the pivots the step kept.  A pattern
whose slots the English orders the other way round is counted under its renumbered target,
as the pivot step joins it.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl

from cppdb import schema as S

PIVOT_COLUMNS = ("pivot", "p_e_given_source", "p_target_given_e", "product")
_SLOT_INDEX = re.compile(r"(\[[^\]\s]+?)([12])\]")


def swap_slots(text: str) -> str:
    """[X1] ↔ [X2] in one pattern string (the pivot step's renumbering of a swapped side)."""
    return _SLOT_INDEX.sub(lambda m: f"{m.group(1)}{'2' if m.group(2) == '1' else '1'}]", text)


def pivot_probabilities(run_dir: Path | None, pair: dict[str, Any]
                        ) -> tuple[pl.DataFrame | None, str | None]:
    """The pair's listed pivots with (p(e|source), p(target|e), product), best first, and a
    note when something is not there (a sentence pair, an export, a run without its
    occurrences)."""
    pair_type = pair.get(S.TYPE)
    if pair_type == "sentence":
        return None, ("a sentence pair (monolingual) has no English pivots: it was aligned "
                      "in its documents")
    listed = list(pair.get(S.PIVOTS) or [])
    if not listed:
        return None, "the pair lists no English pivots"
    occurrences = run_dir / S.OCCURRENCES_FILE if run_dir is not None else None
    if occurrences is None or not occurrences.is_file():
        where = "this database is an export" if run_dir is None else f"{occurrences} is missing"
        return (pl.DataFrame({"pivot": listed}),
                f"pivot probabilities need the run's {S.OCCURRENCES_FILE} ({where})")
    return _recount(occurrences, pair, listed), None


def _recount(occurrences: Path, pair: dict[str, Any], listed: list[str]) -> pl.DataFrame:
    source, target, lhs = pair[S.SOURCE], pair[S.TARGET], pair[S.LHS]
    kind = pair.get(S.TYPE) or "phrase"
    occ = pl.scan_parquet(occurrences).filter((pl.col(S.KIND) == kind) & (pl.col(S.LHS) == lhs))
    sides = [source, target, swap_slots(target)]
    units = (occ.filter(pl.col(S.ZH).is_in(sides))
             .group_by(S.SLOT_SIG, S.EN, S.ZH, S.SWAPPED).agg(pl.len().alias(S.C_ZE))
             .collect())
    c_source = units.filter(pl.col(S.ZH) == source)[S.C_ZE].sum()
    one = units.filter(pl.col(S.ZH) == source).select(
        S.SLOT_SIG, S.EN, pl.col(S.SWAPPED).alias("s1"), (pl.col(S.C_ZE) / c_source).alias("p1"))
    two = units.select(S.SLOT_SIG, S.EN, pl.col(S.ZH).alias("z2"),
                       pl.col(S.SWAPPED).alias("s2"), pl.col(S.C_ZE).alias("c2"))
    # the pivot step renumbers z2's slots when the two sides' English orders differ
    joined = one.join(two, on=[S.SLOT_SIG, S.EN]).filter(
        pl.when(pl.col("s1") == pl.col("s2")).then(pl.col("z2") == target)
        .otherwise(pl.col("z2") == swap_slots(target)))
    c_e = (occ.filter(pl.col(S.EN).is_in(joined[S.EN].unique().implode()))
           .group_by(S.SLOT_SIG, S.EN).agg(pl.len().alias("c_e")).collect())
    per_pivot = (joined.join(c_e, on=[S.SLOT_SIG, S.EN])
                 .with_columns((pl.col("c2") / pl.col("c_e")).alias("p2"))
                 .group_by(S.EN).agg(pl.col("p1").max(), pl.col("p2").max(),
                                     (pl.col("p1") * pl.col("p2")).sum().alias("product")))
    order = pl.DataFrame({S.EN: listed}).with_row_index("_listed")
    return (order.join(per_pivot, on=S.EN, how="left", maintain_order="left")
            .select(pl.col(S.EN).alias("pivot"), pl.col("p1").alias("p_e_given_source"),
                    pl.col("p2").alias("p_target_given_e"), "product"))
