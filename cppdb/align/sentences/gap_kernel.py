"""Full-grid bead DP with affine gaps (numba), for re-aligning a suspected omission.

Vecalign charges every deleted sentence the same penalty, so dropping a block of k sentences
costs k times as much as dropping one; when a passage is missing from one version, a run of
random-level 1-1 beads along the wrong diagonal is cheaper than the long deletion.  Here a run
of deletions (or insertions) costs ``gap_open + length * gap_extend``: three DP layers, the
last bead being a match (M), a source deletion (D) or a target insertion (I).  The grid is the
whole region (callers bound its size); bead costs are Vecalign's (``bead_cost``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from cppdb.align.sentences.dp_kernel import bead_cost

MATCH, DELETE, INSERT = 0, 1, 2


@njit(cache=True, nogil=True)
def affine_gap_dp(xw: np.ndarray, yw: np.ndarray, nx: np.ndarray, ny: np.ndarray,
                  types_a: np.ndarray, types_b: np.ndarray, gap_open: float, gap_extend: float,
                  anchor_col: np.ndarray, anchor_factor: float):
    """Fill the three layers; return (cost, back type, back state) arrays of shape (3, m+1, n+1).

    ``back_type[MATCH, i, j]`` is the bead type index of the match ending at (i, j);
    ``back_state[s, i, j]`` the layer the previous bead ended in.
    """
    m = xw.shape[1]
    n = yw.shape[1]
    cost = np.full((3, m + 1, n + 1), np.inf)
    back_type = np.full((3, m + 1, n + 1), -1, dtype=np.int8)
    back_state = np.full((3, m + 1, n + 1), -1, dtype=np.int8)
    cost[MATCH, 0, 0] = 0.0
    opened = gap_open + gap_extend
    for i in range(m + 1):
        for j in range(n + 1):
            if i > 0:   # source deletion ending at (i, j)
                best, arg = cost[DELETE, i - 1, j] + gap_extend, DELETE
                for s in (MATCH, INSERT):
                    if cost[s, i - 1, j] + opened < best:
                        best, arg = cost[s, i - 1, j] + opened, s
                cost[DELETE, i, j] = best
                back_state[DELETE, i, j] = arg
            if j > 0:   # target insertion ending at (i, j)
                best, arg = cost[INSERT, i, j - 1] + gap_extend, INSERT
                for s in (MATCH, DELETE):
                    if cost[s, i, j - 1] + opened < best:
                        best, arg = cost[s, i, j - 1] + opened, s
                cost[INSERT, i, j] = best
                back_state[INSERT, i, j] = arg
            for t in range(types_a.shape[0]):
                a = types_a[t]
                b = types_b[t]
                pi = i - a
                pj = j - b
                if pi < 0 or pj < 0:
                    continue
                step = bead_cost(xw, yw, nx, ny, a, b, pi, pj)
                if a == 1 and b == 1 and anchor_col[pi] == pj:
                    step = step * anchor_factor
                for s in (MATCH, DELETE, INSERT):
                    if cost[s, pi, pj] + step < cost[MATCH, i, j]:
                        cost[MATCH, i, j] = cost[s, pi, pj] + step
                        back_type[MATCH, i, j] = t
                        back_state[MATCH, i, j] = s
    return cost, back_type, back_state


@njit(cache=True, nogil=True)
def affine_traceback(cost: np.ndarray, back_type: np.ndarray, back_state: np.ndarray,
                     types_a: np.ndarray, types_b: np.ndarray):
    """Beads from (0, 0) to (m, n) as rows (src start, src end, tgt start, tgt end)."""
    m = cost.shape[1] - 1
    n = cost.shape[2] - 1
    out = np.empty((m + n, 4), dtype=np.int64)
    count = 0
    state = MATCH
    for s in (DELETE, INSERT):
        if cost[s, m, n] < cost[state, m, n]:
            state = s
    i, j = m, n
    while i > 0 or j > 0:
        if state == MATCH:
            t = back_type[MATCH, i, j]
            a, b = types_a[t], types_b[t]
        elif state == DELETE:
            a, b = 1, 0
        else:
            a, b = 0, 1
        out[count, 0], out[count, 1], out[count, 2], out[count, 3] = i - a, i, j - b, j
        count += 1
        state = back_state[state, i, j]
        i -= a
        j -= b
    return out[:count][::-1]
