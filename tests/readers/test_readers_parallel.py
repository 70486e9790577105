"""Parallel-text readers: encodings, line-count checks, problems instead of silent drops."""
from __future__ import annotations

import codecs

import pytest

from cppdb.errors import BadInputError
from cppdb.readers.parallel import (ParallelText, detect_encoding, read_lines, read_parallel,
                                    read_pretokenized, read_tatoeba_tsv)

ZH = ["他们在学校里学习。", "政府将兴建一座新机场。", "这条河流经这座城市。"]
EN = ["They study at school.", "The government will build a new airport.",
      "The river flows through the city."]


def _write(path, lines, encoding="utf-8", bom=b""):
    path.write_bytes(bom + ("\n".join(lines) + "\n").encode(encoding))
    return path


@pytest.mark.parametrize("encoding,bom", [
    ("utf-8", b""), ("utf-8", codecs.BOM_UTF8), ("utf-16-le", codecs.BOM_UTF16_LE),
    ("utf-16-be", codecs.BOM_UTF16_BE), ("utf-16-le", b""), ("gbk", b""), ("gb18030", b""),
])
def test_zh_encodings(tmp_path, encoding, bom):
    lines = ZH * 3  # charset detection needs a little text
    zh = _write(tmp_path / "a.zh", lines, encoding, bom)
    en = _write(tmp_path / "a.en", EN * 3)
    text = read_parallel(zh, en)
    assert list(text.zh) == lines
    assert list(text.en) == EN * 3
    assert text.ids == tuple(range(9))


def test_big5(tmp_path):
    lines = ["他們在學校裡學習。", "政府將興建一座新機場。", "這條河流經這座城市。"] * 3
    path = _write(tmp_path / "b.zh", lines, "big5")
    assert read_lines(path) == lines


def test_detect_encoding_bom_first():
    assert detect_encoding(codecs.BOM_UTF8 + "中文".encode()) == "utf-8-sig"
    assert detect_encoding("中文".encode()) == "utf-8"


def test_mismatched_line_counts(tmp_path):
    zh = _write(tmp_path / "x.zh", ZH)
    en = _write(tmp_path / "y.en", EN[:2])
    with pytest.raises(BadInputError) as info:
        read_parallel(zh, en)
    assert f"zh file {zh} has 3 lines, en file {en} has 2" in str(info.value)
    assert info.value.hint and "line-aligned" in info.value.hint


@pytest.mark.parametrize("content,message", [
    (b"", "is empty"), (b"\n \n", "is empty"),
    (bytes(range(256)) * 40, "looks binary"),
])
def test_bad_files(tmp_path, content, message):
    zh = tmp_path / "bad.zh"
    zh.write_bytes(content)
    en = _write(tmp_path / "ok.en", EN)
    with pytest.raises(BadInputError, match=message):
        read_parallel(zh, en)


def test_missing_file(tmp_path):
    with pytest.raises(BadInputError, match="does not exist"):
        read_parallel(tmp_path / "nope.zh", tmp_path / "nope.en")


def test_empty_and_overlong_lines_are_problems(tmp_path):
    zh = _write(tmp_path / "p.zh", [ZH[0], "", ZH[1], "长" * 50, ZH[2], "   "])
    en = _write(tmp_path / "p.en", [EN[0], "orphan", EN[1], "long", EN[2], ""])
    text = read_parallel(zh, en, max_chars=40)
    assert text.ids == (0, 2, 4)
    assert list(text.zh) == ZH
    assert [(p.line, p.reason) for p in text.problems] == [
        (2, "empty zh side"),
        (4, "zh side has 50 characters (limit annotate.max_chars=40)"),
        (6, "empty line (both sides)"),
    ]
    assert len(text) + len(text.problems) == 6   # nothing silently lost
    record = text.problems[0].to_record("src")
    assert record["id"] == 1 and record["en"] == "orphan"


def test_pretokenized(tmp_path):
    path = _write(tmp_path / "t.txt", [
        "他们 在 学校 里 学习 。 ||| They study at school .",
        "no separator here",
        "a ||| b ||| c",
        "政府 ||| government",
    ])
    text = read_pretokenized(path)
    assert text.pretokenized
    assert text.ids == (0, 3)
    assert text.zh[0] == ("他们", "在", "学校", "里", "学习", "。")
    assert text.en[1] == ("government",)
    assert [p.line for p in text.problems] == [2, 3]
    assert "separator" in text.problems[0].reason


def test_tatoeba(tmp_path):
    path = _write(tmp_path / "cmn.txt", [
        "Hi.\t嗨。\tCC-BY 2.0 (France) Attribution: tatoeba.org #1",
        "Run.\t你用跑的。\tCC-BY",
        "broken line",
    ], bom=codecs.BOM_UTF8)
    text = read_tatoeba_tsv(path)
    assert text.zh == ("嗨。", "你用跑的。") and text.en == ("Hi.", "Run.")
    assert [p.line for p in text.problems] == [3]
    assert read_tatoeba_tsv(path, limit=1).ids == (0,)


def test_head_keeps_problems_before_the_cut():
    text = ParallelText((0, 2, 3), ("a", "b", "c"), ("x", "y", "z"),
                        problems=(), pretokenized=False)
    assert text.head(2).ids == (0, 2)
