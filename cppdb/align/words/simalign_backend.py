"""SimAlign over a local multilingual encoder (Jalili Sabet et al. 2020).

Each sentence is embedded on its own (hidden states of ``layer``), sub-word vectors are
averaged into word vectors, and the zh×en cosine similarity is turned into links by SimAlign's
matching (argmax / itermax / match).  The output matrix is the bidirectional soft alignment
sqrt(softmax_rows · softmax_cols) of the similarities, kept only on matched cells (all cells
with ``matching = "none"``).  This is the algorithm of the ``simalign`` package, run batched
over transformers directly so that it loads from a local directory and never downloads.
"""
from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from cppdb.align.words.base import TokenPair, WordAligner, check_pairs
from cppdb.align.words.matching import MATCHINGS, apply_matching
from cppdb.align.words.neural import (MODEL_LOAD_LOCK, batches, piece_ids, pool_words,
                                      require_model_dir, word_spans)
from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError

_SIMALIGN = toml_defaults("align_words.simalign")

_TEMPERATURE = 0.1


class SimAlignAligner(WordAligner):
    """Contextual-embedding similarity aligner (needs the [neural] extra and a local model)."""

    name = "simalign"
    requires = (("torch", "torch"), ("transformers", "transformers"))
    install_hint = "pip install 'cppdb[neural]'"
    description = "SimAlign: multilingual encoder similarity + argmax/itermax/match"

    def __init__(self, *, model_dir: str = _SIMALIGN["model_dir"], layer: int = _SIMALIGN["layer"],
                 matching: str = _SIMALIGN["matching"], batch_size: int = _SIMALIGN["batch_size"],
                 device: str = _SIMALIGN["device"]) -> None:
        if matching not in MATCHINGS:
            raise ConfigError(f"unknown matching method '{matching}'",
                              hint=f"choose one of: {', '.join(MATCHINGS)}")
        self.model_dir = model_dir
        self.layer = layer
        self.matching = matching
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._tokenizer: Any = None
        self._cache: dict[str, list[int]] = {}

    def check(self) -> None:
        super().check()
        require_model_dir(self.model_dir, self.name, "a multilingual encoder such as "
                          "bert-base-multilingual-cased")

    def signature(self) -> str:
        return f"{self.name}[{self.version()}|model:{self.model_dir}|layer:{self.layer}]"

    def _load(self) -> None:
        if self._model is not None:
            return
        self.check()
        transformers = importlib.import_module("transformers")
        path = str(require_model_dir(self.model_dir, self.name, "an encoder"))
        with MODEL_LOAD_LOCK:
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(path)
            self._model = transformers.AutoModel.from_pretrained(path).to(self.device).eval()

    def _encode(self, word: str) -> list[int]:
        return self._tokenizer(word, add_special_tokens=False)["input_ids"]

    def embed(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Word vectors (|words| × hidden) of each sentence, from the configured layer."""
        torch = importlib.import_module("torch")
        self._load()
        tok = self._tokenizer
        marker = tok.unk_token_id if tok.unk_token_id is not None else 0
        prefix, suffix = _special_affixes(tok)
        offset = len(prefix)
        max_len = int(getattr(self._model.config, "max_position_embeddings", 512))
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        n_layers = int(self._model.config.num_hidden_layers)
        layer = min(self.layer, n_layers) if self.layer >= 0 else max(0, n_layers + 1 + self.layer)
        out: list[np.ndarray] = []
        for batch in batches(len(sentences), self.batch_size):
            pieces = [piece_ids(sentences[k], self._encode, marker, self._cache) for k in batch]
            ids = [(prefix + [i for w in p for i in w] + suffix)[:max_len] for p in pieces]
            width = max(len(x) for x in ids)
            input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
            mask = torch.zeros((len(ids), width), dtype=torch.long)
            for row, seq in enumerate(ids):
                input_ids[row, :len(seq)] = torch.tensor(seq)
                mask[row, :len(seq)] = 1
            with torch.no_grad():
                hidden = self._model(input_ids=input_ids.to(self.device),
                                     attention_mask=mask.to(self.device),
                                     output_hidden_states=True).hidden_states[layer]
            hidden = hidden.float().cpu().numpy()
            for row, p in enumerate(pieces):
                out.append(pool_words(hidden[row, :len(ids[row])], word_spans(p, offset)))
        return out

    def align(self, pairs: Sequence[TokenPair], *,
              en_lemmas: Sequence[Sequence[str]] | None = None) -> list[np.ndarray]:
        check_pairs(pairs)
        zh_vectors = self.embed([z for z, _ in pairs])
        en_vectors = self.embed([e for _, e in pairs])
        return [self._matrix(zv, ev) for zv, ev in zip(zh_vectors, en_vectors)]

    def _matrix(self, zh_vectors: np.ndarray, en_vectors: np.ndarray) -> np.ndarray:
        return similarity_to_matrix(zh_vectors, en_vectors, self.matching)


def similarity_to_matrix(zh_vectors: np.ndarray, en_vectors: np.ndarray,
                         matching: str) -> np.ndarray:
    """Cosine similarities → bidirectional soft alignment, kept on the matched cells."""
    zn = zh_vectors / np.maximum(np.linalg.norm(zh_vectors, axis=1, keepdims=True), 1e-9)
    en = en_vectors / np.maximum(np.linalg.norm(en_vectors, axis=1, keepdims=True), 1e-9)
    sim = zn @ en.T
    soft = np.sqrt(_softmax(sim / _TEMPERATURE, axis=1) * _softmax(sim / _TEMPERATURE, axis=0))
    if matching == "none":
        return soft
    return np.where(apply_matching(sim, matching, floor=-1.0), soft, 0.0)


def _special_affixes(tok: Any) -> tuple[list[int], list[int]]:
    """Special ids the tokenizer puts before and after a sentence ([CLS] … [SEP], <s> … </s>)."""
    plain = tok("a", add_special_tokens=False)["input_ids"]
    full = tok("a", add_special_tokens=True)["input_ids"]
    for start in range(len(full) - len(plain) + 1):
        if full[start:start + len(plain)] == plain:
            return list(full[:start]), list(full[start + len(plain):])
    return [], []


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)
