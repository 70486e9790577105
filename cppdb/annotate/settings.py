"""The ``[annotate]`` section as a typed, frozen settings object (fields = TOML keys)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cppdb.defaults import toml_defaults

_ANNOTATE = toml_defaults("annotate")


@dataclass(frozen=True)
class AnnotateSettings:
    """The annotation backends and their pool (see ``cppdb/defaults/annotate.toml``)."""

    SECTION: ClassVar[str] = "annotate"


    zh_backend: str = _ANNOTATE["zh_backend"]
    en_backend: str = _ANNOTATE["en_backend"]
    zh_phrases: str = _ANNOTATE["zh_phrases"]
    en_phrases: str = _ANNOTATE["en_phrases"]
    to_simplified: bool = _ANNOTATE["to_simplified"]
    opencc_profile: str = _ANNOTATE["opencc_profile"]
    batch_size: int = _ANNOTATE["batch_size"]
    chunk_size: int = _ANNOTATE["chunk_size"]
    workers: int = _ANNOTATE["workers"]
    start_method: str = _ANNOTATE["start_method"]
    stanza_dir: str = _ANNOTATE["stanza_dir"]
    spacy_model: str = _ANNOTATE["spacy_model"]
    max_chars: int = _ANNOTATE["max_chars"]
