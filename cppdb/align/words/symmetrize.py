"""Symmetrisation of two directional alignments (Koehn et al. 2003, as in Moses/fast_align).

Both inputs are boolean ``|zh| x |en|`` matrices: ``forward`` from the zh→en model (every en
word linked to at most one zh word), ``backward`` from the en→zh model, already transposed.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from cppdb.errors import ConfigError

Method = Literal["intersection", "union", "grow-diag", "grow-diag-final",
                 "grow-diag-final-and"]
METHODS: tuple[str, ...] = ("intersection", "union", "grow-diag", "grow-diag-final",
                            "grow-diag-final-and")

_NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def symmetrize(forward: np.ndarray, backward: np.ndarray, method: str) -> np.ndarray:
    """Combine two directional link matrices with the named heuristic."""
    if forward.shape != backward.shape:
        raise ValueError(f"forward {forward.shape} and backward {backward.shape} differ")
    forward = forward.astype(bool, copy=False)
    backward = backward.astype(bool, copy=False)
    if method == "intersection":
        return forward & backward
    if method == "union":
        return forward | backward
    if method not in METHODS:
        raise ConfigError(f"unknown symmetrisation '{method}'",
                          hint=f"choose one of: {', '.join(METHODS)}")
    links = _grow_diag(forward, backward)
    if method == "grow-diag-final":
        _final(links, forward | backward, require_both=False)
    elif method == "grow-diag-final-and":
        _final(links, forward, require_both=True)
        _final(links, backward, require_both=True)
    return links


def _grow_diag(forward: np.ndarray, backward: np.ndarray) -> np.ndarray:
    """Start from the intersection; add union links next to a link while they cover an
    unaligned word, until nothing changes."""
    union = forward | backward
    links = forward & backward
    n_rows, n_cols = links.shape
    row_used = links.any(axis=1)
    col_used = links.any(axis=0)
    added = True
    while added:
        added = False
        for i, j in zip(*np.nonzero(links)):
            for di, dj in _NEIGHBOURS:
                ni, nj = i + di, j + dj
                if not (0 <= ni < n_rows and 0 <= nj < n_cols):
                    continue
                if union[ni, nj] and not links[ni, nj] and (not row_used[ni]
                                                            or not col_used[nj]):
                    links[ni, nj] = True
                    row_used[ni] = col_used[nj] = True
                    added = True
    return links


def _final(links: np.ndarray, candidates: np.ndarray, *, require_both: bool) -> None:
    """Add candidate links whose zh word (and, with ``require_both``, en word) is unaligned."""
    row_used = links.any(axis=1)
    col_used = links.any(axis=0)
    for i, j in zip(*np.nonzero(candidates & ~links)):
        free = (not row_used[i] and not col_used[j]) if require_both else \
            (not row_used[i] or not col_used[j])
        if free:
            links[i, j] = True
            row_used[i] = col_used[j] = True


def directional_argmax(prob: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Two directional alignments read off one probability matrix: each en word's best zh
    word (forward) and each zh word's best en word (backward), when at least ``threshold``."""
    forward = np.zeros(prob.shape, dtype=bool)
    backward = np.zeros(prob.shape, dtype=bool)
    if prob.size == 0:
        return forward, backward
    best_zh = prob.argmax(axis=0)
    cols = np.arange(prob.shape[1])
    keep = prob[best_zh, cols] >= threshold
    forward[best_zh[keep], cols[keep]] = True
    best_en = prob.argmax(axis=1)
    rows = np.arange(prob.shape[0])
    keep = prob[rows, best_en] >= threshold
    backward[rows[keep], best_en[keep]] = True
    return forward, backward
