"""The ``[features]`` section as a typed, frozen settings object (fields = TOML keys)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cppdb.defaults import toml_defaults

_FEATURES = toml_defaults("features")


@dataclass(frozen=True)
class FeatureSettings:
    """The pair features' models and chunking (see ``cppdb/defaults/features.toml``)."""

    SECTION: ClassVar[str] = "features"


    language_model: str = _FEATURES["language_model"]
    lm_order: int = _FEATURES["lm_order"]
    lm_model_path: str = _FEATURES["lm_model_path"]
    embedding: bool = _FEATURES["embedding"]
    batch_size: int = _FEATURES["batch_size"]
    chunk_size: int = _FEATURES["chunk_size"]
    threads: int = _FEATURES["threads"]
