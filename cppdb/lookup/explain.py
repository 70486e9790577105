"""Why a pair has its score: the ranker's per-feature contributions and the English pivots.

``explain_pairs(database, text, target)`` finds the pair(s) as ``cppdb lookup TEXT`` would
and, for each row (one per LHS label or pattern source), returns an :class:`Explanation`:

* the model's score split into a base value and one contribution per feature — LightGBM's
  SHAP values (``predict(..., pred_contrib=True)``) of the run's own model
  (``RUN/ranking/ranker.json``, the model that scored it), in the model's raw units: score
  points for a regression, log-odds of "acceptable" for the ``acceptable`` objective
  (score = 1 + 4·σ(base + Σ)); an anchored model adds ``slope · x`` to its anchor
  feature's contribution and scales the trees' by its residual weight;
* the sameness penalties the ranking took off (the stored score is the model's minus them);
* the pivots with p(e|source), p(target|e) and their product (:mod:`cppdb.lookup.pivots`).

Whatever cannot be explained (an export keeps no features or model; an unranked run has no
score; a sentence pair has no pivots) is said in :attr:`Explanation.notes`, never guessed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.lookup.pivots import pivot_probabilities
from cppdb.rank.by_type import OTHER, TypedRanker, load_model

LOG_ODDS = "log-odds of acceptable"
SCORE_POINTS = "score points"
MODEL_FILE = Path(S.RANKING_DIR) / "ranker.json"


@dataclass
class Explanation:
    """One pair and what its score and pivots are made of."""

    pair: dict[str, Any]
    contributions: pl.DataFrame | None = None   # feature, value, contribution (|largest| first)
    base: float | None = None                   # the model's value before any feature
    model_score: float | None = None            # on the 1-5 scale, before the penalties
    unit: str = SCORE_POINTS
    pivots: pl.DataFrame | None = None          # pivot, p_e_given_source, p_target_given_e, product
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The explanation as JSON-ready data (``cppdb lookup --explain --json``)."""
        pair = {k: v for k, v in self.pair.items() if not isinstance(v, (bytes, bytearray))}
        return {"pair": pair, "model_score": self.model_score, "base": self.base,
                "unit": self.unit if self.contributions is not None else None,
                "penalty": self.penalty,
                "contributions": (self.contributions.to_dicts()
                                  if self.contributions is not None else None),
                "pivots": self.pivots.to_dicts() if self.pivots is not None else None,
                "notes": self.notes}

    @property
    def penalty(self) -> float | None:
        score = self.pair.get("score")
        if score is None or self.model_score is None:
            return None
        return self.model_score - float(score)


def explain_pairs(database: Any, text: str, target: str, type: str | None = None
                  ) -> list[Explanation]:
    """An explanation of each row of the pair ``text`` → ``target`` (BadInputError when the
    database has no such pair)."""
    rows = database.find_pair(text, target, type)
    if rows.height == 0:
        raise BadInputError(f"no pair {text!r} -> {target!r} in this database",
                            hint=f"`cppdb lookup {text}` lists the targets it has")
    source = database.source
    explained = []
    for index in range(rows.height):
        row = rows.slice(index, 1)
        explanation = Explanation(row.row(0, named=True))
        _add_model(explanation, row, source)
        pivots, note = pivot_probabilities(source.run_dir, explanation.pair)
        explanation.pivots = pivots
        if note:
            explanation.notes.append(note)
        explained.append(explanation)
    return explained


def _add_model(explanation: Explanation, row: pl.DataFrame, source: Any) -> None:
    if source.kind != "ranked-run":
        why = ("the run is not ranked yet: no model score (run `cppdb rank RUN`)"
               if source.kind == "run" else
               "this database is an export: it keeps neither the features nor the model "
               "that scored the pair; explain it in the run directory (`--db RUN`)")
        explanation.notes.append(why)
        return
    path = source.run_dir / MODEL_FILE
    if not path.is_file():
        explanation.notes.append(f"no model score explained: {path} is missing")
        return

    model = _model_of(load_model(path), explanation.pair.get(S.TYPE))
    missing = [f for f in model.features if f not in row.columns]
    if missing:
        explanation.notes.append(f"no model score explained: the run's features lack "
                                 f"{', '.join(missing)}")
        return
    contributions, base, score, unit = model_contributions(model, row)
    explanation.contributions, explanation.base = contributions, base
    explanation.model_score, explanation.unit = score, unit


def _model_of(model: Any, pair_type: str | None) -> Any:
    """The ranker that scored a pair of ``pair_type`` (a per-type file picks by type)."""
    if isinstance(model, TypedRanker):
        return model.models.get(pair_type or OTHER, model.models.get(OTHER))
    return model


def model_contributions(model: Any, row: pl.DataFrame
                        ) -> tuple[pl.DataFrame, float, float, str]:
    """(feature, value, contribution) of one row, largest |contribution| first; the base
    value; the model's score on the 1-5 scale; the unit of the contributions."""
    import lightgbm as lgb

    matrix = model.matrix(row)
    shap = lgb.Booster(model_str=model.model_text).predict(matrix, pred_contrib=True)[0]
    per_feature, base = np.asarray(shap[:-1], dtype=np.float64), float(shap[-1])
    if model.objective == "acceptable":
        raw = base + float(per_feature.sum())
        score, unit = 1.0 + 4.0 / (1.0 + math.exp(-raw)), LOG_ODDS
    else:
        unit = SCORE_POINTS
        if model.anchor is not None:
            weight = model.anchor.residual_weight
            per_feature = per_feature * weight
            base = model.anchor.intercept + weight * base
            at = model.features.index(model.anchor.feature)
            per_feature[at] += model.anchor.slope * matrix[0, at]
        score = base + float(per_feature.sum())
    frame = pl.DataFrame({"feature": list(model.features), "value": matrix[0].tolist(),
                          "contribution": per_feature.tolist()})
    order = frame.with_columns(pl.col("contribution").abs().alias("_size"))
    return (order.sort(["_size", "feature"], descending=[True, False]).drop("_size"),
            base, score, unit)
