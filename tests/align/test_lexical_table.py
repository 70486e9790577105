"""LexicalTable.lookup against a plain dictionary of its entries (the compiled row search)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from cppdb.align.words.lexical import FLOOR, LexicalTable


def _random_table(seed: int, n_source: int, n_target: int, n_entries: int):
    rng = np.random.default_rng(seed)
    cells = rng.choice(n_source * n_target, size=n_entries, replace=False)
    source_ids, target_ids = cells // n_target, cells % n_target
    probs = rng.random(n_entries)
    table = LexicalTable.from_arrays([f"s{k}" for k in range(n_source)],
                                     [f"t{k}" for k in range(n_target)],
                                     source_ids, target_ids, probs)
    truth = {(int(s), int(t)): float(p) for s, t, p in zip(source_ids, target_ids, probs)}
    return table, truth


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lookup_matches_the_entries_hits_misses_and_unknown_ids(seed: int) -> None:
    table, truth = _random_table(seed, n_source=40, n_target=30, n_entries=300)
    rng = np.random.default_rng(100 + seed)
    # every cell of the grid, plus unknown words (-1) on either side
    sources = np.concatenate([np.repeat(np.arange(40), 30), [-1, 3, -1], rng.integers(0, 40, 50)])
    targets = np.concatenate([np.tile(np.arange(30), 40), [5, -1, -1], rng.integers(0, 30, 50)])
    got = table.lookup(sources, targets)
    want = np.array([truth.get((int(s), int(t)), FLOOR) if s >= 0 and t >= 0 else FLOOR
                     for s, t in zip(sources, targets)])
    assert np.array_equal(got, want)
    assert (got[:40 * 30] != FLOOR).sum() == len(truth)     # each entry once on the grid


def test_sources_without_entries_and_the_last_source_row() -> None:
    table = LexicalTable.from_arrays(["a", "b", "c", "d"], ["x", "y"],
                                     np.array([1, 3, 3]), np.array([1, 0, 1]),
                                     np.array([0.25, 0.5, 0.75]))
    got = table.lookup(np.array([0, 1, 1, 2, 3, 3]), np.array([0, 0, 1, 1, 0, 1]))
    assert got.tolist() == [FLOOR, FLOOR, 0.25, FLOOR, 0.5, 0.75]


def test_empty_table_and_empty_query() -> None:
    empty = LexicalTable.from_arrays([], [], np.array([], dtype=np.int64),
                                     np.array([], dtype=np.int64), np.array([]))
    assert empty.lookup(np.array([0, -1]), np.array([0, 0])).tolist() == [FLOOR, FLOOR]
    table, _ = _random_table(3, 5, 5, 10)
    assert table.lookup(np.array([], dtype=np.int64), np.array([], dtype=np.int64)).shape == (0,)


def test_pickle_drops_the_derived_views_and_answers_the_same() -> None:
    table, _ = _random_table(4, 20, 20, 100)
    sources, targets = np.repeat(np.arange(20), 20), np.tile(np.arange(20), 20)
    before = table.lookup(sources, targets)
    table.source_ids(["s1"])
    state = table.__getstate__()
    assert not {"_rows", "_source_index", "_target_index"} & set(state)
    again = pickle.loads(pickle.dumps(table))
    assert np.array_equal(again.lookup(sources, targets), before)
    assert again.source_ids(["s1", "zz"]).tolist() == [1, -1]
