"""What CC-CEDICT knows about headline words: abbreviation long forms and English glosses.

Headlines abbreviate names (京 北京, 沪 上海, 粤 广东, 华 中国, 交大 交通大学, 中俄 = 中国 + 俄罗斯)
and use terse or formal verbs where the sentence has another (逝世/去世, 抓获/逮捕, 夺冠/冠军).
The dictionary states both, for words it has never seen in a headline:

* **long forms** — a gloss that says ``abbr. for 北京大學|北京大学`` or ``abbr. for Spain
  西班牙[...]`` names the long form in Chinese; ``abbr. for Beijing`` names it in English, and the
  proper noun whose gloss is ``Beijing`` (北京) is the long form; ``abbr. to 滬|沪`` in the entry
  of 上海 names the short form from the long one.  A proper-noun entry of one character
  (capitalised pinyin: 杭 ``Hangzhou``, 中 ``China``) expands to the proper nouns its glosses name.
* **glosses** — each word's English glosses, normalised (parentheses, ``CL:``, ``surname``
  dropped), and their content-word stems: two words that share a gloss (``to arrest``) or share
  a character and a gloss stem (夺冠 ``to win a championship`` / 冠军 ``champion``) say the same.

Built once per process from the packaged dictionary (:func:`cppdb.text.cedict.packaged_entries`).
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache

from cppdb.text.cedict import CedictLine, packaged_entries

_HAN_FORM = re.compile(r"[\u3400-\u9fff]+(?:\|([\u3400-\u9fff]+))?")
_EXPANDS = re.compile(r"\b(?:abbr\. (?:for|of)|short (?:name )?for)\s+(.*)", re.I)
_SHORTENS = re.compile(r"\b(?:abbr\. to|short name)\s+(.*)", re.I)
_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_WORD = re.compile(r"[a-z]+")
#: English words that carry no meaning of their own in a gloss
_STOP = frozenset("""the and for with sth one one's oneself etc from into onto about over
under that this those these are was were been being have has had not who whom which what
its their his her your our out off very more most some any all used also often esp
something someone somebody""".split())
_STEM = 5   # gloss words agreeing on their first five letters (champion/championship) match
#: a stem shared by more dictionary words than this says little ("city" glosses 3,269 words,
#: "new" 479, "day" 372; "champ" 37, "polic" 145, "rescu" 36): only rarer stems are evidence
_MAX_STEM_WORDS = 350
_NOTES = ("cl:", "surname ", "variant of", "old variant", "see ", "used in ", "also written")


@dataclass(frozen=True)
class Lexicon:
    """``long_forms``: short form -> long forms; ``glosses``: word -> normalised glosses;
    ``stems``: word -> stems of its gloss content words."""

    long_forms: dict[str, tuple[str, ...]]
    glosses: dict[str, frozenset[str]]
    stems: dict[str, frozenset[str]]

    def expansions(self, word: str) -> tuple[str, ...]:
        return self.long_forms.get(word, ())

    def same_meaning(self, a: str, b: str) -> int:
        """2 = a shared gloss; 1 = a shared character and a shared (rare) gloss stem;
        0 = neither.  A one-word gloss is ambiguous in English (局势 "state" / 国家 "state",
        强 "strong" / 扎实 "strong"): it counts only between words sharing a character."""
        shared_chars = bool(set(a) & set(b))
        shared = self.glosses.get(a, frozenset()) & self.glosses.get(b, frozenset())
        if any(" " in gloss or shared_chars for gloss in shared):
            return 2
        if shared_chars and self.stems.get(a, frozenset()) & self.stems.get(b, frozenset()):
            return 1
        return 0

    def is_verb(self, word: str) -> bool:
        """The dictionary glosses ``word`` as a verb ("to meet with" for 会见, which jieba's
        dictionary tags as a noun)."""
        return any(gloss.startswith("to ") for gloss in self.glosses.get(word, ()))

    def pieces(self, word: str) -> list[str]:
        """``word`` cut greedily into the longest dictionary words (single characters where
        none fits): 俄海军 -> 俄 + 海军, 物价上涨 -> 物价 + 上涨."""
        out, start = [], 0
        while start < len(word):
            stop = next(end for end in range(len(word), start, -1)
                        if end - start == 1 or word[start:end] in self.glosses)
            out.append(word[start:stop])
            start = stop
        return out


def _simplified_forms(text: str) -> list[str]:
    """Chinese forms named in a gloss, simplified (``北京大學|北京大学`` -> 北京大学)."""
    return [m.group(1) or m.group(0) for m in _HAN_FORM.finditer(text)]


def _english_names(text: str) -> list[str]:
    """Capitalised English names at the start of a gloss tail ("Beijing", "Ningbo")."""
    head = _PAREN.sub("", text).split(",")[0].split(";")[0].strip()
    return [head] if head[:1].isupper() else []


def normalise_gloss(gloss: str) -> str | None:
    """A gloss without parentheses and notes, lower-cased; None for a note-only gloss."""
    text = _PAREN.sub("", gloss).strip().lower()
    text = re.sub(r"^(?:fig\.|lit\.|abbr\.)\s*", "", text).strip(" .,;")
    if not text or any(text.startswith(note) for note in _NOTES):
        return None
    return text


def _gloss_stems(glosses: frozenset[str]) -> frozenset[str]:
    return frozenset(w[:_STEM] for g in glosses for w in _WORD.findall(g)
                     if len(w) >= 3 and w not in _STOP)


def _name_index(entries: tuple[CedictLine, ...]) -> dict[str, list[str]]:
    """English name -> multi-character proper nouns whose first gloss is that name."""
    index: dict[str, list[str]] = defaultdict(list)
    for entry in entries:
        if len(entry.simplified) < 2 or not entry.pinyin[:1].isupper() or not entry.glosses:
            continue
        first = _PAREN.sub("", entry.glosses[0]).split(",")[0].strip()
        for name in {first, first.split(" ")[0]}:
            if name[:1].isupper() and entry.simplified not in index[name]:
                index[name].append(entry.simplified)
    return index


def _expansion_pairs(entries: tuple[CedictLine, ...],
                     names: dict[str, list[str]]) -> dict[str, list[str]]:
    """Short form -> long forms, from every gloss that names one side of an abbreviation."""
    pairs: dict[str, list[str]] = defaultdict(list)

    def add(short: str, long: str) -> None:
        if len(long) > len(short) and long != short and long not in pairs[short]:
            pairs[short].append(long)

    for entry in entries:
        word, proper = entry.simplified, entry.pinyin[:1].isupper()
        for gloss in entry.glosses:
            expands, shortens = _EXPANDS.search(gloss), _SHORTENS.search(gloss)
            if expands:
                tail = expands.group(1)
                for long in _simplified_forms(tail) + [n for name in _english_names(tail)
                                                       for n in names.get(name, [])]:
                    add(word, long)
            elif shortens:
                for short in _simplified_forms(shortens.group(1)):
                    add(short, word)
            elif proper and len(word) == 1:
                for name in _english_names(gloss):
                    for long in names.get(name, []):
                        add(word, long)
    return pairs


@lru_cache(maxsize=1)
def cedict_lexicon() -> Lexicon:
    """The lexicon of the packaged CC-CEDICT (built once per process, ~2 s)."""
    entries = packaged_entries()
    long_forms = _expansion_pairs(entries, _name_index(entries))
    glosses: dict[str, set[str]] = defaultdict(set)
    for entry in entries:
        for gloss in entry.glosses:
            text = normalise_gloss(gloss)
            if text:
                glosses[entry.simplified].add(text)
    frozen = {w: frozenset(g) for w, g in glosses.items()}
    stems = {w: _gloss_stems(g) for w, g in frozen.items()}
    spread = Counter(stem for word_stems in stems.values() for stem in word_stems)
    return Lexicon(long_forms={k: tuple(v) for k, v in long_forms.items()}, glosses=frozen,
                   stems={w: frozenset(x for x in st if spread[x] <= _MAX_STEM_WORDS)
                          for w, st in stems.items()})
