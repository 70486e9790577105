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

from cppdb.annotate.types import AnnotatedSentence, Span
from cppdb.registry import Backend

NOUN_TOKENS = frozenset({"NN", "NR", "NT", "FW"})
NOMINAL_TOKENS = NOUN_TOKENS | {"PN"}
NUMERAL_TOKENS = frozenset({"CD", "OD"})
# phrase labels that may modify a following NP
NP_MODIFIERS = frozenset({"DNP", "CP", "QP", "DP", "ADJP"})
# phrases that may take 的 (DEG) to form a DNP
DNP_COMPLEMENTS = frozenset({"NP", "QP", "DP", "ADJP", "LCP", "PP", "NT", "PN"})


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
        return "grammar.zh.v1[builtin]"

    def add_spans(self, sentences: Sequence[AnnotatedSentence]) -> list[AnnotatedSentence]:
        return with_spans(sentences, [self.spans(s.tokens, s.pos) for s in sentences])

    def spans(self, tokens: Sequence[str], pos: Sequence[str]) -> tuple[Span, ...]:
        found: set[Span] = {Span(i, i + 1, tag) for i, tag in enumerate(pos)}
        items = _base_chunks(pos, found)
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
        if j - i >= 2 or (j < n and pos[j] in NOMINAL_TOKENS):
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
        if m > k:
            return Span(i, m, "ADJP")
    return None


def _base_chunks(pos: Sequence[str], found: set[Span]) -> list[Span]:
    """Left to right: base NPs (modifiers + head nouns), QPs, DPs, ADJPs; else tokens."""
    items: list[Span] = []
    i, n = 0, len(pos)
    while i < n:
        j, modifiers, last_noun = i, [], -1
        while j < n:
            mod = _modifier_at(pos, j, found)
            if mod is not None:
                modifiers.append(mod)
                j = mod.end
            elif pos[j] in NOMINAL_TOKENS:
                last_noun = j
                j += 1
            else:
                break
        if last_noun < 0:  # modifiers without a noun, or a non-nominal token
            if modifiers:
                first = modifiers[0]
                found.add(first)
                items.append(first)
                i = first.end
            else:
                items.append(Span(i, i + 1, pos[i]))
                i += 1
            continue
        end = last_noun + 1
        for mod in modifiers:
            if mod.end <= end:
                found.add(mod)
        _add_noun_runs(pos, i, end, found)
        found.add(Span(i, end, "NP"))
        items.append(Span(i, end, "NP"))
        i = end
    return items


def _add_noun_runs(pos: Sequence[str], start: int, end: int, found: set[Span]) -> None:
    """Inner NPs: every maximal run of nouns, and every pronoun, inside a base NP."""
    k = start
    while k < end:
        if pos[k] == "PN":
            found.add(Span(k, k + 1, "NP"))
            k += 1
        elif pos[k] in NOUN_TOKENS:
            m = k
            while m < end and pos[m] in NOUN_TOKENS:
                m += 1
            found.add(Span(k, m, "NP"))
            k = m
        else:
            k += 1


def _combine(items: list[Span], tokens: Sequence[str], found: set[Span]) -> None:
    """Rewrite the leftmost applicable rule until none applies (nests left to right)."""
    while True:
        for k in range(len(items)):
            new = _rule_at(items, tokens, k)
            if new is not None:
                span, width = new
                found.add(span)
                items[k:k + width] = [span]
                break
        else:
            return


def _rule_at(items: Sequence[Span], tokens: Sequence[str], k: int) -> tuple[Span, int] | None:
    first = items[k]
    second = items[k + 1] if k + 1 < len(items) else None
    if second is None:
        return None
    if first.label in DNP_COMPLEMENTS and second.label == "DEG":
        return Span(first.start, second.end, "DNP"), 2
    if first.label in ("AD", "VA"):
        m = k
        while m < len(items) and items[m].label == "AD":
            m += 1
        if (m + 1 < len(items) and items[m].label == "VA"
                and items[m + 1].label == "DEC"):  # (AD)* VA 的: predicative modifier
            return Span(first.start, items[m].end, "ADJP"), m - k + 1
    if first.label == "ADJP" and second.label == "DEC":
        return Span(first.start, second.end, "CP"), 2
    if first.label == "NP" and second.label == "LC":
        return Span(first.start, second.end, "LCP"), 2
    if first.label == "NP" and second.label == "ETC":
        return Span(first.start, second.end, "NP"), 2
    if first.label in NP_MODIFIERS:
        m = k
        while m < len(items) and items[m].label in NP_MODIFIERS:
            m += 1
        if m < len(items) and items[m].label == "NP":
            return Span(first.start, items[m].end, "NP"), m - k + 1
    third = items[k + 2] if k + 2 < len(items) else None
    if (first.label == "NP" and third is not None and third.label == "NP"
            and (second.label == "CC" or tokens[second.start] == "、")):
        return Span(first.start, third.end, "NP"), 3
    return None


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
        return "dependency.en.v1[builtin]"

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
            members = _subtree(i, children)
            start, end = min(members), max(members) + 1
            if end - start != len(members):
                continue  # not contiguous (non-projective): no phrase
            label = _en_label(i, pos, deprels, children, end - start)
            if label:
                found.add(Span(start, end, label))
        return sort_spans(found)


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
