"""The ``[bilingual]`` section as typed, frozen settings, and what one bilingual run reads."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from cppdb.align.words.settings import AlignWordsSettings
from cppdb.annotate.settings import AnnotateSettings
from cppdb.defaults import toml_defaults

_BILINGUAL = toml_defaults("bilingual")


@dataclass(frozen=True)
class BilingualSettings:
    """Phrase and pattern extraction and the pivot (see ``cppdb/defaults/bilingual.toml``)."""

    SECTION: ClassVar[str] = "bilingual"

    consistency: str = _BILINGUAL["consistency"]
    tolerance: int = _BILINGUAL["tolerance"]
    report_modes: bool = _BILINGUAL["report_modes"]
    phrase_labels: str = _BILINGUAL["phrase_labels"]
    label_agreement: bool = _BILINGUAL["label_agreement"]
    zh_phrase_labels: tuple[str, ...] = _BILINGUAL["zh_phrase_labels"]
    en_phrase_labels: tuple[str, ...] = _BILINGUAL["en_phrase_labels"]
    zh_constrained_pos: tuple[str, ...] = _BILINGUAL["zh_constrained_pos"]
    en_constrained_pos: tuple[str, ...] = _BILINGUAL["en_constrained_pos"]
    max_phrase_len: int = _BILINGUAL["max_phrase_len"]
    patterns: bool = _BILINGUAL["patterns"]
    max_slots: int = _BILINGUAL["max_slots"]
    max_pattern_len: int = _BILINGUAL["max_pattern_len"]
    adjacent_slots: str = _BILINGUAL["adjacent_slots"]
    max_per_pivot: int = _BILINGUAL["max_per_pivot"]
    max_anchors: int = _BILINGUAL["max_anchors"]
    prune_function_pivots: bool = _BILINGUAL["prune_function_pivots"]
    prune_min_p_e_given_f: float = _BILINGUAL["prune_min_p_e_given_f"]
    prune_min_p_f_given_e: float = _BILINGUAL["prune_min_p_f_given_e"]
    prune_min_count: int = _BILINGUAL["prune_min_count"]
    prune_max_pivots_per_phrase: int = _BILINGUAL["prune_max_pivots_per_phrase"]
    separate_near_identity: bool = _BILINGUAL["separate_near_identity"]
    partition_rows: int = _BILINGUAL["partition_rows"]
    chunk_size: int = _BILINGUAL["chunk_size"]
    workers: int = _BILINGUAL["workers"]
    min_rows_for_pool: int = _BILINGUAL["min_rows_for_pool"]


@dataclass(frozen=True)
class BilingualRun:
    """Every section ``extract-bilingual`` reads, resolved once where the run starts."""

    bilingual: BilingualSettings = field(default_factory=BilingualSettings)
    align_words: AlignWordsSettings = field(default_factory=AlignWordsSettings)
    annotate: AnnotateSettings = field(default_factory=AnnotateSettings)
