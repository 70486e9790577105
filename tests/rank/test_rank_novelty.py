"""Pairs that give the user the same words back: the weak-evidence filter and the
containment/diversity penalties of the ranking (issue 25)."""
from __future__ import annotations

import polars as pl
import pytest

from cppdb import schema as S
from cppdb.config import load_config, resolve
from cppdb.errors import ConfigError
from cppdb.evaluate.tables import edit_distances
from cppdb.rank import filters, novelty
from cppdb.rank.settings import RankRun, RankSettings
from cppdb.rank.tiers import SCORE


def pivoted(rows: list[tuple[str, str, float | None, float | None]]) -> pl.DataFrame:
    return pl.DataFrame([{S.SOURCE: s, S.TARGET: t, S.P_TGT_GIVEN_SRC: p, S.P_SRC_GIVEN_TGT: q}
                         for s, t, p, q in rows],
                        schema={S.SOURCE: pl.String, S.TARGET: pl.String,
                                S.P_TGT_GIVEN_SRC: pl.Float64, S.P_SRC_GIVEN_TGT: pl.Float64})


@pytest.mark.parametrize("p, q, reason", [
    (0.01, 0.1, "weak_evidence"),      # 0.001 < 0.005: one misaligned pivot word
    (0.05, 0.09, "weak_evidence"),     # 0.0045
    (0.05, 0.1, None),                 # 0.005 is enough (the bound is exclusive)
    (0.5, 0.4, None),
    (None, None, None),                # sentences have no pivot probabilities: never fires
    (0.5, None, None),
])
def test_weak_evidence_filter(p, q, reason):
    frame = pivoted([("试题", "客户", p, q)])
    assert filters.filter_reasons(frame).to_list() == [reason]


def test_weak_evidence_threshold_and_switch():
    frame = pivoted([("试题", "客户", 0.05, 0.05)])           # 0.0025
    assert filters.filter_reasons(frame).to_list() == ["weak_evidence"]
    lower = filters.FilterSettings(min_pivot_product=0.001)
    assert filters.filter_reasons(frame, lower).to_list() == [None]
    off = filters.FilterSettings(filters=tuple(r for r in filters.REASONS
                                               if r != "weak_evidence"))
    assert filters.filter_reasons(frame, off).to_list() == [None]
    # earlier reasons win: an identical pair is "identical", whatever its evidence
    same = pivoted([("去世", "去世", 0.0001, 0.0001)])
    assert filters.filter_reasons(same).to_list() == ["identical"]


@pytest.mark.parametrize("source, target, p, q, reason", [
    ("喜欢", "喜爱", 0.05, 0.04, None),                  # 0.002: one synonym atom of Cilin
    ("犬", "狗", 0.01, 0.05, None),                      # 0.0005 is enough (exclusive bound)
    ("去 世", "逝世", 0.05, 0.04, None),                 # the sides' words joined
    ("喜欢", "喜爱", 0.01, 0.04, "weak_evidence"),       # 0.0004: below the synonyms' bound
    ("喜欢", "讨厌", 0.05, 0.04, "weak_evidence"),       # not synonyms in Cilin
    ("大海", "海底", 0.05, 0.04, "weak_evidence"),       # one Cilin class, not one atom
])
def test_weak_evidence_spares_thesaurus_synonyms(source, target, p, q, reason):
    frame = pivoted([(source, target, p, q)])
    assert filters.filter_reasons(frame).to_list() == [reason]


def test_weak_evidence_synonym_exception_can_be_turned_off():
    frame = pivoted([("喜欢", "喜爱", 0.05, 0.04), ("试题", "客户", 0.05, 0.04)])
    assert filters.filter_reasons(frame).to_list() == [None, "weak_evidence"]
    off = filters.FilterSettings(synonym_min_pivot_product=0.005)
    assert filters.filter_reasons(frame, off).to_list() == ["weak_evidence"] * 2
    with pytest.raises(ConfigError):
        load_config(overrides=["rank.synonym_min_pivot_product=-0.1"])


@pytest.mark.parametrize("source, target, reason", [
    # must fire: numbers on both sides, other values
    ("3400", "34", "number_flip"),
    ("三千", "30", "number_flip"),
    ("数十", "数百", "number_flip"),
    ("[NP1] 的 三 名 学生", "[NP1] 的 两 名 学生", "number_flip"),
    # must not fire: the same values written differently, a number on one side only, a slot
    # next to a number, an idiom of "many"
    ("三千", "3000", None),
    ("百分之五", "5%", None),
    ("一号", "1号", None),
    ("两", "俩", None),
    ("9月 [NT1]", "[NT1] 9月", None),
    ("2019年 [NT1] 1日", "[NT1] 1日", None),           # a year added, nothing changed
    ("[NT1] 6月", "[NT1] 7月", "number_flip"),
    ("成千上万 的 [NP1]", "数以千计 的 [NP1]", None),
])
def test_number_flip_filter(source, target, reason):
    frame = pivoted([(source, target, 0.5, 0.5)])
    assert filters.filter_reasons(frame).to_list() == [reason]


def test_unknown_filter_names_fail_before_work(tmp_path):
    from cppdb.rank.pipeline import rank_run

    with pytest.raises(ConfigError, match="number_flips"):
        filters.FilterSettings(filters=("identical", "number_flips"))
    config = load_config(overrides=['rank.filters=["identical", "no_such_filter"]'])
    with pytest.raises(ConfigError, match="no_such_filter"):
        rank_run(tmp_path / "missing-run", config)
    assert not (tmp_path / "missing-run").exists()


def test_filter_settings_come_from_the_config():
    config = load_config(overrides=["rank.min_pivot_product=0.02"])
    assert resolve(RankRun, config).rank.filter_settings().min_pivot_product == 0.02
    with pytest.raises(ConfigError):
        load_config(overrides=["rank.min_pivot_product=1.5"])
    with pytest.raises(ConfigError):
        load_config(overrides=["rank.diversity_target=-0.1"])


def scored(rows: list[tuple[str, str, float]]) -> pl.DataFrame:
    return pl.DataFrame({S.SOURCE: [r[0] for r in rows], S.TARGET: [r[1] for r in rows],
                         SCORE: [r[2] for r in rows]})


def test_penalties_take_rating_points_by_the_evaluation_definition():
    frame = scored([("男孩", "这个 男孩", 4.0),     # contained, ED÷len 2/4
                    ("去世", "逝世", 4.0),          # one character of two differs: 1/2
                    ("美国", "合众国", 4.0),        # 合众国 shares 国 at the end: 2/3
                    ("[NP1] 出生 于 [NP2]", "[NP1] 生 于 [NP2]", 4.0)])
    out = novelty.penalise_sameness(frame, 0.5, 1.5, 1.0)[0][SCORE].to_list()
    assert out[0] == pytest.approx(4.0 - 0.5 - 1.5 * 0.5)
    assert out[1] == pytest.approx(4.0 - 1.5 * 0.5)
    assert out[2] == pytest.approx(4.0 - 1.5 * (1 - 2 / 3))
    # a pattern is compared on its template words (出生于 / 生于: 1 edit over 3), not on
    # the slots both sides share by construction
    assert out[3] == pytest.approx(4.0 - 1.5 * (1 - 1 / 3))
    _, ned = edit_distances(["男孩", "去世"], ["这个 男孩", "逝世"])
    assert list(ned) == pytest.approx([0.5, 0.5])


def test_a_word_added_anywhere_is_containment_too():
    frame = scored([("腐败 和 [NP1]", "腐败 和 其他 [NP1]", 4.0),   # a word inserted mid-pattern
                    ("其 close 方法", "其 相应 的 close 方法", 4.0),
                    ("[NP1] 和 [NP2]", "[NP2] 和 [NP1]", 4.0),        # slots swapped: not contained
                    ("去世", "逝世", 4.0)])
    only_containment = novelty.penalise_sameness(frame, 1.0, 0.0, 1.0, 0.0)[0][SCORE].to_list()
    assert only_containment == pytest.approx([3.0, 3.0, 4.0, 4.0])


def test_a_pair_in_other_words_keeps_its_score_and_zero_means_off():
    frame = scored([("小伙子", "男孩", 3.5), ("男孩", "这个 男孩", 3.9)])
    out = novelty.penalise_sameness(frame, 0.5, 1.5, 1.0)[0]
    assert out[SCORE].to_list()[0] == pytest.approx(3.5)      # nothing shared: no penalty
    assert out[SCORE].to_list()[1] < 3.5                        # the echo falls below it
    assert novelty.penalise_sameness(frame, 0.0, 0.0, 1.0)[0].equals(frame)
    target_low = novelty.penalise_sameness(frame, 0.0, 1.5, 0.5)[0]   # ED÷len 0.5 meets it
    assert target_low[SCORE].to_list() == pytest.approx([3.5, 3.9])


def test_patterns_take_their_own_diversity_penalty_on_their_template_words():
    frame = pl.DataFrame({S.SOURCE: ["[NN1] 薪水", "[NN1] 薪水", "[NP1] 和 [NP2]", "去世"],
                          S.TARGET: ["[NN1] 工资", "[NN1] 薪金", "[NP2] 和 [NP1]", "逝世"],
                          S.TYPE: ["pattern", "pattern", "pattern", "phrase"],
                          SCORE: [4.0, 4.0, 4.0, 4.0]})
    out = novelty.penalise_sameness(frame, 0.5, 1.5, 1.0, 1.25)[0][SCORE].to_list()
    assert out[0] == pytest.approx(4.0)                   # other words, the slot shared: none
    assert out[1] == pytest.approx(4.0 - 1.25 * 0.5)       # 薪 shared: half the words
    assert out[2] == pytest.approx(4.0 - 1.25)             # the same words, slots swapped
    assert out[3] == pytest.approx(4.0 - 1.5 * 0.5)        # phrases keep diversity_penalty
    # without a pattern penalty of their own, patterns take diversity_penalty
    same = novelty.penalise_sameness(frame, 0.5, 1.5, 1.0)[0][SCORE].to_list()
    assert same[1] == pytest.approx(4.0 - 1.5 * 0.5)
    assert novelty.penalise_sameness(frame, 0.0, 0.0, 1.0, 0.0)[0].equals(frame)
    with pytest.raises(ConfigError):
        load_config(overrides=["rank.pattern_diversity_penalty=-1"])


def test_default_ranking_settings_are_the_documented_ones():
    rank = resolve(RankRun, load_config()).rank
    assert rank.novelty_settings() == novelty.NoveltySettings(
        1.0, 1.5, 1.0, 1.25, {"phrase": 0.70, "pattern": 0.60}, 4.0)
    assert rank.filter_settings().min_pivot_product == 0.005
    assert "weak_evidence" in rank.filters


def typed(rows: list[tuple[str, str, str, float]]) -> pl.DataFrame:
    return pl.DataFrame({S.TYPE: [r[0] for r in rows], S.SOURCE: [r[1] for r in rows],
                         S.TARGET: [r[2] for r in rows], SCORE: [r[3] for r in rows]})


# five phrase pairs; the top 40 % (2 rows) by score alone are the two echoes (ED÷len 0.5)
ECHOES_FIRST = [("phrase", "男孩", "小男孩", 4.6),        # ED÷len 1/3
                ("phrase", "去世", "逝世", 4.5),          # 0.5
                ("phrase", "小伙子", "男孩", 4.0),        # 1.0
                ("phrase", "死亡", "过世", 3.9),          # 1.0
                ("phrase", "美国", "合众国", 3.0)]        # 2/3


def test_the_tier_target_takes_the_smallest_penalty_that_reaches_it():
    frame = typed(ECHOES_FIRST)
    # no target: the fixed penalty (0 here) keeps the echoes on top
    fixed, chosen = novelty.penalise_sameness(frame, 0.0, 0.0, 1.0, 0.0, tier_share=0.4)
    assert chosen == {"phrase": 0.0}
    # the top 2 must average ED÷len ≥ 0.75: 去世 / 逝世 (0.5) may stay beside a 1.0 pair, so
    # 男孩 / 小男孩 must fall under 小伙子 / 男孩: 4.6 − λ·2/3 < 4.0 ⇔ λ > 0.9 (and
    # 去世 / 逝世 keeps its place above 死亡 / 过世 while 4.5 − λ·0.5 > 3.9 ⇔ λ < 1.2)
    out, chosen = novelty.penalise_sameness(frame, 0.0, 0.0, 1.0, 0.0,
                                            tier_diversity={"phrase": 0.75}, tier_share=0.4)
    assert chosen["phrase"] == pytest.approx(0.9, abs=2e-6)
    top = out.sort(SCORE, descending=True)[S.SOURCE].to_list()[:2]
    assert set(top) == {"去世", "小伙子"}
    # a target met without any penalty costs nothing; one no penalty reaches takes the cap
    assert novelty.penalise_sameness(frame, 0.0, 0.0, 1.0, 0.0, tier_diversity={"phrase": 0.3},
                                     tier_share=0.4)[1] == {"phrase": 0.0}
    capped = novelty.penalise_sameness(frame, 0.0, 0.0, 1.0, 0.0,
                                       tier_diversity={"phrase": 0.75}, tier_share=0.4,
                                       max_diversity_penalty=0.5)[1]
    assert capped == {"phrase": 0.5}


def test_each_type_reaches_its_own_target_and_unlisted_types_keep_the_fixed_penalty():
    rows = ECHOES_FIRST + [("pattern", "[NN1] 薪水", "[NN1] 薪金", 4.5),   # words 0.5
                           ("pattern", "[NN1] 薪水", "[NN1] 工资", 4.0),   # 1.0
                           ("sentence", "他 去世 了", "他 逝世 了", 4.0)]
    out, chosen = novelty.penalise_sameness(typed(rows), 0.0, 1.5, 1.0, 1.25,
                                            tier_diversity={"phrase": 0.75, "pattern": 1.0},
                                            tier_share=0.4)
    assert chosen["phrase"] == pytest.approx(0.9, abs=2e-6)
    # 4.5 − λ·0.5 ≤ 4.0 ⇔ λ ≥ 1 (at 1 the tie breaks by text: 工资 before 薪金)
    assert chosen["pattern"] == pytest.approx(1.0, abs=2e-6)
    assert chosen["sentence"] == 1.5                        # unlisted: diversity_penalty
    assert out.filter(pl.col(S.TYPE) == "sentence")[SCORE].item() == pytest.approx(
        4.0 - 1.5 * (1 - 1 / 4))                            # one character of four differs


def test_demoted_pairs_do_not_count_toward_the_tier_target():
    """A demoted pair (Exclusion, Independent) ranks below all others, so the target is for
    the tier without it: here 小伙子 / 男孩 (ED÷len 1.0) is demoted, and the two best of the
    rest must reach 0.75 by themselves."""
    import numpy as np

    frame = typed(ECHOES_FIRST)
    demoted = np.array([False, False, True, False, False])
    out, chosen = novelty.penalise_sameness(frame, 0.0, 0.0, 1.0, 0.0,
                                            tier_diversity={"phrase": 0.75}, tier_share=0.4,
                                            demoted=demoted)
    # the top 2 of the rest reach 0.75 as 去世 / 逝世 (0.5) beside 死亡 / 过世 (1.0), so
    # 男孩 / 小男孩 must fall under 死亡 / 过世: 4.6 − λ·2/3 < 3.9 ⇔ λ > 1.05 (without the
    # demotion 0.9 was enough: 小伙子 / 男孩 would have counted)
    assert chosen["phrase"] == pytest.approx(1.05, abs=2e-6)
    rest = out.filter(pl.Series(~demoted)).sort(SCORE, descending=True)
    assert set(rest[S.SOURCE].to_list()[:2]) == {"去世", "死亡"}


@pytest.mark.parametrize("targets", ['{phrase = 1.5}', '{phrases = 0.7}', '{phrase = "high"}'])
def test_bad_tier_targets_fail_before_work(tmp_path, targets):
    from cppdb.rank.pipeline import rank_run

    from cppdb.rank.pipeline import plan_rank

    for command in (rank_run, plan_rank):                  # `cppdb rank` and its --dry-run
        with pytest.raises(ConfigError, match="tier_diversity"):
            command(tmp_path / "missing-run",
                    load_config(overrides=[f"rank.tier_diversity={targets}"]))
    assert not (tmp_path / "missing-run").exists()


def test_the_chosen_penalty_meets_the_target_on_a_real_sized_ranking():
    # many ties of ED÷len and near-equal scores: the penalty shown (6 decimals) must not
    # fall just short of the line, as a rounded-down value did
    import numpy as np

    rng = np.random.default_rng(5)
    n = 5000
    chars = "去世逝死亡过男孩子小伙美国合众"
    sources = ["".join(rng.choice(list(chars), size=rng.integers(2, 5))) for _ in range(n)]
    targets = ["".join(rng.choice(list(chars), size=rng.integers(2, 5))) for _ in range(n)]
    frame = pl.DataFrame({S.TYPE: ["phrase"] * n, S.SOURCE: sources, S.TARGET: targets,
                          SCORE: rng.uniform(1, 5, size=n)})
    from cppdb.rank.tiers import add_ranks

    tier_list = RankSettings().tier_list()

    def top_diversity(scored: pl.DataFrame) -> float:
        top = add_ranks(scored, tier_list).filter(pl.col("tier") == "S")
        return novelty.normalised_edit_distance(top).mean()

    unpenalised = top_diversity(frame)
    for step in (0.01, 0.03, 0.05):
        target = unpenalised + step
        out, chosen = novelty.penalise_sameness(frame, 0.0, 0.0, 1.0, 0.0,
                                                tier_diversity={"phrase": target})
        assert top_diversity(out) >= target
        assert 0.0 < chosen["phrase"] < 4.0
