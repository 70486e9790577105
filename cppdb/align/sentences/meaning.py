"""Meaning margin of a 1-1 pair: are its two lines closer to each other than to their neighbours?

The alignment can be right while the pair is still not a paraphrase: two subtitle tracks often
say different things at the same moment (干你娘你！/ 发春呀？, 系咪？/ 你疯了吗？).  Cue times
cannot catch these (the lines are on screen together) and the bead cost barely can: short lines
cost as much as unrelated ones under a character encoder.  A sentence embedding separates them
better, but its raw cosine depends on the language pair and the genre (Cantonese against
Mandarin lines score 0.83-0.93 whatever they say; two Mandarin translations of a story 0.9+),
so one cosine threshold cannot serve both.

The *ratio margin* of bitext mining (Artetxe & Schwenk, 2019) normalises it:

    margin(x, y) = cos(x, y) / ( mean_k cos(x, NN_k(x)) / 2 + mean_k cos(y, NN_k(y)) / 2 )

where ``NN_k(x)`` are the ``k`` lines of the other version's document most similar to ``x``
(``y`` usually among them).  A pair whose lines say the same thing stands out from the rest of
the document (margin above 1); a pair of generic lines that say different things does not.
The threshold ``monolingual.min_meaning_margin`` was chosen on 250 blind-judged subtitle pairs
(``data/labels/monolingual_judgements.md``; ``docs/benchmarks/align_sentences.md``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from cppdb.defaults import toml_defaults
from cppdb.embed.encoders import normalise_rows
from cppdb.schema import DOC_KEY, SRC_DOC, TGT_DOC

_MONOLINGUAL = toml_defaults("monolingual")

#: the column ``extract-monolingual`` writes (null when the check is off)
MEANING_MARGIN = "meaning_margin"
_BLOCK_ROWS = 1024      # rows of one similarity block: memory is block x document length


@dataclass(frozen=True)
class MeaningSettings:
    """The meaning-margin check of ``[monolingual]``; ``min_meaning_margin = 0`` turns it
    off."""

    min_meaning_margin: float = _MONOLINGUAL["min_meaning_margin"]
    meaning_margin_k: int = _MONOLINGUAL["meaning_margin_k"]

    @property
    def enabled(self) -> bool:
        return self.min_meaning_margin > 0


def mean_top_k(queries: np.ndarray, document: np.ndarray, k: int) -> np.ndarray:
    """For each (unit-length) query row, the mean cosine of its ``k`` nearest document rows;
    computed in blocks so that memory stays bounded for long documents."""
    k = max(1, min(k, len(document)))
    out = np.empty(len(queries), dtype=np.float64)
    for start in range(0, len(queries), _BLOCK_ROWS):
        sims = queries[start:start + _BLOCK_ROWS] @ document.T
        top = np.partition(sims, sims.shape[1] - k, axis=1)[:, -k:]
        out[start:start + len(sims)] = top.mean(axis=1)
    return out


def ratio_margins(source: np.ndarray, target: np.ndarray, source_doc: np.ndarray,
                  target_doc: np.ndarray, k: int) -> np.ndarray:
    """Margin of each row pair (``source[i]``, ``target[i]``); ``source_doc``/``target_doc``:
    every line of the two documents.  All rows must be of unit length
    (:func:`cppdb.embed.encoders.normalise_rows`)."""
    cos = (source * target).sum(axis=1).astype(np.float64)
    around = (mean_top_k(source, target_doc, k) + mean_top_k(target, source_doc, k)) / 2
    return cos / np.where(around > 0, around, 1.0)


def meaning_margins(pairs: pl.DataFrame, units: pl.DataFrame,
                    encode: Callable[[list[str]], np.ndarray], k: int) -> pl.Series:
    """``MEANING_MARGIN`` for each row of ``pairs`` (the document keys ``SRC_DOC``,
    ``TGT_DOC``, ``source``, ``target``), in row order; ``units`` (``DOC_KEY``, ``text``)
    holds every line of every document.  ``encode`` embeds a list of strings (a cached
    sentence encoder)."""
    margins = np.full(pairs.height, np.nan)
    if pairs.height == 0:
        return pl.Series(MEANING_MARGIN, margins, dtype=pl.Float64)
    paired = pl.concat([pairs.select([pl.col(c).alias(key) for c, key in zip(side, DOC_KEY)])
                        for side in (SRC_DOC, TGT_DOC)]).unique()
    lines = (units.join(paired, on=DOC_KEY, how="semi", nulls_equal=True)  # unpaired: no need
             .group_by(DOC_KEY).agg(pl.col("text")))
    by_doc = {row[:-1]: row[-1] for row in lines.select(*DOC_KEY, "text").iter_rows()}
    indexed = pairs.select(*SRC_DOC, *TGT_DOC, "source", "target").with_row_index("_row")
    # a pair's lines are lines of its documents, so these are all the strings needed
    texts = sorted({text for doc in by_doc.values() for text in doc})
    vectors = normalise_rows(encode(texts))
    row_of = {text: i for i, text in enumerate(texts)}

    def embed(strings: list[str]) -> np.ndarray:
        return vectors[[row_of[s] for s in strings]]

    n = len(DOC_KEY)
    for keys, group in indexed.group_by(*SRC_DOC, *TGT_DOC, maintain_order=True):
        margins[group["_row"].to_numpy()] = ratio_margins(
            embed(group["source"].to_list()), embed(group["target"].to_list()),
            embed(by_doc[keys[:n]]), embed(by_doc[keys[n:]]), k)
    return pl.Series(MEANING_MARGIN, margins, dtype=pl.Float64)
