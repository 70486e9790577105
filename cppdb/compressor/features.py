"""Per-token features of a parsed sentence for the keep/drop tagger.

The corpus labels are a rooted subtree of the parse plus the tree transformation's particles,
auxiliaries, numerals and negations (SPEC §4), so what decides a token's label is mostly its
place in the tree: its relation and its head's, its depth, how much of the sentence hangs
below it, how far it is from its head.  The word itself (an embedding learned from the corpus)
and its first / last character (的, 了, 在 ... and the heads of unknown compounds) add the rest.

Categorical values are mapped to ids by a :class:`Vocabulary` built on the training corpus
(0 = padding, 1 = unknown); numeric features are scaled to roughly [-1, 1].
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: categorical features, in column order
CATEGORICAL = ("word", "upos", "deprel", "head_upos", "head_deprel", "first_char", "last_char")
#: numeric features, in column order
NUMERIC = ("position", "depth", "children", "subtree_share", "is_root", "head_offset",
           "chars", "sentence_tokens", "left_children", "right_children")
PAD, UNKNOWN = 0, 1
ROOT = "<root>"


@dataclass(frozen=True)
class ParsedSentence:
    """What the tagger reads of a sentence: tokens with UPOS and a 0-based tree (-1 = root)."""

    tokens: tuple[str, ...]
    upos: tuple[str, ...]
    heads: tuple[int, ...]
    deprels: tuple[str, ...]


def depths(heads: Sequence[int]) -> list[int]:
    """Distance of each token to the root (the root is 0); a cycle counts as the root."""
    out = [-1] * len(heads)
    for start in range(len(heads)):
        path, node = [], start
        while node >= 0 and out[node] < 0 and node not in path:
            path.append(node)
            node = heads[node]
        base = out[node] if node >= 0 and out[node] >= 0 else -1
        for offset, member in enumerate(reversed(path), start=1):
            out[member] = base + offset
    return out


def subtree_sizes(heads: Sequence[int], depth: Sequence[int]) -> list[int]:
    """Tokens in each token's subtree (itself included), summed deepest first."""
    size = [1] * len(heads)
    for node in sorted(range(len(heads)), key=lambda i: -depth[i]):
        head = heads[node]
        if 0 <= head < len(heads) and depth[head] < depth[node]:
            size[head] += size[node]
    return size


def categorical_values(sentence: ParsedSentence) -> list[tuple[str, ...]]:
    """The categorical values of each token, in :data:`CATEGORICAL` order."""
    rows = []
    for i, token in enumerate(sentence.tokens):
        head = sentence.heads[i]
        inside = 0 <= head < len(sentence.tokens)
        rows.append((token, sentence.upos[i], sentence.deprels[i],
                     sentence.upos[head] if inside else ROOT,
                     sentence.deprels[head] if inside else ROOT, token[:1], token[-1:]))
    return rows


def numeric_values(sentence: ParsedSentence) -> np.ndarray:
    """``[n_tokens, len(NUMERIC)]`` float32."""
    heads, n = sentence.heads, len(sentence.tokens)
    depth = depths(heads)
    size = subtree_sizes(heads, depth)
    left, right = Counter(), Counter()
    for i, head in enumerate(heads):
        if 0 <= head < n:
            (left if i < head else right)[head] += 1
    out = np.zeros((n, len(NUMERIC)), dtype=np.float32)
    for i, token in enumerate(sentence.tokens):
        head = heads[i]
        offset = 0 if not 0 <= head < n else head - i
        out[i] = (i / max(n - 1, 1), min(depth[i], 12) / 6.0,
                  math.log1p(left[i] + right[i]), size[i] / n, float(head < 0),
                  math.copysign(math.log1p(abs(offset)), offset) / 2.0,
                  min(len(token), 8) / 4.0, math.log1p(n) / 4.0,
                  math.log1p(left[i]), math.log1p(right[i]))
    return out


@dataclass(frozen=True)
class Vocabulary:
    """Value → id for each categorical feature (ids from 2; 0 = padding, 1 = unknown)."""

    ids: tuple[dict[str, int], ...]

    @classmethod
    def build(cls, sentences: Iterable[ParsedSentence], word_min_count: int) -> "Vocabulary":
        counts = [Counter() for _ in CATEGORICAL]
        for sentence in sentences:
            for values in categorical_values(sentence):
                for counter, value in zip(counts, values):
                    counter[value] += 1
        ids = []
        for name, counter in zip(CATEGORICAL, counts):
            least = word_min_count if name == "word" else 1
            kept = sorted(v for v, c in counter.items() if c >= least)
            ids.append({value: index for index, value in enumerate(kept, start=2)})
        return cls(tuple(ids))

    def sizes(self) -> tuple[int, ...]:
        return tuple(len(table) + 2 for table in self.ids)

    def encode(self, sentence: ParsedSentence) -> np.ndarray:
        """``[n_tokens, len(CATEGORICAL)]`` int64 ids."""
        rows = categorical_values(sentence)
        return np.array([[table.get(v, UNKNOWN) for table, v in zip(self.ids, values)]
                         for values in rows], dtype=np.int64).reshape(len(rows), len(CATEGORICAL))

    def to_json(self) -> dict[str, Any]:
        return {name: sorted(table, key=table.__getitem__)
                for name, table in zip(CATEGORICAL, self.ids)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Vocabulary":
        return cls(tuple({v: i for i, v in enumerate(data[name], start=2)}
                         for name in CATEGORICAL))
