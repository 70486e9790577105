"""jieba (ICTCLAS) part-of-speech tags -> Penn Chinese Treebank (CTB) tags.

jieba tags with the ICTCLAS/PKU tag set; the papers (and Stanza) use CTB tags.  The mapping
is a fixed table (:data:`ICTCLAS_TO_CTB`, documented in docs/annotation.md) refined by a few
word lists and contextual rules, because several CTB distinctions are lexical or syntactic:

* ``uj`` 的 is DEG after a nominal and DEC after a verb / predicative adjective;
* ``a`` is JJ directly before a noun (attributive) and VA elsewhere (predicative);
* ``m`` is CD, OD for 第X, and in raw text a numeral+classifier token (一个, 第三次) is split
  into CD/OD + M as CTB segments it; number + date unit (2019年, 1月) is merged into NT;
* ``p`` 把/将 is BA, 被 is SB directly before a verb and LB otherwise;
* ``c`` is CC, or CS for subordinating conjunctions (如果, 虽然 ...), AD for 但是/所以 ...;
* ``r`` is PN, DT for demonstratives/quantifiers (这, 每, 各 ...), AD for 怎么/为什么 ...;
* ``v`` 是 is VC, 有/没有 VE; ``x`` punctuation is PU, Latin words FW, digits CD.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from cppdb.text.numerals import APPROXIMATE, ONE_TO_NINE, ZEROS, ZH_NUMERAL_CHARS

#: base table: ICTCLAS tag -> CTB tag (before the lexical/contextual refinements)
ICTCLAS_TO_CTB: dict[str, str] = {
    "n": "NN", "ng": "NN", "nz": "NR", "vn": "NN", "an": "NN", "s": "NN", "g": "NN",
    "k": "NN",
    "nr": "NR", "nrfg": "NR", "nrt": "NR", "ns": "NR", "nt": "NR", "j": "NR",
    "t": "NT", "tg": "NT",
    "f": "LC",
    "v": "VV", "vg": "VV", "vd": "VV", "vi": "VV", "vq": "VV", "i": "VV", "l": "VV",
    "a": "VA", "ag": "VA", "z": "VA", "zg": "VA",
    "ad": "AD", "d": "AD", "df": "AD", "dg": "AD",
    "b": "JJ", "h": "JJ",
    "m": "CD", "mg": "CD", "mq": "CD",
    "q": "M",
    "r": "PN", "rr": "PN", "rz": "DT", "rg": "PN",
    "p": "P",
    "c": "CC",
    "uj": "DEG", "ul": "AS", "uz": "AS", "ug": "AS", "uv": "DEV", "ud": "DER", "u": "SP",
    "y": "SP", "e": "IJ", "o": "ON",
    "eng": "FW", "x": "PU",
}

#: every CTB tag this module can produce
CTB_TAGS = ("AD", "AS", "BA", "CC", "CD", "CS", "DEC", "DEG", "DER", "DEV", "DT", "ETC", "FW",
            "IJ", "JJ", "LB", "LC", "M", "MSP", "NN", "NR", "NT", "OD", "ON", "P", "PN", "PU",
            "SB", "SP", "VA", "VC", "VE", "VV")

NOMINAL_TAGS = frozenset({"NN", "NR", "NT", "PN", "FW"})
VERBAL_TAGS = frozenset({"VV", "VA", "VC", "VE"})

# Lexical exceptions: word -> CTB tag, consulted before the base table.
WORD_TAGS: dict[str, str] = {
    "是": "VC", "为": "P", "有": "VE", "没有": "VE", "没": "AD", "无": "VE",
    "之": "DEG", "等": "ETC", "等等": "ETC", "所": "MSP", "的话": "SP", "似的": "SP",
    "一些": "CD", "些": "M", "一点": "CD", "一切": "DT", "所有": "DT", "全部": "DT",
    "其他": "DT", "其它": "DT", "任何": "DT", "各种": "DT", "一样": "VA",
    "正在": "AD", "时": "LC", "的时候": "LC", "以后": "LC", "以前": "LC",
    # jieba dictionary flags that are wrong for these frequent words (可以/c, 很/zg, 您/zg,
    # 一起/m, 无法/n, 在家/r, 当/t ...): fixed here because no context makes them right
    "可以": "VV", "以为": "VV", "在家": "VV", "有事": "VV", "不是": "VC", "而是": "VC",
    "总是": "AD", "只是": "AD", "一起": "AD", "无法": "AD", "有点": "AD", "有些": "AD",
    "并": "AD", "很": "AD", "您": "PN", "当": "P", "那时": "NT", "这时": "NT", "年纪": "NN",
    "起码": "AD", "最起码": "AD", "毕业": "VV",
}
INTERROGATIVE_DETERMINERS = frozenset({"什么", "甚么", "啥"})
#: degree adverbs: the word after one is a predicate (很 美丽/VA), never a noun
DEGREE_ADVERBS = frozenset({"很", "非常", "太", "十分", "挺", "比较", "更加", "相当", "极其",
                            "格外", "蛮", "多么", "如此", "特别", "最", "更", "越来越"})
#: classifiers that count events, not things (看 一 下, 去 三 次): their QP is not a noun's
VERBAL_CLASSIFIERS = frozenset({"下", "次", "遍", "趟", "回", "番", "眼", "顿", "阵", "声"})
DETERMINERS = frozenset({"这", "那", "哪", "这些", "那些", "哪些", "此", "该", "各", "每", "某",
                         "本", "其", "另", "另外", "这个", "那个", "哪个", "每个", "各个",
                         "这种", "那种", "这位", "那位", "这样的", "整个"})
PRONOUN_ADVERBS = frozenset({"为什么", "为何", "怎么", "怎样", "怎么样", "如何", "这么", "那么",
                             "多么", "这样", "那样", "为啥", "咋"})
SUBORDINATORS = frozenset({"如果", "虽然", "虽", "因为", "即使", "只要", "除非", "尽管", "假如",
                           "若", "要是", "既然", "无论", "不管", "只有", "一旦", "倘若", "如若",
                           "不论", "由于", "以便", "以免"})
ADVERBIAL_CONJUNCTIONS = frozenset({"但是", "但", "可是", "然而", "所以", "因此", "而且", "并且",
                                    "然后", "于是", "否则", "不过", "甚至", "因而", "从而",
                                    "那么", "此外", "另外", "不仅", "不但", "而"})
#: classifiers (measure words) recognised inside numeral+classifier tokens
CLASSIFIERS = frozenset(
    "个只本条张件位次名家天种岁元块斤米头匹辆台部座所棵朵支根片层段句首篇项份批套双对群场回"
    "遍番点分秒周届期倍成度页章节杯瓶碗盒包颗粒枝把间栋门道架艘封笔员口吨亿万千百克里样类步"
    "声眼下顿阵趟轮代滴串身顶幅扇株级路班楼年辆盏枚堆幢副具束袋罐壶盘"
) | frozenset({"公里", "小时", "分钟", "公斤", "美元", "英里", "星期", "多岁", "周年", "平方米",
               "千米", "厘米", "毫米", "人民币", "种类"})
DATE_UNITS = frozenset({"年", "月", "日", "号"})
_NUMERAL_CHARS = (frozenset("0123456789.,%点来") | ZH_NUMERAL_CHARS | frozenset(APPROXIMATE))
_CHINESE_DIGITS = ZH_NUMERAL_CHARS | frozenset("几半廿卅")
_ORDINAL_PREFIXES = ("第", "初")


def is_punctuation(token: str) -> bool:
    """All characters are Unicode punctuation or symbols."""
    return bool(token) and all(unicodedata.category(ch)[0] in "PS" for ch in token)


def is_numeral(token: str) -> bool:
    """Arabic or Chinese numeral (2019, 3.5, 3.5%, 三十, 100多, 一百五十)."""
    if not token or not any(ch.isdigit() or ch in _CHINESE_DIGITS for ch in token):
        return False
    return all(ch in _NUMERAL_CHARS or ch.isdigit() for ch in token)


def is_latin(token: str) -> bool:
    return any(ch.isascii() and ch.isalpha() for ch in token) and all(
        ch.isascii() and (ch.isalnum() or ch in "-_.'&+") for ch in token)


def split_numeral(token: str) -> tuple[str, str] | None:
    """``一个`` -> ("一", "个"); ``第三次`` -> ("第三", "次"); None if not numeral+classifier."""
    for cut in range(len(token) - 1, 0, -1):
        head, tail = token[:cut], token[cut:]
        number = head[1:] if head.startswith(_ORDINAL_PREFIXES) else head
        if tail in CLASSIFIERS and is_numeral(number):
            return head, tail
    return None


_NOUN_CLASSIFIERS = frozenset(c for c in CLASSIFIERS if len(c) == 1) - VERBAL_CLASSIFIERS - \
    DATE_UNITS - frozenset("点分秒级度倍成岁周期届代亿万千百里米克吨路楼班身口员天")


_DEMONSTRATIVES = frozenset({"这", "那", "哪", "每", "各", "某"})


def split_counted_noun(token: str, previous: str, flag: str = "") -> list[tuple[str, str]] | None:
    """A numeral/determiner + classifier glued to its noun by jieba's dictionary.

    ``一棵树`` (jieba: ns) -> 一/m 棵/q 树/n; after a determiner or numeral, ``本书`` (jieba: r,
    "this book") -> 本/q 书/n.  Only single-character classifiers from :data:`CLASSIFIERS`
    and a noun of one or two characters (so 一个人 splits, 一次性 does not: 性 is no noun
    of its own here).  Time and measure units (一点钟, 一年级) are never split.
    """
    if len(token) < 2 or is_numeral(token) or token in CLASSIFIERS:
        return None
    after_counter = bool(previous) and (previous in _DEMONSTRATIVES or is_numeral(previous))
    if (len(token) == 2 and after_counter and token[0] in _NOUN_CLASSIFIERS
            and not flag.startswith(("v", "n", "a"))):  # 本书/r, 封信/nr; not 步行/n
        return [(token[0], "q"), (token[1], "n")]
    for cut in (len(token) - 1, len(token) - 2):
        if cut < 2:
            break
        front, classifier, noun = token[:cut - 1], token[cut - 1], token[cut:]
        counter = (front[1:] if front.startswith("第") else front)
        if classifier in _NOUN_CLASSIFIERS and (
                is_numeral(counter) or front in DETERMINERS) and not is_numeral(noun):
            head = "r" if front in DETERMINERS else "m"
            return [(front, head), (classifier, "q"), (noun, "n")]
    return None


def split_determiner(token: str) -> tuple[str, str] | None:
    """``这个`` -> ("这", "个"), ``每位`` -> ("每", "位"); None otherwise."""
    if (len(token) == 2 and token[0] in "这那哪每各某" and token[1] in CLASSIFIERS
            and token[1] not in "里样"):  # 这里 / 那样 are pronouns, not 这 + 里 (a mile)
        return token[0], token[1]
    return None


def is_date(token: str) -> bool:
    """A calendar date word: 2019年, 一九九九年, 3月, 十二月, 1日, 5号 (not 三年 'three years')."""
    if len(token) < 2 or token[-1] not in DATE_UNITS or not is_numeral(token[:-1]):
        return False
    number = token[:-1]
    if token[-1] == "年":  # a year needs 3+ digits; 三年 / 两年 are durations (CD M)
        return len(number) >= 3 and all(ch.isdigit() or ch in ZEROS + ONE_TO_NINE
                                        for ch in number)
    return True


def numeral_tag(token: str) -> str:
    """CD, OD (第X / 初X) or NT (2019年, 1月, 3日) for a numeral-like token."""
    if token.startswith(_ORDINAL_PREFIXES) and len(token) > 1:
        return "OD"
    if is_date(token):
        return "NT"
    return "CD"


def base_tag(word: str, flag: str) -> str:
    """Context-free CTB tag of one jieba (word, flag) pair."""
    if word in WORD_TAGS:
        return WORD_TAGS[word]
    if flag in ("m", "mq", "mg"):
        if (is_numeral(word) or is_date(word) or word.startswith(_ORDINAL_PREFIXES)
                or split_numeral(word)):
            return numeral_tag(word)
        return "M" if word in CLASSIFIERS else "CD"
    if flag == "x" or flag == "eng" or flag not in ICTCLAS_TO_CTB:
        return _untagged(word)
    if flag.startswith("r"):
        if word in DETERMINERS:
            return "DT"
        if word in PRONOUN_ADVERBS:
            return "AD"
    if flag == "c":
        if word in SUBORDINATORS:
            return "CS"
        if word in ADVERBIAL_CONJUNCTIONS:
            return "AD"
    if flag == "p" and word == "被":
        return "LB"
    if flag == "p" and word in ("把", "将"):  # object marker; 将 as "will" is flagged d
        return "BA"
    return ICTCLAS_TO_CTB[flag]


def _untagged(word: str) -> str:
    """Tokens jieba tags ``x``/``eng`` (or leaves unknown): punctuation, Latin, digits."""
    if is_punctuation(word):
        return "PU"
    if is_numeral(word):
        return "CD"
    if is_latin(word):
        return "FW"
    return "NN"


def refine_in_context(tokens: Sequence[str], tags: Sequence[str],
                      flags: Sequence[str]) -> list[str]:
    """Contextual CTB distinctions: DEG/DEC, JJ/VA, SB/LB, M after numbers/determiners,
    VV for verbal nouns used as verbs, SP for sentence-final 了, then the repairs of
    jieba's frequent context errors (:func:`repair_in_context`)."""
    out = list(tags)
    n = len(out)
    for i, (token, flag) in enumerate(zip(tokens, flags)):
        prev = out[i - 1] if i > 0 else ""
        nxt = out[i + 1] if i + 1 < n else ""
        if out[i] == "DEG" and token == "的" and prev in VERBAL_TAGS | {"AS", "AD"}:
            out[i] = "DEC"
        elif out[i] == "VA" and flag in ("a", "ag", "b") and nxt in ("NN", "NR", "FW"):
            out[i] = "JJ"
        elif out[i] == "LB" and nxt in ("VV", "VA"):
            out[i] = "SB"
        elif prev in ("CD", "OD", "DT") and token in CLASSIFIERS and out[i] != "M":
            out[i] = "M"  # 这 条 (jieba: 条/n), 50 元 (jieba: 元/m)
        elif flag == "vn" and (prev == "AD" or nxt in ("AS", "DER")):
            out[i] = "VV"  # verbal noun used as a verb: 正在 调查, 工作 了
        elif out[i] == "AS" and token == "了" and nxt in ("PU", "") and prev not in VERBAL_TAGS:
            out[i] = "SP"
    return repair_in_context(tokens, out, flags)


_PREDICATE_END = frozenset({"PU", "SP", "AS", ""})


def repair_in_context(tokens: Sequence[str], tags: Sequence[str],
                      flags: Sequence[str]) -> list[str]:
    """Fix jieba tags that the neighbours show to be wrong (each rule is narrow on purpose):

    * degree adverb + "noun" -> VA (很 美丽/ns, 太 小心/n); JJ not before a noun -> VA;
    * ``an`` noun as a predicate after a nominal, before the clause end -> VA (汤姆 安全 。);
    * classifier directly followed by an aspect marker -> VV (种/m 了);
    * verb right after a classifier of things and before the clause end -> NN (一 个 警察/v);
    * 等 after a nominal is ETC only in a list or before a noun, else the verb VV (我 会 等);
    * 还是 between two nouns or two pronouns is CC ("or"), else AD ("still");
    * 该 after a nominal or adverb and not before a noun is the modal VV (我们 该 走);
    * 什么 / 甚么 directly before a noun is a determiner DT (什么 时候: an NP "what time");
    * 一起 (AD by the word list) before a noun is a number CD (一起 事故: one accident).
    """
    out = list(tags)
    n = len(out)
    for i, (token, flag) in enumerate(zip(tokens, flags)):
        prev = out[i - 1] if i > 0 else ""
        nxt = out[i + 1] if i + 1 < n else ""
        before = tokens[i - 1] if i > 0 else ""
        if (before in DEGREE_ADVERBS and out[i] in ("NN", "NR", "JJ")
                and nxt not in NOMINAL_TAGS and flag not in ("t", "m")):
            out[i] = "VA"
        elif out[i] == "JJ" and nxt not in ("NN", "NR", "FW", "JJ", "DEG", "DEC", "CD"):
            out[i] = "VA"
        elif flag == "an" and prev in NOMINAL_TAGS and nxt in _PREDICATE_END:
            out[i] = "VA"
        elif out[i] == "M" and nxt == "AS" and prev not in ("CD", "OD", "DT"):
            out[i] = "VV"
        elif (out[i] == "VV" and flag == "v" and prev == "M" and before in _NOUN_CLASSIFIERS
              and nxt in ("PU", "", "VC", "VV", "AD", "DEG", "SP", "P")):
            out[i] = "NN"
        elif out[i] == "ETC" and token == "等" and not (
                prev in NOMINAL_TAGS and (nxt in NOMINAL_TAGS | {"DEG"} or any(
                    t in ("、", "和", "及", "以及", "与") for t in tokens[:i]))):
            out[i] = "VV"
        elif token == "还是" and out[i] == "CC" and not (
                (prev in NOMINAL_TAGS - {"PN"} and nxt in NOMINAL_TAGS)
                or prev == nxt == "PN"):  # 我 还是 学生: "still"; 茶 还是 咖啡, 你 还是 我: "or"
            out[i] = "AD"
        elif token == "该" and out[i] == "DT" and prev in NOMINAL_TAGS | {"AD"} and (
                nxt not in NOMINAL_TAGS | {"M", "CD"}):
            out[i] = "VV"
        elif token in INTERROGATIVE_DETERMINERS and out[i] == "PN" and nxt in ("NN", "NR"):
            out[i] = "DT"
        elif token == "一起" and nxt in ("NN", "NR"):
            out[i] = "CD"  # 一起 交通事故: "one (classifier)", not the adverb "together"
    return out


def tag_tokens(tokens: Sequence[str], flags: Sequence[str]) -> list[str]:
    """CTB tags of jieba tokens with their ICTCLAS flags (no re-segmentation)."""
    base = [base_tag(token, flag) for token, flag in zip(tokens, flags)]
    return refine_in_context(tokens, base, flags)


#: jieba cuts that CTB draws elsewhere: 出/v 生于/v -> 出生/VV 于/P (出生于 X shares the
#: verb and the preposition with 出生在 X / 死于 X)
RECUT: dict[tuple[str, str], tuple[tuple[str, str], tuple[str, str]]] = {
    ("出", "生于"): (("出生", "v"), ("于", "p")),
}


def resegment(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Adjust jieba's segmentation to CTB conventions (raw-text path only).

    Splits numeral+classifier (一个 -> 一/m 个/q) and demonstrative+classifier (这个 -> 这/r
    个/q) tokens; merges a number and a following date unit (2019 年 -> 2019年, tagged NT).
    Whitespace tokens are dropped; the cuts in :data:`RECUT` are redrawn.
    """
    out: list[tuple[str, str]] = []
    for word, flag in pairs:
        if not word.strip():
            continue
        if out and (out[-1][0], word) in RECUT:
            out[-1:] = RECUT[(out[-1][0], word)]
            continue
        if word in ("%", "％") and out and out[-1][1] == "m" and is_numeral(out[-1][0]):
            out[-1] = (out[-1][0] + word, "m")  # CTB: 3.5% is one CD token
            continue
        if word in DATE_UNITS and out and out[-1][1] == "m" and is_date(out[-1][0] + word):
            out[-1] = (out[-1][0] + word, "t")
            continue
        glued = split_counted_noun(word, out[-1][0] if out else "", flag)
        if glued and word not in WORD_TAGS:
            out.extend(glued)
            continue
        if flag in ("m", "mq") and word not in WORD_TAGS:
            parts = split_numeral(word)
            if parts and not is_date(word):
                out.extend([(parts[0], "m"), (parts[1], "q")])
                continue
        if flag.startswith(("r", "m")) and word not in WORD_TAGS:  # 这个/r, 这辆/mq
            parts = split_determiner(word)
            if parts:
                out.extend([(parts[0], "r"), (parts[1], "q")])
                continue
        out.append((word, flag))
    return out
