"""Concatenation of several encoders' unit vectors, weighted: ``[sqrt(w1) v1, sqrt(w2) v2]``.

The dot product of two such rows is ``w1 cos1 + w2 cos2`` (weights summing to 1), so the
result is again a unit vector whose cosine mixes the parts' cosines.  ``fit`` is forwarded to
the parts that are fitted per job.
"""
from __future__ import annotations

import numpy as np

from cppdb.embed.encoders import SentenceEncoder, normalise_rows
from cppdb.errors import ConfigError


class ConcatEncoder:
    """Weighted concatenation of sentence encoders (each returning unit rows)."""

    def __init__(self, parts: list[tuple[SentenceEncoder, float]]) -> None:
        if not parts or any(w <= 0 for _, w in parts):
            raise ConfigError("ConcatEncoder needs at least one part, each with a weight > 0")
        total = sum(w for _, w in parts)
        self.parts = [(encoder, w / total) for encoder, w in parts]

    def fit(self, texts: list[str]) -> None:
        for encoder, _ in self.parts:
            fit = getattr(encoder, "fit", None)
            if callable(fit):
                fit(texts)

    def encode(self, texts: list[str]) -> np.ndarray:
        blocks = [np.sqrt(w) * normalise_rows(encoder.encode(texts)) for encoder, w in self.parts]
        return normalise_rows(np.concatenate(blocks, axis=1))

    def signature(self) -> str:
        return "concat(" + ";".join(f"{w:.3f}*{e.signature()}" for e, w in self.parts) + ")"
