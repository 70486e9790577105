"""Aligned phrase pairs of one sentence pair (SPEC §1.3–1.4).

A phrase is the yield of a complete constituent whose label is in the configured list; a
single word whose POS tag is in the list is a phrase too (a pre-terminal is a complete
subtree).  When one token range carries several labels (unary chains such as NP → NN), the
phrase-level label from the parse wins over the POS tag, and the first listed span wins
among parse labels.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cppdb.annotate.types import AnnotatedSentence, Span
from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError
from cppdb.extractors.consistency import ConsistencyRule, SpanLinks

_BILINGUAL = toml_defaults("bilingual")

#: SPEC §1.3 phrase labels: the paper's nominal lists (``bilingual.phrase_labels = "paper"``).
PAPER_EN_LABELS = ("CD", "JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "PRP", "PRP$",
                   "ADJP", "NP")
PAPER_ZH_LABELS = ("CD", "JJ", "NN", "NR", "NT", "OD", "PN", "ADJP", "DNP", "NP")
#: The default (``"verbal"``): the paper's lists plus verb phrases and clauses, whose pairs are
#: the paper's own showcase (死于一场车祸 / 在一场车祸中丧生, [NP1] 出生于 [NP2]); without the
#: Chinese DNP, whose every span ends in a dangling 的 (山东 的).
#: Single verbs (知道 / 了解 ← "know") are phrases too, but never pattern slots: a frame
#: such as [NP1] [VV1] [NP2] keeps no word of its own.
ZH_VERB_WORDS = ("VV",)
EN_VERB_WORDS = ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ")
VERB_WORDS = frozenset(ZH_VERB_WORDS + EN_VERB_WORDS)
EN_PHRASE_LABELS = PAPER_EN_LABELS + ("VP", "S") + EN_VERB_WORDS
ZH_PHRASE_LABELS = tuple(x for x in PAPER_ZH_LABELS if x != "DNP") + ("VP", "IP") + ZH_VERB_WORDS
LABEL_SETS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "verbal": (ZH_PHRASE_LABELS, EN_PHRASE_LABELS),
    "paper": (PAPER_ZH_LABELS, PAPER_EN_LABELS),
}


def phrase_labels(label_set: str, zh_custom: Sequence[str], en_custom: Sequence[str]
                  ) -> tuple[frozenset[str], frozenset[str]]:
    """(zh, en) phrase labels of a named set; ``custom`` takes the two lists as given."""
    if label_set == "custom":
        return frozenset(zh_custom), frozenset(en_custom)
    if label_set not in LABEL_SETS:
        raise ConfigError(f"unknown bilingual.phrase_labels {label_set!r}",
                          hint=f"use one of {', '.join([*LABEL_SETS, 'custom'])}")
    zh, en = LABEL_SETS[label_set]
    return frozenset(zh), frozenset(en)


#: clause-level and verb-phrase labels of both languages; every other label but the single
#: verbs is nominal (nouns, pronouns, numbers, adjectives and their phrases)
VERBAL_LABELS = frozenset({"VP", "IP", "S", "SQ", "SINV", "SBAR", "CP"})


@dataclass(frozen=True)
class PhraseSettings:
    zh_labels: frozenset[str] = frozenset(ZH_PHRASE_LABELS)
    en_labels: frozenset[str] = frozenset(EN_PHRASE_LABELS)
    max_phrase_len: int = _BILINGUAL["max_phrase_len"]
    #: a verbal phrase aligns only with a verbal one, a nominal with a nominal (到 他 / "him"
    #: is an alignment error, not a phrase pair)
    label_agreement: bool = _BILINGUAL["label_agreement"]


@dataclass(frozen=True)
class AlignedPhrase:
    """A Chinese span aligned to an English span; ``links`` are sentence-level indices."""

    zh: Span
    en: Span
    links: tuple[tuple[int, int], ...]


def candidate_spans(sentence: AnnotatedSentence, labels: frozenset[str],
                    max_len: int) -> list[Span]:
    """Labelled phrases of a sentence, one per token range, at most ``max_len`` tokens."""
    seen: dict[tuple[int, int], Span] = {}
    n, pos = len(sentence.tokens), sentence.pos
    for span in sentence.spans:
        if not (span.label in labels and 0 <= span.start < span.end <= n
                and span.end - span.start <= max_len):
            continue
        key = (span.start, span.end)
        old = seen.get(key)
        # backends emit a span per POS tag too; a phrase label over the same words wins
        if old is None or (_is_word_label(old, pos) and not _is_word_label(span, pos)):
            seen[key] = span
    for i, tag in enumerate(pos):
        if tag in labels and (i, i + 1) not in seen:
            seen[(i, i + 1)] = Span(i, i + 1, tag)
    return sorted(seen.values(), key=lambda s: (s.start, -s.end))


def _is_word_label(span: Span, pos: Sequence[str]) -> bool:
    return span.end - span.start == 1 and span.start < len(pos) and pos[span.start] == span.label


def _bounds(spans: Sequence[Span]) -> np.ndarray:
    return np.array([(s.start, s.end) for s in spans], dtype=np.int64).reshape(-1, 2)


def phrase_alignment(zh: AnnotatedSentence, en: AnnotatedSentence, links: np.ndarray,
                     rule: ConsistencyRule, settings: PhraseSettings,
                     report_rules: Sequence[ConsistencyRule] = ()
                     ) -> tuple[list[AlignedPhrase], list[int]]:
    """Aligned phrase pairs under ``rule``, and how many align under each report rule."""
    zh_spans = candidate_spans(zh, settings.zh_labels, settings.max_phrase_len)
    en_spans = candidate_spans(en, settings.en_labels, settings.max_phrase_len)
    if not zh_spans or not en_spans or len(links) == 0:
        return [], [0] * len(report_rules)
    stats = SpanLinks(_bounds(zh_spans), _bounds(en_spans), links)
    masks: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    agree = _label_agreement(zh_spans, en_spans) if settings.label_agreement else None

    def aligned(r: ConsistencyRule) -> np.ndarray:
        if r.mode not in masks:
            masks[r.mode] = (r.constrained(zh.pos, "zh"), r.constrained(en.pos, "en"))
        ok = stats.aligned(*masks[r.mode], r.tolerance)
        return ok if agree is None else ok & agree

    counts = [int(aligned(r).sum()) for r in report_rules]
    pairs = []
    for s, t in np.argwhere(aligned(rule)).tolist():
        inner = links[stats.z_in[s] & stats.e_in[t]]
        pairs.append(AlignedPhrase(zh_spans[s], en_spans[t],
                                   tuple(map(tuple, inner.tolist()))))
    return pairs, counts


def _label_agreement(zh_spans: Sequence[Span], en_spans: Sequence[Span]) -> np.ndarray:
    """zh × en: True where both spans are single verbs, both verbal or both nominal (a
    single English verb is no phrase pair of 卖 给 我 / "sold": lexical pairs stay words)."""
    def kinds(spans: Sequence[Span]) -> np.ndarray:
        return np.array([2 if s.label in VERB_WORDS else 1 if s.label in VERBAL_LABELS else 0
                         for s in spans], dtype=np.int8)
    return kinds(zh_spans)[:, None] == kinds(en_spans)[None, :]


def align_phrases(zh: AnnotatedSentence, en: AnnotatedSentence, links: np.ndarray,
                  rule: ConsistencyRule, settings: PhraseSettings) -> list[AlignedPhrase]:
    """Every (Chinese phrase, English phrase) pair of the sentence that aligns under ``rule``."""
    return phrase_alignment(zh, en, links, rule, settings)[0]
