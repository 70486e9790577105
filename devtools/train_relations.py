"""Train the shipped relation classifier on the blind relation judgements:
``python -m devtools.train_relations --key KEY.parquet [--key MORE.parquet] \\
    --judgements data/labels/relation_judgements.tsv [--out cppdb/resources/relation_model.json]``.

The keys are those ``devtools.relation_sheets draw`` wrote (every ``f_*`` feature of the
judged pairs, from their runs); the judgements are ``join``'s output.  Before fitting on every
judged pair, the same recipe is measured by grouped 5-fold CV (folds by source phrase) and
leave-one-domain-out, with the decision the product makes (:func:`cppdb.rank.relations.
decide`: the rule's Exclusion, else the best of the other five).  ``--equivalence-precision
P`` (default 0: none) gives Equivalence only above the smallest threshold at which it reaches
precision P: for the model chosen on every out-of-fold prediction, for each CV fold on the
other folds' (so the reported precision is not the one it was chosen for).  Whatever the
model's own, the confident operating point for precision 0.87 is measured the same way and
recorded (``confident_equivalence``: the probability a user can filter on).  The per-class
tables go into the model's ``training`` block and are printed.  The language-model features are left
out (:mod:`cppdb.rank.relations`).  Seeded; identical inputs give identical trees.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

from cppdb.features.table import LM_FEATURES
from cppdb.rank import exclusion, relation_cv, relations

SEED = 46
FOLDS = 5
#: the Equivalence precision of the confident operating point recorded with every model
CONFIDENT_PRECISION = 0.87


def judged_frame(keys: list[str], judgements: str) -> pl.DataFrame:
    """The judged pairs with their run features and every ``r_*`` feature."""
    judged = pl.read_csv(judgements, separator="\t", infer_schema=False).select(
        "id", "relation")
    frame = pl.concat([pl.read_parquet(k) for k in keys], how="diagonal_relaxed")
    return relations.relation_features(frame.join(judged, on="id").sort("id"))


def shipped_decision_scores(frame: pl.DataFrame, fold: np.ndarray, columns: list[str],
                            precision: float) -> tuple[relation_cv.Scores, list[str]]:
    """Per-class scores of :func:`relations.decide` on out-of-fold probabilities, each
    fold's Equivalence threshold chosen on the other folds' rows; and the labels."""
    probabilities = relation_cv.out_of_fold_probabilities(frame, fold, SEED, columns)
    rule = exclusion.exclusion_evidence(frame).is_not_null().to_numpy()
    gold = np.array(frame[relations.RELATION].to_list())
    labels = np.empty(frame.height, dtype=object)
    for value in np.unique(fold):
        held, other = fold == value, fold != value
        threshold = relation_cv.equivalence_threshold_for(probabilities[other], gold[other],
                                                        rule[other], precision)
        labels[held], _ = relations.decide(probabilities[held], rule[held], threshold)
    return relation_cv.scores(list(gold), list(labels)), list(labels)


def summary_of(result: relation_cv.Scores) -> dict:
    return {"macro_f1": round(result.macro_f1, 4),
            "per_class": [{k: (round(v, 4) if isinstance(v, float) else v)
                           for k, v in row.items()} for row in result.per_class.to_dicts()]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", action="append", required=True,
                        help="key.parquet written by relation_sheets draw (repeatable)")
    parser.add_argument("--judgements", required=True, help="the TSV relation_sheets join wrote")
    parser.add_argument("--out", default=str(relations.shipped_model_path()))
    parser.add_argument("--equivalence-precision", type=float, default=0.0,
                        help="the precision Equivalence must reach (0: plain argmax)")
    args = parser.parse_args(argv)
    frame = judged_frame(args.key, args.judgements)
    columns = relations.model_columns(frame, without=LM_FEATURES)
    fold = relation_cv.grouped_folds(frame, FOLDS, SEED)
    grouped, _ = shipped_decision_scores(frame, fold, columns, args.equivalence_precision)
    confident, _ = shipped_decision_scores(frame, fold, columns, CONFIDENT_PRECISION)
    by_domain = {}
    for held in sorted(frame["domain"].unique().to_list()):
        part = frame["domain"] == held
        _, labels = shipped_decision_scores(frame, part.cast(pl.Int8).to_numpy(), columns,
                                            args.equivalence_precision)
        by_domain[held] = summary_of(relation_cv.scores(
            frame[relations.RELATION].filter(part).to_list(),
            [x for x, keep in zip(labels, part, strict=True) if keep]))
    probabilities = relation_cv.out_of_fold_probabilities(frame, fold, SEED, columns)
    threshold = relation_cv.equivalence_threshold_for(
        probabilities, np.array(frame[relations.RELATION].to_list()),
        exclusion.exclusion_evidence(frame).is_not_null().to_numpy(), args.equivalence_precision)
    training = {"judged_pairs": frame.height, "domains": sorted(by_domain), "seed": SEED,
                "equivalence_precision": args.equivalence_precision,
                "grouped_cv": summary_of(grouped),
                "confident_equivalence": {
                    "precision_asked": CONFIDENT_PRECISION,
                    "threshold": relation_cv.equivalence_threshold_for(
                        probabilities, np.array(frame[relations.RELATION].to_list()),
                        exclusion.exclusion_evidence(frame).is_not_null().to_numpy(),
                        CONFIDENT_PRECISION),
                    "grouped_cv": summary_of(confident)},
                "leave_one_domain_out": by_domain}
    model = relations.fit(frame, columns, SEED, training, threshold)
    model.save(args.out)
    with pl.Config(tbl_rows=10, tbl_cols=10, tbl_width_chars=120):
        print(f"n={frame.height}, {len(columns)} features; Equivalence threshold {threshold}")
        for name, result in (("as shipped", grouped),
                             (f"Equivalence at precision {CONFIDENT_PRECISION}", confident)):
            print(f"grouped {FOLDS}-fold CV, {name}: macro-F1 {result.macro_f1:.3f}")
            print(result.per_class)
        print(grouped.confusion)
        for held, result in by_domain.items():
            print(f"held out {held}: macro-F1 {result['macro_f1']}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
