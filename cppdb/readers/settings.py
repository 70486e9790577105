"""The ``[readers]`` section as typed, frozen settings, and what reading a document reads."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

from cppdb.defaults import toml_defaults
from cppdb.ocr.batch import OcrSettings

_READERS = toml_defaults("readers")


@dataclass(frozen=True)
class ReadersSettings:
    """Encodings, paragraphs, subtitles and conversion (see ``cppdb/defaults/readers.toml``)."""

    SECTION: ClassVar[str] = "readers"

    encoding: str = _READERS["encoding"]
    to_simplified: bool = _READERS["to_simplified"]
    opencc_profile: str = _READERS["opencc_profile"]
    paragraphs: str = _READERS["paragraphs"]
    images: str = _READERS["images"]
    drop_non_chinese_lines: bool = _READERS["drop_non_chinese_lines"]


@dataclass(frozen=True)
class ReadingSettings:
    """Every section reading a document reads (image documents are OCR'd), resolved once."""

    readers: ReadersSettings = field(default_factory=ReadersSettings)
    ocr: OcrSettings = field(default_factory=OcrSettings)

    def image_settings(self) -> OcrSettings:
        """The OCR of image documents: ``readers.images`` chooses their kind unless auto
        (building it checks the kind, as ``ocr.kind`` is checked)."""
        if self.readers.images == "auto":
            return self.ocr
        return replace(self.ocr, kind=self.readers.images)
