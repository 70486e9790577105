"""Shared helpers of the full-model aligners: local model checks, word → sub-word pieces."""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from cppdb.errors import ModelNotFoundError


#: the align stage runs its aligners in threads (``matrices.side_by_side``); transformers' loading
#: patches module-level state (empty-weight initialisation on the meta device), so two
#: models loading at once can see each other's meta tensors — load one at a time
MODEL_LOAD_LOCK = threading.Lock()


def require_model_dir(model_dir: str, backend: str, what: str) -> Path:
    """The model directory, or a ModelNotFoundError naming the setting that fixes it."""
    key = f"align_words.{backend}.model_dir"
    if not model_dir:
        raise ModelNotFoundError(
            f"word aligner '{backend}' has no model directory ({key} is empty)",
            hint=f"save {what} locally with save_pretrained and pass --set {key}=/path/to/it")
    path = Path(model_dir).expanduser()
    if not (path / "config.json").is_file():
        raise ModelNotFoundError(
            f"word aligner '{backend}': no model at {path} (config.json missing)",
            hint=f"point {key} at a directory written by save_pretrained ({what})")
    return path


def piece_ids(words: Sequence[str], encode: Callable[[str], list[int]], unk_id: int,
              cache: dict[str, list[int]]) -> list[list[int]]:
    """Sub-word ids per word (an unknown/empty encoding becomes the unk id)."""
    out = []
    for word in words:
        if word not in cache:
            ids = encode(word)
            cache[word] = ids if ids else [unk_id]
        out.append(cache[word])
    return out


def pool_words(vectors: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """Mean of the sub-word rows of each word (a word beyond the model's length: zeros)."""
    out = np.zeros((len(spans), vectors.shape[-1]), dtype=np.float64)
    for k, (start, stop) in enumerate(spans):
        stop = min(stop, vectors.shape[0])
        if start < stop:
            out[k] = vectors[start:stop].mean(axis=0)
    return out


def word_spans(pieces: Sequence[Sequence[int]], offset: int) -> list[tuple[int, int]]:
    spans = []
    position = offset
    for ids in pieces:
        spans.append((position, position + len(ids)))
        position += len(ids)
    return spans


def batches(n: int, size: int) -> list[range]:
    size = max(1, size)
    return [range(start, min(start + size, n)) for start in range(0, n, size)]
