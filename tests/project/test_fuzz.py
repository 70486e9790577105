"""Fuzzing the readers and config overrides: every failure is a cppdb error with a code.

Example counts are kept small (the suite must stay fast); the strategies mix valid-looking
structure (cue blocks, ``i-j`` links, JSON objects, tab-separated fields) with noise so that
the parsers' edge paths, not only their first check, are reached.
"""
from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cppdb.config import load_config
from cppdb.errors import CppdbError

FAST = settings(max_examples=30, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
TEXT = st.lists(st.sampled_from(list("0123456789:,.->\n\t \"{}[]\\aZ中文，。-") +
                               ["-->", "\r\n", "\ufeff", "Dialogue:", "\x00"]),
                max_size=80).map("".join)
TIME = st.builds(lambda h, m, s, ms: f"{h:02d}:{m:02d}:{s:02d},{ms:03d}",
                 st.integers(0, 99), st.integers(0, 99), st.integers(0, 99),
                 st.integers(0, 9999))
CUE = st.builds(lambda n, a, b, text: f"{n}\n{a} --> {b}\n{text}\n\n",
                st.integers(-1, 9), TIME, TIME, TEXT)


def _expect_coded(call) -> None:
    try:
        call()
    except CppdbError as exc:
        assert exc.code.startswith("E") and len(exc.code) == 4


def _must_read(call):
    """A well-formed input must be read, not refused: any error here fails the test."""
    return call()


def _file(suffix: str, data: bytes | str) -> Path:
    handle = tempfile.NamedTemporaryFile(suffix=suffix, delete=False)
    handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    handle.close()
    return Path(handle.name)


@FAST
@given(st.sampled_from([".srt", ".vtt", ".ass", ".ssa"]),
       st.one_of(TEXT, st.lists(CUE, max_size=5).map("".join),
                 st.binary(max_size=200)))
def test_subtitle_reader(suffix, data):
    from cppdb.readers.subtitles import read_subtitles

    path = _file(suffix, ("[Script Info]\n[Events]\nFormat: Start, End, Text\n" + data)
                 if suffix in (".ass", ".ssa") and isinstance(data, str) else data)
    try:
        _expect_coded(lambda: read_subtitles(path))
    finally:
        path.unlink()


@FAST
@given(st.lists(st.tuples(st.sampled_from(["mimetype", "META-INF/container.xml",
                                           "OEBPS/content.opf", "OEBPS/a.xhtml", "x"]),
                          st.one_of(TEXT, st.just("<html><body><p>中文</p></body></html>"))),
                max_size=4, unique_by=lambda member: member[0]), st.booleans())
def test_epub_reader(members, broken):
    from cppdb.readers.epub import read_epub

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members:
            archive.writestr(name, text)
    data = buffer.getvalue()
    path = _file(".epub", data[: len(data) // 2] if broken else data)
    try:
        _expect_coded(lambda: read_epub(path))
    finally:
        path.unlink()


WORDS = st.text(alphabet="中文字词abcXYZ", min_size=1, max_size=6)
HAN_WORDS = st.text(alphabet="中文字词好的", min_size=1, max_size=6)    # Latin-only lines are dropped
GOOD_CUES = st.lists(st.tuples(st.integers(0, 3_000_000), st.integers(1, 60_000), HAN_WORDS),
                     min_size=1, max_size=5)


def _srt_time(ms: int) -> str:
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


@FAST
@given(GOOD_CUES)
def test_subtitle_reader_reads_good_cues(cues):
    from cppdb.readers.subtitles import read_subtitles

    blocks, expected, start = [], [], 0
    for number, (gap, length, text) in enumerate(cues, start=1):
        start += gap
        blocks.append(f"{number}\n{_srt_time(start)} --> {_srt_time(start + length)}\n{text}\n")
        expected.append((start, start + length, text))
        start += length
    path = _file(".srt", "\n".join(blocks))
    try:
        content = _must_read(lambda: read_subtitles(path))
    finally:
        path.unlink()
    assert [(c.start_ms, c.end_ms, c.text) for c in content.cues] == expected
    assert content.problems == ()


LINK = st.one_of(st.builds("{}-{}".format, st.integers(-2, 300), st.integers(-2, 300)),
                 st.sampled_from(["1p2", "3?4", "a-b", "1-", "-", "1-2-3"]))


@FAST
@given(st.lists(st.lists(LINK, max_size=6).map(" ".join), max_size=5).map("\n".join))
def test_pharaoh_reader(text):
    from cppdb.extractors.bilingual import read_pharaoh

    path = _file(".align", text)
    try:
        _expect_coded(lambda: read_pharaoh(path))
    finally:
        path.unlink()


GOOD_LINKS = st.lists(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)),
                              min_size=1, max_size=6), min_size=1, max_size=5)


@FAST
@given(GOOD_LINKS)
def test_pharaoh_reader_reads_good_links(lines):
    from cppdb.extractors.bilingual import read_pharaoh

    path = _file(".align", "\n".join(" ".join(f"{i}-{j}" for i, j in line) for line in lines))
    try:
        assert _must_read(lambda: read_pharaoh(path)) == lines
    finally:
        path.unlink()


FIELD = st.one_of(st.text(max_size=8), st.sampled_from(['"', '"a\tb"', '""', "source", "3"]))


@FAST
@given(st.lists(st.lists(FIELD, max_size=4).map("\t".join), max_size=5).map("\n".join),
       st.booleans(), st.sampled_from(["utf-8", "gbk", "utf-16"]))
def test_tsv_pairs_reader(text, with_score, encoding):
    from cppdb.rank.pairs import read_tsv_pairs

    path = _file(".tsv", text.encode(encoding, errors="replace"))
    try:
        _expect_coded(lambda: read_tsv_pairs(path, with_score=with_score))
    finally:
        path.unlink()


@FAST
@given(st.lists(st.tuples(WORDS, WORDS, st.integers(1, 5)), min_size=1, max_size=5),
       st.booleans(), st.sampled_from(["utf-8", "gbk", "utf-16"]))
def test_tsv_pairs_reader_reads_good_pairs(rows, with_score, encoding):
    from cppdb.rank.pairs import LABEL, read_tsv_pairs

    text = "\n".join("\t".join([a, b, str(score)][: 2 + with_score]) for a, b, score in rows)
    path = _file(".tsv", text.encode(encoding))
    try:
        frame = _must_read(lambda: read_tsv_pairs(path, with_score=with_score))
    finally:
        path.unlink()
    assert frame["source"].to_list() == [a for a, _, _ in rows]
    assert frame["target"].to_list() == [b for _, b, _ in rows]
    if with_score:
        assert frame[LABEL].to_list() == [float(score) for _, _, score in rows]


JSON_VALUE = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                          lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                          max_leaves=6)
RECORD = st.fixed_dictionaries({}, optional={
    "source": JSON_VALUE, "target": JSON_VALUE, "alignment": JSON_VALUE,
    "type": JSON_VALUE, "features": JSON_VALUE, "anchor": JSON_VALUE})


@FAST
@given(st.lists(st.one_of(RECORD.map(json.dumps), TEXT), max_size=4).map("\n".join))
def test_jsonl_pairs_reader(text):
    from cppdb.export import read_pairs

    path = _file(".jsonl", text)
    try:
        _expect_coded(lambda: read_pairs(path))
    finally:
        path.unlink()


@FAST
@given(st.lists(st.tuples(WORDS, WORDS, st.sampled_from(["phrase", "pattern", "sentence"])),
                min_size=1, max_size=4))
def test_jsonl_pairs_reader_reads_good_records(records):
    from cppdb.export import read_pairs

    text = "\n".join(json.dumps({"source": a, "target": b, "type": kind}, ensure_ascii=False)
                     for a, b, kind in records)
    path = _file(".jsonl", text)
    try:
        frame = _must_read(lambda: read_pairs(path))
    finally:
        path.unlink()
    assert list(zip(frame["source"], frame["target"], strict=True)) == \
        [(a, b) for a, b, _ in records]


KEYS = st.sampled_from(["rank.seed", "align_words.threshold", "align_words.aligners",
                        "annotate.workers", "bilingual.patterns", "embed.backend",
                        "align_words.thot.eflomal_iterations", "nope.x", "rank", "a..b", ""])


@FAST
@given(KEYS, st.one_of(TEXT, st.sampled_from(["[1, 2]", "true", "-1", "1e400", "nan",
                                              "{a = 1}", '"x"', "[", "[[1]]"])))
def test_config_overrides(key, value):
    _expect_coded(lambda: load_config(overrides=[f"{key}={value}"]))


@FAST
@given(st.integers(0, 2**31 - 1), st.floats(0.0, 1.0, allow_nan=False))
def test_good_config_overrides_are_applied(seed, threshold):
    config = _must_read(lambda: load_config(
        overrides=[f"rank.seed={seed}", f"align_words.threshold={threshold!r}"]))
    assert config.get("rank.seed") == seed
    assert config.get("align_words.threshold") == threshold


@pytest.mark.parametrize("override", ["rank.seed=nan", "align_words.threshold=nan",
                                      "rank=1", "a..b=1", "=1"])
def test_config_corner_cases_are_config_errors(override):
    with pytest.raises(CppdbError) as err:
        load_config(overrides=[override])
    assert err.value.code == "E100"
