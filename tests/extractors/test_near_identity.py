"""The near-identity class (issue 25 item 3): function material only, with the cases where
it must not fire because the meaning changes."""
from __future__ import annotations

import polars as pl
import pytest

from cppdb import schema as S
from cppdb.extractors.near_identity import (FUNCTION_WORDS, SAME_SENTENCE_NESTED,
                                            function_words_only, near_identity_reason)


@pytest.mark.parametrize("source,target", [
    ("男孩", "这个 男孩"),                 # a demonstrative added
    ("她 丈夫", "丈夫"),                   # a pronoun dropped
    ("毒资", "毒资 等"),                   # 等
    ("副总理 钱其琛 和 [NP1]", "副总理 钱其琛 和 [NP1] 等"),
    ("[NP1] 和 [NP2]", "[NP1] 与 [NP2]"),  # a conjunction exchanged
    ("我 的 书", "我 书"),                 # 的
    ("吃 了 饭", "吃 饭"),                 # aspect
    ("一个 苹果", "苹果"),                 # indefinite
    ("北京 ，", "北京"),                   # punctuation
    ("他 去 过 北京", "去 北京"),          # pronoun and 过 dropped
])
def test_fires(source, target):
    assert _fires(source, target)


@pytest.mark.parametrize("source,target", [
    ("不 去", "去"),                       # negation
    ("他 的 书", "我 的 书"),              # person exchanged
    ("这个 人", "那个 人"),                # deixis exchanged
    ("两个 人", "一个 人"),                # number
    ("孩子 们", "孩子"),                   # plural
    ("公司", "有限 公司"),                 # 有限 is content
    ("移民", "非法 移民"),
    ("等待", "待"),                        # a function character inside a content word
    ("[NP1] 和 [NP2]", "[NP1] 或 [NP2]"),  # and / or
    ("男孩", "男孩"),                      # identical strings are not a pair
    ("的", "了"),                          # nothing but function words: leave it to the ranker
    ("他 打 了 我", "我 打 了 他"),        # an argument swap keeps the words, not the meaning
])
def test_does_not_fire(source, target):
    assert not _fires(source, target)


def _fires(source: str, target: str) -> bool:
    frame = pl.DataFrame({S.SOURCE_TOKENS: [source.split()], S.TARGET_TOKENS: [target.split()]})
    return frame.select(function_words_only()).item()


def test_reason_order_and_null():
    frame = pl.DataFrame({S.SOURCE_TOKENS: [["男孩"], ["公司"], ["死"]],
                          S.TARGET_TOKENS: [["这个", "男孩"], ["有限", "公司"], ["去世"]],
                          S.NESTED_ONLY: [True, True, False]})
    assert frame.select(near_identity_reason()).to_series().to_list() == [
        SAME_SENTENCE_NESTED, SAME_SENTENCE_NESTED, None]
    frame = frame.with_columns(pl.lit(False).alias(S.NESTED_ONLY))
    assert frame.select(near_identity_reason()).to_series().to_list() == [
        FUNCTION_WORDS, None, None]


@pytest.mark.parametrize("source,target,fires", [
    ("一 杯 柳橙汁", "柳橙汁", True),
    ("一 个 [NP1] 有", "[NP1] 有", True),
    ("两 杯 柳橙汁", "一 杯 柳橙汁", False),       # a number
    ("这 个 手帕", "你 的 手帕", False),           # this / your: a change of reference
    ("这 个 手帕", "一 个 手帕", True),            # this / a: one side has no reference word
    ("他 的 头", "头", True),                      # 头 is a noun here, not a classifier
    ("一 栋 房子", "房子", True),
    ("头", "口", False),                           # two nouns that can also count
    ("自己 的 父亲", "父亲", True),
])
def test_classifiers_and_reference(source, target, fires):
    assert _fires(source, target) is fires
