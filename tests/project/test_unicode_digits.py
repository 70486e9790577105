"""Characters that are digits to ``str.isdigit`` but not to ``int`` (², ①, ⁵) must not crash a
batch: the real Python-docs corpus has ``m²`` and ``10⁵`` in running text, and one such word
stopped a 77,000-pair extraction (ValueError in the dictionary aligner)."""
from __future__ import annotations

import pytest

from cppdb.align.sentences.chapters import _to_int
from cppdb.align.sentences.pairing_signals import _value
from cppdb.align.words.dictionary import _digits_to_chinese
from cppdb.ocr.batch import natural_key
from cppdb.readers.pharaoh import parse_link

ODD = ["²", "m²", "10⁵", "①", "²月", "³-1"]


@pytest.mark.parametrize("word", ["²", "m²", "①", "²月", "³-1"])
def test_dictionary_numerals_leave_odd_digits_alone(word):
    assert _digits_to_chinese(word) == word


def test_only_the_decimal_digits_are_read():
    assert _digits_to_chinese("10⁵") == "十⁵"


def test_dictionary_numerals_still_convert_real_digits():
    assert [_digits_to_chinese(w) for w in ("3月", "１２月", "21日")] == ["三月", "十二月", "二十一日"]


@pytest.mark.parametrize("token", ODD)
def test_number_parsers_do_not_raise(token):
    _value(token)
    _to_int(token)
    natural_key(f"page-{token}")


def test_pharaoh_links_with_odd_digits_are_not_links():
    assert parse_link("²-1") is None
    assert parse_link("3-5") == (3, 5)
    assert parse_link("３-５") == (3, 5)     # full-width digits are decimal digits
