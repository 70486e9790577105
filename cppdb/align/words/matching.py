"""SimAlign's three ways of turning a similarity matrix into links (Jalili Sabet et al. 2020).

* ``argmax``  — mutual best: i is j's most similar zh word and j is i's most similar en word.
* ``itermax`` — argmax, then repeated argmax restricted to words still unaligned on one side
  (similarities of half-covered cells damped by ``alpha``), at most ``max_rounds`` rounds.
* ``match``   — maximum-weight bipartite matching (Hungarian algorithm).

Cells with similarity ≤ ``floor`` never become links (a dictionary matrix is mostly zeros).
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from cppdb.errors import ConfigError

Matching = Literal["argmax", "itermax", "match", "none"]
MATCHINGS = ("argmax", "itermax", "match", "none")


def mutual_argmax(sim: np.ndarray, floor: float = 0.0) -> np.ndarray:
    links = np.zeros(sim.shape, dtype=bool)
    if sim.size == 0:
        return links
    best_en = sim.argmax(axis=1)
    best_zh = sim.argmax(axis=0)
    rows = np.arange(sim.shape[0])
    mutual = best_zh[best_en] == rows
    links[rows[mutual], best_en[mutual]] = True
    return links & (sim > floor)


def itermax(sim: np.ndarray, *, max_rounds: int = 2, alpha: float = 0.9,
            floor: float = 0.0) -> np.ndarray:
    links = mutual_argmax(sim, floor)
    if min(sim.shape, default=0) <= 2:
        return links
    for _ in range(max_rounds - 1):
        row_free = ~links.any(axis=1)
        col_free = ~links.any(axis=0)
        if not row_free.any() or not col_free.any():
            break
        # a cell whose zh and en word are both aligned is out; half-covered cells are damped
        open_cells = row_free[:, None] | col_free[None, :]
        weight = np.clip(alpha * row_free[:, None] + alpha * col_free[None, :], 0.0, 1.0)
        new = mutual_argmax(np.where(open_cells, sim * weight, -np.inf), floor) & open_cells
        new &= sim > floor
        if not (new & ~links).any():
            break
        links |= new
    return links


def max_weight_match(sim: np.ndarray, floor: float = 0.0) -> np.ndarray:
    from scipy.optimize import linear_sum_assignment

    links = np.zeros(sim.shape, dtype=bool)
    if sim.size == 0:
        return links
    rows, cols = linear_sum_assignment(sim, maximize=True)
    keep = sim[rows, cols] > floor
    links[rows[keep], cols[keep]] = True
    return links


def apply_matching(sim: np.ndarray, method: str, floor: float = 0.0) -> np.ndarray:
    """Boolean links of one similarity matrix by the named method (``none``: sim > floor)."""
    if method == "argmax":
        return mutual_argmax(sim, floor)
    if method == "itermax":
        return itermax(sim, floor=floor)
    if method == "match":
        return max_weight_match(sim, floor)
    if method == "none":
        return sim > floor
    raise ConfigError(f"unknown matching method '{method}'",
                      hint=f"choose one of: {', '.join(MATCHINGS)}")
