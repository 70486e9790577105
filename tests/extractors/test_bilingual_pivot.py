"""Pivot probabilities, slot agreement and composed alignments, checked by hand."""
from __future__ import annotations

import itertools
from fractions import Fraction

import polars as pl
import pytest

from cppdb.extractors.pivot import PivotSettings, compose_alignments, link_code, pivot

Z1, Z2, Z3 = "死于 车祸", "在 车祸 中 丧生", "车祸 身亡"
E1, E2, E3 = "died in a car accident", "was killed in a car accident", "died"


def codes(pharaoh: str) -> list[int]:
    return [link_code(*map(int, link.split("-"))) for link in pharaoh.split()]


_SENTENCES = itertools.count(1000)


def occ(zh, en, align, n=1, *, lhs="VP", slot_sig="", swapped=False, sid=None,
        zh_span=None, en_span=None):
    """``n`` occurrences, each in a sentence of its own unless ``sid`` names one."""
    align = codes(align)
    zs, ze = zh_span or (0, len(zh.split()))
    es, ee = en_span or (0, len(en.split()))
    return [dict(id=next(_SENTENCES) if sid is None else sid, lhs=lhs, slot_sig=slot_sig,
                 en=en, zh=zh, swapped=swapped, zh_pos=" ".join(["X"] * len(zh.split())),
                 zh_start=zs, zh_end=ze, en_start=es, en_end=ee, align=align)
            for _ in range(n)]


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
    assert row["pivots"] == [E1] and row["n_pivots"] == 1 and row["count"] == 1
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
    assert sorted(row["pivots"]) == ["a", "b"] and row["count"] == 2


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


def test_compose_alignments_joins_through_english_sorted_and_unique():
    pairs = pl.DataFrame({
        # z1 0,1 → e 0; e 0 → z2 2, 0: four links, written sorted by (z1, z2)
        "align1": [codes("1-0 0-0"), codes("0-0 1-1"), codes("0-5"), []],
        "align2": [codes("2-0 0-0"), codes("0-1 3-1"), codes("0-4"), codes("0-0")],
        "source": ["a", "b", "c", "d"]}, schema_overrides={"align1": pl.List(pl.Int32),
                                                          "align2": pl.List(pl.Int32)})
    out = compose_alignments(pairs)
    assert out.columns == ["source", "align_src", "align_tgt"]
    assert out.schema["align_src"] == out.schema["align_tgt"] == pl.List(pl.Int32)
    assert [list(zip(s, t)) for s, t in zip(out["align_src"], out["align_tgt"])] == [
        [(0, 0), (0, 2), (1, 0), (1, 2)], [(1, 0), (1, 3)], [], []]


def test_empty_input_gives_no_parts(tmp_path):
    empty = pl.DataFrame(occ("甲", "a", "0-0"),
                         schema_overrides={"align": pl.List(pl.Int32)}).clear().lazy()
    assert pivot(empty, "phrase", tmp_path / "w") == []


# -- evidence (issue 25): which sentences support a pair ----------------------------------------
CO, LTD = "公司", "有限 公司"


def _evidence(rows, tmp_path):
    pairs = run_pivot(rows, tmp_path, kind="phrase")
    return {(r["source"], r["target"]): (r["n_sentences"], r["cross_sentence"], r["nested_only"])
            for r in pairs.iter_rows(named=True)}


def test_nested_spans_of_one_sentence_are_an_echo(tmp_path):
    # 有限 unaligned: 公司 (1,2) and 有限公司 (0,2) of sentence 7 both link to "company" (3,4)
    rows = (occ(CO, "company", "0-0", sid=7, zh_span=(1, 2), en_span=(3, 4))
            + occ(LTD, "company", "1-0", sid=7, zh_span=(0, 2), en_span=(3, 4)))
    assert _evidence(rows, tmp_path) == {(CO, LTD): (1, False, True), (LTD, CO): (1, False, True)}


def test_a_second_sentence_makes_real_evidence(tmp_path):
    rows = (occ(CO, "company", "0-0", sid=7, zh_span=(1, 2), en_span=(3, 4))
            + occ(LTD, "company", "1-0", sid=7, zh_span=(0, 2), en_span=(3, 4))
            + occ(LTD, "company", "1-0", sid=8, zh_span=(5, 7), en_span=(0, 1)))
    got = _evidence(rows, tmp_path)
    # c(公司)=1 sentence, c(有限公司)=2 sentences: min = 1; sentences 7 and 8 differ → cross
    assert got[(CO, LTD)] == (1, True, False)


def test_two_places_of_one_sentence_are_not_nested(tmp_path):
    # two mentions of "company" in sentence 9, translated 公司 and 该公司 at disjoint spans
    rows = (occ(CO, "company", "0-0", sid=9, zh_span=(1, 2), en_span=(2, 3))
            + occ("该 公司", "company", "1-0", sid=9, zh_span=(6, 8), en_span=(9, 10)))
    assert _evidence(rows, tmp_path)[(CO, "该 公司")] == (1, False, False)


def test_sentences_are_summed_over_pivots(tmp_path):
    rows = (occ(Z1, E1, "0-0", 3) + occ(Z2, E1, "0-0", 2)      # min(3, 2) = 2 through e1
            + occ(Z1, E3, "0-0", 1) + occ(Z2, E3, "0-0", 4))   # min(1, 4) = 1 through e3
    assert _evidence(rows, tmp_path)[(Z1, Z2)] == (3, True, False)
