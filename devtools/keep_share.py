"""Keep-share rules that bench/bench_compressor.py scores against the gold: the length-only
baseline and rate decoding of a model's P(keep)."""
from __future__ import annotations

import math
from typing import Any


def first_share(rows: list[dict[str, Any]], share: float) -> list[list[int]]:
    """The length-only rule: keep the first ``share`` of each sentence's tokens."""
    out = []
    for r in rows:
        n = len(r["tokens"])
        k = min(n, max(1, math.ceil(share * n)))
        out.append([1] * k + [0] * (n - k))
    return out


def top_share(probs: Any, share: float) -> list[int]:
    """Keep the ``share`` of a sentence's tokens with the highest P(keep) (ties: earlier
    first): a length constraint in place of a threshold, as the paper's ILP decoding."""
    n = len(probs)
    k = min(n, max(1, math.ceil(share * n)))
    chosen = set(sorted(range(n), key=lambda i: (-float(probs[i]), i))[:k])
    return [int(i in chosen) for i in range(n)]
