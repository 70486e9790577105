"""Offline phrase spans: the CTB chunk grammar (zh) and dependency subtrees (en)."""
from __future__ import annotations

import pytest

from cppdb.annotate.phrases import ChinesePhraseGrammar, EnglishDependencyPhrases, sort_spans
from cppdb.annotate.types import AnnotatedSentence, Span


def _phrases(tokens, spans):
    """Multi-token or phrase-labelled spans as (text, label), for readable expectations."""
    return {("".join(tokens[s.start:s.end]), s.label) for s in spans
            if s.label in {"NP", "QP", "DNP", "ADJP", "DP", "CP", "LCP", "CLP"}}


ZH_CASES = [
    # DNP inside NP: (NP (DNP (NP 北京大学) 的) (NP 学生))
    ("北京大学/NR 的/DEG 学生/NN",
     {("北京大学的学生", "NP"), ("北京大学的", "DNP"), ("北京大学", "NP"), ("学生", "NP")}),
    # QP = CD + M; ADJP over an attributive JJ; nested NP over the head noun
    ("三/CD 只/M 小/JJ 猫/NN",
     {("三只小猫", "NP"), ("三只", "QP"), ("小", "ADJP"), ("猫", "NP")}),
    # ordinal QP
    ("第三/OD 次/M 会议/NN", {("第三次会议", "NP"), ("第三次", "QP"), ("会议", "NP")}),
    # left-nested possessives
    ("我/PN 的/DEG 朋友/NN 的/DEG 书/NN",
     {("我的朋友的书", "NP"), ("我的朋友的", "DNP"), ("我的朋友", "NP"), ("我的", "DNP"),
      ("我", "NP"), ("朋友", "NP"), ("书", "NP")}),
    # predicative adjective + 的 modifies a noun: ADJP, CP, NP
    ("很/AD 大/VA 的/DEC 苹果/NN",
     {("很大的苹果", "NP"), ("很大的", "CP"), ("很大", "ADJP"), ("苹果", "NP")}),
    # coordination and DP
    ("这/DT 个/M 人/NN 和/CC 那些/DT 孩子/NN",
     {("这个人和那些孩子", "NP"), ("这个人", "NP"), ("这个", "DP"), ("个", "CLP"),
      ("人", "NP"), ("那些孩子", "NP"), ("那些", "DP"), ("孩子", "NP")}),
    # localizer phrase; verbs and prepositions stay outside NPs
    ("他/PN 在/P 学校/NN 里/LC 学习/VV",
     {("他", "NP"), ("学校里", "LCP"), ("学校", "NP")}),
    # a bare number before a verb is not a QP
    ("三/CD 来/VV", set()),
    # noun compound is one flat NP
    ("中国/NR 人民/NN 银行/NN", {("中国人民银行", "NP")}),
]


@pytest.mark.parametrize("tagged,expected", ZH_CASES)
def test_chinese_grammar_spans(tagged, expected):
    tokens, pos = zip(*(item.split("/") for item in tagged.split()))
    spans = ChinesePhraseGrammar().spans(tokens, pos)
    assert _phrases(tokens, spans) == expected
    # every token also has a single-token span labelled with its POS (word-level labels)
    assert {(s.start, s.label) for s in spans if len(s) == 1} >= set(enumerate(pos))
    assert spans == sort_spans(spans)           # sorted (start, -end, label), no duplicates
    assert len(set(spans)) == len(spans)


def test_grammar_is_deterministic():
    tokens = "我 的 朋友 的 三 本 新 书 和 他 的 笔".split()
    pos = "PN DEG NN DEG CD M JJ NN CC PN DEG NN".split()
    grammar = ChinesePhraseGrammar()
    assert grammar.spans(tokens, pos) == grammar.spans(list(tokens), list(pos))


def test_sort_spans_order():
    spans = [Span(1, 2, "NN"), Span(0, 3, "NP"), Span(0, 1, "PN"), Span(0, 3, "NP"),
             Span(0, 1, "NP")]
    assert sort_spans(spans) == (Span(0, 3, "NP"), Span(0, 1, "NP"), Span(0, 1, "PN"),
                                 Span(1, 2, "NN"))


# English: (tokens, tags, heads, deprels) as spaCy would produce them (0-based, -1 root)
EN_CASES = [
    ("The red crowned cranes died in a car accident .".split(),
     "DT JJ VBN NNS VBD IN DT NN NN .".split(),
     [3, 2, 3, 4, -1, 4, 8, 8, 5, 4],
     "det advmod amod nsubj ROOT prep det compound pobj punct".split(),
     {("The red crowned cranes", "NP"), ("red crowned", "ADJP"), ("in a car accident", "PP"),
      ("a car accident", "NP"), ("The red crowned cranes died in a car accident .", "S")}),
    ("I ate three very big apples".split(),
     "PRP VBD CD RB JJ NNS".split(),
     [1, -1, 5, 4, 5, 1],
     "nsubj ROOT nummod advmod amod dobj".split(),
     {("I", "NP"), ("three very big apples", "NP"), ("very big", "ADJP"),
      ("I ate three very big apples", "S")}),
    ("about 50 people came".split(), "RB CD NNS VBD".split(), [1, 2, 3, -1],
     "advmod nummod nsubj ROOT".split(),
     {("about 50", "QP"), ("about 50 people", "NP"), ("about 50 people came", "S")}),
    ("eat quickly".split(), "VB RB".split(), [-1, 0], "ROOT advmod".split(),
     {("eat quickly", "VP")}),
]


@pytest.mark.parametrize("tokens,tags,heads,deprels,expected", EN_CASES)
def test_english_dependency_spans(tokens, tags, heads, deprels, expected):
    spans = EnglishDependencyPhrases().spans(tags, heads, deprels)
    got = {(" ".join(tokens[s.start:s.end]), s.label) for s in spans if s.label not in tags}
    assert got == expected
    assert {(s.start, s.label) for s in spans if len(s) == 1} >= set(enumerate(tags))


def test_english_non_contiguous_subtree_has_no_span():
    # "a" (0) is attached to "dog" (2) across "barked" (1): non-projective, no NP span
    spans = EnglishDependencyPhrases().spans(["DT", "VBD", "NN"], [2, -1, 1],
                                             ["det", "ROOT", "nsubj"])
    assert Span(0, 3, "NP") not in spans
    assert not any(s.label == "NP" and s.start == 0 for s in spans)


def test_add_spans_keeps_other_fields():
    sentence = AnnotatedSentence(("北京", "大学"), ("NR", "NN"), text="北京大学")
    (out,) = ChinesePhraseGrammar().add_spans([sentence])
    assert out.tokens == sentence.tokens and out.text == "北京大学"
    assert Span(0, 2, "NP") in out.spans


def test_stanza_tree_spans_same_type_as_grammar():
    # a real Stanza Tree object (no model needed): every constituent + preterminals
    from stanza.models.constituency import tree_reader

    from cppdb.annotate.stanza_backend import tree_spans

    (tree,) = tree_reader.read_trees(
        "(ROOT (IP (NP (DNP (NP (NR 北京大学)) (DEG 的)) (NP (NN 学生))) (VP (VC 是) (NP (PN 他)))))")
    spans = tree_spans(tree)
    assert spans == sort_spans(spans)
    assert {(s.start, s.end, s.label) for s in spans} == {
        (0, 5, "IP"), (0, 3, "NP"), (0, 2, "DNP"), (0, 1, "NP"), (0, 1, "NR"), (1, 2, "DEG"),
        (2, 3, "NN"), (2, 3, "NP"), (3, 5, "VP"), (3, 4, "VC"), (4, 5, "NP"), (4, 5, "PN")}
    grammar = ChinesePhraseGrammar().spans(["北京大学", "的", "学生", "是", "他"],
                                           ["NR", "DEG", "NN", "VC", "PN"])
    # the offline grammar finds the same NP/DNP structure as the tree
    wanted = {s for s in spans if s.label in ("NP", "DNP")}
    assert wanted <= set(grammar)
