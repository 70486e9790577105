"""One ranker per pair type, and the shipped default that uses it.

``rank.model``:

``"auto"``
    bilingual runs (no sentence pairs) use the shipped models (``"default"``); runs with
    sentence pairs (monolingual) train on their own weak labels (``"weak"``), as before.
``"default"``
    the shipped models by type: phrase and pattern pairs get the model trained on human
    judgements of bilingual pairs (``resources/bilingual_ranker.json``,
    :mod:`devtools.train_bilingual`); sentence pairs and raw text pairs (no type) get the
    sentence model (``resources/default_ranker.json``, :mod:`devtools.train_default`).
``"weak"``
    train on the run's weak labels (:mod:`cppdb.rank.weak_labels`).
a path
    a ranker JSON file: a single model (``cppdb-ranker/1``) or one by type
    (``cppdb-ranker-by-type/1``).

Scores of different types come from different models and are not comparable; ranks, tiers
and exports are per type, so they never need to be.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.io import write_json_atomic
from cppdb.rank.ranker import Ranker, read_model_json
from cppdb.shipped import shipped_file

FORMAT = "cppdb-ranker-by-type/1"
#: the model of every type without its own (and of rows without a type)
OTHER = "*"
BILINGUAL_MODEL = "bilingual_ranker.json"
SENTENCE_MODEL = "default_ranker.json"


@dataclass(frozen=True)
class TypedRanker:
    """A ranker per pair type (key :data:`OTHER` for the rest)."""

    models: dict[str, Ranker]

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f for m in self.models.values() for f in m.features))

    @property
    def training(self) -> dict[str, Any]:
        return {t: m.training.get("source", "") for t, m in self.models.items()}

    def predict(self, frame: pl.DataFrame, threads: int = 1) -> np.ndarray:
        types = (frame[S.TYPE].fill_null(OTHER) if S.TYPE in frame.columns
                 else pl.Series([OTHER] * frame.height))
        own = [t for t in self.models if t != OTHER]
        keys = types.set(~types.is_in(own), OTHER) if own else pl.Series([OTHER] * frame.height)
        out = np.zeros(frame.height)
        for key in keys.unique().to_list():
            if key not in self.models:
                raise BadInputError(f"the ranker has no model for {key!r} pairs",
                                    hint=f"give it a model for {key!r} or for every type ('*')")
            mask = (keys == key).to_numpy()
            out[mask] = self.models[key].predict(frame.filter(pl.Series(mask)), threads)
        return out

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        write_json_atomic(path, {"format": FORMAT,
                                 "models": {t: m.to_dict() for t, m in self.models.items()}})
        return path


def load_model(path: str | Path) -> Ranker | TypedRanker:
    """A ranker file of either format."""
    data = read_model_json(path)
    if data.get("format") == FORMAT:
        return TypedRanker({t: Ranker.from_dict(m, f"{path} [{t}]")
                            for t, m in data["models"].items()})
    return Ranker.from_dict(data, path)


def shipped_ranker() -> TypedRanker:
    """The shipped default: the judged bilingual model for phrases and patterns, the
    sentence model for everything else.  A checkout without ``bilingual_ranker.json`` (it is
    written by ``python -m devtools.train_bilingual``) ranks every type with the sentence
    model, as before the bilingual model existed; the run's ``ranker.json`` records which
    models were used."""
    models = {OTHER: Ranker.load(shipped_file(SENTENCE_MODEL))}
    if shipped_file(BILINGUAL_MODEL).exists():
        bilingual = Ranker.load(shipped_file(BILINGUAL_MODEL))
        models.update(phrase=bilingual, pattern=bilingual)
    return TypedRanker(models)


def resolve_model(setting: str, features: pl.DataFrame) -> tuple[str, str]:
    """``rank.model`` with ``"auto"`` decided by the run (module docstring), and why.

    ``auto`` picks the shipped models only when the run computed every feature they use
    (the bilingual model needs the embedding cosine): a run with ``features.embedding``
    off falls back to weak labels rather than failing or scoring with holes."""
    if setting != "auto":
        return setting, f"rank.model = {setting}"
    if (features[S.TYPE] == "sentence").any():
        return "weak", "auto: the run has sentence pairs (monolingual) -> weak labels"
    missing = sorted(set(shipped_ranker().features) - set(features.columns))
    if missing:
        return "weak", (f"auto: the shipped model needs {', '.join(missing)}, which this run "
                        "did not compute -> weak labels")
    return "default", "auto: bilingual run -> the shipped models"
