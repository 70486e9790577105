"""How likely a 1-1 bead is a correct sentence pair: a calibrated confidence.

A 1-1 bead inside an omitted or rewritten passage pairs unrelated sentences at about the cost
of a random pair, and Vecalign keeps it because one poor 1-1 is cheaper than two deletions.
Its own cost says part of that; its neighbours say the rest (a good pair sits between good
pairs; a pair next to deletions or poor beads is suspect), and so does a BAM anchor (equal
lengths and shared characters at that point) and the length ratio of the two sentences.

Costs are Vecalign's, normalised by random pairs of the same document pair (a random 1-1 pair
costs about 1), so the features mean the same for every document and encoder.  The weights
(a logistic regression) are fitted on development cases with gold beads
(``bench/bench_confidence.py fit``) and shipped in ``resources/sentence_confidence.json``.
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from cppdb.align.sentences.beads import Bead
from cppdb.errors import ConfigError
from cppdb.shipped import shipped_file

#: cost given to a deletion/insertion neighbour (and the clip of every cost): worse than random
GAP_COST = 1.5
FEATURES = ("cost", "neighbour_cost", "gap_neighbours", "anchor", "length_ratio")
MODEL_FILE = shipped_file("sentence_confidence.json")


def bead_features(beads: Sequence[Bead], src_lengths: Sequence[int],
                  tgt_lengths: Sequence[int], window: int = 2) -> np.ndarray:
    """One row of :data:`FEATURES` per bead (rows of beads that are not 1-1 are all NaN).

    ``src_lengths``/``tgt_lengths``: characters per sentence, indexed like the beads.
    """
    n = len(beads)
    out = np.full((n, len(FEATURES)), np.nan)
    if n == 0:
        return out
    gaps = np.array([not (b.src and b.tgt) for b in beads])
    sizes = np.array([max(1, len(b.src) * len(b.tgt)) for b in beads], dtype=np.float64)
    raw = np.array([b.cost for b in beads], dtype=np.float64) / sizes
    costs = np.where(gaps | ~np.isfinite(raw), GAP_COST, np.clip(raw, 0.0, GAP_COST))
    # sums over the `window` beads on each side (the bead itself left out), by convolution
    kernel = np.ones(2 * window + 1)
    kernel[window] = 0.0
    def window_sum(values: np.ndarray) -> np.ndarray:
        return np.convolve(values, kernel)[window:window + n]   # "same" for any n

    around = window_sum(np.ones(n))
    cost_sum = window_sum(costs)
    gap_sum = window_sum(gaps.astype(np.float64))
    ones = np.array([b.is_one_to_one for b in beads])
    a = np.array([src_lengths[b.src[0]] if b.is_one_to_one else 0 for b in beads], np.float64)
    t = np.array([tgt_lengths[b.tgt[0]] if b.is_one_to_one else 0 for b in beads], np.float64)
    features = np.column_stack([
        costs,
        np.where(around > 0, cost_sum / np.maximum(around, 1), costs),
        gap_sum,
        np.array([b.anchor for b in beads], dtype=np.float64),
        np.abs(np.log((a + 1) / (t + 1))),
    ])
    out[ones] = features[ones]
    return out


@dataclass(frozen=True)
class ConfidenceModel:
    """``sigmoid(intercept + weights · features)``; ``provenance`` says how it was fitted."""

    intercept: float
    weights: tuple[float, ...]
    window: int = 2
    provenance: str = ""

    def __post_init__(self) -> None:
        if len(self.weights) != len(FEATURES):
            raise ConfigError(f"a sentence-confidence model needs {len(FEATURES)} weights "
                              f"({', '.join(FEATURES)}), not {len(self.weights)}")

    def predict(self, features: np.ndarray) -> np.ndarray:
        """Probability per row; NaN rows (beads that are not 1-1) stay NaN."""
        z = self.intercept + features @ np.asarray(self.weights)
        return 1.0 / (1.0 + np.exp(-z))

    def confidences(self, beads: Sequence[Bead], src: Sequence[str],
                    tgt: Sequence[str]) -> list[float | None]:
        """Confidence of each bead (``None`` for beads that are not 1-1)."""
        feats = bead_features(beads, [len(s) for s in src], [len(t) for t in tgt], self.window)
        return [None if math.isnan(p) else round(float(p), 6) for p in self.predict(feats)]

    def to_json(self) -> dict:
        return {"features": list(FEATURES), "intercept": self.intercept,
                "weights": list(self.weights), "window": self.window,
                "provenance": self.provenance}

    @classmethod
    def from_json(cls, data: dict) -> "ConfidenceModel":
        if list(data.get("features", [])) != list(FEATURES):
            raise ConfigError(f"sentence-confidence model lists features {data.get('features')}, "
                              f"this version computes {list(FEATURES)}",
                              hint="refit it with `python -m bench.bench_confidence fit`")
        return cls(float(data["intercept"]), tuple(float(w) for w in data["weights"]),
                   int(data.get("window", 2)), str(data.get("provenance", "")))


def confidence_model_file(path: str = "") -> Path:
    """The file ``monolingual.confidence_model`` names (empty: the shipped one)."""
    return Path(path) if path else MODEL_FILE


@lru_cache(maxsize=4)
def load_confidence_model(path: str = "") -> ConfidenceModel:
    """The shipped model, or the one at ``path`` (a JSON file written by ``to_json``)."""
    file = confidence_model_file(path)
    try:
        data = json.loads(file.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the sentence-confidence model {file}: {exc}",
                          hint="set monolingual.confidence_model to a file written by "
                               "`python -m bench.bench_confidence fit`, or leave it empty "
                               "for the shipped one") from exc
    return ConfidenceModel.from_json(data)
