"""Similarity of text pairs — one definition each: character edit distance for the ranking
features (``f_edit_distance``, ``f_normalised_edit_distance``) and the evaluation tables, and
the Jaccard similarity of two list columns (word sets, character sets) for the ranking
features and the cue-time rule.

Levenshtein distance over characters (insert, delete, substitute cost 1) and the same divided
by the longer side's length in characters (two empty strings: 0).  Inputs are already the
*character text* (``features.table.char_text``: NFKC, no whitespace); rapidfuzz's batched
``cpdist`` does the work in C++.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from cppdb.errors import ConfigError


def rapidfuzz_workers(threads: int) -> int:
    """rapidfuzz's ``workers`` argument (threads; -1 = all cores) for a ``threads`` count in
    cppdb's spelling (0 = all cores, like every ``threads`` setting)."""
    if threads < 0:
        raise ConfigError(f"setting 'features.threads' = {threads} is not a thread count",
                          hint="0 = all cores, n = n threads")
    return -1 if threads == 0 else threads


def edit_distances(sources: Sequence[str], targets: Sequence[str], *, threads: int = 0
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(edit distance, normalised edit distance) per pair, float64 arrays; ``threads``
    rapidfuzz threads (0 = all cores)."""
    from rapidfuzz.distance import Levenshtein
    from rapidfuzz.process import cpdist

    if len(sources) == 0:
        return np.zeros(0), np.zeros(0)
    edit = cpdist(list(sources), list(targets), scorer=Levenshtein.distance,
                  workers=rapidfuzz_workers(threads)).astype(np.float64)
    longest = np.maximum(np.fromiter((len(s) for s in sources), np.int64, len(sources)),
                         np.fromiter((len(t) for t in targets), np.int64, len(targets)))
    return edit, np.where(longest > 0, edit / np.maximum(longest, 1), 0.0)


def jaccard(left: pl.Expr, right: pl.Expr, *, empty: float) -> pl.Expr:
    """|L ∩ R| / |L ∪ R| of two list columns taken as sets; ``empty`` when both are empty."""
    inter = left.list.set_intersection(right).list.len()
    union = left.list.set_union(right).list.len()
    return pl.when(union > 0).then(inter / union).otherwise(empty)

