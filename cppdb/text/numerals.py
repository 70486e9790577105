"""Chinese numeral characters and their values — the one home of this knowledge.

Used by chapter numbers (``align/sentences/chapters.py``), number matching in the word
aligners (``align/words``), the CTB tag repairs (``annotate/ctb_map.py``), the number
features (``features/numbers.py``) and the weak-label perturbations (``rank/weak_labels.py``).
A test fails when a run of numeral characters appears as a literal anywhere else.
"""
from __future__ import annotations

#: the digits 1–9 in counting order
ONE_TO_NINE = "一二三四五六七八九"
#: the zero forms (〇 is the one used in years: 二〇一九; ○ is a common look-alike)
ZEROS = "零〇"
ZERO_LOOKALIKE = "○"
#: every plain digit character with its value (两 is the counting form of 二)
DIGIT_VALUE: dict[str, int] = {**{z: 0 for z in ZEROS}, ZERO_LOOKALIKE: 0,
                               **{c: i for i, c in enumerate(ONE_TO_NINE, start=1)}, "两": 2}
#: one canonical character per value 0–9 (index = value): for writing numbers
CANONICAL_DIGITS = "〇" + ONE_TO_NINE
#: the plain digit characters, without the look-alike: 零〇一二两三四五六七八九
ZH_DIGITS = ZEROS + ONE_TO_NINE[0] + ONE_TO_NINE[1] + "两" + ONE_TO_NINE[2:]
#: financial (anti-forgery) digits
FINANCIAL_DIGIT_VALUE: dict[str, int] = {c: i for i, c in enumerate("壹贰叁肆伍陆柒捌玖", start=1)}
UNIT_VALUE: dict[str, int] = {"十": 10, "百": 100, "千": 1000}
FINANCIAL_UNIT_VALUE: dict[str, int] = {"拾": 10, "佰": 100, "仟": 1000}
BIG_UNIT_VALUE: dict[str, int] = {"万": 10**4, "亿": 10**8}
ZH_UNITS = "".join(UNIT_VALUE) + "".join(BIG_UNIT_VALUE)
#: characters of approximate or literary numbers: 几 (a few), 半, 多/余 (odd), 数 (several),
#: 廿 (20), 卅 (30)
APPROXIMATE = "几半多余数廿卅"
#: every character that can be part of a Chinese numeral word
ZH_NUMERAL_CHARS = frozenset(ZH_DIGITS) | frozenset(ZH_UNITS) | frozenset(
    FINANCIAL_DIGIT_VALUE) | frozenset(FINANCIAL_UNIT_VALUE)

_DIGIT_VALUE = {ch: value for ch, value in DIGIT_VALUE.items()}
_UNIT_VALUE = UNIT_VALUE
_BIG_UNIT_VALUE = BIG_UNIT_VALUE
_FINANCIAL = str.maketrans({**{c: ONE_TO_NINE[v - 1] for c, v in FINANCIAL_DIGIT_VALUE.items()},
                            **{c: next(u for u, x in UNIT_VALUE.items() if x == v)
                               for c, v in FINANCIAL_UNIT_VALUE.items()}})


def numeral_value(text: str) -> int | None:
    """Value of a Chinese numeral, or None: ``十一`` 11, ``一百零五`` 105, ``一百五`` 150,
    ``三万五千`` 35000, digit by digit ``二〇二三`` 2023, financial ``贰拾`` 20."""
    return _plain_value(text.translate(_FINANCIAL)) if text else None


def _zh_section(text: str) -> int | None:
    """Value of a numeral below 万 (``三千零五``, ``十二``; the short form ``一百五`` is 150);
    None when malformed."""
    total, digit, last_unit = 0, None, 0
    for char in text:
        if char in _DIGIT_VALUE:
            digit = _DIGIT_VALUE[char]
            last_unit = 0 if char in ZEROS else last_unit
        elif char in _UNIT_VALUE:
            last_unit = _UNIT_VALUE[char]
            total += (1 if digit is None else digit) * last_unit
            digit = None
        else:
            return None
    if digit and last_unit >= 100 and text[-2] in _UNIT_VALUE:  # 一百五 = 150, 两千三 = 2300
        return total + digit * last_unit // 10
    return total + (digit or 0)


def _plain_value(text: str) -> int | None:
    if not text:
        return None
    if all(c in _DIGIT_VALUE for c in text):  # digit by digit: years, codes, 一二
        return int("".join(str(_DIGIT_VALUE[c]) for c in text))
    total, rest, unit_before = 0, text, 1
    for unit in ("亿", "万"):
        if unit in rest:
            head, rest = rest.split(unit, 1)
            value = _plain_value(head) if head else 1
            if value is None:
                return None
            total += value * _BIG_UNIT_VALUE[unit]
            unit_before = _BIG_UNIT_VALUE[unit]
    if len(rest) == 1 and rest in _DIGIT_VALUE and unit_before > 1:  # 三万一 = 31000
        return total + _DIGIT_VALUE[rest] * unit_before // 10
    section = _zh_section(rest) if rest else 0
    return None if section is None else total + section


