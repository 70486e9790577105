"""devtools.relation_sheets: stratified draw, blind sheets, ratings joined back, Cohen's κ."""
from __future__ import annotations

import polars as pl
import pytest

from cppdb.errors import BadInputError
from devtools.relation_sheets import (cohen_kappa, draw_domain, number_and_cut, read_relations,
                                      relation_mix, write_sheets)


def _ranked(n_per_tier: int = 30) -> pl.DataFrame:
    rows = []
    for pair_type in ("phrase", "pattern", "sentence"):
        for t, tier in enumerate(("S", "M", "L", "XL")):
            for i in range(n_per_tier):
                slot = " [NP1]" if pair_type == "pattern" else ""
                rows.append({"type": pair_type, "lhs": "NP", "source": f"源{t * 100 + i}{slot}",
                             "target": f"目{t * 100 + i}{slot}", "tier": tier,
                             "score": float(i), "rank": i + 1, "percentile": 0.5})
    frame = pl.DataFrame(rows)
    # both directions of every pair, as a pivot writes them
    return pl.concat([frame, frame.with_columns(pl.col("target").alias("source"),
                                                pl.col("source").alias("target"))])


def test_draw_every_tier_and_type_one_direction_each():
    drawn = draw_domain(_ranked(), per_cell=10, seed=1)
    counts = drawn.group_by("type", "tier").len()
    assert counts.height == 8 and counts["len"].to_list() == [10] * 8
    assert set(drawn["type"]) == {"phrase", "pattern"}
    assert (drawn["stratum_pairs"] == 60).all()
    pairs = {frozenset((s, t)) for s, t in drawn.select("source", "target").iter_rows()}
    assert len(pairs) == drawn.height                    # no pair in both directions
    again = draw_domain(_ranked(), per_cell=10, seed=1)
    assert again.equals(drawn)                           # same answer twice
    assert not draw_domain(_ranked(), per_cell=10, seed=2).equals(drawn)


def test_a_small_stratum_is_taken_whole():
    small = _ranked(3)
    drawn = draw_domain(small, per_cell=10, seed=1)
    assert drawn.height == 8 * 3


def test_sheets_are_blind_and_the_overlap_is_split_over_domains(tmp_path):
    one = draw_domain(_ranked(), 10, 1).with_columns(pl.lit("a").alias("domain"))
    two = draw_domain(_ranked(), 10, 2).with_columns(pl.lit("b").alias("domain"))
    key = number_and_cut(pl.concat([one, two]), sheet_size=50, overlap=20, seed=3)
    assert key["id"].n_unique() == 160 and key["sheet"].n_unique() == 4
    shared = key.filter(pl.col("overlap"))
    assert shared.height == 20 and shared["domain"].value_counts()["count"].to_list() == [10, 10]
    paths = write_sheets(key, tmp_path, seed=3)
    assert [p.name for p in paths][-1] == "overlap.tsv"
    sheet = pl.read_csv(paths[0], separator="\t")
    assert sheet.columns == ["id", "a", "b"] and sheet.height == 50
    text = paths[0].read_text("utf-8")
    for hidden in ("phrase", "pattern", "XL", "\tS\t", "score"):
        assert hidden not in text
    assert "[NP1]" in "".join(pl.read_csv(p, separator="\t")["a"].str.join("")[0]
                              for p in paths)   # slots are shown
    overlap = pl.read_csv(paths[-1], separator="\t")
    assert sorted(overlap["id"]) == sorted(shared["id"])
    assert overlap["id"].to_list() != sorted(overlap["id"])   # its own order


def test_read_relations_names_every_bad_line(tmp_path):
    good = tmp_path / "good.tsv"
    good.write_text("id\trelation\treason\nr0001\tExclusion\t增加/减少 opposite\n"
                    "r0002\tEquivalence\n", "utf-8")
    frame = read_relations(good)
    assert frame["relation"].to_list() == ["Exclusion", "Equivalence"]
    bad = tmp_path / "bad.tsv"
    bad.write_text("r0001\tSynonym\tx\nr0002\tExclusion\tx\nr0002\tExclusion\ty\n", "utf-8")
    with pytest.raises(BadInputError) as error:
        read_relations(bad)
    assert "1 bad line" in str(error.value) and "1 repeated" in str(error.value)


def test_cohen_kappa_known_values():
    assert cohen_kappa(["A", "B", "A", "B"], ["A", "B", "A", "B"]) == 1.0
    # observed 0.5, expected 0.5 → 0
    assert cohen_kappa(["A", "A", "B", "B"], ["A", "B", "A", "B"]) == pytest.approx(0.0)
    # 2×2 table [[20, 5], [10, 15]]: po 0.7, pe 0.5 → 0.4
    first = ["A"] * 25 + ["B"] * 25
    second = ["A"] * 20 + ["B"] * 5 + ["A"] * 10 + ["B"] * 15
    assert cohen_kappa(first, second) == pytest.approx(0.4)


def test_relation_mix_shares_sum_to_one():
    judged = pl.DataFrame({"tier": ["S", "S", "S", "XL"],
                           "relation": ["Equivalence", "Exclusion", "Equivalence",
                                        "Independent"]})
    mix = relation_mix(judged, ["tier"])
    row = mix.filter(pl.col("tier") == "S").row(0, named=True)
    assert row["n"] == 3 and row["Equivalence"] == pytest.approx(0.667)
    share_columns = [c for c in mix.columns if c not in ("tier", "n")]
    assert mix.select(pl.sum_horizontal(share_columns)).to_series().to_list() == \
        pytest.approx([1.0, 1.0], abs=0.002)


def _hand_made_run(path, ranked: pl.DataFrame) -> None:
    """A run directory with just the two ranking tables that ``draw`` reads."""
    ranking = path / "ranking"
    ranking.mkdir(parents=True)
    ranked.write_parquet(ranking / "ranked_pairs.parquet")
    ranked.select("type", "lhs", "source", "target").with_columns(
        pl.col("source").str.len_chars().cast(pl.Float64).alias("f_source_chars"),
        pl.lit(0.5).alias("f_p_t_given_s")).write_parquet(ranking / "features.parquet")


def test_draw_command_writes_sheets_and_a_key_with_features(tmp_path):
    from devtools.relation_sheets import main

    _hand_made_run(tmp_path / "one", _ranked(20))
    _hand_made_run(tmp_path / "two", _ranked(20))
    main(["draw", "--run", f"one={tmp_path / 'one'}", "--run", f"two={tmp_path / 'two'}",
          "--out", str(tmp_path / "sheets"), "--key", str(tmp_path / "key"),
          "--per-cell", "5", "--overlap", "10", "--sheet-size", "30"])
    key = pl.read_parquet(tmp_path / "key" / "key.parquet")
    assert key.height == 2 * 8 * 5 and key["f_p_t_given_s"].null_count() == 0
    assert (key["f_source_chars"] == key["source"].str.len_chars()).all()
    assert sorted(p.name for p in (tmp_path / "sheets").iterdir()) == [
        "overlap.tsv", "sheet-01.tsv", "sheet-02.tsv", "sheet-03.tsv"]
    plain = pl.read_csv(tmp_path / "key" / "key.tsv", separator="\t")
    assert not any(c.startswith("f_") for c in plain.columns)
    ratings = tmp_path / "r.tsv"
    ratings.write_text("".join(f"{i}\tEquivalence\tsame\n" for i in key["id"]), "utf-8")
    second = tmp_path / "second.tsv"
    second.write_text("".join(f"{i}\tEquivalence\tsame\n"
                              for i in key.filter(pl.col("overlap"))["id"]), "utf-8")
    out = tmp_path / "judged.tsv"
    main(["join", "--key", str(tmp_path / "key" / "key.parquet"), "--ratings", str(ratings),
          "--second", str(second), "--out", str(out)])
    judged = pl.read_csv(out, separator="\t")
    assert judged.height == key.height and judged["relation_2"].drop_nulls().len() == 10


def test_a_later_batch_continues_the_ids_and_sheets():
    drawn = draw_domain(_ranked(), 10, 1).with_columns(pl.lit("a").alias("domain"))
    key = number_and_cut(drawn, sheet_size=50, overlap=10, seed=3, first_id=1121,
                         first_sheet=6)
    assert sorted(key["id"])[0] == "r1121" and sorted(key["id"])[-1] == "r1200"
    assert sorted(key["sheet"].unique()) == ["sheet-06", "sheet-07"]


def test_the_rule_command_scores_the_exclusion_rule_from_text_alone(tmp_path, capsys):
    from devtools.relation_sheets import main

    judged = tmp_path / "relations.tsv"
    judged.write_text("domain\ttype\tsource\ttarget\trelation\n"
                      "a\tphrase\t增加\t减少\tExclusion\n"
                      "a\tphrase\t你 对 我 说 了 谎\t他 对 我 撒谎\tExclusion\n"
                      "b\tphrase\t胡椒\t辣椒\tExclusion\n"
                      "b\tphrase\t大海\t海洋\tEquivalence\n"
                      "b\tsentence\t他 来 了\t他 没 来\tExclusion\n", "utf-8")
    rated = tmp_path / "rated.tsv"
    rated.write_text("type\tsource\ttarget\trating\n"
                     "phrase\t男孩\t女孩\t1\nphrase\t是 他 的 书\t不是 他 的 书\t3\n"
                     "phrase\t大海\t海洋\t5\n", "utf-8")
    main(["rule", "--judgements", str(judged), "--acceptability", str(rated)])
    out = capsys.readouterr().out
    assert "all: 2 flagged, 2 judged Exclusion (precision 1.000), recall 2/3" in out
    assert "b: 0 flagged" in out                 # sentences are left out
    assert "3 pairs, 2 flagged, 1 of them rated acceptable" in out
    assert "person" in out and "negation" in out
