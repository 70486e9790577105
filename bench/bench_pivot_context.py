"""Does the English context of a shared pivot tell acceptable pairs from pivot polysemy?

A development diagnostic for the paraphrases-that-differ issue (not a product feature yet).
Half of the unacceptable news pairs pivot two senses of one English word together
(能源 / 精力 through "energy"); the two sides then occur in different English sentences. For
each judged phrase pair (s, t) of a run's corpus and each English phrase e both sides align
to, the English content lemmas of the sentences where s↔e occurs (the pivot span left out)
form one tf·idf bag and those of t↔e another; the pair's score is the best cosine over its
shared pivots (and the support-weighted mean).  Reported: ROC AUC of each score against
rating ≥ 3, and the cross-validated AUC of a logistic model on the pivot evidence
(p(t|s), p(s|t), pivots, sentences, count, length difference) with and without it.

    python -m bench.bench_pivot_context --run RUN --labels data/labels/bilingual_judgements.tsv \
        --label-run news20k

RUN holds ``phrase_occurrences.parquet``, ``phrase_pairs.parquet`` and
``annotations.parquet`` of a corpus that contains the judged run's sentences.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

from bench.common import record
from cppdb.align.words.english import STOPWORDS

EVIDENCE = ["p_t_given_s", "p_s_given_t", "n_pivots", "n_sentences", "count"]


def judged_phrases(labels: Path, run_prefix: str) -> pl.DataFrame:
    frame = pl.read_csv(labels, separator="\t", quote_char=None)
    frame = frame.filter((pl.col("type") == "phrase") & pl.col("run").str.starts_with(run_prefix))
    return (frame.with_columns(pl.col("source").str.replace_all(" ", "").alias("s"),
                               pl.col("target").str.replace_all(" ", "").alias("t"))
            .select("s", "t", "rating", "set").unique(["s", "t", "set"]))


def context_bags(run: Path, sides: list[str]) -> pl.DataFrame:
    """Unit tf·idf vectors (side, en, word, u) of the English contexts of each side↔pivot."""
    occurrences = (pl.scan_parquet(run / "phrase_occurrences.parquet")
                   .filter(pl.col("kind") == "phrase")
                   .with_columns(pl.col("zh").str.replace_all(" ", "").alias("side"))
                   .filter(pl.col("side").is_in(sides))
                   .select("id", "side", "en", "en_start", "en_end").collect())
    lemmas = (pl.scan_parquet(run / "annotations.parquet").select("id", "en_lemma")
              .filter(pl.col("id").is_in(occurrences["id"].unique().implode())).collect())
    words = (occurrences.with_row_index("occurrence").join(lemmas, on="id")
             .explode("en_lemma")
             .with_columns(pl.int_range(pl.len()).over("occurrence").alias("position"),
                           pl.col("en_lemma").str.to_lowercase().alias("word"))
             .filter(((pl.col("position") < pl.col("en_start"))
                      | (pl.col("position") >= pl.col("en_end")))
                     & pl.col("word").str.contains(r"^[a-z][a-z\-]+$")
                     & ~pl.col("word").is_in(sorted(STOPWORDS)))
             .unique(["occurrence", "word"]))
    idf = (words.group_by("word").agg(pl.col("id").n_unique().alias("df"))
           .with_columns((pl.lit(lemmas.height) / pl.col("df")).log().alias("idf")))
    bags = (words.group_by("side", "en", "word").len().join(idf, on="word")
            .with_columns((pl.col("len") * pl.col("idf")).alias("x")))
    norms = bags.group_by("side", "en").agg((pl.col("x") ** 2).sum().sqrt().alias("norm"),
                                            pl.col("len").sum().alias("mass"))
    return bags.join(norms, on=["side", "en"]).with_columns(
        (pl.col("x") / pl.col("norm")).alias("u"))


def context_scores(pairs: pl.DataFrame, bags: pl.DataFrame) -> pl.DataFrame:
    mass = bags.select("side", "en", "mass").unique()
    shared = (pairs.join(mass.rename({"side": "s", "mass": "mass_s"}), on="s")
              .join(mass.rename({"side": "t", "mass": "mass_t"}), on=["t", "en"])
              .with_columns(pl.min_horizontal("mass_s", "mass_t").alias("support")))
    vectors = bags.select("side", "en", "word", "u")
    dots = (shared.select("s", "t", "en")
            .join(vectors.rename({"side": "s", "u": "u_s"}), on=["s", "en"])
            .join(vectors.rename({"side": "t", "u": "u_t"}), on=["t", "en", "word"])
            .group_by("s", "t", "en").agg((pl.col("u_s") * pl.col("u_t")).sum().alias("cos")))
    per_pivot = shared.join(dots, on=["s", "t", "en"], how="left").with_columns(
        pl.col("cos").fill_null(0.0))
    return per_pivot.group_by("s", "t").agg(
        pl.col("cos").max().alias("context_cos_max"),
        ((pl.col("cos") * pl.col("support")).sum() / pl.col("support").sum())
        .alias("context_cos_mean"))


def auc(score: np.ndarray, good: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(good, score))


def cv_auc(features: np.ndarray, good: np.ndarray, seeds: int = 5) -> tuple[float, float]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    x = (features - features.mean(0)) / (features.std(0) + 1e-9)
    scores = [auc(cross_val_predict(LogisticRegression(max_iter=1000), x, good,
                                    cv=StratifiedKFold(5, shuffle=True, random_state=seed),
                                    method="predict_proba")[:, 1], good)
              for seed in range(seeds)]
    return float(np.mean(scores)), float(np.std(scores))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--labels", type=Path, required=True)
    parser.add_argument("--label-run", default="news20k", help="prefix of the labels' run")
    args = parser.parse_args()
    pairs = judged_phrases(args.labels, args.label_run)
    bags = context_bags(args.run, sorted(set(pairs["s"]) | set(pairs["t"])))
    evidence = (pl.scan_parquet(args.run / "phrase_pairs.parquet")
                .with_columns(pl.col("source").str.replace_all(" ", "").alias("s"),
                              pl.col("target").str.replace_all(" ", "").alias("t"))
                .join(pairs.lazy().select("s", "t").unique(), on=["s", "t"])
                .group_by("s", "t").agg(pl.col(c).max() for c in EVIDENCE).collect())
    table = (pairs.join(context_scores(pairs, bags), on=["s", "t"])
             .join(evidence, on=["s", "t"])
             .with_columns((pl.col("s").str.len_chars() - pl.col("t").str.len_chars()).abs()
                           .alias("length_difference")))
    good = (table["rating"] >= 3).to_numpy()
    base = np.log(table.select(EVIDENCE).to_numpy().astype(float) + 1e-6)
    base = np.column_stack([base, table["length_difference"].to_numpy()])
    context = table.select("context_cos_max", "context_cos_mean").to_numpy()
    row = {"run": str(args.run), "labels": args.label_run, "judged_pairs": pairs.height,
           "scored_pairs": table.height, "acceptable": round(float(good.mean()), 3),
           "auc_context_cos_max": round(auc(context[:, 0], good), 3),
           "auc_context_cos_mean": round(auc(context[:, 1], good), 3)}
    for name, features in (("evidence", base), ("evidence_plus_context",
                                                np.column_stack([base, context]))):
        mean, spread = cv_auc(features, good)
        row[f"cv_auc_{name}"] = f"{mean:.3f} ± {spread:.3f}"
    record("pivot_context", row)


if __name__ == "__main__":
    main()
