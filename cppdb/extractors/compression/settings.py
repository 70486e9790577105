"""The ``[compression]`` section as one typed, frozen object (fields = the TOML keys of
cppdb/defaults/compression.toml): resolved once where a build starts, read by attribute
everywhere below.  Checks of single values live with the settings they shape
(``FilterSettings``, ``DTTRules``, ``SentenceRules``, ``CompressionSettings``)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from cppdb.config import settings_from
from cppdb.defaults import toml_defaults

_C = toml_defaults("compression")


@dataclass(frozen=True)
class CompressionToml:
    SECTION: ClassVar[str] = "compression"

    filters: tuple[str, ...] = tuple(_C["filters"])
    min_chars: int = _C["min_chars"]
    max_chars: int = _C["max_chars"]
    sentence_end: str = _C["sentence_end"]
    min_content_overlap: float = _C["min_content_overlap"]
    overlap_denominator: str = _C["overlap_denominator"]
    overlap_source: str = _C["overlap_source"]
    content_upos: tuple[str, ...] = tuple(_C["content_upos"])
    max_compression_ratio: float = _C["max_compression_ratio"]
    ratio_base: str = _C["ratio_base"]
    parser: str = _C["parser"]
    stanza_dir: str = _C["stanza_dir"]
    udchinese_tagger: str = _C["udchinese_tagger"]
    batch_size: int = _C["batch_size"]
    workers: int = _C["workers"]
    methods: tuple[str, ...] = tuple(_C["methods"])
    abbrev_upos: tuple[str, ...] = tuple(_C["abbrev_upos"])
    paraphrase_max_tokens: int = _C["paraphrase_max_tokens"]
    paraphrase_max_chars: int = _C["paraphrase_max_chars"]
    paraphrase_min_score: float = _C["paraphrase_min_score"]
    paraphrase_top_percent: float = _C["paraphrase_top_percent"]
    bert_encoder: str = _C["bert_encoder"]
    bert_layer: int = _C["bert_layer"]
    bert_dir: str = _C["bert_dir"]
    bert_min_cosine: float = _C["bert_min_cosine"]
    bert_batch_size: int = _C["bert_batch_size"]
    dtt: bool = _C["dtt"]
    dtt_rules: tuple[str, ...] = tuple(_C["dtt_rules"])
    particle_relations: tuple[str, ...] = tuple(_C["particle_relations"])
    auxiliary_relations: tuple[str, ...] = tuple(_C["auxiliary_relations"])
    numeral_relations: tuple[str, ...] = tuple(_C["numeral_relations"])
    negation_relations: tuple[str, ...] = tuple(_C["negation_relations"])
    negation_words: str = _C["negation_words"]
    sentence_rules: tuple[str, ...] = tuple(_C["sentence_rules"])
    sentence_check: bool = _C["sentence_check"]
    surface_rules: tuple[str, ...] = tuple(_C["surface_rules"])
    subtree_root: str = _C["subtree_root"]
    max_risk: float = _C["max_risk"]
    risk_model: str = _C["risk_model"]


def compression_toml(section: "CompressionToml | Mapping[str, Any]") -> CompressionToml:
    """``section`` as the typed object: a loaded ``[compression]`` table is converted, a
    partial one over the defaults."""
    if isinstance(section, CompressionToml):
        return section
    return settings_from(CompressionToml, {**_C, **section})
