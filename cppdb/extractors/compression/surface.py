"""Surface repairs: units the dependency parse cuts through, mended from the token sequence.

The minimal subtree and the sentence rules read the parse; an offline Chinese parse of news is
weak (udchinese attaches 主席 as root, 日晚 as an adjective), so a compression can keep half of
a unit the reader sees as one word.  These rules look at S's tokens in order — jieba's UPOS and
the characters — and make each unit all-or-nothing:

* ``number`` — a number with its measure words (``21 日晚``, ``30 万吨级``, ``第 54 届``):
  kept whole when the headline names part of it, else dropped whole (``李克强21应约`` →
  ``李克强应约``).
* ``name`` — a run of adjacent proper-noun tokens (jieba cuts 科尔德罗 into 科尔德/罗): kept
  whole when the headline names part of it, else dropped whole (never ``主席罗``).
* ``preposition`` — a kept preposition whose next kept word, past dropped words, is a verb
  has lost its object (``在京 举行`` → ``在举行``): the preposition goes too (``举行``).
* ``apposition`` — a dropped title between a kept word and a kept name comes back (全国政协
  主席 汪洋, never 全国政协汪洋, which names another office).
* ``brackets`` — a title in 《》 or a term in “” is a unit: kept whole with its marks when the
  headline names part of it, else dropped whole; no later rule drops a word inside it.
* ``preposition`` also keeps a dropped preposition whose next token is a kept nominal: a
  bare object reads as another role (``今天 南京大学 举行`` → ``今天 在 南京大学 举行``).
* ``conjunction`` — a dropped conjunction between two kept tokens is kept (``出席 开幕式 并
  发表 讲话``, ``中国 和 俄罗斯``): without it two predicates or two actors run together.
* ``future`` — a dropped future marker (将 即将 拟) before a kept predicate is kept: without
  it a plan reads as a fact.
* ``title_prefix`` — 副 前 原 … before a kept word stay (副主席 is not 主席).
* ``copula_noun`` — a kept 是 keeps the noun before it (``文章，题目 是《…》`` → never ``文章是《…》``):
  "是 X" needs what is X.

Each rule keeps or drops whole units, so what it decides depends on the headline (the
keywords), never on the parse.  The sentence check runs afterwards on the repaired set.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from cppdb.errors import ConfigError
from cppdb.extractors.compression.sentence import CLAUSE_PUNCTUATION
from cppdb.text.numerals import ZH_DIGITS, ZH_UNITS

RULE_NAMES = ("number", "name", "apposition", "brackets", "preposition", "conjunction",
              "future", "copula_noun", "title_prefix", "clause_mark")   # applied in this order
#: the marks a gap between kept words keeps (one per gap, the strongest first): two kept
#: clauses keep what separates them (文章，题目是《…》; 今天，…论坛开幕), two kept items their 、
_GAP_MARKS = ("；", ";", "，", ",", "：", ":", "、")

#: the characters of a measure word, time unit or numeral suffix that belongs to the number
#: before it (21 日晚, 30 万吨级, 19 点, 54 届, 100 周年, 356.1 亿元, 3 个, 多 名)
_MEASURE = ("日月年号时点分秒届次个名位家项万亿千百元吨级周岁期批轮例米倍天多余"
            "起件场台架艘辆部条所座栋只股篇首张份种套支门户兆瓦千克斤亩公里")
_TIME_OF_DAY = "晚早夜"
_NUMERALS = "0-9０-９" + ZH_DIGITS + ZH_UNITS + ".．%％"
#: a number: digits (ASCII or full-width) or Chinese numerals, optionally after 第
_NUMBER = re.compile(rf"^第?[{_NUMERALS}]+$")
#: a number token with its measure word fused in (第五十五次, 十二届): only when tagged NUM,
#: since a numeral plus a measure character is also an ordinary word (十分 "very")
_NUMBER_WITH_MEASURE = re.compile(rf"^第?[{_NUMERALS}]+[{_MEASURE}]+$")
#: bracket pairs whose content is one unit (a title, a quoted term)
BRACKETS = {"《": "》", "“": "”", "「": "」"}
#: UPOS that make a token a preposition in jieba's tags (the parse's relations are unreliable)
_PREPOSITION_UPOS = frozenset({"ADP"})
#: one-character words that are never part of a name: particles, prepositions, conjunctions,
#: the verbs and nouns that follow a name in news (会 见 on its own is 会见 split elsewhere)
_NOT_NAME_PIECES = frozenset("的了着过在于与和及或并同向对从把被为将就是也都还已又再不没个"
                              "说称指到访抵赴见谈致等总副前新老")
#: marks that end a clause (the sentence rules' clause marks and the sentence ends): a
#: preposition's object lies before the next one
_CLAUSE_MARKS = CLAUSE_PUNCTUATION | frozenset("。！？!?")
#: words that mark what follows as planned, not done
FUTURE_MARKERS = frozenset({"将", "将要", "即将", "拟", "将于"})
#: prefixes that change which office a title names (副主席 deputy, 前总统 former)
TITLE_PREFIXES = frozenset({"副", "前", "原", "代", "代理", "常务", "候任", "名誉"})
#: jieba UPOS of what a future marker can modify (将 before a noun is the object marker 把)
_PREDICATE_UPOS = frozenset({"VERB", "ADV", "AUX", "ADJ"})


@dataclass(frozen=True)
class SurfaceRules:
    rules: tuple[str, ...] = RULE_NAMES

    def __post_init__(self) -> None:
        unknown = [r for r in self.rules if r not in RULE_NAMES]
        if unknown:
            raise ConfigError(f"unknown surface rule(s): {', '.join(unknown)}",
                              hint=f"choose from: {', '.join(RULE_NAMES)}")


def _is_number(token: str, upos: str) -> bool:
    if token in (".", "．", "%", "％"):
        return False
    return bool(_NUMBER.match(token) or (upos == "NUM" and _NUMBER_WITH_MEASURE.match(token)))


def _is_measure(token: str) -> bool:
    """A measure word made of measure characters only (届, 万吨级, 周年, 亿元; 日晚): 年会 or
    项目 after a number are nouns of their own."""
    return bool(token) and token[0] in _MEASURE and all(
        ch in _MEASURE or ch in _TIME_OF_DAY for ch in token[1:])


def number_units(tokens: Sequence[str], upos: Sequence[str]) -> list[range]:
    """Token ranges of numbers with their measure words (and a leading 第, or the clock a
    date is told in: 当地时间, 北京时间)."""
    units, i = [], 0
    while i < len(tokens):
        if not _is_number(tokens[i], upos[i]):
            i += 1
            continue
        start = i - 1 if i > 0 and tokens[i - 1] == "第" else i
        if start >= 2 and tokens[start - 1] == "时间" and upos[start - 2] in ("NOUN", "PROPN"):
            start -= 2                  # 当地时间 / 北京时间 21 日: the clock is the date's
        stop = i + 1
        while stop < len(tokens) and (_is_number(tokens[stop], upos[stop])
                                      or _is_measure(tokens[stop])):
            stop += 1
        units.append(range(start, stop))
        i = stop
    return units


def name_units(tokens: Sequence[str], upos: Sequence[str]) -> list[range]:
    """Runs of two or more adjacent proper-noun tokens, with the one-character pieces next to
    them (jieba cuts a transliterated name into pieces tagged at random: 马/塔雷/拉, 泰尔/齐)."""
    units, i = [], 0
    while i < len(upos):
        if upos[i] != "PROPN":
            i += 1
            continue
        start, stop = i, i + 1
        while stop < len(upos) and (upos[stop] == "PROPN" or _name_piece(tokens[stop])):
            stop += 1
        while start > 0 and _name_piece(tokens[start - 1]) and upos[start - 1] != "PUNCT":
            start -= 1
        if stop - start >= 2:
            units.append(range(start, stop))
        i = stop
    return units


def _name_piece(token: str) -> bool:
    return (len(token) == 1 and "\u4e00" <= token <= "\u9fff" and token not in _NOT_NAME_PIECES
            and token not in _MEASURE and not _NUMBER.match(token))


def bracket_units(tokens: Sequence[str]) -> list[range]:
    """Token ranges from an opening mark to its closing mark (both included), not nested."""
    units, i = [], 0
    while i < len(tokens):
        close = BRACKETS.get(tokens[i])
        end = next((j for j in range(i + 1, len(tokens)) if tokens[j] == close), None) \
            if close else None
        if end is None:
            i += 1
            continue
        units.append(range(i, end + 1))
        i = end + 1
    return units


def _all_or_nothing(kept: set[int], units: Iterable[range], keywords: set[int],
                    inner: bool = False) -> None:
    """A unit with a keyword is kept whole; a partly kept unit without one is dropped.
    ``inner``: the unit's ends are marks (brackets), kept only with their content."""
    for unit in units:
        if len(unit) < 2:
            continue
        body = range(unit.start + 1, unit.stop - 1) if inner else unit
        if not body:
            continue
        if set(body) & keywords:
            kept.update(unit)
        elif set(body) & kept and not set(body) <= kept:
            kept.difference_update(unit)
        elif inner and set(body) <= kept:
            kept.update(unit)


def _next_kept(kept: set[int], tokens: Sequence[str], upos: Sequence[str],
               start: int) -> int | None:
    """The first kept word after ``start`` in the same clause."""
    for j in range(start + 1, len(tokens)):
        if tokens[j] in _CLAUSE_MARKS:
            return None
        if j in kept and upos[j] != "PUNCT":
            return j
    return None


def _appositions(kept: set[int], upos: Sequence[str]) -> None:
    for i in range(1, len(upos) - 1):
        if (i not in kept and upos[i] == "NOUN" and i - 1 in kept and i + 1 in kept
                and upos[i - 1] != "PUNCT" and upos[i + 1] == "PROPN"):
            kept.add(i)


def _prepositions(kept: set[int], tokens: Sequence[str], upos: Sequence[str],
                  parse_upos: Sequence[str], keywords: set[int],
                  is_verb: Callable[[str], bool]) -> None:
    """A preposition goes with its object.  Kept, it stays when the next word is kept (its
    object starts there, even a verbal one: 关于 推进…, 被 爆破) and goes when the next kept
    word, past a gap, is a verb in either tagging or in the dictionary (在 [京] 举行, 在 [北京]
    会见: the object was dropped); dropped, it comes back when the next word is a kept nominal
    (在 南京大学).  A kept title is quoted as written: no word inside it moves."""
    quoted = {i for unit in bracket_units(tokens) if unit.start in kept for i in unit}
    for i in range(len(tokens) - 1):
        if (i in keywords or i in quoted or upos[i] not in _PREPOSITION_UPOS
                or upos[i + 1] == "PUNCT"):
            continue
        following = _next_kept(kept, tokens, upos, i)
        if i in kept and following != i + 1 and (
                following is None or "VERB" in (upos[following], parse_upos[following])
                or is_verb(tokens[following])):
            kept.discard(i)
        elif i not in kept and following == i + 1 and upos[following] != "VERB":
            kept.add(i)


def _conjunctions(kept: set[int], upos: Sequence[str]) -> None:
    for i in range(1, len(upos) - 1):
        if upos[i] == "CCONJ" and i - 1 in kept and i + 1 in kept:
            kept.add(i)


def _future_markers(kept: set[int], tokens: Sequence[str], upos: Sequence[str]) -> None:
    for i in range(len(tokens) - 1):
        if tokens[i] in FUTURE_MARKERS and i + 1 in kept and upos[i + 1] in _PREDICATE_UPOS:
            kept.add(i)


def _title_prefixes(kept: set[int], tokens: Sequence[str]) -> None:
    for i in range(len(tokens) - 1):
        if tokens[i] in TITLE_PREFIXES and i + 1 in kept:
            kept.add(i)


def _copula_subjects(kept: set[int], tokens: Sequence[str], upos: Sequence[str]) -> None:
    for i in sorted(kept):
        if tokens[i] != "是":
            continue
        before = i - 1
        while before >= 0 and upos[before] == "PUNCT":
            before -= 1
        if before >= 0 and before not in kept and upos[before] in ("NOUN", "PROPN", "PRON"):
            kept.add(before)


def _gap_marks(keep: set[int], tokens: Sequence[str]) -> None:
    """One mark of S stays in each gap between kept words that held one."""
    kept = sorted(keep)
    for left, right in zip(kept, kept[1:]):
        gap = range(left + 1, right)
        for mark in _GAP_MARKS:
            found = next((i for i in gap if tokens[i] == mark), None)
            if found is not None:
                keep.add(found)
                break


def repair_units(tokens: Sequence[str], upos: Sequence[str], kept: Iterable[int],
                 keywords: Iterable[int], rules: SurfaceRules,
                 parse_upos: Sequence[str] | None = None,
                 is_verb: Callable[[str], bool] = lambda word: False
                 ) -> tuple[frozenset[int], tuple[tuple[int, str], ...]]:
    """The kept set with every unit all-or-nothing (``upos``: jieba's tags of S;
    ``parse_upos``: the parser's, and ``is_verb``, a dictionary's verdict, which only the
    preposition rule reads), and the (token, rule) of each token a rule added (what a rule
    dropped shows in the labels)."""
    keep, keys = set(kept), set(keywords)
    added: list[tuple[int, str]] = []
    for rule in RULE_NAMES:
        if rule not in rules.rules:
            continue
        before = set(keep)
        if rule == "number":
            _all_or_nothing(keep, number_units(tokens, upos), keys)
        elif rule == "name":
            _all_or_nothing(keep, name_units(tokens, upos), keys)
        elif rule == "apposition":
            _appositions(keep, upos)
        elif rule == "brackets":
            _all_or_nothing(keep, bracket_units(tokens), keys, inner=True)
        elif rule == "preposition":
            _prepositions(keep, tokens, upos, parse_upos or upos, keys, is_verb)
        elif rule == "conjunction":
            _conjunctions(keep, upos)
        elif rule == "future":
            _future_markers(keep, tokens, upos)
        elif rule == "copula_noun":
            _copula_subjects(keep, tokens, upos)
        elif rule == "title_prefix":
            _title_prefixes(keep, tokens)
        else:
            _gap_marks(keep, tokens)
        added.extend((token, rule) for token in sorted(keep - before))
    return frozenset(keep), tuple(added)


def only_a_title(tokens: Sequence[str], upos: Sequence[str], kept: Iterable[int]) -> bool:
    """The compression is a quoted title (《…》) with nothing after it and at most one word
    before it: it names a publication and states no event ("人民日报评论员文章：X" compressed
    to "《X》" or "印发《X》"); "《X》出版发行" says what happened to it."""
    keep = set(kept)
    titles = [unit for unit in bracket_units(tokens) if tokens[unit.start] == "《"]
    inside = {i for unit in titles for i in unit}
    if not keep & inside:
        return False
    words = [i for i in keep - inside if upos[i] != "PUNCT"]
    last = max(unit.stop for unit in titles if set(unit) & keep)
    return not any(i >= last for i in words) and len(words) <= 1


#: jieba UPOS a subject can have
_NOMINAL_UPOS = frozenset({"NOUN", "PROPN", "PRON"})


_ASPECT = frozenset({"了", "过", "着"})


def object_cut(tokens: Sequence[str], upos: Sequence[str], kept: Iterable[int]) -> bool:
    """The compression ends in a verb while S goes on, in the same clause, with a nominal or
    verb the compression dropped (modifiers and aspect particles between them aside): the verb
    lost what it governs (大雨导致…出现 | 严重洪涝灾害; 首相周一开始 | 对中国进行访问), whatever the
    parse attached it to."""
    keep = [k for k in kept if upos[k] != "PUNCT"]
    if not keep:
        return False
    last = max(keep)
    if upos[last] != "VERB" or last + 1 >= len(tokens) or tokens[last + 1] in _CLAUSE_MARKS:
        return False
    for j in range(last + 1, len(tokens)):
        if tokens[j] in _CLAUSE_MARKS or upos[j] == "PUNCT":
            return False
        if upos[j] in _NOMINAL_UPOS or upos[j] == "VERB":     # jieba tags 灾害 nouns vn
            return True
        if upos[j] not in ("ADJ", "NUM", "DET", "ADV") and tokens[j] not in _ASPECT:
            return False          # a conjunction, preposition or particle follows
    return False


def subject_dropped(tokens: Sequence[str], upos: Sequence[str], kept: Iterable[int],
                    is_time: Callable[[str], bool]) -> bool:
    """The compression opens (time words, numbers and title prefixes aside) with a predicate,
    a preposition or an adverb while S names a nominal before that point in the same clause:
    who did it was cut (本台 播发…, 财政部 公布了…)."""
    keep = sorted(k for k in kept if upos[k] != "PUNCT")
    first = next((k for k in keep if upos[k] != "NUM" and not is_time(tokens[k])
                  and tokens[k] not in TITLE_PREFIXES), None)
    if first is None or upos[first] in _NOMINAL_UPOS | {"ADJ"}:
        return False
    if any(first in unit for unit in bracket_units(tokens)):
        return False                                # a quoted title names something
    for j in range(first - 1, -1, -1):
        if tokens[j] in _CLAUSE_MARKS:
            return False
        if upos[j] in _NOMINAL_UPOS and not is_time(tokens[j]):
            return True
    return False
