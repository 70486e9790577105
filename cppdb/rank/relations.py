"""PPDB 2.0's six relations for phrase and pattern pairs, learned from blind judgements.

PPDB 2.0 gives every pair one of Equivalence, ForwardEntailment (the source is more
specific), ReverseEntailment, Exclusion (antonyms, negation, different numbers or persons,
sister categories), OtherRelated and Independent, from a classifier trained on human labels.
This module is that classifier — a LightGBM multiclass model over the ranker's ``f_*``
features plus ``r_*`` features of the surface that the ranker lacks; its measurement
(grouped cross-validation, leave-one-domain-out) is :mod:`cppdb.rank.relation_cv`.

The shipped model (``resources/relation_model.json``, :class:`RelationModel`, trained by
``devtools/train_relations.py`` on data/labels/relation_judgements.tsv) labels every ranked
phrase and pattern pair (:func:`decide`): ``Exclusion`` where the ranker's rule found
evidence (:mod:`cppdb.rank.exclusion`; precision 1.0 on the judgements, where the
classifier's own Exclusion is right 3 times in 10), else the most probable of the other five
relations, with its probability.  The language-model features are left out (a char n-gram
LM is fitted on each run's own text, so its scale moves from run to run).

The ``r_*`` features come from the two sides' text alone (slots left out):

* negation: how many words of the negation list (``cppdb.text.negation``: 不 没有 未 无 非
  不能 …) each side has, and whether exactly one side has any (不能 / 能; word-level, so
  无论 'no matter' is no negation);
* antonym characters: after the characters both sides share are removed, a character left
  on one side and one left on the other form a pair of a small table of opposite characters
  (增加 / 减少, 男孩 / 女孩, 上面 / 下面) — Chinese builds antonyms from such characters, so
  the table reaches words it does not list;
* person flips: personal pronouns left on both sides (我的 / 你的); number flips are the
  ranker's ``f_numbers_identical``, which reads values (六月 / 6月 is no flip);
* the Exclusion evidence of :mod:`cppdb.rank.exclusion` (the rule the ranker applies):
  ``r_gloss_antonym`` (CC-CEDICT glosses hold an English antonym pair), ``r_negation_rest``
  (one side negated over a shared rest), ``r_number_change`` (each side names a number the
  other does not);
* Cilin (:mod:`cppdb.text.cilin`): over the words one side has and the other lacks, how deep
  a source-only and a target-only word meet in HIT's thesaurus — ``r_cilin_max`` the deepest
  pair, ``r_cilin_min`` the shallowest (6: one synonym atom, 大海 / 海洋; 3: one minor class,
  sister terms such as 姑姑 / 阿姨; null: no such pair in Cilin) — and ``r_diff_words``, how
  many words differ;
* scripts (:func:`_translation_features`): ``r_script_switch`` where one side's own words are
  Latin and the other's Chinese (集合 / set, 佩洛西 / Pelosi: technical text and news keep
  English terms and names), and ``r_gloss_translation``, the share of those Latin words that
  CC-CEDICT gives as glosses of the Chinese ones;
* character containment, signed: +1 when the target's characters all occur in the longer
  source (男孩 → 孩子, the source more specific), −1 the other way, 0 otherwise; and the
  characters left on each side.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.align.words.english import STOPWORDS
from cppdb.errors import BadInputError
from cppdb.features.glosses import gloss_table
from cppdb.io import write_json_atomic
from cppdb.rank import exclusion
from cppdb.rank.exclusion import LATIN_WORD, own_words
from cppdb.rank.ranker import read_model_json
from cppdb.shipped import shipped_file
from cppdb.text.cilin import CODE, WORD, cilin_codes, shared_level
from cppdb.text.function_words import ZH_PRONOUN_PERSON
from cppdb.text.negation import packaged_negation_words

RELATIONS = ("Equivalence", "ForwardEntailment", "ReverseEntailment", "Exclusion",
             "OtherRelated", "Independent")
RELATION = "relation"
#: opposite characters; Chinese antonyms are mostly built from such pairs (增加/减少, 上升/下降)
ANTONYM_CHARACTERS = (
    "大小 多少 上下 男女 增减 加减 高低 长短 前后 左右 来去 买卖 开关 早晚 新旧 好坏 快慢 "
    "冷热 真假 胜败 胜负 成败 进出 东西 南北 轻重 远近 黑白 生死 有无 是非 始终 内外 父母 "
    "兄弟 姐妹 夫妻 昨今 今明 升降 爱恨 喜悲 哭笑 老少 老幼 深浅 宽窄 厚薄 粗细 明暗 对错 "
    "正反 正负 阴阳 美丑 贵贱 贫富 穷富 强弱 软硬 甜苦 干湿 动静 收发 得失 输赢 借还 问答 "
    "攻守 收支 入出 朝暮 首尾 头尾 先后 晴雨 醒睡 存取 褒贬 赞骂 亲疏 敌友 主客 师生 "
    "里外 公私 雌雄 阴晴 开合 起落 盈亏 涨跌 涨落 推拉 供求 增删").split()
#: the one-character personal pronouns (我 你 您 他 她 它 咱)
PERSONS = "".join(w for w in ZH_PRONOUN_PERSON if len(w) == 1)
#: a slot inside a side's text ([NP1], [VP2]); S.SLOT_TOKEN_PATTERN is anchored to one token
_SLOT = r"\[[A-Z$]+\d*\]"
MODEL_FORMAT = "cppdb-relations/1"
MODEL_FILE = "relation_model.json"
RELATION_PROBABILITY = S.RELATION_PROBABILITY
#: the pair types the model was trained on and labels
LABELLED_TYPES = ("phrase", "pattern")
R_FEATURES = ("r_pattern", "r_neg_source", "r_neg_target", "r_neg_flip", "r_antonym",
              "r_person_flip", "r_char_containment", "r_source_only_chars", "r_target_only_chars",
              "r_gloss_antonym", "r_negation_rest", "r_number_change", "r_cilin_max",
              "r_cilin_min", "r_diff_words", "r_script_switch", "r_gloss_translation")


def _characters(column: str) -> pl.Expr:
    """The side's characters outside slots, as a list (repeats kept)."""
    text = pl.col(column).str.replace_all(_SLOT, "").str.replace_all(r"\s+", "")
    return text.str.split("")


def _count_of(chars: pl.Expr, alphabet: str) -> pl.Expr:
    return chars.list.eval(pl.element().is_in(list(alphabet))).list.sum()


def _antonym_characters(base: pl.DataFrame) -> pl.Series:
    """Per row: a character only the source has and one only the target has form a pair of
    ANTONYM_CHARACTERS (either way round); joins, not one test per pair and row."""
    pairs = [tuple(p) for p in ANTONYM_CHARACTERS]
    table = pl.DataFrame({"_a": [a for a, b in pairs] + [b for a, b in pairs],
                          "_b": [b for a, b in pairs] + [a for a, b in pairs]})
    alphabet = sorted(set(table["_a"]))
    rows = base.select(pl.int_range(pl.len()).alias("_row"), "_os", "_ot")
    own = [rows.select("_row", pl.col(side).alias(name)).explode(name)
           .filter(pl.col(name).is_in(alphabet)) for side, name in (("_os", "_a"), ("_ot", "_b"))]
    hits = own[0].join(table, on="_a").join(own[1], on=["_row", "_b"], how="semi")["_row"]
    return rows.select(pl.col("_row").is_in(hits.implode()))["_row"]


def _own_words(frame: pl.DataFrame) -> pl.DataFrame:
    """``_row``, ``_a`` (the source's words the target lacks) and ``_b`` (the reverse)."""
    own_s, own_t = own_words()
    return frame.select(pl.int_range(pl.len()).alias("_row"), own_s.alias("_a"),
                        own_t.alias("_b"))


def _cilin_features(words: pl.DataFrame) -> pl.DataFrame:
    """``r_cilin_max``, ``r_cilin_min`` and ``r_diff_words`` per row of the own-words table
    ``words`` (:func:`_own_words`; module docstring), in row order."""
    codes = cilin_codes()
    sides = [words.select("_row", side).explode(side)
             .join(codes, left_on=side, right_on=WORD).rename({CODE: f"_c{side}"})
             for side in ("_a", "_b")]
    met = (sides[0].join(sides[1], on="_row")
           .with_columns(shared_level("_c_a", "_c_b").alias("_level"))
           .group_by("_row", "_a", "_b").agg(pl.col("_level").max())
           .group_by("_row").agg(pl.col("_level").max().alias("r_cilin_max"),
                                 pl.col("_level").min().alias("r_cilin_min")))
    counted = words.select("_row", (pl.col("_a").list.len() + pl.col("_b").list.len())
                           .cast(pl.Int32).alias("r_diff_words"))
    return (counted.join(met, on="_row", how="left").sort("_row")
            .select("r_cilin_max", "r_cilin_min", "r_diff_words"))


def _translation_features(own: pl.DataFrame) -> pl.DataFrame:
    """``r_script_switch`` and ``r_gloss_translation`` per row of the own-words table ``own``
    (:func:`_own_words`), in row order.

    Chinese technical text and news keep English terms and names as they are, so a pivot
    pairs 集合 with ``set`` and 佩洛西 with ``Pelosi``: the same thing in two scripts.  The
    switch is 1 where the words one side has and the other lacks are all Latin and the other
    side's own words all Chinese; the translation share is how many of those Latin words
    (less English stopwords) occur in the CC-CEDICT glosses of the Chinese words — one by
    one or joined (源 代码 → 源代码 "source code") — null where there is no switch."""
    def all_match(column: str, pattern: str) -> pl.Expr:
        return (pl.col(column).list.len() > 0) & pl.col(column).list.eval(
            pl.element().str.contains(pattern)).list.all()

    han = r"\p{Han}"
    own = own.with_columns(
        pl.when(all_match("_a", LATIN_WORD) & all_match("_b", han)).then(pl.lit("a"))
        .when(all_match("_b", LATIN_WORD) & all_match("_a", han)).then(pl.lit("b"))
        .alias("_latin"))
    switched = own.filter(pl.col("_latin").is_not_null()).select(
        "_row", pl.when(pl.col("_latin") == "a").then("_a").otherwise("_b").alias("_en"),
        pl.when(pl.col("_latin") == "a").then("_b").otherwise("_a").alias("_zh"))
    english_words = (switched.select("_row", "_en").explode("_en")
                     .with_columns(pl.col("_en").str.to_lowercase())
                     .filter(~pl.col("_en").is_in(sorted(STOPWORDS))).unique())
    chinese = pl.concat([switched.select("_row", "_zh").explode("_zh"),
                         switched.select("_row", pl.col("_zh").list.join(""))])
    glossed = (chinese.join(gloss_table(), left_on="_zh", right_on="headword")
               .explode("gloss").select("_row", pl.col("gloss").alias("_en")).unique())
    share = (english_words.join(glossed.with_columns(pl.lit(1).alias("_hit")),
                                on=["_row", "_en"], how="left")
             .group_by("_row").agg(pl.col("_hit").fill_null(0).mean()
                                   .alias("r_gloss_translation")))
    return (own.select("_row", pl.col("_latin").is_not_null().cast(pl.Int8)
                       .alias("r_script_switch"))
            .join(share, on="_row", how="left").sort("_row")
            .select("r_script_switch", "r_gloss_translation"))


#: the negation rest overlap of the ``r_negation_rest`` feature the shipped model learnt
FEATURE_NEGATION_OVERLAP = 0.75


def relation_features(frame: pl.DataFrame, negation_overlap: float = FEATURE_NEGATION_OVERLAP,
                      evidence: pl.DataFrame | None = None) -> pl.DataFrame:
    """``frame`` (with ``source``, ``target``) plus every ``r_*`` feature (module docstring);
    ``evidence``: the rows' :func:`exclusion.evidence_columns` at ``negation_overlap`` when
    the caller has them already."""
    base = frame.with_columns(_characters(S.SOURCE).alias("_cs"),
                              _characters(S.TARGET).alias("_ct"))
    base = base.with_columns(pl.col("_cs").list.set_difference("_ct").alias("_os"),
                             pl.col("_ct").list.set_difference("_cs").alias("_ot"))
    antonym = _antonym_characters(base)
    negation = sorted(packaged_negation_words())
    neg_s, neg_t = (pl.col(side).str.split(" ").list.eval(pl.element().is_in(negation))
                    .list.sum() for side in (S.SOURCE, S.TARGET))
    left_s, left_t = pl.col("_os").list.len(), pl.col("_ot").list.len()
    containment = (pl.when((left_t == 0) & (left_s > 0)).then(1)
                   .when((left_s == 0) & (left_t > 0)).then(-1).otherwise(0))
    person = (_count_of(pl.col("_os"), PERSONS) > 0) & (_count_of(pl.col("_ot"), PERSONS) > 0)
    if evidence is None:
        evidence = exclusion.evidence_columns(frame, negation_overlap)
    own = _own_words(frame)
    return base.with_columns(
        (pl.col(S.TYPE) == "pattern").cast(pl.Int8).alias("r_pattern") if S.TYPE in
        frame.columns else pl.lit(0, dtype=pl.Int8).alias("r_pattern"),
        evidence["x_antonym"].is_not_null().cast(pl.Int8).alias("r_gloss_antonym"),
        evidence["x_negation_rest"].cast(pl.Int8).alias("r_negation_rest"),
        evidence["x_number"].cast(pl.Int8).alias("r_number_change"),
        neg_s.cast(pl.Int32).alias("r_neg_source"), neg_t.cast(pl.Int32).alias("r_neg_target"),
        ((neg_s > 0) != (neg_t > 0)).cast(pl.Int8).alias("r_neg_flip"),
        antonym.cast(pl.Int8).alias("r_antonym"),
        person.cast(pl.Int8).alias("r_person_flip"),
        containment.cast(pl.Int8).alias("r_char_containment"),
        left_s.cast(pl.Int32).alias("r_source_only_chars"),
        left_t.cast(pl.Int32).alias("r_target_only_chars"),
    ).drop("_cs", "_ct", "_os", "_ot").hstack(_cilin_features(own)) \
        .hstack(_translation_features(own))


def model_columns(frame: pl.DataFrame, without: tuple[str, ...] = ()) -> list[str]:
    """The numeric ``f_*`` and ``r_*`` columns of ``frame`` that the model reads, sorted
    (less ``without``)."""
    return sorted(c for c, dtype in frame.schema.items()
                  if c.startswith(("f_", "r_")) and c not in without
                  and (dtype.is_numeric() or dtype == pl.Boolean))


def _matrix(frame: pl.DataFrame, columns: list[str]) -> np.ndarray:
    return frame.select(pl.col(c).cast(pl.Float64) for c in columns).to_numpy()


def train(frame: pl.DataFrame, columns: list[str], seed: int = 46):
    """A LightGBM multiclass model of ``relation`` (labels as indices of RELATIONS).

    Small trees and balanced class weights: a few thousand judgements, and the rare classes
    (Exclusion) are the ones the issue asks recall of."""
    import lightgbm as lgb

    labels = frame[RELATION].replace_strict(list(RELATIONS), list(range(len(RELATIONS))))
    model = lgb.LGBMClassifier(objective="multiclass", num_class=len(RELATIONS),
                               n_estimators=200, learning_rate=0.05, num_leaves=15,
                               min_child_samples=10, subsample=0.8, subsample_freq=1,
                               colsample_bytree=0.8, class_weight="balanced",
                               random_state=seed, deterministic=True, n_jobs=1, verbose=-1)
    model.fit(_matrix(frame, columns), labels.to_numpy())
    return model


def predict(model, frame: pl.DataFrame, columns: list[str]) -> np.ndarray:
    """Probabilities per row, one column per relation of RELATIONS (absent classes: 0)."""
    raw = model.predict_proba(_matrix(frame, columns))
    full = np.zeros((frame.height, len(RELATIONS)))
    full[:, model.classes_.astype(int)] = raw
    return full


EQUIVALENCE = "Equivalence"


def decide(probabilities: np.ndarray, rule_exclusion: np.ndarray,
           equivalence_threshold: float = 0.0) -> tuple[list[str], np.ndarray]:
    """The relation the product gives each row and its probability: ``Exclusion`` (NaN
    probability) where the rule found evidence, else the most probable of the other five
    relations with its probability renormalised over those five — Equivalence only when
    that probability reaches ``equivalence_threshold`` (below it, the next most probable:
    a synonym label a user can trust, at the cost of its recall)."""
    others = probabilities.copy()
    others[:, RELATIONS.index(exclusion.EXCLUSION)] = 0.0
    total = others.sum(axis=1, keepdims=True)
    others = np.divide(others, total, out=np.zeros_like(others), where=total > 0)
    rows = np.arange(len(others))
    best = others.argmax(axis=1)
    equivalence = RELATIONS.index(EQUIVALENCE)
    unsure = (best == equivalence) & (others[:, equivalence] < equivalence_threshold)
    runner_up = others.copy()
    runner_up[:, equivalence] = -1.0
    best = np.where(unsure, runner_up.argmax(axis=1), best)
    labels = np.where(rule_exclusion, exclusion.EXCLUSION, np.asarray(RELATIONS)[best])
    chance = np.where(rule_exclusion, np.nan, others[rows, best])
    return labels.tolist(), chance


@dataclass(frozen=True)
class RelationModel:
    """A trained relation classifier: its features, LightGBM text and training summary."""

    features: tuple[str, ...]
    model_text: str
    training: dict[str, Any] = field(default_factory=dict)
    #: P(Equivalence) below which :func:`decide` gives the next relation instead
    equivalence_threshold: float = 0.0

    def probabilities(self, frame: pl.DataFrame) -> np.ndarray:
        """P(relation) per row of ``frame`` (``relation_features`` added), columns
        RELATIONS."""
        import lightgbm as lgb

        if frame.height == 0:
            return np.zeros((0, len(RELATIONS)))
        booster = self.__dict__.get("_booster")
        if booster is None:
            booster = lgb.Booster(model_str=self.model_text)
            object.__setattr__(self, "_booster", booster)
        missing = [c for c in self.features if c not in frame.columns]
        full = frame.with_columns(pl.lit(None, dtype=pl.Float64).alias(c) for c in missing)
        return np.asarray(booster.predict(_matrix(full, list(self.features)), num_threads=1))

    def label(self, frame: pl.DataFrame, evidence: pl.DataFrame | None = None
              ) -> pl.DataFrame:
        """``relation`` and ``relation_probability`` for each row of ``frame`` (``type``,
        ``source``, ``target`` and the run's ``f_*`` columns): the most probable relation
        but Exclusion (:func:`decide` without the rule, which the ranker applies with its
        own settings); null for the types the model was not trained on (sentences).
        ``evidence``: the rows' evidence columns at FEATURE_NEGATION_OVERLAP, if computed."""
        labelled = frame[S.TYPE].is_in(list(LABELLED_TYPES)).to_numpy()
        relation = np.full(frame.height, None, dtype=object)
        chance = np.full(frame.height, np.nan)
        if labelled.any():
            keep = pl.Series(labelled)
            part = relation_features(frame.filter(keep), evidence=None if evidence is None
                                     else evidence.filter(keep))
            labels, probability = decide(self.probabilities(part),
                                         np.zeros(part.height, dtype=bool),
                                         self.equivalence_threshold)
            relation[labelled], chance[labelled] = labels, probability
        return pl.DataFrame({S.RELATION: list(relation), RELATION_PROBABILITY: chance},
                            schema={S.RELATION: pl.String, RELATION_PROBABILITY: pl.Float64}
                            ).with_columns(pl.col(RELATION_PROBABILITY).fill_nan(None))

    def save(self, path: str | Path) -> Path:
        write_json_atomic(Path(path), {"format": MODEL_FORMAT, "relations": list(RELATIONS),
                                       "features": list(self.features),
                                       "equivalence_threshold": self.equivalence_threshold,
                                       "training": self.training, "model": self.model_text})
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> RelationModel:
        data = read_model_json(path, "relation model",
                               hint='set rank.relation_model = "default" (the shipped model) '
                                    'or "none", or train one with `python -m '
                                    'devtools.train_relations`')
        if data.get("format") != MODEL_FORMAT or data.get("relations") != list(RELATIONS):
            raise BadInputError(f"{path} is not a cppdb relation model "
                                f"(format {data.get('format')!r})",
                                hint=f"expected a JSON file with format '{MODEL_FORMAT}'")
        return cls(tuple(data["features"]), data["model"], data.get("training", {}),
                   float(data.get("equivalence_threshold", 0.0)))


def shipped_model_path() -> Path:
    return shipped_file(MODEL_FILE)


def model_file(setting: str) -> Path | None:
    """The file ``rank.relation_model`` names: the shipped one for ``"default"``, None for
    ``"none"`` (no classifier)."""
    if setting == "none":
        return None
    return shipped_model_path() if setting == "default" else Path(setting)


@lru_cache(maxsize=2)
def load_model(path: str) -> RelationModel:
    """The model at ``path`` (``"default"``: the shipped one), loaded once per process."""
    return RelationModel.load(model_file(path))


def fit(frame: pl.DataFrame, columns: list[str], seed: int = 46,
        training: dict[str, Any] | None = None, equivalence_threshold: float = 0.0
        ) -> RelationModel:
    """:func:`train` on every row of ``frame``, kept as a :class:`RelationModel`."""
    missing = sorted(set(RELATIONS) - set(frame[RELATION].unique().to_list()))
    if missing:
        raise BadInputError(f"the judgements hold no {', '.join(missing)} pair",
                            hint="every relation needs examples to train the classifier")
    model = train(frame, columns, seed)
    return RelationModel(tuple(columns), model.booster_.model_to_string(), training or {},
                         equivalence_threshold)
