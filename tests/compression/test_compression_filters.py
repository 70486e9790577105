"""Each SPEC §4 filter as a named rule (Zhao et al. 2022, App. A), table-driven."""
from __future__ import annotations

from dataclasses import replace

import pytest

from cppdb.annotate.ud import TaggedText
from cppdb.config import load_config
from cppdb.errors import ConfigError
from cppdb.extractors.compression.filters import (RULES, FilterChain, FilterSettings,
                                                  content_overlap, han_count,
                                                  rule_headline_actor)

SETTINGS = FilterSettings()
GOOD_H, GOOD_S = "西首相抵京访华", "西班牙首相周一抵达北京，开始对中国进行正式访问。"


@pytest.mark.parametrize("rule, headline, sentence, passes", [
    ("simplified", GOOD_H, GOOD_S, True),
    ("simplified", "台北國際書展開幕", "第三十届台北国际书展今天开幕。", False),
    ("simplified", "台北国际书展开幕", "第三十屆台北國際書展今天開幕。", False),
    ("no_latin", GOOD_H, GOOD_S, True),
    ("no_latin", "NBA新赛季今日开幕", "美国职业篮球联赛新赛季今天开幕。", False),
    ("no_latin", "新赛季今日开幕", "美国职业篮球联赛ＮＢＡ新赛季今天开幕。", False),   # full-width
    ("full_stop", GOOD_H, GOOD_S, True),
    ("full_stop", GOOD_H, "他说：“我们明天出发。”", True),        # closing quote ignored
    ("full_stop", GOOD_H, "市长回应了市民最关心的住房问题！", False),
    ("full_stop", GOOD_H, "市博物馆已累计接待游客超过一百万人次", False),
    ("length", GOOD_H, GOOD_S, True),
    ("length", "开幕", GOOD_S, False),                              # H < 5 Chinese characters
    ("length", GOOD_H, "一" * 101 + "。", False),                   # S > 100
    ("headline_shorter", GOOD_H, GOOD_S, True),
    ("headline_shorter", "全国多地持续高温天气令人担忧", "全国多地持续高温。", False),
])
def test_text_rule(rule, headline, sentence, passes):
    detail = RULES[rule].check(headline, sentence, SETTINGS)
    assert (detail is None) is passes, detail


def _tt(pairs: str) -> TaggedText:
    """'word/UPOS word/UPOS' -> TaggedText."""
    items = [p.rsplit("/", 1) for p in pairs.split()]
    return TaggedText(tuple(w for w, _ in items), tuple(u for _, u in items))


H = _tt("西/PROPN 首相/NOUN 访华/VERB")
S = _tt("西班牙/PROPN 首相/NOUN 周一/NOUN 访问/VERB 中国/PROPN 。/PUNCT")


@pytest.mark.parametrize("denominator, aligned, expected", [
    ("headline_content", None, 1 / 3),              # word match: 首相 only
    ("headline_content", frozenset({0, 1}), 2 / 3),  # + 西 aligned by abbreviation
    ("sentence_tokens", None, 1 / 6),               # the paper's literal definition
    ("sentence_content", None, 1 / 5),
])
def test_content_overlap_ratio(denominator, aligned, expected):
    settings = FilterSettings(overlap_denominator=denominator, overlap_source="alignment")
    assert content_overlap(H, S, settings, aligned) == pytest.approx(expected)


def test_content_overlap_rule_threshold_and_alignment_source():
    by_alignment = FilterSettings(min_content_overlap=0.5, overlap_source="alignment",
                                  overlap_denominator="headline_content")
    chain = FilterChain.from_config(["content_overlap"], by_alignment)
    assert chain.check_tagged(H, S, frozenset())[0] == "content_overlap"
    assert chain.check_tagged(H, S, frozenset({0, 1})) is None
    paper = FilterChain.from_config(
        ["content_overlap"], replace(by_alignment, overlap_source="word_match"))
    # word_match ignores the alignment: 1/3 < 0.5 whatever was aligned
    assert paper.check_tagged(H, S, frozenset({0, 1, 2}))[0] == "content_overlap"


def test_chain_reports_first_failing_rule_in_configured_order():
    headline, sentence = "NBA開幕", "NBA新賽季今天開幕"   # fails no_latin, simplified, full_stop
    first = FilterChain.from_config(["no_latin", "simplified", "full_stop"], SETTINGS)
    assert first.check_text(headline, sentence)[0] == "no_latin"
    other = FilterChain.from_config(["full_stop", "no_latin"], SETTINGS)
    assert other.check_text(headline, sentence)[0] == "full_stop"
    assert FilterChain.from_config([], SETTINGS).check_text(headline, sentence) is None


def test_unknown_filter_and_bad_settings_are_config_errors():
    with pytest.raises(ConfigError, match="unknown compression filter.*latinn"):
        FilterChain.from_config(["latinn"], SETTINGS)
    section = load_config().section("compression")
    section["overlap_denominator"] = "tokens"
    with pytest.raises(ConfigError, match="overlap_denominator"):
        FilterSettings.from_config(section)


def test_han_count_counts_only_chinese_characters():
    assert han_count("9·11事件，NBA") == 2


def test_a_headline_opening_with_a_name_s_never_mentions_is_rejected() -> None:
    headline = TaggedText(("李克强", "对", "会议", "作出", "批示"),
                          ("PROPN", "ADP", "NOUN", "VERB", "NOUN"))
    sentence = TaggedText(("会议", "今天", "召开", "。"), ("NOUN", "NOUN", "VERB", "PUNCT"))
    settings = SETTINGS
    assert "李克强" in rule_headline_actor(headline, sentence, settings, frozenset({2}))
    assert rule_headline_actor(headline, sentence, settings, frozenset({0, 2})) is None
    untitled = TaggedText(("会议", "召开"), ("NOUN", "VERB"))
    assert rule_headline_actor(untitled, sentence, settings, frozenset()) is None
