"""How likely a reader rejects a kept compression: a small LightGBM model over what the build
already knows (the parse of S, which tokens were kept, the headline), fitted on
blind judgements of earlier builds (``devtools/fit_compression_risk.py``,
``data/labels/compression_judgements.md``).

The sentence check rejects what is provably not a sentence; this model catches what a rule
cannot decide alone: a verb, preposition or conjunction dropped between kept words, two
clauses run together where their comma was dropped, headline characters that S has and the
compression lost.  Every feature is structural (UPOS, relations, shares), not a word of the
training register.  A compression whose risk is above
``compression.max_risk`` is rejected with rule ``unacceptable_risk`` (kept in the records and
``rejected.jsonl``, never lost).
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from cppdb.errors import BadInputError
from cppdb.extractors.compression.sentence import CLAUSE_PUNCTUATION
from cppdb.shipped import shipped_file

#: the packaged model (LightGBM text model + the feature names it reads, one JSON document)
PACKAGED_MODEL = shipped_file("compression_risk.json")
#: headline characters that carry no content (the coverage features skip them)
_NOT_CONTENT = frozenset("，,。；;：:！？!?、“”‘’《》（）()—…· \u3000")


@dataclass(frozen=True)
class KeptCompression:
    """What the risk model reads of one kept pair (fields of the pipeline's Outcome)."""

    headline: str
    sentence: str
    tokens: Sequence[str]
    upos: Sequence[str]
    deprels: Sequence[str]
    labels: Sequence[int]


def risk_features(item: KeptCompression) -> dict[str, float]:
    """Named features of one compression (a sparse dict; absent = 0): the UPOS of its first
    and last kept token; the UPOS and relation of every token dropped between kept ones and
    whether a clause mark was among them; the headline characters S has and C lost.  (Link
    methods, lengths and gap shapes fitted the judged register better and the bundled
    hand-written pairs worse: left out.)"""
    features: Counter[str] = Counter()
    kept = [i for i, label in enumerate(item.labels) if label]
    if not kept:
        return {"empty": 1.0}
    first, last = kept[0], kept[-1]
    features[f"first_upos:{item.upos[first]}"] += 1
    features[f"last_upos:{item.upos[last]}"] += 1
    for i in range(first, last + 1):
        if not item.labels[i]:
            features[f"drop_upos:{item.upos[i]}"] += 1
            features[f"drop_rel:{item.deprels[i].split(':')[0]}"] += 1
            features["drop_clause_mark"] += item.tokens[i] in CLAUSE_PUNCTUATION
    compression = "".join(t for t, label in zip(item.tokens, item.labels) if label)
    sentence = "".join(item.tokens)
    in_sentence = [ch for ch in item.headline if ch not in _NOT_CONTENT and ch in sentence]
    lost = [ch for ch in in_sentence if ch not in compression]
    features["headline_lost_share"] = len(lost) / max(1, len(in_sentence))
    features["headline_lost_chars"] = len(lost)
    return {name: float(value) for name, value in features.items() if value}


def feature_matrix(rows: Sequence[Mapping[str, float]], names: Sequence[str]) -> np.ndarray:
    """The feature dicts as a dense matrix over ``names`` (a name not listed is ignored)."""
    index = {name: i for i, name in enumerate(names)}
    matrix = np.zeros((len(rows), len(names)), dtype=np.float64)
    for r, row in enumerate(rows):
        for name, value in row.items():
            column = index.get(name)
            if column is not None:
                matrix[r, column] = value
    return matrix


class RiskModel:
    """The fitted model: ``risk(items)`` = the probability a judge finds each unacceptable."""

    def __init__(self, booster_text: str, feature_names: Sequence[str],
                 source: str = "") -> None:
        import lightgbm as lgb

        self.booster = lgb.Booster(model_str=booster_text)
        self.feature_names = tuple(feature_names)
        self.source = source

    def matrix(self, items: Sequence[KeptCompression]) -> np.ndarray:
        return feature_matrix([risk_features(item) for item in items], self.feature_names)

    def risk(self, items: Sequence[KeptCompression]) -> np.ndarray:
        if not items:
            return np.zeros(0)
        return np.asarray(self.booster.predict(self.matrix(items), num_threads=1))

    def to_json(self) -> dict[str, Any]:
        return {"format": "cppdb-compression-risk/1", "features": list(self.feature_names),
                "booster": self.booster.model_to_string()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "") -> "RiskModel":
        if data.get("format") != "cppdb-compression-risk/1":
            raise BadInputError(f"{source or 'risk model'} is not a cppdb compression risk model",
                                hint="fit one with devtools/fit_compression_risk.py, or leave "
                                     "compression.risk_model empty for the packaged model")
        return cls(data["booster"], data["features"], source)


def risk_model_file(path: str = "") -> Path:
    """The file ``compression.risk_model`` names (empty: the packaged one)."""
    return Path(path) if path else PACKAGED_MODEL


@lru_cache(maxsize=4)
def load_risk_model(path: str = "") -> RiskModel:
    """The model at ``path`` (empty: the packaged one)."""
    model_path = risk_model_file(path)
    if not model_path.is_file():
        raise BadInputError(f"compression risk model {model_path} not found",
                            hint="set compression.risk_model to a file written by "
                                 "devtools/fit_compression_risk.py, or to \"\" for the "
                                 "packaged model; compression.max_risk = 0 turns the check off")
    return RiskModel.from_json(json.loads(model_path.read_text("utf-8")), str(model_path))
