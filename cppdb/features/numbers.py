"""The numbers of a text as normalised values (SPEC §3 feature 10, "numbers identical").

A number is

* a run of Arabic digits with an optional decimal part and an optional Chinese magnitude
  suffix: ``3`` ``3.50`` ``3.5万`` (full-width digits are unified by NFKC before this step);
* a run of Chinese numeral characters ``零〇一二两三四五六七八九十百千万亿``: ``十一`` ``两``
  ``三千五百`` ``二〇二三``;
* either of them after ``第`` is an ordinal and keeps the mark: ``第一`` → ``第1``;
* a fraction ``十分之一`` or ``1/10`` → ``1/10``.

Values are normalised, so ``3`` = ``３`` = ``三`` = ``3.0``, ``3.5万`` = ``三万五千`` = ``35000``,
``百分之五`` = ``5%`` = ``5`` (``百分之`` is dropped; ``%`` is not part of a number), and the
short forms ``一百五`` = 150, ``三万一`` = 31000.  Not handled (documented limits): decimals
written in characters (``三点五`` gives 3 and 5), ranges (``三四个`` reads as 34).

**What is not a number** — the reason for these rules: machine-translated and everyday
Chinese uses ``一`` as the indefinite article (``一个男人`` "a man", ``一只猫``, ``一些``) and
inside words (``一起``, ``一直``, ``一样``, ``统一``, ``唯一``).  Counting it made "numbers
differ" fire on most pairs that merely had an article on one side only.  So

* a **lone** ``一`` (not next to another numeral character and not after ``第``) is never a
  number.  Consequence, accepted for simplicity: ``一个人`` and ``1个人`` differ (``1`` is
  a number), ``一年`` vs ``两年`` still differ (∅ vs {2}); ``一`` vs nothing does not;
* a few lexicalised words whose characters are numerals are removed first: ``十分`` and
  ``万分`` ("very", unless a numeral precedes or ``钟``/``之`` follows: ``三十分钟`` stays
  30), ``十足``, ``万一`` (in case), ``一一`` (one by one), ``三明治``, ``万岁``, ``万物``,
  ``百姓``, ``百货``, ``零售``, ``零件``, ``零食``, ``零钱``, and idioms that say "many" or
  "every way" (``成千上万``, ``数以千计``, ``千方百计``, ``四面八方`` …); and ``千`` of
  ``千克/千米/千瓦`` after Arabic digits (``3千克`` is 3, not 3000).

The rule is lexical, on the character text, so it is the same for phrases, patterns,
sentences and raw ``cppdb score`` pairs.  The pair table's POS tags were not used: jieba's
tagger splits ``十分`` into ``十/CD 分/M`` and ``3.5万`` into ``3.5/CD 万/M``, so they are
not more reliable here.  Python runs only over the distinct number strings of a table (to
normalise them); extraction and comparison are polars expressions.
"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation

import polars as pl

from cppdb.text.numerals import (BIG_UNIT_VALUE, UNIT_VALUE, ZH_DIGITS, ZH_UNITS,
                                 numeral_value)

_NUMERAL = ZH_DIGITS + ZH_UNITS
#: a number candidate (see the module docstring)
CANDIDATE_PATTERN = (rf"[{_NUMERAL}]+分之[{_NUMERAL}]+|[0-9]+/[0-9]+|"
                     rf"第?(?:[0-9]+(?:\.[0-9]+)?[{ZH_UNITS}]*|[{_NUMERAL}]+)")
#: words made of numeral characters that are not numbers; removed before extraction
_ALWAYS_WORDS = ("三明治", "万岁", "万物", "百姓", "百货", "百分之",
                 "零售", "零件", "零食", "零钱",
                 # idioms that say "many" or "every way", not a count
                 "成千上万", "成百上千", "千千万万", "数以千计", "数以万计", "数以百计",
                 "千方百计", "千真万确", "三番五次", "五花八门", "四面八方", "乱七八糟",
                 "十全十美", "万无一失")
#: adverbs/words removed unless a numeral precedes (三十分钟) or 钟/之 follows (十分之一)
_GUARDED_WORDS = ("十分", "万分", "十足", "万一", "一一")
_UNIT_VALUE = UNIT_VALUE
_BIG_UNIT_VALUE = BIG_UNIT_VALUE


def _strip_non_numbers(chars: pl.Expr) -> pl.Expr:
    guarded = "|".join(_GUARDED_WORDS)
    return (chars.str.replace_all("|".join(_ALWAYS_WORDS), " ")
            .str.replace_all(rf"(^|[^{_NUMERAL}0-9.])(?:{guarded})([^钟之]|$)", "$1 $2")
            .str.replace_all(r"([0-9])千([克米瓦])", "$1 $2"))


def number_candidates(chars: str | pl.Expr) -> pl.Expr:
    """The number strings of the character text ``chars`` (a column name or an expression;
    for text with slots, ``features.table.number_text``), lone ``一`` dropped."""
    text = pl.col(chars) if isinstance(chars, str) else chars
    return (_strip_non_numbers(text).str.extract_all(CANDIDATE_PATTERN)
            .list.eval(pl.element().filter(pl.element() != "一")))


def _arabic_value(text: str) -> Decimal | None:
    digits = text.rstrip(ZH_UNITS)
    try:
        value = Decimal(digits)
    except InvalidOperation:
        return None
    for unit in text[len(digits):]:
        value *= _UNIT_VALUE.get(unit) or _BIG_UNIT_VALUE[unit]
    return value


def normalise_number(text: str) -> str:
    """The canonical value string of a number candidate (unparseable: the text itself)."""
    for mark in ("分之", "/"):  # fractions: 十分之一 = 1/10
        if mark in text:
            parts = text.split(mark, 1)
            den, num = parts if mark == "分之" else parts[::-1]
            return f"{normalise_number(num)}/{normalise_number(den)}"
    ordinal = text.startswith("第")
    body = text[1:] if ordinal else text
    value = _arabic_value(body) if body[:1].isdigit() else numeral_value(body)
    if value is None:
        return text
    canonical = format(Decimal(value).normalize(), "f")
    return ("第" if ordinal else "") + canonical


def numbers_changed(frame: pl.DataFrame, source: pl.Expr, target: pl.Expr) -> pl.Series:
    """Per row of ``frame``: each side (``source`` / ``target``: character text, slots as
    bare marks) names a number value the other does not — a number changed, not one added.
    Only rows whose two sides both hold a digit or numeral character are parsed (most pairs
    hold none, and the parse is the costly part)."""
    numeral = rf"[0-9{_NUMERAL}]"
    both = (frame.select(pl.int_range(pl.len()).alias("_row"), source.alias("_s"),
                         target.alias("_t"))
            .filter(pl.col("_s").str.contains(numeral) & pl.col("_t").str.contains(numeral)))
    both = both.with_columns(number_candidates("_s").alias("_s"), number_candidates("_t").alias("_t"))
    both = both.with_columns(number_values(both, "_s"), number_values(both, "_t"))
    changed = both.filter((pl.col("_s").list.set_difference("_t").list.len() > 0)
                          & (pl.col("_t").list.set_difference("_s").list.len() > 0))["_row"]
    return pl.Series("numbers_changed", pl.int_range(frame.height, eager=True)
                     .is_in(changed.implode()))


def number_values(frame: pl.DataFrame, candidates: str) -> pl.Expr:
    """Sorted normalised values of the list column ``candidates`` of ``frame``."""
    distinct = frame[candidates].explode().drop_nulls().unique().to_list()
    mapping = {text: normalise_number(text) for text in distinct}
    return (pl.col(candidates).list.eval(
        pl.element().replace(mapping)).list.sort())
