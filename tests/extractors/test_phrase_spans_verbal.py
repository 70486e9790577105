"""Verb phrases, clauses and constituent repairs of the phrase grammars (issue 11, items 1–2).

Each row: tagged tokens → spans that must exist, spans that must not exist.
"""
from __future__ import annotations

import pytest

from cppdb.annotate.ctb_map import resegment
from cppdb.annotate.phrases import ChinesePhraseGrammar, EnglishDependencyPhrases
from cppdb.errors import ConfigError
from cppdb.extractors.phrase_pairs import (LABEL_SETS, PAPER_EN_LABELS, PAPER_ZH_LABELS,
                                           phrase_labels)


def _zh(tagged: str) -> set[tuple[str, str]]:
    tokens, pos = zip(*(item.split("/") for item in tagged.split()))
    return {("".join(tokens[s.start:s.end]), s.label)
            for s in ChinesePhraseGrammar().spans(tokens, pos) if s.end - s.start > 1}


ZH_VERBAL = [
    # the paper's Fig. 5 pair: a verb + post-verbal PP, and a preverbal PP + verb
    ("他/PN 死/VV 于/P 一/CD 场/M 车祸/NN 。/PU",
     {("死于一场车祸", "VP"), ("于一场车祸", "PP"), ("他死于一场车祸", "IP")}, set()),
    ("他/PN 在/P 一/CD 场/M 车祸/NN 中/LC 丧生/VV 。/PU",
     {("在一场车祸中丧生", "VP"), ("在一场车祸中", "PP"), ("他在一场车祸中丧生", "IP")}, set()),
    ("她/PN 出生/VV 于/P 上海/NR 。/PU",
     {("出生于上海", "VP"), ("她出生于上海", "IP")}, set()),
    # aspect marker and object; an adverb joins the VP
    ("他/PN 不/AD 喜欢/VV 苹果/NN", {("喜欢苹果", "VP"), ("不喜欢苹果", "VP"),
                                  ("他不喜欢苹果", "IP")}, set()),
    ("我/PN 吃/VV 了/AS 三/CD 个/M 苹果/NN", {("吃了三个苹果", "VP")}, set()),
    # relative clause: 的 after a verb's object closes a CP, not a DNP
    ("我/PN 画/VV 这/DT 幅画/NN 的/DEG 时候/NN",
     {("画这幅画", "VP"), ("画这幅画的", "CP"), ("画这幅画的时候", "NP")},
     {("这幅画的", "DNP"), ("这幅画的时候", "NP")}),
    # ... but after a preposition the NP + 的 is still a DNP
    ("在/P 山东/NR 的/DEG 小镇/NN 上/LC 出生/VV",
     {("山东的", "DNP"), ("山东的小镇上", "LCP"), ("在山东的小镇上出生", "VP")}, set()),
    # 是 takes no PP: the PP belongs to the verb after it; no clause 我是
    ("我/PN 是/VC 在/P 北京/NR 出生/VV 的/DEC",
     {("在北京出生", "VP")}, {("是在北京", "VP"), ("我是", "IP")}),
    # an IP only where the clause ends
    ("我/PN 觉得/VV 他/PN 很/AD 好/VA", {("很好", "VP")}, {("我觉得他", "IP")}),
    # numeral-classifier before a demonstrative: two phrases, no NP over both
    ("吃/VV 一/CD 次/M 这/DT 个/M 药/NN", {("这个药", "NP"), ("一次", "QP")},
     {("一次这个药", "NP")}),
    # a bare verb is no multi-word phrase of its own
    ("他/PN 来/VV 了/SP", set(), {("来了", "VP")}),
]


@pytest.mark.parametrize("tagged,present,absent", ZH_VERBAL)
def test_chinese_verbal_layer(tagged, present, absent):
    spans = _zh(tagged)
    assert present <= spans
    assert not absent & spans


ZH_REPAIRS = [
    # a pronoun + 的 after a verb is a possessor (DNP), not a relative clause: the VP takes the
    # whole NP, and no NP starts with the verb
    ("清扫/VV 你/PN 的/DEG 房间/NN 。/PU",
     {("清扫你的房间", "VP"), ("你的", "DNP"), ("你的房间", "NP")},
     {("清扫你", "VP"), ("清扫你的房间", "NP")}),
    # a bare pronoun/name followed by a clause (觉得 | 我 很 聪明) or a second object
    # (教 我们 | 法语) is no object of the verb alone
    ("我/PN 觉得/VV 我/PN 很/AD 聪明/VA 。/PU", {("很聪明", "VP")}, {("觉得我", "VP")}),
    ("她/PN 教/VV 我们/PN 法语/NR 。/PU", set(), {("教我们", "VP"), ("她教我们", "IP")}),
    ("我/PN 以为/VV 汤姆/NR 在/P 睡觉/VV 。/PU", set(), {("以为汤姆", "VP")}),
    # ... but where the clause ends there, the pronoun is the object (must not fire)
    ("我/PN 受不了/VV 他/PN 。/PU", {("受不了他", "VP"), ("我受不了他", "IP")}, set()),
    # an aspect marker with more words after it: the verb's complement is unbuilt
    ("我/PN 忘/VV 了/AS 问/VV 汤姆/NR 。/PU", {("问汤姆", "VP")}, {("忘了", "VP")}),
    ("汤姆/NR 最终/AD 做/VV 了/AS 点/M 正确/AD 的/DEC 事/NN 。/PU", set(),
     {("做了", "VP"), ("最终做", "VP"), ("最终做了", "VP")}),
    ("疼痛/NN 消失/VV 了/AS 。/PU", {("消失了", "VP"), ("疼痛消失了", "IP")}, set()),
    # a bare QP object with more words after it; an event QP at the clause end is fine
    ("给/P 我/PN 来/VV 一/CD 份/M 一样/VA 的/DEC 。/PU", set(),
     {("来一份", "VP"), ("给我来", "VP"), ("给我来一份", "VP")}),
    ("再/AD 试/VV 一/CD 次/M 。/PU", {("试一次", "VP"), ("再试一次", "VP")}, set()),
    # an adverb waits for a modal verb's complement (已经 会 | 走路)
    ("他/PN 已经/AD 会/VV 走路/VV 了/AS 。/PU", {("走路了", "VP")}, {("已经会", "VP")}),
    ("她/PN 已经/AD 睡下/VV 了/AS 。/PU", {("已经睡下了", "VP"), ("她已经睡下了", "IP")}, set()),
    # no IP whose subject stands outside it (我 | 刚才 在家)
    ("我/PN 刚才/NT 在家/VV 。/PU", set(), {("刚才在家", "IP")}),
    ("汤姆/NR 现在/NT 就/AD 需要/VV 钱/NN 。/PU", {("就需要钱", "VP")},
     {("现在就需要钱", "IP")}),
    ("今天/NT 相当/AD 暖和/VA 。/PU", {("今天相当暖和", "IP")}, set()),
]


@pytest.mark.parametrize("tagged,present,absent", ZH_REPAIRS)
def test_chinese_constituent_repairs(tagged, present, absent):
    spans = _zh(tagged)
    assert present <= spans, present - spans
    assert not absent & spans


@pytest.mark.parametrize("pairs,expected", [
    ([("她", "r"), ("出", "v"), ("生于", "v"), ("上海", "ns")],
     [("她", "r"), ("出生", "v"), ("于", "p"), ("上海", "ns")]),
    ([("他", "r"), ("生于", "v"), ("上海", "ns")],          # 生于 alone stays one word
     [("他", "r"), ("生于", "v"), ("上海", "ns")]),
])
def test_recut(pairs, expected):
    assert resegment(pairs) == expected


def _en(words: str, tags: str, heads: list[int], deprels: str) -> set[tuple[str, str]]:
    tokens = words.split()
    spans = EnglishDependencyPhrases().spans(tags.split(), heads, deprels.split())
    return {(" ".join(tokens[s.start:s.end]), s.label) for s in spans if s.end - s.start > 1}


EN_PROJECTIONS = [
    # the VP of a clause is its subtree without the subject; the period is in neither
    ("She was born in Shanghai .", "PRP VBD VBN IN NNP .", [2, 2, -1, 2, 3, 2],
     "nsubjpass auxpass ROOT prep pobj punct",
     {("She was born in Shanghai", "S"), ("was born in Shanghai", "VP")},
     {("She was born in Shanghai .", "S")}),
    # base NP: the head with its left dependents, when a PP follows
    ("The red crowned cranes in the park are beautiful .",
     "DT JJ VBN NNS IN DT NN VBP JJ .", [3, 2, 3, 7, 3, 6, 4, -1, 7, 7],
     "det advmod amod nsubj prep det pobj ROOT acomp punct",
     {("The red crowned cranes", "NP"), ("The red crowned cranes in the park", "NP"),
      ("are beautiful", "VP")}, set()),
    # no base NP when nothing follows the head (the subtree is the NP already)
    ("I saw the old man", "PRP VBD DT JJ NN", [1, -1, 4, 4, 1], "nsubj ROOT det amod dobj",
     {("the old man", "NP"), ("saw the old man", "VP")}, {("the old", "NP")}),
]


@pytest.mark.parametrize("words,tags,heads,deprels,present,absent", EN_PROJECTIONS)
def test_english_projections(words, tags, heads, deprels, present, absent):
    spans = _en(words, tags, heads, deprels)
    assert present <= spans
    assert not absent & spans


def test_label_sets():
    zh, en = phrase_labels("verbal", [], [])
    assert {"VP", "IP", "VV"} <= zh and {"VP", "S", "VBD"} <= en and "DNP" not in zh
    assert phrase_labels("paper", [], []) == (frozenset(PAPER_ZH_LABELS),
                                               frozenset(PAPER_EN_LABELS))
    assert phrase_labels("custom", ["NP"], ["NP"]) == (frozenset({"NP"}), frozenset({"NP"}))
    with pytest.raises(ConfigError, match="phrase_labels"):
        phrase_labels("nominal", [], [])
    assert set(LABEL_SETS) == {"verbal", "paper"}


@pytest.mark.parametrize("zh_label,en_label,agree", [
    ("VP", "VP", True), ("IP", "S", True), ("VP", "S", True),
    ("NP", "NP", True), ("PN", "PRP", True), ("ADJP", "JJ", True),
    ("VP", "PRP", False),          # 到 他 / "him": an alignment error, not a phrase pair
    ("VP", "NP", False), ("NP", "S", False), ("IP", "NP", False),
    ("VV", "VBD", True),           # a single verb aligns only with a single verb
    ("VV", "VP", False), ("VP", "VBD", False), ("IP", "VBZ", False),
    ("VV", "NN", False), ("NN", "VBZ", False),
])
def test_label_agreement(zh_label, en_label, agree):
    from cppdb.annotate.types import Span
    from cppdb.extractors.phrase_pairs import _label_agreement
    assert bool(_label_agreement([Span(0, 2, zh_label)], [Span(0, 2, en_label)])[0, 0]) is agree
