"""English antonym pairs (``cppdb/resources/antonyms_en.txt``, written for cppdb).

Chinese antonyms are found through their English glosses: two words whose CC-CEDICT glosses
hold the two halves of a pair (增加 "to increase" / 减少 "to decrease") are opposites
(:mod:`cppdb.rank.exclusion`).  The file holds base forms in lower case, two words a line.
"""
from __future__ import annotations

from functools import lru_cache

import polars as pl

from cppdb.errors import BadInputError
from cppdb.shipped import shipped_file

WORD, OPPOSITE = "word", "opposite"
ANTONYM_FILE = "antonyms_en.txt"


@lru_cache(maxsize=1)
def packaged_antonym_pairs() -> tuple[tuple[str, str], ...]:
    """The packaged pairs, in file order."""
    return parse_antonyms(shipped_file(ANTONYM_FILE).read_text("utf-8"))


def parse_antonyms(text: str) -> tuple[tuple[str, str], ...]:
    """Pairs of a ``word opposite`` file ('#' comments); a line of another shape is an error."""
    pairs = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or words[0] == words[1] or words != [w.lower() for w in words]:
            raise BadInputError(f"antonym list line {number} is not two different lower-case "
                                f"words: {line!r}", hint="write e.g. 'increase decrease'")
        pairs.append((words[0], words[1]))
    return tuple(pairs)


def antonym_table(pairs: tuple[tuple[str, str], ...] | None = None) -> pl.DataFrame:
    """``word`` → ``opposite``, both directions of every pair, one row each."""
    pairs = packaged_antonym_pairs() if pairs is None else pairs
    words = [a for a, _ in pairs] + [b for _, b in pairs]
    opposites = [b for _, b in pairs] + [a for a, _ in pairs]
    return pl.DataFrame({WORD: words, OPPOSITE: opposites}).unique(maintain_order=True)
