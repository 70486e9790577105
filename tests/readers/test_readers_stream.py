"""The streaming reader reads exactly what decoding the whole file reads, in bounded memory."""
from __future__ import annotations

import json
import tracemalloc

import polars as pl
import pytest

from cppdb.annotate.staging import read_staged_rows, stage_source
from cppdb.errors import BadInputError
from cppdb.readers import stream
from cppdb.readers.encoding import decode_bytes
from cppdb.readers.parallel import open_parallel_input, read_parallel
from cppdb.readers.stream import iter_lines

ZH_LINES = ["他出生于北京。", "我們今天去圖書館看書", "", "臺灣的天氣很好。", "  第五行 ", "\u3000全角空格"]


def whole_file_lines(data: bytes) -> list[str]:
    """The reader before streaming: decode everything, split on \\n, \\r\\n, \\r only."""
    text = decode_bytes(data).text.removeprefix("\ufeff")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def _corpus(n: int, end: str = "\n") -> str:
    return end.join(ZH_LINES[i % len(ZH_LINES)] + f" {i}" for i in range(n)) + end


ENCODED = [  # name, bytes
    ("utf-8", _corpus(400).encode("utf-8")),
    ("utf-8 BOM", b"\xef\xbb\xbf" + _corpus(400).encode("utf-8")),
    ("utf-16 BOM", _corpus(400).encode("utf-16")),
    ("utf-16-le no BOM", _corpus(400).encode("utf-16-le")),
    ("utf-16-be no BOM", _corpus(400).encode("utf-16-be")),
    ("gb18030", _corpus(400).encode("gb18030")),
    ("big5", _corpus(400).replace("国", "國").encode("big5", errors="ignore")),
    ("crlf utf-8", _corpus(400, "\r\n").encode("utf-8")),
    ("cr utf-8", _corpus(400, "\r").encode("utf-8")),
    ("u2028 is not a line end", "一\u2028二\x85三\x1c四\n五".encode("utf-8")),
    ("no final line end", "甲\n乙".encode("utf-8")),
    ("blank lines kept", "\n\n甲\n\n".encode("utf-8")),
]


@pytest.mark.parametrize("block", [1, 3, 7, 1 << 20])   # boundaries inside characters, \r\n
@pytest.mark.parametrize("sample", [64, 4096, 1 << 16])  # detected from the head only
@pytest.mark.parametrize("name,data", ENCODED, ids=[e[0] for e in ENCODED])
def test_streamed_lines_equal_whole_file_lines(tmp_path, monkeypatch, name, data, block, sample):
    monkeypatch.setattr(stream, "SAMPLE_BYTES", sample)
    path = tmp_path / "x.txt"
    path.write_bytes(data)
    try:
        expected = whole_file_lines(data)
    except BadInputError:
        with pytest.raises(BadInputError):
            list(iter_lines(path, block_bytes=block))
        return
    try:
        got = list(iter_lines(path, block_bytes=block))
    except stream.EncodingRedetected as redo:   # a tiny head sample can mislead: re-read
        got = list(iter_lines(path, block_bytes=block, encoding=redo.encoding))
    assert got == expected


def test_a_late_encoding_change_is_redetected_on_the_whole_file(tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "SAMPLE_BYTES", 256)
    data = ("ascii line\n" * 100).encode() + "中文一行\n".encode("gb18030") * 20
    (tmp_path / "x.zh").write_bytes(data)
    (tmp_path / "x.en").write_bytes(b"english\n" * 120)
    with pytest.raises(stream.EncodingRedetected) as info:
        list(iter_lines(tmp_path / "x.zh", block_bytes=64))
    assert info.value.encoding == "gb18030"
    text = read_parallel(tmp_path / "x.zh", tmp_path / "x.en")   # retried transparently
    assert text.zh[-1] == "中文一行" and len(text) == 120


def test_a_late_decoding_error_names_file_and_line(tmp_path):
    path = tmp_path / "x.zh"
    path.write_bytes("好\n".encode() * 5000 + b"\xff\xfe bad\n" + "好\n".encode() * 10)
    with pytest.raises(BadInputError, match=r"x\.zh is not valid utf-8 at line 5001"):
        list(iter_lines(path, what="zh", encoding="utf-8", block_bytes=4096))


@pytest.mark.parametrize("data,message", [
    (b"\x00\x01\x02\x03" * 3000, "binary"),
    (b"", "empty"),
    (b" \n\t\n", "empty"),
])
def test_bad_files_are_coded_errors(tmp_path, data, message):
    path = tmp_path / "x.zh"
    path.write_bytes(data)
    with pytest.raises(BadInputError, match=message):
        list(iter_lines(path, what="zh"))


def test_a_late_line_count_mismatch_fails_after_streaming(tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "BLOCK_BYTES", 512)
    (tmp_path / "a.zh").write_text("中\n" * 3000, encoding="utf-8")
    (tmp_path / "a.en").write_text("en\n" * 2999, encoding="utf-8")
    source = open_parallel_input(tmp_path / "a.zh", tmp_path / "a.en", None, max_chars=100)
    rows = source.rows()
    seen = 0
    with pytest.raises(BadInputError, match="has 3000 lines, en file .* has 2999"):
        for _ in rows:
            seen += 1
    assert seen == 2999                       # streamed: the mismatch shows at the end


LIMIT_ZH = ["一", "", "三", "四" * 30, "五", "", "七"]
LIMIT_EN = ["one", "two", "three", "four", "five", "", "seven"]


@pytest.mark.parametrize("limit,ids,problem_lines", [
    (None, [0, 2, 4, 6], [2, 4, 6]),
    (0, [], []),
    (1, [0], []),
    (2, [0, 2], [2]),
    (3, [0, 2, 4], [2, 4]),
    (4, [0, 2, 4, 6], [2, 4, 6]),
    (9, [0, 2, 4, 6], [2, 4, 6]),
])
def test_limit_keeps_the_first_usable_pairs_and_the_problems_before_them(
        tmp_path, limit, ids, problem_lines):
    (tmp_path / "l.zh").write_text("\n".join(LIMIT_ZH) + "\n", encoding="utf-8")
    (tmp_path / "l.en").write_text("\n".join(LIMIT_EN) + "\n", encoding="utf-8")
    text = open_parallel_input(tmp_path / "l.zh", tmp_path / "l.en", None, max_chars=20,
                               limit=limit).collect()
    assert list(text.ids) == ids
    assert [p.line for p in text.problems] == problem_lines
    if limit is not None and limit > 0:        # the in-memory form agrees
        full = read_parallel(tmp_path / "l.zh", tmp_path / "l.en", max_chars=20)
        assert full.head(limit) == text


@pytest.mark.parametrize("zh,en,reason", [
    ("中", "en", None),
    ("", "en", "empty zh side"),
    ("中", "  ", "empty en side"),
    (" ", "", "empty line (both sides)"),
    ("中" * 21, "en", "zh side has 21 characters"),
    ("中" * 20, "en", None),                         # at the limit: must not fire
])
def test_problem_lines_are_staged_to_rejected(tmp_path, zh, en, reason):
    (tmp_path / "p.zh").write_text(f"好\n{zh}\n", encoding="utf-8")
    (tmp_path / "p.en").write_text(f"ok\n{en}\n", encoding="utf-8")
    source = open_parallel_input(tmp_path / "p.zh", tmp_path / "p.en", None, max_chars=20)
    staged = stage_source(source, tmp_path / "s.parquet", tmp_path / "r.jsonl", batch_rows=1)
    rejected = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert staged.pairs == (2 if reason is None else 1)
    assert [r["line"] for r in rejected] == ([] if reason is None else [2])
    if reason:
        assert rejected[0]["reason"].startswith(reason)
    rows = read_staged_rows(staged.path, 0, staged.pairs)
    assert rows.zh[0] == "好" and rows.ids[0] == 0


@pytest.mark.parametrize("kind", ["pair", "pretokenized", "tatoeba"])
def test_staged_file_equals_the_in_memory_text(tmp_path, kind):
    zh = [f"中文 第{i} 句" if i % 7 else "" for i in range(50)]
    en = [f"sentence {i}" for i in range(50)]
    if kind == "pair":
        (tmp_path / "a.zh").write_text("\n".join(zh) + "\n", encoding="utf-8")
        (tmp_path / "a.en").write_text("\n".join(en) + "\n", encoding="utf-8")
        args = (tmp_path / "a.zh", tmp_path / "a.en", None)
    else:
        sep = " ||| " if kind == "pretokenized" else "\t"
        lines = [f"{z}{sep}{e}" if kind == "pretokenized" else f"{e}{sep}{z}\tCC"
                 for z, e in zip(zh, en)]
        (tmp_path / "a.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        args = (None, None, tmp_path / "a.txt")
    source = open_parallel_input(*args, max_chars=100)
    text = source.collect()
    staged = stage_source(source, tmp_path / "s.parquet", tmp_path / "r.jsonl", batch_rows=8)
    assert (staged.pairs, staged.rejected, staged.pretokenized) == (
        len(text), len(text.problems), kind == "pretokenized")
    assert read_staged_rows(staged.path, 0, staged.pairs) == text.__class__(
        text.ids, text.zh, text.en, pretokenized=text.pretokenized)
    assert pl.read_parquet(staged.path).height == len(text)
    import pyarrow.parquet as pq
    assert pq.ParquetFile(staged.path).metadata.num_row_groups == -(-len(text) // 8)


def _peak_bytes(action) -> int:
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _write_pairs(tmp_path, n: int):
    zh, en = tmp_path / f"{n}.zh", tmp_path / f"{n}.en"
    zh.write_text("".join(f"这是第{i}个用于测试内存的中文句子。\n" for i in range(n)), encoding="utf-8")
    en.write_text("".join(f"This is test sentence number {i} for memory.\n" for i in range(n)),
                  encoding="utf-8")
    return zh, en


@pytest.mark.parametrize("how,bounded", [("stream and stage", True),
                                         ("read whole files", False)])   # must-fire case
def test_peak_memory_does_not_grow_with_corpus_size(tmp_path, monkeypatch, how, bounded):
    monkeypatch.setattr(stream, "BLOCK_BYTES", 1 << 15)
    peaks = []
    for n in (100, 20_000, 80_000):                 # the first run warms imports and caches
        zh, en = _write_pairs(tmp_path, n)
        source = open_parallel_input(zh, en, None, max_chars=200)
        if how == "stream and stage":
            action = lambda: stage_source(source, tmp_path / f"{n}.parquet",  # noqa: E731
                                          tmp_path / f"{n}.jsonl", batch_rows=1000)
        else:
            action = lambda: read_parallel(zh, en)  # noqa: E731
        peaks.append(_peak_bytes(action))
    growth = peaks[2] / peaks[1]
    print(how, peaks, growth)
    assert (growth < 1.3) is bounded, f"peaks {peaks}, growth {growth:.2f}"


def test_a_staged_file_is_reused_only_for_the_same_input(tmp_path, monkeypatch):
    (tmp_path / "a.zh").write_text("一\n二\n三\n", encoding="utf-8")
    (tmp_path / "a.en").write_text("one\ntwo\nthree\n", encoding="utf-8")
    args = (tmp_path / "a.zh", tmp_path / "a.en", None)
    out, rej = tmp_path / "s.parquet", tmp_path / "r.jsonl"
    first = stage_source(open_parallel_input(*args, max_chars=9), out, rej, batch_rows=2)
    calls = []
    monkeypatch.setattr("cppdb.annotate.staging._write_staged",
                        lambda *a: calls.append(a) or first)
    assert stage_source(open_parallel_input(*args, max_chars=9), out, rej, batch_rows=2) == first
    assert calls == []                                    # resumed: the input is not read again
    stage_source(open_parallel_input(*args, max_chars=9, limit=2), out, rej, batch_rows=2)
    assert len(calls) == 1                                # another limit: staged again


@pytest.mark.parametrize("encoding", ["utf-8", "gb18030", "big5", "utf-16-le"])
@pytest.mark.parametrize("shift", [0, 1, 2, 3])
def test_a_sample_ending_inside_a_character_is_not_misdetected(tmp_path, monkeypatch,
                                                                encoding, shift):
    monkeypatch.setattr(stream, "SAMPLE_BYTES", 4096 + shift)
    text = "".join(f"臺灣的天氣很好，我們今天去圖書館看書第{i}次。\n" for i in range(400))
    path = tmp_path / "x.txt"
    path.write_bytes(text.encode(encoding))
    assert list(iter_lines(path)) == text.splitlines()      # no EncodingRedetected either
