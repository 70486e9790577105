"""Two-page spreads: find the gutter between two facing pages of one screenshot.

A desktop or tablet reader in two-page mode shows the book's pages side by side. Read as one
column, every row of the left page would be joined with the row of the right page at the same
height. A screenshot is a spread when its body lines (those outside the top and bottom
``margin`` zones, where status bars, heads and folios sit) leave a **wide empty vertical
band** near the middle of the image, and the lines on both sides of it look like two pages:

* the band is at least ``GUTTER_CHARS`` line heights and ``GUTTER_SHARE`` of the image width
  wide, no body line crosses it, and its centre lies in the middle ``MIDDLE`` of the image;
* each side holds at least two lines, and the widest line of the narrower side is at least
  ``MIN_WIDTH_RATIO`` of the wider side's (facing pages have the same text width);
* both sides start near the top of the text block (within ``TOP_SHARE`` of its height): a
  page that opens a chapter lower down still counts; a signature or date set right at the
  foot of a single page does not.

A single page never has such a band: its body lines cross the middle (a centred heading
does too), and a page of short lines (a poem, a list) has nothing on the right.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from cppdb.ocr.types import OcrLine

GUTTER_CHARS = 2.0
GUTTER_SHARE = 0.03
MIDDLE = (0.3, 0.7)
MIN_WIDTH_RATIO = 0.6
TOP_SHARE = 0.4
MIN_BODY_LINES = 6


@dataclass(frozen=True)
class Gutter:
    """The empty band between two facing pages, in pixels of the image."""

    left: float       # right edge of the left page's text
    right: float      # left edge of the right page's text

    @property
    def middle(self) -> float:
        return (self.left + self.right) / 2


def in_body(line: OcrLine, page_height: float, margin: float) -> bool:
    """The line's centre is outside the top and bottom edge zones (``margin`` of the height),
    where status bars, running heads and folios sit."""
    return margin * page_height < (line.top + line.bottom) / 2 < (1 - margin) * page_height


def _free_bands(lines: Sequence[OcrLine]) -> list[tuple[float, float]]:
    """Horizontal stretches between the lines' extents that no line covers."""
    bands: list[tuple[float, float]] = []
    spans = sorted((ln.left, ln.right) for ln in lines)
    reach = spans[0][1]
    for left, right in spans[1:]:
        if left > reach:
            bands.append((reach, left))
        reach = max(reach, right)
    return bands


def find_gutter(lines: Sequence[OcrLine], width: float, height: float,
                margin: float) -> Gutter | None:
    """The gutter of a two-page spread (see the module docstring), or None."""
    body = [ln for ln in lines if in_body(ln, height, margin)]
    if len(body) < MIN_BODY_LINES:
        return None
    char = median(ln.height for ln in body)
    wide_enough = max(GUTTER_CHARS * char, GUTTER_SHARE * width)
    bands = [(a, b) for a, b in _free_bands(body) if b - a >= wide_enough
             and MIDDLE[0] * width < (a + b) / 2 < MIDDLE[1] * width]
    if not bands:
        return None
    gutter = Gutter(*max(bands, key=lambda band: band[1] - band[0]))
    left = [ln for ln in body if ln.right <= gutter.left]
    right = [ln for ln in body if ln.left >= gutter.right]
    return gutter if _two_pages(left, right) else None


def _two_pages(left: Sequence[OcrLine], right: Sequence[OcrLine]) -> bool:
    if len(left) < 2 or len(right) < 2:
        return False
    widths = sorted(max(ln.right - ln.left for ln in side) for side in (left, right))
    if widths[0] < MIN_WIDTH_RATIO * widths[1]:
        return False
    top = min(ln.top for ln in [*left, *right])
    extent = max(ln.bottom for ln in [*left, *right]) - top
    return all(min(ln.top for ln in side) - top <= TOP_SHARE * extent for side in (left, right))


def split_at_gutter(lines: Sequence[OcrLine], gutter: Gutter
                    ) -> tuple[list[OcrLine], list[OcrLine]]:
    """(left page, right page): every line, heads and folios included, goes to the side its
    centre is on."""
    left = [ln for ln in lines if (ln.left + ln.right) / 2 < gutter.middle]
    right = [ln for ln in lines if (ln.left + ln.right) / 2 >= gutter.middle]
    return left, right
