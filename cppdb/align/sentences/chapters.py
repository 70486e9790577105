"""Chapter/episode numbers in file names and titles (第一章, 第12回, Chapter 3, ep01, S01E02)."""
from __future__ import annotations

import re

from cppdb.text.numerals import (DIGIT_VALUE, FINANCIAL_DIGIT_VALUE, FINANCIAL_UNIT_VALUE,
                                 UNIT_VALUE, numeral_value)

_HAN_NUM = "".join([*DIGIT_VALUE, *FINANCIAL_DIGIT_VALUE, *UNIT_VALUE, *FINANCIAL_UNIT_VALUE])

_PATTERNS = [
    re.compile(rf"第\s*([0-9０-９]+|[{_HAN_NUM}]+)\s*[章回节集卷部篇话幕]"),
    re.compile(r"(?i)\bs\d{1,2}\s*e(\d{1,4})"),
    re.compile(r"(?i)(?:chapter|chap|ch|episode|ep|e|part|book|vol)[\s._-]*(\d{1,4})(?!\d)"),
    re.compile(r"(?<![0-9])(\d{1,4})(?![0-9])"),
]


def chinese_numeral(text: str) -> int | None:
    """二十三 -> 23, 一百零五 -> 105, 十二 -> 12, 三〇 -> 30 (digit strings), else None."""
    return numeral_value(text)


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
