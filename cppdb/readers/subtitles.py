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

from cppdb.defaults import toml_defaults
from cppdb.errors import BackendUnavailableError, BadInputError
from cppdb.readers.encoding import read_text_bytes

_READERS = toml_defaults("readers")

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


_SRT_TIME = r"(\d{1,2}):(\d{1,2}):(\d{1,2})[,.](\d{1,3})"
_SRT_TIMING = re.compile(rf"^\s*{_SRT_TIME}\s*-->\s*{_SRT_TIME}")
#: WebVTT: hours are optional, the fraction is exactly three digits after a dot
_VTT_TIME = r"(?:(\d{1,3}):)?(\d{2}):(\d{2})\.(\d{3})"
_VTT_TIMING = re.compile(rf"^\s*{_VTT_TIME}\s+-->\s+{_VTT_TIME}(?:\s|$)")
#: WebVTT blocks that are not cues (kept as they are)
_VTT_OTHER_BLOCKS = ("WEBVTT", "NOTE", "STYLE", "REGION")
_FORMAT_EXAMPLE = {"srt": "HH:MM:SS,mmm --> HH:MM:SS,mmm", "vtt": "HH:MM:SS.mmm --> HH:MM:SS.mmm"}


def _ms(h: str | None, m: str, s: str, frac: str) -> int:
    return ((int(h or 0) * 60 + int(m)) * 60 + int(s)) * 1000 + int(frac.ljust(3, "0"))


def _blocks(text: str) -> list[tuple[int, list[str]]]:
    """The blank-line separated blocks of a text, each with its first line's number."""
    blocks: list[tuple[int, list[str]]] = []
    block: list[str] = []
    for number, line in enumerate(text.split("\n") + [""], start=1):
        if line.strip():
            if not block:
                first = number
            block.append(line)
        elif block:
            blocks.append((first, block))
            block = []
    return blocks


def _check_timed_blocks(text: str, path: Path, kind: str
                        ) -> tuple[str, list[tuple[str, str]]]:
    """The good cues of an SRT or WebVTT file, and a problem (with its line number) per bad
    block.

    pysubs2 glues a block whose timestamp is broken to the cue before it (cue number and
    all); here such a block is dropped and reported, as is a cue that ends before it starts.
    """
    timing_pattern = _SRT_TIMING if kind == "srt" else _VTT_TIMING
    keep: list[str] = []
    problems: list[tuple[str, str]] = []
    last_start = -1
    for first, block in _blocks(text):
        if kind == "vtt" and block[0].split(" ")[0].split("\t")[0] in _VTT_OTHER_BLOCKS:
            keep.append("\n".join(block))
            continue
        timing = next((i for i, ln in enumerate(block[:2]) if "-->" in ln), None)
        match = timing_pattern.match(block[timing]) if timing is not None else None
        where = f"{path}:{first}"
        if match is None:
            problems.append((where, f"cue without a valid '{_FORMAT_EXAMPLE[kind]}' line "
                                    "(skipped)"))
            continue
        start, end = _ms(*match.groups()[:4]), _ms(*match.groups()[4:])
        if end < start:
            problems.append((where, "cue ends before it starts (skipped)"))
            continue
        if start < last_start:
            problems.append((where, "cue starts before the previous one (kept, sorted by time)"))
        last_start = max(last_start, start)
        keep.append("\n".join(block[timing:]))
    if kind == "vtt":
        if not keep or not keep[0].startswith("WEBVTT"):
            keep.insert(0, "WEBVTT")
        return "\n\n".join(keep) + "\n", problems
    numbered = (f"{i}\n{b}" for i, b in enumerate(keep, start=1))
    return "\n\n".join(numbered) + "\n", problems


def _parse_ass_lines(text: str, path: Path):
    """An ASS/SSA file one bad event line at a time: keep the rest, report the bad ones."""
    lines = text.split("\n")
    head = [ln for ln in lines if not ln.lstrip().lower().startswith(("dialogue:", "comment:"))]
    good: list[str] = []
    problems: list[tuple[str, str]] = []
    for number, line in enumerate(lines, start=1):
        if line.lstrip().lower().startswith(("dialogue:", "comment:")):
            try:
                _parse("\n".join(head + [line]), path)
                good.append(line)
            except BadInputError as exc:
                problems.append((f"{path}:{number}", f"bad event line (skipped): "
                                                     f"{exc.message.split(': ', 1)[-1]}"))
    return _parse("\n".join(head + good), path), problems


def read_subtitles(path: Path, *, encoding: str = _READERS["encoding"],
                   drop_non_chinese_lines: bool = _READERS["drop_non_chinese_lines"]
                   ) -> SubtitleContent:
    """Read a subtitle file into cues sorted by start time."""
    decoded = read_text_bytes(path, encoding=encoding)
    text = decoded.text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    problems: list[tuple[str, str]] = []
    kind = SUBTITLE_FORMATS.get(path.suffix.lower())
    if kind in ("srt", "vtt"):
        text, problems = _check_timed_blocks(text, path, kind)
    try:
        subs = _parse(text, path)
    except BadInputError:
        if kind not in ("ass", "ssa"):
            raise
        subs, problems = _parse_ass_lines(text, path)
    raw: list[tuple[int, int, int, list[str]]] = []
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
