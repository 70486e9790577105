"""Labelled phrase spans without a constituency parser (the offline substitutes).

The papers take phrases from constituency trees.  Offline we substitute, explicitly:

* :class:`ChinesePhraseGrammar` — a CTB-style chunk grammar over CTB POS tags producing
  nested NP / QP / DP / ADJP / DNP / CP / LCP spans (docs/annotation.md lists the rules);
* :class:`EnglishDependencyPhrases` — the contiguous dependency subtree of every token,
  labelled from its head's Penn tag (NP, ADJP, QP, ADVP, PP, VP, S).

Both also emit one single-token span per token labelled with its POS tag (like a tree's
preterminals), so word-level labels (CD JJ NN NR NT OD PN ...) exist as with a real parse.
Spans are deduplicated and sorted by (start, -end, label): same input, same output.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import ClassVar

from cppdb.annotate.ctb_map import DETERMINERS
from cppdb.annotate.types import AnnotatedSentence, Span
from cppdb.registry import Backend

HEAD_NOUNS = frozenset({"NN", "NR", "FW"})   # tokens that head a common/proper-noun NP
NUMERAL_TOKENS = frozenset({"CD", "OD"})
# phrase labels that may modify a following noun NP
NP_MODIFIERS = frozenset({"DNP", "CP", "QP", "DP", "ADJP"})
# phrases that may take 的 (DEG) to form a DNP
DNP_COMPLEMENTS = frozenset({"NP", "QP", "DP", "ADJP", "LCP", "PP"})
#: event classifiers: 看 一 下, 瞪 了 一 眼 — their QP does not count a following noun
EVENT_CLASSIFIERS = frozenset({"下", "眼", "遍", "趟", "顿", "番"})
#: items after which an NP is no subject (IP rule).  After a verb, an NP + 的 closes a relative
#: clause (CP), not a DNP: 画 [这 幅画] 的 时候 is (NP (CP 画这幅画的) 时候)
CLAUSE_OPENERS = frozenset({"VV", "VC", "VE", "VA", "P", "VP", "BA", "LB", "SB"})
#: word tags a verb phrase is built on (CTB VP heads)
VERB_TAGS = frozenset({"VV", "VC", "VE", "VA"})
#: what a verb or preposition takes as its object
OBJECT_LABELS = frozenset({"NP", "QP", "DP", "LCP"})
PERSONAL_PRONOUNS = frozenset({"我", "你", "您", "他", "她", "它", "我们", "你们", "他们", "她们",
                               "咱们", "咱"})
#: nouns a bare personal pronoun possesses without 的 (我 妈妈, 我们 学校: CTB NP (PN NN))
RELATIONAL_NOUNS = frozenset(
    "爸爸 妈妈 爸 妈 父亲 母亲 父母 哥哥 姐姐 弟弟 妹妹 兄弟 姐妹 儿子 女儿 孩子 妻子 丈夫 太太 "
    "老婆 老公 爷爷 奶奶 外公 外婆 叔叔 阿姨 舅舅 伯伯 家 家人 家里 朋友 男朋友 女朋友 老师 "
    "同学 老板 学校 公司 班 国家".split())


@dataclasses.dataclass(frozen=True)
class _Item:
    """A chunk while rules rewrite the sentence: its span, label, and for NPs the head kind
    (``noun``: common/proper noun; ``pronoun``; ``time``: NT words) — pronouns and time
    words are NPs of their own that modifiers and neighbouring nouns never join; for VPs
    ``open`` marks a verb whose complement is not a phrase of the grammar (忘 了 | 问 汤姆),
    to which no adverb, PP or subject attaches."""

    start: int
    end: int
    label: str
    kind: str = ""

    @property
    def span(self) -> Span:
        return Span(self.start, self.end, self.label)


def sort_spans(spans: Iterable[Span]) -> tuple[Span, ...]:
    """Deduplicate and sort by (start, -end, label)."""
    return tuple(sorted(set(spans), key=lambda s: (s.start, -s.end, s.label)))


def with_spans(sentences: Sequence[AnnotatedSentence],
               spans: Sequence[tuple[Span, ...]]) -> list[AnnotatedSentence]:
    return [dataclasses.replace(s, spans=sp) for s, sp in zip(sentences, spans)]


class ChinesePhraseGrammar(Backend):
    """CTB-style chunk grammar over CTB POS (substitute for a constituency parser)."""

    name: ClassVar[str] = "grammar"
    description: ClassVar[str] = "CTB chunk grammar over POS: nested NP/QP/DNP/ADJP (offline)"

    def signature(self) -> str:
        return "grammar.zh.v4[builtin]"

    def add_spans(self, sentences: Sequence[AnnotatedSentence]) -> list[AnnotatedSentence]:
        return with_spans(sentences, [self.spans(s.tokens, s.pos) for s in sentences])

    def spans(self, tokens: Sequence[str], pos: Sequence[str]) -> tuple[Span, ...]:
        found: set[Span] = {Span(i, i + 1, tag) for i, tag in enumerate(pos)}
        items = _base_chunks(tokens, pos, found)
        _combine(items, tokens, found)
        return sort_spans(found)


def _numeral_run(pos: Sequence[str], i: int) -> int:
    """End of a QP starting at ``i``: (CD|OD)+ M?  (returns ``i`` if none)."""
    j = i
    while j < len(pos) and pos[j] in NUMERAL_TOKENS:
        j += 1
    if j > i and j < len(pos) and pos[j] == "M":
        j += 1
    return j


def _modifier_at(pos: Sequence[str], i: int, found: set[Span]) -> Span | None:
    """A QP, DP or JJ-ADJP starting at ``i`` (spans inside it are added to ``found``)."""
    n = len(pos)
    j = _numeral_run(pos, i)
    if j > i:
        if j - i >= 2 or (j < n and pos[j] in HEAD_NOUNS | {"NT"}):
            return Span(i, j, "QP")
        return None
    if pos[i] == "DT":
        k = _numeral_run(pos, i + 1)
        if k > i + 1:
            found.add(Span(i + 1, k, "QP"))
        elif k < n and pos[k] == "M":  # 这 个: (DP (DT 这) (CLP (M 个)))
            k += 1
            found.add(Span(i + 1, k, "CLP"))
        return Span(i, k, "DP")
    if pos[i] in ("AD", "JJ"):
        k = i
        while k < n and pos[k] == "AD":
            k += 1
        m = k
        while m < n and pos[m] == "JJ":
            m += 1
        if m > k and m < n and pos[m] in HEAD_NOUNS:  # attributive only: 新/JJ 机场
            return Span(i, m, "ADJP")
    return None


def _counts_things(tokens: Sequence[str], span: Span) -> bool:
    """False for a QP/DP ending in an event classifier (看 一 下 / 瞪 了 一 眼)."""
    return span.label not in ("QP", "DP") or tokens[span.end - 1] not in EVENT_CLASSIFIERS


def _base_chunks(tokens: Sequence[str], pos: Sequence[str], found: set[Span]) -> list[_Item]:
    """Left to right: pronoun NPs, time NPs (NT+), noun NPs (modifiers + NN/NR/FW nouns),
    QPs, DPs; else single tokens.  A base NP never contains a verb, a pronoun beside other
    words, or a time word beside a noun."""
    items: list[_Item] = []
    i, n = 0, len(pos)
    while i < n:
        if pos[i] == "PN":
            i = _pronoun_chunk(tokens, pos, i, items, found)
            continue
        j, modifiers = i, []
        while j < n:
            mod = _modifier_at(pos, j, found)
            if mod is not None and mod.label == "DP" and any(m.label == "QP" for m in modifiers):
                break  # CTB order is DP QP NP (这 一 个 人): 一 次 | 这 个 药
            if mod is None or not _counts_things(tokens, mod):
                if mod is not None and not modifiers:  # 一 下: a QP that counts no noun
                    modifiers.append(mod)
                break
            modifiers.append(mod)
            j = mod.end
        head_tags = HEAD_NOUNS if j < n and pos[j] != "NT" else {"NT"}
        end = j
        while end < n and pos[end] in head_tags:
            end += 1
        if end == j:  # modifiers without a noun, or a non-nominal token
            first = modifiers[0] if modifiers else None
            if first is not None:
                found.add(first)
                items.append(_Item(first.start, first.end, first.label))
                i = first.end
            else:
                items.append(_Item(i, i + 1, pos[i]))
                i += 1
            continue
        found.update(modifiers)
        _add_noun_runs(pos, j, end, found)
        found.add(Span(i, end, "NP"))
        items.append(_Item(i, end, "NP", "time" if head_tags == {"NT"} else "noun"))
        i = end
    return items


def _pronoun_chunk(tokens: Sequence[str], pos: Sequence[str], i: int, items: list[_Item],
                   found: set[Span]) -> int:
    """A pronoun is its own NP; a personal pronoun + relational noun (我 妈妈) is an NP."""
    found.add(Span(i, i + 1, "NP"))
    k = i + 1
    if (tokens[i] in PERSONAL_PRONOUNS and k < len(pos) and tokens[k] in RELATIONAL_NOUNS
            and pos[k] == "NN" and (k + 1 == len(pos) or pos[k + 1] not in HEAD_NOUNS)):
        found.update({Span(k, k + 1, "NP"), Span(i, k + 1, "NP")})
        items.append(_Item(i, k + 1, "NP", "noun"))
        return k + 1
    items.append(_Item(i, k, "NP", "pronoun"))
    return k


def _add_noun_runs(pos: Sequence[str], start: int, end: int, found: set[Span]) -> None:
    """Inner NPs: every maximal run of head nouns (or of time words) inside a base NP."""
    k = start
    while k < end:
        group = HEAD_NOUNS if pos[k] in HEAD_NOUNS else {"NT"} if pos[k] == "NT" else None
        if group is None:
            k += 1
            continue
        m = k
        while m < end and pos[m] in group:
            m += 1
        found.add(Span(k, m, "NP"))
        k = m


def _combine(items: list[_Item], tokens: Sequence[str], found: set[Span],
             verbal: bool = True) -> None:
    """Rewrite the leftmost applicable rule until none applies (nests left to right).

    Nominal rules run first; a verbal rule (PP, VP, CP, IP) applies only when no nominal one
    does, so objects and subjects are complete NPs before a verb takes them."""
    rule_sets = (_rule_at, _verbal_rule_at) if verbal else (_rule_at,)
    while True:
        for rule in rule_sets:
            for k in range(len(items)):
                new = rule(items, tokens, k)
                if new is not None:
                    item, width = new
                    if item.end - item.start > 1:  # a unary VP (bare verb) is no new phrase
                        found.add(item.span)
                    items[k:k + width] = [item]
                    break
            else:
                continue
            break
        else:
            return


def _modified_head(items: Sequence[_Item], k: int) -> int | None:
    """Index of the noun/time NP that the modifiers starting at ``k`` modify, if any.

    Modifiers may still be unbuilt: 很 大 的 (AD VA DEC), X 的 (X DEG)."""
    m = k
    while m < len(items):
        item = items[m]
        if item.label == "NP":
            return m if item.kind in ("noun", "time") else None
        if item.label in NP_MODIFIERS or item.label in ("DEG", "DEC", "AD", "VA"):
            m += 1
            continue
        if item.label in DNP_COMPLEMENTS and m + 1 < len(items) and items[m + 1].label == "DEG":
            m += 1
            continue
        return None
    return None


def _rule_at(items: Sequence[_Item], tokens: Sequence[str], k: int
             ) -> tuple[_Item, int] | None:
    first = items[k]
    second = items[k + 1] if k + 1 < len(items) else None
    if second is None:
        return None
    if (first.label in DNP_COMPLEMENTS and second.label == "DEG"
            and (first.kind == "pronoun"  # 清扫 [你 的] 房间: a pronoun + 的 is a possessor
                 or not (k > 0 and items[k - 1].label in VERB_TAGS | {"VP"}))
            and _modified_head(items, k + 2) is not None):  # DNP only before its noun head
        return _Item(first.start, second.end, "DNP"), 2
    if first.label in ("AD", "VA"):
        m = k
        while m < len(items) and items[m].label == "AD":
            m += 1
        if (m + 1 < len(items) and items[m].label == "VA" and items[m + 1].label == "DEC"
                and _modified_head(items, m + 2) is not None):  # (AD)* VA 的 + noun
            return _Item(first.start, items[m].end, "ADJP"), m - k + 1
    if first.label == "ADJP" and second.label == "DEC":
        return _Item(first.start, second.end, "CP"), 2
    if first.label == "NP" and second.label == "LC":
        return _Item(first.start, second.end, "LCP"), 2
    if first.label == "NP" and second.label == "ETC":
        return _Item(first.start, second.end, "NP", first.kind), 2
    if first.label in NP_MODIFIERS:
        m = k
        while m < len(items) and items[m].label in NP_MODIFIERS:
            m += 1
        if m < len(items) and items[m].label == "NP" and items[m].kind in ("noun", "time"):
            if all(_counts_things(tokens, it.span) for it in items[k:m]) and not (
                    tokens[items[m].start] in DETERMINERS
                    and any(it.label == "QP" for it in items[k:m])):  # 一 次 | 这 个 药
                return _Item(first.start, items[m].end, "NP", "noun"), m - k + 1
    third = items[k + 2] if k + 2 < len(items) else None
    if (first.label == "NP" and third is not None and third.label == "NP"
            and (second.label == "CC" or tokens[second.start] == "、")):
        kind = "pronoun" if first.kind == third.kind == "pronoun" else "noun"
        return _Item(first.start, third.end, "NP", kind), 3
    return None


def _verbal_rule_at(items: Sequence[_Item], tokens: Sequence[str], k: int
                    ) -> tuple[_Item, int] | None:
    """PP, VP, CP (relative clause) and IP rules of the chunk grammar (docs/annotation.md).

    A verb takes its aspect marker and its object or post-verbal PP when it becomes a VP
    (出生 于 上海, 死 于 一场车祸), so a VP never grows to the right afterwards; a VP then takes
    preverbal PPs and adverbs (在 一场车祸 中 丧生, 不 喜欢 苹果), and a subject NP makes it an
    IP when the clause ends there.  A bare verb becomes a unary VP, which is no new phrase."""
    first = items[k]
    nxt = items[k + 1] if k + 1 < len(items) else None
    if first.label == "P" and nxt is not None and nxt.label in OBJECT_LABELS:
        return _Item(first.start, nxt.end, "PP"), 2
    if first.label in VERB_TAGS:
        return _verb_phrase(items, k)
    if (first.label in ("PP", "AD", "ADVP") and nxt is not None and nxt.label == "VP"
            and nxt.kind != "open"  # 最终 做 | 了 点 正确 的 事: the VP is incomplete
            and not _takes_verbal_complement(items, k + 1)):  # 已经 会 | 走路: wait
        return _Item(first.start, nxt.end, "VP"), 2
    if (first.label == "VP" and nxt is not None and nxt.label in ("DEC", "DEG")
            and _modified_head(items, k + 2) is not None):  # 画 这幅画 的 | 时候
        return _Item(first.start, nxt.end, "CP"), 2
    if (first.label == "NP" and first.kind in ("noun", "pronoun", "time") and nxt is not None
            and nxt.label == "VP" and nxt.kind != "open"
            and not (k > 0 and items[k - 1].label in CLAUSE_OPENERS)
            and not (k > 0 and items[k - 1].label == "NP")  # 我 | 刚才 在家: subject outside
            and (k + 2 == len(items) or items[k + 2].label in CLAUSE_ENDS)):
        return _Item(first.start, nxt.end, "IP"), 2
    return None


def _verb_phrase(items: Sequence[_Item], k: int) -> tuple[_Item, int] | None:
    """The VP headed by the verb at ``k`` (None while a following PP is still unbuilt)."""
    m = k + 1
    if m < len(items) and items[m].label == "AS":
        m += 1
    if m < len(items):
        item = items[m]
        later = items[m + 1] if m + 1 < len(items) else None
        if item.label == "P" and later is not None and later.label in OBJECT_LABELS:
            return None  # 死 于 一场车祸: take the PP once it is built
        # 是 takes a nominal predicate only: in 是 在 X 出生 的 the PP belongs to 出生
        if item.label in OBJECT_LABELS or (item.label == "PP" and items[k].label != "VC"):
            m += 1
    if m > k + 1 and _dangles(items, k, m):
        return _Item(items[k].start, items[k].end, "VP", "open"), 1  # nothing attaches
    return _Item(items[k].start, items[m - 1].end, "VP"), m - k


#: items that may follow a complete clause
CLAUSE_ENDS = frozenset({"PU", "SP", "CS", "CC"})
#: what may follow a VP ending in an aspect marker or a bare QP/DP: the clause ends, or 的
#: closes a relative clause
_AFTER_OBJECT = CLAUSE_ENDS | {"DEC", "DEG"}
#: after a bare pronoun/name object these start an embedded clause or a second object
#: (觉得 我 | 很 聪明, 教 我们 | 法语): the pronoun is no object of the verb alone
_AFTER_BARE_OBJECT = VERB_TAGS | {"VP", "AD", "ADVP", "P", "PP", "BA", "LB", "SB", "NP", "QP",
                                  "DP"}


def _dangles(items: Sequence[_Item], k: int, m: int) -> bool:
    """Whether the VP items[k:m] (verb + aspect/object) would stop short of its complement:
    an aspect marker or a bare QP/DP object followed by more words (忘 了 | 问 汤姆, 来 一 份 |
    一样 的), or a bare pronoun/name object followed by a clause or a second object."""
    if m >= len(items):
        return False
    after, last = items[m], items[m - 1]
    if last.label in ("AS", "QP", "DP") and after.label not in _AFTER_OBJECT:
        return True
    bare = last.label == "NP" and last.end - last.start == 1  # one pronoun, name or noun
    return bare and after.label in _AFTER_BARE_OBJECT


def _takes_verbal_complement(items: Sequence[_Item], k: int) -> bool:
    """A one-word VP directly followed by a verb or verb phrase (会 走路, 打算 买): a modal or
    control verb whose complement is still unbuilt, so no adverb attaches to it alone."""
    vp, after = items[k], items[k + 1] if k + 1 < len(items) else None
    return vp.end - vp.start == 1 and after is not None and after.label in VERB_TAGS | {"VP"}


# -- English -----------------------------------------------------------------------------
_EN_LABELS = (
    (("NN", "NNS", "NNP", "NNPS", "PRP", "EX", "DT", "WP"), "NP"),
    (("JJ", "JJR", "JJS"), "ADJP"),
    (("CD",), "QP"),
    (("RB", "RBR", "RBS"), "ADVP"),
    (("IN", "TO"), "PP"),
)
_EN_LABEL_OF = {tag: label for tags, label in _EN_LABELS for tag in tags}
_ARGUMENT_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "obj", "pobj", "iobj", "dative",
                            "attr", "appos", "conj", "ROOT", "root", "npadvmod", "oprd",
                            "obl", "nmod", "nsubj:pass", "csubj"})
_NP_SINGLE = frozenset({"NN", "NNS", "NNP", "NNPS", "PRP", "CD", "EX"})


def _subject_deps(deprel: str) -> bool:
    return deprel.startswith("nsubj") or deprel.startswith("csubj") or deprel == "expl"


class EnglishDependencyPhrases(Backend):
    """Contiguous dependency subtrees labelled by their head (substitute for a parser)."""

    name: ClassVar[str] = "dependency"
    description: ClassVar[str] = "English phrases from contiguous dependency subtrees (offline)"

    def signature(self) -> str:
        return "dependency.en.v2[builtin]"

    def add_spans(self, sentences: Sequence[AnnotatedSentence]) -> list[AnnotatedSentence]:
        return with_spans(sentences, [self.spans(s.pos, s.heads, s.deprels) for s in sentences])

    def spans(self, pos: Sequence[str], heads: Sequence[int],
              deprels: Sequence[str]) -> tuple[Span, ...]:
        n = len(pos)
        found: set[Span] = {Span(i, i + 1, tag) for i, tag in enumerate(pos)}
        if len(heads) != n:
            return sort_spans(found)
        children: list[list[int]] = [[] for _ in range(n)]
        for i, head in enumerate(heads):
            if 0 <= head < n and head != i:
                children[head].append(i)
        for i in range(n):
            members = _trim_punctuation(_subtree(i, children), pos)
            span = _contiguous(members)
            if span is None:
                continue  # not contiguous (non-projective): no phrase
            start, end = span
            label = _en_label(i, pos, deprels, children, end - start)
            if label:
                found.add(Span(start, end, label))
            found.update(_projections(i, label, members, pos, deprels, children))
        return sort_spans(found)


_PUNCTUATION_TAGS = frozenset({".", ",", ":", "``", "''", "-LRB-", "-RRB-", "HYPH", "NFP", "$",
                               "#"})


def _trim_punctuation(members: list[int], pos: Sequence[str]) -> list[int]:
    """Drop punctuation at either edge of a phrase (a sentence's final period is no part of
    its S or VP)."""
    members = sorted(members)
    while len(members) > 1 and pos[members[-1]] in _PUNCTUATION_TAGS:
        members.pop()
    while len(members) > 1 and pos[members[0]] in _PUNCTUATION_TAGS:
        members.pop(0)
    return members


def _contiguous(members: Sequence[int]) -> tuple[int, int] | None:
    if not members:
        return None
    start, end = min(members), max(members) + 1
    return (start, end) if end - start == len(members) else None


def _projections(head: int, label: str | None, members: list[int], pos: Sequence[str],
                 deprels: Sequence[str], children: Sequence[Sequence[int]]) -> set[Span]:
    """Phrases a constituency parse has inside a dependency subtree (SPEC §1.3):

    * a clause's VP — the subtree without its subject (she [was born in Shanghai]);
    * a noun's base NP — the head with its left dependents only, when the subtree goes on
      to the right ([the red crowned cranes] in the park)."""
    out: set[Span] = set()
    if label == "S":
        subject = {m for c in children[head] if c < len(deprels) and _subject_deps(deprels[c])
                   for m in _subtree(c, children)}
        rest = [m for m in members if m not in subject]
        while rest and (pos[rest[0]] in _PUNCTUATION_TAGS or deprels[rest[0]] in ("cc", "mark")):
            rest.pop(0)
        span = _contiguous(rest)
        if span is not None and span[1] - span[0] > 1 and rest != members:
            out.add(Span(span[0], span[1], "VP"))
    elif label == "NP" and members[-1] > head and members[0] < head:
        left = [m for m in members if m <= head]
        span = _contiguous(left)
        if span is not None:
            out.add(Span(span[0], span[1], "NP"))
    return out


def _subtree(root: int, children: Sequence[Sequence[int]]) -> list[int]:
    members, stack = [], [root]
    while stack:
        node = stack.pop()
        if len(members) > len(children):  # cycle guard on malformed heads
            break
        members.append(node)
        stack.extend(children[node])
    return members


def _en_label(i: int, pos: Sequence[str], deprels: Sequence[str],
              children: Sequence[Sequence[int]], size: int) -> str | None:
    tag = pos[i]
    deprel = deprels[i] if i < len(deprels) else ""
    if size == 1:
        return "NP" if tag in _NP_SINGLE and deprel in _ARGUMENT_DEPS else None
    if tag in ("VBN", "VBG") and deprel == "amod":  # "red crowned (cranes)"
        return "ADJP"
    if tag.startswith("VB") or tag == "MD":
        has_subject = any(_subject_deps(deprels[c]) for c in children[i] if c < len(deprels))
        return "S" if has_subject else "VP"
    if tag == "CD" and deprel in _ARGUMENT_DEPS:
        return "NP"
    return _EN_LABEL_OF.get(tag)
