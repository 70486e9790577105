"""Closed-class word lists shared by the pivot, the pattern checks and the detectors.

English function words decide which pivots carry no meaning of their own ("the", "of the
[NP1]"); the Chinese contrast sets name words that differ in *who*, *which* or *how many*
(我们/你们, 这/那, 一/所有): two phrases that differ only there are not paraphrases, however
often the English pivot joins them (SPEC §1.6).
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


# -- near-identity: material whose addition or removal keeps a phrase's meaning ----
#: demonstratives and demonstrative/indefinite determiners (这个男孩 / 男孩; 一个 / 这个 are not
#: a contrast: one side has no deixis at all).  每/各/整个/另 quantify and stay content.
ZH_DEIXIS = frozenset({"这", "那", "这个", "那个", "这些", "那些", "这位", "那位", "这种",
                       "那种", "这样的", "此", "该", "其", "某", "某个", "某些", "本"})
ZH_INDEFINITE = frozenset({"一", "一个", "一位", "一些", "一种", "些"})
#: counting classifiers: function material only right after one of ZH_CLASSIFIER_HEADS
#: (一 杯 / 这 栋), since many are nouns on their own (头 head, 口 mouth, 家 home); numerals
#: other than 一 stay content, so 两 杯 / 一 杯 is a change of number
ZH_COUNTING_CLASSIFIERS = frozenset(
    "个 位 只 本 张 条 件 名 把 杯 瓶 碗 间 辆 头 匹 座 家 所 台 部 种 份 支 枚 棵 朵 块 片 封 双 "
    "对 套 颗 粒 首 篇 幅 架 艘 顶 盏 扇 根 群 栋 项 门 节 道 段 层 盘 罐 袋 包 箱 句 番 场 顿 口 "
    "尊 笔 起 则 款 批 组 届 次 份 副 串 堆 束 幢 枝 株 样".split())
ZH_CLASSIFIER_HEADS = frozenset({"一", "这", "那", "某", "该"})
#: structural and aspect particles, sentence-final modal particles (not 吗: a question)
ZH_PARTICLES = frozenset({"的", "了", "着", "过", "地", "得", "之", "啊", "呀", "呢", "吧",
                          "啦", "嘛", "哦"})
#: list closers: 毒资 / 毒资等
ZH_ETC = frozenset({"等", "等等", "之类", "什么的"})
#: coordinating conjunctions that join without changing the relation (not 或/或者: "or")
ZH_CONJUNCTIONS = frozenset({"和", "与", "及", "以及", "跟", "同", "并", "并且", "而", "而且",
                             "且", "还有"})
#: personal pronouns: droppable (她丈夫 / 丈夫) but never exchanged (他的书 / 我的书)
ZH_PERSONAL_PRONOUNS = ZH_CONTRAST_SETS[0] | ZH_CONTRAST_SETS[1] | {"自己"}
#: the grammatical person (1, 2, 3) of each personal pronoun but 自己: 你 / 您 are one person
ZH_PRONOUN_PERSON: dict[str, int] = {
    word: next(n for n, first in ((1, "我咱"), (2, "你您"), (3, "他她它")) if word[0] in first)
    for word in sorted(ZH_CONTRAST_SETS[0] | ZH_CONTRAST_SETS[1])}
#: words that say whose or which: one side may lack them (你的孩子 / 孩子), but two different
#: ones (他的 / 我的, 这个 / 那个, 这个手帕 / 你的手帕) are a change of reference
ZH_REFERENCE_WORDS = ZH_PERSONAL_PRONOUNS | ZH_DEIXIS
#: every word whose presence alone never makes two phrases different paraphrases
ZH_NEAR_IDENTITY_WORDS = (ZH_REFERENCE_WORDS | ZH_INDEFINITE | ZH_PARTICLES | ZH_ETC
                          | ZH_CONJUNCTIONS)
