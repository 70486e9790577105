"""Automatic evaluation of a ranking (the paper's Tables 3, 4 and 6).

For each pair type and each top share (default 20 / 60 / 100 % of the ranking):

``edit_distance``
    mean Levenshtein distance between source and target, counted in characters of the
    *character text*: NFKC-normalised, all whitespace removed (phrases are stored with
    spaces between words).  Insertions, deletions and substitutions cost 1 each.
``normalised_edit_distance``
    mean of ``edit_distance(s, t) / max(len(s), len(t))`` with lengths in characters of
    the same character text; 0 = identical, 1 = nothing in common position-wise; a pair
    of two empty strings counts 0.  Dividing by the longer side keeps the value in [0, 1]
    and removes the effect of length on diversity (the paper's 编辑距离/长度).
``template_edit_distance``, ``template_normalised_edit_distance``
    the same two over the *template words* only (slots removed, ``features.table.
    template_text``): where the two sides of a pattern can differ at all — both carry the
    same slots, which the two columns above count as shared text (``§1薪水`` / ``§1工资``:
    ED÷len 0.5 there, 1.0 here).  The paper's Table 4 (ED 3.34 at ED÷len 0.775, about 4.3
    characters a side) matches this count, not one with the slots; for phrases the two
    definitions agree.
``containment``
    share of pairs where one side's character text is a substring of the other's
    (男孩 / 这个男孩): pairs that give the user the same words back.
``containment_in_order``
    share of pairs where one side's words (slots included) appear in order in the other's —
    words added anywhere, not only at an edge (腐败 和 [NP1] / 腐败 和 其他 [NP1]) — or where
    it is a substring (``features.table.contained_in_order``): the stricter count, a superset
    of ``containment``.
``cosine``
    mean cosine of the sentence vectors of s and t from the ``[embed]`` encoder (the
    SentenceBERT role; e5-tokens by default).
``cosine_second``
    the same with a second model (the SimCSE role), a local sentence-transformers
    directory in ``evaluate.second_model_path``; the column is null when none is set.

Edit distances and containment use every pair; the cosines use a seeded uniform sample of
at most ``evaluate.max_embedded_pairs`` pairs per type and top share (encoding is the
expensive part; :func:`cosine_sample`) — the ``embedded`` column says how many pairs each
cosine mean is over.

Every mean comes with a seeded 95 % percentile bootstrap interval over its pairs
(``<metric>_low`` / ``<metric>_high``, :mod:`cppdb.stats`); a mean over more than
``evaluate.bootstrap_max_items`` pairs gets mean ± 1.96·SE instead (1,000 resamples of a
million pairs take about a minute per number; at that size the two agree).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.export import read_pairs
from cppdb.features.table import (contained, contained_in_order, has_slot, model_text,
                                  pair_edit_distances)
from cppdb.rank.tiers import PERCENTILE, RANK, SCORE, in_top
from cppdb.stats import RESAMPLES, bootstrap_mean, normal_mean

#: the metric columns, each with a per-pair source column and a bootstrap interval
METRICS = dict(zip(S.EVALUATION_METRICS, ("ed", "ned", "ted", "tned", "cont", "order", "cos",
                                             "cos2"),
                   strict=True))
#: how the intervals are made and what each metric is, for the signature line
INTERVALS = "bootstrap-percentile-95"
NORMAL_INTERVALS = "normal-1.96se"
DEFINITIONS = {"ed": "levenshtein-nfkc-chars-nospace", "ed-len": "ed/max-len",
               "template-ed": "ed-of-template-words-noslots",
               "containment": "substring-either-way-nospace",
               "in-order": "word-subsequence-or-substring", "cosine": "mean-pair-cosine"}
TABLE_SCHEMA = S.EVALUATION_TABLE_SCHEMA


def edit_distances(sources: list[str], targets: list[str], *, template: bool = False
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(edit distance, normalised edit distance) of each pair, as defined above: over the
    character text, or with ``template`` over the template words."""
    return pair_edit_distances(sources, targets, template=template)


def containment(sources: list[str], targets: list[str]) -> np.ndarray:
    """1.0 where one side's character text is a substring of the other's, else 0.0."""
    frame = pl.DataFrame({"s": sources, "t": targets}, schema={"s": pl.String, "t": pl.String})
    return frame.select(contained("s", "t").cast(pl.Float64)).to_series().to_numpy()


def pair_cosines(encoder: Any, sources: list[str], targets: list[str]) -> np.ndarray:
    """Cosine of each pair's sentence vectors; each distinct text is encoded once, in one
    batched call, in the form the ranker's cosine feature uses (``model_text``, so a run's
    embedding cache serves both)."""
    frame = pl.DataFrame({"s": sources, "t": targets}, schema={"s": pl.String, "t": pl.String})
    texts = frame.select(model_text("s"), model_text("t"))
    unique = pl.concat([texts["s"], texts["t"]]).unique(maintain_order=True)
    index = pl.DataFrame({"text": unique}).with_row_index("i")

    def rows(side: str) -> np.ndarray:
        return (texts.select(pl.col(side).alias("text"))
                .join(index, on="text", how="left", maintain_order="left")["i"].to_numpy())

    vectors = np.asarray(encoder.encode(unique.to_list()), dtype=np.float64)
    return np.einsum("ij,ij->i", vectors[rows("s")], vectors[rows("t")])


def _top_label(share: float) -> str:
    return f"{round(share * 100)}%"


def evaluation_table(ranked: pl.DataFrame, tops: tuple[float, ...] = (0.2, 0.6, 1.0), *,
                     encoder: Any = None, second_encoder: Any = None,
                     max_embedded: int = 2000, seed: int = 13, resamples: int = RESAMPLES,
                     bootstrap_max: int | None = None) -> pl.DataFrame:
    """Diversity and consistency per type and top share of a ranked pair table.

    Intervals are seeded percentile bootstraps, except for a mean over more than
    ``bootstrap_max`` pairs, which gets mean ± 1.96·SE (:func:`interval`)."""
    sources, targets = ranked[S.SOURCE].to_list(), ranked[S.TARGET].to_list()
    ed, ned = edit_distances(sources, targets)
    inside = containment(sources, targets)
    ted, tned = ed.copy(), ned.copy()
    # a pair without slots has its character text as template text: computed once
    slotted = np.flatnonzero(ranked.select(has_slot(S.SOURCE) | has_slot(S.TARGET))
                             .to_series().to_numpy())
    if slotted.size:
        ted[slotted], tned[slotted] = edit_distances([sources[i] for i in slotted],
                                                     [targets[i] for i in slotted], template=True)
    frame = ranked.select(S.TYPE, RANK, S.SOURCE, S.TARGET).with_columns(
        pl.Series("ed", ed), pl.Series("ned", ned),
        pl.Series("ted", ted), pl.Series("tned", tned),
        pl.Series("cont", inside),
        pl.Series("order", contained_in_order(sources, targets, substring=inside)),
        pl.lit(None, dtype=pl.Float64).alias("cos"),
        pl.lit(None, dtype=pl.Float64).alias("cos2"), pl.int_range(pl.len()).alias("_row"),
        *[pl.lit(False).alias(_sampled(i)) for i in range(len(tops))])
    if encoder is not None or second_encoder is not None:
        frame = _add_cosines(frame, tops, encoder, second_encoder, max_embedded, seed)
    rows = []
    for pair_type in frame[S.TYPE].unique(maintain_order=True).to_list():
        part = frame.filter(pl.col(S.TYPE) == pair_type)
        for index, share in enumerate(tops):
            top = part.filter(in_top(share))
            # a cosine mean is over this top's own sample only (an unweighted union of the
            # tops' samples would over-represent the smaller tops)
            sampled = top.filter(pl.col(_sampled(index)))
            row = {"type": pair_type, "top": _top_label(share), "pairs": top.height,
                   "embedded": int(sampled["cos"].is_not_null().sum()
                                   or sampled["cos2"].is_not_null().sum())}
            for metric, column in METRICS.items():
                values = (sampled if column in ("cos", "cos2") else top)[column]
                row[metric] = values.mean()
                row[f"{metric}_low"], row[f"{metric}_high"] = interval(
                    values.to_numpy(), resamples, seed, bootstrap_max)
            rows.append(row)
    return pl.DataFrame(rows, schema=TABLE_SCHEMA)


def interval(values: np.ndarray, resamples: int, seed: int,
             bootstrap_max: int | None) -> tuple[float | None, float | None]:
    """The 95 % interval of a mean: bootstrap up to ``bootstrap_max`` values, else normal."""
    if bootstrap_max is not None and values.size > bootstrap_max:
        return normal_mean(values)
    return bootstrap_mean(values, resamples=resamples, seed=seed)


def interval_method(bootstrap_max: int | None) -> str:
    """What the signature says about the intervals."""
    if bootstrap_max is None:
        return INTERVALS
    return f"{INTERVALS}(n<={bootstrap_max}),{NORMAL_INTERVALS}(n>{bootstrap_max})"


def _sampled(index: int) -> str:
    return f"_cosine_sample_{index}"


def cosine_sample(frame: pl.DataFrame, tops: tuple[float, ...], limit: int,
                  seed: int) -> pl.DataFrame:
    """The rows whose cosine is computed (``_row``) and, per top share, whether the row is in
    that top's sample: per type, the ``limit`` pairs of the top with the smallest seeded
    random key (a uniform sample of the top; the tops share pairs, so they are encoded once)."""
    keyed = frame.with_columns(
        pl.Series("_key", np.random.default_rng(seed).permutation(frame.height)))
    flags = []
    for index, share in enumerate(tops):
        chosen = (keyed.filter(in_top(share)).sort("_key")
                  .group_by(S.TYPE, maintain_order=True).head(limit)["_row"])
        flags.append(pl.col("_row").is_in(chosen.implode()).alias(_sampled(index)))
    return (keyed.select("_row", *flags)
            .filter(pl.any_horizontal(_sampled(i) for i in range(len(tops)))))


def _add_cosines(frame: pl.DataFrame, tops: tuple[float, ...], encoder: Any, second: Any,
                 limit: int, seed: int) -> pl.DataFrame:
    sample = cosine_sample(frame, tops, limit, seed).join(
        frame.select("_row", S.SOURCE, S.TARGET), on="_row", how="left", maintain_order="left")
    sources, targets = sample[S.SOURCE].to_list(), sample[S.TARGET].to_list()
    updates = sample.drop(S.SOURCE, S.TARGET)
    if encoder is not None:
        updates = updates.with_columns(pl.Series("cos", pair_cosines(encoder, sources, targets)))
    if second is not None:
        updates = updates.with_columns(pl.Series("cos2", pair_cosines(second, sources, targets)))
    return frame.update(updates, on="_row")


def load_ranked_file(path: str | Path) -> pl.DataFrame:
    """A pair file (parquet/jsonl/tsv/ppdb via ``cppdb.export.read_pairs``) as a ranking.

    Ranked by its ``score`` column when present, else by its line order (first = best).
    """
    frame = read_pairs(path)
    if S.TYPE not in frame.columns:
        frame = frame.with_columns(pl.lit("phrase").alias(S.TYPE))
    order = (pl.col(SCORE).rank("ordinal", descending=True) if SCORE in frame.columns
             else pl.int_range(1, pl.len() + 1))
    ranked = frame.with_columns(order.over(S.TYPE).cast(pl.Int64).alias(RANK))
    return ranked.with_columns((pl.col(RANK) / pl.len().over(S.TYPE)).alias(PERCENTILE)) \
        .sort(S.TYPE, RANK)
