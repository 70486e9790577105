"""PPDB lexical weighting (cppdb.features.lexical_weights) on hand-made tables and links."""
from __future__ import annotations

import math

import polars as pl
import pytest

from cppdb import schema as S
from cppdb.align.words.lexical import FLOOR
from cppdb.features.lexical_weights import (
    LEX_FEATURES,
    NULL_PROBABILITY,
    add_run_weights,
    pair_weights,
    unit_weights,
)

B = S.LINK_BASE
#: p(en | zh)
EN_GIVEN_ZH = [("大", "big", 0.5), ("狗", "dog", 0.8), ("犬", "dog", 0.2), ("看", "see", 0.6),
               ("看", "look", 0.3), ("的", "'s", 0.1)]
#: p(zh | en)
ZH_GIVEN_EN = [("大", "big", 0.4), ("狗", "dog", 0.9), ("犬", "dog", 0.1), ("看", "see", 0.5),
               ("看", "look", 0.7), ("的", "'s", 0.2)]


def _lex(rows: list[tuple[str, str, float]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"zh": pl.String, "en": pl.String, "prob": pl.Float64},
                        orient="row")


def _occurrences(rows: list[tuple[str, str, str, list[int]]], kind: str = "phrase"
                 ) -> pl.LazyFrame:
    return pl.DataFrame(
        [{"kind": kind, "lhs": "NP", "zh": zh, "en": en, "align": align, "id": k}
         for k, (zh, en, _, align) in enumerate(rows)],
        schema={"kind": pl.String, "lhs": pl.String, "zh": pl.String, "en": pl.String,
                "align": pl.List(pl.Int32), "id": pl.Int64}).lazy()


def _units(rows, kind="phrase") -> pl.DataFrame:
    return unit_weights(_occurrences(rows, kind), _lex(EN_GIVEN_ZH), _lex(ZH_GIVEN_EN))


@pytest.mark.parametrize("case, occurrences, zh, en, lex_en, lex_zh", [
    ("one-to-one links: geometric mean per word",
     [("大 狗", "big dog", "", [0, B + 1])], "大 狗", "big dog",
     math.sqrt(0.5 * 0.8), math.sqrt(0.4 * 0.9)),
    ("an English word without a link gets p(e|NULL); the Chinese side is fully linked",
     [("狗", "the dog", "", [1])], "狗", "the dog",
     math.sqrt(NULL_PROBABILITY * 0.8), 0.9),
    ("a word linked to two words averages their probabilities",
     [("看", "look see", "", [0, 1])], "看", "look see",
     math.sqrt(0.3 * 0.6), (0.7 + 0.5) / 2),
    ("a linked cell missing from the table counts as the floor",
     [("犬", "big", "", [0])], "犬", "big", FLOOR, FLOOR),
    ("slots are not words: only 的/'s count",
     [("[NP1] 的", "[NN1] 's", "", [0, B + 1])], "[NP1] 的", "[NN1] 's", 0.1, 0.2),
    ("the most frequent alignment of the unit is used, not the first one seen",
     [("大 狗", "big dog", "", [0]), ("大 狗", "big dog", "", [0, B + 1]),
      ("大 狗", "big dog", "", [B + 1, 0])], "大 狗", "big dog",
     math.sqrt(0.5 * 0.8), math.sqrt(0.4 * 0.9)),
])
def test_unit_weights(case, occurrences, zh, en, lex_en, lex_zh):
    kind = "pattern" if "[" in zh else "phrase"
    row = _units(occurrences, kind).filter((pl.col("zh") == zh) & (pl.col("en") == en))
    assert row.height == 1, case
    assert row["lex_en"][0] == pytest.approx(lex_en), case
    assert row["lex_zh"][0] == pytest.approx(lex_zh), case


def test_unit_probabilities_are_relative_frequencies():
    units = _units([("大 狗", "big dog", "", [0, B + 1])] * 3
                   + [("大 犬", "big dog", "", [0, B + 1])]
                   + [("大 狗", "large dog", "", [B + 1])])
    dog = units.filter((pl.col("zh") == "大 狗") & (pl.col("en") == "big dog"))
    assert dog["c_ze"][0] == 3
    assert dog["p_e_given_z"][0] == pytest.approx(3 / 4)   # 大 狗 → big dog 3, large dog 1
    assert dog["p_z_given_e"][0] == pytest.approx(3 / 4)   # big dog → 大 狗 3, 大 犬 1


def _pairs(rows: list[tuple[str, str, str, list[str] | None]]) -> pl.DataFrame:
    return pl.DataFrame([{"type": t, "lhs": "NP", "source": s, "target": g, "pivots": a}
                         for t, s, g, a in rows],
                        schema={"type": pl.String, "lhs": pl.String, "source": pl.String,
                                "target": pl.String, "pivots": pl.List(pl.String)})


DOG_UNITS = [("大 狗", "big dog", "", [0, B + 1]), ("大 犬", "big dog", "", [0, B + 1])]
A_EN, A_ZH = math.sqrt(0.5 * 0.8), math.sqrt(0.4 * 0.9)     # 大 狗 / big dog
B_EN, B_ZH = math.sqrt(0.5 * 0.2), math.sqrt(0.4 * 0.1)     # 大 犬 / big dog


@pytest.mark.parametrize("case, pair, expected", [
    ("one pivot: lex(t|s) = lex(e|s)·lex(t|e), lex(s|t) = lex(e|t)·lex(s|e)",
     ("phrase", "大 狗", "大 犬", ["big dog"]),
     (A_EN * B_ZH, B_EN * A_ZH, min(A_EN * B_ZH, B_EN * A_ZH))),
    ("the reverse pair has the two directions exchanged",
     ("phrase", "大 犬", "大 狗", ["big dog"]),
     (B_EN * A_ZH, A_EN * B_ZH, min(A_EN * B_ZH, B_EN * A_ZH))),
    ("an anchor that is no unit of the source: no evidence, null",
     ("phrase", "大 狗", "大 犬", ["huge dog"]), (None, None, None)),
    ("a sentence pair has no pivots: null",
     ("sentence", "大狗", "大犬", None), (None, None, None)),
])
def test_pair_weights(case, pair, expected):
    out = pair_weights(_pairs([pair]), _units(DOG_UNITS))
    got = tuple(out[c][0] for c in LEX_FEATURES)
    for g, e in zip(got, expected):
        assert (g is None) == (e is None), case
        if e is not None:
            assert g == pytest.approx(e), case


def test_pair_weights_average_pivots_by_their_probability_share():
    # 大 狗 → big dog (1×) and → large dog (3×); 大 犬 ← big dog, large dog (1× each)
    units = _units(DOG_UNITS + [("大 狗", "large dog", "", [B + 1])] * 3
                   + [("大 犬", "large dog", "", [0, B + 1])])
    out = pair_weights(_pairs([("phrase", "大 狗", "大 犬", ["big dog", "large dog"])]), units)
    row = units.filter(pl.col("en") == "large dog")
    l_s = row.filter(pl.col("zh") == "大 狗").row(0, named=True)
    l_t = row.filter(pl.col("zh") == "大 犬").row(0, named=True)
    # weights p(e|s)·p(t|e): big dog 1/4 · 1/2, large dog 3/4 · 1/4
    w_big, w_large = 0.25 * 0.5, 0.75 * 0.25
    chain_big, chain_large = A_EN * B_ZH, l_s["lex_en"] * l_t["lex_zh"]
    expected = (w_big * chain_big + w_large * chain_large) / (w_big + w_large)
    assert out["f_lex_t_given_s"][0] == pytest.approx(expected)
    assert out["f_lex_best"][0] == pytest.approx(max(
        min(chain_big, B_EN * A_ZH), min(chain_large, l_t["lex_en"] * l_s["lex_zh"])))


def test_pattern_target_with_swapped_slots_finds_its_unit():
    occurrences = [("[NP1] 看 [NP2]", "[NN1] see [NN2]", "", [0, B + 1, 2 * B + 2]),
                   ("[NP1] 被 [NP2] 看", "[NN1] see [NN2]", "", [2 * B, 3 * B + 1])]
    units = _units(occurrences, "pattern")
    # the pivot writes the target with slot indices swapped to agree with the source
    out = pair_weights(_pairs([("pattern", "[NP1] 看 [NP2]", "[NP2] 被 [NP1] 看",
                                ["[NN1] see [NN2]"])]), units)
    assert out["f_lex_t_given_s"][0] == pytest.approx(0.6 * (NULL_PROBABILITY * 0.5) ** 0.5)


def test_run_without_tables_gives_null_columns(tmp_path):
    frame = _pairs([("phrase", "大 狗", "大 犬", ["big dog"])])
    out = add_run_weights(frame, tmp_path)
    assert out.select([pl.col(c).is_null().all() for c in LEX_FEATURES]).row(0) == (True,) * 3
    assert out.schema["f_lex_best"] == pl.Float64
