"""How well the relation classifier (:mod:`cppdb.rank.relations`) does on judged pairs.

Grouped cross-validation (folds by source phrase, so a phrase never helps predict itself)
and leave-one-domain-out, per-class precision and recall with the confusion matrix, and the
Equivalence threshold a wanted precision needs.  Used by ``devtools.train_relations`` and
``devtools.relation_sheets evaluate``; the product only reads the model they write.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.rank.relations import (EQUIVALENCE, RELATION, RELATIONS, decide, model_columns,
                                  predict, train)


def grouped_folds(frame: pl.DataFrame, folds: int, seed: int) -> np.ndarray:
    """Fold number per row; rows sharing a source phrase share a fold, classes spread."""
    from sklearn.model_selection import StratifiedGroupKFold

    groups = frame[S.SOURCE].str.replace_all(r"\s+", "").to_numpy()
    splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    fold = np.zeros(frame.height, dtype=int)
    for index, (_, test) in enumerate(splitter.split(np.zeros(frame.height),
                                                     frame[RELATION].to_numpy(), groups)):
        fold[test] = index
    return fold


def out_of_fold_probabilities(frame: pl.DataFrame, fold: np.ndarray, seed: int = 46,
                              columns: list[str] | None = None) -> np.ndarray:
    """Each row's probabilities (columns: RELATIONS) from a model that never saw its fold."""
    columns = columns if columns is not None else model_columns(frame)
    probabilities = np.zeros((frame.height, len(RELATIONS)))
    for value in np.unique(fold):
        test = fold == value
        model = train(frame.filter(pl.Series(~test)), columns, seed)
        probabilities[test] = predict(model, frame.filter(pl.Series(test)), columns)
    return probabilities


def out_of_fold(frame: pl.DataFrame, fold: np.ndarray, seed: int = 46) -> list[str]:
    """Each row's most probable relation from a model that never saw its fold."""
    return [RELATIONS[i] for i in out_of_fold_probabilities(frame, fold, seed).argmax(axis=1)]


def equivalence_threshold_for(probabilities: np.ndarray, gold: np.ndarray,
                              rule_exclusion: np.ndarray, precision: float,
                              min_predicted: int = 20) -> float:
    """The smallest threshold (steps of 0.01) at which :func:`decide`'s Equivalence is
    ``gold`` Equivalence at least ``precision`` of the time, over at least ``min_predicted``
    rows; 0.0 when ``precision`` is 0, 1.0 when no threshold reaches it."""
    if precision <= 0:
        return 0.0
    for threshold in np.round(np.arange(0.0, 1.0, 0.01), 2):
        labels, _ = decide(probabilities, rule_exclusion, float(threshold))
        said = np.array(labels) == EQUIVALENCE
        if said.sum() >= min_predicted and (gold[said] == EQUIVALENCE).mean() >= precision:
            return float(threshold)
    return 1.0


@dataclass(frozen=True)
class Scores:
    per_class: pl.DataFrame         # relation, support, precision, recall, f1
    macro_f1: float                 # over the classes present in the gold
    confusion: pl.DataFrame         # gold relation × predicted relation counts


def scores(gold: list[str], predicted: list[str]) -> Scores:
    """Per-class precision/recall/F1 (0 where undefined), macro-F1, confusion matrix."""
    pairs = pl.DataFrame({"gold": gold, "predicted": predicted})
    rows = []
    for relation in RELATIONS:
        tp = pairs.filter((pl.col("gold") == relation) & (pl.col("predicted") == relation)).height
        support = pairs.filter(pl.col("gold") == relation).height
        guessed = pairs.filter(pl.col("predicted") == relation).height
        precision = tp / guessed if guessed else 0.0
        recall = tp / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        rows.append((relation, support, guessed, precision, recall, f1))
    per_class = pl.DataFrame(rows, orient="row", schema=[RELATION, "support", "predicted",
                                                         "precision", "recall", "f1"])
    present = per_class.filter(pl.col("support") > 0)
    confusion = (pairs.group_by("gold", "predicted").len()
                 .pivot(on="predicted", index="gold", values="len").fill_null(0))
    for relation in RELATIONS:
        if relation not in confusion.columns:
            confusion = confusion.with_columns(pl.lit(0, dtype=pl.UInt32).alias(relation))
    order = pl.DataFrame({"gold": list(RELATIONS)})
    confusion = order.join(confusion, on="gold", how="left").fill_null(0)
    return Scores(per_class, float(present["f1"].mean() or 0.0),
                  confusion.select("gold", *RELATIONS))


def leave_one_domain_out(frame: pl.DataFrame, domain: str = "domain", seed: int = 46
                         ) -> dict[str, Scores]:
    """Per held-out domain: a model trained on every other domain, scored on that one."""
    values = sorted(frame[domain].unique().to_list())
    fold = frame[domain].replace_strict(values, list(range(len(values)))).to_numpy()
    predicted = out_of_fold(frame, fold, seed)
    result = {}
    for value in values:
        held = (frame[domain] == value).to_numpy()
        result[value] = scores(list(frame[RELATION].filter(pl.Series(held))),
                               [p for p, h in zip(predicted, held, strict=True) if h])
    return result
