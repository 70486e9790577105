"""Train a keep/drop compressor on a build-compression run; compress sentences with it.

A model directory holds ``weights.pt`` (the network's state) and ``model.json``
(architecture, vocabulary, settings, the parser the corpus was built with, the training
corpus and the per-epoch log).

>>> from cppdb import api
>>> info = api.train_compressor("runs/compression", "models/compressor")   # doctest: +SKIP
>>> compressor = api.load_compressor("models/compressor")                  # doctest: +SKIP
>>> compressor.labels(compressor.parse_texts(["……。"]))                    # doctest: +SKIP
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from cppdb.align.words.simalign_e5 import sentence_word_vectors
from cppdb.annotate.ud import tokenize_tag
from cppdb.compressor.data import (corpus_parser, corpus_records, parse_tagged, read_corpus,
                                   tag_pretokenized)
from cppdb.compressor.features import ParsedSentence, Vocabulary, numeric_values
from cppdb.compressor.model import (Architecture, Encoded, build_network,
                                    predict_probabilities)
from cppdb.compressor.train import TrainSettings, held_out_split, train_network
from cppdb.config import load_config, resolve
from cppdb.embed.e5_tokens import E5TokenEncoder
from cppdb.embed.e5_torch import resolve_device
from cppdb.errors import BadInputError, ModelNotFoundError
from cppdb.io import atomic_path, check_output_file, file_sha256, write_json_atomic

FORMAT = "cppdb-compressor/1"


def _vectors(sentences: Sequence[ParsedSentence], layer: int,
             device: str) -> list[np.ndarray | None]:
    if layer < 0:
        return [None] * len(sentences)

    encoder = E5TokenEncoder(prefix="query", device=device)
    vectors = sentence_word_vectors(encoder, [list(s.tokens) for s in sentences], None, (layer,))
    return [v[0].astype(np.float32) for v in vectors]


def encode(sentences: Sequence[ParsedSentence], vocabulary: Vocabulary, layer: int,
           device: str, labels: Sequence[Sequence[int]] | None = None) -> list[Encoded]:
    vectors = _vectors(sentences, layer, device)
    return [Encoded(vocabulary.encode(s), numeric_values(s), v,
                    None if labels is None else np.asarray(labels[i], dtype=np.float32))
            for i, (s, v) in enumerate(zip(sentences, vectors))]


def train_compressor(corpus: str | Path, out_dir: str | Path, config: Any = None, *,
                     device: str | None = None) -> dict[str, Any]:
    """Train on the kept rows of ``corpus`` (a build-compression run) into ``out_dir``;
    returns what ``model.json`` records."""
    cfg = config if config is not None else load_config()
    settings = resolve(TrainSettings, cfg)
    out = Path(out_dir)
    check_output_file(out / "model.json", "model directory")
    where = resolve_device(device or settings.device)
    started = time.perf_counter()
    sentences, labels = read_corpus(corpus, settings.max_sentences, settings.seed)
    train_idx, held_idx = held_out_split(len(sentences), settings.held_out_share, settings.seed)
    vocabulary = Vocabulary.build((sentences[i] for i in train_idx), settings.word_min_count)
    encoded = encode(sentences, vocabulary, settings.e5_layer, where, labels)
    vector_dim = 0 if encoded[0].vectors is None else int(encoded[0].vectors.shape[1])
    arch = Architecture(sizes=vocabulary.sizes(), word_dim=settings.word_dim,
                        tag_dim=settings.tag_dim, vector_dim=vector_dim, hidden=settings.hidden,
                        layers=settings.layers, dropout=settings.dropout)
    network, log = train_network([encoded[i] for i in train_idx],
                                 [encoded[i] for i in held_idx], arch, settings, where)
    records = corpus_records(corpus)
    info = {"format": FORMAT, "architecture": asdict(arch), "settings": settings.to_json(),
            "parser": corpus_parser(corpus),
            "corpus": {"records": str(records), "sha256": file_sha256(records),
                       "sentences": len(sentences), "train": len(train_idx),
                       "held_out": len(held_idx),
                       "tokens": int(sum(len(x) for x in labels)),
                       "kept_share": float(np.mean([k for x in labels for k in x]))},
            "device": where, "log": log, "seconds": round(time.perf_counter() - started, 1),
            "vocabulary": vocabulary.to_json()}
    _save(out, network, info)
    return info


def _save(out: Path, network: Any, info: dict[str, Any]) -> None:
    import io

    import torch

    # through a buffer: a file name would be written into the archive, so the same weights
    # saved twice (atomic temporary names differ) would differ in bytes
    buffer = io.BytesIO()
    torch.save({k: v.cpu() for k, v in network.state_dict().items()}, buffer)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / "weights.pt") as tmp:
        tmp.write_bytes(buffer.getvalue())
    write_json_atomic(out / "model.json", info)


class Compressor:
    """A trained tagger: P(keep) per token, keep-labels, compressions."""

    def __init__(self, network: Any, info: dict[str, Any], device: str) -> None:
        self.network = network
        self.info = info
        self.device = device
        self.vocabulary = Vocabulary.from_json(info["vocabulary"])
        self.settings = TrainSettings(**info["settings"])

    @classmethod
    def load(cls, model_dir: str | Path, device: str = "auto") -> "Compressor":
        import json

        import torch

        path = Path(model_dir)
        if not (path / "model.json").is_file() or not (path / "weights.pt").is_file():
            raise ModelNotFoundError(f"{path}: no model.json + weights.pt",
                                     hint="train one with `cppdb train-compressor`")
        info = json.loads((path / "model.json").read_text("utf-8"))
        if info.get("format") != FORMAT:
            raise BadInputError(f"{path}/model.json is not a {FORMAT} model")
        arch = Architecture(**{**info["architecture"],
                               "sizes": tuple(info["architecture"]["sizes"])})
        where = resolve_device(device)
        network = build_network(arch)
        network.load_state_dict(torch.load(path / "weights.pt", map_location="cpu",
                                           weights_only=True))
        network.to(where).eval()
        return cls(network, info, where)

    def probabilities(self, sentences: Sequence[ParsedSentence]) -> list[np.ndarray]:
        encoded = encode(sentences, self.vocabulary, self.settings.e5_layer, self.device)
        dim = int(self.info["architecture"]["vector_dim"])
        return predict_probabilities(self.network, encoded, self.device, dim,
                                     self.settings.batch_tokens)

    def parse(self, token_lists: Sequence[Sequence[str]]) -> list[ParsedSentence]:
        """Pre-tokenised sentences tagged and parsed as the training corpus was."""
        return parse_tagged(tag_pretokenized(token_lists), self.info["parser"])

    def parse_texts(self, texts: Sequence[str]) -> list[ParsedSentence]:
        return parse_tagged(tokenize_tag(texts), self.info["parser"])

    def labels(self, sentences: Sequence[ParsedSentence],
               threshold: float | None = None) -> list[list[int]]:
        cut = self.settings.threshold if threshold is None else threshold
        return [(p >= cut).astype(int).tolist() for p in self.probabilities(sentences)]


def load_compressor(model_dir: str | Path, device: str = "auto") -> Compressor:
    return Compressor.load(model_dir, device)
