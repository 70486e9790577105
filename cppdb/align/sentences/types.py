"""Records shared by the document-pairing modules (``documents``, ``pairing_signals``,
``merged``, ``versions``): kept apart so that those modules import it, not each other."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cppdb.align.sentences.chapters import file_chapter


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
    def label(self) -> str:
        """The file name, with ``#k`` for the k-th chapter of a file that holds several."""
        return self.name if self.part is None else f"{self.name}#{self.part}"

    @property
    def title(self) -> str:
        return next((line.strip() for line in self.text.splitlines() if line.strip()), "")
