"""The keep/drop tagger: a BiLSTM over each token's feature embeddings, one logit per token.

Extractive compression as sequence labelling (Filippova et al. 2015; Zhao et al. 2022 fine-tune
BERT for it): the LSTM sees the whole sentence, so a token's label can depend on what else is
kept.  Small enough to train on a CPU in minutes; on a GPU when torch sees one.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from cppdb.compressor.features import CATEGORICAL, NUMERIC


@dataclass(frozen=True)
class Encoded:
    """One sentence as arrays: categorical ids, numeric features, optional vectors, labels."""

    ids: np.ndarray                  # [n, len(CATEGORICAL)] int64
    numeric: np.ndarray              # [n, len(NUMERIC)] float32
    vectors: np.ndarray | None       # [n, vector_dim] float32
    labels: np.ndarray | None        # [n] float32 (training rows only)

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class Architecture:
    """Everything that fixes the network's shape (saved beside its weights)."""

    sizes: tuple[int, ...]           # vocabulary size per categorical feature
    word_dim: int
    tag_dim: int
    vector_dim: int                  # 0 = no vectors
    hidden: int
    layers: int
    dropout: float


@contextmanager
def cpu_threads(device: str) -> Iterator[None]:
    """One torch thread while on the CPU: the LSTM's matrices are too small to split, and
    with two threads one epoch took 6x the CPU time and 5x the wall time of one thread
    (300 sentences, 2 busy cores, 2026-11-28).  The previous setting is restored."""
    import torch

    if device != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def build_network(arch: Architecture):  # -> torch.nn.Module (torch imported lazily)
    import torch
    from torch import nn

    class Tagger(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            dims = [arch.word_dim if name == "word" else arch.tag_dim for name in CATEGORICAL]
            self.embeddings = nn.ModuleList(nn.Embedding(size, dim, padding_idx=0)
                                            for size, dim in zip(arch.sizes, dims))
            width = sum(dims) + len(NUMERIC) + arch.vector_dim
            self.dropout = nn.Dropout(arch.dropout)
            self.lstm = nn.LSTM(width, arch.hidden, num_layers=arch.layers, batch_first=True,
                                bidirectional=True,
                                dropout=arch.dropout if arch.layers > 1 else 0.0)
            self.out = nn.Linear(2 * arch.hidden, 1)

        def forward(self, ids, numeric, vectors, lengths):
            parts = [emb(ids[..., k]) for k, emb in enumerate(self.embeddings)]
            parts.append(numeric)
            if vectors is not None:
                parts.append(vectors)
            x = self.dropout(torch.cat(parts, dim=-1))
            packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True,
                                                       enforce_sorted=False)
            hidden, _ = self.lstm(packed)
            hidden, _ = nn.utils.rnn.pad_packed_sequence(hidden, batch_first=True,
                                                         total_length=ids.shape[1])
            return self.out(self.dropout(hidden)).squeeze(-1)

    return Tagger()


def collate(batch: Sequence[Encoded], device: str, vector_dim: int):
    """Padded tensors of a batch: ids, numeric, vectors (or None), lengths, labels, mask."""
    import torch

    width = max(len(e) for e in batch)
    n = len(batch)
    ids = np.zeros((n, width, len(CATEGORICAL)), dtype=np.int64)
    numeric = np.zeros((n, width, len(NUMERIC)), dtype=np.float32)
    vectors = np.zeros((n, width, vector_dim), dtype=np.float32) if vector_dim else None
    labels = np.zeros((n, width), dtype=np.float32)
    mask = np.zeros((n, width), dtype=bool)
    for row, encoded in enumerate(batch):
        length = len(encoded)
        ids[row, :length] = encoded.ids
        numeric[row, :length] = encoded.numeric
        if vectors is not None:
            vectors[row, :length] = encoded.vectors
        if encoded.labels is not None:
            labels[row, :length] = encoded.labels
        mask[row, :length] = True

    def put(array: np.ndarray):
        return torch.from_numpy(array).to(device)

    lengths = torch.tensor([len(e) for e in batch], dtype=torch.int64)
    return (put(ids), put(numeric), None if vectors is None else put(vectors), lengths,
            put(labels), put(mask))


def length_batches(lengths: Sequence[int], max_tokens: int) -> list[list[int]]:
    """Indices grouped by similar length, each group under ``max_tokens`` padded positions."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:        # ascending: this sentence is the widest of its batch
        if current and lengths[index] * (len(current) + 1) > max_tokens:
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def predict_probabilities(network, encoded: Sequence[Encoded], device: str, vector_dim: int,
                          batch_tokens: int) -> list[np.ndarray]:
    """P(keep) per token of each sentence, in input order."""
    import torch

    out: list[np.ndarray | None] = [None] * len(encoded)
    network.eval()
    with torch.no_grad(), cpu_threads(device):
        for group in length_batches([len(e) for e in encoded], batch_tokens):
            ids, numeric, vectors, lengths, _, _ = collate([encoded[i] for i in group], device,
                                                           vector_dim)
            probs = torch.sigmoid(network(ids, numeric, vectors, lengths)).float().cpu().numpy()
            for row, index in enumerate(group):
                out[index] = probs[row, :len(encoded[index])]
    return [p if p is not None else np.zeros(0, dtype=np.float32) for p in out]
