"""Per-sentence extraction of aligned phrase and pattern occurrences, batched for a pool.

The input is the shared annotation table (``cppdb.schema``) plus the alignment table
(``id``, ``link_zh``, ``link_en``); the output is the occurrence table (:data:`OCCURRENCE_SCHEMA`),
one row per aligned phrase pair or pattern occurrence.  Token sequences are space-joined
strings (``zh``, ``en``; ``zh_pos`` has one tag per token, ``""`` for a slot) and word links
packed ints (``schema.LINK_BASE``) — cheaper to build and to pivot than List columns
(docs/benchmarks/links.md).  :func:`extract_range` reads its own row range from the two
Parquet files, so worker processes receive only a few integers.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.annotate.types import AnnotatedSentence, Span
from cppdb.defaults import toml_defaults
from cppdb.extractors.consistency import ConsistencyRule, rule_from_settings
from cppdb.extractors.patterns import Pattern, PatternSettings, patterns_of
from cppdb.extractors.settings import BilingualSettings
from cppdb.extractors.phrase_pairs import (AlignedPhrase, PhraseSettings, phrase_alignment,
                                           phrase_labels)

_BILINGUAL = toml_defaults("bilingual")

LINK_ZH, LINK_EN = S.LINK_ZH, S.LINK_EN
ALIGNMENT_SCHEMA = S.ALIGNMENT_SCHEMA
OCCURRENCE_SCHEMA = S.OCCURRENCE_SCHEMA
COUNT_MODES = ("strict", "relaxed", "relaxed_tolerance")


@dataclass(frozen=True)
class ExtractionSettings:
    rule: ConsistencyRule = ConsistencyRule()
    phrases: PhraseSettings = PhraseSettings()
    patterns: PatternSettings = PatternSettings()
    extract_patterns: bool = _BILINGUAL["patterns"]
    #: rules whose aligned-phrase counts are reported (strict, relaxed, relaxed+tolerance)
    report_rules: tuple[ConsistencyRule, ...] = field(default_factory=tuple)

    @classmethod
    def of(cls, bilingual: BilingualSettings) -> "ExtractionSettings":
        zh_pos, en_pos = bilingual.zh_constrained_pos, bilingual.en_constrained_pos
        # strict is PPDB's rule exactly: the tolerance knob belongs to the relaxed rule
        tolerance = 0 if bilingual.consistency == "strict" else bilingual.tolerance
        rule = rule_from_settings(bilingual.consistency, tolerance, zh_pos, en_pos)
        report_tol = max(1, bilingual.tolerance)
        report = (rule_from_settings("strict", 0, zh_pos, en_pos),
                  rule_from_settings("relaxed", 0, zh_pos, en_pos),
                  rule_from_settings("relaxed", report_tol, zh_pos, en_pos))
        return cls(
            rule=rule,
            phrases=PhraseSettings(*phrase_labels(bilingual.phrase_labels,
                                                  bilingual.zh_phrase_labels,
                                                  bilingual.en_phrase_labels),
                                   max_phrase_len=bilingual.max_phrase_len,
                                   label_agreement=bilingual.label_agreement),
            patterns=PatternSettings(max_slots=bilingual.max_slots,
                                     max_pattern_len=bilingual.max_pattern_len,
                                     adjacent_slots=bilingual.adjacent_slots),
            extract_patterns=bilingual.patterns,
            report_rules=report if bilingual.report_modes else ())


class _Rows:
    """Column lists of the occurrence table (appending to lists is the fast path).

    The word links of all rows go into one flat list (row k: ``links[ends[k]:ends[k + 1]]``):
    cutting it into the list column in polars costs a tenth of converting a list of lists."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {name: [] for name in OCCURRENCE_SCHEMA
                                           if name != S.ALIGN}
        self.links: list[int] = []
        self.link_ends: list[int] = [0]

    def add(self, sid: int, kind: str, outer: AlignedPhrase, lhs: str, en_label: str,
            zh_tokens: Sequence[str], zh_pos: Sequence[str], en_tokens: Sequence[str],
            slot_sig: str, swapped: bool, links: Sequence[tuple[int, int]]) -> None:
        c = self.cols
        c[S.ID].append(sid)
        c[S.KIND].append(kind)
        c[S.LHS].append(lhs)
        c[S.EN_LABEL].append(en_label)
        c[S.ZH].append(" ".join(zh_tokens))
        c[S.EN].append(" ".join(en_tokens))
        c[S.ZH_POS].append(" ".join(zh_pos))
        c[S.SLOT_SIG].append(slot_sig)
        c[S.SWAPPED].append(swapped)
        c["zh_start"].append(outer.zh.start)
        c["zh_end"].append(outer.zh.end)
        c["en_start"].append(outer.en.start)
        c["en_end"].append(outer.en.end)
        self.links.extend([i * S.LINK_BASE + j for i, j in links])
        self.link_ends.append(len(self.links))

    def frame(self) -> pl.DataFrame:
        schema = {k: v for k, v in OCCURRENCE_SCHEMA.items() if k != S.ALIGN}
        rows = pl.DataFrame(self.cols, schema=schema).with_row_index("_row")
        lengths = np.diff(np.asarray(self.link_ends, dtype=np.int64))
        links = (pl.DataFrame({"_row": np.repeat(np.arange(len(lengths), dtype=np.uint32), lengths),
                               S.ALIGN: pl.Series(self.links, dtype=pl.Int32)})
                 .group_by("_row", maintain_order=True).agg(S.ALIGN))
        empty = pl.lit([], dtype=OCCURRENCE_SCHEMA[S.ALIGN])
        return (rows.join(links, on="_row", how="left", maintain_order="left")
                .with_columns(pl.col(S.ALIGN).fill_null(empty)).select(list(OCCURRENCE_SCHEMA)))


def _add_phrase(rows: _Rows, sid: int, pair: AlignedPhrase, zh: AnnotatedSentence,
                en: AnnotatedSentence) -> None:
    z, e = pair.zh, pair.en
    links = [(i - z.start, j - e.start) for i, j in pair.links]
    rows.add(sid, "phrase", pair, z.label, e.label, zh.tokens[z.start:z.end],
             zh.pos[z.start:z.end], en.tokens[e.start:e.end], "", False, links)


def _add_pattern(rows: _Rows, sid: int, pattern: Pattern) -> None:
    rows.add(sid, "pattern", pattern.outer, pattern.lhs, pattern.en_label, pattern.zh_tokens,
             pattern.zh_pos, pattern.en_tokens, "|".join(pattern.slot_signature),
             pattern.swapped, pattern.links)


def extract_sentence(rows: _Rows, sid: int, zh: AnnotatedSentence, en: AnnotatedSentence,
                     links: np.ndarray, settings: ExtractionSettings) -> list[int]:
    """Append the phrase and pattern occurrences of one sentence pair to ``rows``.

    Returns the number of aligned phrase pairs under each report rule.
    """
    aligned, counts = phrase_alignment(zh, en, links, settings.rule, settings.phrases,
                                       settings.report_rules)
    for pair in aligned:
        _add_phrase(rows, sid, pair, zh, en)
    if settings.extract_patterns and len(aligned) > 1:
        for outer in aligned:
            for pattern in patterns_of(outer, aligned, zh, en, settings.patterns):
                _add_pattern(rows, sid, pattern)
    return counts


def sentences_from_columns(frame: pl.DataFrame, lang: str) -> list[AnnotatedSentence]:
    """AnnotatedSentence objects (tokens, POS, spans) from the annotation table columns."""
    tokens = frame[S.ann(lang, "tokens")].to_list()
    pos = frame[S.ann(lang, "pos")].to_list()
    starts = frame[S.ann(lang, "span_start")].to_list()
    ends = frame[S.ann(lang, "span_end")].to_list()
    labels = frame[S.ann(lang, "span_label")].to_list()
    out = []
    for tok, tags, st, en, lab in zip(tokens, pos, starts, ends, labels):
        spans = tuple(Span(a, b, c) for a, b, c in zip(st or (), en or (), lab or ()))
        out.append(AnnotatedSentence(tuple(tok or ()), tuple(tags or ()), spans))
    return out


def extract_frame(annotations: pl.DataFrame, alignment: pl.DataFrame,
                  settings: ExtractionSettings) -> tuple[pl.DataFrame, list[int]]:
    """Occurrences of a batch, and per report rule the number of aligned phrase pairs."""
    joined = annotations.join(alignment, on=S.ID, how="inner", maintain_order="left")
    zh_sents = sentences_from_columns(joined, "zh")
    en_sents = sentences_from_columns(joined, "en")
    rows = _Rows()
    counts = [0] * len(settings.report_rules)
    for sid, zh, en, lz, le in zip(joined[S.ID].to_list(), zh_sents, en_sents,
                                   joined[LINK_ZH].to_list(), joined[LINK_EN].to_list()):
        links = np.column_stack([np.asarray(lz or (), dtype=np.int64),
                                 np.asarray(le or (), dtype=np.int64)])
        for k, n in enumerate(extract_sentence(rows, sid, zh, en, links, settings)):
            counts[k] += n
    return rows.frame(), counts


ANNOTATION_COLUMNS = [S.ID] + [S.ann(lang, f) for lang in ("zh", "en")
                               for f in ("tokens", "pos", "span_start", "span_end", "span_label")]


def extract_range(annotations_path: str | Path, alignment_path: str | Path, start: int,
                  stop: int, settings: ExtractionSettings) -> tuple[pl.DataFrame, list[int]]:
    """Worker entry point: extract rows ``[start, stop)`` of the annotation table."""
    ann = (pl.scan_parquet(annotations_path).slice(start, stop - start)
           .select(ANNOTATION_COLUMNS).collect())
    if ann.height == 0:
        return pl.DataFrame(schema=OCCURRENCE_SCHEMA), [0] * len(settings.report_rules)
    lo, hi = ann[S.ID].min(), ann[S.ID].max()
    links = (pl.scan_parquet(alignment_path).filter(pl.col(S.ID).is_between(lo, hi))
             .select(list(ALIGNMENT_SCHEMA)).collect())
    return extract_frame(ann, links, settings)
