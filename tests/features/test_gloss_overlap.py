"""``f_gloss_overlap``: Jaccard similarity of the CC-CEDICT gloss words of the two sides."""
from __future__ import annotations

import polars as pl
import pytest

from cppdb import schema as S
from cppdb.features.glosses import GLOSS_OVERLAP, gloss_overlap, gloss_table
from cppdb.features.table import FEATURE_DESCRIPTIONS, lexical_feature_table

# type, source, target, expected (None: null); the dictionary's gloss words are in comments
CASES = [
    # synonyms share every gloss word: 去世 / 逝世 {pass, away, die}
    ("phrase", "去世", "逝世", 1.0),
    # two senses of "seat": 议席 {seat, parliament, legislative, assembly} / 座位 {seat}
    ("phrase", "议席", "座位", 0.25),
    # nothing shared: 中国 {china} / 华人 {chinese, ethnic, people, person}
    ("phrase", "中国", "华人", 0.0),
    # a side is looked up whole first: 中国人 {chinese, person}, not 中国 + 人
    ("phrase", "中国 人", "华人", 0.5),
    # a pattern's slots are left out
    ("pattern", "[NP1] 去世", "[NP1] 逝世", 1.0),
    # null: a side the dictionary lacks, a sentence pair, a pattern of slots only
    ("phrase", "Kianzad", "科瑞亚", None),
    ("sentence", "去世", "逝世", None),
    ("pattern", "[NP1]", "[NP1]", None),
]


def _pairs(cases=CASES) -> pl.DataFrame:
    return pl.DataFrame({S.TYPE: [c[0] for c in cases], S.SOURCE: [c[1] for c in cases],
                         S.TARGET: [c[2] for c in cases],
                         S.SOURCE_TOKENS: [c[1].split() for c in cases],
                         S.TARGET_TOKENS: [c[2].split() for c in cases]})


def test_gloss_overlap_table():
    got = gloss_overlap(_pairs()).to_list()
    for case, value in zip(CASES, got, strict=True):
        if case[3] is None:
            assert value is None, case
        else:
            assert value == pytest.approx(case[3]), case


def test_gloss_words_come_from_the_dictionary():
    table = gloss_table()
    words = dict(zip(table["headword"].to_list(), table["gloss"].to_list()))
    assert words["座位"] == ["seat"]
    assert set(words["议席"]) == {"seat", "parliament", "legislative", "assembly"}
    assert "这个" not in words            # "this": every gloss word is a stopword


def test_gloss_overlap_is_symmetric_and_row_aligned():
    pairs = _pairs()
    swapped = pairs.select(S.TYPE, pl.col(S.TARGET).alias(S.SOURCE),
                           pl.col(S.SOURCE).alias(S.TARGET),
                           pl.col(S.TARGET_TOKENS).alias(S.SOURCE_TOKENS),
                           pl.col(S.SOURCE_TOKENS).alias(S.TARGET_TOKENS))
    assert gloss_overlap(swapped).to_list() == gloss_overlap(pairs).to_list()
    reversed_rows = gloss_overlap(pairs.reverse()).to_list()
    assert reversed_rows == gloss_overlap(pairs).to_list()[::-1]


def test_gloss_overlap_without_types_or_rows_is_null():
    untyped = _pairs().drop(S.TYPE)
    assert gloss_overlap(untyped).null_count() == untyped.height
    assert gloss_overlap(_pairs().head(0)).len() == 0


def test_the_feature_table_carries_it():
    assert GLOSS_OVERLAP in FEATURE_DESCRIPTIONS
    table = lexical_feature_table(_pairs())
    assert table[GLOSS_OVERLAP].to_list()[:2] == pytest.approx([1.0, 0.25])


def test_the_parsed_table_is_kept_once_per_machine(tmp_path, monkeypatch):
    from cppdb.features import glosses

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    glosses.gloss_table.cache_clear()
    try:
        first = glosses.gloss_table()
        files = list((tmp_path / "cppdb" / glosses.CACHE_FOLDER).glob("*.parquet"))
        assert len(files) == 1
        glosses.gloss_table.cache_clear()
        assert glosses.gloss_table().equals(first)          # read back, not parsed again
        files[0].write_bytes(b"not parquet")                 # a damaged cache is rebuilt
        glosses.gloss_table.cache_clear()
        assert glosses.gloss_table().equals(first)
        assert pl.read_parquet(files[0]).equals(first)
    finally:
        glosses.gloss_table.cache_clear()


def test_without_the_rules_source_the_table_is_parsed_and_not_cached(tmp_path, monkeypatch):
    import inspect

    from cppdb.features import glosses
    from cppdb.text.cedict import cedict_path

    def no_source(_obj):
        raise OSError("could not get source code")

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    glosses.gloss_table.cache_clear()
    try:
        expected = glosses._parse_gloss_table(cedict_path())
        monkeypatch.setattr(inspect, "getsource", no_source)
        assert glosses.gloss_table().equals(expected)
        assert not (tmp_path / "cppdb" / glosses.CACHE_FOLDER).exists()
    finally:
        glosses.gloss_table.cache_clear()
