"""Read version directories into alignment units (sentences or lines) with their times.

Uses the project's readers: plain text (any encoding), EPUB, subtitles (.srt/.ass/.ssa/.vtt,
any encoding).  ``units = "sentences"`` splits paragraphs with ``split_sentences`` and
subtitle cues with ``cue_sentences`` (joins sentences spread over cues, keeps times);
``units = "lines"`` keeps every line / cue as one unit.  Text is normalised (half-width,
whitespace, traditional -> simplified when ``to_simplified``); the original is kept.
Files of other kinds (images, archives) are reported as skipped: OCR them first with
``cppdb ocr``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cppdb.align.sentences.documents import VersionFile
from cppdb.errors import BadInputError, CppdbError

Units = Literal["lines", "sentences"]
TEXT_SUFFIXES = {".txt", ".text", ".md"}
SUBTITLE_SUFFIXES = {".srt", ".ass", ".ssa", ".vtt"}
EPUB_SUFFIXES = {".epub"}


@dataclass(frozen=True)
class Unit:
    text: str            # normalised (what is aligned)
    original: str
    start_ms: int | None = None
    end_ms: int | None = None


@dataclass(frozen=True)
class VersionDocument:
    file: VersionFile
    units: tuple[Unit, ...]
    encoding: str


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str


def _normalise(texts: list[str], to_simplified: bool) -> list[str]:
    from cppdb.text.normalize import normalize_zh

    return [normalize_zh(t, to_simplified=to_simplified) for t in texts]


def _text_units(paragraphs: list[str], units: Units) -> list[Unit]:
    if units == "lines":
        return [Unit(p, p) for p in paragraphs]
    from cppdb.text.segment import split_sentences

    return [Unit(s, s) for p in paragraphs for s in split_sentences(p)]


def _subtitle_units(path: Path, units: Units) -> tuple[list[Unit], str]:
    from cppdb.readers.subtitles import read_subtitles
    from cppdb.text.segment import cue_sentences, join_lines

    content = read_subtitles(path)
    if units == "lines":
        found = [Unit(join_lines(c.text.splitlines()), c.text, c.start_ms, c.end_ms)
                 for c in content.cues]
    else:
        found = [Unit(s.text, s.text, s.start_ms, s.end_ms) for s in cue_sentences(content.cues)]
    return found, content.encoding


def read_units(path: Path, units: Units = "sentences", *, to_simplified: bool = True
               ) -> tuple[list[Unit], str]:
    """The units of one file and the encoding it was read in."""
    suffix = path.suffix.lower()
    if suffix in SUBTITLE_SUFFIXES:
        found, encoding = _subtitle_units(path, units)
    elif suffix in EPUB_SUFFIXES:
        from cppdb.readers.epub import read_epub

        found, encoding = _text_units(list(read_epub(path).paragraphs), units), "epub"
    elif suffix in TEXT_SUFFIXES:
        from cppdb.readers.text import read_text_file

        content = read_text_file(path)
        found, encoding = _text_units(list(content.paragraphs), units), content.encoding
    else:
        raise BadInputError(f"{path}: unsupported file type {suffix or '(none)'}",
                            hint="text, EPUB and subtitle files are read; OCR images first "
                                 "with `cppdb ocr`")
    normalised = _normalise([u.text for u in found], to_simplified)
    found = [Unit(n, u.original, u.start_ms, u.end_ms) for n, u in zip(normalised, found)
             if n.strip()]
    if not found:
        raise BadInputError(f"{path} has no text units")
    return found, encoding


def read_version_dir(directory: str | Path, version: int, units: Units = "sentences", *,
                     to_simplified: bool = True) -> tuple[list[VersionDocument], list[Skipped]]:
    """Every readable file of one version directory (sorted by name; not recursive)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise BadInputError(f"version directory {directory} does not exist",
                            hint="pass one directory per version of the text")
    documents, skipped = [], []
    for path in sorted(p for p in directory.iterdir() if p.is_file()
                       and not p.name.startswith(".")):
        try:
            found, encoding = read_units(path, units, to_simplified=to_simplified)
        except CppdbError as exc:
            skipped.append(Skipped(path, exc.message + (f" ({exc.hint})" if exc.hint else "")))
            continue
        times = [u for u in found if u.start_ms is not None]
        span = (min(u.start_ms for u in times), max(u.end_ms for u in times)) if times else None
        text = "\n".join(u.text for u in found)
        documents.append(VersionDocument(VersionFile(version, path, text, span), tuple(found),
                                         encoding))
    if not documents:
        raise BadInputError(f"version directory {directory} has no readable text files",
                            hint="; ".join(f"{s.path.name}: {s.reason}" for s in skipped[:5])
                            or "add .txt, .epub or subtitle files")
    return documents, skipped
