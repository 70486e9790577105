"""``f_pivot_context``: do the two sides of a pivoted pair share their English pivot in the
same sense?

Half of the unacceptable news pairs put two senses of one English word together
(身体 / 物理 through "physical", 篮下 / 购物篮 through "basket", 季节 / 本赛季 through
"season"); the pivot probabilities cannot see it, the English sentences around the pivot can.
For each side and each of the pair's pivots, the English content lemmas of the sentences
where that side aligns to that pivot (the pivot's own span left out) form one tf·idf bag;
the feature is the best cosine of the two sides' bags over the pivots they share.  0 when the
bags share no word; null for pairs without pivots (monolingual pairs, ``cppdb score``).

Cost is bounded: at most :data:`MAX_OCCURRENCES` occurrences (the first by sentence id)
build a (side, pivot) bag, and only the sides and pivots of the given pairs are read.
Measured on fresh blind news judgements: ROC AUC 0.736 for "acceptable" where the shipped
ranker's score had 0.613 (docs/benchmarks/rank.md).
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from cppdb import schema as S
from cppdb.align.words.english import STOPWORDS

PIVOT_CONTEXT = "f_pivot_context"
#: occurrences per (kind, side, pivot) that build its bag: frequent phrases have thousands
MAX_OCCURRENCES = 32
OCCURRENCES = S.OCCURRENCES_FILE
ANNOTATIONS = S.ANNOTATIONS_FILE
_CONTENT_WORD = r"^[a-z][a-z\-]+$"
_EN_START, _EN_END = "en_start", "en_end"      # the pivot span (OCCURRENCE_SCHEMA)
_EN_LEMMA = "en_lemma"                           # annotations (cppdb.schema ANNOTATION_FIELDS)


def context_inputs(run_dir: str | Path) -> tuple[Path, Path]:
    """The files of a bilingual run that :func:`pivot_context` reads (a stage declares them)."""
    return Path(run_dir) / OCCURRENCES, Path(run_dir) / ANNOTATIONS


def run_has_context(run_dir: str | Path) -> bool:
    return all(path.exists() for path in context_inputs(run_dir))


def pivot_context(pairs: pl.DataFrame, run_dir: str | Path) -> pl.DataFrame:
    """``pairs`` (type, source, target, pivots) with :data:`PIVOT_CONTEXT` added."""
    if not run_has_context(run_dir) or S.PIVOTS not in pairs.columns or pairs.is_empty():
        return pairs.with_columns(pl.lit(None, dtype=pl.Float64).alias(PIVOT_CONTEXT))
    keyed = (pairs.select(S.TYPE, S.SOURCE, S.TARGET, S.PIVOTS)
             .unique([S.TYPE, S.SOURCE, S.TARGET])
             .explode(S.PIVOTS).rename({S.PIVOTS: S.EN}).drop_nulls(S.EN))
    index, vectors = _bags(Path(run_dir), keyed)
    by_side = {side: index.rename({S.KIND: S.TYPE, S.ZH: side, "bag": f"bag_{side}"})
               for side in (S.SOURCE, S.TARGET)}
    cosines = (keyed.lazy()
               .join(by_side[S.SOURCE].lazy(), on=[S.TYPE, S.SOURCE, S.EN])
               .join(by_side[S.TARGET].lazy(), on=[S.TYPE, S.TARGET, S.EN])
               .join(vectors.lazy().rename({"bag": f"bag_{S.SOURCE}", "u": "u_s"}),
                     on=f"bag_{S.SOURCE}")
               .join(vectors.lazy().rename({"bag": f"bag_{S.TARGET}", "u": "u_t"}),
                     on=[f"bag_{S.TARGET}", "word"])
               .group_by(S.TYPE, S.SOURCE, S.TARGET, S.EN)
               .agg((pl.col("u_s") * pl.col("u_t")).sum().alias("cos"))
               .group_by(S.TYPE, S.SOURCE, S.TARGET)
               .agg(pl.col("cos").max().alias(PIVOT_CONTEXT))
               .collect(engine="streaming"))
    has_pivot = pl.col(S.PIVOTS).list.len().fill_null(0) > 0
    return (pairs.join(cosines, on=[S.TYPE, S.SOURCE, S.TARGET], how="left",
                       maintain_order="left")
            .with_columns(pl.when(has_pivot)
                          # rounded: a parallel sum may differ in its last bits run to run
                          .then(pl.col(PIVOT_CONTEXT).fill_null(0.0).clip(0.0, 1.0).round(6))
                          .otherwise(None).alias(PIVOT_CONTEXT)))


def _bags(run_dir: Path, keyed: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The bag index (kind, zh, en, bag) of each side↔pivot and the unit tf·idf vectors
    (bag, word, u) of their English contexts.  Strings are replaced by integer ids before the
    one large table (occurrences × context words) is built."""
    sides = pl.concat([keyed.select(pl.col(S.TYPE).alias(S.KIND), pl.col(side).alias(S.ZH),
                                    S.EN) for side in (S.SOURCE, S.TARGET)]).unique()
    occurrences = (pl.scan_parquet(run_dir / OCCURRENCES)
                   .select(S.ID, S.KIND, S.ZH, S.EN, _EN_START, _EN_END)
                   .join(sides.lazy(), on=[S.KIND, S.ZH, S.EN], how="semi")
                   .unique([S.ID, S.KIND, S.ZH, S.EN])
                   .sort(S.KIND, S.ZH, S.EN, S.ID)
                   .filter(pl.int_range(pl.len()).over(S.KIND, S.ZH, S.EN) < MAX_OCCURRENCES)
                   .collect())
    index = (occurrences.select(S.KIND, S.ZH, S.EN).unique(maintain_order=True)
             .with_row_index("bag"))
    occurrences = (occurrences.join(index, on=[S.KIND, S.ZH, S.EN])
                   .select("bag", S.ID, _EN_START, _EN_END))
    annotations = pl.scan_parquet(run_dir / ANNOTATIONS).select(S.ID, _EN_LEMMA)
    sentences = max(annotations.select(pl.len()).collect().item(), 1)
    every_word = _content_words(annotations).collect(engine="streaming")
    # idf over every sentence of the run: the same weights whichever pairs are scored (rank's
    # candidates, train_bilingual's judged pairs), so training and ranking agree; ``word`` is
    # an integer id used in place of the text in the large joins
    idf = (every_word.unique([S.ID, "text"]).group_by("text").len("df")
           .sort("text").with_row_index("word")
           .with_columns((pl.lit(float(sentences)) / pl.col("df")).log().alias("idf")))
    words = (every_word.join(occurrences.select(S.ID).unique(), on=S.ID, how="semi")
             .join(idf.select("text", "word"), on="text")
             .select(S.ID, "position", "word"))
    del every_word
    # tf: how often the word stands around this side's pivot (streamed: occurrences × words
    # is the one table that grows with the run, 12M rows at 300k sentence pairs)
    context = (occurrences.lazy().join(words.lazy(), on=S.ID)
               .filter((pl.col("position") < pl.col(_EN_START))
                       | (pl.col("position") >= pl.col(_EN_END)))
               .group_by("bag", "word").len("tf").collect(engine="streaming"))
    bags = (context.join(idf.select("word", "idf"), on="word")
            .with_columns((pl.col("tf") * pl.col("idf")).alias("x")))
    norms = bags.group_by("bag").agg((pl.col("x") ** 2).sum().sqrt().alias("norm"))
    vectors = (bags.join(norms, on="bag").filter(pl.col("norm") > 0)
               .select("bag", "word", (pl.col("x") / pl.col("norm")).alias("u")))
    return index, vectors


def _content_words(annotations: pl.LazyFrame) -> pl.LazyFrame:
    """(id, position, text): the lower-cased English content lemmas of each sentence."""
    return (annotations
            .with_columns(pl.col(_EN_LEMMA).list.eval(pl.int_range(pl.len())).alias("position"))
            .explode(_EN_LEMMA, "position")
            .with_columns(pl.col(_EN_LEMMA).str.to_lowercase().alias("text"))
            .filter(pl.col("text").str.contains(_CONTENT_WORD)
                    & ~pl.col("text").is_in(sorted(STOPWORDS)))
            .select(S.ID, "position", "text"))

