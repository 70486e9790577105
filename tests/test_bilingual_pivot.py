"""Pivot probabilities, slot agreement and composed alignments, checked by hand."""
from __future__ import annotations

from fractions import Fraction

import polars as pl
import pytest

from cppdb.extractors.pivot import PivotSettings, link_code, pivot

Z1, Z2, Z3 = "死于 车祸", "在 车祸 中 丧生", "车祸 身亡"
E1, E2, E3 = "died in a car accident", "was killed in a car accident", "died"


def codes(pharaoh: str) -> list[int]:
    return [link_code(*map(int, link.split("-"))) for link in pharaoh.split()]


def occ(zh, en, align, n=1, *, lhs="VP", slot_sig="", swapped=False):
    align = codes(align)
    return [dict(lhs=lhs, slot_sig=slot_sig, en=en, zh=zh, swapped=swapped,
                 zh_pos=" ".join(["X"] * len(zh.split())), align=align)] * n


def run_pivot(rows, tmp_path, kind="phrase", **settings):
    frame = pl.DataFrame(rows, schema_overrides={"align": pl.List(pl.Int32)})
    parts = pivot(frame.lazy(), kind, tmp_path / "work", PivotSettings(**settings))
    return pl.read_parquet(parts).sort("source", "target")


TINY = (occ(Z1, E1, "0-0 0-1 1-3 1-4", 2) + occ(Z2, E1, "0-1 1-3 1-4 3-0")
        + occ(Z2, E2, "1-4 1-5 3-0 3-1") + occ(Z3, E2, "0-4 0-5 1-0 1-1") + occ(Z1, E3, "0-0"))

# c(z1,e1)=2 c(z2,e1)=1 c(z2,e2)=1 c(z3,e2)=1 c(z1,e3)=1 → c(z1)=3 c(z2)=2 c(z3)=1,
# c(e1)=3 c(e2)=2 c(e3)=1.
# p(z2|z1) = p(z2|e1)p(e1|z1) = 1/3·2/3 = 2/9;  p(z1|z2) = p(z1|e1)p(e1|z2) = 2/3·1/2 = 1/3
# p(z3|z2) = p(z3|e2)p(e2|z2) = 1/2·1/2 = 1/4;  p(z2|z3) = p(z2|e2)p(e2|z3) = 1/2·1 = 1/2
EXPECTED = {(Z1, Z2): (Fraction(2, 9), Fraction(1, 3)), (Z2, Z1): (Fraction(1, 3), Fraction(2, 9)),
            (Z2, Z3): (Fraction(1, 4), Fraction(1, 2)), (Z3, Z2): (Fraction(1, 2), Fraction(1, 4))}


@pytest.mark.parametrize("partition_rows", [1_000_000, 2])   # one partition, and many
def test_pivot_probabilities_by_hand(tmp_path, partition_rows):
    pairs = run_pivot(TINY, tmp_path, partition_rows=partition_rows)
    got = {(r["source"], r["target"]): (r["p_t_given_s"], r["p_s_given_t"])
           for r in pairs.iter_rows(named=True)}
    assert set(got) == set(EXPECTED)                 # no z1–z3 pair: no shared pivot
    for key, (fwd, bwd) in EXPECTED.items():
        assert got[key] == pytest.approx((float(fwd), float(bwd)))


def test_pivot_keeps_counts_anchors_and_composes_alignment(tmp_path):
    pairs = run_pivot(TINY, tmp_path)
    row = pairs.filter(source=Z1, target=Z2).row(0, named=True)
    assert row["anchors"] == [E1] and row["n_pivots"] == 1 and row["count"] == 1
    assert (row["source_count"], row["target_count"]) == (3, 2)
    # 死于→died,in ; died→丧生(3), in→在(0) ; 车祸→car,accident→车祸(1)
    assert list(zip(row["align_src"], row["align_tgt"])) == [(0, 0), (0, 3), (1, 1)]
    assert row["type"] == "phrase" and row["origin"] == "bilingual" and row["lhs"] == "VP"


def test_probabilities_sum_over_pivots(tmp_path):
    rows = occ("甲", "a", "0-0") + occ("乙", "a", "0-0") + occ("甲", "b", "0-0") + occ("乙", "b", "0-0")
    pairs = run_pivot(rows, tmp_path)
    row = pairs.filter(source="甲").row(0, named=True)
    # p(乙|甲) = p(乙|a)p(a|甲) + p(乙|b)p(b|甲) = 1/2·1/2 + 1/2·1/2
    assert row["p_t_given_s"] == pytest.approx(0.5) and row["n_pivots"] == 2
    assert sorted(row["anchors"]) == ["a", "b"] and row["count"] == 2


def test_labels_must_agree_and_identity_is_dropped(tmp_path):
    rows = (occ("张三 的 朋友", "friend of Zhangsan", "", lhs="NP")
            + occ("张三 之 友", "friend of Zhangsan", "", lhs="NP")
            + occ("张三 的 朋友", "friend of Zhangsan", "", lhs="DNP")
            + occ("张三 之 友", "friend of Zhangsan", "", lhs="NP"))
    pairs = run_pivot(rows, tmp_path)
    assert pairs.select("lhs", "source", "target").rows() == [
        ("NP", "张三 之 友", "张三 的 朋友"), ("NP", "张三 的 朋友", "张三 之 友")]


def test_pattern_slots_agree_and_are_reindexed_through_the_pivot(tmp_path):
    e = "[NP1] of [NP2]"
    rows = (occ("[NP1] 的 [NP2]", e, "0-2 1-1 2-0", lhs="NP", slot_sig="NP|NP", swapped=True)
            + occ("[NP1] 属于 [NP2]", e, "0-0 2-2", lhs="NP", slot_sig="NP|NP")
            # slot labels disagree (QP where the others have NP): never paired
            + occ("[QP1] 的 [NP2]", e, "0-2 2-0", lhs="NP", slot_sig="NP|QP", swapped=True))
    pairs = run_pivot(rows, tmp_path, kind="pattern")
    assert pairs.select("source", "target").rows() == [
        # the zh slot 1 of 的-pattern is English slot 2, which is slot 2 of 属于-pattern
        ("[NP1] 属于 [NP2]", "[NP2] 的 [NP1]"), ("[NP1] 的 [NP2]", "[NP2] 属于 [NP1]")]
    row = pairs.filter(source="[NP1] 的 [NP2]").row(0, named=True)
    assert row["target_tokens"] == ["[NP2]", "属于", "[NP1]"] and row["type"] == "pattern"
    # slot 1 (的-pattern, pos 0) ↔ en 2 ↔ 属于-pattern pos 2; slot 2 (pos 2) ↔ pos 0
    assert list(zip(row["align_src"], row["align_tgt"])) == [(0, 2), (2, 0)]


def test_max_per_pivot_prunes_rare_sides(tmp_path):
    rows = occ("甲", "a", "0-0", 3) + occ("乙", "a", "0-0", 2) + occ("丙", "a", "0-0", 1)
    pairs = run_pivot(rows, tmp_path, max_per_pivot=2)
    assert set(pairs.select("source", "target").rows()) == {("甲", "乙"), ("乙", "甲")}
    # probabilities still come from all occurrences: p(乙|a) = 2/6
    assert pairs.filter(source="甲")["p_t_given_s"].item() == pytest.approx(2 / 6)


def test_empty_input_gives_no_parts(tmp_path):
    empty = pl.DataFrame(occ("甲", "a", "0-0"),
                         schema_overrides={"align": pl.List(pl.Int32)}).clear().lazy()
    assert pivot(empty, "phrase", tmp_path / "w") == []
