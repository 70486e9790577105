"""Confidence intervals and signatures for every evaluation table (sacrebleu's habits).

* Every metric is computed from **per-item statistics** (a value per pair, or counts per
  sentence / document block), so resampling items gives a bootstrap distribution.
* :func:`bootstrap_mean` — percentile interval of a mean; :func:`bootstrap_counts` — of a
  ratio computed from summed counts (AER, bead P/R/F1); :func:`paired_bootstrap` — the
  difference of two systems scored on the *same* items, resampled together (Koehn 2004), with
  the share of resamples in which the sign flips (a one-sided p-value).
* :func:`signature` — the string that says what produced a number:
  ``encoder:…|model-sha:…|seed:…|n:…|resamples:…|version:…``.

Resampling is seeded (``evaluate.seed``): the same inputs give the same interval.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np

from cppdb.version import __version__

RESAMPLES = 1000
LEVEL = 0.95
#: bootstrap indices drawn at once (memory bound of :func:`bootstrap_mean`)
CHUNK_ITEMS = 4_000_000


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_mean(values: Any, *, resamples: int = RESAMPLES, seed: int = 13,
                   level: float = LEVEL) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of the mean of ``values`` (nulls/NaN dropped)."""
    data = np.asarray(values)
    if data.dtype == object:     # a list with None in it; numeric arrays stay vectorised
        data = np.asarray([v for v in data if v is not None], dtype=np.float64)
    data = data.astype(np.float64, copy=False)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return None, None
    rng = np.random.default_rng(seed)
    # resampled in blocks so that a tier of millions of pairs needs ~CHUNK_ITEMS indices at a
    # time, not resamples × n; the draws come in the same order, so the interval is the same
    block = max(1, CHUNK_ITEMS // data.size)
    means = np.concatenate([data[rng.integers(0, data.size, size=(min(block, resamples - start),
                                                                   data.size))].mean(axis=1)
                            for start in range(0, resamples, block)])
    return _percentiles(means, level)


def normal_mean(values: Any, *, level: float = LEVEL) -> tuple[float | None, float | None]:
    """mean ± z·SE (SE = sample standard deviation / √n; z = 1.96 at 95 %), nulls/NaN
    dropped: for a mean over very many items, where it and the percentile bootstrap agree and
    the bootstrap's resamples × n draws would take minutes."""
    from statistics import NormalDist

    data = np.asarray(values, dtype=np.float64)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return None, None
    half = (NormalDist().inv_cdf(0.5 + level / 2) * data.std(ddof=1) / np.sqrt(data.size)
            if data.size > 1 else 0.0)
    mean = float(data.mean())
    return mean - float(half), mean + float(half)


def bootstrap_counts(counts: np.ndarray, score: Callable[[np.ndarray], np.ndarray], *,
                     resamples: int = RESAMPLES, seed: int = 13,
                     level: float = LEVEL) -> tuple[float | None, float | None]:
    """Interval of ``score(summed counts)``, resampling the rows of ``counts`` (items × k).

    ``score`` takes an array of summed count rows (resamples × k) and returns one value per
    row, so ratios of sums (AER, F1) are resampled the way they are computed."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] == 0:
        return None, None
    picks = np.random.default_rng(seed).integers(0, counts.shape[0],
                                                 size=(resamples, counts.shape[0]))
    return _percentiles(score(counts[picks].sum(axis=1)), level)


def paired_bootstrap(first: Any, second: Any, *, resamples: int = RESAMPLES, seed: int = 13,
                     level: float = LEVEL) -> dict[str, float]:
    """Mean difference ``first − second`` over the same items, its interval, and the share of
    resamples where the difference is ≤ 0 (``p_value``: how often ``first`` would not win)."""
    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError("paired_bootstrap needs two equally long, non-empty score lists")
    diff = a - b
    picks = np.random.default_rng(seed).integers(0, diff.size, size=(resamples, diff.size))
    means = diff[picks].mean(axis=1)
    low, high = _percentiles(means, level)
    return {"difference": float(diff.mean()), "low": low, "high": high,
            "p_value": float((means <= 0).mean())}


def model_sha(encoder: Any) -> str:
    """A short hash of what an encoder is (its backend signature includes the model files'
    checksum for local models), or ``none``."""
    if encoder is None:
        return "none"
    return hashlib.sha256(_description(encoder).encode()).hexdigest()[:12]


def _description(encoder: Any) -> str:
    # the embed cache wrapper describes its backend (describe()["signature"]); a bare
    # repr() would hold a memory address and change from run to run
    if hasattr(encoder, "signature"):
        return encoder.signature()
    if hasattr(encoder, "describe"):
        info = encoder.describe()
        return str(info.get("signature") or sorted(info.items()))
    return type(encoder).__qualname__


def _name(encoder: Any) -> str:
    if encoder is None:
        return "none"
    if hasattr(encoder, "describe") and not hasattr(encoder, "name"):
        return str(encoder.describe().get("name", type(encoder).__name__))
    return getattr(encoder, "name", type(encoder).__name__)


def signature(*, encoder: Any = None, seed: int, n: int, resamples: int = RESAMPLES,
              extra: dict[str, Any] | None = None) -> str:
    """``encoder:…|model-sha:…|seed:…|n:…|resamples:…|version:…`` (plus ``extra`` fields)."""
    fields = {"encoder": _name(encoder), "model-sha": model_sha(encoder), "seed": seed, "n": n,
              "resamples": resamples, **(extra or {}), "version": __version__}
    return "|".join(f"{key}:{value}" for key, value in fields.items())
