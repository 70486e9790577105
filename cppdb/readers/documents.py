"""One entry point for every kind of input document: ``read_document`` and ``read_version_dir``.

========== ============================================ ==================================
kind       input                                        units
========== ============================================ ==================================
text       ``.txt``, ``.text``, ``.md``                 paragraphs (``readers.paragraphs``)
epub       ``.epub``                                    paragraphs in spine order
subtitle   ``.srt``, ``.ass``, ``.ssa``, ``.vtt``       cues (lines joined), with ``cues``
images     a folder or ``.zip`` of ``.png``/``.jpg``    OCR text per page / subtitle image
========== ============================================ ==================================

Traditional characters are converted to simplified (OpenCC ``t2s``) in units and cues unless
``readers.to_simplified = false``; ``Document.converted`` says whether anything changed.
Anything skipped inside a document (an empty cue, a corrupt image, a broken EPUB chapter) is
listed in ``Document.problems`` as ``(where, reason)``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from cppdb.config import Config, load_config, resolve
from cppdb.errors import BadInputError, CppdbError
from cppdb.ocr.batch import IMAGE_SUFFIXES, natural_key
from cppdb.readers.epub import read_epub
from cppdb.readers.images import read_images
from cppdb.readers.settings import ReadingSettings
from cppdb.readers.subtitles import SUBTITLE_FORMATS, Cue, read_subtitles
from cppdb.readers.text import read_text_file
from cppdb.text.convert import default_converter
from cppdb.text.segment import join_lines

__all__ = ["Cue", "Document", "read_document", "read_version_dir", "document_kind"]

log = logging.getLogger(__name__)

TEXT_SUFFIXES = frozenset({".txt", ".text", ".md"})
DocumentKind = Literal["text", "epub", "subtitle", "images"]


@dataclass(frozen=True)
class Document:
    """A document read into units (see the module docstring for what a unit is)."""

    path: Path
    kind: DocumentKind
    units: tuple[str, ...]
    cues: tuple[Cue, ...] = ()
    encoding: str = ""
    problems: tuple[tuple[str, str], ...] = ()
    title: str = ""
    converted: bool = False        # traditional -> simplified changed some text
    sources: tuple[str, ...] = ()  # images: the image (or archive member) of each unit

    @property
    def name(self) -> str:
        """The file name without extension (what document pairing compares)."""
        return self.path.stem if self.path.suffix else self.path.name


def document_kind(path: Path) -> DocumentKind | None:
    """The reader that handles ``path``, or None if none does."""
    suffix = path.suffix.lower()
    if path.is_dir() or suffix == ".zip":
        return "images"
    if suffix in TEXT_SUFFIXES:
        return "text"
    if suffix == ".epub":
        return "epub"
    if suffix in SUBTITLE_FORMATS:
        return "subtitle"
    return None


def _read_raw(path: Path, kind: DocumentKind, settings: ReadingSettings) -> Document:
    readers = settings.readers
    if kind == "text":
        content = read_text_file(path, encoding=readers.encoding,
                                 paragraphs=readers.paragraphs)
        return Document(path, "text", content.paragraphs, encoding=content.encoding)
    if kind == "epub":
        book = read_epub(path)
        return Document(path, "epub", book.paragraphs, encoding="utf-8",
                        problems=book.problems, title=book.title)
    if kind == "subtitle":
        subs = read_subtitles(path, encoding=readers.encoding,
                              drop_non_chinese_lines=readers.drop_non_chinese_lines)
        units = tuple(join_lines(cue.text.split("\n")) for cue in subs.cues)
        return Document(path, "subtitle", units, cues=subs.cues, encoding=subs.encoding,
                        problems=subs.problems)
    content = read_images(path, settings.image_settings())
    return Document(path, "images", content.units, problems=content.problems,
                    sources=content.sources)


def _to_simplified(document: Document, profile: str) -> Document:
    converter = default_converter(profile)
    units = tuple(converter.convert(list(document.units)))
    cue_texts = converter.convert([cue.text for cue in document.cues])
    cues = tuple(replace(cue, text=text) for cue, text in zip(document.cues, cue_texts))
    title = converter.convert_one(document.title) if document.title else ""
    return replace(document, units=units, cues=cues, title=title,
                   converted=units != document.units)


def read_document(path: str | Path, *, config: Config | None = None,
                  settings: ReadingSettings | None = None) -> Document:
    """Read one document (file, image folder or zip archive of images) with ``settings``
    (default: resolved from ``config``, itself by default the loaded configuration).

    Raises :class:`BadInputError` for a missing, empty, corrupt or unsupported input.
    """
    path = Path(path)
    settings = settings or resolve(ReadingSettings, config or load_config())
    if not path.exists():
        raise BadInputError(f"{path} does not exist", hint="check the path")
    kind = document_kind(path)
    if kind is None:
        raise BadInputError(
            f"{path}: unsupported document type '{path.suffix}'",
            hint="supported: .txt/.text/.md, .epub, .srt/.ass/.ssa/.vtt, a folder or .zip of "
                 f"images ({', '.join(sorted(IMAGE_SUFFIXES))})")
    document = _read_raw(path, kind, settings)
    if settings.readers.to_simplified:
        document = _to_simplified(document, settings.readers.opencc_profile)
    return document


def _entries(directory: Path) -> list[Path]:
    """The visible entries of a folder in natural name order."""
    return sorted((p for p in directory.iterdir() if not p.name.startswith(".")),
                  key=lambda p: natural_key(p.name))


def read_version_dir(directory: str | Path, *, config: Config | None = None,
                     settings: ReadingSettings | None = None,
                     skipped: list[tuple[str, str]] | None = None) -> list[Document]:
    """Read every document of one version folder, in natural file-name order.

    Each supported file is one document, each sub-folder (or ``.zip``) of images is one
    document, and images lying directly in ``directory`` together form one document.
    Files of other types are skipped. When ``skipped`` is given, unreadable documents are
    appended to it as ``(path, reason)`` and reading goes on; otherwise the first
    unreadable document raises. Unsupported files are always logged and, if ``skipped`` is
    given, listed there.  ``settings`` / ``config``: as for :func:`read_document`.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise BadInputError(f"{directory} is not a directory",
                            hint="pass a folder holding one version of the work")
    settings = settings or resolve(ReadingSettings, config or load_config())
    documents: list[Document] = []
    loose_images = False
    for entry in _entries(directory):
        if entry.is_file() and entry.suffix.lower() in IMAGE_SUFFIXES:
            loose_images = True
            continue
        if document_kind(entry) is None:
            log.warning("skipping %s: unsupported document type", entry)
            if skipped is not None:
                skipped.append((str(entry), "unsupported document type"))
            continue
        documents.extend(_read_or_skip(entry, settings, skipped))
    if loose_images:
        documents.extend(_read_loose_images(directory, settings, skipped))
    if not documents:
        raise BadInputError(f"{directory} holds no readable documents",
                            hint="expected text, EPUB, subtitle files or folders of images")
    return documents


def _read_or_skip(path: Path, settings: ReadingSettings,
                  skipped: list[tuple[str, str]] | None) -> list[Document]:
    try:
        return [read_document(path, settings=settings)]
    except BadInputError as exc:
        if skipped is None:
            raise
        skipped.append((str(path), exc.message))
        return []


def _read_loose_images(directory: Path, settings: ReadingSettings,
                       skipped: list[tuple[str, str]] | None) -> list[Document]:
    """Images directly inside ``directory`` (not its sub-folders) as one document."""
    try:
        content = read_images(directory, settings.image_settings(), recursive=False)
    except CppdbError as exc:
        if skipped is None or not isinstance(exc, BadInputError):
            raise
        skipped.append((str(directory), exc.message))
        return []
    document = Document(directory, "images", content.units, problems=content.problems,
                        sources=content.sources)
    if settings.readers.to_simplified:
        document = _to_simplified(document, settings.readers.opencc_profile)
    return [document]
