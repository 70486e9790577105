"""Exclusion evidence (cppdb/rank/exclusion.py): antonyms through CC-CEDICT glosses, negation
and number flips; pairs with it are marked and ranked below every other pair of their type."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cppdb import schema as S
from cppdb.align.words.english import STOPWORDS
from cppdb.annotate.settings import AnnotateSettings
from cppdb.config import load_config, resolve
from cppdb.errors import BadInputError, ConfigError
from cppdb.rank import tiers
from cppdb.rank.exclusion import evidence_columns, evidence_text, exclusion_evidence
from cppdb.rank.pairs import read_tsv_pairs, text_pairs
from cppdb.rank.settings import RankRun
from cppdb.text.antonyms import antonym_table, packaged_antonym_pairs, parse_antonyms


def _evidence(pairs: list[tuple[str, str, str]], **kwargs) -> list[str | None]:
    frame = pl.DataFrame(pairs, schema=[S.SOURCE, S.TARGET, S.TYPE], orient="row")
    return exclusion_evidence(frame, **kwargs).to_list()


@pytest.mark.parametrize("source, target, kind, expected", [
    ("增加 [NP1]", "减少 [NP1]", "pattern", "antonym increase/decrease"),
    ("男孩", "女孩", "phrase", "antonym boy/girl"),
    ("你 弟弟", "你 的 哥哥", "phrase", "antonym younger/older"),
    ("[NP1] 买 了 [NP2]", "[NP1] 卖 了 [NP2]", "pattern", "antonym buy/sell"),
    ("这 不是 汤姆 的 伞", "这 是 汤姆 的 雨伞", "phrase", "negation"),
    ("帮 他", "无法 帮助 他", "phrase", "negation"),
    ("没少 钱", "钱", "phrase", "negation"),              # 没少: no dictionary word
    ("不是 [NP1] 的 会员", "是 这 [NP1] 的 成员", "pattern", "negation"),  # 会员/成员 "member"
    ("爱 的 人生", "没有 爱情 的 生活", "phrase", "negation"),  # 人生/生活 "life", 爱/爱情 "love"
    ("[NP1] 仍然 没有 [NP2]", "[NP1] 还有 [NP2]", "pattern", "negation"),  # "still"
    ("别哭", "哭", "phrase", "negation"),                  # 别 + a verb: "don't"
    ("别忘了", "忘记", "phrase", "negation"),
    ("活不下去", "活下去", "phrase", "negation"),          # a negated potential complement
    ("来得及", "来不及", "phrase", "negation"),
    ("对不起", "抱歉", "phrase", None),                    # 对不起 "sorry": no 对得起 there
    ("没 看见 什么", "看不见", "phrase", None),            # both negated
    ("三 名 [NP1]", "两 名 [NP1]", "pattern", "number"),
    ("叔叔", "舅", "phrase", "kin"),
    ("[NP1] 妹妹 酷爱 跳绳", "[NP1] 女儿 喜欢 跳绳", "pattern", "kin"),   # whatever else differs
    ("未婚夫", "未婚妻", "phrase", "kin"),                # partners count as kin
    ("前女友", "我 女朋友", "phrase", "kin"),
    ("你 对 我 说 了 谎", "他 对 我 撒谎", "phrase", "person"),   # beside a shared 我
    ("Hayk Baroyan", "Hayk Hovsepyan", "phrase", "name"),
    ("[NN1] 大臣 Priti Patel", "[NN1] 大臣 Grant Shapps", "pattern", "name"),
    ("工厂 [NN1] tuple", "工厂 [NN1] dict", "pattern", "name"),      # identifiers
    ("当 我 输入 py 时", "当 我 输入 pip 时", "phrase", "name"),
    # no evidence: synonyms, a side glossed by both halves, negation cancelling an antonym,
    # words that hold a negator but mean something else, generic kin terms, sentences
    ("大海", "海洋", "phrase", None),
    ("旧 城市", "老 城市", "phrase", None),                 # 旧 "old; opposite: new"
    ("不 喜欢 他", "讨厌 他", "phrase", None),
    ("非常 重要", "很 重要", "phrase", None),
    ("别国", "其他 国家", "phrase", None),
    ("别家", "家", "phrase", None),                        # 别 + a noun: "other"
    ("别人", "人", "phrase", None),                        # a dictionary word
    ("[NP1] 对 结果 不满", "[NP1] 对 结果 不 满意", "pattern", None),
    ("我 哥哥", "我 兄弟", "phrase", None),
    ("你 的 书", "您 的 书", "phrase", None),               # one person, two pronouns
    ("他 说", "她 说 了", "phrase", None),
    ("我 的 书", "我们 的 书", "phrase", None),
    ("更 难过", "更加 不 开心", "phrase", None),   # sad = not happy: they share only "feel"
    ("不 存在 [ADJP1] 选项", "没有 [ADJP1] 选项", "pattern", None),  # both negated
    ("父亲", "爸爸", "phrase", None),                     # one relation, two words
    ("男友", "男朋友", "phrase", None),
    ("Muhammad Ali", "Mohammad Ali", "phrase", None),     # one name spelt twice
    ("Mary 和 我", "Marie 和 我", "phrase", None),
    ("Obama", "Barack Obama", "phrase", None),            # nothing only the source has
    ("Smith", "Jones", "phrase", None),                   # no shared frame: not a name swap
    ("JSON", "json 文件", "phrase", None),                # the target's own words: no names
    ("Python 模块", "python 模块", "phrase", None),        # one word, two cases
    ("the 文件", "a 文件", "phrase", None),                # English stopwords only
    ("三千 人", "3000 人", "phrase", None),
    ("上个月 物价 上涨", "上 月 物价 上升", "phrase", None),   # 上 / 上个月: one text cut twice
    ("他 的 收入 增加 了 很多", "他 的 收入 减少 了 很多", "sentence", None),
    ("你 对 我 说 了 谎", "他 对 我 撒谎", "sentence", None),    # sentences: no person kind
    ("爱 的 人生", "没有 爱情 的 生活", "sentence", None),     # nor dictionary reading
])
def test_evidence_per_kind(source, target, kind, expected):
    assert _evidence([(source, target, kind)]) == [expected]


def test_evidence_kinds_can_be_switched_off():
    pairs = [("增加 [NP1]", "减少 [NP1]", "pattern"), ("是 他 的 书", "不是 他 的 书", "phrase")]
    assert _evidence(pairs, kinds=("negation",)) == [None, "negation"]
    assert _evidence(pairs, kinds=()) == [None, None]
    # the shared rest: 1 of 2 characters of 有钱's rest is shared — enough at 0.5, not at 0.75
    assert _evidence([("没有 钱", "有 人", "phrase")], negation_overlap=0.5) == ["negation"]
    assert _evidence([("没有 钱", "有 人", "phrase")], negation_overlap=0.75) == [None]


def test_the_evidence_text_is_the_first_kind_that_holds():
    frame = pl.DataFrame({S.SOURCE: ["男", "大海", "是 他 的 三 本 书"],
                          S.TARGET: ["女", "海洋", "不是 他 的 两 本 书"],
                          S.TYPE: ["phrase", "phrase", "phrase"]})
    found = evidence_columns(frame, 0.75)
    assert evidence_text(found).to_list() == ["antonym male/female", None, "negation"]
    assert evidence_text(found, ("number",)).to_list() == [None, None, "number"]


def test_negation_read_through_the_dictionary_is_not_the_classifiers_feature():
    """``x_negation`` also reads the target's own words as the source's dictionary synonyms;
    ``x_negation_rest`` (the relation classifier's r_negation_rest) keeps the text as written."""
    frame = pl.DataFrame({S.SOURCE: ["不是 [NP1] 的 会员", "不是 [NP1] 的 会员"],
                          S.TARGET: ["是 这 [NP1] 的 成员", "是 [NP1] 的 会员"],
                          S.TYPE: ["pattern", "pattern"]})
    found = evidence_columns(frame, 0.75)
    assert found["x_negation"].to_list() == [True, True]
    assert found["x_negation_rest"].to_list() == [False, True]


def test_the_antonym_list_is_read_both_ways_and_every_word_can_match():
    pairs = packaged_antonym_pairs()
    assert len(pairs) >= 100
    words = {w for pair in pairs for w in pair}
    assert not words & STOPWORDS          # the gloss-word rule drops stopwords: dead lines
    table = antonym_table((("rise", "fall"),))
    assert sorted(table.rows()) == [("fall", "rise"), ("rise", "fall")]
    with pytest.raises(BadInputError, match="line 2"):
        parse_antonyms("# comment\nrise\n")
    with pytest.raises(BadInputError):
        parse_antonyms("Rise fall\n")


def test_an_unknown_kind_of_evidence_fails_when_settings_resolve():
    with pytest.raises(ConfigError, match="rank.exclusion"):
        resolve(RankRun, load_config(overrides=['rank.exclusion=["antonym", "sarcasm"]']))
    with pytest.raises(ConfigError, match="exclusion_negation_overlap"):
        resolve(RankRun, load_config(overrides=["rank.exclusion_negation_overlap=0"]))


def test_demoted_pairs_rank_below_every_other_pair_and_tiers_stay_exact():
    frame = pl.DataFrame({S.TYPE: ["phrase"] * 5, S.SOURCE: list("abcde"),
                          S.TARGET: list("vwxyz"), tiers.SCORE: [5.0, 4.0, 3.0, 2.0, 1.0],
                          "_x": [True, False, False, False, False]})
    tier_list = tiers.tier_list({"S": 0.2, "M": 0.4, "L": 0.6, "XL": 1.0})
    ranked = tiers.add_ranks(frame, tier_list, last="_x")
    assert ranked[S.SOURCE].to_list() == ["b", "c", "d", "e", "a"]
    assert ranked.filter(pl.col(S.SOURCE) == "a")["tier"].item() == "XL"
    table = tiers.tier_table(ranked, tier_list)
    assert table["pairs"].to_list() == [1, 2, 3, 5]
    assert table["score_cutoff"].to_list() == [4.0, 3.0, 2.0, 1.0]   # every pair scores ≥ it


RELATIONS_BUT_EXCLUSION = {"Equivalence", "ForwardEntailment", "ReverseEntailment",
                           "OtherRelated", "Independent"}
ANTONYMS = [("增加", "减少"), ("减少", "增加"), ("男孩", "女孩"), ("女孩", "男孩"),
            ("买", "卖"), ("卖", "买"), ("上升", "下降"), ("下降", "上升")]


def test_a_hand_made_run_keeps_its_antonyms_out_of_the_first_tiers(tmp_path, data_dir):
    """Antonym pairs with the strongest pivot evidence of the run would rank first; they
    are marked Exclusion, fall below every other pair (no S or M), and every export says so."""
    from cppdb.export import read_pairs
    from cppdb.export_ranked import export_run
    from cppdb.rank.pipeline import read_ranked, rank_run

    labels = read_tsv_pairs(data_dir / "labels" / "paraphrase_labels.tsv", with_score=True)
    labels = labels.filter(~pl.col("source").str.contains(r"\["))
    sources = labels["source"].to_list() + [a for a, _ in ANTONYMS]
    targets = labels["target"].to_list() + [b for _, b in ANTONYMS]
    good = np.concatenate([(labels["label"] >= 4).to_numpy(), np.ones(len(ANTONYMS), bool)])
    frame = text_pairs(sources, targets, AnnotateSettings(zh_backend="jieba"))
    n, rng = frame.height, np.random.default_rng(0)
    strong = np.where(good, 0.6, rng.uniform(0, .1, n))
    frame = frame.with_columns(
        pl.col(S.SOURCE_TOKENS).list.join(" ").alias(S.SOURCE),
        pl.col(S.TARGET_TOKENS).list.join(" ").alias(S.TARGET),
        pl.lit("phrase").alias(S.TYPE), pl.lit("NP").alias(S.LHS),
        pl.Series(S.P_TGT_GIVEN_SRC, strong), pl.Series(S.P_SRC_GIVEN_TGT, strong),
        pl.Series(S.N_PIVOTS, np.where(good, 4, 1)).cast(pl.Int64),
        pl.Series(S.COUNT, np.where(good, 9, 1)).cast(pl.Int64),
        pl.lit("bilingual").alias(S.ORIGIN))
    (tmp_path / "run").mkdir()
    frame.write_parquet(tmp_path / "run" / "phrase_pairs.parquet")
    config = load_config(overrides=["features.embedding=false",
                                    'rank.demoted_relations=["Exclusion", "Independent"]'])
    rank_run(tmp_path / "run", config)
    ranked = read_ranked(tmp_path / "run")
    antonyms = ranked.join(pl.DataFrame(ANTONYMS, schema=[S.SOURCE, S.TARGET], orient="row"),
                           on=[S.SOURCE, S.TARGET], how="semi")
    assert antonyms.height == len(ANTONYMS)
    assert set(antonyms[S.RELATION]) == {"Exclusion"}
    assert antonyms[S.RELATION_EVIDENCE].str.starts_with("antonym ").all()
    assert not antonyms["tier"].is_in(["S", "M"]).any()
    others = ranked.filter(~pl.col(S.RELATION).is_in(["Exclusion", "Independent"]))
    assert antonyms["rank"].min() > others["rank"].max()
    independent = ranked.filter(pl.col(S.RELATION) == "Independent")
    assert independent["rank"].min() > others["rank"].max()
    assert not independent["tier"].is_in(["S", "M"]).any()
    # every other pair has the classifier's relation (never Exclusion) and its probability
    assert set(others[S.RELATION]) <= {"Equivalence", "ForwardEntailment", "ReverseEntailment",
                                       "OtherRelated", "Independent"}
    assert others[S.RELATION_PROBABILITY].is_between(0.2, 1.0).all()
    assert antonyms[S.RELATION_PROBABILITY].is_null().all()
    path, _ = export_run(tmp_path / "run", "XL", None, "jsonl", tmp_path / "all.jsonl", config)
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    marked = {(r["source"], r["target"]) for r in records if r["entailment"] == "Exclusion"}
    # the classifier's relation and its probability travel with every other pair
    others_out = [r for r in records if r["entailment"] != "Exclusion"]
    assert others_out and all(0.2 <= r["features"]["relation_probability"] <= 1.0
                              and r["entailment"] in RELATIONS_BUT_EXCLUSION for r in others_out)
    excluded = ranked.filter(pl.col(S.RELATION) == "Exclusion")
    assert marked == set(excluded.select(S.SOURCE, S.TARGET).rows()) >= set(ANTONYMS)
    path, _ = export_run(tmp_path / "run", "XL", None, "ppdb", tmp_path / "all.ppdb", config)
    assert (read_pairs(path)["entailment"] == "Exclusion").sum() == excluded.height
    hf, _ = export_run(tmp_path / "run", "XL", None, "hf", tmp_path / "hf", config)
    bands = pl.read_parquet(sorted(Path(hf).rglob("*.parquet")))
    assert set(bands[S.RELATION]) == set(ranked[S.RELATION])
    assert bands[S.RELATION_PROBABILITY].is_not_null().sum() == ranked.height - excluded.height
