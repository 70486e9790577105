"""The Chinese negation word list (``cppdb/resources/negation_words.txt``, ~70 words).

Shared by the compression DTT negation rule and the ``f_negation_flip`` pair feature.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from cppdb.errors import BadInputError
from cppdb.shipped import shipped_file

NEGATION_FILE = "negation_words.txt"


def negation_file(path: str | Path | None = None) -> Path:
    """The word list a setting names (empty: the packaged one)."""
    return Path(path) if path else shipped_file(NEGATION_FILE)


def load_negation_words(path: str | Path | None = None) -> frozenset[str]:
    """The packaged list or a user file: one word per line, '#' comments."""
    if path:
        file = Path(path)
        if not file.is_file():
            raise BadInputError(f"negation word list {file} does not exist",
                                hint="set compression.negation_words to a file or to ''")
        return _parse(file.read_text("utf-8"))
    return packaged_negation_words()


@lru_cache(maxsize=1)
def packaged_negation_words() -> frozenset[str]:
    return _parse(negation_file().read_text("utf-8"))


def _parse(text: str) -> frozenset[str]:
    words = {line.split("#", 1)[0].strip() for line in text.splitlines()}
    return frozenset(w for w in words if w)
