"""Page OCR of e-book screenshots: header/footer rules, the fast engine path, its settings,
and the screenshot generator. Rules run on hand-made boxes; one test runs the real engine on
one generated phone screenshot (a few seconds)."""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from cppdb.config import load_config, resolve
from cppdb.errors import ConfigError
from cppdb.ocr.batch import OcrSettings
from cppdb.ocr.engines import DET_SIDE, REC_BATCH, REC_PAD, RapidOCREngine, line_crop, scale_down
from cppdb.ocr.page import EDGE_MARKS, LABELLED_FOLIO, PageSettings, read_page_image, split_margins
from cppdb.ocr.render import find_cjk_font
from devtools.screens import screenshot, screenshots
from cppdb.ocr.types import OcrLine, box_from_rect

PAGE = 2000.0     # page height of the hand-made cases; the edge zones are y < 160 and y > 1840
PITCH = 50.0      # body characters are 50 px wide and 50 px high


def row(text: str, left: float, top: float, *, pitch: float = PITCH, height: float = 50.0,
        width: float | None = None) -> OcrLine:
    width = width if width is not None else pitch * len(text)
    return OcrLine(text, box_from_rect(left, top, left + width, top + height), 0.99)


def body() -> list[OcrLine]:
    """Eighteen full rows of body text from y=200 to y=1730, 90 px apart."""
    return [row("正文的一整行共有十八个字符在这里啊", 80, 200 + 90 * i) for i in range(18)]


@pytest.mark.parametrize("extra,removed", [
    # status bar: clock + battery, small digits in one merged row at the very top
    ([row("10:45 7%", 60, 20, width=900, height=40)], ["10:45 7%"]),
    # left-aligned running head as tall as the body but set in a smaller face (pitch 36)
    ([row("第一章", 80, 110, pitch=36)], ["第一章"]),
    # right-aligned labelled folio in the footer: chapter name + page of chapter
    ([row("第一章 8/17", 700, 1900, width=250)], ["第一章 8/17"]),
    # reading progress alone, and progress with a label
    ([row("35.2%", 460, 1900, width=100)], ["35.2%"]),
    ([row("雨夜 12%", 80, 1900, width=260)], ["雨夜 12%"]),
    # must NOT fire: a body row in the top zone a little narrower than the rest (pitch 46)
    ([row("正文从页顶就开始了这一行也是十八字", 80, 110, pitch=46)], []),
    # must NOT fire: body-size text starting in the top zone, no gap to the body
    ([row("正文从页顶就开始了这一行也是十八字", 80, 110)], []),
    # must NOT fire: the last body row in the bottom zone, short (end of a paragraph)
    ([row("他走了。", 80, 1820)], []),
    # must NOT fire: a percentage inside a body row of the bottom zone
    ([row("村里约有 50% 的人都去了河边看热闹", 80, 1820, width=800)], []),
    # must NOT fire: a fraction glued to the text, and one wide character (no pitch)
    ([row("比分最后是3/5", 80, 1820, width=400)], []),
    ([row("好。", 80, 1820)], []),
])
def test_margin_rows(extra, removed):
    rows = sorted(body() + extra, key=lambda r: r.top)
    kept, dropped = split_margins(rows, PAGE, PageSettings().page_margin)
    assert [r.text for r in dropped] == removed
    assert len(kept) == 18 + len(extra) - len(removed)


@pytest.mark.parametrize("text,only_marks,labelled", [
    ("12", True, False), ("10:45 7%", True, True), ("35.2%", True, False),
    ("- 8 -", True, False), ("12/300", True, False),
    ("第一章 8/17", False, True), ("8/17 第一章", False, True), ("第一章  第8页", False, True),
    ("雨夜 12:30", False, True),
    ("第一章 12", False, False),           # a bare number next to words could be body text
    ("约有 50% 的人", False, False), ("他们赢了3/5", False, False), ("第一章", False, False),
])
def test_edge_mark_patterns(text, only_marks, labelled):
    assert bool(EDGE_MARKS.match(text)) is only_marks
    assert bool(LABELLED_FOLIO.search(text)) is labelled


@pytest.mark.parametrize("shape,longest,expected,scale", [
    ((2340, 1080), 960, (960, 443), 960 / 2340),
    ((1080, 1920), 960, (540, 960), 0.5),
    ((900, 600), 960, (900, 600), 1.0),       # never scaled up
    ((2340, 1080), 0, (2340, 1080), 1.0),     # 0 = full resolution
    ((20000, 50), 960, (20000, 50), 1.0),     # a strip is not shrunk to nothing
    ((4000, 100), 960, (2560, 64), 0.64),     # the shorter side stops at 64 px
])
def test_scale_down(shape, longest, expected, scale):
    small, factor = scale_down(np.zeros((*shape, 3), np.uint8), longest)
    assert small.shape[:2] == expected and factor == pytest.approx(scale)


@pytest.mark.parametrize("pad,margin", [(0.0, 0), (0.2, 4), (0.5, 10)])
def test_line_crop_straightens_and_pads(pad, margin):
    image = np.full((100, 200, 3), 255, np.uint8)
    image[40:60, 50:150] = 0                          # a 100x20 "line" of ink
    quad = np.float32([[50, 40], [150, 40], [150, 60], [50, 60]])
    crop = line_crop(image, quad, pad)
    assert crop.shape == (20 + 2 * margin, 100, 3)
    assert (crop[margin:margin + 20] < 10).mean() > 0.95   # the line itself, all ink


@pytest.mark.parametrize("key,value,message", [
    ("ocr.page_det_side", 100, "too small"),
    ("ocr.page_det_side", -1, "out of range"),
    ("ocr.page_rec_pad", 1.5, "out of range"),
    ("ocr.rec_batch", 0, "out of range"),
    ("ocr.threads", 0, "out of range"),
])
def test_bad_speed_settings_are_refused(key, value, message):
    with pytest.raises(ConfigError, match=message):
        config = load_config().with_overrides({key: value})
        resolve(OcrSettings, config)


@pytest.mark.parametrize("overrides,key", [
    ({}, ("rapidocr", 1, "", DET_SIDE, REC_PAD, REC_BATCH)),
    ({"ocr.page_det_side": 0, "ocr.page_rec_pad": 0.0, "ocr.rec_batch": 6},
     ("rapidocr", 1, "", 0, 0.0, 6)),
])
def test_speed_settings_reach_the_engine(overrides, key):
    settings = resolve(OcrSettings, load_config().with_overrides(overrides))
    assert settings.engine_key() == key
    engine = RapidOCREngine(threads=key[1], det_side=key[3], rec_pad=key[4], rec_batch=key[5])
    assert (engine.det_side, engine.rec_pad, engine.rec_batch) == key[3:]


@pytest.mark.parametrize("device,sizes", [
    ("phone", {(1080, 2340), (1170, 2532), (720, 1600)}),
    ("desktop", {(1920, 1080), (1440, 900)}),
])
def test_screenshots_are_seeded_and_carry_their_truth(device, sizes):
    text = ["那天晚上下着大雨，街上几乎没有行人。老王撑着一把旧伞，沿着河边慢慢地走回家。"] * 30
    first = screenshot(text, seed=4, device=device)
    assert first == screenshot(text, seed=4, device=device)       # same pixels, same truth
    assert first.size in sizes and Image.open(io.BytesIO(first.data)).size == first.size
    assert first.body and first.margins and "老王" in first.body_text()
    pages = screenshots(text, 3, seed=1, devices=(device,))
    assert len({p.data for p in pages}) == 3


def test_phone_screenshot_read_without_its_margins():
    from rapidfuzz.distance import Levenshtein

    text = ["那天晚上下着大雨，街上几乎没有行人。老王撑着一把旧伞，沿着河边慢慢地走回家。",
            "他想起了小时候的事情：“那时候的河水多清啊！”他自言自语道。"] * 12
    # one face, so that the page is the same on machines with other fonts installed
    page = screenshot(text, seed=3, device="phone", fonts=[str(find_cjk_font())])
    assert page.margins[0] == "22:30"              # this seed draws a status bar
    result = read_page_image(RapidOCREngine(), Image.open(io.BytesIO(page.data)), PageSettings())
    got = "".join(result.text.split())
    assert Levenshtein.distance(page.body_text(), got) <= 0.01 * len(page.body_text())
    assert not any(mark in got for mark in page.margins if mark not in page.body_text())
    assert result.removed


@pytest.mark.parametrize("text,expected", [
    ("不少,满脸", "不少，满脸"), ("去呢?他", "去呢？他"), ("写着:“我", "写着：“我"),
    ("岑吗?”科", "岑吗？”科"), ("他说(笑)", "他说（笑）"), ("你好 ,朋友", "你好，朋友"),
    # must NOT fire: clock times, English, numbers before Chinese, already full-width
    ("10:45", "10:45"), ("a, b", "a, b"), ("OK, 好", "OK, 好"), ("3:5比分", "3:5比分"),
    ("不少，满脸", "不少，满脸"),
])
def test_chinese_punctuation_width(text, expected):
    from cppdb.text.normalize import chinese_punctuation_width

    assert chinese_punctuation_width(text) == expected
