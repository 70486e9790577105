"""jieba (ICTCLAS) -> CTB tag mapping: table, lexical rules, context rules, re-segmentation."""
from __future__ import annotations

import pytest

from cppdb.annotate.chinese import JiebaChinese
from cppdb.annotate.ctb_map import (CTB_TAGS, ICTCLAS_TO_CTB, base_tag, is_date, resegment,
                                    split_numeral, tag_tokens)


@pytest.mark.parametrize("word,flag,expected", [
    ("北京大学", "nt", "NR"),      # nt is an organisation name, not a time word
    ("中国", "ns", "NR"),
    ("张三", "nr", "NR"),
    ("昨天", "t", "NT"),           # t = time word
    ("学生", "n", "NN"),
    ("发展", "vn", "NN"),
    ("三", "m", "CD"),
    ("2019", "m", "CD"),
    ("3.5%", "m", "CD"),
    ("第三", "m", "OD"),
    ("2019年", "m", "NT"),
    ("个", "q", "M"),
    ("元", "m", "M"),              # jieba flags some classifiers m
    ("他", "r", "PN"),
    ("这", "r", "DT"),
    ("那些", "r", "DT"),
    ("为什么", "r", "AD"),
    ("是", "v", "VC"),
    ("有", "v", "VE"),
    ("没有", "v", "VE"),
    ("学习", "v", "VV"),
    ("美丽", "a", "VA"),
    ("大型", "b", "JJ"),
    ("很", "d", "AD"),
    ("认真", "ad", "AD"),
    ("在", "p", "P"),
    ("把", "p", "BA"),
    ("被", "p", "LB"),
    ("和", "c", "CC"),
    ("如果", "c", "CS"),
    ("但是", "c", "AD"),
    ("了", "ul", "AS"),
    ("着", "uz", "AS"),
    ("过", "ug", "AS"),
    ("地", "uv", "DEV"),
    ("得", "ud", "DER"),
    ("等", "u", "ETC"),
    ("所", "u", "MSP"),
    ("吗", "y", "SP"),
    ("哎呀", "e", "IJ"),
    ("叮当", "o", "ON"),
    ("里", "f", "LC"),
    ("，", "x", "PU"),
    ("%", "x", "PU"),
    ("ABC", "eng", "FW"),
    ("12", "x", "CD"),
])
def test_base_tag(word, flag, expected):
    assert base_tag(word, flag) == expected


def test_table_targets_are_ctb_tags():
    assert set(ICTCLAS_TO_CTB.values()) <= set(CTB_TAGS)


@pytest.mark.parametrize("tokens,flags,expected", [
    # 的 after a nominal is DEG, after a verb / predicative adjective DEC
    (["北京大学", "的", "学生"], ["nt", "uj", "n"], ["NR", "DEG", "NN"]),
    (["我", "买", "的", "书"], ["r", "v", "uj", "n"], ["PN", "VV", "DEC", "NN"]),
    (["很大", "的", "苹果"], ["a", "uj", "n"], ["VA", "DEC", "NN"]),
    # adjective right before a noun is attributive (JJ), else predicative (VA)
    (["新", "机场"], ["a", "n"], ["JJ", "NN"]),
    (["天气", "好"], ["n", "a"], ["NN", "VA"]),
    # 被 directly before the verb is short bei (SB), with an agent long bei (LB)
    (["他", "被", "打", "了"], ["r", "p", "v", "ul"], ["PN", "SB", "VV", "AS"]),
    (["他", "被", "警察", "抓"], ["r", "p", "n", "v"], ["PN", "LB", "NN", "VV"]),
    # 了 after a verb is aspect, sentence-final after a non-verb a particle
    (["吃", "了", "饭"], ["v", "ul", "n"], ["VV", "AS", "NN"]),
    (["三", "年", "前", "了", "。"], ["m", "q", "f", "ul", "x"], ["CD", "M", "LC", "SP", "PU"]),
    (["100", "多"], ["m", "m"], ["CD", "CD"]),
])
def test_context_rules(tokens, flags, expected):
    assert tag_tokens(tokens, flags) == expected


@pytest.mark.parametrize("pairs,expected", [
    ([("一个", "m")], [("一", "m"), ("个", "q")]),
    ([("第三次", "m")], [("第三", "m"), ("次", "q")]),
    ([("这个", "r")], [("这", "r"), ("个", "q")]),
    ([("2019", "m"), ("年", "m")], [("2019年", "t")]),
    ([("1", "m"), ("月", "m")], [("1月", "t")]),
    ([("三", "m"), ("年", "m")], [("三", "m"), ("年", "m")]),   # a duration, not a date
    ([("3.5", "m"), ("%", "x")], [("3.5%", "m")]),
    ([("我", "r"), (" ", "x"), ("你", "r")], [("我", "r"), ("你", "r")]),
    ([("一些", "m")], [("一些", "m")]),                           # lexical CD, not split
])
def test_resegment(pairs, expected):
    assert resegment(pairs) == expected


@pytest.mark.parametrize("token,expected", [
    ("一个", ("一", "个")), ("三只", ("三", "只")), ("第三次", ("第三", "次")),
    ("100公里", ("100", "公里")), ("学生", None), ("三", None),
])
def test_split_numeral(token, expected):
    assert split_numeral(token) == expected


@pytest.mark.parametrize("token,expected", [
    ("2019年", True), ("一九九九年", True), ("3月", True), ("十二月", True), ("5号", True),
    ("三年", False), ("两年", False), ("年", False), ("学年", False),
])
def test_is_date(token, expected):
    assert is_date(token) == expected


@pytest.fixture(scope="module")
def jieba_backend():
    return JiebaChinese()


@pytest.mark.parametrize("text,expected", [
    ("他是北京大学的学生。",
     [("他", "PN"), ("是", "VC"), ("北京大学", "NR"), ("的", "DEG"), ("学生", "NN"), ("。", "PU")]),
    ("我吃了一个苹果",
     [("我", "PN"), ("吃", "VV"), ("了", "AS"), ("一", "CD"), ("个", "M"), ("苹果", "NN")]),
    ("2019年第三次来到中国",
     [("2019年", "NT"), ("第三", "OD"), ("次", "M"), ("来到", "VV"), ("中国", "NR")]),
    ("政府将兴建新机场",
     [("政府", "NN"), ("将", "AD"), ("兴建", "VV"), ("新", "JJ"), ("机场", "NN")]),
    ("ABC报告", [("ABC", "FW"), ("报告", "NN")]),
])
def test_jieba_end_to_end(jieba_backend, text, expected):
    (sentence,) = jieba_backend.annotate([text])
    assert list(zip(sentence.tokens, sentence.pos)) == expected
    assert sentence.text == text


def test_pretokenized_keeps_tokens(jieba_backend):
    tokens = ["北京大学", "的", "学生", "2019年", "第三", "次", "，", "iPhone"]
    (sentence,) = jieba_backend.annotate_pretokenized([tokens])
    assert sentence.tokens == tuple(tokens)
    assert sentence.pos == ("NR", "DEG", "NN", "NT", "OD", "M", "PU", "FW")


@pytest.mark.parametrize("tokens,flags,expected", [
    (["这", "条", "河"], ["r", "n", "n"], ["DT", "M", "NN"]),          # classifier after DT
    (["正在", "调查", "原因"], ["t", "vn", "n"], ["AD", "VV", "NN"]),   # vn used as a verb
    (["合作", "协议"], ["vn", "n"], ["NN", "NN"]),                      # vn as a noun
    (["工作", "了"], ["vn", "ul"], ["VV", "AS"]),
])
def test_more_context_rules(tokens, flags, expected):
    assert tag_tokens(tokens, flags) == expected
