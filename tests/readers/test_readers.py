"""Readers: encodings, plain text, EPUB, subtitles, documents and version folders."""
from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from cppdb.config import load_config
from cppdb.errors import BadInputError
from cppdb.readers.documents import Cue, read_document, read_version_dir
from cppdb.readers.encoding import decode_bytes
from cppdb.readers.text import split_paragraphs

SIMPLIFIED = ["我们今天去学校，", "然后回家。", "你好吗？", "我很好。"]
TRADITIONAL = ["我們今天去學校，", "然後回家。", "你好嗎？", "我很好。"]


def srt_text(lines: list[str]) -> str:
    blocks = []
    for i, line in enumerate(lines):
        start, end = i * 2, i * 2 + 1
        blocks.append(f"{i + 1}\n00:00:{start:02d},000 --> 00:00:{end:02d},500\n{line}\n")
    return "\n".join(blocks) + "\n"


# -- encodings -----------------------------------------------------------------------------
def _encodable(texts: list[str], encodings: list[str]) -> list[tuple[str, str]]:
    """(text, encoding) pairs the charset can represent (Big5 has no 麦, GBK no ⋯)."""
    cases = []
    for text in texts:
        for encoding in encodings:
            try:
                text.encode(encoding)
            except UnicodeEncodeError:
                continue
            cases.append((text, encoding))
    return cases


@pytest.mark.parametrize("text,encoding", _encodable(
    ["在麦太即将临盆的时候", "我們今天去學校。", "麦兜", "你好嗎？",
     "更正：左边额角上⋯\n1\n00:00:01,000"],
    ["gbk", "gb18030", "big5", "utf-16-le", "utf-16-be", "utf-8"]))
def test_decode_round_trip(text, encoding):
    assert decode_bytes(text.encode(encoding)).text == text


@pytest.mark.parametrize("bom,codec,name", [
    (codecs.BOM_UTF8, "utf-8", "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16-le", "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "utf-16"), (codecs.BOM_UTF32_LE, "utf-32-le", "utf-32"),
])
def test_decode_boms(bom, codec, name):
    decoded = decode_bytes(bom + "字幕".encode(codec))
    assert (decoded.text, decoded.encoding) == ("字幕", name)


def test_decode_rejects_binary():
    with pytest.raises(BadInputError, match="looks binary"):
        decode_bytes(bytes(range(256)) * 8, where="x.srt")


# -- plain text ----------------------------------------------------------------------------
def test_paragraph_modes():
    text = "第一段第一行\n第一段第二行\n\n  Second para\ngoes on.\n"
    assert split_paragraphs(text, "lines") == ["第一段第一行", "第一段第二行", "Second para",
                                               "goes on."]
    assert split_paragraphs(text, "blank_lines") == ["第一段第一行第一段第二行",
                                                     "Second para goes on."]


def test_text_reader_gbk_and_conversion(tmp_path):
    path = tmp_path / "chapter1.txt"
    path.write_bytes("\n".join(TRADITIONAL).encode("big5"))
    doc = read_document(path)
    assert (doc.kind, doc.encoding, doc.name) == ("text", "cp950", "chapter1")
    assert doc.units == tuple(SIMPLIFIED) and doc.converted
    kept = read_document(path, config=load_config(overrides=["readers.to_simplified=false"]))
    assert kept.units == tuple(TRADITIONAL) and not kept.converted


@pytest.mark.parametrize("content,message", [(b"", "is empty"), (b"  \n\t\n", "is empty"),
                                             (b"\x00\x01\x02" * 50, "looks binary")])
def test_text_reader_bad_files(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(BadInputError, match=message):
        read_document(path)


def test_unsupported_and_missing(tmp_path):
    (tmp_path / "x.pdf").write_bytes(b"%PDF")
    with pytest.raises(BadInputError, match="unsupported document type") as info:
        read_document(tmp_path / "x.pdf")
    assert ".epub" in (info.value.hint or "")
    with pytest.raises(BadInputError, match="does not exist"):
        read_document(tmp_path / "nope.txt")


# -- subtitles -----------------------------------------------------------------------------
@pytest.mark.parametrize("encoding,expected", [
    ("gbk", "gb18030"), ("big5", "cp950"), ("utf-16", "utf-16"), ("utf-16-le", "utf-16-le"),
    ("utf-8-sig", "utf-8-sig"),
])
def test_srt_encodings(tmp_path, encoding, expected):
    lines = TRADITIONAL if encoding == "big5" else SIMPLIFIED
    path = tmp_path / "ep01.srt"
    path.write_bytes(srt_text(lines).encode(encoding))
    doc = read_document(path)
    assert doc.kind == "subtitle" and doc.encoding == expected
    assert doc.units == tuple(SIMPLIFIED)
    assert doc.cues[1] == Cue(2000, 3500, "然后回家。")


def test_srt_tags_multiline_and_bilingual(tmp_path):
    text = ("1\n00:00:01,000 --> 00:00:02,500\n<font color=\"#ffffff\">我们</font><i>今天</i>\n"
            "去学校\nWe go to school today\n\n"
            "2\n00:00:03,000 --> 00:00:04,000\n- 你好吗？\n- 我很好\n\n"
            "3\n00:00:05,000 --> 00:00:06,000\n<b></b>\n\n"
            "4\n00:00:07,000 --> 00:00:08,000\nOK, thanks\n\n")
    path = tmp_path / "a.srt"
    path.write_text(text, encoding="utf-8")
    doc = read_document(path)
    assert doc.cues[0] == Cue(1000, 2500, "我们今天\n去学校")
    assert doc.units[:2] == ("我们今天去学校", "- 你好吗？ - 我很好")
    assert [reason for _, reason in doc.problems] == [
        "empty after removing formatting tags", "only non-Chinese lines (dropped)"]
    keep = load_config(overrides=["readers.drop_non_chinese_lines=false"])
    assert read_document(path, config=keep).units[-1] == "OK, thanks"


ASS = """[Script Info]
ScriptType: v4.00+

[V4+ Styles]
Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, \
Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, \
Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
Style: Default,Arial,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,2,\
2,10,10,10,1

[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,{\\an8}後來\\h的事
Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\i1}你好{\\i0}\\N世界
Comment: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,这是注释
Dialogue: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,{\\p1}m 0 0 l 100 0 100 100{\\p0}
"""


@pytest.mark.filterwarnings("ignore:Failed to parse alignment")  # v4+ styles in a .ssa file
@pytest.mark.parametrize("suffix", [".ass", ".ssa"])
def test_ass_tags_comments_drawings(tmp_path, suffix):
    path = tmp_path / f"ep{suffix}"
    path.write_bytes(ASS.encode("gbk") if suffix == ".ass" else ASS.encode("utf-16"))
    doc = read_document(path)
    assert doc.cues == (Cue(1000, 2000, "你好\n世界"), Cue(3000, 4000, "后来 的事"))


def test_vtt(tmp_path):
    path = tmp_path / "ep.vtt"
    path.write_text("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v 麦兜>你好<c.x>吗</c>？\n\n"
                    "00:00:03.000 --> 00:00:04.000\n再见\n", encoding="utf-8")
    assert read_document(path).units == ("你好吗？", "再见")


def test_corrupt_subtitle(tmp_path):
    path = tmp_path / "bad.srt"
    path.write_text("this is not a subtitle file at all\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="no subtitle cues|not a valid"):
        read_document(path)


# -- EPUB ----------------------------------------------------------------------------------
def build_epub(path: Path, chapters: list[tuple[str, str]]) -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("cppdb-test")
    book.set_title("測試之書")
    book.set_language("zh")
    items = []
    for index, (title, body) in enumerate(chapters, start=1):
        item = epub.EpubHtml(title=title, file_name=f"chap{index}.xhtml", lang="zh")
        item.content = f"<html><body><h1>{title}</h1>{body}</body></html>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    epub.write_epub(str(path), book)
    return path


def test_epub_reader(tmp_path):
    path = build_epub(tmp_path / "book.epub", [
        ("第一章", "<p>他說：“好。”</p><p>然後<ruby>走<rt>zǒu</rt></ruby>了。<br/>第二行。</p>"
                  "<script>var x = 1;</script>"),
        ("第二章", "<div><p>雨夜。</p></div><ul><li>一</li><li>二</li></ul>"),
    ])
    doc = read_document(path)
    assert doc.kind == "epub" and doc.title == "测试之书"
    assert doc.units == ("第一章", "他说：“好。”", "然后走了。", "第二行。",
                         "第二章", "雨夜。", "一", "二")


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 truncated zip", b"not a zip at all"])
def test_corrupt_epub(tmp_path, content):
    path = tmp_path / "broken.epub"
    path.write_bytes(content)
    with pytest.raises(BadInputError, match="not a readable EPUB"):
        read_document(path)


# -- version folders -----------------------------------------------------------------------
def test_read_version_dir(tmp_path):
    (tmp_path / "ch10.txt").write_text("第十章。", encoding="utf-8")
    (tmp_path / "ch2.txt").write_bytes("第二章。".encode("gbk"))
    (tmp_path / "ep1.srt").write_bytes(srt_text(TRADITIONAL).encode("big5"))
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "notes.pdf").write_bytes(b"%PDF")
    (tmp_path / ".hidden.txt").write_text("x", encoding="utf-8")
    skipped: list[tuple[str, str]] = []
    docs = read_version_dir(tmp_path, skipped=skipped)
    assert [d.path.name for d in docs] == ["ch2.txt", "ch10.txt", "ep1.srt"]
    assert docs[2].units == tuple(SIMPLIFIED)
    assert sorted((Path(p).name, r.split(" is ")[-1]) for p, r in skipped) == [
        ("empty.txt", "empty"), ("notes.pdf", "unsupported document type")]
    with pytest.raises(BadInputError, match="empty.txt is empty"):
        read_version_dir(tmp_path)


def test_version_dir_without_documents(tmp_path):
    (tmp_path / "a.pdf").write_bytes(b"%PDF")
    with pytest.raises(BadInputError, match="no readable documents"):
        read_version_dir(tmp_path, skipped=[])
