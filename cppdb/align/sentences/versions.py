"""Version directories -> alignment units (sentences or lines) with subtitle times.

Reading is the readers' job (``cppdb.readers.documents``: text, EPUB, subtitles in any
encoding, folders/zips of page or subtitle images through OCR; traditional -> simplified
per ``readers.to_simplified``).  Here a document becomes units:

* ``units = "sentences"``: paragraphs are split with ``split_sentences``; subtitle cues with
  ``cue_sentences`` (sentences spread over cues are joined, times kept);
* ``units = "lines"``: every paragraph / cue / OCR line is one unit.

Units are normalised for alignment (half-width ASCII, collapsed whitespace); the unit as
read is kept as ``original``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cppdb.align.sentences.types import VersionFile
from cppdb.errors import BadInputError, ConfigError
from cppdb.readers.documents import read_document, read_version_dir as read_documents
from cppdb.readers.settings import ReadingSettings
from cppdb.text.normalize import normalize_zh
from cppdb.text.segment import cue_sentences, join_lines, split_sentences

Units = Literal["lines", "sentences"]
SUBTITLE_KIND = "subtitle"


@dataclass(frozen=True)
class Unit:
    text: str            # normalised (what is aligned)
    original: str
    start_ms: int | None = None
    end_ms: int | None = None


@dataclass(frozen=True)
class VersionDocument:
    file: VersionFile
    kind: str            # text | epub | subtitle | images
    units: tuple[Unit, ...]


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str


def document_units(document: Any, units: Units) -> list[Unit]:
    """Units of a ``cppdb.readers.documents.Document``."""
    if units not in ("lines", "sentences"):
        raise ConfigError(f"units must be 'lines' or 'sentences', not {units!r}")
    if document.kind == SUBTITLE_KIND and document.cues:
        if units == "lines":
            raw = [Unit(join_lines(c.text.split("\n")), c.text, c.start_ms, c.end_ms)
                   for c in document.cues]
        else:
            raw = [Unit(s.text, s.text, s.start_ms, s.end_ms)
                   for s in cue_sentences(document.cues)]
    elif units == "lines":
        raw = [Unit(u, u) for u in document.units]
    else:
        raw = [Unit(s, s) for u in document.units for s in split_sentences(u)]
    found = [Unit(normalize_zh(u.text, to_simplified=False), u.original, u.start_ms, u.end_ms)
             for u in raw]
    return [u for u in found if u.text.strip()]


def read_units(path: str | Path, units: Units = "sentences", *,
               reading: ReadingSettings | None = None) -> list[Unit]:
    """The units of one document (file, image folder or zip); ``reading``: the readers'
    settings (default: the defaults)."""
    found = document_units(read_document(path, settings=reading or ReadingSettings()), units)
    if not found:
        raise BadInputError(f"{path} has no text units", hint="check the file's content")
    return found


def _version_document(document: Any, version: int, units: Units) -> VersionDocument | None:
    found = document_units(document, units)
    if not found:
        return None
    times = [u for u in found if u.start_ms is not None]
    span = (min(u.start_ms for u in times), max(u.end_ms for u in times)) if times else None
    text = "\n".join(u.text for u in found)
    return VersionDocument(VersionFile(version, Path(document.path), text, span),
                           document.kind, tuple(found))


def read_version_dir(directory: str | Path, version: int, units: Units = "sentences", *,
                     reading: ReadingSettings | None = None
                     ) -> tuple[list[VersionDocument], list[Skipped]]:
    """Every readable document of one version directory; unreadable ones are reported.
    ``reading``: the readers' settings (default: the defaults)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise BadInputError(f"version directory {directory} does not exist",
                            hint="pass one directory per version of the text")
    skipped_raw: list[tuple[str, str]] = []
    documents = read_documents(directory, settings=reading or ReadingSettings(),
                               skipped=skipped_raw)
    skipped = [Skipped(Path(p), reason) for p, reason in skipped_raw]
    out = []
    for document in documents:
        # items skipped inside a readable document (a corrupt image, a broken subtitle cue,
        # an unparsable EPUB chapter) are listed too, not only on the document
        skipped += [Skipped(Path(where), reason) for where, reason in document.problems]
        converted = _version_document(document, version, units)
        if converted is None:
            skipped.append(Skipped(Path(document.path), "no text units"))
        else:
            out.append(converted)
    return out, skipped
