"""Realistic e-reader screenshots with known text (benchmarks and tests of page OCR).

What real screenshots of e-book apps have and clean renders do not: a phone status bar
(clock, battery) above the page, a running head (book or chapter title, small and gray),
a footer (page number in one of several forms, reading progress), serif/sans/kai faces in
several sizes and line spacings, tinted or dark ("night mode") backgrounds, and JPEG noise.
Phone pages are tall (1080×2340 and similar) with large type; desktop pages are a text
column in a wide window with small type. Spreads (:func:`spread`) are a desktop or tablet
reader showing two book pages side by side: each page has its own running head (book title
on the left, chapter on the right) and page number, with an empty gutter (sometimes a fold
shadow) between them; the text runs on from the left page to the right one.

Every page comes with its ground truth: the body rows as drawn (for the CER) and the
header/footer strings (which must not reach the body). Pages are a pure function of the
text and the seed: the same call gives the same pixels.
"""
from __future__ import annotations

import io
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cppdb.ocr.render import DEFAULT_FONTS, _wrap

#: faces used when installed: sans (WenQuanYi), serif (AR PL UMing), kai (AR PL UKai)
SCREEN_FONTS = DEFAULT_FONTS + (
    "/usr/share/fonts/truetype/arphic/uming.ttc",
    "/usr/share/fonts/truetype/arphic/ukai.ttc",
)
#: (name, width, height, body font size range in px)
DEVICES = {
    "phone": ((1080, 2340, (40, 56)), (1170, 2532, (44, 60)), (720, 1600, (28, 38))),
    "desktop": ((1920, 1080, (22, 30)), (1440, 900, (20, 26))),
    "spread": ((1920, 1080, (22, 28)), (2388, 1668, (30, 38)), (1440, 900, (20, 24))),
}
_PAPER = ((255, 255, 255), (250, 248, 240), (244, 236, 216), (232, 240, 228))


@dataclass(frozen=True)
class Screenshot:
    """One generated page: encoded image bytes and what it shows."""

    name: str
    data: bytes
    device: str
    size: tuple[int, int]
    font: str
    font_size: int
    body: tuple[str, ...]        # body rows as drawn, in reading order (a spread: left page
    #                              then right page; first-line indents included)
    margins: tuple[str, ...]     # status bar, running head, footer strings

    def body_text(self) -> str:
        return "".join("".join(row.split()) for row in self.body)


def installed_fonts() -> list[str]:
    return [f for f in dict.fromkeys(SCREEN_FONTS) if Path(f).is_file()]


def _rows(paragraphs: Sequence[str], font, width: float) -> list[str]:
    rows: list[str] = []
    for paragraph in paragraphs:
        if paragraph.strip():
            rows.extend(_wrap(paragraph.strip(), font, width, indent="\u3000\u3000"))
    return rows


def _footer(rng: random.Random, page: int, total: int, chapter: str) -> str:
    return rng.choice((str(page), f"- {page} -", f"{page}/{total}", f"第{page}页",
                       f"{100 * page / total:.1f}%", f"{chapter}  {page}/{total}"))


def _encode(image, rng: random.Random) -> tuple[bytes, str]:
    """JPEG (at a seeded quality) four times in five, else PNG."""
    buffer = io.BytesIO()
    if rng.random() < 0.8:
        image.save(buffer, "JPEG", quality=rng.randint(60, 92))
        return buffer.getvalue(), "jpg"
    image.save(buffer, "PNG")
    return buffer.getvalue(), "png"


def screenshot(paragraphs: Sequence[str], *, seed: int, device: str = "phone",
               title: str = "", chapter: str = "第一章", name: str = "",
               fonts: Sequence[str] | None = None) -> Screenshot:
    """Render one page of ``paragraphs`` (starting at a seeded row) in a seeded style, in one
    of ``fonts`` (default: the installed faces of :data:`SCREEN_FONTS`)."""
    if device == "spread":      # its sizes are in DEVICES, but one page drawn there is no spread
        raise ValueError("screenshot() draws one page: use spread() for two facing pages")
    from PIL import Image, ImageDraw, ImageFont

    rng = random.Random(seed)
    width, height, (lo, hi) = rng.choice(DEVICES[device])
    fonts = list(fonts) if fonts else installed_fonts()
    if not fonts:
        from cppdb.ocr.render import find_cjk_font
        find_cjk_font()   # raises the clear "install a CJK font" error
    font_path = rng.choice(fonts)
    size = rng.randint(lo, hi)
    body = ImageFont.truetype(font_path, size)
    small = ImageFont.truetype(font_path, max(14, int(size * rng.uniform(0.55, 0.75))))
    column = min(width, int(height * 0.75)) if device == "desktop" else width
    left = (width - column) // 2 + int(column * rng.uniform(0.05, 0.1))
    text_width = width - 2 * left
    step = int(size * rng.uniform(1.45, 1.9))
    top, bottom = int(height * rng.uniform(0.08, 0.11)), int(height * rng.uniform(0.89, 0.92))
    rows = _rows(paragraphs, body, text_width)
    per_page = max(1, (bottom - top) // step)
    start = rng.randrange(max(1, len(rows) - per_page))
    shown = rows[start:start + per_page]
    dark = rng.random() < 0.15
    paper = (28, 28, 30) if dark else rng.choice(_PAPER)
    ink, faint = ((200, 200, 196), (130, 130, 128)) if dark else ((24, 24, 24), (128, 128, 128))
    image = Image.new("RGB", (width, height), paper)
    draw = ImageDraw.Draw(image)
    margins: list[str] = []
    head_y = int(height * 0.045)
    if device == "phone" and rng.random() < 0.6:   # the status bar of a phone screenshot
        clock = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
        battery = f"{rng.randint(5, 100)}%"
        draw.text((left, int(height * 0.012)), clock, font=small, fill=ink)
        draw.text((width - left, int(height * 0.012)), battery, font=small, fill=ink, anchor="ra")
        margins += [clock, battery]
        head_y = int(height * 0.05)
    head = title or chapter
    if rng.random() < 0.5:
        draw.text((width / 2, head_y), head, font=small, fill=faint, anchor="mt")
    else:
        draw.text((left, head_y), head, font=small, fill=faint)
    margins.append(head)
    page = start // per_page + 1
    total = len(rows) // per_page + 1
    for index, row in enumerate(shown):
        draw.text((left, top + index * step), row, font=body, fill=ink)
    footer = _footer(rng, page, total, chapter)
    foot_y = height - int(height * 0.04)
    anchor, x = rng.choice((("mb", width / 2), ("rb", width - left), ("lb", left)))
    draw.text((x, foot_y), footer, font=small, fill=faint, anchor=anchor)
    margins.append(footer)
    data, suffix = _encode(image, rng)
    return Screenshot(name=f"{name or device}-{seed:04d}.{suffix}", data=data,
                      device=device, size=(width, height), font=Path(font_path).stem,
                      font_size=size, body=tuple(shown), margins=tuple(margins))


def spread(paragraphs: Sequence[str], *, seed: int, title: str = "书名",
           chapter: str = "第一章", name: str = "", fonts: Sequence[str] | None = None
           ) -> Screenshot:
    """Two facing pages of ``paragraphs`` (a desktop or tablet reader in two-page mode), in a
    seeded style; ``body`` is the left page's rows, then the right page's."""
    from PIL import Image, ImageDraw, ImageFont

    rng = random.Random(seed)
    width, height, (lo, hi) = rng.choice(DEVICES["spread"])
    fonts = list(fonts) if fonts else installed_fonts()
    if not fonts:
        from cppdb.ocr.render import find_cjk_font
        find_cjk_font()
    font_path = rng.choice(fonts)
    size = rng.randint(lo, hi)
    body = ImageFont.truetype(font_path, size)
    small = ImageFont.truetype(font_path, max(14, int(size * rng.uniform(0.55, 0.75))))
    outer = int(width * rng.uniform(0.04, 0.07))     # window edge to the page's outer margin
    gutter = int(width * rng.uniform(0.06, 0.1))     # inner margins of both pages together
    page_width = (width - 2 * outer - gutter) // 2
    step = int(size * rng.uniform(1.45, 1.9))
    top, bottom = int(height * rng.uniform(0.09, 0.12)), int(height * rng.uniform(0.88, 0.91))
    rows = _rows(paragraphs, body, page_width)
    per_page = max(1, (bottom - top) // step)
    start = rng.randrange(max(1, len(rows) - 2 * per_page))
    left_rows = rows[start:start + per_page]
    right_rows = rows[start + per_page:start + 2 * per_page]
    dark = rng.random() < 0.15
    paper = (28, 28, 30) if dark else rng.choice(_PAPER)
    ink, faint = ((200, 200, 196), (130, 130, 128)) if dark else ((24, 24, 24), (128, 128, 128))
    image = Image.new("RGB", (width, height), paper)
    draw = ImageDraw.Draw(image)
    if rng.random() < 0.5:        # the fold: a faint shadow down the middle
        shade = tuple(max(0, c - 14) for c in paper)
        draw.rectangle((width // 2 - 2, 0, width // 2 + 2, height), fill=shade)
    number = start // per_page + 1
    total = len(rows) // per_page + 2
    margins: list[str] = []
    centred_heads = rng.random() < 0.5
    folio = rng.choice(("{}", "- {} -", "第{}页"))       # one form on both pages
    for side, (x0, shown, head) in enumerate(((outer, left_rows, title),
                                              (width - outer - page_width, right_rows, chapter))):
        head_y = int(height * 0.045)
        if centred_heads:
            draw.text((x0 + page_width / 2, head_y), head, font=small, fill=faint, anchor="mt")
        else:        # heads on the outer edge of each page
            anchor_x, anchor = ((x0, "la") if side == 0 else (x0 + page_width, "ra"))
            draw.text((anchor_x, head_y), head, font=small, fill=faint, anchor=anchor)
        margins.append(head)
        for index, row in enumerate(shown):
            draw.text((x0, top + index * step), row, font=body, fill=ink)
        footer = folio.format(number + side)
        foot_x, anchor = rng.choice(((x0 + page_width / 2, "mb"),
                                     ((x0, "lb") if side == 0 else (x0 + page_width, "rb"))))
        draw.text((foot_x, height - int(height * 0.04)), footer, font=small, fill=faint,
                  anchor=anchor)
        margins.append(footer)
    data, suffix = _encode(image, rng)
    return Screenshot(name=f"{name or 'spread'}-{seed:04d}.{suffix}", data=data,
                      device="spread", size=(width, height), font=Path(font_path).stem,
                      font_size=size, body=tuple(left_rows + right_rows),
                      margins=tuple(margins))


def screenshots(paragraphs: Sequence[str], n: int, *, seed: int = 0,
                devices: Sequence[str] = ("phone",), title: str = "") -> list[Screenshot]:
    """``n`` pages, devices taken in turn (``"spread"``: two facing pages), each with its own
    seeded style and position."""
    return [spread(paragraphs, seed=seed * 10_000 + i, title=title or "书名")
            if devices[i % len(devices)] == "spread" else
            screenshot(paragraphs, seed=seed * 10_000 + i, device=devices[i % len(devices)],
                       title=title) for i in range(n)]
