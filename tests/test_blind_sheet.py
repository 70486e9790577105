"""The blind judging sheet of bench_quality (cppdb.evaluate.blind) on tiny hand-made tables."""
from __future__ import annotations

import json
import math

import polars as pl
import pytest

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.evaluate import blind


def _ranked(n_phrase: int = 10, n_pattern: int = 5) -> pl.DataFrame:
    rows = []
    for pair_type, n in (("phrase", n_phrase), ("pattern", n_pattern)):
        for r in range(1, n + 1):
            rows.append({S.TYPE: pair_type, S.LHS: "NP", S.SOURCE: f"{pair_type[:2]} s {r}",
                         S.TARGET: f"{pair_type[:2]} t {r}", "score": float(n - r),
                         "rank": r, "percentile": r / n})
    return pl.DataFrame(rows)


NO_EXCLUDE = blind.excluded_keys([])


def test_top_cell_draws_only_from_the_best_fifth():
    keys = blind.draw_cells(_ranked(), per_cell=60, exclude=NO_EXCLUDE)
    top = keys.filter((pl.col("cell") == "top20") & (pl.col(S.TYPE) == "phrase"))
    assert sorted(top["rank"].to_list()) == [1, 2]              # ceil(0.2 · 10)
    everything = keys.filter((pl.col("cell") == "all") & (pl.col(S.TYPE) == "phrase"))
    assert everything.height == 10                              # fewer than 60: all of them
    assert keys.filter((pl.col("cell") == "top20") & (pl.col(S.TYPE) == "pattern"))["rank"] \
        .to_list() == [1]


def test_draw_is_seeded_and_a_sample_when_the_pool_is_large():
    ranked = _ranked(n_phrase=500, n_pattern=300)
    first = blind.draw_cells(ranked, per_cell=7, exclude=NO_EXCLUDE, seed=5)
    again = blind.draw_cells(ranked, per_cell=7, exclude=NO_EXCLUDE, seed=5)
    other = blind.draw_cells(ranked, per_cell=7, exclude=NO_EXCLUDE, seed=6)
    assert first.equals(again) and not first.equals(other)
    assert first.group_by(S.TYPE, "cell").len()["len"].to_list() == [7, 7, 7, 7]
    assert first.filter(pl.col("cell") == "top20")["percentile"].max() <= 0.2


def test_pairs_of_label_files_are_never_drawn(tmp_path):
    labels = tmp_path / "judged.tsv"
    # the judged pair with other spacing, and one judged in the other direction
    labels.write_text("type\tsource\ttarget\trating\nphrase\tph s1\tph t 1\t4\n"
                      "phrase\tph t 2\tph s 2\t2\npattern\tph s 3\tph t 3\t5\n", "utf-8")
    keys = blind.draw_cells(_ranked(), 60, blind.excluded_keys([labels]))
    phrases = keys.filter(pl.col(S.TYPE) == "phrase")
    assert not {1, 2} & set(phrases["rank"].to_list())
    assert 3 in phrases["rank"].to_list()        # excluded as a pattern, not as a phrase
    assert phrases.filter(pl.col("cell") == "top20").height == 0   # the top fifth was judged


def test_sheet_is_blind_shuffled_and_judges_a_pair_once():
    keys = blind.draw_cells(_ranked(), 60, NO_EXCLUDE)
    sheet, key = blind.sheet_and_key(keys)
    assert sheet.columns == ["id", "type", "a", "b"]
    assert sheet.height == 15                    # top20 pairs are also in 'all': judged once
    assert key.height == keys.height == 18
    assert sheet["id"].n_unique() == 15
    best = key.filter((pl.col("rank") == 1) & (pl.col(S.TYPE) == "phrase"))
    assert sheet.filter(pl.col("id") == best["id"][0])["a"].to_list() == ["phs1"]  # no spaces
    assert sheet["a"].to_list() != sorted(sheet["a"].to_list())      # not in ranking order
    assert best["id"].n_unique() == 1 and set(best["cell"]) == {"top20", "all"}


def test_sheet_round_trips_through_jsonl(tmp_path):
    sheet, key = blind.sheet_and_key(blind.draw_cells(_ranked(), 60, NO_EXCLUDE))
    blind.write_jsonl(sheet, tmp_path / "sheet.jsonl")
    lines = (tmp_path / "sheet.jsonl").read_text("utf-8").splitlines()
    assert set(json.loads(lines[0])) == {"id", "type", "a", "b"} and len(lines) == 15
    blind.write_jsonl(key, tmp_path / "key.jsonl")
    assert pl.read_ndjson(tmp_path / "key.jsonl").height == key.height


#: q1 is a containment pair (男孩 ⊂ 这个男孩, ED 2, ED÷len 2/4); the others share no character
PAIRS = {"q1": ("男孩", "这个 男孩"), "q2": ("去世", "逝世"), "q3": ("老人", "老头"),
         "q4": ("车", "汽车"), "q5": ("高", "矮"), "q6": ("看", "瞧")}


def _key() -> pl.DataFrame:
    ids = ["q1", "q2", "q3", "q4", "q1", "q5", "q6"]
    return pl.DataFrame({
        "id": ids, "cell": ["top20", "top20", "top20", "top20", "all", "all", "all"],
        S.TYPE: ["phrase"] * 7, S.SOURCE: [PAIRS[i][0] for i in ids],
        S.TARGET: [PAIRS[i][1] for i in ids]})


@pytest.mark.parametrize("ratings, top_share, top_n, all_share, all_n", [
    ("q1\t5\nq2\t3\nq3\t2\nq4\t4\nq5\t1\nq6\t3\n", 3 / 4, 4, 2 / 3, 3),
    ("id\trating\nq1\t2\nq2\t1\n", 0.0, 2, 0.0, 1),             # header; unrated are left out
])
def test_shares_per_cell(tmp_path, ratings, top_share, top_n, all_share, all_n):
    path = tmp_path / "ratings.tsv"
    path.write_text(ratings, "utf-8")
    table = blind.shares(_key(), blind.read_ratings(path))
    row = {(r["type"], r["cell"]): r for r in table.iter_rows(named=True)}
    top, every = row[("phrase", "top20")], row[("phrase", "all")]
    assert (top["share_acceptable"], top["rated"]) == (pytest.approx(top_share), top_n)
    assert (every["share_acceptable"], every["rated"]) == (pytest.approx(all_share), all_n)
    p = top_share
    assert top["ci95_half_width"] == pytest.approx(1.96 * math.sqrt(p * (1 - p) / top_n))
    assert top["paper"] == 0.87 and row[("pattern", "all")]["paper"] == 0.61
    assert row[("pattern", "top20")]["rated"] == 0
    assert "| phrase | top20 |" in blind.format_shares(table)


def test_shares_carry_the_judged_sample_diversity(tmp_path):
    path = tmp_path / "ratings.tsv"
    path.write_text("q1\t5\nq2\t3\nq3\t2\nq4\t4\nq5\t1\nq6\t3\n", "utf-8")
    table = blind.shares(_key(), blind.read_ratings(path))
    top = table.filter(cell="top20").filter(type="phrase").row(0, named=True)
    # top20 = q1..q4: q4 车 ⊂ 汽车 is contained too; ED÷len = (2/4 + 1/2 + 1/2 + 1/2) / 4
    assert top["contained"] == pytest.approx(2 / 4)
    assert top["ned"] == pytest.approx(0.5)
    assert top["acceptable_not_contained"] == pytest.approx(1 / 4)     # only q2 (rated 3)
    automatic = pl.DataFrame({"type": ["phrase"], "top": ["20%"],
                              "normalised_edit_distance": [0.485], "containment": [0.61]})
    line = next(x for x in blind.format_shares(table, automatic).splitlines()
                if x.startswith("| phrase | top20 |"))
    assert line.endswith("| 0.500 | 50% | 25% | 0.485 | 61% |")


@pytest.mark.parametrize("ratings, message", [
    ("q1\t6\n", "line 1"),
    ("q1\t5\nq1\t4\n", "rated twice"),
    ("q9\t5\n", "not in the key"),
    ("q1 5\n", "line 1"),
])
def test_bad_ratings_are_reported(tmp_path, ratings, message):
    path = tmp_path / "ratings.tsv"
    path.write_text(ratings, "utf-8")
    with pytest.raises(BadInputError, match=message):
        blind.shares(_key(), blind.read_ratings(path))


def test_exclusion_lists_need_no_rating_and_may_omit_the_type(tmp_path):
    path = tmp_path / "exclude.tsv"
    path.write_text("source\ttarget\nph s 1\tph t 1\n[NP1] 的\t[NP1]\n", "utf-8")
    keys = blind.excluded_keys([path])
    assert set(keys.rows()) == {("phrase", "phs1", "pht1"), ("phrase", "pht1", "phs1"),
                                ("pattern", "[NP1]的", "[NP1]"), ("pattern", "[NP1]", "[NP1]的")}
