"""Model features (language-model probability, embedding cosine) and the full feature table.

Model inference is batched over the *unique* strings of a table (phrase tables repeat the
same strings many times); results are joined back, so each string is scored once.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.embed.cache import EmbeddingCache
from cppdb.embed.encoders import encoder_from_settings
from cppdb.embed.settings import EmbedSettings
from cppdb.errors import ConfigError
from cppdb.features.settings import FeatureSettings
from cppdb.features.table import lexical_feature_table, model_text
from cppdb.registry import load_backend


class LanguageModel(Protocol):
    def fit(self, texts: list[str]) -> Any: ...
    def score(self, texts: list[str]) -> np.ndarray: ...
    def describe(self) -> dict[str, Any]: ...
    # the fitted state, for workers of another process (False/no-op: nothing is fitted)
    def save(self, path: str | Path) -> bool: ...
    def restore(self, path: str | Path) -> Any: ...


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


def load_language_model(features: FeatureSettings) -> LanguageModel | None:
    """The ``features.language_model`` backend: char-ngram | bert | none."""
    name = features.language_model
    if name == "none":
        return None
    if name == "char-ngram":
        return load_backend("language_model", name, order=features.lm_order)
    if name == "bert":
        return load_backend("language_model", name, model_path=features.lm_model_path,
                            batch_size=features.batch_size)
    raise ConfigError(f"unknown features.language_model '{name}'",
                      hint="choose char-ngram, bert or none")


def load_encoder(embed: EmbedSettings, cache_dir: str | Path | None = None) -> Encoder:
    """The ``[embed]`` sentence encoder, wrapped in the per-string embedding cache."""
    backend = encoder_from_settings(embed)
    directory = cache_dir if embed.cache else None
    return _DescribedCache(EmbeddingCache(backend, directory), backend.describe())


class _DescribedCache:
    """An embedding cache that also says which backend it wraps (for the run manifest)."""

    def __init__(self, cache: Any, info: dict[str, Any]) -> None:
        self.cache = cache
        self.info = info

    def encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.cache.encode(texts)
        self.cache.save()
        return vectors

    def prepare(self, texts: list[str]) -> None:
        """Encode the strings not cached yet, in one call, and save (no matrix returned)."""
        self.cache.rows(list(texts))
        self.cache.save()

    def describe(self) -> dict[str, Any]:
        return self.info


def load_feature_models(features: FeatureSettings, embed: EmbedSettings,
                        cache_dir: str | Path | None = None) -> FeatureModels:
    """The language model and encoder named by the ``[features]`` settings."""
    encoder = load_encoder(embed, cache_dir) if features.embedding else None
    return FeatureModels(load_language_model(features), encoder)


def _unique_texts(frame: pl.DataFrame) -> pl.DataFrame:
    return pl.DataFrame({"text": model_texts(frame)}, schema={"text": pl.String}
                        ).with_row_index("text_id")


def _lookup(frame: pl.DataFrame, texts: pl.DataFrame, column: str) -> np.ndarray:
    """Index into ``texts`` of each row's side ``column`` (the join key)."""
    return frame.select(model_text(column).alias("text")).join(
        texts, on="text", how="left", maintain_order="left")["text_id"].to_numpy()


def model_texts(frame: pl.DataFrame | pl.LazyFrame) -> list[str]:
    """The unique model strings of both sides, in order of appearance (what the char
    n-gram LM is fitted on when no other text is given)."""
    texts = pl.concat([frame.select(model_text(S.SOURCE).alias("text")),
                       frame.select(model_text(S.TARGET).alias("text"))]
                      ).unique(maintain_order=True)
    if isinstance(texts, pl.LazyFrame):
        texts = texts.collect()
    return texts["text"].to_list()


def add_model_features(frame: pl.DataFrame, models: FeatureModels, *,
                       fit_texts: list[str] | None = None, fit: bool = True) -> pl.DataFrame:
    """Add ``f_lm_*`` and ``f_cosine`` columns.

    The char n-gram LM is fitted on ``fit_texts`` when given, else on the table's own
    unique strings (the "run's own text"); ``fit=False``: it was fitted already (a table
    processed in chunks is fitted once, on the whole table's text).
    """
    if frame.height == 0 or (models.language_model is None and models.encoder is None):
        return frame
    texts = _unique_texts(frame)
    src_idx, tgt_idx = _lookup(frame, texts, S.SOURCE), _lookup(frame, texts, S.TARGET)
    strings = texts["text"].to_list()
    columns = []
    if models.language_model is not None:
        if fit:
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


def build_feature_table(pairs: pl.DataFrame, models: FeatureModels, *, threads: int = 0,
                        fit_texts: list[str] | None = None, fit: bool = True) -> pl.DataFrame:
    """``pairs`` with every ``f_*`` feature the configured models allow."""
    frame = lexical_feature_table(pairs, threads=threads)
    return add_model_features(frame, models, fit_texts=fit_texts, fit=fit)
