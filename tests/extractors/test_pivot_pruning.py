"""PPDB-style pivot pruning (issue 11, item 3): each rule on a hand-made occurrence table,
with the cases where it must not fire."""
from __future__ import annotations

import polars as pl
import pytest

from cppdb.extractors.pivot import PivotSettings, pivot
from cppdb.text.function_words import is_function_pivot
from tests.extractors.test_bilingual_pivot import TINY, occ


@pytest.mark.parametrize("tokens,expected", [
    ("the", True), ("of the [NP1]", True), ("[NP1] 's [NN2]", True), ("He", True),
    ("the [NP1] of [NP2]", True),
    ("the old man", False), ("was born in [NP1]", False), ("[NP1] died", False),
    ("died", False), ("[NP1]", True),
])
def test_function_pivot(tokens, expected):
    assert is_function_pivot(tokens.split()) is expected


def _pairs(rows, tmp_path, **settings) -> tuple[set[tuple[str, str]], dict[str, int]]:
    frame = pl.DataFrame(rows, schema_overrides={"align": pl.List(pl.Int32)})
    pruned: dict[str, int] = {}
    parts = pivot(frame.lazy(), "pattern", tmp_path / "work", PivotSettings(**settings), pruned)
    pairs = pl.read_parquet(parts) if parts else pl.DataFrame({"source": [], "target": []})
    return set(pairs.select("source", "target").rows()), pruned


FRAMES = (occ("这 个 [NP1]", "the [NP1]", "0-0", 3, lhs="NP", slot_sig="NP")
          + occ("那 张 [NP1]", "the [NP1]", "0-0", 2, lhs="NP", slot_sig="NP")
          + occ("[NP1] 出生 于 [NP2]", "[NP1] was born in [NP2]", "1-2", 2, lhs="IP",
                slot_sig="NP NP")
          + occ("[NP1] 生于 [NP2]", "[NP1] was born in [NP2]", "1-2", 1, lhs="IP",
                slot_sig="NP NP"))


def test_function_pivots_join_nothing(tmp_path):
    kept, pruned = _pairs(FRAMES, tmp_path, prune_function_pivots=True)
    assert ("这 个 [NP1]", "那 张 [NP1]") not in kept
    assert ("[NP1] 出生 于 [NP2]", "[NP1] 生于 [NP2]") in kept      # a content pivot stays
    assert pruned == {"function_pivot": 2}
    off, pruned_off = _pairs(FRAMES, tmp_path, prune_function_pivots=False)
    assert ("这 个 [NP1]", "那 张 [NP1]") in off and pruned_off == {}


# TINY: c(z1,e1)=2 c(z2,e1)=1 c(z2,e2)=1 c(z3,e2)=1 c(z1,e3)=1; p(e|z): z1: e1 2/3, e3 1/3;
# z2: e1 1/2, e2 1/2; z3: e2 1.  p(z|e): e1: z1 2/3, z2 1/3; e2: z2 1/2, z3 1/2; e3: z1 1.
@pytest.mark.parametrize("settings,pruned,pairs_left", [
    ({}, {}, 4),
    ({"prune_min_p_e_given_f": 0.4}, {"min_p_e_given_f": 1}, 4),        # only (z1, e3): no pair used it
    ({"prune_min_p_f_given_e": 0.4}, {"min_p_f_given_e": 1}, 2),        # (z2, e1) goes: z1–z2 pairs go
    ({"prune_min_count": 2}, {"min_count": 4}, 0),                # only (z1, e1) is seen twice
    ({"prune_max_pivots_per_phrase": 1}, {"max_pivots_per_phrase": 2}, 2),  # z1 keeps e1, z2 keeps e1
])
def test_threshold_rules(tmp_path, settings, pruned, pairs_left):
    frame = pl.DataFrame(TINY, schema_overrides={"align": pl.List(pl.Int32)})
    counts: dict[str, int] = {}
    parts = pivot(frame.lazy(), "phrase", tmp_path / "w", PivotSettings(**settings), counts)
    n = pl.read_parquet(parts).height if parts else 0
    assert counts == pruned
    assert n == pairs_left
