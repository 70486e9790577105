"""Phrase alignment (strict / relaxed / tolerance) and pattern slots on hand-built sentences."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from cppdb import schema as S
from cppdb.annotate.types import AnnotatedSentence, Span
from cppdb.errors import ConfigError
from cppdb.extractors.consistency import ConsistencyRule, is_consistent
from cppdb.extractors.occurrences import (OCCURRENCE_SCHEMA, ExtractionSettings, _Rows,
                                          extract_sentence)
from cppdb.extractors.patterns import PatternSettings, patterns_of, sub_pairs
from cppdb.extractors.phrase_pairs import (AlignedPhrase, PhraseSettings, align_phrases,
                                           candidate_spans, phrase_labels)
from cppdb.extractors.settings import BilingualSettings

# The paper's Figure 3: 丹顶鹤 正 在 湿地 觅食 。 / red crowned cranes are feeding in the wetland .
# "cranes" is linked to 丹顶鹤 and, wrongly, to 正 (outside the Chinese phrase).
CRANES_ZH = AnnotatedSentence(("丹顶鹤", "正", "在", "湿地", "觅食", "。"),
                              ("NN", "AD", "P", "NN", "VV", "PU"),
                              (Span(0, 1, "NP"), Span(3, 4, "NP")))
CRANES_EN = AnnotatedSentence(
    tuple("red crowned cranes are feeding in the wetland .".split()),
    ("JJ", "VBN", "NNS", "VBP", "VBG", "IN", "DT", "NN", "."),
    (Span(0, 3, "NP"), Span(6, 8, "NP")))
CRANES_LINKS = [(0, 0), (0, 1), (0, 2), (1, 2), (1, 3), (4, 4), (2, 5), (3, 7), (5, 8)]

STRICT = ConsistencyRule("strict")
RELAXED = ConsistencyRule("relaxed")
RELAXED_TOL1 = ConsistencyRule("relaxed", tolerance=1)


@pytest.mark.parametrize("rule, aligned", [(STRICT, False), (RELAXED, False),
                                           (RELAXED_TOL1, True)])
def test_cranes_example_needs_relaxed_rule_with_tolerance(rule, aligned):
    # 丹顶鹤 ↔ "red crowned cranes": cranes is NNS (a constrained tag) with a stray link to
    # 正, so the POS list alone does not save it; one anchored stray link must be tolerated.
    assert is_consistent((0, 1), (0, 3), CRANES_LINKS, CRANES_ZH.pos, CRANES_EN.pos,
                         rule) is aligned


@pytest.mark.parametrize("rule, aligned", [(STRICT, False), (RELAXED, True),
                                           (RELAXED_TOL1, True)])
def test_unconstrained_word_may_link_outside_in_relaxed_mode(rule, aligned):
    # 湿地 ↔ "the wetland" where "the" (DT, not constrained) also links to 在 outside.
    links = CRANES_LINKS + [(2, 6)]
    assert is_consistent((3, 4), (6, 8), links, CRANES_ZH.pos, CRANES_EN.pos, rule) is aligned


def test_tolerance_does_not_admit_a_word_that_belongs_elsewhere():
    # "feeding" (VBG is not constrained, so use "are" VBP) linked only outside: not anchored.
    zh_pos = ("NN", "VV")
    en_pos = ("NNS", "VBP")
    links = [(0, 0), (1, 1)]
    # zh span 0..1 with en span 0..2: "are" (VBP, constrained) links to 觅食 outside and has
    # no link inside the pair, so even tolerance 5 refuses it.
    assert not is_consistent((0, 1), (0, 2), links, zh_pos, en_pos,
                             ConsistencyRule("relaxed", tolerance=5))
    assert is_consistent((0, 1), (0, 1), links, zh_pos, en_pos, STRICT)


def test_tolerance_counts_stray_links():
    zh_pos, en_pos = ("NN", "AD", "AD"), ("NNS", "VBP", "VBG")
    # cranes (en 0) has two stray links, to zh 1 and zh 2, which also link elsewhere
    links = [(0, 0), (1, 0), (1, 1), (2, 0), (2, 2)]
    assert not is_consistent((0, 1), (0, 1), links, zh_pos, en_pos, RELAXED_TOL1)
    assert is_consistent((0, 1), (0, 1), links, zh_pos, en_pos,
                         ConsistencyRule("relaxed", tolerance=2))


def test_tolerance_does_not_admit_an_incomplete_translation():
    # 老人 ↔ "old": the stray link goes to "man", which is linked to nothing else, so the
    # English phrase leaves out part of the translation
    zh_pos, en_pos = ("DT", "NN"), ("DT", "JJ", "NN")
    links = [(0, 0), (1, 1), (1, 2)]
    tolerant = ConsistencyRule("relaxed", tolerance=3)
    assert not is_consistent((1, 2), (1, 2), links, zh_pos, en_pos, tolerant)
    assert is_consistent((1, 2), (1, 3), links, zh_pos, en_pos, tolerant)
    assert is_consistent((1, 2), (1, 3), links, zh_pos, en_pos, STRICT)


def test_no_link_no_alignment():
    assert not is_consistent((0, 1), (0, 1), [], ("NN",), ("NN",), RELAXED_TOL1)


@pytest.mark.parametrize("mode, tolerance", [("loose", 0), ("strict", -1)])
def test_bad_rule_settings_are_config_errors(mode, tolerance):
    with pytest.raises(ConfigError):
        ConsistencyRule(mode, tolerance)


def test_candidate_spans_prefer_phrase_label_and_respect_lists_and_length():
    sent = AnnotatedSentence(("那", "位", "老人", "在", "院子", "里"),
                             ("DT", "M", "NN", "P", "NN", "LC"),
                             (Span(0, 3, "NP"), Span(0, 2, "DP"), Span(2, 3, "NN"),
                              Span(2, 3, "NP"), Span(4, 6, "LCP"), Span(4, 5, "NN")))
    spans = candidate_spans(sent, frozenset({"NP", "NN"}), max_len=12)
    assert [(s.start, s.end, s.label) for s in spans] == [(0, 3, "NP"), (2, 3, "NP"),
                                                          (4, 5, "NN")]
    assert [(s.start, s.end) for s in candidate_spans(sent, frozenset({"NP"}), 2)] == [(2, 3)]


def test_align_phrases_on_cranes_sentence_per_mode():
    links = np.array(CRANES_LINKS)
    settings = PhraseSettings()

    def found(rule):
        return {(" ".join(CRANES_ZH.tokens[p.zh.start:p.zh.end]),
                 " ".join(CRANES_EN.tokens[p.en.start:p.en.end]))
                for p in align_phrases(CRANES_ZH, CRANES_EN, links, rule, settings)}

    assert ("丹顶鹤", "red crowned cranes") not in found(STRICT)
    assert ("丹顶鹤", "red crowned cranes") in found(RELAXED_TOL1)
    assert ("湿地", "the wetland") in found(STRICT)


# -- patterns ---------------------------------------------------------------------------------
# 张三 的 朋友 ↔ friend of Zhangsan
ZH3 = AnnotatedSentence(("张三", "的", "朋友"), ("NR", "DEG", "NN"),
                        (Span(0, 3, "NP"), Span(0, 1, "NP"), Span(2, 3, "NP")))
EN3 = AnnotatedSentence(("friend", "of", "Zhangsan"), ("NN", "IN", "NNP"),
                        (Span(0, 3, "NP"), Span(0, 1, "NP"), Span(2, 3, "NP")))
LINKS3 = np.array([(0, 2), (1, 1), (2, 0)])


def _patterns(zh, en, links, settings=PatternSettings()):
    aligned = align_phrases(zh, en, links, STRICT, PhraseSettings())
    outer = next(p for p in aligned if len(p.zh) == len(zh.tokens))
    return {(" ".join(p.zh_tokens), " ".join(p.en_tokens), p.swapped, p.slot_signature, p.links)
            for p in patterns_of(outer, aligned, zh, en, settings)}


def test_one_and_two_slot_patterns_are_co_indexed():
    got = _patterns(ZH3, EN3, LINKS3)
    assert got == {
        ("[NP1] 的 朋友", "friend of [NP1]", False, ("NP",), ((0, 2), (1, 1), (2, 0))),
        ("张三 的 [NP1]", "[NP1] of Zhangsan", False, ("NP",), ((0, 2), (1, 1), (2, 0))),
        # Chinese slots numbered in Chinese order, English ones in English order: 张三 is
        # zh slot 1 and en slot 2, hence swapped; the signature lists zh labels in en order
        ("[NP1] 的 [NP2]", "[NP1] of [NP2]", True, ("NP", "NP"), ((0, 2), (1, 1), (2, 0))),
    }


def test_adjacent_source_slots_are_forbidden_and_terminals_required():
    zh = AnnotatedSentence(("中国", "经济", "增长"), ("NR", "NN", "NN"),
                           (Span(0, 3, "NP"), Span(0, 1, "NP"), Span(1, 2, "NP")))
    en = AnnotatedSentence(("growth", "of", "China", "economy"), ("NN", "IN", "NNP", "NN"),
                           (Span(0, 4, "NP"), Span(2, 3, "NP"), Span(3, 4, "NP")))
    links = np.array([(0, 2), (1, 3), (2, 0), (2, 1)])
    got = {g[0] for g in _patterns(zh, en, links)}
    assert "[NP1] [NP2] 增长" not in got           # 中国 and 经济 are adjacent in Chinese
    assert got == {"[NP1] 经济 增长", "中国 [NP1] 增长"}
    allowed = {g[0] for g in _patterns(zh, en, links, PatternSettings(adjacent_slots="allow"))}
    assert "[NP1] [NP2] 增长" in allowed


def test_at_most_two_slots():
    zh = AnnotatedSentence(("甲", "和", "乙", "和", "丙"), ("NR", "CC", "NR", "CC", "NR"),
                           (Span(0, 5, "NP"),))
    en = AnnotatedSentence(("A", "and", "B", "and", "C"), ("NNP", "CC", "NNP", "CC", "NNP"),
                           (Span(0, 5, "NP"),))
    links = np.array([(i, i) for i in range(5)])
    got = _patterns(zh, en, links)
    assert max(g[0].count("[") for g in got) == 2
    assert "[NR1] 和 [NR2] 和 丙" in {g[0] for g in got}
    assert len(got) == 3 + 3                     # three 1-slot + three 2-slot patterns


def test_pattern_needs_a_terminal_on_both_sides():
    # the only sub-pair covers all English words but 的 → no pattern keeps an English terminal
    zh = AnnotatedSentence(("他", "的"), ("PN", "DEG"), (Span(0, 2, "DNP"), Span(0, 1, "NP")))
    en = AnnotatedSentence(("his",), ("PRP$",), (Span(0, 1, "NP"),))
    aligned = [AlignedPhrase(Span(0, 2, "DNP"), Span(0, 1, "NP"), ((0, 0),)),
               AlignedPhrase(Span(0, 1, "NP"), Span(0, 1, "NP"), ((0, 0),))]
    assert list(patterns_of(aligned[0], aligned, zh, en, PatternSettings())) == []


def test_rows_keep_each_rows_links_apart():
    """The flat link list is cut back into one list per row, empty rows included."""
    assert _Rows().frame().schema == pl.Schema(OCCURRENCE_SCHEMA)
    rows = _Rows()
    outer = AlignedPhrase(Span(0, 2, "NP"), Span(0, 2, "NP"), ())
    for sid, links in enumerate([[(0, 1), (1, 0)], [], [(5, 3)], [(2, 2)]]):
        rows.add(sid, "phrase", outer, "NP", "NP", ["a"], ["NN"], ["b"], "", False, links)
    frame = rows.frame()
    assert frame.schema == pl.Schema(OCCURRENCE_SCHEMA)
    assert [[divmod(c, S.LINK_BASE) for c in codes] for codes in frame["align"]] == [
        [(0, 1), (1, 0)], [], [(5, 3)], [(2, 2)]]
    assert frame["id"].to_list() == [0, 1, 2, 3]


def test_extract_sentence_rows_have_relative_alignment():
    rows = _Rows()
    settings = ExtractionSettings.of(BilingualSettings())
    extract_sentence(rows, 7, ZH3, EN3, LINKS3, settings)
    frame = rows.frame()
    phrase = frame.filter(kind="phrase", zh="张三 的 朋友").row(0, named=True)
    assert phrase["en"] == "friend of Zhangsan"
    assert [divmod(code, S.LINK_BASE) for code in phrase["align"]] == [(0, 2), (1, 1), (2, 0)]
    assert phrase["id"] == 7 and phrase["lhs"] == "NP"
    pattern = frame.filter(kind="pattern", zh="[NP1] 的 [NP2]").row(0, named=True)
    assert pattern["en"] == "[NP1] of [NP2]" and pattern["swapped"]
    assert pattern["slot_sig"] == "NP|NP" and pattern["zh_pos"] == " DEG "


# 我 知道 他 的 名字 ↔ I know his name: the verb alone is a phrase, never a slot
ZH_KNOW = AnnotatedSentence(("我", "知道", "他", "的", "名字"),
                            ("PN", "VV", "PN", "DEG", "NN"),
                            (Span(0, 1, "NP"), Span(1, 5, "VP"), Span(2, 5, "NP"),
                             Span(0, 5, "IP")))
EN_KNOW = AnnotatedSentence(("I", "know", "his", "name"), ("PRP", "VBP", "PRP$", "NN"),
                            (Span(0, 1, "NP"), Span(1, 4, "VP"), Span(2, 4, "NP"),
                             Span(0, 4, "S")))
LINKS_KNOW = np.array([(0, 0), (1, 1), (2, 2), (4, 3)])


def test_a_single_verb_is_a_phrase_that_aligns_only_with_a_verb():
    aligned = {(" ".join(ZH_KNOW.tokens[p.zh.start:p.zh.end]), p.zh.label,
                " ".join(EN_KNOW.tokens[p.en.start:p.en.end]), p.en.label)
               for p in align_phrases(ZH_KNOW, EN_KNOW, LINKS_KNOW, STRICT, PhraseSettings())}
    assert ("知道", "VV", "know", "VBP") in aligned
    assert ("知道 他 的 名字", "VP", "know his name", "VP") in aligned
    assert not any(zl == "VP" and el == "VBP" or zl == "VV" and el == "VP"
                   for _, zl, _, el in aligned)
    # the paper's nominal lists keep no verb
    zh, en = phrase_labels("paper", [], [])
    nominal = align_phrases(ZH_KNOW, EN_KNOW, LINKS_KNOW, STRICT, PhraseSettings(zh, en, 12))
    assert not any(p.zh.label == "VV" or p.en.label == "VBP" for p in nominal)


def test_a_single_verb_is_never_a_pattern_slot():
    aligned = align_phrases(ZH_KNOW, EN_KNOW, LINKS_KNOW, STRICT, PhraseSettings())
    outer = next(p for p in aligned if p.zh.label == "IP")
    got = {" ".join(p.zh_tokens)
           for p in patterns_of(outer, aligned, ZH_KNOW, EN_KNOW, PatternSettings())}
    assert "[PN1] 知道 [NP2]" in got or "[NP1] 知道 [NP2]" in got
    assert not any("[VV" in g for g in got)
    assert all(q.zh.label != "VV" and q.en.label != "VBP" for q in sub_pairs(outer, aligned))
