"""Each pair feature on hand-computed pairs (SPEC §3, cppdb/features/table.py)."""
from __future__ import annotations

import math

import polars as pl
import pytest

from cppdb import schema as S
from cppdb.features.lm import CharNgramLM, MaskedLM
from cppdb.features.models import FeatureModels, build_feature_table
from cppdb.features.table import FEATURE_DESCRIPTIONS, lexical_feature_table


def pairs(*rows: dict) -> pl.DataFrame:
    """Pair rows: tokens given, text = tokens joined by spaces (as phrase tables store it)."""
    filled = []
    for row in rows:
        row = dict(row)
        row.setdefault(S.SOURCE, " ".join(row[S.SOURCE_TOKENS]))
        row.setdefault(S.TARGET, " ".join(row[S.TARGET_TOKENS]))
        filled.append(row)
    schema = {k: v for k, v in S.PAIR_COLUMNS.items()}
    return pl.DataFrame(filled, schema={k: schema[k] for k in filled[0]})


def features_of(**row) -> dict:
    return lexical_feature_table(pairs(row), threads=1).row(0, named=True)


HIGH_SPEED_RAIL = dict(source_tokens=["北京", "到", "上海", "的", "高铁"],
                       target_tokens=["北京", "到", "上海", "高铁"])


@pytest.mark.parametrize("name, expected", [
    # s = 北京到上海的高铁 (8 chars), t = 北京到上海高铁 (7 chars)
    ("f_jaccard_distance", 1 - 4 / 5),        # word sets: 4 shared of 5
    ("f_edit_distance", 1.0),                 # delete 的
    ("f_normalised_edit_distance", 1 / 8),
    ("f_hamming_distance", 3.0),              # 的/高, 高/铁, 铁/(pad)
    ("f_source_in_target", 0),
    ("f_target_in_source", 0),
    ("f_source_words", 5),
    ("f_target_words", 4),
    ("f_shared_words", 4),
    ("f_numbers_identical", 1),               # no numbers on either side
    ("f_char_difference", -1),
    ("f_char_ratio", 7 / 8),
    ("f_char_log_ratio", math.log(7 / 8)),
    ("f_char_jaccard", 7 / 8),
    ("f_bigram_jaccard", 5 / 8),              # 北京 京到 到上 上海 高铁 shared; 8 in union
    ("f_lcs_ratio", 1 - 1 / 15),              # Indel distance 1 over 8 + 7 characters
    ("f_only_nonterminals", 0),
    ("f_source_adjacent_terminals", 1),
    ("f_same_nonterminal_order", None),       # no slots
    ("f_source_unaligned", None),             # no alignment given: missing, not zero
    ("f_p_t_given_s", None),
])
def test_surface_features_of_the_high_speed_rail_pair(name, expected):
    value = features_of(**HIGH_SPEED_RAIL)[name]
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected)


def test_containment_both_ways():
    row = features_of(source_tokens=["车祸"], target_tokens=["一", "场", "车祸"])
    assert (row["f_source_in_target"], row["f_target_in_source"]) == (1, 0)
    row = features_of(source_tokens=["一", "场", "车祸"], target_tokens=["车祸"])
    assert (row["f_source_in_target"], row["f_target_in_source"]) == (0, 1)


@pytest.mark.parametrize("source, target, identical", [
    (["有", "3", "个", "人"], ["有", "3", "个", "游客"], 1),
    (["有", "3", "个", "人"], ["有", "4", "个", "人"], 0),
    (["３", "个"], ["3", "个"], 1),                     # full width = half width (NFKC)
    (["三", "个", "人"], ["两", "个", "人"], 0),
    (["2", "和", "5"], ["5", "和", "2"], 1),            # a multiset: order does not matter
    # the article 一 and words containing 一 are not numbers (cppdb.features.numbers)
    (["一", "个", "男人", "在", "弹", "吉他"], ["一", "个", "女人", "在", "弹", "吉他"], 1),
    (["一", "个", "男人"], ["男人"], 1),                  # 一 vs nothing
    (["一", "个", "男人"], ["两", "个", "男人"], 0),       # ∅ vs {2}
    (["他们", "一起", "走"], ["他们", "一直", "走"], 1),
    (["统一", "标准"], ["唯一", "标准"], 1),
    (["一些", "人"], ["三", "个", "人"], 0),              # ∅ vs {3}
    # values, not strings
    (["三", "个", "人"], ["3", "个", "人"], 1),
    (["十一", "个", "人"], ["11", "个", "人"], 1),
    (["三万五千", "人"], ["3.5万", "人"], 1),             # 35000 both
    (["3.50", "元"], ["3.5", "元"], 1),
    (["二〇二三", "年"], ["2023", "年"], 1),
    (["一百五"], ["150"], 1),                            # short form 一百五 = 150
    (["百分之五"], ["5%"], 1),
    (["十分之一"], ["1/10"], 1),
    (["十分之一"], ["十", "分"], 0),                      # 1/10 vs {10}
    # ordinals keep their mark; 十分 "very" is no number, 三十分钟 is 30
    (["第一", "名"], ["第1", "名"], 1),
    (["第一", "名"], ["第二", "名"], 0),
    (["第三"], ["三"], 0),                               # 第3 vs 3
    (["十分", "开心"], ["非常", "开心"], 1),
    (["三十", "分钟"], ["半", "小时"], 0),                 # {30} vs ∅
    (["吃", "三明治"], ["吃", "面包"], 1),
    (["3", "千克"], ["3", "公斤"], 1),                    # 千 of 千克 after digits is a unit
    (["1", "个", "人"], ["一", "个", "人"], 0),            # documented: 1 counts, article 一 not
])
def test_numbers_identical(source, target, identical):
    assert features_of(source_tokens=source, target_tokens=target)["f_numbers_identical"] \
        == identical


@pytest.mark.parametrize("text, values", [
    ("一个男人在弹吉他", []),
    ("两只猫和一只狗", ["2"]),
    ("第一名有3.5万人", ["35000", "第1"]),
    ("他们一起吃三明治，十分开心", []),
    ("三十分钟后", ["30"]),
    ("一亿两千万", ["120000000"]),
    ("三万一", ["31000"]),
    ("三万零一", ["30001"]),
    ("一百零五", ["105"]),
    ("万一下雨，一一通知", []),
    ("十分之一", ["1/10"]),
    ("成千上万的人", []),                       # an idiom of "many", not a count
    ("数以千计的游客来自四面八方", []),
])
def test_number_values(text, values):
    from cppdb.features.numbers import number_candidates, number_values

    frame = pl.DataFrame({"chars": [text]}).with_columns(number_candidates("chars").alias("n"))
    assert frame.select(number_values(frame, "n"))["n"][0].to_list() == values


@pytest.mark.parametrize("source, target, flip", [
    # tokens and tags as jieba gives them; 不是 is one negation word, 不是不想 two (no negation)
    ((["他", "是", "医生"], ["PN", "VC", "NN"]), (["他", "不是", "医生"], ["PN", "VC", "NN"]), 1),
    ((["我", "没有", "钱"], ["PN", "VE", "NN"]), (["我", "有钱"], ["PN", "VE"]), 1),
    ((["他", "不", "来"], ["PN", "AD", "VV"]), (["他", "不会", "来"], ["PN", "VV", "VV"]), 0),
    ((["我", "不想", "去"], ["PN", "VV", "VV"]), (["我", "不想", "去", "了"], ["PN", "VV", "VV", "AS"]), 0),
    ((["我", "不是", "不想", "去"], ["PN", "VC", "VV", "VV"]), (["我", "想", "去"], ["PN", "VV", "VV"]), 0),
    ((["他", "非常", "喜欢"], ["PN", "AD", "VV"]), (["他", "常", "喜欢"], ["PN", "AD", "VV"]), 0),
    # a negation in a different sentence is not a flip
    ((["我", "不", "喜欢", "猫"], ["PN", "AD", "VV", "NN"]), (["我", "喜欢", "狗"], ["PN", "VV", "NN"]), 0),
])
def test_negation_flip(source, target, flip):
    row = features_of(source_tokens=source[0], source_pos=source[1],
                      target_tokens=target[0], target_pos=target[1])
    assert row["f_negation_flip"] == flip


@pytest.mark.parametrize("source, target, swap", [
    ((["张三", "打败", "了", "李四"], ["NR", "VV", "AS", "NR"]),
     (["李四", "打败", "了", "张三"], ["NR", "VV", "AS", "NR"]), 1),
    ((["他", "怕", "狗"], ["PN", "VV", "NN"]), (["狗", "怕", "他"], ["NN", "VV", "PN"]), 1),
    # multi-word spans: 那个老头 ⇄ 我们
    ((["那", "个", "老头", "给", "我们", "讲", "了", "故事"],
      ["DT", "M", "NN", "P", "PN", "VV", "AS", "NN"]),
     (["我们", "给", "那", "个", "老头", "讲", "了", "故事"],
      ["PN", "P", "DT", "M", "NN", "VV", "AS", "NN"]), 1),
    ((["[NP1]", "击败", "了", "[NP2]"], ["", "", "", ""]),
     (["[NP2]", "击败", "了", "[NP1]"], ["", "", "", ""]), 1),
    # a time word or a prepositional phrase moved: a paraphrase, not a swap
    ((["我", "昨天", "去", "了", "北京"], ["PN", "NT", "VV", "AS", "NR"]),
     (["昨天", "我", "去", "了", "北京"], ["NT", "PN", "VV", "AS", "NR"]), 0),
    ((["在", "北京", "我", "见", "了", "他"], ["P", "NR", "PN", "VV", "AS", "PN"]),
     (["我", "在", "北京", "见", "了", "他"], ["PN", "P", "NR", "VV", "AS", "PN"]), 0),
    # other words, not a reordering
    ((["张三", "打败", "了", "李四"], ["NR", "VV", "AS", "NR"]),
     (["李四", "输给", "了", "张三"], ["NR", "VV", "AS", "NR"]), 0),
])
def test_argument_swap(source, target, swap):
    row = features_of(source_tokens=source[0], source_pos=source[1],
                      target_tokens=target[0], target_pos=target[1])
    assert row["f_argument_swap"] == swap


def test_pattern_features():
    row = features_of(source_tokens=["[NP1]", "出生", "于", "[NP2]"],
                      target_tokens=["[NP2]", "是", "[NP1]", "的", "出生地"])
    assert row["f_same_nonterminal_order"] == 0          # NP1 NP2 vs NP2 NP1
    assert row["f_only_nonterminals"] == 0
    assert row["f_source_adjacent_terminals"] == 1       # 出生 于
    assert row["f_target_adjacent_terminals"] == 1       # 的 出生地
    row = features_of(source_tokens=["[NP1]", "[NP2]"], target_tokens=["[NP1]", "和", "[NP2]"])
    assert row["f_only_nonterminals"] == 1
    assert row["f_same_nonterminal_order"] == 1
    assert row["f_source_adjacent_terminals"] == 0
    assert row["f_target_adjacent_terminals"] == 0
    # a slot counts as its index plus one character, not as five letters
    assert row["f_char_difference"] == 1


def test_alignment_features():
    row = features_of(source_tokens=["死", "于", "车祸"], target_tokens=["在", "车祸", "中", "丧生"],
                      align_src=[0, 2], align_tgt=[3, 1])
    assert row["f_alignments"] == 2
    assert row["f_source_unaligned"] == 1 and row["f_source_has_unaligned"] == 1   # 于
    assert row["f_target_unaligned"] == 2 and row["f_target_has_unaligned"] == 1   # 在, 中
    row = features_of(source_tokens=["去世"], target_tokens=["逝世"], align_src=[0], align_tgt=[0])
    assert row["f_source_has_unaligned"] == 0 and row["f_target_has_unaligned"] == 0


def test_pos_features_and_pivot_probabilities():
    row = features_of(source_tokens=["张三", "去世"], target_tokens=["他", "逝世"],
                      source_pos=["NR", "VV"], target_pos=["PN", "VV"],
                      p_t_given_s=0.25, p_s_given_t=0.5)
    assert row["f_pos_identical"] == 0
    assert row["f_pos_first_letters_identical"] == 0     # N V vs P V
    assert row["f_first_pos_identical"] == 0
    assert (row["f_p_t_given_s"], row["f_p_s_given_t"]) == (0.25, 0.5)
    row = features_of(source_tokens=["老人"], target_tokens=["老头"],
                      source_pos=["NN"], target_pos=["NN"])
    assert (row["f_pos_identical"], row["f_pos_first_letters_identical"],
            row["f_first_pos_identical"]) == (1, 1, 1)
    row = features_of(source_tokens=["北京", "人"], target_tokens=["京城", "人"],
                      source_pos=["NR", "NN"], target_pos=["NN", "NN"])
    assert row["f_pos_first_letters_identical"] == 1 and row["f_pos_identical"] == 0


def test_every_lexical_feature_is_computed_for_a_batch():
    frame = lexical_feature_table(pairs(HIGH_SPEED_RAIL, dict(source_tokens=["去世"],
                                                              target_tokens=["逝世"])), threads=1)
    model_features = {"f_lm_source", "f_lm_target", "f_lm_difference", "f_cosine"}
    assert set(FEATURE_DESCRIPTIONS) - model_features <= set(frame.columns)
    assert frame.height == 2


def test_char_ngram_lm_by_hand():
    # unigram model over "ab" + end symbol: each of a, b, </s> seen once; add-one over
    # 3 seen symbols + 1 unknown slot: p = 2/7 for a seen symbol, 1/7 for an unseen one
    lm = CharNgramLM(order=1).fit(["ab"])
    assert lm.score(["ab"])[0] == pytest.approx(math.log(2 / 7))
    assert lm.score(["z"])[0] == pytest.approx((math.log(1 / 7) + math.log(2 / 7)) / 2)
    # bigram, Witten-Bell: p(a|<s>) = (1 + 1·2/7) / (1 + 1) = 9/14, likewise p(b|a), p(</s>|b)
    lm2 = CharNgramLM(order=2).fit(["ab"])
    assert lm2.score(["ab"])[0] == pytest.approx(math.log(9 / 14))
    assert lm2.score(["ba"])[0] < lm2.score(["ab"])[0]


def test_char_ngram_lm_prefers_typical_text():
    corpus = ["他在车祸中丧生", "他死于一场车祸", "那位老人在院子里种了一棵树"] * 3
    lm = CharNgramLM(order=3).fit(corpus)
    good, garbled = lm.score(["他在车祸中丧生", "生丧中祸车在他"])
    assert good > garbled


def test_unfitted_lm_is_an_error():
    from cppdb.errors import BadInputError

    with pytest.raises(BadInputError, match="not trained"):
        CharNgramLM().score(["x"])


@pytest.mark.parametrize("order, corpus, probes", [
    (1, ["ab"], ["ab", "z", ""]),
    (3, ["他在车祸中丧生", "他死于一场车祸", "那位老人在院子里种了一棵树"],
     ["他在车祸中丧生", "生丧中祸车在他", "一棵树", "未见过的字"]),
    # a history seen only before the end symbol, and texts shorter than the order
    (4, ["甲", "甲乙", "乙甲乙"], ["甲乙", "乙", "丙丙丙丙"]),
])
def test_a_restored_char_ngram_lm_scores_exactly_like_the_fitted_one(tmp_path, order, corpus,
                                                                      probes):
    """What workers of another process load (the rank features on an engine)."""
    fitted = CharNgramLM(order=order).fit(corpus)
    assert fitted.save(tmp_path / "lm.parquet")
    restored = CharNgramLM(order=order).restore(tmp_path / "lm.parquet")
    assert restored.score(probes).tolist() == fitted.score(probes).tolist()
    assert restored.signature() == fitted.signature()


def test_a_restored_lm_must_have_the_configured_order(tmp_path):
    from cppdb.errors import BadInputError

    CharNgramLM(order=2).fit(["ab"]).save(tmp_path / "lm.parquet")
    with pytest.raises(BadInputError, match="order 2, not 3"):
        CharNgramLM(order=3).restore(tmp_path / "lm.parquet")
    with pytest.raises(BadInputError, match="not trained"):
        CharNgramLM(order=2).save(tmp_path / "unfitted.parquet")


def test_masked_lm_needs_a_model_directory(tmp_path):
    from cppdb.errors import ModelNotFoundError

    with pytest.raises(ModelNotFoundError, match="lm_model_path"):
        MaskedLM(model_path=tmp_path / "missing").check()


@pytest.mark.neural
def test_masked_lm_pseudo_log_likelihood(tiny_bert_dir):
    lm = MaskedLM(model_path=tiny_bert_dir, batch_size=8)
    lm.check()
    scores = lm.score(["北京到上海", "车祸", ""])
    assert scores.shape == (3,)
    assert all(math.isfinite(v) for v in scores)
    assert scores[0] < 0 and scores[2] == 0.0       # empty text: no token, score 0


@pytest.mark.neural
def test_model_features_with_local_encoder(tiny_sentence_transformer_dir):
    from cppdb.registry import load_backend

    encoder = load_backend("sentence_encoder", "sentence-transformers",
                           model_path=tiny_sentence_transformer_dir)
    frame = pairs(dict(source_tokens=["去世"], target_tokens=["去世"]),
                  dict(source_tokens=["老人"], target_tokens=["汽车", "站"]))
    out = build_feature_table(frame, FeatureModels(CharNgramLM(order=2), encoder), threads=1)
    assert out["f_cosine"][0] == pytest.approx(1.0, abs=1e-5)
    assert -1.0 <= out["f_cosine"][1] < 1.0
    assert out["f_lm_difference"][0] == pytest.approx(0.0)
    assert out["f_lm_difference"][1] == pytest.approx(out["f_lm_target"][1] - out["f_lm_source"][1])


@pytest.mark.parametrize("source, target, source_norm, target_norm, edit", [
    # a transliteration variant is no edit once both sides carry the canonical name
    ("哈利走进了房间", "哈里走进了房间", "哈利走进了房间", "哈利走进了房间", 0.0),
    # without normalised columns (bilingual runs) the raw text counts
    ("哈利走进了房间", "哈里走进了房间", None, None, 1.0),
    # a null normalised form falls back to the text of that side
    ("哈利走进了房间", "哈里走了", "哈利走进了房间", None, 4.0),
])
def test_string_features_read_entity_normalised_text(source, target, source_norm, target_norm,
                                                     edit):
    frame = pl.DataFrame({S.SOURCE: [source], S.TARGET: [target],
                          S.SOURCE_TOKENS: [list(source)], S.TARGET_TOKENS: [list(target)]})
    if source_norm is not None or target_norm is not None:
        frame = frame.with_columns(pl.Series(S.SOURCE_NORM, [source_norm], dtype=pl.String),
                                   pl.Series(S.TARGET_NORM, [target_norm], dtype=pl.String))
    row = lexical_feature_table(frame).row(0, named=True)
    assert row["f_edit_distance"] == edit
