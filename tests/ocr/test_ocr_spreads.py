"""Two-page spreads in page OCR (issue 17): the gutter is found only where two facing pages
are; a spread is read left page then right page, without either page's head and folio.
Rules run on hand-made boxes; one test runs the real engine on one generated spread."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from cppdb.ocr.columns import Gutter, find_gutter
from cppdb.ocr.page import PageSettings, page_body, paragraphs, read_page_image
from cppdb.ocr.render import find_cjk_font
from devtools.screens import screenshots, spread
from cppdb.ocr.types import OcrLine, box_from_rect

WIDTH = PAGE = 2000.0   # the hand-made screenshots are 2000 x 2000; edge zones y < 160, > 1840
CHAR = 50.0             # body characters are 50 px wide and high; rows 90 px apart
MARGIN = PageSettings().page_margin


def box(text: str, left: float, top: float, *, pitch: float = CHAR,
        width: float | None = None) -> OcrLine:
    width = width if width is not None else pitch * len(text)
    return OcrLine(text, box_from_rect(left, top, left + width, top + CHAR), 0.99)


def column(left: float, chars: int, rows: int, *, first: float = 200, tag: str = "行"
           ) -> list[OcrLine]:
    """``rows`` full rows of ``chars`` characters from ``left``, the first at y = ``first``."""
    return [box(f"{tag}{k:02d}" + "字" * (chars - 3), left, first + 90 * k) for k in range(rows)]


LEFT_PAGE = column(100, 16, 18, tag="左")               # x 100..900
RIGHT_PAGE = column(1100, 16, 18, tag="右")             # x 1100..1900
HEADS = [box("书名", 450, 60, pitch=30), box("第三章", 1450, 60, pitch=30),
         box("12", 480, 1900, pitch=25), box("13", 1480, 1900, pitch=25)]


@pytest.mark.parametrize("lines,gutter", [
    # two full facing pages
    (LEFT_PAGE + RIGHT_PAGE, Gutter(900, 1100)),
    (LEFT_PAGE + RIGHT_PAGE + HEADS, Gutter(900, 1100)),
    # the right page ends a chapter: one full row and a short one
    (LEFT_PAGE + column(1100, 16, 1, tag="右") + [box("他走了。", 1100, 290)], Gutter(900, 1100)),
    # the right page opens a chapter a third of the way down
    (LEFT_PAGE + column(1100, 16, 12, first=740, tag="右"), Gutter(900, 1100)),
    # must NOT fire: one wide column (a desktop page, a landscape tablet)
    (column(100, 36, 18), None),
    # must NOT fire: a wide column with a short centred line (a heading inside the body)
    (column(100, 36, 8) + [box("第二章", 925, 920)] + column(100, 36, 8, first=1010), None),
    # must NOT fire: a page of short lines (a poem) with nothing on the right
    (column(100, 10, 14), None),
    # must NOT fire: a poem signed and dated at the foot, right-aligned
    (column(100, 10, 14) + [box("——某某", 1600, 1600), box("一九二五年十月二十一日", 1350, 1690)],
     None),
    # must NOT fire: every row cut in two by a one-character space (a table, a wide space)
    ([b for k in range(18) for b in (box("甲" * 18, 60, 200 + 90 * k),
                                     box("乙" * 18, 1010, 200 + 90 * k))], None),
    # must NOT fire: a status bar across the top edge zone, one column below it
    ([box("10:45", 60, 20, width=150), box("87%", 1800, 20, width=120)] + column(600, 16, 18),
     None),
])
def test_gutter_is_found_only_between_facing_pages(lines, gutter):
    assert find_gutter(lines, WIDTH, PAGE, MARGIN) == gutter


def test_spread_is_read_left_page_then_right_without_heads_or_folios():
    body, removed, gutter = page_body(RIGHT_PAGE + HEADS + LEFT_PAGE, WIDTH, PAGE, MARGIN)
    assert gutter == 1000
    assert [r.text[:3] for r in body] == [f"左{k:02d}" for k in range(18)] + \
        [f"右{k:02d}" for k in range(18)]
    assert sorted(r.text for r in removed) == sorted(h.text for h in HEADS)


def test_single_page_rows_are_not_split():
    page = column(100, 36, 18)
    body, removed, gutter = page_body(page, WIDTH, PAGE, MARGIN)
    assert body == page and removed == [] and gutter is None


@pytest.mark.parametrize("right_first_left,joined", [
    (1100, True),          # the right page's first row is not indented: the paragraph runs on
    (1200, False),         # an indented first row starts a new paragraph
])
def test_paragraph_runs_on_across_the_gutter(right_first_left, joined):
    left = column(100, 16, 3, tag="左")
    right = [box("右00" + "字" * 11, right_first_left, 200, width=1900 - right_first_left),
             *column(1100, 16, 2, first=290, tag="右")]
    right[-1] = box("右末。", 1100, right[-1].top)          # the paragraph ends here
    texts = paragraphs(left + right, 1000)
    assert len(texts) == (1 if joined else 2)
    assert texts[-1].endswith("右末。")


def test_right_page_starting_below_the_left_pages_end_keeps_its_paragraphs():
    # the left page ends a chapter at y = 700, the right page opens one at y = 740: rows never
    # go back up the image, yet each page's rows are paragraphs of that page's own margins
    left = column(100, 16, 6, tag="左")
    right = column(1100, 16, 12, first=740, tag="右")
    right[-1] = box("右末。", 1100, right[-1].top)
    body, _, gutter = page_body(left + right, WIDTH, PAGE, MARGIN)
    assert gutter == 1000
    assert len(paragraphs(body, gutter)) == 1


def test_spreads_are_seeded_and_carry_their_truth_in_reading_order():
    text = [f"第{k}段的文字在这里，老王撑着一把旧伞，沿着河边慢慢地走回家去了。" for k in range(80)]
    first = spread(text, seed=5)
    assert first == spread(text, seed=5)
    assert first.device == "spread" and Image.open(io.BytesIO(first.data)).size == first.size
    paragraphs_shown = [int(t.split("段")[0].lstrip("\u3000第")) for t in first.body
                        if t.lstrip("\u3000").startswith("第")]
    assert paragraphs_shown == sorted(paragraphs_shown)        # left page, then right page
    assert len(first.margins) == 4                               # two heads, two folios
    assert [p.device for p in screenshots(text, 3, devices=("phone", "spread"))] == [
        "phone", "spread", "phone"]


def test_generated_spread_read_left_then_right_without_margins():
    from rapidfuzz.distance import Levenshtein

    from cppdb.ocr.engines import RapidOCREngine

    text = ["那天晚上下着大雨，街上几乎没有行人。老王撑着一把旧伞，沿着河边慢慢地走回家。",
            "他想起了小时候的事情：“那时候的河水多清啊！”他自言自语道。"] * 30
    page = spread(text, seed=1, title="雨夜", fonts=[str(find_cjk_font())])
    result = read_page_image(RapidOCREngine(), Image.open(io.BytesIO(page.data)), PageSettings())
    got = "".join(result.text.split())
    assert Levenshtein.distance(page.body_text(), got) <= 0.01 * len(page.body_text())
    assert not any(mark in got for mark in page.margins if mark not in page.body_text())
    # both pages' heads are found and removed (single-digit folios may not be detected at all)
    assert {"雨夜", "第一章"} <= {r.text for r in result.removed}
