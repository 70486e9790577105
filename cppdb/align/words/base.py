"""What every word aligner shares: the protocol, input checks and bulk matrix helpers.

An aligner turns a batch of tokenised sentence pairs into one link-probability matrix per pair
(shape ``|zh| x |en|``, values in [0, 1]).  Statistical aligners must be trained first
(``train(pairs)``); the others are ready once constructed.  Matrices of a batch are computed in
bulk: aligners work on the *flattened* cells of the whole batch (one array of all
``(pair, i, j)`` cells) and only split into per-pair matrices at the end.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from cppdb.errors import BadInputError
from cppdb.registry import Backend

TokenPair = tuple[Sequence[str], Sequence[str]]


class WordAligner(Backend):
    """Base of the word aligners registered under the capability ``word_aligner``."""

    #: True when ``train`` must be called before ``align``.
    needs_training: ClassVar[bool] = False

    def train(self, pairs: Sequence[TokenPair]) -> None:
        """Fit the aligner on tokenised pairs (no-op for aligners without parameters)."""

    def align(self, pairs: Sequence[TokenPair], *,
              en_lemmas: Sequence[Sequence[str]] | None = None) -> list[np.ndarray]:
        """One ``|zh| x |en|`` link-probability matrix per pair."""
        raise NotImplementedError


#: pairs per bulk step: bounds the flattened cell arrays (~70 cells per Tatoeba pair)
CHUNK_PAIRS = 20000
#: the aligners of a chunk compute their matrices this many pairs at a time: their per-cell
#: work (lexical lookups, posteriors) is held for the whole batch, ~1 GB per 4,000 news-length
#: pairs; a multiple of simalign-e5's encoder batch so its batches do not change
MATRIX_BATCH_PAIRS = 4000


def in_chunks(pairs: Sequence[TokenPair], en_lemmas: Sequence[Sequence[str]] | None,
              compute, size: int = CHUNK_PAIRS) -> list[np.ndarray]:
    """Run ``compute(pairs_chunk, lemmas_chunk)`` over chunks and concatenate the matrices,
    so memory stays proportional to the chunk, not the corpus."""
    out: list[np.ndarray] = []
    for start in range(0, len(pairs), size):
        lemmas = None if en_lemmas is None else en_lemmas[start:start + size]
        out.extend(compute(pairs[start:start + size], lemmas))
    return out


@dataclass(frozen=True)
class CellGrid:
    """All cells ``(pair, i, j)`` of a batch, flattened row-major pair after pair.

    ``offsets[k]`` is where pair ``k``'s cells start; pair ``k`` has ``rows[k] * cols[k]``
    cells; ``zh_pos``/``en_pos`` are the token positions of each cell inside its pair and
    ``zh_token``/``en_token`` index into the batch-wide flat token lists.
    """

    rows: np.ndarray
    cols: np.ndarray
    offsets: np.ndarray
    pair: np.ndarray
    zh_pos: np.ndarray
    en_pos: np.ndarray
    zh_token: np.ndarray
    en_token: np.ndarray

    @property
    def size(self) -> int:
        return int(self.pair.shape[0])

    def split(self, flat: np.ndarray) -> list[np.ndarray]:
        """Per-pair matrices (views) of a flat per-cell array."""
        return [flat[start:start + r * c].reshape(r, c) for start, r, c
                in zip(self.offsets.tolist(), self.rows.tolist(), self.cols.tolist())]

    def column_group(self) -> np.ndarray:
        """Id of the (pair, en position) column of every cell: normalise over zh with it."""
        col_start = np.concatenate(([0], np.cumsum(self.cols)[:-1]))
        return col_start[self.pair] + self.en_pos

    def row_group(self) -> np.ndarray:
        """Id of the (pair, zh position) row of every cell: normalise over en with it."""
        row_start = np.concatenate(([0], np.cumsum(self.rows)[:-1]))
        return row_start[self.pair] + self.zh_pos

    def relative_distance(self) -> np.ndarray:
        """|i/|zh| - j/|en|| of every cell (token centres), the diagonal distance."""
        rows = self.rows[self.pair].astype(np.float64)
        cols = self.cols[self.pair].astype(np.float64)
        return np.abs((self.zh_pos + 0.5) / rows - (self.en_pos + 0.5) / cols)


def cell_grid(pairs: Sequence[TokenPair]) -> CellGrid:
    """Build the flattened cell grid of a batch without a Python loop over cells."""
    rows = np.fromiter((len(z) for z, _ in pairs), dtype=np.int64, count=len(pairs))
    cols = np.fromiter((len(e) for _, e in pairs), dtype=np.int64, count=len(pairs))
    sizes = rows * cols
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    total = int(sizes.sum())
    pair = np.repeat(np.arange(len(pairs), dtype=np.int64), sizes)
    local = np.arange(total, dtype=np.int64) - offsets[pair]
    cols_of_cell = cols[pair]
    zh_pos = local // np.maximum(cols_of_cell, 1)
    en_pos = local - zh_pos * cols_of_cell
    zh_start = np.concatenate(([0], np.cumsum(rows)[:-1])).astype(np.int64)
    en_start = np.concatenate(([0], np.cumsum(cols)[:-1])).astype(np.int64)
    return CellGrid(rows=rows, cols=cols, offsets=offsets, pair=pair, zh_pos=zh_pos,
                    en_pos=en_pos, zh_token=zh_start[pair] + zh_pos,
                    en_token=en_start[pair] + en_pos)


def group_normalise(values: np.ndarray, groups: np.ndarray, n_groups: int,
                    extra: np.ndarray | float = 0.0) -> np.ndarray:
    """values / (sum of values in the cell's group + extra[group]) — a bulk softmax-free
    normalisation used for posteriors (``extra`` is the NULL word's mass)."""
    totals = np.bincount(groups, weights=values, minlength=n_groups)
    totals = totals + extra
    denom = totals[groups]
    return np.divide(values, denom, out=np.zeros_like(values), where=denom > 0)


_SPACE = re.compile(r"\s")


def check_pairs(pairs: Sequence[TokenPair], *, where: str = "input") -> None:
    """Every pair has two non-empty token lists of strings without whitespace inside."""
    for k, pair in enumerate(pairs):
        if len(pair) != 2:
            raise BadInputError(f"{where}: item {k + 1} is not a (zh tokens, en tokens) pair")
        for side, tokens in zip(("zh", "en"), pair):
            if isinstance(tokens, str):
                raise BadInputError(
                    f"{where}: pair {k + 1} has a {side} string instead of a token list",
                    hint="split sentences into tokens first (e.g. text.split())")
            if len(tokens) == 0:
                raise BadInputError(f"{where}: pair {k + 1} has no {side} tokens",
                                    hint="remove empty pairs or pass them to the API, which "
                                         "reports them as rejected")
            try:
                joined = "\x00".join(tokens)
            except TypeError:
                joined = None
            # one C-level scan per sentence instead of a Python loop per character
            if joined is None or _SPACE.search(joined) or "" in (tokens[0], tokens[-1]) \
                    or "\x00\x00" in joined:
                bad = next(t for t in tokens if not isinstance(t, str) or not t
                           or _SPACE.search(t))
                raise BadInputError(
                    f"{where}: pair {k + 1} has an invalid {side} token {bad!r}",
                    hint="tokens must be non-empty strings without whitespace")
