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
    unaligned word, until nothing changes.  Plain Python sets: matrices are small and
    numpy scalar indexing would dominate."""
    links = forward & backward
    extra = forward ^ backward
    if not extra.any():
        return links
    n_rows, n_cols = links.shape
    current = set(zip(*(a.tolist() for a in np.nonzero(links))))
    candidates = set(zip(*(a.tolist() for a in np.nonzero(extra))))
    rows_used = {i for i, _ in current}
    cols_used = {j for _, j in current}
    added = True
    while added and candidates:
        added = False
        for i, j in sorted(current):
            for di, dj in _NEIGHBOURS:
                cell = (i + di, j + dj)
                if cell in candidates and (cell[0] not in rows_used or cell[1] not in cols_used):
                    candidates.discard(cell)
                    current.add(cell)
                    rows_used.add(cell[0])
                    cols_used.add(cell[1])
                    added = True
    out = np.zeros((n_rows, n_cols), dtype=bool)
    if current:
        ii, jj = zip(*current)
        out[list(ii), list(jj)] = True
    return out


def _final(links: np.ndarray, candidates: np.ndarray, *, require_both: bool) -> None:
    """Add candidate links whose zh word (and, with ``require_both``, en word) is unaligned."""
    todo = candidates & ~links
    if not todo.any():
        return
    row_used = set(np.nonzero(links.any(axis=1))[0].tolist())
    col_used = set(np.nonzero(links.any(axis=0))[0].tolist())
    for i, j in zip(*(a.tolist() for a in np.nonzero(todo))):
        free = (i not in row_used and j not in col_used) if require_both else \
            (i not in row_used or j not in col_used)
        if free:
            links[i, j] = True
            row_used.add(i)
            col_used.add(j)


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
