"""OCR: subtitle compositing/line cutting, page layout rules, batches with corrupt inputs.

Layout and preprocessing rules are tested on synthetic boxes/arrays (fast); the engine runs
on a few small images rendered here from text with a CJK font (slow on 2 cores: keep few).
"""
from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from cppdb.errors import BackendUnavailableError, ModelNotFoundError
from cppdb.ocr.batch import OcrSettings, collect_images, image_kind, ocr_image_bytes
from cppdb.ocr.engines import OcrEngine, PaddleOCREngine
from cppdb.ocr.page import (PAGE_NUMBER, PageSettings, group_rows, paragraphs,
                            remove_running_heads, split_margins)
from cppdb.ocr.render import render_page_images, render_subtitle_image
from cppdb.ocr.subtitle import SubtitleSettings, composite, find_lines, read_subtitle_image
from cppdb.ocr.types import ImageText, OcrLine, box_from_rect
from cppdb.readers.images import carry_broken_paragraphs

SERIAL = OcrSettings(workers=1)


def row(text: str, left: float, top: float, right: float, bottom: float) -> OcrLine:
    return OcrLine(text, box_from_rect(left, top, right, bottom), 0.99)


# -- subtitle preprocessing ----------------------------------------------------------------
def outlined_text_image() -> Image.Image:
    """A white bar with a dark outline touching three edges; transparent on the right."""
    gray = np.full((20, 60), 16, np.uint8)
    gray[3:17, 3:37] = 218
    alpha = np.zeros((20, 60), np.uint8)
    alpha[:, :40] = 255
    return Image.fromarray(np.dstack([gray, alpha]), "LA")


def test_composite_removes_outline_and_normalises_polarity():
    gray, ink = composite(outlined_text_image())
    # white fill -> dark ink; the dark outline melts into the (white) background
    assert gray[10, 20] < 60 and gray[1, 1] > 200 and gray[10, 50] > 200
    assert ink[3:17, 3:37].all() and ink.sum() == 14 * 34


def test_composite_opaque_dark_background():
    array = np.zeros((30, 90), np.uint8)
    array[10:20, 10:80] = 250  # light text on a black video frame
    gray, ink = composite(Image.fromarray(array, "L"))
    assert gray[15, 40] < 10 and gray[0, 0] > 245
    assert ink.sum() == 10 * 70


def test_find_lines_multi_line_slivers_and_word_gaps():
    ink = np.zeros((100, 200), bool)
    ink[5:35, 10:60] = True      # line 1, word 1
    ink[5:35, 120:190] = True    # line 1, word 2 (gap 60 px = 2 line heights)
    ink[50:55, 10:190] = True    # upper stroke of 二-like glyph row ...
    ink[58:90, 10:190] = True    # ... cut off by a gap: one line with what follows
    lines = find_lines(ink, min_gap=2, word_gap=1.0)
    assert lines == [[(5, 35, 10, 60), (5, 35, 120, 190)], [(50, 90, 10, 190)]]
    assert find_lines(np.zeros((5, 5), bool)) == []


class FakeEngine(OcrEngine):
    """Records the crops it is given; 'recognises' each as its size."""

    name = "fake"

    def __init__(self) -> None:
        self.crops: list[np.ndarray] = []

    def recognize(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        self.crops.extend(crops)
        return [(f"{c.shape[1]}x{c.shape[0]}", 0.3 if c.shape[1] < 100 else 0.9)
                for c in crops]


def test_subtitle_crops_are_padded_and_scaled():
    gray = np.zeros((40, 300), np.uint8)
    gray[2:18, 0:300] = 230      # a line touching the left/right edges
    gray[24:40, 0:40] = 230      # a short second line touching the bottom edge
    alpha = np.where(gray > 0, 255, 0).astype(np.uint8)
    image = Image.fromarray(np.dstack([gray, alpha]), "LA")
    engine = FakeEngine()
    settings = SubtitleSettings(subtitle_pad=0.25, subtitle_line_height=32, min_confidence=0.5)
    text, kept, dropped = read_subtitle_image(engine, image, settings)
    margin = 8
    assert [c.shape for c in engine.crops] == [(32 + 2 * margin, 600 + 2 * margin, 3),
                                               (32 + 2 * margin, 80 + 2 * margin, 3)]
    first = engine.crops[0][:, :, 0]
    assert (first[:margin] == 255).all() and (first[:, :margin] == 255).all()
    assert first[margin + 16, margin + 300] < 50            # the text, now dark on white
    assert text == "616x48" and [ln.text for ln in dropped] == ["96x48"]
    assert kept[0].box == ((0.0, 2.0), (300.0, 2.0), (300.0, 18.0), (0.0, 18.0))


def test_image_kind():
    assert image_kind(Image.new("LA", (100, 90)), "auto") == "subtitle"
    assert image_kind(Image.new("RGBA", (600, 800), (255, 255, 255, 255)), "auto") == "page"
    assert image_kind(Image.new("RGB", (800, 60)), "auto") == "subtitle"
    assert image_kind(Image.new("RGB", (600, 800)), "auto") == "page"
    assert image_kind(Image.new("LA", (100, 90)), "page") == "page"


# -- page layout ---------------------------------------------------------------------------
@pytest.mark.parametrize("text,is_number", [
    ("12", True), ("- 12 -", True), ("第12页", True), ("12/300", True), ("xiv", True),
    ("(3)", True), ("第一章", False), ("12个人", False), ("雨夜·第一章", False)])
def test_page_number_pattern(text, is_number):
    assert bool(PAGE_NUMBER.match(text)) is is_number


def body_rows() -> list[OcrLine]:
    """A 1000-px page: header, 2 paragraphs (second indented), page number."""
    return [row("书名·第一章", 300, 30, 500, 48),
            row("那天晚上下着大雨，街上", 100, 120, 900, 150),
            row("几乎没有行人。", 60, 170, 500, 200),          # short: paragraph ends
            row("他想起了小时候的事情", 100, 220, 900, 250),   # indented: new paragraph
            row("和那条河。", 60, 270, 900, 300),
            row("第二段的最后一行。", 60, 320, 400, 350),
            row("7", 490, 950, 510, 970)]


def test_split_margins_and_paragraphs():
    body, removed = split_margins(body_rows(), 1000, 0.08)
    assert [r.text for r in removed] == ["书名·第一章", "7"]
    assert paragraphs(body) == ["那天晚上下着大雨，街上几乎没有行人。",
                                "他想起了小时候的事情和那条河。第二段的最后一行。"]


def test_centred_running_head_in_body_size_is_removed():
    rows = [row("书名", 420, 30, 580, 60)] + body_rows()[1:6]   # as tall as the body text
    body, removed = split_margins(rows, 1000, 0.08)
    assert [r.text for r in removed] == ["书名"]


def test_body_text_near_the_top_is_kept():
    rows = [row("正文第一行从页顶开始", 60, 40, 900, 70)] + body_rows()[1:6]
    body, removed = split_margins(rows, 1000, 0.08)
    assert removed == [] and body[0].text == "正文第一行从页顶开始"


def test_group_rows_reading_order():
    boxes = [row("右边", 500, 102, 700, 130), row("下一行", 60, 150, 300, 180),
             row("左边", 60, 100, 480, 128)]
    assert [r.text for r in group_rows(boxes)] == ["左边右边", "下一行"]


def test_running_heads_repeated_across_pages():
    def page(number: int) -> ImageText:
        lines = (row("雨夜", 60, 40, 200, 75), row(f"正文{number}。", 60, 200, 900, 235))
        return ImageText(path=f"p{number}", kind="page", text="雨夜\n正文。", lines=lines,
                         height=1000)
    pages = [page(i) for i in range(3)]
    # on a fourth page the head was already removed by the per-page rules: it still counts
    pages.append(ImageText(path="p3", kind="page", text="正文3。", height=1000,
                           lines=(row("正文3。", 60, 200, 900, 235),),
                           removed=(row("雨夜", 60, 40, 200, 75),)))
    pages = [pages[3], *pages[:3]]
    cleaned = remove_running_heads(pages[:1] + pages[1:3], [1000] * 3, PageSettings())
    assert [p.text for p in cleaned] == ["正文3。", "正文0。", "正文1。"]
    assert all(p.removed[0].text == "雨夜" for p in cleaned)
    untouched = remove_running_heads(pages[1:3], [1000] * 2, PageSettings())
    assert [p.text for p in untouched] == ["雨夜\n正文。"] * 2   # too few pages to tell


def test_carry_broken_paragraphs():
    pages = [("第一段。\n第二段没有", "p1"), ("结束。\n第三段。", "p2"), ("第四段", "p3")]
    assert carry_broken_paragraphs(pages) == [("第一段。", "p1"), ("第二段没有结束。\n第三段。", "p2"),
                                              ("第四段", "p3")]


# -- batches, corrupt inputs, engines ------------------------------------------------------
def test_collect_images_with_corrupt_archive(tmp_path):
    (tmp_path / "b").mkdir()
    Image.new("RGB", (10, 10)).save(tmp_path / "b" / "p10.png")
    Image.new("RGB", (10, 10)).save(tmp_path / "b" / "p2.png")
    (tmp_path / "broken.zip").write_bytes(b"PK\x03\x04 not really")
    with zipfile.ZipFile(tmp_path / "good.zip", "w") as archive:
        archive.writestr("x/002.png", b"garbage")
        archive.writestr("x/001.png", (tmp_path / "b" / "p2.png").read_bytes())
        archive.writestr("notes.txt", "hi")
    (tmp_path / "readme.txt").write_text("hi", encoding="utf-8")
    sources, problems = collect_images([tmp_path])
    assert [s.name.replace(str(tmp_path), "") for s in sources] == [
        "/b/p2.png", "/b/p10.png", "/good.zip!/x/001.png", "/good.zip!/x/002.png"]
    assert [(Path(w).name, r.split(":")[0]) for w, r in problems] == [
        ("broken.zip", "not a readable zip archive"),
        ("readme.txt", "not an image or zip archive (skipped)")]


def test_corrupt_image_record():
    record = ocr_image_bytes("x.png", b"\x89PNG\r\n\x1a\n garbage", SERIAL)
    assert record.error and "cannot decode image" in record.error and record.text == ""
    truncated = ocr_image_bytes("y.png", _png_bytes()[:60], SERIAL)
    assert truncated.error and "corrupt" in truncated.error


def _png_bytes() -> bytes:
    import io
    buffer = io.BytesIO()
    Image.new("RGB", (64, 64), (255, 255, 255)).save(buffer, "PNG")
    return buffer.getvalue()


def test_paddle_engine_errors(monkeypatch):
    engine = PaddleOCREngine(model_dir="")
    with pytest.raises(BackendUnavailableError, match="paddleocr") as info:
        engine.check()
    assert "pip install paddleocr paddlepaddle" in (info.value.hint or "")
    monkeypatch.setattr(PaddleOCREngine, "requires", ())
    with pytest.raises(ModelNotFoundError, match="none configured"):
        PaddleOCREngine(model_dir="").check()
    with pytest.raises(ModelNotFoundError, match="does not exist") as info:
        PaddleOCREngine(model_dir="/nonexistent/paddle").check()
    assert "/nonexistent/paddle/det" in info.value.message


# -- the real engine on rendered images (slow: few and small) ------------------------------
def _plain(text: str) -> str:
    return "".join(ch for ch in text if not ch.isspace())


def test_ocr_subtitle_images_and_cli(tmp_path):
    from typer.testing import CliRunner

    from cppdb.cli import app

    folder = tmp_path / "subs"
    render_subtitle_image("在麦太即将临盆的时候", folder / "0001.png")
    render_subtitle_image("一只胶兜在九龙上空飞过\n沿荔枝角道直出大角咀道", folder / "0002.png")
    (folder / "0003.png").write_bytes(b"not an image")
    (tmp_path / "broken.zip").write_bytes(b"PK\x03\x04 truncated")
    with zipfile.ZipFile(tmp_path / "more.zip", "w") as archive:
        archive.write(folder / "0001.png", "cue.png")
    image = Image.open(folder / "0001.png")
    assert image.mode == "LA" and image.getchannel("A").getbbox() == (0, 0, *image.size)
    out = tmp_path / "ocr.jsonl"
    result = CliRunner().invoke(app, ["ocr", str(folder), str(tmp_path / "broken.zip"),
                                      str(tmp_path / "more.zip"), "-o", str(out),
                                      "--workers", "2", "--json"])
    assert result.exit_code == 0, result.output
    records = {r["path"].replace(f"{tmp_path}/", "").replace("subs/", ""): r
               for r in map(json.loads, out.read_text("utf-8").splitlines())}
    assert records["0001.png"]["text"] == "在麦太即将临盆的时候"
    assert records["0001.png"]["kind"] == "subtitle" and records["0001.png"]["error"] is None
    assert records["0002.png"]["text"] == "一只胶兜在九龙上空飞过\n沿荔枝角道直出大角咀道"
    assert [len(records["0002.png"]["lines"])] == [2]
    assert "cannot decode image" in records["0003.png"]["error"]
    assert "not a readable zip archive" in records["broken.zip"]["error"]
    assert records["more.zip!/cue.png"]["text"] == "在麦太即将临盆的时候"
    summary = json.loads(result.stdout)
    assert (summary["images"], summary["with_text"], len(summary["errors"])) == (4, 3, 2)


def test_ocr_page_screenshots_as_document(tmp_path):
    from cppdb.readers.documents import read_document

    paragraphs_in = ["那天晚上下着大雨，街上几乎没有行人。老王撑着一把旧伞，沿着河边慢慢地走回家。",
                     "他想起了小时候的事情：“那时候的河水多清啊！”他自言自语道。",
                     "走到桥头，他停了下来。远处传来一阵钟声。"]
    pages = render_page_images(paragraphs_in, tmp_path / "book", title="雨夜·第一章",
                               size=(560, 280), font_size=24)
    assert len(pages) == 2  # a paragraph is cut by the page break
    doc = read_document(tmp_path / "book")
    assert doc.kind == "images" and len(doc.sources) == len(doc.units)
    got = [_plain(p) for unit in doc.units for p in unit.split("\n")]
    assert got == [_plain(p) for p in paragraphs_in]   # header + page numbers removed
    assert doc.problems == ()


# -- cppdb.api.run_ocr: the command's arguments as typed overrides; refusal when nothing reads -
@pytest.mark.parametrize("arguments, message", [
    ({"kind": "sideways"}, "unknown ocr.kind 'sideways'"),       # reaches the [ocr] settings
    ({"workers": "two"}, "ocr.workers"),                         # typed: a string is refused
])
def test_run_ocr_checks_its_arguments_as_settings(tmp_path, arguments, message):
    from cppdb import api
    from cppdb.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        api.run_ocr([tmp_path], tmp_path / "out.jsonl", api.load_config(), **arguments)
    assert not (tmp_path / "out.jsonl").exists()


def test_run_ocr_refuses_when_no_image_reads(tmp_path):
    from cppdb import api
    from cppdb.errors import BadInputError

    (tmp_path / "a.png").write_bytes(b"not an image")
    (tmp_path / "b.png").write_bytes(b"nor this")
    out = tmp_path / "out.jsonl"
    with pytest.raises(BadInputError, match=r"no image could be read \(2 errors"):
        api.run_ocr([tmp_path], out, api.load_config(), workers=1)
    assert len(out.read_text("utf-8").splitlines()) == 2     # the records still say why
