"""cppdb.rank.relations: surface features of PPDB 2.0 relations, the classifier, its scores."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from cppdb.errors import BadInputError, ConfigError
from cppdb.rank.relation_cv import (equivalence_threshold_for, grouped_folds,
                                    leave_one_domain_out, out_of_fold, scores)
from cppdb.rank.exclusion import evidence_columns
from cppdb.rank.relations import (FEATURE_NEGATION_OVERLAP, RELATION, RELATIONS, RelationModel,
                                  decide, fit, load_model, model_columns, relation_features)


def _features(pairs: list[tuple[str, str]]) -> list[dict]:
    frame = pl.DataFrame(pairs, orient="row", schema=["source", "target"])
    return relation_features(frame).to_dicts()


def test_surface_features_of_the_rubric_examples():
    rows = _features([("增加", "减少"), ("不能", "能"), ("三 个", "五 个"), ("这 座 城市", "城市"),
                      ("车", "红色 的 车"), ("大海", "海洋"), ("我 的 书", "你 的 书"),
                      ("[NP1] 不 喜欢 [NP2]", "[NP1] 喜欢 [NP2]"), ("不 一样", "不 相同")])
    exclusion, negation, number, forward, reverse, same, person, pattern, both_neg = rows
    assert exclusion["r_antonym"] == 1 and same["r_antonym"] == 0
    assert negation["r_neg_flip"] == 1 and negation["r_neg_source"] == 1
    assert both_neg["r_neg_flip"] == 0              # a negation on both sides is no flip
    assert pattern["r_neg_flip"] == 1 and pattern["r_target_only_chars"] == 0  # slots ignored
    assert person["r_person_flip"] == 1 and number["r_person_flip"] == 0
    assert forward["r_char_containment"] == 1 and reverse["r_char_containment"] == -1
    assert same["r_char_containment"] == 0 and same["r_source_only_chars"] == 1


def _synthetic(n_per_class: int = 60, seed: int = 0) -> pl.DataFrame:
    """Pairs whose relation follows from the features (with a noise feature), in two
    domains, every source phrase used twice (so grouping matters)."""
    rng = np.random.default_rng(seed)
    pool = list("山水木石田土日月云风雨花草鸟鱼虫米麦竹")
    rows = []
    for index in range(n_per_class * len(RELATIONS)):
        relation = RELATIONS[index % len(RELATIONS)]
        stem = "".join(rng.choice(pool, 2))
        source = f"{stem}{index // 2}"          # two rows per source phrase
        target = {"Exclusion": f"减{stem}", "ForwardEntailment": stem,
                  "ReverseEntailment": f"{stem}红{index}"}.get(relation, f"{index}号")
        if relation == "Exclusion":
            source = f"增{stem}{index // 2}"
        if relation == "ReverseEntailment":
            source = stem
        gloss = {"Equivalence": 0.9, "OtherRelated": 0.35, "Independent": 0.0}.get(
            relation, 0.5) + rng.normal(0, 0.05)
        rows.append({"source": source, "target": target, RELATION: relation,
                     "f_gloss_overlap": gloss, "f_noise": rng.normal(),
                     "domain": "a" if index % 4 < 2 else "b"})
    return relation_features(pl.DataFrame(rows))


def test_grouped_folds_keep_a_source_in_one_fold():
    frame = _synthetic()
    fold = grouped_folds(frame, 5, seed=1)
    per_source = (frame.with_columns(pl.Series("fold", fold))
                  .group_by("source").agg(pl.col("fold").n_unique()))
    assert per_source["fold"].max() == 1
    assert len(set(fold)) == 5


def test_out_of_fold_learns_separable_relations():
    frame = _synthetic()
    assert "r_antonym" in model_columns(frame) and "f_noise" in model_columns(frame)
    predicted = out_of_fold(frame, grouped_folds(frame, 5, seed=1))
    result = scores(frame[RELATION].to_list(), predicted)
    recall = dict(result.per_class.select(RELATION, "recall").iter_rows())
    assert recall["Exclusion"] >= 0.9 and recall["ForwardEntailment"] >= 0.9
    assert result.macro_f1 >= 0.8
    assert int(result.confusion.select(RELATIONS).sum_horizontal().sum()) == frame.height
    assert out_of_fold(frame, grouped_folds(frame, 5, seed=1)) == predicted   # same twice


def test_leave_one_domain_out_scores_each_domain_on_its_own_rows():
    frame = _synthetic(30)
    result = leave_one_domain_out(frame)
    assert sorted(result) == ["a", "b"]
    for name, held in result.items():
        assert held.per_class["support"].sum() == frame.filter(pl.col("domain") == name).height


def test_scores_known_values():
    gold = ["Equivalence", "Equivalence", "Exclusion", "Independent"]
    predicted = ["Equivalence", "Exclusion", "Exclusion", "Equivalence"]
    result = scores(gold, predicted)
    rows = {r[RELATION]: r for r in result.per_class.to_dicts()}
    assert rows["Equivalence"]["precision"] == pytest.approx(0.5)
    assert rows["Equivalence"]["recall"] == pytest.approx(0.5)
    assert rows["Exclusion"]["precision"] == pytest.approx(0.5)
    assert rows["Exclusion"]["recall"] == pytest.approx(1.0)
    assert rows["Independent"]["f1"] == 0.0
    # macro over the three classes present in the gold: (0.5 + 2/3 + 0) / 3
    assert result.macro_f1 == pytest.approx((0.5 + 2 / 3) / 3)
    assert result.confusion.columns == ["gold", *RELATIONS]
    exclusion_row = result.confusion.filter(pl.col("gold") == "Equivalence").row(0, named=True)
    assert exclusion_row["Exclusion"] == 1 and exclusion_row["Equivalence"] == 1


def test_the_exclusion_evidence_is_a_feature_of_the_classifier():
    rows = _features([("增加", "减少"), ("是 他 的 书", "不是 他 的 书"), ("三 名", "两 名"),
                      ("大海", "海洋")])
    antonym, negation, number, same = rows
    assert antonym["r_gloss_antonym"] == 1 and negation["r_negation_rest"] == 1
    assert number["r_number_change"] == 1
    assert same["r_gloss_antonym"] == same["r_negation_rest"] == same["r_number_change"] == 0


def test_decide_leaves_exclusion_to_the_rule_and_renormalises_the_rest():
    probabilities = np.array([[0.1, 0.1, 0.1, 0.5, 0.1, 0.1],     # the classifier's Exclusion
                              [0.6, 0.1, 0.1, 0.0, 0.1, 0.1],
                              [0.2, 0.2, 0.2, 0.2, 0.1, 0.1]])
    labels, chance = decide(probabilities, np.array([False, False, True]))
    assert labels == ["Equivalence", "Equivalence", "Exclusion"]
    assert chance[0] == pytest.approx(0.1 / 0.5) and chance[1] == pytest.approx(0.6)
    assert np.isnan(chance[2])                    # the rule's: no classifier probability


def test_a_fitted_model_round_trips_and_labels_phrases_not_sentences(tmp_path):
    frame = _synthetic().with_columns(pl.lit("phrase").alias("type"))
    model = fit(frame, model_columns(frame), seed=1, training={"n": frame.height})
    path = model.save(tmp_path / "relations.json")
    again = RelationModel.load(path)
    assert again == model and again.training == {"n": frame.height}
    assert np.allclose(again.probabilities(frame), model.probabilities(frame))
    rows = frame.head(12).with_columns(
        pl.when(pl.int_range(pl.len()) < 2).then(pl.lit("sentence")).otherwise(pl.col("type"))
        .alias("type"))
    labelled = again.label(rows.drop([c for c in rows.columns if c.startswith("r_")]))
    assert labelled["relation"][:2].to_list() == [None, None]
    assert labelled["relation_probability"][:2].is_null().all()
    assert "Exclusion" not in labelled["relation"].to_list()
    assert labelled["relation_probability"][2:].is_between(0.2, 1.0).all()
    assert (labelled["relation"][2:] == rows["relation"][2:]).mean() >= 0.8
    # the score chunks hand over the evidence they computed for the rule: same labels
    evidence = evidence_columns(rows, FEATURE_NEGATION_OVERLAP)
    assert again.label(rows.drop([c for c in rows.columns if c.startswith("r_")]),
                       evidence).equals(labelled)


def test_fitting_needs_every_relation_and_loading_checks_the_format(tmp_path):
    frame = _synthetic().filter(pl.col(RELATION) != "Independent")
    with pytest.raises(BadInputError, match="Independent"):
        fit(frame, model_columns(frame))
    (tmp_path / "other.json").write_text('{"format": "cppdb-ranker/1"}', "utf-8")
    with pytest.raises(BadInputError, match="not a cppdb relation model"):
        RelationModel.load(tmp_path / "other.json")
    with pytest.raises(BadInputError, match="does not exist"):
        RelationModel.load(tmp_path / "missing.json")


def test_the_shipped_model_is_the_judged_one_without_language_model_features():
    """resources/relation_model.json: trained on the relation judgements, its CV recorded,
    no feature whose scale moves from run to run."""
    model = load_model("default")
    assert model.training["judged_pairs"] >= 2000
    assert model.training["grouped_cv"]["macro_f1"] > 0.4
    assert set(model.features) >= {"f_p_t_given_s", "f_cosine", "r_gloss_antonym"}
    assert not any(f.startswith("f_lm_") for f in model.features)


def test_relation_settings_are_checked_before_work(tmp_path):
    from cppdb.rank.settings import RankSettings

    with pytest.raises(ConfigError, match="demoted_relations"):
        RankSettings(demoted_relations=("Equivalent",))
    with pytest.raises(ConfigError, match="relation_model"):
        RankSettings(relation_model=str(tmp_path / "missing.json"))
    assert RankSettings(relation_model="none").relation_model == "none"
    with pytest.raises(ConfigError, match="pruned_relations"):
        RankSettings(pruned_relations=("Unrelated",))
    with pytest.raises(ConfigError, match="Exclusion, which stays"):
        RankSettings(pruned_relations=("Exclusion",))
    with pytest.raises(ConfigError, match="pruned_below"):
        RankSettings(pruned_below=0.0)


def _scored(relations: list[str | None], scores: list[float], pair_type: str = "phrase"
            ) -> pl.DataFrame:
    n = len(scores)
    return pl.DataFrame({"type": [pair_type] * n, "source": [f"s{i}" for i in range(n)],
                         "target": [f"t{i}" for i in range(n)], "score": scores,
                         RELATION: relations}, schema_overrides={RELATION: pl.String})


def test_pruning_takes_only_low_ranked_pairs_of_the_named_relations():
    from cppdb.rank.tiers import prune_unrelated

    # ten pairs, scores 10 (best) .. 1; the best 60 % are the six scored 10..5
    relations = ["Independent", "OtherRelated", "Equivalence", "Independent", "OtherRelated",
                 "Independent", "OtherRelated", "Equivalence", "Exclusion", None]
    scored = _scored(relations, [float(10 - i) for i in range(10)])
    kept, pruned = prune_unrelated(scored, ("OtherRelated", "Independent"), 0.6)
    assert pruned["score"].to_list() == [4.0]          # OtherRelated at position 7 of 10
    assert kept.height == 9 and pruned.columns == scored.columns
    assert set(kept["score"].to_list()) | {4.0} == set(scored["score"].to_list())
    # Exclusion, Equivalence and a pair without a relation stay however low they score
    assert {"Exclusion", "Equivalence", None} <= set(kept.filter(pl.col("score") < 4)[RELATION])
    _, none = prune_unrelated(scored, (), 0.6)
    _, all_kept = prune_unrelated(scored, ("OtherRelated",), 1.0)
    assert none.height == 0 and all_kept.height == 0


def test_pruning_is_per_type_and_ties_do_not_depend_on_row_order():
    from cppdb.rank.tiers import prune_unrelated

    phrases = _scored(["OtherRelated"] * 5, [5.0, 4.0, 3.0, 3.0, 1.0])
    patterns = _scored(["OtherRelated"] * 2, [9.0, 0.5], "pattern")
    scored = pl.concat([phrases, patterns])
    _, pruned = prune_unrelated(scored, ("OtherRelated",), 0.5)
    # phrases: 5 and 4 are the best 40 %; the two 3.0 pairs share position 3 of 5 (0.6 > 0.5)
    assert pruned.filter(pl.col("type") == "phrase")["score"].to_list() == [3.0, 3.0, 1.0]
    assert pruned.filter(pl.col("type") == "pattern")["score"].to_list() == [0.5]
    _, reversed_pruned = prune_unrelated(scored.reverse(), ("OtherRelated",), 0.5)
    assert reversed_pruned.equals(pruned)


def test_cilin_features_say_how_deep_the_differing_words_meet():
    rows = _features([("大海", "海洋"), ("姑姑", "阿姨"), ("[NP1] 的 大海", "[NP1] 的 海洋"),
                      ("车", "红色 的 车"), ("这 是 大海", "那 是 海洋")])
    synonyms, sisters, pattern, added, two = rows
    assert synonyms["r_cilin_max"] == synonyms["r_cilin_min"] == 6
    assert sisters["r_cilin_max"] == 3                  # one minor class (kin), not one atom
    assert pattern["r_cilin_max"] == 6 and pattern["r_diff_words"] == 2   # slots left out
    assert added["r_cilin_max"] is None and added["r_diff_words"] == 2   # nothing to pair
    assert two["r_cilin_max"] == 6 and two["r_cilin_min"] < 6 and two["r_diff_words"] == 4


def test_an_equivalence_threshold_gives_the_next_relation_below_it():
    probabilities = np.array([[0.95, 0.05, 0, 0, 0, 0], [0.5, 0.1, 0.1, 0, 0.3, 0]])
    labels, chance = decide(probabilities, np.array([False, False]), 0.9)
    assert labels == ["Equivalence", "OtherRelated"] and chance[1] == pytest.approx(0.3)
    gold = np.array(["Equivalence", "OtherRelated"] * 20)
    rows = np.tile(probabilities, (20, 1))
    rule = np.zeros(40, dtype=bool)
    assert equivalence_threshold_for(rows, gold, rule, 0.9) == pytest.approx(0.51)
    assert equivalence_threshold_for(rows, gold, rule, 0.0) == 0.0
    assert equivalence_threshold_for(rows[20:], gold[20:], rule[20:], 0.9) == 1.0


def test_translation_features_find_one_thing_in_two_scripts():
    rows = _features([("集合", "set"), ("源 代码", "source code"), ("佩洛西", "Pelosi"),
                      ("[NP1] 的 set", "[NP1] 的 集合"), ("深度", "deep"), ("海洋", "大海"),
                      ("the set", "集合 的 set"), ("set 集合", "集合")])
    word, joined, name, pattern, other, chinese, stopword, added = rows
    assert word["r_script_switch"] == 1 and word["r_gloss_translation"] == 1.0
    assert joined["r_gloss_translation"] == 1.0          # 源代码 "source code", joined
    assert name["r_gloss_translation"] == 1.0            # CC-CEDICT glosses names too
    assert pattern["r_script_switch"] == 1 and pattern["r_gloss_translation"] == 1.0
    assert other["r_script_switch"] == 1 and other["r_gloss_translation"] == 0.0   # 深度 "depth"
    assert chinese["r_script_switch"] == 0 and chinese["r_gloss_translation"] is None
    # only an English stopword to look up: a switch, but no share
    assert stopword["r_script_switch"] == 1 and stopword["r_gloss_translation"] is None
    assert added["r_script_switch"] == 0                # the target has no word of its own
