"""Chapter/episode numbers in file names and titles (第一章, 第12回, Chapter 3, ep01, S01E02)."""
from __future__ import annotations

import re

from cppdb.text.numerals import (DIGIT_VALUE, FINANCIAL_DIGIT_VALUE, FINANCIAL_UNIT_VALUE,
                                 UNIT_VALUE, numeral_value)

_HAN_NUM = "".join([*DIGIT_VALUE, *FINANCIAL_DIGIT_VALUE, *UNIT_VALUE, *FINANCIAL_UNIT_VALUE])

_PATTERNS = [
    re.compile(rf"第\s*([0-9０-９]+|[{_HAN_NUM}]+)\s*[章回节集卷部篇话幕]"),
    re.compile(r"(?i)\bs\d{1,2}\s*e(\d{1,4})"),
    # marker and number must be a word of their own: in random names (1b7e7072, e5705b44)
    # "e7072" and "e5705" are not episodes
    re.compile(r"(?i)(?<![a-z0-9])(?:chapter|chap|ch|episode|ep|e|part|book|vol)[\s._-]*"
               r"(\d{1,4})(?![a-z0-9])"),
    re.compile(r"(?<![0-9])(\d{1,4})(?![0-9])"),
]


def chinese_numeral(text: str) -> int | None:
    """二十三 -> 23, 一百零五 -> 105, 十二 -> 12, 三〇 -> 30 (digit strings), else None."""
    return numeral_value(text)


def _to_int(token: str) -> int | None:
    token = token.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    return int(token) if token.isdecimal() else chinese_numeral(token)


def chapter_number(text: str, *, bare: bool = True) -> int | None:
    """The chapter/episode number a name or title carries, most specific pattern first;
    ``bare=False``: only marked numbers (第3章, Chapter 3, E03), not any 1–4 digits."""
    for pattern in _PATTERNS if bare else _PATTERNS[:-1]:
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


_LETTERS = re.compile(r"[A-Za-z]")


def file_chapter(stem: str, title: str) -> int | None:
    """The chapter number of a file: a marked number in its name (第3章, ep03), a bare number
    in a name without other letters (03, 03_归乡), else a marked number in its title line.
    Random names (a8f3k2) and numbers inside the first sentence (他走了3公里) do not count."""
    found = chapter_number(stem, bare=False)
    if found is None and not _LETTERS.search(stem):
        found = chapter_number(stem)
    return found if found is not None else chapter_number(title, bare=False)


_HEADING = re.compile(rf"^\s*(?:{_PATTERNS[0].pattern}|(?i:chapter|episode)\s*\d{{1,4}}\b)")
HEADING_MAX_CHARS = 40


def heading_starts(lines: list[str], min_part_chars: int = 200) -> list[int]:
    """Positions where a file holding several chapters should be cut: lines that are short
    chapter headings (第十二章 归乡, Chapter 12) followed by at least ``min_part_chars`` of
    text before the next heading (a table of contents is not a chapter).  ``[0]`` when the
    file holds one chapter; text before the first heading stays with the first part."""
    marks = [k for k, line in enumerate(lines)
             if len(line.strip()) <= HEADING_MAX_CHARS and _HEADING.match(line)]
    sizes = [len(line) for line in lines]
    kept = [k for k, nxt in zip(marks, [*marks[1:], len(lines)])
            if sum(sizes[k + 1:nxt]) >= min_part_chars]
    if len(kept) < 2:
        return [0]
    return [0, *kept[1:]]
