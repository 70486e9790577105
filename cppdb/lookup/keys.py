"""Lookup keys: the same normalisation for the data (polars) and for a query (Python).

A key is the text with widths folded (NFKC-style half-width ASCII), traditional script
converted to simplified (OpenCC, the project's ``converter`` backend; the data is already
simplified by the pipelines) and **no spaces**, so that 出生于 and 出生 于 (two
segmentations of one string) give the same key.

* ``key``   — the whole source, slots kept with their labels: ``[NP1]出生于[NP2]``.
* ``shape`` — slots reduced to ``[X]``: ``[X]出生于[X]`` (a query ``[X] 出生于 [X]`` or one
  whose slot labels differ from the data's still finds the pattern).
* ``fixed`` — the words between slots, slots as ``|``: ``|出生于|`` (``出生于`` finds every
  pattern whose fixed words contain it).
"""
from __future__ import annotations

import re

import polars as pl

from cppdb.text.convert import default_converter
from cppdb.text.normalize import collapse_whitespace, to_halfwidth

SLOT = re.compile(r"\[([^\[\]\s]+?)\]")
ANY_SLOT = "[X]"
SLOT_MARK = "|"
_GENERIC_LABELS = {"x", "*", "", "slot"}


def _strip_spaces(text: str) -> str:
    return re.sub(r"\s+", "", text)


def normalise_query(text: str) -> str:
    """Half-width, simplified text with collapsed spaces; slot labels upper case like the data."""
    text = collapse_whitespace(to_halfwidth(text, keep_chinese_punctuation=True))
    text = default_converter().convert_one(text)
    return SLOT.sub(lambda m: m.group(0).upper(), text)


def has_slots(text: str) -> bool:
    return SLOT.search(text) is not None


def query_keys(text: str) -> dict[str, str]:
    """``key``, ``shape`` and ``fixed`` of a query, plus whether its slot labels are generic."""
    norm = normalise_query(text)
    labels = [m.group(1).rstrip("0123456789").lower() for m in SLOT.finditer(norm)]
    generic = bool(labels) and all(label in _GENERIC_LABELS for label in labels)
    return {"key": _strip_spaces(norm),
            "shape": _strip_spaces(SLOT.sub(ANY_SLOT, norm)),
            "fixed": _strip_spaces(SLOT.sub(SLOT_MARK, norm)),
            "generic": "1" if generic else ""}


def key_expr(column: str) -> pl.Expr:
    """The ``key`` of the data's texts (they are simplified already): no spaces."""
    return pl.col(column).str.replace_all(r"\s+", "").alias("key")


def key_exprs(column: str) -> list[pl.Expr]:
    """The ``key``/``shape``/``fixed`` columns of the data, computed by polars."""
    text = pl.col(column)
    return [key_expr(column),
            text.str.replace_all(SLOT.pattern, ANY_SLOT).str.replace_all(r"\s+", "")
            .alias("shape"),
            text.str.replace_all(SLOT.pattern, SLOT_MARK).str.replace_all(r"\s+", "")
            .alias("fixed")]
