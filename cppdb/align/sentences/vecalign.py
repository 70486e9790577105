"""Our Vecalign (Thompson & Koehn 2019): bead DP over sentence vectors in ~linear time.

* Window vectors: a bead of ``a`` sentences is represented by the unit mean of its member
  sentence vectors (``window_vectors``), or by vectors of the re-encoded concatenation when the
  caller supplies them (``windows=``); the benchmark compares both.
* Costs are normalised by random pairs (``nx``/``ny``: 1 - mean cosine with a random sample
  of the other side) and the deletion penalty is a percentile of random 1-1 costs.
* Linear time: vectors are recursively halved (pairs averaged, mean removed, renormalised)
  until the grid is at most ``max_size_full_dp``²; the coarse 1-1 path is upsampled and the
  next level runs in a band of ``search_buffer`` around it.
* Anchors (BAM) enter the cost.  ``anchor_mode = "soft"`` (default): the 1-1 bead of an
  anchor costs ``anchor_factor`` times its Vecalign cost (also at the coarse levels, at half
  coordinates), so the DP follows anchors unless the vectors clearly disagree -- a wrong
  anchor (BAM looks only at lengths and shared characters) then costs little.
  ``"hard"``: the document is cut at each anchor and every segment is aligned on its own
  with the document-wide normalisers and deletion penalty; an anchor whose own 1-1 cost is
  not below the deletion penalty (not better than the best ``del_percentile_frac`` of random
  pairs) is dropped first.

All randomness comes from the explicit ``rng``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from cppdb.align.sentences.beads import Bead
from cppdb.align.sentences.dp_kernel import banded_dp, bead_cost, traceback
from cppdb.align.sentences.omissions import OmissionSettings, realign_omissions
from cppdb.config import settings_from
from cppdb.defaults import toml_defaults
from cppdb.errors import BadInputError, ConfigError

_ALIGN_SENTENCES = toml_defaults("align_sentences")


@dataclass(frozen=True)
class VecalignSettings:
    max_bead_size: int = _ALIGN_SENTENCES["max_bead_size"]
    del_percentile_frac: float = _ALIGN_SENTENCES["del_percentile_frac"]
    max_size_full_dp: int = _ALIGN_SENTENCES["max_size_full_dp"]
    search_buffer: int = _ALIGN_SENTENCES["search_buffer"]
    num_samps_for_norm: int = _ALIGN_SENTENCES["num_samps_for_norm"]
    anchor_mode: str = _ALIGN_SENTENCES["anchor_mode"]
    anchor_factor: float = _ALIGN_SENTENCES["anchor_factor"]
    omission_mode: str = _ALIGN_SENTENCES["omission_mode"]
    omission_min_run: int = _ALIGN_SENTENCES["omission_min_run"]
    omission_level_quantile: float = _ALIGN_SENTENCES["omission_level_quantile"]
    omission_jump: int = _ALIGN_SENTENCES["omission_jump"]
    omission_margin: int = _ALIGN_SENTENCES["omission_margin"]
    omission_max_region: int = _ALIGN_SENTENCES["omission_max_region"]
    # not a setting: random pairs whose costs set the deletion penalty and random level
    costs_sample_size: ClassVar[int] = 20_000

    def __post_init__(self) -> None:
        if self.max_bead_size < 2:
            raise ConfigError(f"max_bead_size must be >= 2 (1-1 beads), not {self.max_bead_size}")
        if not 0.0 < self.del_percentile_frac < 1.0:
            raise ConfigError("del_percentile_frac must be in (0, 1)")
        if self.max_size_full_dp < 8 or self.search_buffer < 1:
            raise ConfigError("max_size_full_dp must be >= 8 and search_buffer >= 1")
        if self.anchor_mode not in ("soft", "hard"):
            raise ConfigError(f"anchor_mode must be 'soft' or 'hard', not {self.anchor_mode!r}")
        if not 0.0 <= self.anchor_factor <= 1.0:
            raise ConfigError(f"anchor_factor must be in [0, 1], not {self.anchor_factor}")
        self.omission_settings()          # checked here, before any work

    def omission_settings(self) -> OmissionSettings:
        return settings_from(OmissionSettings, self)

    @property
    def max_window(self) -> int:
        return self.max_bead_size - 1

    def bead_types(self) -> tuple[np.ndarray, np.ndarray]:
        pairs = [(a, b) for a in range(1, self.max_bead_size)
                 for b in range(1, self.max_bead_size) if a + b <= self.max_bead_size]
        return (np.array([a for a, _ in pairs], np.int64), np.array([b for _, b in pairs], np.int64))


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def window_vectors(vectors: np.ndarray, max_window: int) -> np.ndarray:
    """(K, n, d): row ``[k-1, s]`` is the unit mean of sentences ``s .. s+k-1`` (clipped)."""
    n, d = vectors.shape
    out = np.empty((max_window, n, d), dtype=np.float32)
    csum = np.concatenate([np.zeros((1, d), np.float64), np.cumsum(vectors, axis=0)])
    for k in range(1, max_window + 1):
        stop = np.minimum(np.arange(n) + k, n)
        out[k - 1] = unit_rows(csum[stop] - csum[np.arange(n)])
    return out


def random_pair_norms(windows: np.ndarray, other: np.ndarray, samples: int,
                      rng: np.random.Generator) -> np.ndarray:
    """(K, n): 1 - mean cosine of each window with a sample of the other side's windows."""
    k_other, n_other, _ = other.shape
    if n_other == 0 or samples == 0:
        return np.ones(windows.shape[:2], np.float32)
    per = int(np.ceil(samples / k_other))
    sample = np.concatenate([other[k, rng.integers(0, n_other, per)] for k in range(k_other)])
    mean_sim = np.einsum("knd,sd->kn", windows, sample, optimize=True) / len(sample)
    return (1.0 - mean_sim).astype(np.float32)


def deletion_penalty(xw: np.ndarray, yw: np.ndarray, nx: np.ndarray, ny: np.ndarray,
                     settings: VecalignSettings, rng: np.random.Generator) -> float:
    m, n = xw.shape[1], yw.shape[1]
    if m == 0 or n == 0:
        return 1.0
    size = min(settings.costs_sample_size, m * n)
    xi = rng.integers(0, m, size)
    yi = rng.integers(0, n, size)
    dots = np.einsum("sd,sd->s", xw[0, xi], yw[0, yi])
    costs = 2.0 * (1.0 - dots) / (1e-6 + nx[0, xi] + ny[0, yi])
    return float(np.quantile(costs, settings.del_percentile_frac))


def downsample(vectors: np.ndarray) -> np.ndarray:
    """Sum consecutive pairs, remove the mean, renormalise (Vecalign's coarse vectors)."""
    half = vectors[0: len(vectors) - len(vectors) % 2: 2] + vectors[1::2][: len(vectors) // 2]
    half = half - half.mean(axis=0, keepdims=True)
    return unit_rows(half)


def band_from_path(path: np.ndarray, m: int, n: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-row [lo, hi] of the states within ``width`` of a monotone path from (0,0) to (m,n)."""
    lo = np.full(m + 1, n, dtype=np.int64)
    hi = np.zeros(m + 1, dtype=np.int64)
    rows = np.clip(path[:, 0], 0, m)
    cols = np.clip(path[:, 1], 0, n)
    np.minimum.at(lo, rows, cols)
    np.maximum.at(hi, rows, cols)
    lo = np.minimum.accumulate(lo[::-1])[::-1]    # monotone: lo never above a later row's
    hi = np.maximum.accumulate(hi)
    padded_lo = np.concatenate([np.full(width, lo[0]), lo, np.full(width, lo[-1])])
    padded_hi = np.concatenate([np.full(width, hi[0]), hi, np.full(width, hi[-1])])
    windows = np.lib.stride_tricks.sliding_window_view
    lo = np.clip(windows(padded_lo, 2 * width + 1).min(axis=1) - width, 0, n)
    hi = np.clip(windows(padded_hi, 2 * width + 1).max(axis=1) + width, 0, n)
    lo[0], hi[-1] = 0, n
    return lo, hi


def upsampled_path(coarse: list[Bead], m: int, n: int) -> np.ndarray:
    """Fine-resolution monotone path through the doubled coarse bead boundaries."""
    points = [(0, 0)]
    for bead in coarse:
        end_i = 2 * (bead.src[-1] + 1) if bead.src else points[-1][0]
        end_j = 2 * (bead.tgt[-1] + 1) if bead.tgt else points[-1][1]
        points.append((min(end_i, m), min(end_j, n)))
    points.append((m, n))
    path = []
    for (i0, j0), (i1, j1) in zip(points[:-1], points[1:]):
        steps = max(i1 - i0, j1 - j0, 1)
        t = np.arange(steps + 1) / steps
        path.append(np.stack([np.rint(i0 + t * (i1 - i0)), np.rint(j0 + t * (j1 - j0))], 1))
    return np.concatenate(path).astype(np.int64)


@dataclass(frozen=True)
class _Level:
    xw: np.ndarray
    yw: np.ndarray
    nx: np.ndarray
    ny: np.ndarray
    del_penalty: float
    anchor_col: np.ndarray      # (m,) target index of the soft anchor of each row, or -1
    anchor_factor: float = 1.0


def _run_dp(level: _Level, types: tuple[np.ndarray, np.ndarray], lo: np.ndarray,
            hi: np.ndarray) -> list[Bead]:
    m, n = level.xw.shape[1], level.yw.shape[1]
    offsets, _csum, back, step = banded_dp(level.xw, level.yw, level.nx, level.ny, types[0],
                                           types[1], level.del_penalty, lo, hi,
                                           level.anchor_col, level.anchor_factor)
    s0, s1, t0, t1, cost = traceback(offsets, back, step, lo, types[0], types[1], m, n)
    return [Bead(tuple(range(a, b)), tuple(range(c, d)), float(e))
            for a, b, c, d, e in zip(s0.tolist(), s1.tolist(), t0.tolist(), t1.tolist(),
                                     cost.tolist())]


def _coarse_anchors(anchor_col: np.ndarray, m: int, n: int) -> np.ndarray:
    """Soft anchors at half resolution (anchor (i, j) -> (i // 2, j // 2))."""
    coarse = np.full(m, -1, np.int64)
    rows = np.nonzero(anchor_col >= 0)[0]
    for i, j in zip((rows // 2).tolist(), (anchor_col[rows] // 2).tolist()):
        if i < m and j < n:
            coarse[i] = j
    return coarse


def _coarse_path(x: np.ndarray, y: np.ndarray, anchor_col: np.ndarray, anchor_factor: float,
                 settings: VecalignSettings, rng: np.random.Generator) -> list[Bead]:
    """1-1 + deletion alignment of (recursively) downsampled vectors."""
    xw, yw = x[None], y[None]
    nx = random_pair_norms(xw, yw, settings.num_samps_for_norm, rng)
    ny = random_pair_norms(yw, xw, settings.num_samps_for_norm, rng)
    level = _Level(xw, yw, nx, ny, deletion_penalty(xw, yw, nx, ny, settings, rng),
                   _coarse_anchors(anchor_col, len(x), len(y)), anchor_factor)
    return _align_level(level, (np.ones(1, np.int64), np.ones(1, np.int64)), settings, rng)


def _align_level(level: _Level, types: tuple[np.ndarray, np.ndarray],
                 settings: VecalignSettings, rng: np.random.Generator) -> list[Bead]:
    m, n = level.xw.shape[1], level.yw.shape[1]
    if m == 0 or n == 0:
        return [Bead((i,), (), level.del_penalty) for i in range(m)] + \
               [Bead((), (j,), level.del_penalty) for j in range(n)]
    if m * n <= settings.max_size_full_dp ** 2 or min(m, n) < 4:
        return _run_dp(level, types, np.zeros(m + 1, np.int64), np.full(m + 1, n, np.int64))
    coarse = _coarse_path(downsample(level.xw[0]), downsample(level.yw[0]), level.anchor_col,
                          level.anchor_factor, settings, rng)
    width = int(np.ceil(settings.max_bead_size / 2)) + settings.search_buffer
    lo, hi = band_from_path(upsampled_path(coarse, m, n), m, n, width)
    return _run_dp(level, types, lo, hi)


def _slice_level(level: _Level, src: slice, tgt: slice) -> _Level:
    return _Level(level.xw[:, src], level.yw[:, tgt], level.nx[:, src], level.ny[:, tgt],
                  level.del_penalty, level.anchor_col[src], level.anchor_factor)


def _shift(beads: list[Bead], di: int, dj: int) -> list[Bead]:
    return [Bead(tuple(i + di for i in b.src), tuple(j + dj for j in b.tgt), b.cost)
            for b in beads]


def prepare_level(src_vectors: np.ndarray, tgt_vectors: np.ndarray, settings: VecalignSettings,
                  rng: np.random.Generator, src_windows: np.ndarray | None = None,
                  tgt_windows: np.ndarray | None = None) -> _Level:
    """Window vectors, random-pair normalisers and the deletion penalty of one document pair."""
    for name, vecs in (("source", src_vectors), ("target", tgt_vectors)):
        if vecs.ndim != 2:
            raise BadInputError(f"{name} vectors must be a 2-D array, got shape {vecs.shape}")
    if src_vectors.shape[1] != tgt_vectors.shape[1]:
        raise BadInputError(f"source vectors have {src_vectors.shape[1]} dimensions, target "
                            f"vectors {tgt_vectors.shape[1]}: use one encoder for both sides")
    k = settings.max_window
    xw = window_vectors(src_vectors, k) if src_windows is None else unit_rows(src_windows)
    yw = window_vectors(tgt_vectors, k) if tgt_windows is None else unit_rows(tgt_windows)
    nx = random_pair_norms(xw, yw, settings.num_samps_for_norm, rng)
    ny = random_pair_norms(yw, xw, settings.num_samps_for_norm, rng)
    return _Level(xw, yw, nx, ny, deletion_penalty(xw, yw, nx, ny, settings, rng),
                  np.full(xw.shape[1], -1, np.int64))


def usable_anchors(level: _Level, anchors: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Anchors whose 1-1 cost is below the deletion penalty (better than most random pairs)."""
    keep = []
    for i, j in anchors:
        if bead_cost(level.xw, level.yw, level.nx, level.ny, 1, 1, i, j) < level.del_penalty:
            keep.append((i, j))
    return keep


def vecalign(src_vectors: np.ndarray, tgt_vectors: np.ndarray,
             settings: VecalignSettings | None = None, *, rng: np.random.Generator,
             anchors: list[tuple[int, int]] = (), src_windows: np.ndarray | None = None,
             tgt_windows: np.ndarray | None = None, stats: dict | None = None) -> list[Bead]:
    """Align two documents given unit sentence vectors; returns beads covering both in order.

    ``anchors``: strictly increasing (i, j) 1-1 pairs, soft or hard (``settings.anchor_mode``,
    see the module docstring); 1-1 beads on an anchor have ``anchor=True``.  Long unmatched
    stretches are then re-aligned with long gaps (``settings.omission_*``, see ``omissions``);
    ``stats["omission_regions"]`` counts them.
    """
    settings = settings or VecalignSettings()
    level, beads, anchor_col, factor = _vecalign(src_vectors, tgt_vectors, settings, rng,
                                                 list(anchors), src_windows, tgt_windows)
    beads, redone = realign_omissions(beads, (level.xw, level.yw, level.nx, level.ny),
                                      settings.bead_types(), level.del_penalty, anchor_col,
                                      factor, settings.omission_settings(), rng)
    if stats is not None:
        stats["omission_regions"] = redone
    return beads


def _vecalign(src_vectors: np.ndarray, tgt_vectors: np.ndarray, settings: VecalignSettings,
              rng: np.random.Generator, anchors: list[tuple[int, int]],
              src_windows: np.ndarray | None, tgt_windows: np.ndarray | None
              ) -> tuple[_Level, list[Bead], np.ndarray, float]:
    """The DP (soft or hard anchors); also the level, the anchor columns and their factor."""
    level = prepare_level(src_vectors, tgt_vectors, settings, rng, src_windows, tgt_windows)
    types = settings.bead_types()
    beads: list[Bead] = []
    m, n = level.xw.shape[1], level.yw.shape[1]
    start_i = start_j = 0
    for (i0, j0), (i1, j1) in zip(anchors, anchors[1:]):
        if i1 <= i0 or j1 <= j0:
            raise BadInputError(f"anchors cross or repeat at ({i0}, {j0}) / ({i1}, {j1})",
                                hint="anchors must be strictly increasing in both texts")
    if anchors and not (0 <= anchors[0][0] and 0 <= anchors[0][1]
                        and anchors[-1][0] < m and anchors[-1][1] < n):
        raise BadInputError(f"anchors outside the {m} x {n} documents")
    if settings.anchor_mode == "soft":
        anchor_col = np.full(m, -1, np.int64)
        for i, j in anchors:
            anchor_col[i] = j
        soft = _Level(level.xw, level.yw, level.nx, level.ny, level.del_penalty, anchor_col,
                      settings.anchor_factor)
        chosen = set(anchors)
        return level, [Bead(b.src, b.tgt, b.cost, anchor=b.is_one_to_one and (b.src[0], b.tgt[0])
                            in chosen) for b in _align_level(soft, types, settings, rng)], \
            anchor_col, settings.anchor_factor
    hard_col = np.full(m, -1, np.int64)
    for i, j in usable_anchors(level, anchors):
        hard_col[i] = j
        part = _slice_level(level, slice(start_i, i), slice(start_j, j))
        beads += _shift(_align_level(part, types, settings, rng), start_i, start_j)
        cost = bead_cost(level.xw, level.yw, level.nx, level.ny, 1, 1, i, j)
        beads.append(Bead((i,), (j,), float(cost), anchor=True))
        start_i, start_j = i + 1, j + 1
    part = _slice_level(level, slice(start_i, m), slice(start_j, n))
    beads += _shift(_align_level(part, types, settings, rng), start_i, start_j)
    return level, beads, hard_col, 0.0   # hard anchors cost nothing in a re-aligned region
