"""The ``[embed]`` section as a typed, frozen settings object (fields = TOML keys)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cppdb.defaults import toml_defaults

_EMBED = toml_defaults("embed")


@dataclass(frozen=True)
class EmbedSettings:
    """The sentence encoder (see ``cppdb/defaults/embed.toml`` for what each key means)."""

    SECTION: ClassVar[str] = "embed"


    backend: str = _EMBED["backend"]
    prefix: str = _EMBED["prefix"]
    variant: str = _EMBED["variant"]
    threads: int = _EMBED["threads"]
    model_path: str = _EMBED["model_path"]
    prefix_text: str = _EMBED["prefix_text"]
    batch_size: int = _EMBED["batch_size"]
    lsa_dim: int = _EMBED["lsa_dim"]
    lsa_ngram_max: int = _EMBED["lsa_ngram_max"]
    lsa_seed: int = _EMBED["lsa_seed"]
    runtime: str = _EMBED["runtime"]
    device: str = _EMBED["device"]
    precision: str = _EMBED["precision"]
    cache: bool = _EMBED["cache"]
