"""Train the shipped relation classifier on the blind relation judgements:
``python -m devtools.train_relations --key KEY.parquet [--key MORE.parquet] \\
    --judgements data/labels/relation_judgements.tsv [--out cppdb/resources/relation_model.json]``.

The keys are those ``devtools.relation_sheets draw`` wrote (every ``f_*`` feature of the
judged pairs, from their runs); the judgements are ``join``'s output.  Before fitting on every
judged pair, the same recipe is measured by grouped 5-fold CV (folds by source phrase) and
leave-one-domain-out, with the decision the product makes (:func:`cppdb.rank.relations.
decide`: the rule's Exclusion, else the best of the other five); the per-class table goes
into the model's ``training`` block and is printed.  The language-model features are left
out (:mod:`cppdb.rank.relations`).  Seeded; identical inputs give identical trees.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

from cppdb.features.table import LM_FEATURES
from cppdb.rank import exclusion, relations

SEED = 46
FOLDS = 5


def judged_frame(keys: list[str], judgements: str) -> pl.DataFrame:
    """The judged pairs with their run features and every ``r_*`` feature."""
    judged = pl.read_csv(judgements, separator="\t", infer_schema=False).select(
        "id", "relation")
    frame = pl.concat([pl.read_parquet(k) for k in keys], how="diagonal_relaxed")
    return relations.relation_features(frame.join(judged, on="id").sort("id"))


def shipped_decision_scores(frame: pl.DataFrame, fold: np.ndarray, columns: list[str]
                            ) -> relations.Scores:
    """Per-class scores of :func:`relations.decide` on out-of-fold probabilities."""
    probabilities = relations.out_of_fold_probabilities(frame, fold, SEED, columns)
    rule = exclusion.exclusion_evidence(frame).is_not_null().to_numpy()
    labels, _ = relations.decide(probabilities, rule)
    return relations.scores(frame[relations.RELATION].to_list(), labels)


def summary_of(result: relations.Scores) -> dict:
    return {"macro_f1": round(result.macro_f1, 4),
            "per_class": [{k: (round(v, 4) if isinstance(v, float) else v)
                           for k, v in row.items()} for row in result.per_class.to_dicts()]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", action="append", required=True,
                        help="key.parquet written by relation_sheets draw (repeatable)")
    parser.add_argument("--judgements", required=True, help="the TSV relation_sheets join wrote")
    parser.add_argument("--out", default=str(relations.shipped_model_path()))
    args = parser.parse_args(argv)
    frame = judged_frame(args.key, args.judgements)
    columns = relations.model_columns(frame, without=LM_FEATURES)
    grouped = shipped_decision_scores(frame, relations.grouped_folds(frame, FOLDS, SEED), columns)
    domains = sorted(frame["domain"].unique().to_list())
    rule = exclusion.exclusion_evidence(frame).is_not_null().to_numpy()
    by_domain = {}
    for held in domains:
        part = frame["domain"] == held
        probabilities = relations.out_of_fold_probabilities(
            frame, part.cast(pl.Int8).to_numpy(), SEED, columns)
        labels, _ = relations.decide(probabilities, rule)
        by_domain[held] = summary_of(relations.scores(
            frame[relations.RELATION].filter(part).to_list(),
            [x for x, keep in zip(labels, part, strict=True) if keep]))
    training = {"judged_pairs": frame.height, "domains": domains, "seed": SEED,
                "grouped_cv": summary_of(grouped), "leave_one_domain_out": by_domain}
    model = relations.fit(frame, columns, SEED, training)
    model.save(args.out)
    with pl.Config(tbl_rows=10, tbl_cols=10, tbl_width_chars=120):
        print(f"n={frame.height}, {len(columns)} features; grouped {FOLDS}-fold CV, as shipped: "
              f"macro-F1 {grouped.macro_f1:.3f}")
        print(grouped.per_class)
        print(grouped.confusion)
        for held, result in by_domain.items():
            print(f"held out {held}: macro-F1 {result['macro_f1']}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
