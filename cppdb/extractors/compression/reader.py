"""Read (headline, sentence) pairs from JSONL or TSV, by line ranges (for resumable chunks).

JSONL: one object per line with ``headline`` and ``sentence`` — or ``text``, whose first
sentence is taken.  TSV: a header line naming the columns, at least ``headline`` and
``sentence`` (or ``text``).  Every other field is carried to the output unchanged.  The file
is indexed once by byte offsets, so a chunk ``[start, stop)`` is read without holding the
whole input in memory.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cppdb.errors import BadInputError

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
TSV_SUFFIXES = (".tsv", ".tab", ".txt")
_SENTENCE_END = re.compile(r"[。！？!?][”’」』\"')）]*")


def first_sentence(text: str) -> str:
    """The text up to and including the first sentence-final mark (and closing quotes)."""
    text = text.strip()
    match = _SENTENCE_END.search(text)
    return text[: match.end()] if match else text


@dataclass(frozen=True)
class NewsPair:
    """One input pair; ``line`` is 1-based in the input file; ``extra`` = carried fields."""

    line: int
    headline: str
    sentence: str
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


class PairReader:
    """Random access to the pairs of one input file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise BadInputError(f"input {self.path} does not exist")
        suffix = self.path.suffix.lower()
        if suffix in JSONL_SUFFIXES:
            self.kind = "jsonl"
        elif suffix in TSV_SUFFIXES:
            self.kind = "tsv"
        else:
            raise BadInputError(f"input {self.path}: unknown format '{suffix}'",
                                hint="use .jsonl (headline + sentence/text) or .tsv with a "
                                     "header line headline<TAB>sentence")
        self.columns: list[str] = []
        self._offsets, self._lines = self._index()
        if len(self._offsets) == 0:
            raise BadInputError(f"input {self.path} has no pairs")

    def _index(self) -> tuple[np.ndarray, np.ndarray]:
        offsets: list[int] = []
        numbers: list[int] = []
        position = 0
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if number == 1 and self.kind == "tsv":
                    self.columns = self._decode(raw, 1).rstrip("\r\n").split("\t")
                    self._check_header()
                elif raw.strip():
                    offsets.append(position)
                    numbers.append(number)
                position += len(raw)
        return np.asarray(offsets, dtype=np.int64), np.asarray(numbers, dtype=np.int64)

    def _check_header(self) -> None:
        cols = self.columns
        if "headline" not in cols or not ({"sentence", "text"} & set(cols)):
            raise BadInputError(
                f"{self.path}:1: TSV header must name 'headline' and 'sentence' (or 'text'); "
                f"found {cols}", hint="first line: headline<TAB>sentence[<TAB>other fields]")

    def _decode(self, raw: bytes, number: int) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadInputError(f"{self.path}:{number}: not valid UTF-8 ({exc.reason})",
                                hint="convert the file to UTF-8") from exc

    def __len__(self) -> int:
        return len(self._offsets)

    def read(self, start: int, stop: int) -> list[NewsPair]:
        """Pairs ``[start, stop)`` (0-based pair indices, blank lines not counted)."""
        pairs = []
        with self.path.open("rb") as handle:
            for offset, number in zip(self._offsets[start:stop], self._lines[start:stop]):
                handle.seek(int(offset))
                text = self._decode(handle.readline(), int(number)).rstrip("\r\n")
                fields = self._fields(text, int(number))
                pairs.append(self._pair(fields, int(number)))
        return pairs

    def _fields(self, text: str, number: int) -> dict[str, Any]:
        if self.kind == "jsonl":
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise BadInputError(f"{self.path}:{number}: invalid JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise BadInputError(f"{self.path}:{number}: expected a JSON object")
            return obj
        values = text.split("\t")
        if len(values) != len(self.columns):
            raise BadInputError(f"{self.path}:{number}: {len(values)} columns, header has "
                                f"{len(self.columns)}", hint="fields must not contain tabs")
        return dict(zip(self.columns, values))

    def _pair(self, fields: dict[str, Any], number: int) -> NewsPair:
        headline = fields.pop("headline", None)
        if "sentence" in fields:
            sentence = fields.pop("sentence")
        elif "text" in fields:
            sentence = first_sentence(str(fields.pop("text") or ""))
        else:
            sentence = None
        if not isinstance(headline, str) or not isinstance(sentence, str):
            raise BadInputError(f"{self.path}:{number}: needs string fields 'headline' and "
                                "'sentence' (or 'text')",
                                hint="one JSON object per line: {\"headline\": ..., "
                                     "\"sentence\": ...}")
        return NewsPair(number, headline.strip(), sentence.strip(), fields)
