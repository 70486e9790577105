"""Omission-aware re-alignment: long unmatched stretches re-aligned with affine gaps."""
import numpy as np
import pytest

from cppdb.align.sentences.beads import Bead
from cppdb.align.sentences.omissions import OmissionSettings, poor_runs, widen_ranges
from cppdb.align.sentences.vecalign import VecalignSettings, vecalign
from cppdb.errors import ConfigError


def _texts(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, 64)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _noisy(v: np.ndarray, seed: int) -> np.ndarray:
    w = v + 0.5 * np.random.default_rng(seed).normal(size=v.shape).astype(np.float32) / 8
    return (w / np.linalg.norm(w, axis=1, keepdims=True)).astype(np.float32)


# (units, cut from source [start, stop), cut from target [start, stop), regions expected)
CASES = [
    (80, (20, 38), (50, 66), True),     # a block missing on each side: shifted diagonal
    (80, None, (30, 45), None),         # one block missing from one side: either way right
    (80, None, None, False),            # identical order: must not fire
    (80, (40, 41), None, False),        # a single deleted sentence: Vecalign handles it
]


@pytest.mark.parametrize("units,cut_src,cut_tgt,fires", CASES)
def test_omitted_block_is_realigned(units, cut_src, cut_tgt, fires):
    base = _texts(units, 1)
    src_ids = [i for i in range(units) if not (cut_src and cut_src[0] <= i < cut_src[1])]
    tgt_ids = [i for i in range(units) if not (cut_tgt and cut_tgt[0] <= i < cut_tgt[1])]
    src, tgt = base[src_ids], _noisy(base[tgt_ids], 2)
    gold = {(s, t) for s, i in enumerate(src_ids) for t, j in enumerate(tgt_ids) if i == j}
    stats: dict = {}
    beads = vecalign(src, tgt, VecalignSettings(), rng=np.random.default_rng(0), stats=stats)
    found = {(b.src[0], b.tgt[0]) for b in beads if b.is_one_to_one}
    if fires is not None:
        assert (stats["omission_regions"] > 0) == fires
    # the cut points may join a neighbour into a 2-1 bead; everything else is exact
    assert len(found & gold) >= len(gold) - 2 and len(found - gold) <= 1


def test_off_mode_keeps_vecalign_beads():
    base = _texts(60, 3)
    src, tgt = base[[i for i in range(60) if not 15 <= i < 33]], _noisy(base, 4)
    stats: dict = {}
    vecalign(src, tgt, VecalignSettings(omission_mode="off"),
             rng=np.random.default_rng(0), stats=stats)
    assert stats["omission_regions"] == 0


def test_shifted_diagonal_is_wrong_without_realignment():
    """The failure the pass fixes: with it off, the two-block case loses most 1-1 pairs."""
    base = _texts(80, 1)
    src_ids = [i for i in range(80) if not 20 <= i < 38]
    tgt_ids = [i for i in range(80) if not 50 <= i < 66]
    gold = {(s, t) for s, i in enumerate(src_ids) for t, j in enumerate(tgt_ids) if i == j}
    beads = vecalign(base[src_ids], _noisy(base[tgt_ids], 2),
                     VecalignSettings(omission_mode="off"),
                     rng=np.random.default_rng(0))
    found = {(b.src[0], b.tgt[0]) for b in beads if b.is_one_to_one}
    assert len(found & gold) < 0.8 * len(gold)


def _bead(cost: float, anchor: bool = False, one_sided: bool = False) -> Bead:
    return Bead((0,), () if one_sided else (0,), cost, anchor=anchor)


# (bead costs, or 'd' for a deletion / 'A' for a good anchor, expected runs) at level 0.8
RUNS = [
    ([0.3, 0.9, 0.9, 0.9, 0.9, 0.3], [(1, 5)]),
    ([0.3, 0.9, 0.9, 0.9, 0.3], []),                 # too short
    (["d", "d", "d", "d", "d"], []),                 # deletions only: nothing to fix
    ([0.9, 0.9, "A", 0.9, 0.9], []),                 # a good anchor splits the run
    ([0.9, 0.9, 0.95, 0.9, "d", 0.3], [(0, 5)]),
]


@pytest.mark.parametrize("costs,expected", RUNS)
def test_poor_runs(costs, expected):
    beads = [_bead(0.98, one_sided=True) if c == "d" else _bead(0.2, anchor=True) if c == "A"
             else _bead(c) for c in costs]
    assert poor_runs(beads, 0.8, 4) == expected


@pytest.mark.parametrize("poor,ranges,expected", [
    ([False] * 4 + [True] * 4 + [False] * 4, [(4, 8)], [(1, 11)]),
    ([False, True, False, False, True, True, True, True, False, False, False], [(4, 8)], [(0, 11)]),
    ([True] * 6, [(1, 3), (3, 5)], [(0, 6)]),
])
def test_widen_until_back_in_step(poor, ranges, expected):
    assert widen_ranges(ranges, poor, 3) == expected


@pytest.mark.parametrize("kwargs", [{"omission_mode": "maybe"}, {"omission_min_run": 1},
                                    {"omission_level_quantile": 0.0}])
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(ConfigError):
        OmissionSettings(**kwargs)
