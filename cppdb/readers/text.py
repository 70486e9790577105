"""Plain-text reader: decode (see :mod:`cppdb.readers.encoding`) and cut into paragraphs."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cppdb.defaults import toml_defaults
from cppdb.errors import BadInputError, ConfigError
from cppdb.readers.encoding import read_text_bytes

_READERS = toml_defaults("readers")

_BLANK_LINES = re.compile(r"\n\s*\n")
_CJK_END = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]$")
_CJK_START = re.compile(r"^[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")

ParagraphMode = Literal["lines", "blank_lines"]


@dataclass(frozen=True)
class TextContent:
    paragraphs: tuple[str, ...]
    encoding: str


def _join_wrapped(lines: list[str]) -> str:
    """Join hard-wrapped lines: nothing between CJK characters, a space between words."""
    out = ""
    for line in lines:
        if out and not (_CJK_END.search(out) or _CJK_START.search(line)):
            out += " "
        out += line
    return out


def split_paragraphs(text: str, mode: ParagraphMode = "lines") -> list[str]:
    """Paragraphs of ``text``: one per non-empty line, or blocks separated by blank lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if mode == "lines":
        return [line.strip() for line in text.split("\n") if line.strip()]
    if mode == "blank_lines":
        blocks = (b.split("\n") for b in _BLANK_LINES.split(text))
        joined = (_join_wrapped([ln.strip() for ln in block if ln.strip()]) for block in blocks)
        return [p for p in joined if p]
    raise ConfigError(f"unknown paragraph mode '{mode}'", hint="use lines or blank_lines")


def read_text_file(path: Path, *, encoding: str = _READERS["encoding"],
                   paragraphs: ParagraphMode = _READERS["paragraphs"]) -> TextContent:
    """Read a plain-text file into paragraphs; empty or blank files are bad input."""
    decoded = read_text_bytes(path, encoding=encoding)
    found = split_paragraphs(decoded.text.lstrip("\ufeff"), paragraphs)
    if not found:
        raise BadInputError(f"{path} has no text (only whitespace)",
                            hint="remove the file or give it content")
    return TextContent(tuple(found), decoded.encoding)
