"""The ``[evaluate]`` section as typed, frozen settings, and what one evaluation reads."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from cppdb.defaults import toml_defaults
from cppdb.embed.settings import EmbedSettings
from cppdb.rank.settings import RankSettings

_EVALUATE = toml_defaults("evaluate")


@dataclass(frozen=True)
class EvaluateSettings:
    """Tables 3/4/6, their cosines and bootstrap (see ``cppdb/defaults/evaluate.toml``)."""

    SECTION: ClassVar[str] = "evaluate"

    tops: tuple[float, ...] = _EVALUATE["tops"]
    embedding: bool = _EVALUATE["embedding"]
    second_model_path: str = _EVALUATE["second_model_path"]
    max_embedded_pairs: int = _EVALUATE["max_embedded_pairs"]
    bootstrap_max_items: int = _EVALUATE["bootstrap_max_items"]
    seed: int = _EVALUATE["seed"]
    coverage_words: int = _EVALUATE["coverage_words"]
    coverage_examples: int = _EVALUATE["coverage_examples"]


@dataclass(frozen=True)
class EvaluateRun:
    """Every section an evaluation reads (the encoder, and the tiers of the ranking),
    resolved once where it starts."""

    evaluate: EvaluateSettings = field(default_factory=EvaluateSettings)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    rank: RankSettings = field(default_factory=RankSettings)
