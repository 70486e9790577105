"""Records shared by the document-pairing modules (``documents``, ``pairing_signals``,
``merged``, ``versions``): kept apart so that those modules import it, not each other."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from cppdb.align.sentences.chapters import file_chapter


class DocumentKey(NamedTuple):
    """Which document of the monolingual pipeline a row belongs to: the typed key
    ``schema.DOC_KEY`` of units, documents, beads and sentence pairs."""

    version: int
    path: str
    part: int | None          # k-th chapter of a file cut into several; None: the whole file

    @property
    def label(self) -> str:
        """For people (notes, reports), never a join key: ``0:dir/file.txt#2``."""
        shown = "/".join(Path(self.path).parts[-2:])
        return f"{self.version}:{shown}" + ("" if self.part is None else f"#{self.part}")


@dataclass(frozen=True)
class VersionFile:
    """One file (or one chapter of a file that holds several) of one version."""

    version: int
    path: Path
    text: str                  # the whole text (sentences joined by newlines)
    span_ms: tuple[int, int] | None = None   # subtitle files: first start, last end
    cue_starts: tuple[int, ...] = ()          # subtitle files: start of every cue
    part: int | None = None                   # k-th chapter of a file cut at its headings
    chapter: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.chapter is None:
            object.__setattr__(self, "chapter", file_chapter(self.path.stem, self.title))

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def key(self) -> DocumentKey:
        return DocumentKey(self.version, str(self.path), self.part)

    @property
    def label(self) -> str:
        """The file name, with ``#k`` for the k-th chapter of a file that holds several."""
        return self.name if self.part is None else f"{self.name}#{self.part}"

    @property
    def title(self) -> str:
        return next((line.strip() for line in self.text.splitlines() if line.strip()), "")
