"""Page screenshots → paragraphs: reading order, line merging, header/footer removal.

1. **Rows.** The engine returns text boxes; boxes whose vertical extents overlap by more
   than half the smaller height are one row, read left to right (single-column layout).
2. **Header/footer.** A row whose centre lies in the top or bottom ``margin`` of the page
   is a running head/foot if it only holds page numbers (``12``, ``- 12 -``, ``第12页``,
   ``12/300``), clock times or percentages (a phone's status bar, reading progress), or
   starts or ends with one of those (but a bare number) set apart by a space, or is
   set in a smaller font than the body (character pitch — width per full-width character,
   which is what the font size sets — below 90 % of the body's, or box height below 85 %),
   or cut off from the body by a gap over twice the median line gap, or centred and much
   shorter than the text block (a short body line starts at the left margin instead).
   Across the pages of one document, a top/bottom row repeated (digits ignored) on
   ``repeat_share`` of the pages is removed too (:func:`remove_running_heads`).
3. **Paragraphs.** A row continues the previous paragraph unless it is indented (starts more
   than 0.8 character right of the left margin), the previous row stops short of the right
   margin (by more than 1.5 characters), or the vertical gap is unusually large. Rows are
   joined with nothing between CJK characters and a space between Latin words.
4. **Spreads.** A screenshot of two facing pages (:mod:`cppdb.ocr.columns`: a wide empty
   gutter down the middle of the body lines) is cut at the gutter before rule 1; each page
   gets rules 1 and 2 on its own (its own head and folio), and the body is the left page's
   rows, then the right page's. Rule 3 takes each page's own margins, and a paragraph runs on
   from the foot of the left page to the top of the right one when the left page's last row
   is full and the right page's first row is not indented.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import median

import numpy as np

from cppdb.defaults import toml_defaults
from cppdb.ocr.columns import Gutter, find_gutter, in_body, split_at_gutter
from cppdb.ocr.engines import OcrEngine
from cppdb.ocr.types import ImageText, OcrLine, box_from_rect
from cppdb.text.normalize import chinese_punctuation_width
from cppdb.text.segment import join_lines

_OCR = toml_defaults("ocr")

_PAGE_NUMBER = (r"[\s\-–—·•(（\[]*(第\s*)?(\d{1,4}|[ivxlcdmIVXLCDM]{1,7})(\s*页)?"
                r"(\s*[/／]\s*\d{1,5}|\s*of\s*\d{1,5})?[\s\-–—·•)）\]]*")
PAGE_NUMBER = re.compile(f"^{_PAGE_NUMBER}$")
_MARK = rf"(?:{_PAGE_NUMBER}|\d{{1,2}}[:：]\d{{2}}|\d{{1,3}}(?:\.\d{{1,2}})?\s*[%％])"
#: a row of only page numbers, clock times and percentages (status bar, progress, folio)
EDGE_MARKS = re.compile(rf"^\s*{_MARK}(?:\s+{_MARK})*\s*$")
_FOLIO = (r"(?:\d{1,4}\s*[/／]\s*\d{1,5}|\d{1,3}(?:\.\d{1,2})?\s*[%％]|第\s*\d{1,4}\s*页"
          r"|\d{1,2}[:：]\d{2})")
#: a folio set apart by a space at either end of a row: "第一章  8/17", "35% 雨夜"
LABELLED_FOLIO = re.compile(rf"^\s*{_FOLIO}\s+\S|\S\s+{_FOLIO}\s*$")


@dataclass(frozen=True)
class PageSettings:
    """The page-screenshot settings of ``[ocr]`` (fields = TOML keys)."""

    page_margin: float = _OCR["page_margin"]
    page_repeat_share: float = _OCR["page_repeat_share"]
    min_confidence: float = _OCR["min_confidence"]


def group_rows(lines: Sequence[OcrLine]) -> list[OcrLine]:
    """Merge boxes into rows (top to bottom), each read left to right."""
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.top + ln.bottom) / 2):
        if rows:
            last = rows[-1]
            top, bottom = min(b.top for b in last), max(b.bottom for b in last)
            overlap = min(bottom, line.bottom) - max(top, line.top)
            if overlap > 0.5 * min(bottom - top, line.height):
                last.append(line)
                continue
        rows.append([line])
    merged: list[OcrLine] = []
    for row in rows:
        row.sort(key=lambda ln: ln.left)
        box = box_from_rect(min(b.left for b in row), min(b.top for b in row),
                            max(b.right for b in row), max(b.bottom for b in row))
        merged.append(OcrLine(join_lines([b.text for b in row]), box,
                              min(b.confidence for b in row)))
    return merged


def _gaps(rows: Sequence[OcrLine]) -> list[float]:
    return [b.top - a.bottom for a, b in zip(rows, rows[1:])]


def split_margins(rows: Sequence[OcrLine], page_height: float,
                  margin: float) -> tuple[list[OcrLine], list[OcrLine]]:
    """(body rows, removed header/footer rows) of one page."""
    if not rows:
        return [], []
    inner = [r for r in rows if in_body(r, page_height, margin)]
    typical = median([r.height for r in inner] or [r.height for r in rows])
    pitches = [_pitch(r) for r in inner if _wide_chars(r.text) >= 4]
    pitch = median(pitches) if pitches else None
    gaps = [g for g in _gaps(rows) if g > 0]
    typical_gap = median(gaps) if gaps else typical
    removed: set[int] = set()
    for index, row in enumerate(rows):
        centre = (row.top + row.bottom) / 2
        at_top, at_bottom = centre < margin * page_height, centre > (1 - margin) * page_height
        if not (at_top or at_bottom):
            continue
        neighbour = rows[index + 1] if at_top and index + 1 < len(rows) else (
            rows[index - 1] if at_bottom and index > 0 else None)
        gap = (neighbour.top - row.bottom if at_top else row.top - neighbour.bottom) \
            if neighbour is not None else float("inf")
        if EDGE_MARKS.match(row.text) or LABELLED_FOLIO.search(row.text) \
                or row.height < 0.85 * typical \
                or (pitch is not None and _pitch(row) < 0.9 * pitch) \
                or gap > 2 * typical_gap + 0.5 * typical \
                or _centred_and_short(row, rows, typical):
            removed.add(index)
    return ([r for i, r in enumerate(rows) if i not in removed],
            [r for i, r in enumerate(rows) if i in removed])


def _wide_chars(text: str) -> int:
    return sum(unicodedata.east_asian_width(c) in "WF" for c in text)


def _pitch(row: OcrLine) -> float:
    """Width per full-width character (half-width ones count half): the font size of CJK
    text, which box heights (padded by the detector, equal for small and large digits)
    do not measure well. Rows with fewer than two full-width characters get +inf."""
    wide = _wide_chars(row.text)
    if wide < 2:
        return float("inf")
    narrow = sum(not c.isspace() for c in row.text) - wide
    return (row.right - row.left) / (wide + 0.5 * narrow)


def _centred_and_short(row: OcrLine, rows: Sequence[OcrLine], char: float) -> bool:
    """A running head is centred and much shorter than the text block; a short body line
    (the end of a paragraph) starts at the left margin instead."""
    left = float(np.percentile([r.left for r in rows], 10))
    right = float(np.percentile([r.right for r in rows], 90))
    centre = (row.left + row.right) / 2
    return (row.left > left + 2 * char and row.right < right - 2 * char
            and abs(centre - (left + right) / 2) < char)


def _columns(rows: Sequence[OcrLine], gutter: float | None) -> list[list[OcrLine]]:
    """Rows in reading order, split into the left and the right page of a spread at
    ``gutter`` (as :func:`cppdb.ocr.columns.split_at_gutter` splits them); one column for a
    single page."""
    if gutter is None:
        return [list(rows)]
    left, right = split_at_gutter(rows, Gutter(gutter, gutter))
    return [column for column in (left, right) if column]


def paragraphs(rows: Sequence[OcrLine], gutter: float | None = None) -> list[str]:
    """Merge body rows into paragraphs (see rules 3 and 4 of the module docstring); a
    paragraph may run on from the left page of a spread (``gutter``) to the right one."""
    if not rows:
        return []
    char = median(r.height for r in rows)
    columns = _columns(rows, gutter)
    # (left, right) margin of the column (page) each row is on
    edges = [(float(np.percentile([c.left for c in column], 10)),
              float(np.percentile([c.right for c in column], 90)))
             for column in columns for _ in column]
    starts = {id(column[0]) for column in columns[1:]}
    ordered = [row for column in columns for row in column]
    gaps = [g for column in columns for g in _gaps(column) if g > 0]
    typical_gap = median(gaps) if gaps else char
    out: list[list[str]] = [[ordered[0].text]]
    for k, (previous, row) in enumerate(zip(ordered, ordered[1:])):
        indented = row.left > edges[k + 1][0] + 0.8 * char
        short_previous = previous.right < edges[k][1] - 1.5 * char
        new_column = id(row) in starts
        spaced = not new_column and row.top - previous.bottom > 1.8 * typical_gap + 0.3 * char
        if indented or short_previous or spaced:
            out.append([row.text])
        else:
            out[-1].append(row.text)
    return [join_lines(parts) for parts in out]


def page_body(lines: Sequence[OcrLine], width: float, height: float, margin: float
              ) -> tuple[list[OcrLine], list[OcrLine], float | None]:
    """(body rows in reading order, removed rows, the gutter's x or None) of one screenshot:
    one page, or the two pages of a spread read left then right (rule 4)."""
    gutter = find_gutter(lines, width, height, margin)
    pages = split_at_gutter(lines, gutter) if gutter is not None else (list(lines),)
    body: list[OcrLine] = []
    removed: list[OcrLine] = []
    for page in pages:
        kept, dropped = split_margins(group_rows(page), height, margin)
        body += kept
        removed += dropped
    return body, removed, (gutter.middle if gutter is not None else None)


def read_page_image(engine: OcrEngine, image, settings: PageSettings, *, path: str = "",
                    ) -> ImageText:
    """OCR one page screenshot (a PIL image) into paragraphs joined by ``\\n``."""
    array = np.asarray(image.convert("RGB"))[:, :, ::-1].copy()  # RGB -> BGR
    found = [replace(ln, text=chinese_punctuation_width(ln.text))
             for ln in engine.read_lines(array) if ln.text.strip()]
    low = [ln for ln in found if ln.confidence < settings.min_confidence]
    body, margins, gutter = page_body(
        [ln for ln in found if ln.confidence >= settings.min_confidence],
        float(array.shape[1]), float(array.shape[0]), settings.page_margin)
    return ImageText(path=path, kind="page", text="\n".join(paragraphs(body, gutter)),
                     lines=tuple(body), removed=tuple(margins + low), gutter=gutter)


def _key(text: str) -> str:
    return re.sub(r"[\d\s]+", "", text)


def remove_running_heads(pages: Sequence[ImageText], page_heights: Sequence[float],
                         settings: PageSettings) -> list[ImageText]:
    """Remove top/bottom rows repeated on many pages of one document (needs ≥ 3 pages)."""
    if len(pages) < 3:
        return list(pages)
    counts: dict[str, int] = {}
    for page, height in zip(pages, page_heights):
        # rows already removed on a page count too: a head is often caught on most pages
        # by the per-page rules and only missed on a few
        edge = _edge_rows(page, height, settings.page_margin) + list(page.removed)
        for key in {_key(r.text) for r in edge}:
            counts[key] = counts.get(key, 0) + 1
    share = settings.page_repeat_share
    repeated = {k for k, n in counts.items() if k and n >= share * len(pages)}
    out: list[ImageText] = []
    for page, height in zip(pages, page_heights):
        drop = [r for r in _edge_rows(page, height, settings.page_margin)
                if _key(r.text) in repeated]
        if not drop:
            out.append(page)
            continue
        body = [r for r in page.lines if r not in drop]
        out.append(replace(page, text="\n".join(paragraphs(body, page.gutter)),
                           lines=tuple(body),
                           removed=page.removed + tuple(drop)))
    return out


def _edge_rows(page: ImageText, height: float, margin: float) -> list[OcrLine]:
    return [r for r in page.lines if (r.top + r.bottom) / 2 < margin * height
            or (r.top + r.bottom) / 2 > (1 - margin) * height]
