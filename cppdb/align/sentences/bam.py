"""BAM anchors: sentence length + location (Li, Liu & Li; seed 004, SPEC §2.3).

For sentence ``s_i`` of S and ``t_j`` of T (lengths in characters, whitespace not counted)::

    P0 = Ls / Lt              Pu = Us_i / Ut_j       Pd = Ds_i / Dt_j      Pl = Ls_i / Lt_j
    alpha = (Ls / Ls_i + Lt / Lt_j) / 2
    P[i, j] = alpha (Pu - P0)^2 + (Pl - P0)^2 + alpha (Pd - P0)^2 + 1 / Sim
    Sim = 2 common / (Ls_i + Lt_j) * min(Ls_i, Lt_j) / max(Ls_i, Lt_j)

Choices where the paper is open (all documented in docs/benchmarks/align_sentences.md):

* ``common`` is the **character-multiset overlap** (sum over characters of the smaller count),
  not the LCS: translators reorder clauses, and the overlap is computable for many pairs at
  once with sparse products.  Sim = 0 gives P = inf (never an anchor).
* The **virtual start**: a virtual sentence of ``virtual_length`` characters is put before
  both texts (and, symmetrically, after them, so that Pu and Pd are defined for the first and
  last sentences); the virtual pair is the initial anchor (-1, -1).  It does not count in Ls/Lt.
* The **last pair** (m-1, n-1) is always aligned (paper §3.3 condition 3); it is an anchor
  with ``forced=True``.
* The greedy search takes candidates by increasing P; a candidate whose Sim is not above the
  similarity threshold is discarded and the search continues (paper §5, steps 4–6); an
  accepted one must lie strictly inside the quadrant left by earlier anchors (no crossing,
  no shared row or column).

The location part ``alpha(...)^2 + (Pl-P0)^2 + alpha(...)^2`` is non-negative and
``1/Sim >= 1``, so ``P < D`` needs ``location < D - 1``: all m*n location values are computed
in row blocks (vectorised, bounded memory) and Sim only for the pairs that pass — the
result is identical to computing Sim everywhere.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError

_ALIGN_SENTENCES = toml_defaults("align_sentences")

BLOCK_CELLS = 4_000_000   # cells of the location matrix computed at once (~32 MB float64)


@dataclass(frozen=True)
class Anchor:
    """An accepted 1-1 anchor (0-based sentence indices)."""

    src: int
    tgt: int
    cost: float          # P[i, j]
    similarity: float    # Sim
    forced: bool = False  # the last pair, aligned by definition


@dataclass(frozen=True)
class BamSettings:
    bam_threshold: float = _ALIGN_SENTENCES["bam_threshold"]  # D: candidates need P < D
    bam_similarity_threshold: float = _ALIGN_SENTENCES["bam_similarity_threshold"]
    bam_virtual_length: float = _ALIGN_SENTENCES["bam_virtual_length"]
    bam_max_candidates: int = _ALIGN_SENTENCES["bam_max_candidates"]

    def __post_init__(self) -> None:
        if self.bam_threshold <= 1.0:
            raise ConfigError("BAM threshold D must be > 1 (P >= 1/Sim >= 1), not "
                              f"{self.bam_threshold}",
                              hint="set align_sentences.bam_threshold to e.g. 6.0")
        if not 0.0 <= self.bam_similarity_threshold < 1.0:
            raise ConfigError("BAM similarity threshold must be in [0, 1), not "
                              f"{self.bam_similarity_threshold}")
        if self.bam_virtual_length <= 0:
            raise ConfigError(f"BAM virtual_length must be > 0, not {self.bam_virtual_length}")


def sentence_lengths(sentences: list[str]) -> np.ndarray:
    """Characters without whitespace; at least 1 so that every ratio is defined."""
    return np.array([max(1, sum(1 for ch in s if not ch.isspace())) for s in sentences],
                    dtype=np.float64)


@dataclass(frozen=True)
class _Side:
    length: np.ndarray   # L_i
    upper: np.ndarray    # U_i: text above (+ virtual start)
    lower: np.ndarray    # D_i: text below (+ virtual end)
    total: float         # L


def _side(lengths: np.ndarray, virtual: float) -> _Side:
    cumulative = np.cumsum(lengths)
    total = float(cumulative[-1])
    upper = cumulative - lengths + virtual
    lower = total - cumulative + virtual
    return _Side(lengths, upper, lower, total)


def location_cost(src: _Side, tgt: _Side, rows: slice) -> np.ndarray:
    """``alpha(Pu-P0)^2 + (Pl-P0)^2 + alpha(Pd-P0)^2`` for source rows ``rows``, all targets."""
    p0 = src.total / tgt.total
    ls = src.length[rows, None]
    alpha = (src.total / ls + tgt.total / tgt.length[None, :]) / 2.0
    pu = src.upper[rows, None] / tgt.upper[None, :]
    pd = src.lower[rows, None] / tgt.lower[None, :]
    pl = ls / tgt.length[None, :]
    return alpha * ((pu - p0) ** 2 + (pd - p0) ** 2) + (pl - p0) ** 2


def _char_matrix(sentences: list[str], vocab: dict[str, int]) -> sp.csr_matrix:
    """Binary matrix over (character, occurrence number) keys: overlap = row dot product."""
    indptr, indices = [0], []
    for sentence in sentences:
        seen: dict[str, int] = {}
        for ch in sentence:
            if ch.isspace():
                continue
            k = seen.get(ch, 0)
            seen[ch] = k + 1
            indices.append(vocab.setdefault(f"{ch}\x00{k}", len(vocab)))
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float32)
    return sp.csr_matrix((data, np.array(indices, dtype=np.int64), np.array(indptr)),
                         shape=(len(sentences), max(len(vocab), 1)))


def common_characters(src: list[str], tgt: list[str], pairs_i: np.ndarray,
                      pairs_j: np.ndarray) -> np.ndarray:
    """Character-multiset overlap of the sentence pairs ``(pairs_i[k], pairs_j[k])``."""
    vocab: dict[str, int] = {}
    a = _char_matrix(src, vocab)
    b = _char_matrix(tgt, vocab)
    width = max(len(vocab), 1)
    a.resize((a.shape[0], width))
    b.resize((b.shape[0], width))
    if len(pairs_i) == 0:
        return np.zeros(0)
    return np.asarray(a[pairs_i].multiply(b[pairs_j]).sum(axis=1)).ravel()


def similarity(common: np.ndarray, len_s: np.ndarray, len_t: np.ndarray) -> np.ndarray:
    """Sim = 2 common / (L1 + L2) * min / max."""
    return (2.0 * common / (len_s + len_t)) * (np.minimum(len_s, len_t) / np.maximum(len_s, len_t))


@dataclass(frozen=True)
class Candidates:
    src: np.ndarray
    tgt: np.ndarray
    cost: np.ndarray
    similarity: np.ndarray


def candidates(src: list[str], tgt: list[str], settings: BamSettings) -> Candidates:
    """Every pair with P < D (excluding the forced last row/column), sorted by P."""
    ls, lt = sentence_lengths(src), sentence_lengths(tgt)
    s_side = _side(ls, settings.bam_virtual_length)
    t_side = _side(lt, settings.bam_virtual_length)
    bound = settings.bam_threshold - 1.0
    rows_per_block = max(1, BLOCK_CELLS // max(len(tgt), 1))
    found_i, found_j, found_loc = [], [], []
    total = 0
    for start in range(0, len(src) - 1, rows_per_block):
        stop = min(start + rows_per_block, len(src) - 1)
        loc = location_cost(s_side, t_side, slice(start, stop))[:, : len(tgt) - 1]
        ii, jj = np.nonzero(loc < bound)
        total += len(ii)
        if total > settings.bam_max_candidates:
            raise ConfigError(
                f"BAM: more than {settings.bam_max_candidates} pairs pass the location bound "
                f"(threshold D = {settings.bam_threshold}); the texts may not be versions of "
                "one text",
                hint="lower align_sentences.bam_threshold or raise bam_max_candidates")
        found_i.append(ii + start)
        found_j.append(jj)
        found_loc.append(loc[ii, jj])
    pi = np.concatenate(found_i) if found_i else np.zeros(0, np.int64)
    pj = np.concatenate(found_j) if found_j else np.zeros(0, np.int64)
    loc = np.concatenate(found_loc) if found_loc else np.zeros(0)
    sim = similarity(common_characters(src, tgt, pi, pj), ls[pi], lt[pj])
    with np.errstate(divide="ignore"):
        cost = loc + np.where(sim > 0, 1.0 / np.maximum(sim, 1e-300), np.inf)
    keep = cost < settings.bam_threshold
    order = np.lexsort((pj[keep], pi[keep], cost[keep]))
    return Candidates(pi[keep][order], pj[keep][order], cost[keep][order], sim[keep][order])


def greedy_anchors(found: Candidates, n_src: int, n_tgt: int,
                   similarity_threshold: float) -> list[tuple[int, int, float, float]]:
    """Greedy BAM: smallest P first, similarity filter, strictly non-crossing."""
    rows = [-1, n_src - 1]         # virtual start and the forced last pair bound the search
    cols = [-1, n_tgt - 1]
    accepted: list[tuple[int, int, float, float]] = []
    for i, j, cost, sim in zip(found.src.tolist(), found.tgt.tolist(), found.cost.tolist(),
                               found.similarity.tolist()):
        if sim <= similarity_threshold:
            continue
        pos = bisect.bisect_left(rows, i)
        if rows[pos] == i or not cols[pos - 1] < j < cols[pos]:
            continue
        rows.insert(pos, i)
        cols.insert(pos, j)
        accepted.append((i, j, cost, sim))
    return accepted


def bam_anchors(src: list[str], tgt: list[str], settings: BamSettings | None = None
                ) -> list[Anchor]:
    """BAM anchors of two sentence lists, sorted by position; the last pair is included."""
    settings = settings or BamSettings()
    if not src or not tgt:
        return []
    found = candidates(src, tgt, settings)
    accepted = greedy_anchors(found, len(src), len(tgt), settings.bam_similarity_threshold)
    anchors = [Anchor(i, j, cost, sim) for i, j, cost, sim in accepted]
    last_s, last_t = [src[-1]], [tgt[-1]]
    ls, lt = sentence_lengths(last_s), sentence_lengths(last_t)
    sim_last = float(similarity(common_characters(last_s, last_t, np.zeros(1, np.int64),
                                                  np.zeros(1, np.int64)), ls, lt)[0])
    s_side = _side(sentence_lengths(src), settings.bam_virtual_length)
    t_side = _side(sentence_lengths(tgt), settings.bam_virtual_length)
    loc_last = float(location_cost(s_side, t_side, slice(len(src) - 1, len(src)))[0, -1])
    cost_last = loc_last + (1.0 / sim_last if sim_last > 0 else float("inf"))
    anchors.append(Anchor(len(src) - 1, len(tgt) - 1, cost_last, sim_last, forced=True))
    return sorted(anchors, key=lambda a: a.src)
