"""Chinese sentence segmentation and subtitle cue rules (cppdb.text.segment)."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from cppdb.text.segment import CueSentence, cue_sentences, cue_text_sentences, split_sentences


@pytest.mark.parametrize("text,expected", [
    ("今天下雨。明天晴！后天呢？", ["今天下雨。", "明天晴！", "后天呢？"]),
    # closing quotes stay with the sentence they close
    ("他问：“你好吗？”她没回答。", ["他问：“你好吗？”", "她没回答。"]),
    # terminators inside quotes do not split; the quote closes the sentence
    ("他说：“好。我去。”然后走了。", ["他说：“好。我去。”", "然后走了。"]),
    ("「走吧！」他喊道。", ["「走吧！」", "他喊道。"]),
    ("（见上。）下一句。", ["（见上。）", "下一句。"]),
    # runs of terminators and ellipses count once
    ("真的吗？！不会吧……我不信。", ["真的吗？！", "不会吧……", "我不信。"]),
    ("飞呀，飞⋯转呀", ["飞呀，飞⋯", "转呀"]),
    # ASCII periods: decimals stay whole; a period before a space ends a sentence
    ("圆周率是3.14。对吗?对!", ["圆周率是3.14。", "对吗?", "对!"]),
    ("He left. She stayed.", ["He left.", "She stayed."]),
    # a quote never closed (lost by OCR) does not glue the paragraph together
    ("“没有关闭的引号。第二句。第三句。", ["“没有关闭的引号。", "第二句。", "第三句。"]),
    # newlines always end sentences; blank lines and whitespace vanish
    ("第一段没有句号\n\n  第二段。  ", ["第一段没有句号", "第二段。"]),
    ("", []),
    # semicolons and commas do not end sentences
    ("他来了；她走了，天黑了。", ["他来了；她走了，天黑了。"]),
])
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_split_sentences_keeps_every_character():
    text = "他问：“你好吗？”她没回答。天黑了……我们走吧！（完）"
    assert "".join(split_sentences(text)) == text


@dataclass(frozen=True)
class _Cue:
    start_ms: int
    end_ms: int
    text: str


def test_cue_text_lines_and_speakers():
    assert cue_text_sentences("我们今天\n去学校") == ["我们今天去学校"]
    assert cue_text_sentences("- 你好吗？\n- 我很好") == ["你好吗？", "我很好"]
    assert cue_text_sentences("Hello\nworld.") == ["Hello world."]
    assert cue_text_sentences("好。走吧") == ["好。", "走吧"]


def test_cue_joining_rules():
    cues = [_Cue(0, 1000, "我们今天去学校，"),       # continuation mark + small gap: join
            _Cue(1200, 2000, "然后回家"),
            _Cue(2100, 3000, "没有标点的一句"),       # no mark: cue end = sentence end
            _Cue(3100, 4000, "下一句，"),             # mark but a long gap: no join
            _Cue(9000, 9500, "很久以后。")]
    assert cue_sentences(cues) == [
        CueSentence("我们今天去学校，然后回家", 0, 2000, (0, 1)),
        CueSentence("没有标点的一句", 2100, 3000, (2,)),
        CueSentence("下一句，", 3100, 4000, (3,)),
        CueSentence("很久以后。", 9000, 9500, (4,)),
    ]


def test_cue_joining_is_capped():
    cues = [_Cue(i * 1000, i * 1000 + 900, f"第{i}段，") for i in range(5)]
    joined = cue_sentences(cues, max_join=2)
    assert [s.cues for s in joined] == [(0, 1), (2, 3), (4,)]


def test_cue_with_several_sentences_keeps_times():
    out = cue_sentences([_Cue(500, 1500, "好。走吧！")])
    assert out == [CueSentence("好。", 500, 1500, (0,)), CueSentence("走吧！", 500, 1500, (0,))]
