"""Text normalisation before annotation: character widths, whitespace, script.

Full-width ASCII variants (U+FF01..U+FF5E) become their half-width forms so that ``２０１９``
and ``2019`` are one token type.  In Chinese text the sentence punctuation ``，！？：；（）``
stays full-width (it is what Chinese treebanks and our tokenizers expect); English text is
converted completely.
"""
from __future__ import annotations

import re

from cppdb.text.convert import default_converter

_FULLWIDTH_START, _FULLWIDTH_END, _OFFSET = 0xFF01, 0xFF5E, 0xFEE0
IDEOGRAPHIC_SPACE = "\u3000"
#: full-width punctuation Chinese text keeps in :func:`normalize_zh`
CHINESE_PUNCTUATION_KEPT = "，！？：；（）"

_WHITESPACE = re.compile(r"\s+")
#: one character of Chinese script or CJK / full-width punctuation, as a polars (Rust) regex
#: class: a space beside one is not a word gap in Chinese (``据悉 ， “ 爱家`` → ``据悉，“爱家``),
#: a space between two Latin words is (``multipart MIME``)
CJK_CHARACTER = r"[\p{Han}\u3000-\u303f\uff00-\uffef\u2018-\u201f\u2026\u00b7]"
_HALFWIDTH_ALL = {cp: cp - _OFFSET for cp in range(_FULLWIDTH_START, _FULLWIDTH_END + 1)}
_HALFWIDTH_ALL[ord(IDEOGRAPHIC_SPACE)] = ord(" ")
_HALFWIDTH_ZH = {cp: half for cp, half in _HALFWIDTH_ALL.items()
                 if chr(cp) not in CHINESE_PUNCTUATION_KEPT}


def to_halfwidth(text: str, *, keep_chinese_punctuation: bool = False) -> str:
    """Map full-width ASCII letters, digits and symbols (and U+3000) to half-width."""
    return text.translate(_HALFWIDTH_ZH if keep_chinese_punctuation else _HALFWIDTH_ALL)


_TO_FULLWIDTH = {c: chr(ord(c) + _OFFSET) for c in ",!?:;()"}
_HAN_OR_CJK_PUNCT = r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef“”‘’]"
#: half-width sentence punctuation after a Chinese character (or before one, for "(")
_HALF_AFTER_HAN = re.compile(rf"(?<={_HAN_OR_CJK_PUNCT})\s*([,!?:;)])"
                             rf"|([(])\s*(?={_HAN_OR_CJK_PUNCT})")


def chinese_punctuation_width(text: str) -> str:
    """``，！？：；（）`` where OCR (or a careless typist) wrote the half-width form next to a
    Chinese character: ``不少,满脸`` → ``不少，满脸``. ``10:45``, ``a, b`` stay as they are."""
    return _HALF_AFTER_HAN.sub(lambda m: _TO_FULLWIDTH[m.group(1) or m.group(2)], text)


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace (incl. tabs/newlines) become one space; ends are stripped."""
    return _WHITESPACE.sub(" ", text).strip()


def is_traditional(text: str) -> bool:
    """True if converting ``text`` to simplified script changes it (it has traditional forms)."""
    return default_converter().convert_one(text) != text


def normalize_zh(text: str, *, to_simplified: bool = True) -> str:
    """Half-width ASCII, collapsed whitespace and (optionally) simplified script."""
    text = collapse_whitespace(to_halfwidth(text, keep_chinese_punctuation=True))
    if to_simplified:
        text = default_converter().convert_one(text)
    return text


def normalize_en(text: str) -> str:
    """Half-width ASCII and collapsed whitespace."""
    return collapse_whitespace(to_halfwidth(text))
