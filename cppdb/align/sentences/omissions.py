"""Omission-aware re-alignment: find long unmatched stretches and re-align them with long gaps.

When one version lacks a passage, Vecalign (one deletion penalty per sentence) prefers to walk
the wrong diagonal -- every bead after the cut pairs unrelated sentences at about the cost of a
random pair -- until the texts meet again.  Two signals find such stretches after the DP:

* **poor runs**: ``min_run`` or more consecutive non-anchor beads whose cost per sentence pair
  (``cost / (a b)``; deletions and insertions count as poor) is at the random-pair level,
  i.e. at least the ``level_quantile`` quantile of the costs of random 1-1 pairs;
* **anchor jumps**: two consecutive anchors whose diagonal offsets differ by ``jump`` or more
  sentences (a BAM anchor pair skipping a block on one side).

Each stretch, widened until ``margin`` good beads in a row lie on both sides (the texts are in
step again there) and merged with overlapping ones, is
re-aligned on its own with affine gaps (``gap_kernel``): a run of k deletions costs
``open + k * extend``, with ``extend`` half the random level (deleting a sentence from each
side is then cheaper than a random-level pair, and dearer than a real one) and ``open + extend``
equal to Vecalign's deletion penalty (a lone deletion costs what it cost before).  The new beads
replace the old ones only if the region's total cost drops.  Regions are bounded in size
(``max_region`` sentences per side), so the pass adds linear time at most.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cppdb.align.sentences.beads import Bead
from cppdb.align.sentences.dp_kernel import bead_cost
from cppdb.align.sentences.gap_kernel import affine_gap_dp, affine_traceback
from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError

_ALIGN_SENTENCES = toml_defaults("align_sentences")

OMISSION_MODES = ("realign", "off")


@dataclass(frozen=True)
class OmissionSettings:
    omission_mode: str = _ALIGN_SENTENCES["omission_mode"]
    omission_min_run: int = _ALIGN_SENTENCES["omission_min_run"]
    omission_level_quantile: float = _ALIGN_SENTENCES["omission_level_quantile"]
    omission_jump: int = _ALIGN_SENTENCES["omission_jump"]
    omission_margin: int = _ALIGN_SENTENCES["omission_margin"]
    omission_max_region: int = _ALIGN_SENTENCES["omission_max_region"]

    def __post_init__(self) -> None:
        if self.omission_mode not in OMISSION_MODES:
            raise ConfigError(f"omission_mode must be one of {', '.join(OMISSION_MODES)}, "
                              f"not {self.omission_mode!r}")
        if (self.omission_min_run < 2 or self.omission_jump < 2 or self.omission_margin < 0
                or self.omission_max_region < 8):
            raise ConfigError("omission settings: min_run >= 2, jump >= 2, margin >= 0 and "
                              "max_region >= 8 are required",
                              hint="see [align_sentences] omission_* in the defaults")
        if not 0.0 < self.omission_level_quantile < 1.0:
            raise ConfigError(f"omission_level_quantile must be in (0, 1), not "
                              f"{self.omission_level_quantile}")


def random_pair_costs(xw: np.ndarray, yw: np.ndarray, nx: np.ndarray, ny: np.ndarray,
                      size: int, rng: np.random.Generator) -> np.ndarray:
    """Costs of ``size`` random 1-1 pairs (the scale that 'unrelated' is measured on)."""
    m, n = xw.shape[1], yw.shape[1]
    if m == 0 or n == 0:
        return np.ones(1)
    xi = rng.integers(0, m, size)
    yi = rng.integers(0, n, size)
    dots = np.einsum("sd,sd->s", xw[0, xi], yw[0, yi])
    return 2.0 * (1.0 - dots) / (1e-6 + nx[0, xi] + ny[0, yi])


def pair_cost(bead: Bead) -> float:
    """Cost per sentence pair of a bead (inf for a deletion/insertion or an unknown cost)."""
    if not bead.src or not bead.tgt or not np.isfinite(bead.cost):
        return float("inf")
    return bead.cost / (len(bead.src) * len(bead.tgt))


def poor_runs(beads: list[Bead], level: float, min_run: int) -> list[tuple[int, int]]:
    """[start, stop) bead ranges of >= min_run poor beads in a row holding >= 2 matches.

    A soft anchor at the random-pair level counts as poor: a wrong anchor must not split a run.
    """
    runs: list[tuple[int, int]] = []
    start = None
    for k, bead in enumerate(beads + [Bead((), (), 0.0, anchor=True)]):
        poor = pair_cost(bead) >= level   # an anchor too: BAM sees only lengths and characters
        if poor and start is None:
            start = k
        elif not poor and start is not None:
            matches = sum(1 for b in beads[start:k] if b.src and b.tgt)
            if k - start >= min_run and matches >= 2:
                runs.append((start, k))
            start = None
    return runs


def anchor_jumps(beads: list[Bead], jump: int) -> list[tuple[int, int]]:
    """[start, stop) bead ranges between consecutive anchor beads whose offsets differ by >= jump."""
    anchors = [k for k, b in enumerate(beads) if b.anchor and b.is_one_to_one]
    out = []
    for k0, k1 in zip(anchors, anchors[1:]):
        d0 = beads[k0].tgt[0] - beads[k0].src[0]
        d1 = beads[k1].tgt[0] - beads[k1].src[0]
        if abs(d1 - d0) >= jump and k1 - k0 > 1:
            out.append((k0 + 1, k1))
    return out


def widen_ranges(ranges: list[tuple[int, int]], poor: list[bool], margin: int
                 ) -> list[tuple[int, int]]:
    """Grow each range until ``margin`` good beads in a row lie on both sides; merge overlaps.

    The texts are back in step only where several beads in a row are good: a lone good bead
    inside a stretch (5 % of random pairs pass the level) or a run of deletions beside it
    belongs to the stretch.
    """
    total = len(poor)
    merged: list[tuple[int, int]] = []
    for start, stop in sorted(ranges):
        good = 0
        while start > 0 and good < margin:
            start -= 1
            good = good + 1 if not poor[start] else 0
        good = 0
        while stop < total and good < margin:
            good = good + 1 if not poor[stop] else 0
            stop += 1
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
        else:
            merged.append((start, stop))
    return merged


@dataclass(frozen=True)
class GapCosts:
    level: float    # random-pair level: a 1-1 bead costing this much is 'unmatched'
    open: float
    extend: float


def gap_costs(random_costs: np.ndarray, del_penalty: float, settings: OmissionSettings
              ) -> GapCosts:
    level = float(np.quantile(random_costs, settings.omission_level_quantile))
    extend = level / 2.0
    return GapCosts(level, max(0.0, del_penalty - extend), extend)


def _region_beads(windows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                  types: tuple[np.ndarray, np.ndarray], gaps: GapCosts, del_penalty: float,
                  anchor_col: np.ndarray, anchor_factor: float, i0: int, i1: int, j0: int,
                  j1: int) -> list[Bead]:
    xw, yw, nx, ny = windows
    sub = (xw[:, i0:i1], yw[:, j0:j1], nx[:, i0:i1], ny[:, j0:j1])
    cols = anchor_col[i0:i1] - j0
    cols[(cols < 0) | (cols >= j1 - j0)] = -1
    for k in np.nonzero(cols >= 0)[0].tolist():   # anchors at the random-pair level: no bonus
        if bead_cost(*sub, 1, 1, k, cols[k]) >= gaps.level:
            cols[k] = -1
    cost, back_type, back_state = affine_gap_dp(*sub, types[0], types[1], gaps.open,
                                                gaps.extend, cols, anchor_factor)
    beads = []
    for s0, s1, t0, t1 in affine_traceback(cost, back_type, back_state, *types).tolist():
        src, tgt = tuple(range(s0 + i0, s1 + i0)), tuple(range(t0 + j0, t1 + j0))
        if src and tgt:
            step = float(bead_cost(*sub, len(src), len(tgt), s0, t0))
            anchor = len(src) == 1 and len(tgt) == 1 and anchor_col[src[0]] == tgt[0]
            beads.append(Bead(src, tgt, step, anchor=bool(anchor)))
        else:
            beads.append(Bead(src, tgt, del_penalty))
    return beads


def realign_omissions(beads: list[Bead], windows: tuple[np.ndarray, ...],
                      types: tuple[np.ndarray, np.ndarray], del_penalty: float,
                      anchor_col: np.ndarray, anchor_factor: float, settings: OmissionSettings,
                      rng: np.random.Generator) -> tuple[list[Bead], int]:
    """Beads with every detected stretch re-aligned with affine gaps; and how many were."""
    if settings.omission_mode == "off" or not beads:
        return beads, 0
    xw, yw, nx, ny = windows
    gaps = gap_costs(random_pair_costs(xw, yw, nx, ny, 20_000, rng), del_penalty, settings)
    found = (poor_runs(beads, gaps.level, settings.omission_min_run)
             + anchor_jumps(beads, settings.omission_jump))
    poor = [pair_cost(b) >= gaps.level for b in beads]
    out: list[Bead] = []
    done = 0
    redone = 0
    for start, stop in widen_ranges(found, poor, settings.omission_margin):
        part = beads[start:stop]
        src = [i for b in part for i in b.src]
        tgt = [j for b in part for j in b.tgt]
        out += beads[done:start]
        done = stop
        if not src or not tgt or max(len(src), len(tgt)) > settings.omission_max_region:
            out += part
            continue
        out += _region_beads((xw, yw, nx, ny), types, gaps, del_penalty, anchor_col,
                             anchor_factor, src[0], src[-1] + 1, tgt[0], tgt[-1] + 1)
        redone += 1
    return out + beads[done:], redone
