"""BERT-align over the bundled multilingual-e5-small (``e5-tokens``): offline, numpy only.

Same rule as :class:`~cppdb.extractors.compression.keywords.BertAligner` (Zhao et al. 2022:
word vector = mean of its tokens' vectors, each unaligned headline content word → the sentence
word of highest cosine); the vectors come from e5-small's token states at ``layer`` instead
of a local Chinese BERT.  Headline and sentence are encoded separately, as in the paper; a
word's vector averages the sub-word tokens overlapping its characters
(:func:`cppdb.align.words.simalign_e5.sentence_word_vectors`).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cppdb.align.words.simalign_e5 import sentence_word_vectors
from cppdb.embed.e5_tokens import E5TokenEncoder
from cppdb.errors import ConfigError
from cppdb.extractors.compression.keywords import BertAligner


class E5BertAligner(BertAligner):
    """BERT-align with e5-small token vectors (no model directory needed)."""

    def __init__(self, *, layer: int = 7, batch_size: int = 32, min_cosine: float = 0.0,
                 prefix: str = "query") -> None:
        if not -12 <= layer <= 12:
            raise ConfigError(f"compression.bert_layer must be in 0..12, not {layer}")
        self.layer = int(layer)
        self.batch_size = batch_size
        self.min_cosine = min_cosine
        self.encoder = E5TokenEncoder(prefix=prefix, batch_tokens=max(64, 128 * batch_size))

    def check(self) -> None:
        self.encoder.check()

    def describe(self) -> dict[str, Any]:
        signature = f"bert-align[{self.encoder.signature()}|layer:{self.layer}]"
        return {"name": "bert-align", "encoder": "e5-tokens", "layer": self.layer,
                "signature": signature}

    def word_vectors(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """One (n_words, hidden) array per tokenised Chinese sentence."""
        vectors = sentence_word_vectors(self.encoder, [list(s) for s in sentences], None,
                                        (self.layer,))
        return [v[0] for v in vectors]
