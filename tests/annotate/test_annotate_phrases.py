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


# One case per error class the v2 grammar fixes (docs/annotation.md, "Measured"): input
# tokens/tags -> every NP/QP/DNP/ADJP/DP/CP/LCP/CLP span expected.
ZH_ERROR_CASES = [
    # a pronoun is its own NP: no "我身体" (topic + subject), no "我什么"
    ("我/PN 身体/NN 很/AD 好/VA", {("我", "NP"), ("身体", "NP")}),
    ("我/PN 什么/PN 都/AD 没/AD 看见/VV", {("我", "NP"), ("什么", "NP")}),
    ("晚饭/NN 我们/PN 吃/VV 什么/PN", {("晚饭", "NP"), ("我们", "NP"), ("什么", "NP")}),
    ("给/VV 我们/PN 任何/DT 牛奶/NN",          # double object, not NP[我们任何牛奶]
     {("我们", "NP"), ("任何牛奶", "NP"), ("任何", "DP"), ("牛奶", "NP")}),
    # ... except a personal pronoun + relational noun, CTB (NP (NP (PN 我)) (NP (NN 妈妈)))
    ("我/PN 妈妈/NN 很/AD 忙/VA", {("我妈妈", "NP"), ("我", "NP"), ("妈妈", "NP")}),
    # coordination of pronouns is still an NP
    ("我/PN 和/CC 你/PN", {("我和你", "NP"), ("我", "NP"), ("你", "NP")}),
    # time words: an NP of NT words only, never glued to a pronoun or a noun
    ("明天/NT 晚上/NT 我们/PN 有/VE 一/CD 个/M 派对/NN",
     {("明天晚上", "NP"), ("我们", "NP"), ("一个派对", "NP"), ("一个", "QP"), ("派对", "NP")}),
    ("她/PN 从前/NT 会/VV 去/VV", {("她", "NP"), ("从前", "NP")}),
    ("汤姆/NR 当时/NT 在/P 哭/VV", {("汤姆", "NP"), ("当时", "NP")}),
    ("现在/NT 他们/PN 走/VV", {("现在", "NP"), ("他们", "NP")}),
    # ... but a determiner / number may count them: (NP (DP 每 天) (NP 早上))
    ("每/DT 天/M 早上/NT",
     {("每天早上", "NP"), ("每天", "DP"), ("天", "CLP"), ("早上", "NP")}),
    # a verb ends the NP (信任 is VV after the lexicon fix): no NP[他们信任汤姆]
    ("他们/PN 信任/VV 汤姆/NR", {("他们", "NP"), ("汤姆", "NP")}),
    # an event classifier's QP counts no noun or pronoun: 亲 你 一 下, 腾 一 下 地方
    ("亲/VV 你/PN 一/CD 下/M", {("你", "NP"), ("一下", "QP")}),
    ("腾/VV 一/CD 下/M 地方/NN", {("一下", "QP"), ("地方", "NP")}),
    # DNP only before its noun head: headless 我的 / 谁的 is no DNP
    ("拿/VV 我/PN 的/DEG 。/PU", {("我", "NP")}),
    ("这/DT 辆/M 自行车/NN 是/VC 谁/PN 的/DEG",
     {("这辆自行车", "NP"), ("这辆", "DP"), ("辆", "CLP"), ("自行车", "NP"), ("谁", "NP")}),
    ("我/PN 的/DEG 一/CD 个/M 朋友/NN",        # the head may carry its own modifiers
     {("我的一个朋友", "NP"), ("我的", "DNP"), ("我", "NP"), ("一个朋友", "NP"),
      ("一个", "QP"), ("朋友", "NP")}),
    # VA + 的 is an ADJP/CP only as a noun modifier; a lone JJ is no ADJP
    ("人生/NN 是/VC 有趣/VA 的/DEC 。/PU", {("人生", "NP")}),
    ("汤姆/NR 高兴/JJ 。/PU", {("汤姆", "NP")}),
    # 什么 as a determiner (ctb_map makes it DT before a noun): NP "what time"
    ("什么/DT 时候/NN", {("什么时候", "NP"), ("什么", "DP"), ("时候", "NP")}),
]


@pytest.mark.parametrize("tagged,expected", ZH_ERROR_CASES)
def test_chinese_grammar_error_classes(tagged, expected):
    tokens, pos = zip(*(item.split("/") for item in tagged.split()))
    spans = ChinesePhraseGrammar().spans(tokens, pos)
    assert _phrases(tokens, spans) == expected
    # an NP contains a verb only inside a relative clause (CP) of its own
    clauses = [s for s in spans if s.label == "CP"]
    for span in spans:
        if span.label == "NP":
            for i in range(span.start, span.end):
                if pos[i] in ("VV", "VC", "VE"):
                    assert any(span.start <= c.start <= i < c.end <= span.end for c in clauses)


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
      ("a car accident", "NP"), ("The red crowned cranes died in a car accident", "S"),
      ("died in a car accident", "VP")}),
    ("I ate three very big apples".split(),
     "PRP VBD CD RB JJ NNS".split(),
     [1, -1, 5, 4, 5, 1],
     "nsubj ROOT nummod advmod amod dobj".split(),
     {("I", "NP"), ("three very big apples", "NP"), ("very big", "ADJP"),
      ("I ate three very big apples", "S"), ("ate three very big apples", "VP")}),
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
