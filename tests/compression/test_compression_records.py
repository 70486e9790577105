"""records.parquet of build-compression: typed columns, and the JSONL lines rebuilt from them."""
from __future__ import annotations

import dataclasses
import json

import polars as pl
import pytest

from cppdb.extractors.compression.pipeline import Outcome
from cppdb.extractors.compression.records import outcome_frame, output_record
from cppdb.schema import COMPRESSION_RECORD_SCHEMA

LINK = {"headline": "抵京", "sentence": "抵达北京", "h_start": 1, "h_end": 2, "s_start": 2,
        "s_end": 4, "method": "paraphrase", "score": 0.8, "matched": ["抵京", "抵达北京"]}
WORD_LINK = {"headline": "首相", "sentence": "首相", "h_start": 0, "h_end": 1, "s_start": 1,
             "s_end": 2, "method": "word", "score": 1.0}
PARSED = dict(tokens=("首相", "抵达", "北京"), upos=("NOUN", "VERB", "PROPN"), heads=(1, -1, 1),
              deprels=("nsubj", "root", "obj"), labels=(1, 1, 0), compression="首相抵达",
              keywords=(0, 1), dtt_added=({"token": 0, "word": "首相", "head": 1,
                                           "rule": "subject", "deprel": "nsubj"},),
              compression_chars=4, headline_chars=4, sentence_chars=6,
              compression_rate=4 / 6, headline_ratio=1.0)
BASE = {"line": 3, "headline": "首相抵京", "sentence": "首相抵达北京。"}

CASES = [
    # rejected by a text rule: no links key at all (alignment never ran)
    ("text_rule", Outcome(3, "rejected", "full_stop", BASE["headline"], BASE["sentence"],
                          detail="no full stop"),
     {**BASE, "rule": "full_stop", "detail": "no full stop"}),
    # rejected after alignment with no link: links present and empty
    ("no_links", Outcome(3, "rejected", "no_keywords", BASE["headline"], BASE["sentence"],
                         detail="none aligned", links=()),
     {**BASE, "rule": "no_keywords", "detail": "none aligned", "links": []}),
    # carried input fields come first; a clashing name was renamed input_… upstream
    ("carried", Outcome(3, "rejected", "numeral", BASE["headline"], BASE["sentence"],
                        detail="d", carried=({"name": "id", "json": '"a1"'},
                                             {"name": "input_line", "json": "[1, 2.5, null]"})),
     {"id": "a1", "input_line": [1, 2.5, None], **BASE, "rule": "numeral", "detail": "d"}),
    # kept: every compression field, rates rounded to 4 places, matched only where present
    ("kept", Outcome(3, "kept", "", BASE["headline"], BASE["sentence"],
                     links=(LINK, WORD_LINK), **PARSED),
     {**BASE, "tokens": ["首相", "抵达", "北京"], "upos": ["NOUN", "VERB", "PROPN"],
      "heads": [1, -1, 1], "deprels": ["nsubj", "root", "obj"], "labels": [1, 1, 0],
      "compression": "首相抵达", "links": [LINK, WORD_LINK], "keywords": [0, 1],
      "dtt_added": [{"token": 0, "word": "首相", "head": 1, "rule": "subject",
                     "deprel": "nsubj"}],
      "compression_rate": 0.6667, "compression_chars": 4, "headline_chars": 4,
      "sentence_chars": 6, "headline_ratio": 1.0}),
]


@pytest.mark.parametrize("name, outcome, expected", CASES, ids=[c[0] for c in CASES])
def test_output_record_from_typed_row(name, outcome, expected):
    frame = outcome_frame([outcome])
    row = next(frame.iter_rows(named=True))
    record = output_record(row)
    assert record == expected
    assert list(record) == list(expected)          # the JSONL keeps its field order


def test_compressed_then_rejected_ends_with_rule_and_detail():
    outcome = Outcome(3, "rejected", "compression_too_long", BASE["headline"], BASE["sentence"],
                      detail="too long", links=(WORD_LINK,), **PARSED)
    record = output_record(next(outcome_frame([outcome]).iter_rows(named=True)))
    assert list(record)[-2:] == ["rule", "detail"] and record["compression"] == "首相抵达"


def test_records_are_typed_columns_not_json_text():
    frame = outcome_frame([CASES[-1][1]])
    assert frame.schema == pl.Schema(COMPRESSION_RECORD_SCHEMA)
    assert "record" not in frame.columns
    assert frame["links"].dtype.inner == COMPRESSION_RECORD_SCHEMA["links"].inner
    # the only JSON text left is the user's carried fields, whose types are theirs
    assert json.loads(outcome_frame([CASES[2][1]])["carried"][0][1]["json"]) == [1, 2.5, None]


def test_outcome_fields_are_the_record_columns():
    assert {f.name for f in dataclasses.fields(Outcome)} == set(COMPRESSION_RECORD_SCHEMA)
