"""The ``[bilingual]`` and ``[monolingual]`` sections as typed, frozen settings, and what one
run of each extractor reads."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from cppdb.align.sentences.align import AlignSettings
from cppdb.align.sentences.cue_times import CueSettings
from cppdb.align.sentences.documents import PairingWeights
from cppdb.align.sentences.meaning import MeaningSettings
from cppdb.align.words.settings import AlignWordsSettings
from cppdb.annotate.settings import AnnotateSettings
from cppdb.config import settings_from
from cppdb.defaults import toml_defaults
from cppdb.embed.settings import EmbedSettings
from cppdb.ocr.batch import OcrSettings
from cppdb.readers.settings import ReadersSettings, ReadingSettings

_BILINGUAL = toml_defaults("bilingual")
_MONOLINGUAL = toml_defaults("monolingual")


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


@dataclass(frozen=True)
class MonolingualSettings:
    """Versions of one text -> sentence pairs (see ``cppdb/defaults/monolingual.toml``); the
    checks of the pairs stage take their views of it, filled by name."""

    SECTION: ClassVar[str] = "monolingual"

    units: str = _MONOLINGUAL["units"]
    pair_min_score: float = _MONOLINGUAL["pair_min_score"]
    pair_min_margin: float = _MONOLINGUAL["pair_min_margin"]
    pair_min_relative: float = _MONOLINGUAL["pair_min_relative"]
    pair_weight_content: float = _MONOLINGUAL["pair_weight_content"]
    pair_weight_names: float = _MONOLINGUAL["pair_weight_names"]
    pair_weight_numbers_in_text: float = _MONOLINGUAL["pair_weight_numbers_in_text"]
    pair_weight_dates: float = _MONOLINGUAL["pair_weight_dates"]
    pair_weight_cue_timing: float = _MONOLINGUAL["pair_weight_cue_timing"]
    pair_weight_length: float = _MONOLINGUAL["pair_weight_length"]
    pair_weight_chapter_number: float = _MONOLINGUAL["pair_weight_chapter_number"]
    pair_mode: str = _MONOLINGUAL["pair_mode"]
    pair_pivot: int = _MONOLINGUAL["pair_pivot"]
    split_chapters: bool = _MONOLINGUAL["split_chapters"]
    split_merged: bool = _MONOLINGUAL["split_merged"]
    entity_min_count: int = _MONOLINGUAL["entity_min_count"]
    entity_threshold: float = _MONOLINGUAL["entity_threshold"]
    entity_context_bonus: float = _MONOLINGUAL["entity_context_bonus"]
    min_confidence: float = _MONOLINGUAL["min_confidence"]
    confidence_model: str = _MONOLINGUAL["confidence_model"]
    cue_check: bool = _MONOLINGUAL["cue_check"]
    cue_max_gap_ms: int = _MONOLINGUAL["cue_max_gap_ms"]
    cue_offset_window: int = _MONOLINGUAL["cue_offset_window"]
    cue_keep_char_jaccard: float = _MONOLINGUAL["cue_keep_char_jaccard"]
    min_meaning_margin: float = _MONOLINGUAL["min_meaning_margin"]
    meaning_margin_k: int = _MONOLINGUAL["meaning_margin_k"]
    chunk_size: int = _MONOLINGUAL["chunk_size"]

    def cue_settings(self) -> CueSettings:
        return settings_from(CueSettings, self)

    def meaning_settings(self) -> MeaningSettings:
        return settings_from(MeaningSettings, self)

    def pairing_weights(self) -> PairingWeights:
        return settings_from(PairingWeights, self)


@dataclass(frozen=True)
class MonolingualRun:
    """Every section ``extract-monolingual`` reads, resolved once where the run starts."""

    monolingual: MonolingualSettings = field(default_factory=MonolingualSettings)
    align_sentences: AlignSettings = field(default_factory=AlignSettings)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    annotate: AnnotateSettings = field(default_factory=AnnotateSettings)
    readers: ReadersSettings = field(default_factory=ReadersSettings)
    ocr: OcrSettings = field(default_factory=OcrSettings)

    def reading(self) -> ReadingSettings:
        return ReadingSettings(self.readers, self.ocr)
