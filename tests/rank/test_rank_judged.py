"""Judgements, their metrics, grouped CV training (train_bilingual) and rankers by type."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from cppdb import schema as S
from cppdb.config import load_config
from cppdb.errors import BadInputError
from cppdb.rank import judged
from cppdb.rank.by_type import OTHER, TypedRanker, load_model, resolve_model
from cppdb.rank.ranker import RankerSettings, train_ranker


def _write(tmp_path, text: str):
    path = tmp_path / "j.tsv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, types, ratings", [
    ("type\tsource\ttarget\trating\tstratum\nphrase\t去世\t逝世\t5\ttop\n"
     "pattern\t[NP1] 出生 于 [NP2]\t[NP1] 生 于 [NP2]\t4\tall\n",
     ["phrase", "pattern"], [5.0, 4.0]),
    # the older label files: no type (a slot makes a pattern), the rating is called score
    ("source\ttarget\tscore\n死于车祸\t在车祸中丧生\t5\n[NP1]的妻子\t[NP1]的老婆\t4\n",
     ["phrase", "pattern"], [5.0, 4.0]),
])
def test_read_judgements(tmp_path, text, types, ratings):
    frame = judged.read_judgements(_write(tmp_path, text))
    assert frame[S.TYPE].to_list() == types and frame[judged.RATING].to_list() == ratings


@pytest.mark.parametrize("text, message", [
    ("type\tsource\ttarget\trating\nphrase\t去世\t逝世\t6\n", "line 2"),
    ("type\tsource\ttarget\trating\nphrase\t去世\t逝世\t5\nsentence\t他来\t他到\t4\n", "line 3"),
    ("type\tsource\ttarget\trating\nphrase\t去世\t逝世\tgood\n", "line 2"),
    ("type\tsource\trating\nphrase\t去世\t5\n", "lacks column"),
])
def test_bad_judgements_name_the_line(tmp_path, text, message):
    with pytest.raises(BadInputError, match=message):
        judged.read_judgements(_write(tmp_path, text))


def test_several_label_files_are_read_together(tmp_path):
    from devtools.train_bilingual import read_label_files

    first = tmp_path / "train.tsv"
    first.write_text("type\tsource\ttarget\trating\tset\nphrase\t去世\t逝世\t5\ttrain\n",
                     encoding="utf-8")
    second = tmp_path / "report.tsv"
    second.write_text("type\tsource\ttarget\trating\tsample\n"
                      "pattern\t[NP1] 出生 于 [NP2]\t[NP1] 生 于 [NP2]\t4\tr1\n", encoding="utf-8")
    frame = read_label_files([first, second])
    assert frame[judged.RATING].to_list() == [5.0, 4.0]
    assert frame["labels_file"].to_list() == ["train.tsv", "report.tsv"]
    # a column only one file has is null in the other's rows
    assert frame["set"].to_list() == ["train", None] and frame["sample"].to_list() == [None, "r1"]
    assert read_label_files(first).height == 1
    with pytest.raises(BadInputError, match="line 2"):
        second.write_text("type\tsource\ttarget\trating\nphrase\t去世\t逝世\t9\n", "utf-8")
        read_label_files([first, second])


def _run_pairs(rows):
    return pl.DataFrame(
        [{S.TYPE: t, S.LHS: lhs, S.SOURCE: s, S.TARGET: g, S.COUNT: c,
          S.P_TGT_GIVEN_SRC: 0.1, "origin": "bilingual"} for t, lhs, s, g, c in rows])


def test_judgements_match_run_pairs_by_type_and_text():
    pairs = _run_pairs([("phrase", "NP", "一 场 车祸", "车祸", 2),
                        ("phrase", "VP", "一 场 车祸", "车祸", 5),     # same pair, other label
                        ("pattern", "NP", "一场 [NP1]", "车祸", 1),
                        ("phrase", "NP", "去世", "逝世", 1)])
    judgements = pl.DataFrame({S.TYPE: ["phrase", "pattern", "phrase"],
                               S.SOURCE: ["一场 车祸", "去世", "他 来"],
                               S.TARGET: ["车祸", "逝世", "他 到"], judged.RATING: [4.0, 5.0, 3.0],
                               "origin": ["tatoeba"] * 3})
    out = judged.match_run_pairs(judgements, pairs)
    # whitespace does not matter; the type does; unmatched judgements are dropped
    assert out[S.SOURCE].to_list() == ["一 场 车祸"]
    assert out[S.LHS].to_list() == ["VP"]                     # the best-supported row
    assert out["judged_origin"].to_list() == ["tatoeba"]      # no clash with the run's column
    assert out[judged.RATING].to_list() == [4.0]


@pytest.mark.parametrize("scores, positive, auc, top", [
    ([5, 4, 3, 2, 1], [1, 1, 0, 0, 0], 1.0, 1.0),
    ([1, 2, 3, 4, 5], [1, 1, 0, 0, 0], 0.0, 0.0),
    ([1, 1, 1, 1], [1, 0, 1, 0], 0.5, None),            # ties: no free ordering
    ([9, 8, 7, 6, 5, 4, 3, 2, 1, 0], [1, 0, 1, 1, 1, 1, 1, 1, 1, 1], 1 / 9, 0.5),
    ([1, 2], [1, 1], None, 1.0),                        # one class: no AUC
])
def test_auc_and_top_precision(scores, positive, auc, top):
    scores, positive = np.array(scores, float), np.array(positive, bool)
    assert judged.roc_auc(scores, positive) == (None if auc is None else pytest.approx(auc))
    if top is not None:
        assert judged.top_precision(scores, positive) == pytest.approx(top)


def test_folds_keep_a_source_phrase_together():
    sources = ["一 场 车祸", "一场车祸", "去世", "去世", "他", "她", "我们", "你们"]
    fold = judged.folds_by_source(sources, 3)
    assert fold[0] == fold[1] and fold[2] == fold[3]
    assert set(fold) <= {0, 1, 2}


def _labelled(n: int = 240, seed: int = 0) -> pl.DataFrame:
    """A tiny judged table: the rating follows the cosine, the 'noise' feature is random,
    and pairs come in groups of three with the same source."""
    rng = np.random.default_rng(seed)
    cosine = rng.uniform(0, 1, n)
    rating = np.clip(np.round(1 + 4 * cosine + rng.normal(0, 0.3, n)), 1, 5)
    return pl.DataFrame({S.TYPE: ["phrase", "pattern"] * (n // 2),
                         S.SOURCE: [f"s{i // 3}" for i in range(n)],
                         "f_cosine": cosine, "f_noise": rng.uniform(0, 1, n),
                         judged.RATING: rating})


def test_grouped_cross_validation_scores_held_out_pairs():
    from devtools.train_bilingual import cross_validated_scores

    frame = _labelled()
    settings = RankerSettings(num_leaves=4, n_estimators=50, min_data_in_leaf=5)
    scores = cross_validated_scores(frame, ["f_cosine", "f_noise"], settings, folds=4)
    frame = frame.with_columns(pl.Series("cv", scores))
    table = judged.metric_table(frame, ["cv", "f_noise"], resamples=20)
    by = {(r["type"], r["scorer"]): r for r in table.iter_rows(named=True)}
    for pair_type in ("phrase", "pattern"):
        assert by[(pair_type, "cv")]["roc_auc"] > 0.9           # it learnt the cosine
        assert abs(by[(pair_type, "f_noise")]["roc_auc"] - 0.5) < 0.2
        assert by[(pair_type, "cv")]["pairs"] == 120


def test_cross_validation_never_trains_on_the_held_out_source(monkeypatch):
    from devtools import train_bilingual

    frame = _labelled(60)
    seen = []
    real_fit = train_bilingual._fit

    def spy(train, names, settings, summary=None):
        seen.append(set(train[S.SOURCE].to_list()))
        return real_fit(train, names, settings, summary)

    monkeypatch.setattr(train_bilingual, "_fit", spy)
    settings = RankerSettings(num_leaves=4, n_estimators=5, min_data_in_leaf=2)
    train_bilingual.cross_validated_scores(frame, ["f_cosine"], settings, folds=3)
    fold = judged.folds_by_source(frame[S.SOURCE].to_list(), 3, train_bilingual.SEED)
    assert len(seen) == 3                                  # one model per fold, each checked
    for k, sources in enumerate(seen):
        held_out = set(frame.filter(pl.Series(fold == k))[S.SOURCE].to_list())
        assert held_out and not sources & held_out


def _constant_model(value: float):
    frame = pl.DataFrame({"f_cosine": np.linspace(0, 1, 20)})
    return train_ranker(frame, np.full(20, value) + np.linspace(0, 0.01, 20), ["f_cosine"],
                        RankerSettings(n_estimators=5, min_data_in_leaf=2))


def test_typed_ranker_scores_each_type_with_its_model(tmp_path):
    ranker = TypedRanker({"phrase": _constant_model(4.0), OTHER: _constant_model(2.0)})
    frame = pl.DataFrame({S.TYPE: ["phrase", "pattern", None, "phrase"],
                          "f_cosine": [0.5, 0.5, 0.5, 0.5]})
    scores = ranker.predict(frame)
    assert scores[0] == pytest.approx(4.0, abs=0.05) and scores[3] == scores[0]
    assert scores[1] == pytest.approx(2.0, abs=0.05) and scores[2] == scores[1]
    loaded = load_model(ranker.save(tmp_path / "m.json"))
    assert isinstance(loaded, TypedRanker) and (loaded.predict(frame) == scores).all()
    # rows without a type column take the '*' model
    assert ranker.predict(frame.drop(S.TYPE))[0] == pytest.approx(2.0, abs=0.05)
    only_phrases = TypedRanker({"phrase": _constant_model(4.0)})
    with pytest.raises(BadInputError, match="no model"):
        only_phrases.predict(frame)


def _features_frame(types: list[str], drop: tuple[str, ...] = ()) -> pl.DataFrame:
    from cppdb.rank.by_type import shipped_ranker

    names = [f for f in shipped_ranker().features if f not in drop]
    return pl.DataFrame({S.TYPE: types, **{f: [0.5] * len(types) for f in names}})


@pytest.mark.parametrize("setting, types, drop, expected, why", [
    ("auto", ["phrase", "pattern"], (), "default", "bilingual run"),
    ("auto", ["sentence"], (), "weak", "sentence pairs"),
    ("auto", ["phrase", "sentence"], (), "weak", "sentence pairs"),
    # the shipped phrase model needs the cosine: without the encoder auto falls back to weak
    ("auto", ["phrase"], ("f_cosine",), "weak", "f_cosine"),
    # an explicit choice is never second-guessed
    ("weak", ["phrase"], (), "weak", "rank.model = weak"),
    ("default", ["sentence"], ("f_cosine",), "default", "rank.model = default"),
    ("my.json", ["phrase"], (), "my.json", "rank.model = my.json"),
])
def test_auto_model_follows_the_run_kind(setting, types, drop, expected, why):
    model, reason = resolve_model(setting, _features_frame(types, drop))
    assert model == expected and why in reason


def test_shipped_bilingual_model_exists_and_is_trained_on_judgements():
    from cppdb.rank.by_type import shipped_ranker

    shipped = shipped_ranker()
    assert {"phrase", "pattern", OTHER} <= set(shipped.models)
    training = shipped.models["phrase"].training
    assert training["matched"] >= 900 and "cv" in training
    # the CV table it was accepted on: the judged model beats p(t|s) alone on both types
    by = {(r["type"], r["scorer"]): r["roc_auc"] for r in training["cv"]}
    for kind in ("phrase", "pattern"):
        assert by[(kind, "cv_model")] > by[(kind, "f_p_t_given_s")]
    # it scores the chance of an acceptable rating (the Table-5 line), on the 1–5 scale
    assert shipped.models["phrase"].objective == "acceptable"
    assert shipped.models[OTHER].objective == "regression"


def test_bilingual_features_leave_out_the_run_fitted_language_model():
    from devtools.train_bilingual import bilingual_features

    names = bilingual_features()
    assert "f_lm_source" not in names
    assert {"f_p_t_given_s", "f_p_s_given_t", "f_lex_t_given_s", "f_lex_best", "f_cosine",
            "f_n_pivots", "f_count", "f_negation_flip"} <= set(names)
    assert load_config().section("rank")["model"] in ("auto", "default", "weak")
