"""How far the compressor's tagger gets when trained on the annotators' own labels.

A ceiling, not a product: half of the 900 gold test sentences (seeded) train the tagger of
``cppdb/compressor`` with one of three inputs, the other half is scored (then the halves
swap, unless ``--one-fold``), for one annotator:

* ``--vectors none``            the parse features alone (the default compressor);
* ``--vectors 7`` / ``4,8,12``  frozen e5-small word vectors of those layers, concatenated;
* ``--finetune D``              e5-small's first D layers trained with the tagger (lr 3e-5).

If the tagger trained on the gold itself stays far from the paper's F1, the corpus is not
what holds the trained compressor back.  Tokens and parse as ``bench/bench_compressor.py``.

    python -m devtools.compressor_ceiling --gold /work/corpora/compression-gold \\
        --model /work/runs/compressor-models/default-dtt --vectors 7
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from cppdb.align.words.simalign_e5 import (join_words, sentence_word_vectors,
                                           word_token_means)
from cppdb.compressor.api import load_compressor
from cppdb.compressor.features import ParsedSentence, Vocabulary, numeric_values
from cppdb.compressor.metrics import keep_f1
from cppdb.compressor.model import (Architecture, Encoded, build_network, collate,
                                    predict_probabilities)
from cppdb.compressor.train import TrainSettings, seed_everything, train_network
from cppdb.embed.e5_tokens import E5TokenEncoder
from cppdb.embed.e5_torch import encoder_layer, layer_tensors, padding_mask

THRESHOLDS = (0.3, 0.4, 0.5)


def _encoded(parsed: list[ParsedSentence], vocabulary: Vocabulary, vectors: list[Any],
             labels: list[list[int]]) -> list[Encoded]:
    return [Encoded(vocabulary.encode(s), numeric_values(s), v, np.asarray(y, np.float32))
            for s, v, y in zip(parsed, vectors, labels)]


def frozen_fold(parsed, labels, vectors, train, test, epochs: int) -> dict[int, np.ndarray]:
    vocabulary = Vocabulary.build((parsed[i] for i in train), 1)
    rows = _encoded(parsed, vocabulary, vectors, labels)
    dim = 0 if rows[0].vectors is None else int(rows[0].vectors.shape[1])
    arch = Architecture(sizes=vocabulary.sizes(), word_dim=64, tag_dim=16, vector_dim=dim,
                        hidden=64, layers=1, dropout=0.3)
    settings = replace(TrainSettings(), epochs=epochs, held_out_share=0.0)
    network, _ = train_network([rows[i] for i in train], [], arch, settings, "cpu")
    probs = predict_probabilities(network, [rows[i] for i in test], "cpu", dim, 8192)
    return dict(zip(test, probs))


class _Subwords:
    """Per sentence: e5's input embeddings [T, H] and the word-over-subword mean [W, T]."""

    def __init__(self, parsed: list[ParsedSentence]) -> None:
        self.encoder = E5TokenEncoder(prefix="query", device="cpu")
        self.weights = self.encoder.weights
        self.items = [self._one(s.tokens) for s in parsed]

    def _one(self, words) -> tuple[np.ndarray, np.ndarray]:
        text, spans = join_words(list(words), None)
        (window,) = self.encoder._windows(0, text)        # gold sentences fit one window
        mean = word_token_means(window.starts, window.ends, window.special, spans)
        return self.weights.word_vectors(window.ids).astype(np.float32), mean


def finetune_fold(parsed, labels, train, test, depth: int, epochs: int) -> dict[int, np.ndarray]:
    import torch

    seed_everything(13)
    sub = _Subwords(parsed)
    cfg = sub.weights.config

    def param(array: np.ndarray, transpose: bool = False) -> Any:
        return torch.nn.Parameter(torch.from_numpy(
            np.ascontiguousarray(array.T if transpose else array)).float())

    layers = torch.nn.ModuleList(torch.nn.ParameterDict(layer_tensors(layer, param))
                                 for layer in sub.weights.layers[:depth])
    embed = torch.nn.ParameterDict({name: param(getattr(sub.weights, name)) for name in
                                    ("position", "token_type", "emb_ln_w", "emb_ln_b")})
    vocabulary = Vocabulary.build((parsed[i] for i in train), 1)
    arch = Architecture(sizes=vocabulary.sizes(), word_dim=64, tag_dim=16,
                        vector_dim=cfg.hidden, hidden=64, layers=1, dropout=0.3)
    network = build_network(arch)
    optimizer = torch.optim.AdamW([
        {"params": list(layers.parameters()) + list(embed.parameters()), "lr": 3e-5},
        {"params": network.parameters(), "lr": 2e-3}], weight_decay=0.01)

    def forward(idx: list[int]) -> Any:
        width = max(sub.items[i][0].shape[0] for i in idx)
        x = torch.zeros(len(idx), width, cfg.hidden)
        for row, i in enumerate(idx):
            x[row, :sub.items[i][0].shape[0]] = torch.from_numpy(sub.items[i][0])
        x = x + embed["position"][:width][None] + embed["token_type"]
        x = torch.nn.functional.layer_norm(x, (cfg.hidden,), embed["emb_ln_w"],
                                           embed["emb_ln_b"], eps=cfg.eps)
        mask = torch.from_numpy(padding_mask(
            np.asarray([sub.items[i][0].shape[0] for i in idx]), width))
        for layer in layers:
            x = encoder_layer(x, dict(layer), mask, cfg.heads, cfg.eps)
        blank = [np.zeros((len(parsed[i].tokens), cfg.hidden), np.float32) for i in idx]
        rows = _encoded([parsed[i] for i in idx], vocabulary, blank, [labels[i] for i in idx])
        ids, numeric, vectors, lengths, gold, keep = collate(rows, "cpu", cfg.hidden)
        vectors = torch.zeros_like(vectors)
        for row, i in enumerate(idx):
            n = sub.items[i][0].shape[0]
            word = torch.from_numpy(sub.items[i][1]) @ x[row, :n]
            vectors[row, :word.shape[0]] = word
        return network(ids, numeric, vectors, lengths), gold, keep

    rng = np.random.default_rng(13)
    for epoch in range(epochs):
        layers.train(), embed.train(), network.train()
        started, order = time.perf_counter(), rng.permutation(train)
        for start in range(0, len(order), 16):
            logits, gold, keep = forward(list(order[start:start + 16]))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits[keep], gold[keep])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(optimizer.param_groups[0]["params"]
                                           + optimizer.param_groups[1]["params"], 1.0)
            optimizer.step()
        print(f"epoch {epoch + 1}: {time.perf_counter() - started:.0f} s", flush=True)
    layers.eval(), embed.eval(), network.eval()
    out: dict[int, np.ndarray] = {}
    with torch.no_grad():
        for start in range(0, len(test), 32):
            idx = list(test[start:start + 32])
            logits, _, _ = forward(idx)
            for row, i in enumerate(idx):
                out[i] = torch.sigmoid(logits[row, :len(labels[i])]).numpy()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True,
                        help="a trained compressor: its parser reads the gold")
    parser.add_argument("--annotator", default="annotation_1",
                        choices=("annotation_1", "annotation_2"))
    parser.add_argument("--vectors", default="none", help="none, or e5 layers: 7 or 4,8,12")
    parser.add_argument("--finetune", type=int, default=0, metavar="D")
    parser.add_argument("--epochs", type=int, default=0, help="default 15 frozen, 2 fine-tuned")
    parser.add_argument("--one-fold", action="store_true")
    args = parser.parse_args(argv)
    gold = [json.loads(line) for line in
            (args.gold / "test.jsonl").read_text("utf-8").splitlines()]
    parsed = load_compressor(args.model, "cpu").parse([r["tokens"] for r in gold])
    labels = [r[args.annotator] for r in gold]
    order = np.random.default_rng(1).permutation(len(gold))
    halves = [sorted(order[:len(gold) // 2].tolist()), sorted(order[len(gold) // 2:].tolist())]
    folds = [(halves[1], halves[0])] + ([] if args.one_fold else [(halves[0], halves[1])])
    vectors: list[Any] = [None] * len(gold)
    if args.vectors != "none" and not args.finetune:
        wanted = [int(x) for x in args.vectors.split(",")]
        encoder = E5TokenEncoder(prefix="query", device="cpu")
        states = sentence_word_vectors(encoder, [list(s.tokens) for s in parsed], None, wanted)
        vectors = [np.concatenate(list(v), axis=1).astype(np.float32) for v in states]
    probs: dict[int, np.ndarray] = {}
    for train, test in folds:
        if args.finetune:
            probs |= finetune_fold(parsed, labels, train, test, args.finetune,
                                   args.epochs or 2)
        else:
            probs |= frozen_fold(parsed, labels, vectors, train, test, args.epochs or 15)
    scored = sorted(probs)
    for cut in THRESHOLDS:
        s = keep_f1([(probs[i] >= cut).astype(int).tolist() for i in scored],
                    [labels[i] for i in scored])
        print(f"threshold {cut}: F1 {100 * s['f1']:.1f}  P {100 * s['precision']:.1f}  "
              f"R {100 * s['recall']:.1f}  (n = {len(scored)} sentences)")


if __name__ == "__main__":
    main()
