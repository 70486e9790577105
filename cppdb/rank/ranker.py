"""The LightGBM ranker: from the ``f_*`` features to a score on the 1–5 paraphrase scale.

Two objectives (``RankerSettings.objective``): ``regression`` fits the 1–5 labels;
``acceptable`` fits the probability that a pair is rated acceptable (≥ 3, the paper's Table 5
line) and scores ``1 + 4·p``, so a score keeps the 1–5 scale that the ranking's penalties
are written in.  Ranking by the chance of being acceptable is what a tier's acceptable share
rewards; an expected rating also rewards telling a 5 from a 4.

A saved ranker is one JSON file (format ``cppdb-ranker/1``): the feature names in model
order, monotone constraints, the training summary, feature importances and the LightGBM
model text.  Predicting with a ranker checks that every feature it was trained on exists.

An *anchored* ranker (optional key ``anchor``) predicts
``intercept + slope · x[feature] + residual_weight · trees(x)``: a linear calibration of one
trusted similarity (the embedding cosine) plus the trees' correction, which were boosted
from that calibration (LightGBM ``init_score``) and are scaled by ``residual_weight``.
With ``residual_weight = 0`` it ranks exactly like the anchor feature; the weight says how
much the model may move away from it (chosen by cross-validation on human labels, see
:mod:`devtools.train_default`).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cppdb.defaults import toml_defaults
from cppdb.errors import BadInputError
from cppdb.io import write_json_atomic
from cppdb.rank.judged import ACCEPTABLE

_RANK = toml_defaults("rank")

FORMAT = "cppdb-ranker/1"
SCORE = "score"
OBJECTIVES = {"regression": "regression", "acceptable": "binary"}   # ours → LightGBM's


@dataclass(frozen=True)
class RankerSettings:
    num_leaves: int = _RANK["num_leaves"]
    n_estimators: int = _RANK["n_estimators"]
    learning_rate: float = _RANK["learning_rate"]
    min_data_in_leaf: int = _RANK["min_data_in_leaf"]
    feature_fraction: float = _RANK["feature_fraction"]
    bagging_fraction: float = _RANK["bagging_fraction"]
    lambda_l2: float = _RANK["lambda_l2"]
    #: LightGBM/OpenMP threads.  1 by default: OpenMP workers busy-wait, and on a loaded or
    #: shared machine 2 threads measured 40x slower than 1; raise it on a dedicated machine
    threads: int = _RANK["threads"]
    seed: int = _RANK["seed"]
    #: features whose effect must not decrease (cosine: more similar is never worse)
    increasing: tuple[str, ...] = _RANK["increasing"]
    #: features whose effect must not increase (a detected meaning change is never better)
    decreasing: tuple[str, ...] = _RANK["decreasing"]
    #: ``regression`` on the 1–5 labels or ``acceptable``: P(rating ≥ 3) (module docstring)
    objective: str = _RANK["objective"]


@dataclass(frozen=True)
class Anchor:
    """The linear base of an anchored ranker (see the module docstring)."""

    feature: str
    intercept: float
    slope: float
    residual_weight: float = 1.0

    def base(self, values: np.ndarray) -> np.ndarray:
        return self.intercept + self.slope * np.asarray(values, dtype=np.float64)


def fit_anchor(values: np.ndarray, labels: np.ndarray, feature: str,
               residual_weight: float = 1.0) -> Anchor:
    """Least-squares line ``label ≈ intercept + slope · value``; the slope is kept ≥ 0 so
    that the base never ranks a more similar pair lower."""
    values = np.asarray(values, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.float64)
    ok = np.isfinite(values)
    if ok.sum() < 2 or np.ptp(values[ok]) == 0:
        raise BadInputError(f"cannot fit the anchor on feature {feature}: fewer than two "
                            "distinct values")
    slope, intercept = np.polyfit(values[ok], labels[ok], 1)
    if slope < 0:
        slope, intercept = 0.0, float(labels[ok].mean())
    return Anchor(feature, float(intercept), float(slope), float(residual_weight))


@dataclass(frozen=True)
class Ranker:
    """A trained model and what it needs (feature names) and knows (training summary)."""

    features: tuple[str, ...]
    model_text: str
    training: dict[str, Any] = field(default_factory=dict)
    importance: dict[str, float] = field(default_factory=dict)
    anchor: Anchor | None = None

    def _booster(self) -> Any:
        cached = self.__dict__.get("_cached_booster")
        if cached is None:
            import lightgbm as lgb

            cached = lgb.Booster(model_str=self.model_text)
            object.__setattr__(self, "_cached_booster", cached)
        return cached

    def matrix(self, frame: pl.DataFrame) -> np.ndarray:
        missing = [f for f in self.features if f not in frame.columns]
        if missing:
            raise BadInputError(
                f"the ranker needs feature(s) {', '.join(missing)} that were not computed",
                hint="enable the matching feature backends (features.language_model / "
                     "features.embedding) or use a model trained without them")
        return (frame.select([pl.col(f).cast(pl.Float64) for f in self.features])
                .to_numpy().astype(np.float64))

    @property
    def objective(self) -> str:
        lightgbm = self.training.get("params", {}).get("objective", "regression")
        return next((ours for ours, theirs in OBJECTIVES.items() if theirs == lightgbm),
                    "regression")

    def predict(self, frame: pl.DataFrame, threads: int = 1) -> np.ndarray:
        if frame.height == 0:
            return np.zeros(0)
        matrix = self.matrix(frame)
        trees = self._booster().predict(matrix, num_threads=threads)
        if self.objective == "acceptable":
            return 1.0 + 4.0 * trees         # P(acceptable) on the 1–5 scale
        if self.anchor is None:
            return trees
        values = matrix[:, self.features.index(self.anchor.feature)]
        return self.anchor.base(values) + self.anchor.residual_weight * trees

    def with_residual_weight(self, weight: float) -> Ranker:
        """The same anchored model with another weight on the trees' correction."""
        if self.anchor is None:
            raise BadInputError("only an anchored ranker has a residual weight")
        return replace(self, anchor=replace(self.anchor, residual_weight=float(weight)))

    def to_dict(self) -> dict[str, Any]:
        data = {"format": FORMAT, "features": list(self.features),
                "training": self.training, "importance": self.importance,
                "model": self.model_text}
        if self.anchor is not None:
            data["anchor"] = asdict(self.anchor)
        return data

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        write_json_atomic(path, self.to_dict())
        return path

    @classmethod
    def from_dict(cls, data: dict[str, Any], origin: str | Path) -> Ranker:
        if data.get("format") != FORMAT:
            raise BadInputError(f"{origin} is not a cppdb ranker (format {data.get('format')!r})",
                                hint=f"expected a JSON file with format '{FORMAT}'")
        anchor = Anchor(**data["anchor"]) if data.get("anchor") else None
        if anchor is not None and anchor.feature not in data["features"]:
            raise BadInputError(f"{origin}: anchor feature {anchor.feature} is not a model "
                                "feature")
        return cls(tuple(data["features"]), data["model"], data.get("training", {}),
                   data.get("importance", {}), anchor)

    @classmethod
    def load(cls, path: str | Path) -> Ranker:
        path = Path(path)
        if not path.is_file():
            raise BadInputError(f"ranker model {path} does not exist",
                                hint="train one with `cppdb rank RUN` (it writes ranker.json) "
                                     "or omit --model to use the shipped default")
        return cls.from_dict(read_model_json(path), path)


RANKER_HINT = ("train one with `cppdb rank RUN` (it writes ranker.json) or omit --model to use "
               "the shipped default")


def read_model_json(path: str | Path, what: str = "ranker model",
                    hint: str = RANKER_HINT) -> dict[str, Any]:
    """A model file's JSON (BadInputError naming ``what`` when missing or not JSON)."""
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"{what} {path} does not exist", hint=hint)
    try:
        return json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{what} {path} is not valid JSON: {exc}") from exc


def train_ranker(frame: pl.DataFrame, labels: np.ndarray, features: list[str],
                 settings: RankerSettings = RankerSettings(),
                 summary: dict[str, Any] | None = None,
                 weights: np.ndarray | None = None, anchor: Anchor | None = None) -> Ranker:
    """Fit LightGBM on ``frame[features]`` → ``labels`` (1–5 scale) with the settings'
    objective (``acceptable``: the labels are turned into rating ≥ 3 or not).

    With ``anchor`` the trees are boosted from the anchor's linear base (they learn the
    residual) and the returned ranker is anchored (regression only)."""
    import lightgbm as lgb

    if settings.objective not in OBJECTIVES:
        raise BadInputError(f"unknown ranker objective {settings.objective!r}",
                            hint=f"choose one of {', '.join(OBJECTIVES)}")
    if anchor is not None and settings.objective != "regression":
        raise BadInputError("an anchored ranker is a regression",
                            hint="train it with objective = \"regression\"")
    labels = np.asarray(labels, dtype=np.float64)
    if frame.height != len(labels):
        raise BadInputError(f"{frame.height} feature rows but {len(labels)} labels")
    if frame.height < 10 or len(np.unique(labels)) < 2:
        raise BadInputError(
            f"cannot train a ranker on {frame.height} pairs with "
            f"{len(np.unique(labels))} distinct label value(s)",
            hint="give at least 10 labelled pairs with different scores")
    x = frame.select([pl.col(f).cast(pl.Float64) for f in features]).to_numpy()
    target = labels if settings.objective == "regression" else (labels >= ACCEPTABLE) * 1.0
    if settings.objective == "acceptable" and len(np.unique(target)) < 2:
        raise BadInputError(f"cannot train an 'acceptable' ranker: all {len(labels)} labels "
                            "are on one side of the acceptable line (rating 3)",
                            hint="give judged pairs of both kinds, or objective = regression")
    params = {
        "objective": OBJECTIVES[settings.objective], "num_leaves": settings.num_leaves,
        "learning_rate": settings.learning_rate, "min_data_in_leaf": settings.min_data_in_leaf,
        "feature_fraction": settings.feature_fraction,
        "bagging_fraction": settings.bagging_fraction, "bagging_freq": 1,
        "lambda_l2": settings.lambda_l2, "seed": settings.seed, "deterministic": True,
        "verbosity": -1, "num_threads": settings.threads,
        "monotone_constraints": [1 if f in settings.increasing
                                 else -1 if f in settings.decreasing else 0 for f in features],
        "min_data_in_bin": 1,
    }
    init_score = None
    if anchor is not None:
        if anchor.feature not in features:
            raise BadInputError(f"anchor feature {anchor.feature} is not among the features")
        init_score = anchor.base(x[:, list(features).index(anchor.feature)])
    data = lgb.Dataset(x, label=target, weight=weights, feature_name=list(features),
                       init_score=init_score, free_raw_data=True)
    booster = lgb.train(params, data, num_boost_round=settings.n_estimators)
    gains = booster.feature_importance(importance_type="gain")
    total = float(gains.sum()) or 1.0
    importance = {f: round(float(g) / total, 6) for f, g in zip(features, gains)}
    training = {"pairs": int(frame.height), "label_mean": float(labels.mean()),
                "label_counts": {str(k): int(v) for k, v in
                                 zip(*np.unique(labels, return_counts=True))},
                "params": {k: v for k, v in params.items() if k != "monotone_constraints"},
                "increasing": [f for f in features if f in settings.increasing],
                "decreasing": [f for f in features if f in settings.decreasing],
                **(summary or {})}
    return Ranker(tuple(features), booster.model_to_string(), training, importance, anchor)


def usable_features(frame: pl.DataFrame, candidates: list[str]) -> list[str]:
    """Candidates present in ``frame`` and not entirely null (a constant-null column
    carries no information and would make the model depend on a feature it never saw)."""
    return [f for f in candidates
            if f in frame.columns and frame[f].null_count() < frame.height]
