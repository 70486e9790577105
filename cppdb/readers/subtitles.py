"""Subtitle reader: ``.srt``, ``.ass``, ``.ssa``, ``.vtt`` in any encoding → timed cues.

Parsing is done by pysubs2 after our own encoding detection (GBK/Big5/UTF-16 files are
common). Per event: comments and vector drawings (``\\p1``) are skipped; ASS override tags
(``{\\i1}``), ``\\N``/``\\n`` line breaks, ``\\h`` and leftover HTML tags (``<font>``, ``<b>``)
are removed; lines are kept (``Cue.text`` has one ``\\n`` per line break). In a Chinese file
(most lines contain hanzi) the lines *without* any hanzi but with Latin letters are the
English half of a bilingual subtitle; they are dropped when ``drop_non_chinese_lines`` is set.
Cues that end up empty are skipped and listed in ``problems``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cppdb.errors import BackendUnavailableError, BadInputError
from cppdb.readers.encoding import read_text_bytes

SUBTITLE_FORMATS = {".srt": "srt", ".ass": "ass", ".ssa": "ssa", ".vtt": "vtt"}
_HTML_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")
_DRAWING = re.compile(r"\\p[1-9]")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class Cue:
    """One subtitle cue: times in milliseconds, text with ``\\n`` between its lines."""

    start_ms: int
    end_ms: int
    text: str


@dataclass(frozen=True)
class SubtitleContent:
    cues: tuple[Cue, ...]
    encoding: str
    problems: tuple[tuple[str, str], ...]


def _clean_lines(plaintext: str) -> list[str]:
    lines = (_HTML_TAG.sub("", line).replace("\u200b", "").strip()
             for line in plaintext.split("\n"))
    return [" ".join(line.split()) for line in lines if line.strip()]


def _parse(text: str, path: Path):
    try:
        import pysubs2
    except ImportError as exc:
        raise BackendUnavailableError("reading subtitles needs the pysubs2 package",
                                      hint="pip install pysubs2") from exc
    fmt = SUBTITLE_FORMATS.get(path.suffix.lower())
    try:
        return pysubs2.SSAFile.from_string(text, format_=fmt)
    except (pysubs2.exceptions.Pysubs2Error, ValueError, KeyError, IndexError) as exc:
        raise BadInputError(f"{path} is not a valid {fmt or 'subtitle'} file: {exc}",
                            hint="check the file in a subtitle editor") from exc


def read_subtitles(path: Path, *, encoding: str = "auto",
                   drop_non_chinese_lines: bool = True) -> SubtitleContent:
    """Read a subtitle file into cues sorted by start time."""
    decoded = read_text_bytes(path, encoding=encoding)
    subs = _parse(decoded.text.lstrip("\ufeff"), path)
    raw: list[tuple[int, int, int, list[str]]] = []
    problems: list[tuple[str, str]] = []
    for number, event in enumerate(subs, start=1):
        if event.is_comment or _DRAWING.search(event.text):
            continue
        lines = _clean_lines(event.plaintext)
        if not lines:
            problems.append((f"{path}#cue{number}", "empty after removing formatting tags"))
            continue
        raw.append((int(event.start), int(event.end), number, lines))
    all_lines = [line for _, _, _, lines in raw for line in lines]
    chinese = sum(bool(_HAN.search(line)) for line in all_lines) > len(all_lines) / 2
    cues: list[Cue] = []
    for start, end, number, lines in raw:
        if drop_non_chinese_lines and chinese:
            lines = [ln for ln in lines if _HAN.search(ln) or not _LATIN.search(ln)]
            if not lines:
                problems.append((f"{path}#cue{number}", "only non-Chinese lines (dropped)"))
                continue
        cues.append(Cue(start, end, "\n".join(lines)))
    if not cues:
        raise BadInputError(f"{path} has no subtitle cues with text",
                            hint="check that it is a subtitle file and not empty")
    cues.sort(key=lambda cue: (cue.start_ms, cue.end_ms))
    return SubtitleContent(tuple(cues), decoded.encoding, tuple(problems))
