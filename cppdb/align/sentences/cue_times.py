"""Cue times as evidence for subtitle pairs: two lines that the text alignment pairs should be
on screen at the same time.

Short subtitle lines (喺边呀？, 帮主⋯) cost as much as unrelated ones under any text encoder, so
a 1-1 bead that pairs a line with its neighbour's translation looks as good as a right one.
When both lines come from timed cues the film says more: the two tracks of one film put a
line on screen at nearly the same moment, even when they split it into cues differently.

The two tracks are rarely in step: on the development film the Cantonese cues start 0.1-0.4 s
after the Mandarin ones, and a track from another release can be seconds off or drift with a
frame-rate change.  So the *local offset* of the tracks comes first: the median, over the
``window`` 1-1 pairs on each side in alignment order, of the difference of the two cues'
midpoints.  A median follows a constant shift and slow drift and ignores the few misaligned
pairs among its neighbours.  Then, with the target cue moved by that offset:

* ``cue_gap_ms``: how far apart the two cues are (0 when they touch or overlap);
* ``cue_overlap``: the time both are on screen, as a share of the shorter cue (0-1).

All three are null when either line has no cue times (text, EPUB, OCR'd pages).  A pair whose
cues do not meet is dropped by :func:`cue_mismatch` unless the two lines share most of their
characters (着火啦！/ 着火了！ may be the same line said twice, or cued apart: it is a good
pair either way).  Thresholds and the measurement: ``docs/benchmarks/align_sentences.md``.
"""
from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from cppdb.defaults import toml_defaults
from cppdb.schema import (CUE_GAP, CUE_OFFSET, CUE_OVERLAP, SRC_DOC, SRC_END, SRC_START,
                          TGT_DOC, TGT_END, TGT_START)
from cppdb.text.distance import jaccard

_MONOLINGUAL = toml_defaults("monolingual")

_NOT_A_CHARACTER = r"[^\p{L}\p{N}]"     # punctuation, symbols and spaces do not count as shared


@dataclass(frozen=True)
class CueSettings:
    """The cue-time check of ``[monolingual]`` (``cue_*`` settings)."""

    cue_check: bool = _MONOLINGUAL["cue_check"]
    cue_max_gap_ms: int = _MONOLINGUAL["cue_max_gap_ms"]
    cue_offset_window: int = _MONOLINGUAL["cue_offset_window"]
    cue_keep_char_jaccard: float = _MONOLINGUAL["cue_keep_char_jaccard"]


def cue_agreement(pairs: pl.DataFrame, window: int, *,
                  order: tuple[str, ...] = (*SRC_DOC, *TGT_DOC, "bead")) -> pl.DataFrame:
    """``pairs`` (with the cue times ``schema.SRC_START`` … ``TGT_END``, nullable) plus
    ``schema.CUE_COLUMNS``.

    ``order``: document-pair columns then the position of the pair in the alignment; the
    local offset is taken over neighbours within one document pair, in that order.
    """
    *documents, _ = order
    mid_difference = ((pl.col(SRC_START) + pl.col(SRC_END)) / 2
                      - (pl.col(TGT_START) + pl.col(TGT_END)) / 2)
    offset = (mid_difference.rolling_median(window_size=2 * window + 1, center=True,
                                            min_samples=1).over(documents))
    ordered = pairs.with_row_index("_row").sort(list(order)).with_columns(offset.alias(CUE_OFFSET))
    tgt_start = pl.col(TGT_START) + pl.col(CUE_OFFSET)
    tgt_end = pl.col(TGT_END) + pl.col(CUE_OFFSET)
    both = (pl.min_horizontal(pl.col(SRC_END), tgt_end)
            - pl.max_horizontal(pl.col(SRC_START), tgt_start))
    shorter = pl.min_horizontal(pl.col(SRC_END) - pl.col(SRC_START),
                                pl.col(TGT_END) - pl.col(TGT_START))
    timed = pl.all_horizontal(pl.col(SRC_START, SRC_END, TGT_START, TGT_END).is_not_null())
    return (ordered.with_columns(
        pl.when(timed).then((-both).clip(lower_bound=0.0)).alias(CUE_GAP),
        pl.when(timed).then(both.clip(lower_bound=0.0) / shorter.clip(lower_bound=1))
        .alias(CUE_OVERLAP))
        .with_columns(pl.when(timed).then(pl.col(CUE_OFFSET)).alias(CUE_OFFSET))
        .sort("_row").drop("_row"))


def shared_characters(source: str | pl.Expr, target: str | pl.Expr) -> pl.Expr:
    """Jaccard similarity of the two sides' character sets (letters and digits, any case)."""
    def chars(column: str | pl.Expr) -> pl.Expr:
        text = pl.col(column) if isinstance(column, str) else column
        return (text.str.to_lowercase().str.replace_all(_NOT_A_CHARACTER, "")
                .str.split("").list.unique())

    return jaccard(chars(source), chars(target), empty=0.0)


def cue_mismatch(settings: CueSettings, source: str, target: str) -> pl.Expr:
    """True for a timed pair whose cues are more than ``cue_max_gap_ms`` apart (after the local
    offset) and whose lines share less than ``cue_keep_char_jaccard`` of their characters; false
    for everything else (untimed pairs included, and every pair when the check is off)."""
    if not settings.cue_check:
        return pl.lit(False)
    apart = pl.col(CUE_GAP).is_not_null() & (pl.col(CUE_GAP) > settings.cue_max_gap_ms)
    return apart & (shared_characters(source, target) < settings.cue_keep_char_jaccard)


def cue_reason(settings: CueSettings) -> pl.Expr:
    """Why :func:`cue_mismatch` dropped a pair, with its numbers."""
    return pl.format("cues {} ms apart after the tracks' local offset of {} ms "
                     "(monolingual.cue_max_gap_ms {})", pl.col(CUE_GAP).round(0).cast(pl.Int64),
                     pl.col(CUE_OFFSET).round(0).cast(pl.Int64), pl.lit(settings.cue_max_gap_ms))
