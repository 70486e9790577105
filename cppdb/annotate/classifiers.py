"""Which classifiers (measure words) can count the same noun, from CC-CEDICT's ``CL:`` notes.

CC-CEDICT lists the classifiers of a noun in its gloss (丈夫 … /husband/CL:個|个[ge4]/).  Two
classifiers are *compatible* when at least one noun takes both (位/名 both count 老师; 条/只 both
count 狗); 朵 (flowers) and 辆 (vehicles) share no noun, so 一朵[NP1] / 一辆[NP1] cannot be a
paraphrase whatever fills the slot.
"""
from __future__ import annotations

import re
from functools import lru_cache

from cppdb.text.cedict import packaged_entries

_CL_ITEM = re.compile(r"(?:[^|,\[\s]+\|)?([^|,\[\s]+)\[")


@lru_cache(maxsize=1)
def noun_classifiers() -> dict[str, frozenset[str]]:
    """Simplified noun -> the simplified classifiers CC-CEDICT lists for it."""
    table: dict[str, set[str]] = {}
    for entry in packaged_entries():
        for note in (g[3:] for g in entry.glosses if g.startswith("CL:")):
            table.setdefault(entry.simplified, set()).update(_CL_ITEM.findall(note))
    return {noun: frozenset(cls) for noun, cls in table.items()}


@lru_cache(maxsize=1)
def compatible_pairs() -> frozenset[str]:
    """``"c1|c2"`` for every ordered pair of distinct classifiers that share a noun."""
    pairs: set[str] = set()
    for classifiers in noun_classifiers().values():
        for a in classifiers:
            for b in classifiers:
                if a != b:
                    pairs.add(f"{a}|{b}")
    return frozenset(pairs)


@lru_cache(maxsize=1)
def known_classifiers() -> frozenset[str]:
    return frozenset(c for cls in noun_classifiers().values() for c in cls)
