"""Filters, weak labels, the LightGBM ranker, tiers and export (cppdb/rank)."""
from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from cppdb import schema as S
from cppdb.annotate.settings import AnnotateSettings
from cppdb.config import load_config
from cppdb.errors import BadInputError, RunStateError
from cppdb.rank import filters, tiers, weak_labels
from cppdb.rank.pairs import read_tsv_pairs, text_pairs
from cppdb.rank.ranker import Ranker, RankerSettings, train_ranker
from cppdb.rank.settings import RankSettings

NO_EMBEDDING = ["features.embedding=false"]


def pair_frame(rows: list[tuple[list[str], list[str], list[str], list[str]]]) -> pl.DataFrame:
    return pl.DataFrame(
        [{S.SOURCE: " ".join(s), S.TARGET: " ".join(t), S.SOURCE_TOKENS: s, S.TARGET_TOKENS: t,
          S.SOURCE_POS: sp, S.TARGET_POS: tp, S.TYPE: "phrase"} for s, t, sp, tp in rows],
        schema={S.SOURCE: pl.String, S.TARGET: pl.String, S.SOURCE_TOKENS: pl.List(pl.String),
                S.TARGET_TOKENS: pl.List(pl.String), S.SOURCE_POS: pl.List(pl.String),
                S.TARGET_POS: pl.List(pl.String), S.TYPE: pl.String})


@pytest.mark.parametrize("source, target, source_pos, target_pos, reason", [
    # the SPEC example: only 的 differs
    (["北京", "到", "上海", "的", "高铁"], ["北京", "到", "上海", "高铁"],
     ["NR", "P", "NR", "DEG", "NN"], ["NR", "P", "NR", "NN"], "trivial"),
    (["他", "走", "了", "。"], ["他", "走", "！"], ["PN", "VV", "AS", "PU"], ["PN", "VV", "PU"],
     "trivial"),                                              # 了 + punctuation
    (["ＡＢＣ", "公司"], ["abc", "公司"], ["NR", "NN"], ["NR", "NN"], "identical"),  # widths, case
    (["张三", "出生", "于", "北京"], ["李四", "出生", "于", "北京"],
     ["NR", "VV", "P", "NR"], ["NR", "VV", "P", "NR"], "entity_only"),
    (["去世"], ["逝世"], ["VV"], ["VV"], None),                # a real paraphrase is kept
    (["北京", "到", "上海"], ["北京", "去", "上海"], ["NR", "P", "NR"], ["NR", "VV", "NR"], None),
])
def test_filter_reasons(source, target, source_pos, target_pos, reason):
    frame = pair_frame([(source, target, source_pos, target_pos)])
    assert filters.filter_reasons(frame).to_list() == [reason]


def test_filter_keeps_everything_somewhere():
    frame = pair_frame([
        (["北京", "到", "上海", "的", "高铁"], ["北京", "到", "上海", "高铁"], [], []),
        (["去世"], ["逝世"], [], []),
        (["科诺夫尼岑", "来", "了"], ["柯诺夫尼岑", "来", "了"], [], []),
    ]).with_columns(pl.Series("source_norm", ["北京到上海的高铁", "去世", "科诺夫尼岑来了"]),
                    pl.Series("target_norm", ["北京到上海高铁", "逝世", "科诺夫尼岑来了"]))
    kept, rejected = filters.filter_pairs(frame)
    assert kept[S.SOURCE].to_list() == ["去世"]
    # transliteration variants are one name after the entity normalisation
    assert rejected[filters.FILTER_REASON].to_list() == ["trivial", "identical"]
    assert kept.height + rejected.height == frame.height


def test_filters_can_be_switched_off():
    frame = pair_frame([(["北京", "的", "高铁"], ["北京", "高铁"], [], [])])
    settings = filters.FilterSettings(filters=("identical",))
    assert filters.filter_reasons(frame, settings).to_list() == [None]
    two = pair_frame([(["北京", "的", "高铁"], ["北京", "高铁"], [], []),
                      (["北京"], ["北京"], [], [])])
    nothing = filters.FilterSettings(filters=())
    assert filters.filter_reasons(two, nothing).to_list() == [None, None]
    kept, rejected = filters.filter_pairs(two, nothing)
    assert (kept.height, rejected.height) == (2, 0)


def test_the_first_applicable_reason_in_order_is_recorded():
    # identical and trivial both apply to the first pair: the first in REASONS wins
    frame = pair_frame([(["的"], ["的"], ["DEG"], ["DEG"]),
                        (["北京", "的"], ["北京"], ["NR", "DEG"], ["NR"])])
    assert filters.filter_reasons(frame).to_list() == ["identical", "trivial"]
    only_later = filters.FilterSettings(filters=("trivial",))
    assert filters.filter_reasons(frame, only_later).to_list() == ["trivial", "trivial"]


@pytest.mark.parametrize("kind, tokens, pos, check", [
    ("hard_swap_words", ["他", "喜欢", "她"], ["PN", "VV", "PN"],
     lambda out: sorted(out) == sorted([("他", "PN"), ("喜欢", "VV"), ("她", "PN")])
     and [t for t, _ in out] != ["他", "喜欢", "她"]),
    ("hard_swap_entities", ["张三", "打败", "李四"], ["NR", "VV", "NR"],
     lambda out: out == [("李四", "NR"), ("打败", "VV"), ("张三", "NR")]),
    ("hard_negation", ["他", "来", "了"], ["PN", "VV", "AS"],
     lambda out: out == [("他", "PN"), ("不", "AD"), ("来", "VV"), ("了", "AS")]),
    ("hard_negation", ["他", "没", "来"], ["PN", "AD", "VV"],
     lambda out: out == [("他", "PN"), ("来", "VV")]),
    ("hard_number", ["买", "了", "3", "本"], ["VV", "AS", "CD", "M"],
     lambda out: out[2][0] != "3" and out[2][0].isdigit() and out[2][1] == "CD"),
    ("hard_number", ["两", "个", "人"], ["CD", "M", "NN"], lambda out: out[0][0] != "两"),
])
def test_perturbations(kind, tokens, pos, check):
    out = weak_labels.PERTURBATIONS[kind](list(zip(tokens, pos)), np.random.default_rng(0), [])
    assert out is not None and check(out)


def test_hard_negatives_keep_pos_tags():
    frame = pair_frame([(["他", "去世", "了"], ["他", "逝世", "了"], ["PN", "VV", "AS"],
                         ["PN", "VV", "AS"])])
    hard = weak_labels.hard_negatives(frame, weak_labels.WeakLabelSettings(hard_per_positive=2),
                                      np.random.default_rng(0), [])
    assert hard.height == 2
    assert all(len(t) == len(p) for t, p in zip(hard[S.TARGET_TOKENS], hard[S.TARGET_POS]))


def test_weak_labels_need_positives():
    frame = pair_frame([(["去世"], ["逝世"], [], [])]).with_columns(
        pl.lit(1).cast(pl.Int64).alias(S.N_PIVOTS), pl.lit(0.01).alias(S.P_TGT_GIVEN_SRC),
        pl.lit(0.01).alias(S.P_SRC_GIVEN_TGT))
    with pytest.raises(RunStateError, match="rank.model=default"):
        weak_labels.weak_label_pairs(frame, weak_labels.WeakLabelSettings())


@pytest.fixture(scope="module")
def labelled_pairs(data_dir) -> pl.DataFrame:
    labels = read_tsv_pairs(data_dir / "labels" / "paraphrase_labels.tsv", with_score=True)
    labels = labels.filter(~pl.col("source").str.contains(r"\["))   # patterns: other test
    frame = text_pairs(labels["source"].to_list(), labels["target"].to_list(),
                       AnnotateSettings(zh_backend="jieba"))
    return frame.with_columns(pl.Series("label", labels["label"]))


def make_run(path, labelled: pl.DataFrame) -> None:
    """A bilingual-looking run: good pairs (label ≥ 4) with strong pivot evidence."""
    rng = np.random.default_rng(0)
    good = (labelled["label"] >= 4).to_numpy()
    n = labelled.height
    frame = labelled.drop("label").with_columns(
        pl.col(S.SOURCE_TOKENS).list.join(" ").alias(S.SOURCE),
        pl.col(S.TARGET_TOKENS).list.join(" ").alias(S.TARGET),
        pl.lit("phrase").alias(S.TYPE), pl.lit("NP").alias(S.LHS),
        pl.Series(S.P_TGT_GIVEN_SRC, np.where(good, rng.uniform(0.2, 0.6, n), rng.uniform(0, .1, n))),
        pl.Series(S.P_SRC_GIVEN_TGT, np.where(good, rng.uniform(0.2, 0.6, n), rng.uniform(0, .1, n))),
        pl.Series(S.N_PIVOTS, np.where(good, rng.integers(2, 5, n), 1)).cast(pl.Int64),
        pl.Series(S.COUNT, rng.integers(1, 9, n)).cast(pl.Int64), pl.lit("bilingual").alias(S.ORIGIN))
    path.mkdir(parents=True, exist_ok=True)
    frame.write_parquet(path / "phrase_pairs.parquet")


def test_rank_run_with_weak_labels(tmp_path, labelled_pairs):
    from cppdb.rank.pipeline import RANKED, rank_run

    make_run(tmp_path / "run", labelled_pairs)
    config = load_config(overrides=NO_EMBEDDING)
    summary = rank_run(tmp_path / "run", config)
    assert summary.model == "weak labels"
    ranked = pl.read_parquet(summary.ranking_dir / RANKED)
    # nothing lost: every candidate is ranked, filtered out (with a reason) or pruned
    assert summary.ranked + summary.rejected + summary.pruned == summary.pairs \
        == labelled_pairs.height
    pruned = pl.read_parquet(summary.ranking_dir / "pruned_pairs.parquet")
    assert pruned.height == summary.pruned
    assert set(pruned[S.RELATION]) <= {"OtherRelated", "Independent"}
    model = json.loads((summary.ranking_dir / "ranker.json").read_text())
    assert model["training"]["label_kinds"]["positive"] > 0
    assert set(model["importance"]) == set(model["features"])
    # the ranking puts the labelled paraphrases first: mean label of the top 20% vs bottom 40%
    joined = ranked.join(labelled_pairs.select(
        pl.col(S.SOURCE_TOKENS).list.join(" ").alias(S.SOURCE),
        pl.col(S.TARGET_TOKENS).list.join(" ").alias(S.TARGET), "label"), on=[S.SOURCE, S.TARGET])
    top = joined.filter(pl.col("tier") == "S")["label"].mean()
    bottom = joined.filter(pl.col("percentile") > 0.6)["label"].mean()
    assert top > bottom + 1.0
    again = rank_run(tmp_path / "run", config)            # finished stages are reused
    assert again.ranked == summary.ranked


def test_rank_run_with_human_labels(tmp_path, labelled_pairs, data_dir):
    from cppdb.rank.pipeline import rank_run

    make_run(tmp_path / "run", labelled_pairs)
    summary = rank_run(tmp_path / "run", load_config(overrides=NO_EMBEDDING),
                       labels=data_dir / "labels" / "paraphrase_labels.tsv")
    model = json.loads((summary.ranking_dir / "ranker.json").read_text())
    assert model["training"]["source"] == "human labels"
    # pattern labels are not in the run: their features come from the text; every label is used
    n_labels = read_tsv_pairs(data_dir / "labels" / "paraphrase_labels.tsv", with_score=True).height
    assert model["training"]["pairs"] == n_labels
    assert "f_p_t_given_s" in model["features"]


def test_bad_labels_file_names_the_line(tmp_path):
    path = tmp_path / "labels.tsv"
    path.write_text("source\ttarget\tscore\n去世\t逝世\t5\n老人\t老头\tseven\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="'seven' of pair 2 is not a number from 1 to 5"):
        read_tsv_pairs(path, with_score=True)
    path.write_text("去世 逝世\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="line 1 has 1 field"):
        read_tsv_pairs(path)


def test_ranker_round_trip_and_missing_features(tmp_path):
    rng = np.random.default_rng(1)
    frame = pl.DataFrame({"f_a": rng.normal(size=200), "f_b": rng.normal(size=200)})
    labels = 3 + frame["f_a"].to_numpy()
    ranker = train_ranker(frame, labels, ["f_a", "f_b"])
    assert np.corrcoef(ranker.predict(frame), labels)[0, 1] > 0.9
    loaded = Ranker.load(ranker.save(tmp_path / "m.json"))
    assert np.allclose(loaded.predict(frame), ranker.predict(frame))
    with pytest.raises(BadInputError, match="f_b"):
        loaded.predict(frame.drop("f_b"))
    with pytest.raises(BadInputError, match="at least 10"):
        train_ranker(frame.head(5), labels[:5], ["f_a"])


def test_an_acceptable_ranker_scores_the_chance_of_rating_3_or_more_on_the_1_to_5_scale(tmp_path):
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({"f_a": rng.normal(size=400), "f_b": rng.normal(size=400)})
    # ratings 1–5 where only f_a decides acceptability; f_b moves 4 ↔ 5 (above the line)
    a, b = frame["f_a"].to_numpy(), frame["f_b"].to_numpy()
    labels = np.where(a > 0, np.where(b > 0, 5.0, 4.0), np.where(b > 0, 2.0, 1.0))
    settings = RankerSettings(objective="acceptable", n_estimators=100, min_data_in_leaf=5)
    ranker = train_ranker(frame, labels, ["f_a", "f_b"], settings)
    assert ranker.objective == "acceptable"
    assert ranker.training["params"]["objective"] == "binary"
    scores = ranker.predict(frame)
    assert scores.min() >= 1.0 and scores.max() <= 5.0
    assert scores[a > 0.5].mean() > 4.0 and scores[a < -0.5].mean() < 2.0
    loaded = Ranker.load(ranker.save(tmp_path / "acceptable.json"))
    assert loaded.objective == "acceptable"
    assert np.allclose(loaded.predict(frame), scores)
    assert train_ranker(frame, labels, ["f_a", "f_b"]).objective == "regression"
    with pytest.raises(BadInputError, match="one side"):
        train_ranker(frame, np.where(b > 0, 5.0, 4.0), ["f_a"], settings)   # all acceptable
    with pytest.raises(BadInputError, match="objective"):
        train_ranker(frame, labels, ["f_a"], RankerSettings(objective="ordinal"))


def test_an_unknown_objective_fails_before_work(tmp_path):
    from cppdb.config import load_config
    from cppdb.errors import ConfigError
    from cppdb.rank.pipeline import rank_run

    with pytest.raises(ConfigError, match="objective"):
        rank_run(tmp_path / "missing-run", load_config(overrides=['rank.objective="ordinal"']))
    assert not (tmp_path / "missing-run").exists()


@pytest.mark.parametrize("n, sizes", [(7, [2, 3, 5, 7]), (10, [2, 4, 6, 10]), (1, [1, 1, 1, 1]),
                                      (101, [21, 41, 61, 101])])
def test_tiers_are_nested_with_exact_sizes(n, sizes):
    tier_list = RankSettings().tier_list()
    frame = pl.DataFrame({S.SOURCE: [f"s{i}" for i in range(n)], S.TARGET: ["t"] * n,
                          S.TYPE: ["phrase"] * n, "score": np.linspace(1, 5, n)})
    ranked = tiers.add_ranks(frame, tier_list)
    members = []
    assert [t.name for t in tier_list][-1] == "XL" and tier_list[-1].share == 1.0
    for tier, size in zip(tier_list, sizes, strict=True):
        chosen = tiers.select_top(ranked, tier.share)
        assert chosen.height == size
        members.append(set(chosen[S.SOURCE]))
        rest = ranked.filter(~pl.col(S.SOURCE).is_in(list(members[-1])))
        if size < n:                                   # the best pairs, none better left out
            assert chosen["score"].min() >= rest["score"].max()
        else:                                          # XL (and every tier when n = 1): all
            assert rest.height == 0 and members[-1] == set(frame[S.SOURCE])
            assert chosen["score"].to_list() == sorted(frame["score"].to_list(), reverse=True)
    assert all(a <= b for a, b in zip(members, members[1:]))        # S ⊂ M ⊂ L ⊂ XL
    table = tiers.tier_table(ranked, tier_list)
    assert table["pairs"].to_list() == sizes
    assert ranked["tier"].value_counts().sort("tier")["count"].sum() == n


def test_top_share_is_per_type_and_parses():
    frame = pl.DataFrame({S.SOURCE: [str(i) for i in range(15)], S.TARGET: ["x"] * 15,
                          S.TYPE: ["phrase"] * 10 + ["sentence"] * 5,
                          "score": [float(i) for i in range(15)]})
    ranked = tiers.add_ranks(frame, RankSettings().tier_list())
    top = tiers.select_top(ranked, tiers.parse_top("20%"))
    assert top.group_by(S.TYPE).len().sort(S.TYPE)["len"].to_list() == [2, 1]
    assert tiers.select_top(ranked, 0.2, "sentence")[S.SOURCE].to_list() == ["14"]
    assert tiers.parse_top("0.6") == 0.6 and tiers.parse_top("S", (tiers.Tier("S", .2),)) == .2
    with pytest.raises(BadInputError, match="share"):
        tiers.parse_top("120%")


def test_export_top_share(tmp_path, labelled_pairs):
    from cppdb.export import read_pairs
    from cppdb.export_ranked import export_run
    from cppdb.rank.pipeline import rank_run

    make_run(tmp_path / "run", labelled_pairs)
    config = load_config(overrides=NO_EMBEDDING)
    summary = rank_run(tmp_path / "run", config)
    for fmt in ("jsonl", "ppdb", "tsv", "parquet"):
        path, count = export_run(tmp_path / "run", "20%", None, fmt,
                                 tmp_path / f"top.{fmt}", config)
        assert count == math.ceil(summary.ranked * 0.2 - 1e-9)
        back = read_pairs(path, fmt)
        assert back.height == count
    path, count = export_run(tmp_path / "run", "M", "phrase", "jsonl", tmp_path / "m.jsonl", config)
    assert count == math.ceil(summary.ranked * 0.4 - 1e-9)


def test_score_default_model_needs_its_features(tmp_path):
    from cppdb.rank.pipeline import score_file

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("他去世了\t他逝世了\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="f_cosine"):
        score_file(pairs, tmp_path / "out.tsv", load_config(overrides=NO_EMBEDDING))


def test_score_with_the_shipped_model(tmp_path):
    from cppdb.rank.pipeline import score_file

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("source\ttarget\n他死于一场车祸。\t他在一场车祸中丧生。\n"
                     "他死于一场车祸。\t这家商店明天不开门。\n"
                     "张三打败了李四。\t李四打败了张三。\n", encoding="utf-8")
    assert score_file(pairs, tmp_path / "out.tsv") == 3
    out = pl.read_csv(tmp_path / "out.tsv", separator="\t")
    scores = out["score"].to_list()
    assert scores[0] > scores[1] + 1.0       # paraphrase above an unrelated sentence
    assert scores[0] > scores[2]             # and above swapped roles


def test_weak_positives_by_evidence_and_anchor_quality():
    frame = pl.DataFrame({
        S.TYPE: ["phrase", "phrase", "phrase", "sentence", "sentence", "sentence", "sentence"],
        S.N_PIVOTS: [3, 1, 3, 0, 0, 0, 0], S.P_TGT_GIVEN_SRC: [0.3, 0.5, 0.05, None, None, None, None],
        S.P_SRC_GIVEN_TGT: [0.2, 0.5, 0.5, None, None, None, None],
        "anchor": [None, None, None, True, False, False, False],
        "cost": [None, None, None, 0.9, 0.1, 0.5, 0.8]})
    mask = weak_labels.positive_mask(frame, weak_labels.WeakLabelSettings(sentence_cost_quantile=0.1))
    # phrase: ≥2 pivots and both probabilities ≥ 0.1; sentence: an anchor or a low bead cost
    assert mask.to_list() == [True, False, False, True, True, False, False]


def test_anchored_ranker_adds_weighted_trees_to_a_line_of_the_anchor(tmp_path):
    from cppdb.rank.ranker import fit_anchor

    rng = np.random.default_rng(2)
    cosine = rng.uniform(0.8, 1.0, size=300)
    flag = rng.integers(0, 2, size=300).astype(float)
    frame = pl.DataFrame({"f_cosine": cosine, "f_flag": flag})
    labels = 1 + 20 * (cosine - 0.8) - 1.5 * flag          # the flag lowers the label
    anchor = fit_anchor(cosine, labels, "f_cosine")
    assert anchor.slope > 0
    ranker = train_ranker(frame, labels, ["f_cosine", "f_flag"], anchor=anchor)
    line = anchor.intercept + anchor.slope * cosine
    trees = ranker.predict(frame) - line                    # weight 1: line + full correction
    assert trees[flag == 1].mean() < trees[flag == 0].mean() - 1.0
    flat = ranker.with_residual_weight(0.0)                 # weight 0: ranks exactly by cosine
    assert np.array_equal(np.argsort(flat.predict(frame)), np.argsort(cosine))
    half = ranker.with_residual_weight(0.5)
    assert np.allclose(half.predict(frame), line + 0.5 * trees)
    loaded = Ranker.load(half.save(tmp_path / "anchored.json"))
    assert loaded.anchor == half.anchor
    assert np.allclose(loaded.predict(frame), half.predict(frame))
    with pytest.raises(BadInputError, match="anchored"):
        train_ranker(frame, labels, ["f_flag"]).with_residual_weight(0.5)
    with pytest.raises(BadInputError, match="regression"):
        train_ranker(frame, labels, ["f_cosine", "f_flag"],
                     RankerSettings(objective="acceptable"), anchor=anchor)


def test_fit_anchor_never_decreases_in_the_anchor():
    from cppdb.rank.ranker import fit_anchor

    anchor = fit_anchor(np.array([0.1, 0.5, 0.9]), np.array([5.0, 3.0, 1.0]), "f_cosine")
    assert anchor.slope == 0.0 and anchor.intercept == pytest.approx(3.0)
    with pytest.raises(BadInputError, match="distinct"):
        fit_anchor(np.array([0.5, 0.5]), np.array([1.0, 5.0]), "f_cosine")


def test_residual_weight_by_grouped_cross_validation():
    from devtools.train_default import WEIGHT_GRID, cross_validate_weight

    rng = np.random.default_rng(3)
    n = 240
    cosine = rng.uniform(0.85, 1.0, size=n)
    flag = rng.integers(0, 2, size=n).astype(float)
    # human labels depend strongly on the flag that the cosine cannot see: CV must give the
    # trees weight; with labels that follow the cosine alone it must stay near 0
    frame = pl.DataFrame({S.SOURCE: [f"s{i // 2}" for i in range(n)], "f_cosine": cosine,
                          "f_flag": flag, weak_labels.LABEL_KIND: ["human"] * n})
    settings = RankerSettings(n_estimators=60, increasing=("f_cosine",))
    informative = frame.with_columns(pl.Series("label", 1 + 10 * (cosine - 0.85) + 2 * flag))
    weight, table = cross_validate_weight(informative, ["f_cosine", "f_flag"], settings)
    assert [row["weight"] for row in table] == list(WEIGHT_GRID)
    assert weight >= 0.5
    assert table[-1]["spearman"] > table[0]["spearman"] + 0.2
    noise = frame.with_columns(pl.Series("label", 1 + 25 * (cosine - 0.85)
                                         + rng.normal(0, 0.3, size=n)))
    weight, _ = cross_validate_weight(noise, ["f_cosine", "f_flag"], settings)
    assert weight <= 0.1


def test_shipped_model_is_anchored_on_the_cosine_and_trained_on_our_label_files(data_dir):
    from cppdb.rank.pipeline import load_ranker
    from devtools.train_default import (
        LABEL_FILES,
        SHIPPED_FEATURES,
        SYNTHETIC_KINDS,
        human_labels,
    )

    labels = human_labels(data_dir)
    assert set(labels["label_file"].unique()) == set(LABEL_FILES)
    sentences = labels.filter(pl.col("label_file") == "sentence_labels.tsv")
    assert sentences.height >= 300 and set(sentences["label"].unique()) == {1.0, 2.0, 3.0, 4.0, 5.0}
    ranker = load_ranker(None).models["*"]       # the sentence model of the shipped pair
    assert ranker.anchor is not None and ranker.anchor.feature == "f_cosine"
    assert ranker.anchor.slope > 0 and 0.0 <= ranker.anchor.residual_weight <= 1.0
    assert all(f"data/labels/{name}" in ranker.training["data"] for name in LABEL_FILES)
    synthetic = {k for k in ranker.training["label_kinds"] if k.startswith("hard")}
    assert synthetic and synthetic <= set(SYNTHETIC_KINDS)   # never hard_number
    assert ranker.features == SHIPPED_FEATURES
    assert set(ranker.training["decreasing"]) == {"f_negation_flip", "f_argument_swap"}


def test_shipped_model_lowers_detected_meaning_changes_at_the_same_cosine():
    from cppdb.rank.pipeline import load_ranker

    ranker = load_ranker(None).models["*"]
    base = {"f_cosine": [0.95] * 4, "f_numbers_identical": [1, 0, 1, 1],
            "f_negation_flip": [0, 0, 1, 0], "f_argument_swap": [0, 0, 0, 1]}
    scores = ranker.predict(pl.DataFrame(base))
    assert scores[0] > scores[2] + 1.0 and scores[0] > scores[3] + 1.0
    assert scores[0] > scores[1]                   # changed numbers: a milder penalty
    higher = ranker.predict(pl.DataFrame({**base, "f_cosine": [0.97] * 4}))
    assert (higher >= scores).all()                # monotone in the cosine


def test_only_synthetic_pairs_a_detector_sees_are_kept_for_training():
    from devtools.train_default import detectable_synthetics

    frame = pl.DataFrame({
        weak_labels.LABEL_KIND: ["human", "hard_negation", "hard_negation", "hard_swap_words",
                                 "hard_number", "easy_random"],
        "f_negation_flip": [0, 1, 0, 0, 0, 0], "f_argument_swap": [0, 0, 0, 1, 0, 0]})
    kept = detectable_synthetics(frame)[weak_labels.LABEL_KIND].to_list()
    assert kept == ["human", "hard_negation", "hard_swap_words", "easy_random"]


def test_decreasing_features_are_monotone():
    rng = np.random.default_rng(4)
    n = 400
    flag = rng.integers(0, 2, n)
    cosine = rng.uniform(0.8, 1.0, n)
    # the labels reward the flag, but the constraint says it may never raise the score
    frame = pl.DataFrame({"f_cosine": cosine, "f_flag": flag})
    labels = 1 + 10 * (cosine - 0.8) + 1.5 * flag
    settings = RankerSettings(n_estimators=50, increasing=("f_cosine",), decreasing=("f_flag",))
    ranker = train_ranker(frame, labels, ["f_cosine", "f_flag"], settings)
    on = ranker.predict(frame.with_columns(pl.lit(1).alias("f_flag")))
    off = ranker.predict(frame.with_columns(pl.lit(0).alias("f_flag")))
    assert (on <= off + 1e-9).all()
    assert ranker.training["decreasing"] == ["f_flag"]


def test_weak_label_rule_reads_only_its_declared_inputs():
    frame = pl.DataFrame({
        S.TYPE: ["phrase", "phrase", "phrase", "sentence", "sentence"],
        S.N_PIVOTS: [3, 1, 3, 0, 0], S.P_TGT_GIVEN_SRC: [0.3, 0.5, 0.05, None, None],
        S.P_SRC_GIVEN_TGT: [0.2, 0.5, 0.5, None, None], S.COUNT: [5, 1, 4, 1, 1],
        "anchor": [None, None, None, True, False], "cost": [None, None, None, 0.9, 0.1]})
    settings = weak_labels.WeakLabelSettings(sentence_cost_quantile=0.5)
    # nothing but the declared columns: reading any other column would raise
    only = frame.select(weak_labels.RULE_SELECTOR, *weak_labels.LABEL_INPUTS)
    assert weak_labels.positive_mask(only, settings).to_list() == [True, False, False, True, True]


def test_weak_training_features_share_no_input_with_the_label_rule():
    from cppdb.features.table import EVIDENCE_FEATURES, FEATURE_DESCRIPTIONS, FEATURE_INPUTS

    kept = weak_labels.independent_features(list(FEATURE_DESCRIPTIONS))
    for name in kept:
        assert not set(FEATURE_INPUTS.get(name, ())) & set(weak_labels.LABEL_INPUTS), name
    for dropped in ("f_p_t_given_s", "f_p_s_given_t", "f_n_pivots", "f_count"):
        assert dropped not in kept
    assert {"f_cosine", "f_edit_distance", "f_alignments", "f_lex_best"} <= set(kept)
    assert set(EVIDENCE_FEATURES) <= set(FEATURE_INPUTS)   # every evidence feature declared


def test_text_features_do_not_read_the_label_inputs():
    from cppdb.features.table import FEATURE_INPUTS, lexical_feature_table

    rows = pair_frame([(["去世"], ["逝世"], ["VV"], ["VV"]),
                       (["他", "不", "来"], ["他", "来"], ["PN", "AD", "VV"], ["PN", "VV"])])
    evidence = {S.N_PIVOTS: pl.Int64, S.P_TGT_GIVEN_SRC: pl.Float64,
                S.P_SRC_GIVEN_TGT: pl.Float64, S.COUNT: pl.Int64}
    low = rows.with_columns([pl.lit(1).cast(t).alias(c) for c, t in evidence.items()])
    high = rows.with_columns([pl.lit(9).cast(t).alias(c) for c, t in evidence.items()])
    text = [c for c in lexical_feature_table(low).columns
            if c.startswith("f_") and c not in FEATURE_INPUTS]
    assert lexical_feature_table(low).select(text).equals(lexical_feature_table(high).select(text))


def test_features_in_chunks_equal_features_in_one_piece(tmp_path, labelled_pairs):
    """The features stage works chunk by chunk (memory); the LM is fitted once on the whole
    table, so chunk size changes nothing."""
    from cppdb.rank.pipeline import FEATURES, rank_run

    tables = []
    for chunk in (7, 1_000_000):
        run = tmp_path / f"run{chunk}"
        make_run(run, labelled_pairs)
        summary = rank_run(run, load_config(overrides=[*NO_EMBEDDING,
                                                       f"features.chunk_size={chunk}"]))
        tables.append(pl.read_parquet(summary.ranking_dir / FEATURES))
    assert tables[0].height > 7 * 3
    assert tables[0].equals(tables[1])


def test_rank_inputs_name_the_models_that_decide_the_ranking(tmp_path):
    from cppdb.rank.pipeline import rank_inputs
    from cppdb.rank.settings import RankRun
    from cppdb.config import resolve

    (tmp_path / "phrase_pairs.parquet").write_bytes(b"")
    names = {p.name for p in rank_inputs(tmp_path, resolve(RankRun, load_config()), None)}
    assert {"phrase_pairs.parquet", "default_ranker.json", "bilingual_ranker.json",
            "relation_model.json", "negation_words.txt", "antonyms_en.txt"} <= names
    without = resolve(RankRun, load_config(overrides=['rank.relation_model="none"']))
    assert "relation_model.json" not in {p.name for p in rank_inputs(tmp_path, without, None)}


def test_a_changed_model_stops_a_finished_rank_run_from_resuming(tmp_path, labelled_pairs):
    """An upgrade that changes a model the ranking read must not leave the old relations in
    place silently: the rerun is refused, names the file, and --fresh re-ranks."""
    from cppdb.rank.pipeline import rank_run
    from cppdb.rank.relations import shipped_model_path

    model = tmp_path / "my_relations.json"
    model.write_text(shipped_model_path().read_text("utf-8"), "utf-8")
    make_run(tmp_path / "run", labelled_pairs)
    config = load_config(overrides=[*NO_EMBEDDING, f'rank.relation_model="{model}"'])
    first = rank_run(tmp_path / "run", config)
    data = json.loads(model.read_text("utf-8"))
    data["training"] = {**data.get("training", {}), "note": "retrained"}
    model.write_text(json.dumps(data), "utf-8")
    with pytest.raises(RunStateError, match="my_relations.json") as refused:
        rank_run(tmp_path / "run", config)
    assert "--fresh" in (refused.value.hint or "")
    assert rank_run(tmp_path / "run", config, fresh=True).ranked == first.ranked
