"""Records produced by OCR: recognised lines and the text of one image."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: a quadrilateral, clockwise from the top-left corner, in pixels of the original image
Box = tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]]


@dataclass(frozen=True)
class OcrLine:
    """One recognised text line."""

    text: str
    box: Box
    confidence: float

    @property
    def left(self) -> float:
        return min(x for x, _ in self.box)

    @property
    def right(self) -> float:
        return max(x for x, _ in self.box)

    @property
    def top(self) -> float:
        return min(y for _, y in self.box)

    @property
    def bottom(self) -> float:
        return max(y for _, y in self.box)

    @property
    def height(self) -> float:
        return self.bottom - self.top

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "box": [[round(x, 1), round(y, 1)] for x, y in self.box],
                "confidence": round(float(self.confidence), 4)}


@dataclass(frozen=True)
class ImageText:
    """The OCR result of one image: reading-order lines, the text, what was removed."""

    path: str
    kind: str                       # "page" | "subtitle"
    text: str                       # paragraphs (pages) or cue lines joined with "\n"
    lines: tuple[OcrLine, ...]      # the lines that make up ``text``, in reading order
    removed: tuple[OcrLine, ...] = field(default=())   # headers, footers, page numbers
    error: str | None = None
    seconds: float = 0.0
    width: int = 0
    height: int = 0
    gutter: float | None = None     # x between the two facing pages of a spread (pages only)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "text": self.text,
                "lines": [line.to_json() for line in self.lines],
                "removed": [line.to_json() for line in self.removed],
                "error": self.error, "seconds": round(self.seconds, 3),
                "width": self.width, "height": self.height}


def box_from_rect(left: float, top: float, right: float, bottom: float) -> Box:
    return ((left, top), (right, top), (right, bottom), (left, bottom))
