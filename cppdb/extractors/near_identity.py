"""The near-identity class: candidate pairs that are no evidence of another wording.

Like PPDB's identity/near-identity classes, these pairs leave the paraphrase table for
``near_identity_pairs.parquet`` (with a ``reason``), unless ``bilingual.separate_near_identity``
is off:

* ``same_sentence_nested`` — every piece of support is two nested spans of one sentence
  linked to the same English span (公司 / 有限公司 when 有限 is unaligned): the pivot echoes
  one translation, it does not witness two.  The pivot computes the flag
  (:data:`cppdb.schema.NESTED_ONLY`).
* ``function_words`` — the sides differ only by added or dropped function material
  (:data:`cppdb.text.function_words.ZH_NEAR_IDENTITY_WORDS`: demonstratives, classifiers
  with 一/这/那, particles 的了着过, 等/等等, conjunctions, pronouns) and punctuation:
  男孩 / 这个男孩, 她丈夫 / 丈夫, [NP1]和[NP2] / [NP1]与[NP2].  Differences that change the
  meaning are not near-identities and stay in the table for the ranker: a negation word,
  a number (一个 / 两个, 们), a pronoun or demonstrative exchanged for another (他的书 /
  我的书, 这个 / 那个) — a guarded class may be dropped, never swapped.

Token lists are compared, not characters, so a content word that contains a function
character (有限公司 / 公司, 等待 / 待) never fires.
"""
from __future__ import annotations

import polars as pl

from cppdb import schema as S
from cppdb.text.function_words import (ZH_CLASSIFIER_HEADS, ZH_COUNTING_CLASSIFIERS,
                                       ZH_NEAR_IDENTITY_WORDS, ZH_REFERENCE_WORDS)

SAME_SENTENCE_NESTED = "same_sentence_nested"
FUNCTION_WORDS = "function_words"
#: the reasons in the order they are tried (the first that applies is recorded)
REASONS = (SAME_SENTENCE_NESTED, FUNCTION_WORDS)
_PUNCTUATION = r"^[\p{P}\p{S}]+$"
_WORDS = sorted(ZH_NEAR_IDENTITY_WORDS)
_CLASSIFIERS, _HEADS = sorted(ZH_COUNTING_CLASSIFIERS), sorted(ZH_CLASSIFIER_HEADS)


def _core(tokens: pl.Expr) -> pl.Expr:
    """The tokens that carry content: function words and punctuation removed, joined."""
    counted = (pl.element().is_in(_CLASSIFIERS)
               & pl.element().shift(1).is_in(_HEADS).fill_null(False))
    kept = tokens.list.eval(pl.element().filter(
        ~pl.element().is_in(_WORDS) & ~counted & ~pl.element().str.contains(_PUNCTUATION)))
    return kept.list.join(" ")


def _members(tokens: pl.Expr, words: frozenset[str]) -> pl.Expr:
    return tokens.list.eval(pl.element().filter(pl.element().is_in(sorted(words)))).list.join(" ")


def function_words_only(source: str = S.SOURCE_TOKENS, target: str = S.TARGET_TOKENS) -> pl.Expr:
    """True where the two token lists differ only by function material (module docstring)."""
    src, tgt = pl.col(source), pl.col(target)
    core_src, core_tgt = _core(src), _core(tgt)
    same = (core_src == core_tgt) & (core_src != "") & (src.list.join(" ") != tgt.list.join(" "))
    a, b = _members(src, ZH_REFERENCE_WORDS), _members(tgt, ZH_REFERENCE_WORDS)
    return (same & ((a == "") | (b == "") | (a == b))).fill_null(False)


def near_identity_reason() -> pl.Expr:
    """The ``reason`` column: the first reason of :data:`REASONS` that applies, else null."""
    return (pl.when(pl.col(S.NESTED_ONLY).fill_null(False)).then(pl.lit(SAME_SENTENCE_NESTED))
            .when(function_words_only()).then(pl.lit(FUNCTION_WORDS))
            .otherwise(pl.lit(None, dtype=pl.String)).alias(S.REASON))
