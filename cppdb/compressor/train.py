"""Training the keep/drop tagger: seeded, the best epoch on a held-out share of the corpus."""
from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np

from cppdb.compressor.metrics import keep_f1
from cppdb.compressor.model import (Architecture, Encoded, build_network, collate,
                                    cpu_threads, predict_probabilities)
from cppdb.config import settings_from
from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError

_COMPRESSOR = toml_defaults("compressor")


@dataclass(frozen=True)
class TrainSettings:
    """The ``[compressor]`` section (see cppdb/defaults/compressor.toml)."""

    SECTION: ClassVar[str] = "compressor"

    word_min_count: int = _COMPRESSOR["word_min_count"]
    e5_layer: int = _COMPRESSOR["e5_layer"]
    word_dim: int = _COMPRESSOR["word_dim"]
    tag_dim: int = _COMPRESSOR["tag_dim"]
    hidden: int = _COMPRESSOR["hidden"]
    layers: int = _COMPRESSOR["layers"]
    dropout: float = _COMPRESSOR["dropout"]
    epochs: int = _COMPRESSOR["epochs"]
    batch_sentences: int = _COMPRESSOR["batch_sentences"]
    learning_rate: float = _COMPRESSOR["learning_rate"]
    held_out_share: float = _COMPRESSOR["held_out_share"]
    max_sentences: int = _COMPRESSOR["max_sentences"]
    seed: int = _COMPRESSOR["seed"]
    device: str = _COMPRESSOR["device"]
    threshold: float = _COMPRESSOR["threshold"]
    batch_tokens: int = _COMPRESSOR["batch_tokens"]

    def __post_init__(self) -> None:
        if not -1 <= self.e5_layer <= 12:
            raise ConfigError(f"compressor.e5_layer must be -1 (off) or 0..12, "
                              f"not {self.e5_layer}")
        if self.epochs < 1 or self.batch_sentences < 1 or self.hidden < 1:
            raise ConfigError("compressor.epochs, batch_sentences and hidden must be >= 1")
        if not 0.0 <= self.held_out_share < 0.5:
            raise ConfigError(f"compressor.held_out_share must be in [0, 0.5), "
                              f"not {self.held_out_share}")
        if not 0.0 < self.threshold < 1.0:
            raise ConfigError(f"compressor.threshold must be in (0, 1), "
                              f"not {self.threshold}")

    @classmethod
    def from_config(cls, section: dict[str, Any]) -> "TrainSettings":
        return settings_from(cls, section)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def seed_everything(seed: int) -> None:
    import torch

    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def held_out_split(n: int, share: float, seed: int) -> tuple[list[int], list[int]]:
    """Seeded (train, held-out) index lists; at least one training row."""
    order = np.random.default_rng(seed).permutation(n)
    held = min(int(round(n * share)), n - 1)
    return sorted(order[held:].tolist()), sorted(order[:held].tolist())


def _epoch(network, optimizer, rows: Sequence[Encoded], settings: TrainSettings,
           arch: Architecture, device: str, rng: np.random.Generator) -> float:
    import torch

    network.train()
    order = rng.permutation(len(rows))
    total, count = 0.0, 0
    for start in range(0, len(order), settings.batch_sentences):
        batch = [rows[i] for i in order[start:start + settings.batch_sentences]]
        ids, numeric, vectors, lengths, labels, mask = collate(batch, device, arch.vector_dim)
        logits = network(ids, numeric, vectors, lengths)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits[mask], labels[mask])
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(network.parameters(), 1.0)
        optimizer.step()
        total += loss.item() * int(mask.sum())
        count += int(mask.sum())
    return total / max(count, 1)


def train_network(train: Sequence[Encoded], held: Sequence[Encoded], arch: Architecture,
                  settings: TrainSettings, device: str) -> tuple[Any, list[dict[str, Any]]]:
    """The network of the epoch with the best held-out token F1 (the last epoch when nothing
    is held out), and one log row per epoch."""
    import torch

    seed_everything(settings.seed)
    rng = np.random.default_rng(settings.seed)
    network = build_network(arch).to(device)
    optimizer = torch.optim.Adam(network.parameters(), lr=settings.learning_rate)
    best, best_f1, log = None, -1.0, []
    for epoch in range(1, settings.epochs + 1):
        started = time.perf_counter()
        with cpu_threads(device):
            loss = _epoch(network, optimizer, train, settings, arch, device, rng)
        row: dict[str, Any] = {"epoch": epoch, "loss": round(loss, 5),
                               "seconds": round(time.perf_counter() - started, 2)}
        if held:
            probs = predict_probabilities(network, held, device, arch.vector_dim,
                                          settings.batch_tokens)
            scores = keep_f1([p >= settings.threshold for p in probs],
                             [e.labels for e in held])
            row["held_out_f1"] = round(scores["f1"], 5)
        log.append(row)
        score = row.get("held_out_f1", float(epoch))
        if score > best_f1:
            best_f1, best = score, copy.deepcopy(network.state_dict())
    network.load_state_dict(best)
    network.eval()
    return network, log
