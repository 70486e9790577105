"""The ensemble P = Σ a_k P_k, its decoding into links, and tuning on gold (minimise AER).

Decoding (``decode``):
  * ``threshold`` — link every cell with P ≥ t.
  * ``grow-diag-final-and`` (and the other symmetrize methods) — read two directional
    alignments off P (each en word's best zh word, each zh word's best en word, when ≥ t),
    symmetrise them, then add every cell with P ≥ ``sure_threshold`` (confident many-to-many
    links the directional argmax cannot produce).
Weights are normalised to sum 1, so thresholds are on the scale of the matrices (0–1).
"""
from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cppdb.align.words.gold import (AlignmentCounts, GoldAlignment, gold_matrices,
                                    score_counts)
from cppdb.align.words.symmetrize import METHODS, directional_argmax, symmetrize
from cppdb.errors import BadInputError, ConfigError
from cppdb.io import write_json_atomic
from cppdb.shipped import shipped_file

DECODES = ("threshold",) + METHODS
DECISION_DECIMALS = 6


@dataclass(frozen=True)
class EnsembleParams:
    """Weights per aligner name, decoding method and its thresholds."""

    weights: tuple[tuple[str, float], ...]
    threshold: float
    decode: str = "threshold"
    sure_threshold: float = 1.01

    def __post_init__(self) -> None:
        if self.decode not in DECODES:
            raise ConfigError(f"unknown decode method '{self.decode}'",
                              hint=f"choose one of: {', '.join(DECODES)}")
        if any(w < 0 for _, w in self.weights):
            raise ConfigError("ensemble weights must be non-negative")
        if not any(w > 0 for _, w in self.weights):
            raise ConfigError("at least one ensemble weight must be positive")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.weights)

    def normalised(self) -> "EnsembleParams":
        total = sum(w for _, w in self.weights)
        weights = tuple((n, float(w / total)) for n, w in self.weights)
        return EnsembleParams(weights, self.threshold, self.decode, self.sure_threshold)

    def restricted(self, available: Sequence[str]) -> "EnsembleParams":
        """Keep only the aligners that are present (weights renormalised)."""
        kept = tuple((n, w) for n, w in self.weights if n in available and w > 0)
        if not kept:
            raise ConfigError("no ensemble weight for any available aligner "
                              f"({', '.join(available)})")
        return EnsembleParams(kept, self.threshold, self.decode, self.sure_threshold).normalised()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["weights"] = dict(self.weights)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "EnsembleParams":
        try:
            weights = tuple((str(k), float(v)) for k, v in dict(data["weights"]).items())
            return cls(weights, float(data["threshold"]), str(data.get("decode", "threshold")),
                       float(data.get("sure_threshold", 1.01)))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"ensemble parameters are malformed: {exc}",
                              hint="re-create them with `cppdb align-words tune`") from exc


def combine(matrices: Mapping[str, Sequence[np.ndarray]], params: EnsembleParams
            ) -> list[np.ndarray]:
    """P = Σ a_k P_k (normalised weights) for every pair."""
    params = params.normalised()
    names = params.names
    missing = [n for n in names if n not in matrices]
    if missing:
        raise ConfigError(f"no matrices from aligner(s) {', '.join(missing)}")
    n_pairs = {len(matrices[n]) for n in names}
    if len(n_pairs) != 1:
        raise BadInputError(f"aligners returned different numbers of matrices: {sorted(n_pairs)}")
    out = []
    for k in range(n_pairs.pop()):
        shapes = {matrices[n][k].shape for n in names}
        if len(shapes) != 1:
            raise BadInputError(f"pair {k + 1}: aligners disagree on the matrix shape {shapes}")
        total = np.zeros(shapes.pop())
        for name, weight in params.weights:
            total += weight * matrices[name][k]
        out.append(total)
    return out


def decode_matrix(prob: np.ndarray, params: EnsembleParams) -> np.ndarray:
    """Boolean links of one ensemble matrix."""
    # float sums differ in the last bits between processes (BLAS threads, Spark workers): a
    # near-tie must not decide a link differently there, so decide on 6 decimals
    prob = np.round(prob, DECISION_DECIMALS)
    if params.decode == "threshold":
        return prob >= params.threshold
    forward, backward = directional_argmax(prob, params.threshold)
    links = symmetrize(forward, backward, params.decode)
    return links | (prob >= params.sure_threshold)


def decode(probs: Sequence[np.ndarray], params: EnsembleParams) -> list[list[tuple[int, int]]]:
    out = []
    for prob in probs:
        ii, jj = np.nonzero(decode_matrix(prob, params))
        out.append(list(zip(ii.tolist(), jj.tolist())))
    return out


# -- tuning ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class TuneResult:
    params: EnsembleParams
    aer: float
    precision: float
    recall: float
    evaluations: int


def _link_counts(links: Sequence[np.ndarray], sure: Sequence[np.ndarray],
                 possible: Sequence[np.ndarray]) -> list[AlignmentCounts]:
    return [AlignmentCounts(int((a & s).sum()), int((a & p).sum()), int(a.sum()), int(s.sum()))
            for a, s, p in zip(links, sure, possible)]


def _simplex_grid(n: int, step: float) -> list[tuple[float, ...]]:
    ticks = int(round(1 / step))
    return [tuple(c / ticks for c in combo) for combo in itertools.product(range(ticks + 1),
                                                                           repeat=n)
            if sum(combo) == ticks]


def tune(matrices: Mapping[str, Sequence[np.ndarray]], gold: Sequence[GoldAlignment], *,
         decodes: Sequence[str] = ("threshold", "grow-diag-final-and"),
         weight_step: float = 0.1, thresholds: Sequence[float] | None = None,
         sure_thresholds: Sequence[float] = (0.5, 0.7, 0.9, 1.01),
         refine: bool = True) -> TuneResult:
    """Grid-search weights (simplex, ``weight_step``), decoding and thresholds for minimum
    AER on gold; then refine the weights around the best point with half the step."""
    names = tuple(matrices)
    if not names:
        raise ConfigError("tuning needs at least one aligner's matrices")
    shapes = [m.shape for m in matrices[names[0]]]
    sure, possible = gold_matrices(gold, shapes)
    thresholds = (tuple(float(t) for t in thresholds) if thresholds is not None
                  else tuple(np.round(np.arange(0.05, 0.96, 0.05), 3)))
    stacked = [np.stack([matrices[n][k] for n in names]) for k in range(len(shapes))]
    best: tuple[float, EnsembleParams, Any] | None = None
    evaluations = 0

    def search(weight_grid: Sequence[tuple[float, ...]]) -> None:
        nonlocal best, evaluations
        for weights in weight_grid:
            if sum(weights) <= 0:
                continue
            w = np.asarray(weights)
            probs = [np.tensordot(w, s, axes=1) for s in stacked]
            for decode_name, t in itertools.product(decodes, thresholds):
                base = EnsembleParams(tuple(zip(names, weights)), float(t), decode_name)
                base_links = [decode_matrix(p, base) for p in probs]
                sures = sure_thresholds if decode_name != "threshold" else (1.01,)
                for st in sures:
                    links = [b | (p >= st) for b, p in zip(base_links, probs)]
                    score = score_counts(_link_counts(links, sure, possible))
                    evaluations += 1
                    if best is None or score.aer < best[0] - 1e-12:
                        best = (score.aer, EnsembleParams(base.weights, base.threshold,
                                                          decode_name, float(st)), score)

    search(_simplex_grid(len(names), weight_step))
    if refine and len(names) > 1 and best is not None:
        center = np.asarray([w for _, w in best[1].weights])
        half = weight_step / 2
        local = {tuple(np.round(np.clip(center + half * np.asarray(d), 0, 1), 4))
                 for d in itertools.product((-1, 0, 1), repeat=len(names))}
        local_norm = [tuple(np.asarray(p) / sum(p)) for p in local if sum(p) > 0]
        decodes = (best[1].decode,)
        search(local_norm)
    if best is None:
        raise ConfigError("tuning evaluated no setting", hint="check thresholds and decodes")
    aer, params, score = best
    return TuneResult(params.normalised(), aer, score.precision, score.recall, evaluations)


def save_params(path: str | Path, result: TuneResult, extra: Mapping[str, Any]) -> None:
    write_json_atomic(path, {"ensemble": result.params.to_json(),
                             "dev": {"aer": round(result.aer, 4),
                                     "precision": round(result.precision, 4),
                                     "recall": round(result.recall, 4),
                                     "evaluations": result.evaluations},
                             **dict(extra)})


#: ``align_words.tuned_file = "builtin:NAME"`` names a tuned file shipped with cppdb
BUILTIN_PREFIX = "builtin:"


def builtin_tuned_file(name: str) -> Path:
    folder = shipped_file("ensembles")
    path = folder / f"{name}.json"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.json"))
        raise ConfigError(f"no built-in tuned ensemble '{name}'",
                          hint=f"choose one of: {', '.join(BUILTIN_PREFIX + k for k in known)}")
    return path


def tuned_file_path(setting: str | Path) -> Path:
    """The file ``align_words.tuned_file`` names (``builtin:NAME``: a shipped one)."""
    if str(setting).startswith(BUILTIN_PREFIX):
        return builtin_tuned_file(str(setting)[len(BUILTIN_PREFIX):])
    return Path(setting)


def load_params(path: str | Path) -> EnsembleParams:
    path = tuned_file_path(path)
    if not path.is_file():
        raise ConfigError(f"tuned ensemble file {path} does not exist",
                          hint="create it with `cppdb align-words tune --gold ...` or clear "
                               "align_words.tuned_file")
    try:
        data = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"tuned ensemble file {path} is not JSON: {exc}") from exc
    if "ensemble" not in data:
        raise ConfigError(f"tuned ensemble file {path} has no 'ensemble' entry")
    return EnsembleParams.from_json(data["ensemble"])
