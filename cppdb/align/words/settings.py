"""The ``[align_words]`` section as typed, frozen settings (fields = TOML keys)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from cppdb.annotate.settings import AnnotateSettings
from cppdb.defaults import all_sections, toml_defaults

_ALIGN_WORDS = toml_defaults("align_words")


def _table(name: str) -> Any:
    # a fresh plain copy: the loaded section's tables hold lists, not the frozen tuples
    return field(default_factory=lambda: all_sections()["align_words"][name])


@dataclass(frozen=True)
class AlignWordsSettings:
    """The word-alignment ensemble, its screening and workers, and each aligner's table of
    constructor options (see ``cppdb/defaults/align_words.toml``)."""

    SECTION: ClassVar[str] = "align_words"

    aligners: tuple[str, ...] = _ALIGN_WORDS["aligners"]
    strict: bool = _ALIGN_WORDS["strict"]
    tuned_file: str = _ALIGN_WORDS["tuned_file"]
    decode: str = _ALIGN_WORDS["decode"]
    threshold: float = _ALIGN_WORDS["threshold"]
    sure_threshold: float = _ALIGN_WORDS["sure_threshold"]
    max_tokens: int = _ALIGN_WORDS["max_tokens"]
    seed: int = _ALIGN_WORDS["seed"]
    train_sample: int = _ALIGN_WORDS["train_sample"]
    max_train_pairs: int = _ALIGN_WORDS["max_train_pairs"]
    workers: int = _ALIGN_WORDS["workers"]
    prefetch: bool = _ALIGN_WORDS["prefetch"]
    weights: Mapping[str, float] = _table("weights")
    thot: Mapping[str, Any] = _table("thot")
    eflomal: Mapping[str, Any] = _table("eflomal")
    dictionary: Mapping[str, Any] = _table("dictionary")
    simalign: Mapping[str, Any] = _table("simalign")
    simalign_e5: Mapping[str, Any] = _table("simalign-e5")
    attention: Mapping[str, Any] = _table("attention")

    def options(self, aligner: str) -> dict[str, Any]:
        """The constructor options of ``aligner`` (its table; none for an aligner without)."""
        return dict(getattr(self, aligner.replace("-", "_"), {}))


@dataclass(frozen=True)
class AlignWordsRun:
    """Every section ``align-words`` reads (the aligners, and the annotators that tokenise
    raw text), resolved once where the command starts."""

    align_words: AlignWordsSettings = field(default_factory=AlignWordsSettings)
    annotate: AnnotateSettings = field(default_factory=AnnotateSettings)
