"""Width normalisation, whitespace, traditional -> simplified conversion."""
from __future__ import annotations

import pytest

from cppdb.errors import ConfigError
from cppdb.text.convert import OpenCCConverter
from cppdb.text.normalize import (collapse_whitespace, is_traditional, normalize_en,
                                  normalize_zh, to_halfwidth)


@pytest.mark.parametrize("text,expected", [
    ("ｉＰｈｏｎｅ　１２", "iPhone 12"),
    ("ＡＢＣ＋１２３％", "ABC+123%"),
    ("（你好），！", "(你好),!"),
    ("already half", "already half"),
    ("中文。、", "中文。、"),               # CJK punctuation outside the ASCII block stays
])
def test_to_halfwidth(text, expected):
    assert to_halfwidth(text) == expected


def test_chinese_keeps_sentence_punctuation():
    assert to_halfwidth("你好，ＡＢＣ！", keep_chinese_punctuation=True) == "你好，ABC！"


@pytest.mark.parametrize("text,expected", [
    ("  a \t b\n\nc  ", "a b c"), ("中文\u3000\u3000字", "中文 字"), ("", ""),
])
def test_collapse_whitespace(text, expected):
    assert collapse_whitespace(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("他們在學校裡學習", "他们在学校里学习"),
    ("ｉＰｈｏｎｅ　１２很好用，對吧？", "iPhone 12很好用，对吧？"),
    ("  已经是简体  ", "已经是简体"),
])
def test_normalize_zh(text, expected):
    assert normalize_zh(text) == expected


def test_normalize_zh_can_keep_script():
    assert normalize_zh("他們", to_simplified=False) == "他們"


def test_normalize_en():
    assert normalize_en("Ｈｅｌｌｏ，  ｗｏｒｌｄ！") == "Hello, world!"


@pytest.mark.parametrize("text,expected", [
    ("他們在學校裡學習", True), ("他们在学校里学习", False), ("abc 123", False),
])
def test_is_traditional(text, expected):
    assert is_traditional(text) is expected


def test_converter_backend():
    converter = OpenCCConverter("t2s")
    converter.check()
    assert converter.convert(["學習", "漢語"]) == ["学习", "汉语"]
    assert "t2s" in converter.signature()


def test_unknown_profile_is_an_error():
    with pytest.raises(ConfigError, match="unknown OpenCC profile 'x2y'"):
        OpenCCConverter("x2y")
