"""Coverage: how many of the frequent content words have a paraphrase in the first tier.

Two word lists, each cut to its ``top`` most frequent content words:

``corpus``
    the run's own Chinese words (``annotations.parquet``: tokens and CTB tags), content =
    common nouns NN, temporal nouns NT, verbs VV, predicative adjectives VA and noun
    modifiers JJ; proper names (NR), the copula and 有 (VC, VE) and closed classes are
    left out: no paraphrase database is expected to rewrite 李白 or 是.
``jieba``
    jieba's frequency list (``jieba/dict.txt``, shipped with the segmenter the project
    depends on), content = its tags n, t, v, vn, vd, a, an, ad (names ``nr``/``ns``/``nt``/
    ``nz`` and single-character morphemes ``*g`` left out); words in traditional script are
    converted to simplified as a lookup converts a query, and their frequencies summed.

A word is *covered* when ``cppdb lookup WORD --tier S`` finds a phrase pair: a phrase pair
of the first size tier whose source, spaces removed, is the word (``with_any`` counts any
tier).  The shares are a census of the top ``words``, not a sample, so they carry no
interval; ``missing`` lists the most frequent words without a first-tier paraphrase.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from cppdb import schema as S
from cppdb.errors import BackendUnavailableError
from cppdb.text.convert import default_converter

CORPUS_POS = ("NN", "NT", "VV", "VA", "JJ")
JIEBA_TAGS = ("n", "t", "v", "vn", "vd", "a", "an", "ad")
WORD, FREQ = "word", "freq"
COVERAGE_SCHEMA = {"list": pl.String, "content": pl.String, "words": pl.Int64,
                   "with_tier": pl.Int64, "with_any": pl.Int64, "share": pl.Float64,
                   "share_any": pl.Float64, "tier": pl.String, "missing": pl.List(pl.String)}


def corpus_frequencies(annotations: Path) -> pl.DataFrame:
    """(word, freq) of the content words of a run's Chinese side."""
    tokens, tags = S.ann("zh", "tokens"), S.ann("zh", "pos")
    return (pl.scan_parquet(annotations).select(tokens, tags).explode(tokens, tags)
            .filter(pl.col(tags).is_in(CORPUS_POS))
            .group_by(pl.col(tokens).alias(WORD)).agg(pl.len().cast(pl.Int64).alias(FREQ))
            .collect(engine="streaming"))


def jieba_dictionary() -> Path:
    try:
        from importlib.resources import files

        path = Path(str(files("jieba") / "dict.txt"))
    except ModuleNotFoundError as exc:
        raise BackendUnavailableError("jieba is not installed: its frequency list is one of "
                                      "the coverage word lists", hint="pip install jieba") from exc
    if not path.is_file():
        raise BackendUnavailableError(f"jieba's frequency list {path} is missing",
                                      hint="reinstall jieba (pip install --force-reinstall "
                                           "jieba)")
    return path


def jieba_frequencies(path: Path | None = None) -> pl.DataFrame:
    """(word, freq) of the content words of jieba's dictionary, in simplified script."""
    table = pl.read_csv(path or jieba_dictionary(), separator=" ", has_header=False,
                        new_columns=[WORD, FREQ, "tag"], quote_char=None,
                        schema_overrides={WORD: pl.String, FREQ: pl.Int64, "tag": pl.String})
    content = table.filter(pl.col("tag").is_in(JIEBA_TAGS)).select(WORD, FREQ)
    simplified = pl.Series(WORD, default_converter().convert(content[WORD].to_list()))
    return (content.with_columns(simplified).group_by(WORD).agg(pl.col(FREQ).sum()))


def top_words(frequencies: pl.DataFrame, top: int) -> pl.DataFrame:
    """The ``top`` most frequent words, ties by the word (the same list every time)."""
    return frequencies.sort([FREQ, WORD], descending=[True, False]).head(top)


def phrase_sources(ranking: pl.DataFrame, first_tier: str) -> pl.DataFrame:
    """(word, in_tier) per phrase source, spaces removed: whether one of its pairs is in
    ``first_tier``."""
    phrases = ranking.filter(pl.col(S.TYPE) == "phrase") if S.TYPE in ranking.columns \
        else ranking
    return (phrases.select(pl.col(S.SOURCE).str.replace_all(r"\s+", "").alias(WORD),
                           (pl.col("tier") == first_tier).alias("in_tier"))
            .group_by(WORD).agg(pl.col("in_tier").any()))


def coverage_row(name: str, content: str, words: pl.DataFrame, sources: pl.DataFrame,
                 first_tier: str, examples: int) -> dict:
    """One list's coverage (a row of :data:`COVERAGE_SCHEMA`)."""
    found = (words.join(sources, on=WORD, how="left", maintain_order="left")
             .with_columns(pl.col("in_tier").is_not_null().alias("any"),
                           pl.col("in_tier").fill_null(False)))
    n = found.height
    with_tier, with_any = int(found["in_tier"].sum()), int(found["any"].sum())
    return {"list": name, "content": content, "words": n, "with_tier": with_tier,
            "with_any": with_any, "share": with_tier / n if n else None,
            "share_any": with_any / n if n else None, "tier": first_tier,
            "missing": found.filter(~pl.col("in_tier"))[WORD].head(examples).to_list()}


def coverage_table(ranking: pl.DataFrame, annotations: Path | None, first_tier: str,
                   top: int, examples: int) -> pl.DataFrame:
    """The coverage of the corpus list (when ``annotations`` exists) and of jieba's list."""
    sources = phrase_sources(ranking, first_tier)
    rows = []
    if annotations is not None and annotations.is_file():
        rows.append(coverage_row("corpus", " ".join(CORPUS_POS),
                                 top_words(corpus_frequencies(annotations), top), sources,
                                 first_tier, examples))
    rows.append(coverage_row("jieba", " ".join(JIEBA_TAGS), top_words(jieba_frequencies(), top),
                             sources, first_tier, examples))
    return pl.DataFrame(rows, schema=COVERAGE_SCHEMA)
