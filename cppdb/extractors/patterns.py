"""Aligned patterns: aligned phrase pairs with aligned sub-phrase pairs replaced by slots.

Inside an aligned phrase pair (the *outer* pair), one or two aligned sub-phrase pairs are
replaced by co-indexed slots on both sides (SPEC §1.5, PPDB/Hiero style):

* at most two slots (``max_slots``), sub-pairs disjoint on both sides;
* at least one terminal (word) left on each side;
* slots not adjacent on the Chinese side (the side whose paraphrases we collect — Hiero's
  "source" side here); ``adjacent_slots`` chooses ``forbid-zh`` (default), ``forbid-both``
  or ``allow``;
* a pattern has at most ``max_pattern_len`` symbols (words + slots) on each side.

Slot labels are the Chinese sub-phrase label on the Chinese side (``[NP1]``) and the English
label on the English side.  Chinese slots are numbered in Chinese word order (so one Chinese
pattern always has one spelling); English slots in English order (so the pivot key is
canonical).  ``swapped`` says whether the two orders differ; ``slot_signature`` lists the
Chinese slot labels in English order, which is what two patterns sharing an English pivot
must agree on.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

from cppdb.annotate.types import AnnotatedSentence, Span
from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError
from cppdb.extractors.phrase_pairs import VERB_WORDS, AlignedPhrase

_BILINGUAL = toml_defaults("bilingual")

ADJACENCY_RULES = ("forbid-zh", "forbid-both", "allow")


@dataclass(frozen=True)
class PatternSettings:
    max_slots: int = _BILINGUAL["max_slots"]
    max_pattern_len: int = _BILINGUAL["max_pattern_len"]
    adjacent_slots: str = _BILINGUAL["adjacent_slots"]

    def __post_init__(self) -> None:
        if self.max_slots not in (1, 2):
            raise ConfigError(f"max_slots must be 1 or 2, got {self.max_slots}",
                              hint="PPDB/Hiero patterns have at most two slots")
        if self.adjacent_slots not in ADJACENCY_RULES:
            raise ConfigError(f"unknown adjacent_slots rule '{self.adjacent_slots}'",
                              hint=f"choose one of: {', '.join(ADJACENCY_RULES)}")


@dataclass(frozen=True)
class Pattern:
    """One pattern occurrence; ``links`` are (zh, en) positions inside the pattern tokens."""

    lhs: str
    en_label: str
    zh_tokens: tuple[str, ...]
    zh_pos: tuple[str, ...]
    en_tokens: tuple[str, ...]
    links: tuple[tuple[int, int], ...]
    slot_signature: tuple[str, ...]
    swapped: bool
    outer: AlignedPhrase


def slot_token(label: str, index: int) -> str:
    return f"[{label}{index}]"


def _inside(inner: Span, outer: Span) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end


def _disjoint(a: Span, b: Span) -> bool:
    return a.end <= b.start or b.end <= a.start


def _adjacent(a: Span, b: Span) -> bool:
    return a.end == b.start or b.end == a.start


def sub_pairs(outer: AlignedPhrase, aligned: Sequence[AlignedPhrase]) -> list[AlignedPhrase]:
    """Aligned pairs strictly smaller than ``outer`` on both sides and inside it; a single
    verb on either side is no slot."""
    return [q for q in aligned
            if q.zh.label not in VERB_WORDS and q.en.label not in VERB_WORDS
            and _inside(q.zh, outer.zh) and _inside(q.en, outer.en)
            and len(q.zh) < len(outer.zh) and len(q.en) < len(outer.en)]


def _allowed(slots: Sequence[AlignedPhrase], outer: AlignedPhrase,
             settings: PatternSettings) -> bool:
    if len(slots) == 2:
        a, b = slots
        if not (_disjoint(a.zh, b.zh) and _disjoint(a.en, b.en)):
            return False
        if settings.adjacent_slots != "allow" and _adjacent(a.zh, b.zh):
            return False
        if settings.adjacent_slots == "forbid-both" and _adjacent(a.en, b.en):
            return False
    zh_covered = sum(len(s.zh) for s in slots)
    en_covered = sum(len(s.en) for s in slots)
    zh_len = len(outer.zh) - zh_covered + len(slots)
    en_len = len(outer.en) - en_covered + len(slots)
    return (zh_covered < len(outer.zh) and en_covered < len(outer.en)
            and zh_len <= settings.max_pattern_len and en_len <= settings.max_pattern_len)


def _substitute(tokens: Sequence[str], pos: Sequence[str], outer: Span,
                slots: Sequence[tuple[Span, str]]) -> tuple[list[str], list[str], dict[int, int]]:
    """Replace slot spans (given in order, with their slot tokens) inside ``outer``.

    Returns the new tokens and tags and a map sentence index → pattern position for every
    kept word and every slot span start.
    """
    out_tokens: list[str] = []
    out_pos: list[str] = []
    where: dict[int, int] = {}
    slot_at = {span.start: (span, tok) for span, tok in slots}
    i = outer.start
    while i < outer.end:
        if i in slot_at:
            span, tok = slot_at[i]
            for k in range(span.start, span.end):
                where[k] = -1 - len(out_tokens)     # negative: inside a slot
            out_tokens.append(tok)
            out_pos.append("")
            i = span.end
        else:
            where[i] = len(out_tokens)
            out_tokens.append(tokens[i])
            out_pos.append(pos[i] if i < len(pos) else "")
            i += 1
    return out_tokens, out_pos, where


def build_pattern(outer: AlignedPhrase, slots: Sequence[AlignedPhrase],
                  zh: AnnotatedSentence, en: AnnotatedSentence) -> Pattern:
    zh_order = sorted(slots, key=lambda q: q.zh.start)
    en_order = sorted(slots, key=lambda q: q.en.start)
    zh_slots = [(q.zh, slot_token(q.zh.label, k + 1)) for k, q in enumerate(zh_order)]
    en_slots = [(q.en, slot_token(q.en.label, k + 1)) for k, q in enumerate(en_order)]
    zh_tokens, zh_pos, zh_where = _substitute(zh.tokens, zh.pos, outer.zh, zh_slots)
    en_tokens, _en_pos, en_where = _substitute(en.tokens, en.pos, outer.en, en_slots)
    links = set()
    for i, j in outer.links:
        zi, ej = zh_where.get(i, 0), en_where.get(j, 0)
        if zi >= 0 and ej >= 0:
            links.add((zi, ej))
    for q in slots:
        links.add((-1 - zh_where[q.zh.start], -1 - en_where[q.en.start]))
    return Pattern(
        lhs=outer.zh.label, en_label=outer.en.label, zh_tokens=tuple(zh_tokens),
        zh_pos=tuple(zh_pos), en_tokens=tuple(en_tokens), links=tuple(sorted(links)),
        slot_signature=tuple(q.zh.label for q in en_order),
        swapped=zh_order[0] is not en_order[0], outer=outer)


def patterns_of(outer: AlignedPhrase, aligned: Sequence[AlignedPhrase],
                zh: AnnotatedSentence, en: AnnotatedSentence,
                settings: PatternSettings) -> Iterator[Pattern]:
    """Every one- and (if allowed) two-slot pattern of one outer aligned phrase pair."""
    subs = sub_pairs(outer, aligned)
    for size in range(1, settings.max_slots + 1):
        for slots in combinations(subs, size):
            if _allowed(slots, outer, settings):
                yield build_pattern(outer, slots, zh, en)
