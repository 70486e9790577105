"""Chapter/episode numbers in file names and titles (第一章, 第12回, Chapter 3, ep01, S01E02)."""
from __future__ import annotations

import re

_DIGITS = {"零": 0, "〇": 0, "○": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
           "六": 6, "七": 7, "八": 8, "九": 9, "壹": 1, "贰": 2, "叁": 3, "肆": 4, "伍": 5,
           "陆": 6, "柒": 7, "捌": 8, "玖": 9}
_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_HAN_NUM = "零〇○一二两三四五六七八九十百千壹贰叁肆伍陆柒捌玖拾佰仟"

_PATTERNS = [
    re.compile(rf"第\s*([0-9０-９]+|[{_HAN_NUM}]+)\s*[章回节集卷部篇话幕]"),
    re.compile(r"(?i)\bs\d{1,2}\s*e(\d{1,4})"),
    re.compile(r"(?i)(?:chapter|chap|ch|episode|ep|e|part|book|vol)[\s._-]*(\d{1,4})(?!\d)"),
    re.compile(r"(?<![0-9])(\d{1,4})(?![0-9])"),
]


def chinese_numeral(text: str) -> int | None:
    """二十三 -> 23, 一百零五 -> 105, 十二 -> 12, 三〇 -> 30 (digit strings), else None."""
    if not text or any(ch not in _DIGITS and ch not in _UNITS for ch in text):
        return None
    if not any(ch in _UNITS for ch in text):
        return int("".join(str(_DIGITS[ch]) for ch in text))
    total, digit = 0, None
    for ch in text:
        if ch in _DIGITS:
            digit = _DIGITS[ch]
        else:
            total += (1 if digit is None else digit) * _UNITS[ch]
            digit = None
    return total + (digit or 0)


def _to_int(token: str) -> int | None:
    token = token.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    return int(token) if token.isdigit() else chinese_numeral(token)


def chapter_number(text: str) -> int | None:
    """The chapter/episode number a name or title carries, most specific pattern first."""
    for pattern in _PATTERNS:
        match = pattern.search(text)
        if match:
            value = _to_int(match.group(1))
            if value is not None:
                return value
    return None


_ANY_NUMBER = re.compile(rf"[0-9０-９]+(?:\.[0-9]+)?|[{_HAN_NUM}]{{2,}}")


def numbers_in(text: str) -> set[int]:
    """Numbers written in digits or Chinese numerals (2+ characters) in ``text``."""
    found = set()
    for token in _ANY_NUMBER.findall(text):
        value = _to_int(token.split(".")[0])
        if value is not None:
            found.add(value)
    return found
