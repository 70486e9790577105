"""Abbreviations and glossed paraphrases learned from CC-CEDICT, and the alignment methods that
use them, on hand-built jieba-style token sequences."""
from __future__ import annotations

import pytest

from cppdb.annotate.ud import TaggedText
from cppdb.extractors.compression.keywords import (AlignSettings, abbreviation_links,
                                                   align_batch, gloss_links)
from cppdb.extractors.compression.lexicon import cedict_lexicon, normalise_gloss

CONTENT = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV"})
NOUNS = frozenset({"NOUN", "PROPN"})


def tagged(spec: str) -> TaggedText:
    pairs = [item.split("/") for item in spec.split()]
    return TaggedText(tuple(w for w, _ in pairs), tuple(u for _, u in pairs))


@pytest.mark.parametrize("short, long", [
    ("京", "北京"), ("沪", "上海"), ("粤", "广东"), ("华", "中国"), ("交大", "交通大学"),
    ("北大", "北京大学"), ("西", "西班牙"), ("俄", "俄罗斯"), ("日", "日本"), ("美", "美国"),
    ("甬", "宁波"), ("杭", "杭州")])
def test_long_forms_come_from_the_dictionary(short, long):
    assert long in cedict_lexicon().expansions(short)


@pytest.mark.parametrize("a, b, grade", [
    ("逝世", "去世", 2), ("抓获", "逮捕", 2), ("上涨", "上升", 2),     # a shared gloss
    ("夺冠", "冠军", 1), ("签约", "签署", 1),                           # character + gloss stem
    ("市民", "市政府", 0),       # shares 市 and "city", but "city" glosses thousands of words
    ("首相", "总统", 0),
    ("今日", "今天", 2),         # one-word gloss "today", and a shared character
    ("局势", "国家", 0)])        # one-word gloss "state" without a shared character: ambiguous
def test_same_meaning_grades(a, b, grade):
    assert cedict_lexicon().same_meaning(a, b) == grade


def test_gloss_normalisation_drops_notes_and_parentheses():
    assert normalise_gloss("to hold (a meeting, ceremony etc)") == "to hold"
    assert normalise_gloss("CL:個|个[ge4]") is None
    assert normalise_gloss("fig. to win a championship") == "to win a championship"


def test_a_word_of_name_abbreviations_aligns_to_each_long_form():
    headline = tagged("中俄/PROPN 海军/NOUN 举行/VERB 演习/NOUN")
    sentence = tagged("中国/PROPN 和/CCONJ 俄罗斯/PROPN 两国/NOUN 海军/NOUN 举行/VERB 演习/NOUN")
    links = abbreviation_links(headline, sentence, {1, 2, 3}, CONTENT, NOUNS, cedict_lexicon())
    assert [(l.h_start, sentence.tokens[l.s_start]) for l in links] == [(0, "中国"), (0, "俄罗斯")]


def test_a_word_the_dictionary_lacks_aligns_piece_by_piece():
    # 抵京: 抵 glossed like 抵达 ("to arrive"), 京 a short form of 北京
    headline = tagged("首相/NOUN 抵京/VERB")
    sentence = tagged("首相/NOUN 抵达/VERB 北京/PROPN")
    links = abbreviation_links(headline, sentence, {0}, CONTENT, NOUNS, cedict_lexicon())
    assert [l.matched for l in links] == [("抵", "抵达"), ("京", "北京")]


def test_a_half_explained_word_is_left_to_the_later_methods():
    headline = tagged("留守人员/NOUN 撤离/VERB")
    sentence = tagged("剩余/VERB 的/PART 工作人员/NOUN 撤离/VERB")
    assert abbreviation_links(headline, sentence, {1}, CONTENT, NOUNS, cedict_lexicon()) == []


def test_a_dictionary_word_is_not_split_into_characters():
    # 中学 is a word: its 中 must not align to 中国 (nor 学 to 学校)
    headline = tagged("中学/NOUN 开学/VERB")
    sentence = tagged("中国/PROPN 的/PART 学校/NOUN 开学/VERB")
    assert abbreviation_links(headline, sentence, {1}, CONTENT, NOUNS, cedict_lexicon()) == []


def test_gloss_links_paraphrased_verbs_and_prefers_the_longer_word_on_a_tie():
    headline = tagged("警方/NOUN 抓获/VERB 新政/NOUN")
    sentence = tagged("公安局/NOUN 逮捕/VERB 新/ADJ 政策/NOUN")
    links = gloss_links(headline, sentence, {0}, CONTENT, cedict_lexicon())
    assert [(headline.tokens[l.h_start], sentence.tokens[l.s_start]) for l in links] == [
        ("抓获", "逮捕"), ("新政", "政策")]


def test_the_default_cascade_aligns_the_demo_headline_words():
    settings = AlignSettings(methods=("word", "abbrev", "gloss"), content_upos=CONTENT,
                             abbrev_upos=NOUNS)
    headline = tagged("著名/ADJ 作家/NOUN 李建华/PROPN 逝世/VERB")
    sentence = tagged("著名/ADJ 作家/NOUN 李建华/PROPN 昨日/NOUN 去世/VERB")
    [links] = align_batch([headline], [sentence], settings)
    assert {(l.method, sentence.tokens[l.s_start]) for l in links} >= {("gloss", "去世")}
