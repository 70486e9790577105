"""Noise filters: pairs that are not useful paraphrases are moved to a rejected table.

A pair is rejected, with the first reason that applies, when its two sides are

``identical``
    equal after normalisation: NFKC (full/half-width forms unified), lower case, whitespace
    removed, and every transliteration variant of a name mapped to its canonical form
    (科诺夫尼岑/柯诺夫尼岑, ``cppdb.text.entities``) — taken from the ``source_norm`` /
    ``target_norm`` columns monolingual runs write;
``trivial``
    equal once, in addition, the particles 的/了/地/得 (configurable), punctuation and symbols
    are removed (北京到上海的高铁 / 北京到上海高铁);
``entity_only``
    equal once, in addition, every word tagged ``NR`` (proper noun, CTB) is replaced by one
    placeholder, while the sides differ: 张三出生于北京 / 李四出生于北京 says nothing about
    paraphrase.  This needs POS columns; pairs without POS are never rejected for it.

``deixis_flip``, ``determiner_only``, ``head_change``
    differ only in closed-class words (:mod:`cppdb.features.detectors`): 我们班 / 你们班, 这 /
    那, 他 / 她, 一只 / 所有; 这个[NP1] / 那张[NP1] (patterns), 一朵花 / 一辆花 (classifiers that
    count no common noun); 画画的时候 / 画画 (a new head).  Phrases whose classifiers are
    compatible are kept: 一位老师 / 一名老师.
``person_mismatch``
    both sides name persons by pronoun and share none (你的母亲 / 我们的妈妈), whatever else
    differs;
``negation_flip``, ``kinship_flip``
    one side negates the other and the rest is the same (区分 X / 无法区分 X); the sides differ
    only in kinship terms of different relations (你哥哥 / 你弟弟, 爷爷 / 外公: English
    "brother", "grandfather" do not keep them apart, :mod:`cppdb.text.kinship`);
``no_content``
    a pattern side whose words outside the slots are all function words (他 [VP1],
    [NP1] 的 [NP2]): the slots carry all its meaning;
``number_flip``
    each side names a number the other does not (3400 / 34, 三千 / 30, 数十 / 数百, 三 名
    [NP1] / 两 名 [NP1], [NT1] 6月 / [NT1] 7月): a changed number is a changed meaning, never
    a paraphrase.  Values are compared (三千 / 3000 and 百分之五 / 5% are kept,
    ``cppdb.features.numbers``); a side without a number never fires it (一号 / 1号: the
    article-like 一 is not a number; 两 / 俩), nor does a number only added on one side
    (2019年 [NT1] 1日 / [NT1] 1日: more said, not something else);
``weak_evidence``
    a pivoted pair whose two pivot probabilities multiply to less than
    ``rank.min_pivot_product``: p(t|s)·p(s|t) is the share of s's and t's translation mass
    that lands on each other, and below 0.005 a pair is mostly one misaligned English word
    (试题 / 客户 via "questions", 公开场合 / 公交 via "public").  Chosen on development
    judgements of Tatoeba and news (docs/benchmarks/rank.md, "Weak evidence"); pairs
    without pivot probabilities (sentences) are never rejected for it.  Two words of one
    synonym atom of HIT's Cilin (:mod:`cppdb.text.cilin`: 喜欢 / 喜爱, 犬 / 狗, 获得 / 得到)
    are rejected only below ``rank.synonym_min_pivot_product`` (0.0005): a common English
    word spreads their mass over many Chinese words ("like", "dog", "get"), and the
    thesaurus is evidence the pivot lacks; below that bound Cilin's atoms of polysemous
    characters pair senses the pivot does not support (装 / 去, 开 / 放).

Nothing is lost: :func:`filter_pairs` returns the kept pairs and the rejected ones with a
``filter_reason`` column.
"""
from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from cppdb import schema as S
from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError
from cppdb.features.detectors import (classifier_clash, deixis_flip, determiner_only,
                                     head_change, kinship_flip, negation_flip, no_content,
                                     person_mismatch)
from cppdb.features.numbers import numbers_changed
from cppdb.features.table import number_text
from cppdb.text.cilin import one_synonym_atom

_RANK = toml_defaults("rank")

FILTER_REASON = "filter_reason"
REASONS = ("identical", "trivial", "entity_only", "negation_flip", "deixis_flip",
           "person_mismatch", "kinship_flip", "determiner_only", "head_change", "no_content",
           "number_flip", "weak_evidence")
_ENTITY = "\uE000"  # a private-use character: cannot occur in real text


@dataclass(frozen=True)
class FilterSettings:
    """The filters' keys of ``[rank]``."""

    filters: tuple[str, ...] = _RANK["filters"]
    filter_particles: str = _RANK["filter_particles"]
    filter_entity_tags: tuple[str, ...] = _RANK["filter_entity_tags"]
    min_pivot_product: float = _RANK["min_pivot_product"]
    synonym_min_pivot_product: float = _RANK["synonym_min_pivot_product"]

    def __post_init__(self) -> None:
        unknown = [name for name in self.filters if name not in REASONS]
        if unknown:
            raise ConfigError(f"setting 'rank.filters' names unknown filter(s) "
                              f"{', '.join(unknown)}", hint=f"choose from: {', '.join(REASONS)}")


def _base_key(column: pl.Expr) -> pl.Expr:
    return column.str.normalize("NFKC").str.to_lowercase().str.replace_all(r"\s+", "")


def _trivial_key(column: pl.Expr, particles: str) -> pl.Expr:
    removable = r"[\p{P}\p{S}" + "".join(particles) + "]" if particles else r"[\p{P}\p{S}]"
    return _base_key(column).str.replace_all(removable, "")


def _entity_masked_text(frame: pl.DataFrame, tokens: str, pos: str,
                        tags: tuple[str, ...]) -> pl.Series:
    """Tokens joined without spaces, every word with a tag in ``tags`` replaced by one mark."""
    exploded = (frame.select(pl.int_range(pl.len()).alias("_row"), pl.col(tokens).alias("tok"),
                             pl.col(pos).alias("tag"))
                .filter(pl.col("tok").list.len() == pl.col("tag").list.len())
                .explode("tok", "tag"))
    masked = (exploded.with_columns(
        pl.when(pl.col("tag").is_in(list(tags))).then(pl.lit(_ENTITY))
        .otherwise(pl.col("tok")).alias("tok"))
        .group_by("_row", maintain_order=True).agg(pl.col("tok").str.join(""))
        .with_columns(pl.col("tok").str.replace_all(_ENTITY + "+", _ENTITY)))
    full = pl.DataFrame({"_row": pl.int_range(frame.height, eager=True)})
    return full.join(masked, on="_row", how="left", maintain_order="left")["tok"]


def filter_reasons(frame: pl.DataFrame, settings: FilterSettings = FilterSettings()
                   ) -> pl.Series:
    """The first applicable rejection reason of every row (null: keep)."""
    source, target = pl.col(S.SOURCE), pl.col(S.TARGET)
    if S.SOURCE_NORM in frame.columns and S.TARGET_NORM in frame.columns:
        # monolingual runs carry entity-normalised text (cppdb.text.entities)
        source = pl.coalesce(pl.col(S.SOURCE_NORM), source)
        target = pl.coalesce(pl.col(S.TARGET_NORM), target)
    checks: list[tuple[str, pl.Expr]] = [
        ("identical", _base_key(source) == _base_key(target)),
        ("trivial", _trivial_key(source, settings.filter_particles)
         == _trivial_key(target, settings.filter_particles)),
    ]
    columns = frame.columns
    if "entity_only" in settings.filters and S.SOURCE_POS in columns and S.TARGET_POS in columns:
        work = frame.with_columns(
            _entity_masked_text(frame, S.SOURCE_TOKENS, S.SOURCE_POS, settings.filter_entity_tags)
            .alias("_src_ent"),
            _entity_masked_text(frame, S.TARGET_TOKENS, S.TARGET_POS, settings.filter_entity_tags)
            .alias("_tgt_ent"))
        has_entity = (pl.col("_src_ent").str.contains(_ENTITY, literal=True)
                      | pl.col("_tgt_ent").str.contains(_ENTITY, literal=True))
        checks.append(("entity_only", has_entity & (
            _trivial_key(pl.col("_src_ent"), settings.filter_particles)
            == _trivial_key(pl.col("_tgt_ent"), settings.filter_particles))))
    else:
        work = frame
    if S.SOURCE_TOKENS in columns and S.TARGET_TOKENS in columns:
        checks.extend(_closed_class_checks(columns))
    if "number_flip" in settings.filters:
        # each side has a number the other lacks: a number changed, not one added (2019年
        # [NT1] 1日 / [NT1] 1日 adds a year: kept)
        work = work.with_columns(
            numbers_changed(work, number_text(source), number_text(target)).alias("_numbers"))
        checks.append(("number_flip", pl.col("_numbers")))
    if S.P_TGT_GIVEN_SRC in columns and S.P_SRC_GIVEN_TGT in columns:
        product = pl.col(S.P_TGT_GIVEN_SRC) * pl.col(S.P_SRC_GIVEN_TGT)
        weak = product < settings.min_pivot_product
        if ("weak_evidence" in settings.filters
                and settings.synonym_min_pivot_product < settings.min_pivot_product):
            work = work.with_columns(one_synonym_atom(source, target, work).alias("_synonyms"))
            weak = weak & ~(pl.col("_synonyms")
                            & (product >= settings.synonym_min_pivot_product))
        checks.append(("weak_evidence", weak))
    active = [(name, condition) for name, condition in checks if name in settings.filters]
    # Each check is evaluated once, as its own column (polars runs them in parallel); a
    # when/then chain over the checks themselves was 8x slower (151 s for 1.6 M pairs).
    if not active:
        return pl.Series(FILTER_REASON, [None] * frame.height, dtype=pl.String)
    flags = work.select([condition.fill_null(False).alias(f"_check{i}")
                         for i, (_, condition) in enumerate(active)])
    reason: pl.Expr = pl.lit(None, dtype=pl.String)
    for i, (name, _) in reversed(list(enumerate(active))):
        reason = pl.when(pl.col(f"_check{i}")).then(pl.lit(name)).otherwise(reason)
    return flags.select(reason.alias(FILTER_REASON))[FILTER_REASON]


def _closed_class_checks(columns: list[str]) -> list[tuple[str, pl.Expr]]:
    """Pairs that differ only in closed-class words (cppdb.features.detectors): a deixis,
    person or number flip; a determiner/classifier change in a pattern, or in a phrase when
    the classifiers count no common noun; a new head noun on one side."""
    checks = [("negation_flip", negation_flip(S.SOURCE, S.TARGET) == 1),
              ("deixis_flip", deixis_flip() == 1), ("person_mismatch", person_mismatch() == 1),
              ("kinship_flip", kinship_flip() == 1)]
    determiner = determiner_only() == 1
    if S.TYPE in columns:
        determiner = determiner & ((pl.col(S.TYPE) == "pattern") | (classifier_clash() == 1))
    checks.append(("determiner_only", determiner))
    if S.SOURCE_POS in columns and S.TARGET_POS in columns:
        checks.append(("head_change", head_change() == 1))
        checks.append(("no_content", no_content() == 1))
    return checks


def filter_pairs(frame: pl.DataFrame, settings: FilterSettings = FilterSettings()
                 ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split ``frame`` into (kept, rejected); ``rejected`` has a ``filter_reason`` column."""
    reasons = filter_reasons(frame, settings)
    tagged = frame.with_columns(reasons)
    kept = tagged.filter(pl.col(FILTER_REASON).is_null()).drop(FILTER_REASON)
    rejected = tagged.filter(pl.col(FILTER_REASON).is_not_null())
    return kept, rejected
