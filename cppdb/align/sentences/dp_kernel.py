"""The hot loop of our Vecalign DP, compiled with numba (kept apart from the numpy code).

The DP runs over prefix states ``(i, j)`` (i source and j target sentences consumed).  Row
``i`` only holds the states ``lo[i] <= j <= hi[i]`` (a band around a coarse path; the full
grid when ``lo = 0, hi = n``), stored flat with row offsets, so memory and time are
proportional to the band area.  A bead of type ``(a, b)`` ending in state ``(i, j)`` covers
source ``i-a .. i-1`` and target ``j-b .. j-1`` and costs (Vecalign)::

    2 a b (1 - x_a[i-a] . y_b[j-b]) / (nx_a[i-a] + ny_b[j-b])

where ``x_a[s]`` is the unit vector of the source window of ``a`` sentences starting at
``s`` and ``nx``/``ny`` are the random-pair normalisers.  Deletions and insertions cost
``del_penalty``.  Soft anchors (BAM) make their 1-1 bead cheaper by ``anchor_factor``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

DELETE_SRC = -1   # bead (1, 0)
INSERT_TGT = -2   # bead (0, 1)


@njit(cache=True, nogil=True)
def bead_cost(xw: np.ndarray, yw: np.ndarray, nx: np.ndarray, ny: np.ndarray,
              a: int, b: int, s: int, t: int) -> float:
    dot = 0.0
    for k in range(xw.shape[2]):
        dot += xw[a - 1, s, k] * yw[b - 1, t, k]
    return 2.0 * a * b * (1.0 - dot) / (1e-6 + nx[a - 1, s] + ny[b - 1, t])


@njit(cache=True, nogil=True)
def banded_dp(xw: np.ndarray, yw: np.ndarray, nx: np.ndarray, ny: np.ndarray,
              types_a: np.ndarray, types_b: np.ndarray, del_penalty: float,
              lo: np.ndarray, hi: np.ndarray, anchor_col: np.ndarray, anchor_factor: float):
    """Fill the band; return (row offsets, cumulative costs, back pointers, bead costs).

    ``anchor_col[s] = t`` marks the 1-1 bead (s, t) as a soft anchor: the DP sees its cost
    multiplied by ``anchor_factor``; the returned bead cost is the true one.
    """
    rows = lo.shape[0]
    offsets = np.zeros(rows + 1, dtype=np.int64)
    for i in range(rows):
        offsets[i + 1] = offsets[i] + max(0, hi[i] - lo[i] + 1)
    total = offsets[rows]
    csum = np.full(total, np.inf)
    back = np.full(total, -9, dtype=np.int8)
    step = np.zeros(total, dtype=np.float32)
    for i in range(rows):
        for j in range(lo[i], hi[i] + 1):
            here = offsets[i] + j - lo[i]
            if i == 0 and j == 0:
                csum[here] = 0.0
                continue
            best = np.inf
            arg = -9
            best_step = 0.0
            if i > 0 and lo[i - 1] <= j <= hi[i - 1]:
                prev = csum[offsets[i - 1] + j - lo[i - 1]] + del_penalty
                if prev < best:
                    best, arg, best_step = prev, DELETE_SRC, del_penalty
            if j > lo[i]:
                prev = csum[here - 1] + del_penalty
                if prev < best:
                    best, arg, best_step = prev, INSERT_TGT, del_penalty
            for t in range(types_a.shape[0]):
                a = types_a[t]
                b = types_b[t]
                pi = i - a
                pj = j - b
                if pi < 0 or pj < 0 or pj < lo[pi] or pj > hi[pi]:
                    continue
                prev = csum[offsets[pi] + pj - lo[pi]]
                if prev == np.inf:
                    continue
                cost = bead_cost(xw, yw, nx, ny, a, b, pi, pj)
                seen = cost
                if a == 1 and b == 1 and anchor_col[pi] == pj:
                    seen = cost * anchor_factor
                if prev + seen < best:
                    best, arg, best_step = prev + seen, t, cost
            csum[here] = best
            back[here] = arg
            step[here] = best_step
    return offsets, csum, back, step


@njit(cache=True, nogil=True)
def traceback(offsets: np.ndarray, back: np.ndarray, step: np.ndarray, lo: np.ndarray,
              types_a: np.ndarray, types_b: np.ndarray, m: int, n: int):
    """Beads from (0, 0) to (m, n) as rows (src start, src end, tgt start, tgt end, cost)."""
    out_s0 = np.empty(m + n, dtype=np.int64)
    out_s1 = np.empty(m + n, dtype=np.int64)
    out_t0 = np.empty(m + n, dtype=np.int64)
    out_t1 = np.empty(m + n, dtype=np.int64)
    out_c = np.empty(m + n, dtype=np.float64)
    count = 0
    i, j = m, n
    while i > 0 or j > 0:
        here = offsets[i] + j - lo[i]
        code = back[here]
        if code == DELETE_SRC:
            a, b = 1, 0
        elif code == INSERT_TGT:
            a, b = 0, 1
        elif code >= 0:
            a, b = types_a[code], types_b[code]
        else:
            raise ValueError("DP traceback left the band")
        out_s0[count], out_s1[count] = i - a, i
        out_t0[count], out_t1[count] = j - b, j
        out_c[count] = step[here]
        count += 1
        i -= a
        j -= b
    return (out_s0[:count][::-1], out_s1[:count][::-1], out_t0[:count][::-1],
            out_t1[:count][::-1], out_c[:count][::-1])
