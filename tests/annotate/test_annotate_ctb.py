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


# -- repairs of jieba errors (ctb_map.WORD_TAGS, repair_in_context, split_counted_noun) -----
@pytest.mark.parametrize("word,flag,expected", [
    ("可以", "c", "VV"),   # jieba's dictionary flags these wrongly for every context
    ("总是", "c", "AD"),
    ("不是", "c", "VC"),
    ("以为", "c", "VV"),
    ("您", "zg", "PN"),
    ("很", "zg", "AD"),
    ("一起", "m", "AD"),
    ("无法", "n", "AD"),
    ("在家", "r", "VV"),
])
def test_word_list_fixes(word, flag, expected):
    assert base_tag(word, flag) == expected


@pytest.mark.parametrize("tokens,flags,expected", [
    # degree adverb + "noun" is a predicate adjective (美丽/ns from jieba's dictionary)
    (["她", "很", "美丽"], ["r", "zg", "ns"], ["PN", "AD", "VA"]),
    # a distinguishing word (b) not before a noun is predicative
    (["汤姆", "高兴", "。"], ["nr", "b", "x"], ["NR", "VA", "PU"]),
    (["大型", "机场"], ["b", "n"], ["JJ", "NN"]),
    # an adjectival noun as the predicate after a nominal; as an object it stays NN
    (["汤姆", "安全", "。"], ["nr", "an", "x"], ["NR", "VA", "PU"]),
    (["注意", "安全", "。"], ["v", "an", "x"], ["VV", "NN", "PU"]),
    # a "classifier" before an aspect marker is a verb (种/m 了)
    (["老人", "种", "了", "树"], ["n", "m", "ul", "n"], ["NN", "VV", "AS", "NN"]),
    # a "verb" right after a classifier of things, before the clause end, is a noun
    (["一", "个", "警察", "。"], ["m", "q", "v", "x"], ["CD", "M", "NN", "PU"]),
    (["一", "天", "会", "来"], ["m", "q", "v", "v"], ["CD", "M", "VV", "VV"]),
    # 等: ETC in a list or before a noun, else the verb "wait"
    (["我", "会", "等", "。"], ["r", "v", "u", "x"], ["PN", "VV", "VV", "PU"]),
    (["苹果", "、", "香蕉", "等", "。"], ["n", "x", "n", "u", "x"], ["NN", "PU", "NN", "ETC", "PU"]),
    (["北京", "等", "城市"], ["ns", "u", "n"], ["NR", "ETC", "NN"]),
    (["这儿", "等", "一会儿"], ["r", "u", "m"], ["PN", "VV", "CD"]),
    # 还是: "or" between nominals, else the adverb "still"
    (["茶", "还是", "咖啡"], ["n", "c", "n"], ["NN", "CC", "NN"]),
    (["我", "还是", "学生"], ["r", "c", "n"], ["PN", "AD", "NN"]),
    (["你", "还是", "我"], ["r", "c", "r"], ["PN", "CC", "PN"]),
    # 该: modal after a subject, determiner before a noun
    (["我们", "该", "走", "了"], ["r", "r", "v", "ul"], ["PN", "VV", "VV", "AS"]),
    (["该", "公司"], ["r", "n"], ["DT", "NN"]),
    # 什么 before a noun is a determiner, else a pronoun
    (["什么", "时候"], ["r", "n"], ["DT", "NN"]),
    (["你", "要", "什么"], ["r", "v", "r"], ["PN", "VV", "PN"]),
    # 一起: the adverb "together", but "one (accident)" before a noun
    (["我们", "一起", "去"], ["r", "m", "v"], ["PN", "AD", "VV"]),
    (["一起", "交通事故"], ["m", "n"], ["CD", "NN"]),
])
def test_repair_rules(tokens, flags, expected):
    assert tag_tokens(tokens, flags) == expected


@pytest.mark.parametrize("pairs,expected", [
    ([("一棵树", "ns")], [("一", "m"), ("棵", "q"), ("树", "n")]),      # jieba: a place name
    ([("这", "r"), ("本书", "r")], [("这", "r"), ("本", "q"), ("书", "n")]),
    ([("这辆", "mq")], [("这", "r"), ("辆", "q")]),
    ([("这里", "r")], [("这里", "r")]),                   # a pronoun, not 这 + 里 (a mile)
    ([("该", "r"), ("步行", "v")], [("该", "r"), ("步行", "v")]),    # not 步 (a pace) + 行
    ([("一点钟", "m")], [("一点钟", "m")]),                # time units never split off
    ([("一次性", "b")], [("一次性", "b")]),
])
def test_resegment_glued_counted_nouns(pairs, expected):
    assert resegment(pairs) == expected


# -- CC-CEDICT checks (cppdb.annotate.lexicon), on a hand-made dictionary -------------------
def _lexicon():
    from cppdb.annotate.lexicon import CedictEntry, JiebaLexiconCheck

    common, name = CedictEntry(False, True, False, 0.0), CedictEntry(True, False, False, 0.0)
    verb = CedictEntry(False, True, True, 1.0)
    entries = {"英雄": common, "长大": verb, "汤姆": name, "作弊": verb,
               "信任": CedictEntry(False, True, True, 0.5), "打": verb, "网球": common,
               "颁奖": verb, "典礼": common, "曲": common, "奇": common, "很": common,
               "漂亮": common, "我": common, "会": verb, "北京": name, "大学": common}
    flags = {"打": "v", "网球": "n", "颁奖": "v", "典礼": "n", "曲": "n", "奇": "a",
             "很": "zg", "漂亮": "a", "我": "r", "会": "v", "北京": "ns", "大学": "n"}
    freq = {"打网球": 3, "颁奖典礼": 3, "曲奇": 3, "很漂亮": 3, "我会": 1196, "北京大学": 2053}
    return JiebaLexiconCheck(lambda w: freq.get(w, 100), flags.get, entries)


@pytest.mark.parametrize("word,flag,expected", [
    ("英雄", "ns", "n"),    # lowercase pinyin only: a common word, not a place
    ("长大", "ns", "v"),    # ... whose first gloss is "to grow up"
    ("汤姆", "nr", "nr"),   # capitalised pinyin: a real name stays
    ("作弊", "n", "v"),     # all glosses are verbs
    ("信任", "n", "n"),     # half verb, half noun: jieba's noun stays
    ("未知词", "nr", "nr"),  # not in the dictionary: unchanged
])
def test_lexicon_fix_flag(word, flag, expected):
    assert _lexicon().fix_flag(word, flag) == expected


@pytest.mark.parametrize("word,flag,expected", [
    ("打网球", "n", [("打", "v"), ("网球", "n")]),    # one-character verb + noun: a VP
    ("颁奖典礼", "n", None),                          # two-character verb + noun: a compound
    ("曲奇", "nr", None),                             # single characters: a word of its own
    ("很漂亮", "n", [("很", "zg"), ("漂亮", "a")]),    # degree adverb + adjective
    ("我会", "n", [("我", "r"), ("会", "v")]),         # pronoun + verb, whatever its frequency
    ("北京大学", "nt", None),                          # frequent: a real word
])
def test_lexicon_split(word, flag, expected):
    assert _lexicon().split(word, flag) == expected


@pytest.mark.parametrize("text,expected", [
    ("汤姆爱慕玛丽。", [("汤姆", "NR"), ("爱慕", "VV"), ("玛丽", "NR"), ("。", "PU")]),
    ("我想打网球。", [("我", "PN"), ("想", "VV"), ("打", "VV"), ("网球", "NN"), ("。", "PU")]),
    ("老人种了一棵树。",
     [("老人", "NN"), ("种", "VV"), ("了", "AS"), ("一", "CD"), ("棵", "M"), ("树", "NN"),
      ("。", "PU")]),
    ("这个女人很漂亮。",
     [("这", "DT"), ("个", "M"), ("女人", "NN"), ("很", "AD"), ("漂亮", "VA"), ("。", "PU")]),
])
def test_jieba_with_dictionary_checks(jieba_backend, text, expected):
    (sentence,) = jieba_backend.annotate([text])
    assert list(zip(sentence.tokens, sentence.pos)) == expected


def test_pretokenized_gets_flag_fixes_but_no_splits(jieba_backend):
    (sentence,) = jieba_backend.annotate_pretokenized([["你", "长大", "了", "打网球"]])
    assert sentence.tokens == ("你", "长大", "了", "打网球")
    assert sentence.pos[:3] == ("PN", "VV", "AS")
