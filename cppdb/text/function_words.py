"""Closed-class word lists shared by the pivot, the pattern checks and the detectors.

English function words decide which pivots carry no meaning of their own ("the", "of the
[NP1]"); the Chinese contrast sets name words that differ in *who*, *which* or *how many*
(我们/你们, 这/那, 一/所有): two phrases that differ only there are not paraphrases, however
often the English pivot joins them (SPEC §1.6; issue 11).
"""
from __future__ import annotations

import re

#: determiners, pronouns, prepositions, conjunctions, auxiliaries and particles of English
ENGLISH_FUNCTION_WORDS = frozenset("""
a an the this that these those some any each every no another such what which whose
i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his
himself she her hers herself it its itself they them their theirs themselves one ones
oneself there here
of in on at by for from with to into onto about as than like over under after before
through during without within between among against upon off out up down around across
and or but nor so yet if then because while although though whether
is are was were be been being am do does did done have has had having will would shall
should can could may might must 's ' not n't 'll 're 've 'd 'm
""".split())

#: slot tokens of patterns: [NP1], [NN2] ...
SLOT = re.compile(r"^\[[A-Z$]+[12]\]$")

#: Chinese words that differ in person, deixis or quantity: two members of one set are never
#: paraphrases of each other (他 / 她 included: the pivot "he"/"she" is often mis-aligned)
ZH_CONTRAST_SETS: tuple[frozenset[str], ...] = (
    frozenset({"我", "你", "您", "他", "她", "它", "咱"}),
    frozenset({"我们", "你们", "他们", "她们", "它们", "咱们"}),
    frozenset({"这", "那", "这个", "那个", "这些", "那些", "这里", "那里", "这儿", "那儿", "此",
               "这边", "那边", "这样", "那样", "这么", "那么", "这时", "那时"}),
    frozenset({"一", "所有", "每", "每个", "全部", "一切", "任何", "各", "各个", "没有", "两",
               "几", "许多", "很多", "一些", "有些", "大家"}),
    frozenset({"今天", "明天", "昨天", "后天", "前天", "今晚", "昨晚", "明晚"}),
    frozenset({"早上", "上午", "中午", "下午", "晚上", "夜里", "每天晚上", "每天"}),
)


def is_function_pivot(tokens: list[str]) -> bool:
    """True if an English pivot is only function words and slots ("the [NP1]", "of")."""
    return all(SLOT.match(t) or t.lower() in ENGLISH_FUNCTION_WORDS for t in tokens)
