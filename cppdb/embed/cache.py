"""Embedding cache: each distinct string is encoded once, in memory and optionally on disk.

Aligners ask for the same strings again and again (a sentence in a document, in its
overlap windows, in a re-run of the same chapter); e5 costs tens of milliseconds per
sentence on CPU, so encoding is the dominant cost of sentence alignment.  The cache is
keyed by the exact string and belongs to one encoder signature: the on-disk file name
carries a hash of the signature, so vectors of another model or prefix are never reused.

Encoders fitted per job (``char-lsa``) have a ``fit(texts)`` method and a signature that
includes the fitted state: :meth:`EmbeddingCache.fit` fits the wrapped encoder and, when the
signature changes, drops the vectors of the old space and switches to the new one.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import polars as pl

from cppdb.embed.encoders import SentenceEncoder
from cppdb.errors import BadInputError
from cppdb.io import write_parquet_atomic

TEXT = "text"
VECTOR = "vector"
CACHE_FILES = "embeddings-*.parquet"        # the cache files of a directory (a glob)


class EmbeddingCache:
    """Wraps an encoder; ``encode`` has the same contract (n x d float32, unit rows).

    Parameters
    ----------
    encoder
        Any object with ``encode(list[str]) -> np.ndarray`` and ``signature()``.
    directory
        If given, vectors are loaded from and saved (``save()``) to
        ``directory/embeddings-<signature hash>.parquet`` (columns ``text``, ``vector``).
    """

    def __init__(self, encoder: SentenceEncoder, directory: str | Path | None = None) -> None:
        self.encoder = encoder
        self.directory = None if directory is None else Path(directory)
        self.hits = 0
        self.misses = 0
        self._bind(encoder.signature())

    def _bind(self, signature: str) -> None:
        """Start an empty cache for ``signature`` (loading its file when there is one)."""
        self._signature = signature
        persist = getattr(self.encoder, "persist_vectors", True)
        self.path = None if self.directory is None or not persist else self.directory / (
            CACHE_FILES.replace("*", hashlib.sha256(signature.encode()).hexdigest()[:12]))
        self._index: dict[str, int] = {}
        self._blocks: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None
        self._saved_rows = 0
        if self.path is not None and self.path.exists():
            self._load_file(self.path)

    @property
    def needs_fit(self) -> bool:
        return callable(getattr(self.encoder, "fit", None))

    def fit(self, texts: list[str]) -> None:
        """Fit the wrapped encoder on ``texts`` if it is fitted per job; else do nothing.

        A changed signature means a new vector space: the old vectors are dropped (saved
        first, if they belong on disk).
        """
        if not self.needs_fit:
            return
        self.save()
        self.encoder.fit(texts)
        signature = self.encoder.signature()
        if signature != self._signature:
            self._bind(signature)

    def signature(self) -> str:
        return self._signature

    def __len__(self) -> int:
        return len(self._index)

    def _load_file(self, path: Path) -> None:
        try:
            frame = pl.read_parquet(path)
            vectors = frame[VECTOR].to_numpy().astype(np.float32, copy=False)
        except (OSError, pl.exceptions.PolarsError) as exc:
            raise BadInputError(f"embedding cache {path} is unreadable: {exc}",
                                hint=f"delete {path}; it is rebuilt on the next run") from exc
        texts = frame[TEXT].to_list()
        self._index = {text: row for row, text in enumerate(texts)}
        self._blocks = [vectors.reshape(len(texts), -1)]
        self._saved_rows = len(texts)

    def matrix(self) -> np.ndarray:
        """All cached vectors, row ``i`` belonging to the i-th distinct string seen."""
        if self._matrix is None or self._matrix.shape[0] != len(self._index):
            self._matrix = (np.concatenate(self._blocks, axis=0) if self._blocks
                            else np.zeros((0, 0), dtype=np.float32))
            self._blocks = [self._matrix]
        return self._matrix

    def rows(self, texts: list[str]) -> np.ndarray:
        """Row numbers of ``texts`` in :meth:`matrix`, encoding the strings not yet cached."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._index]
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        if missing:
            vectors = np.asarray(self.encoder.encode(missing), dtype=np.float32)
            if vectors.shape[0] != len(missing):
                raise BadInputError(
                    f"encoder returned {vectors.shape[0]} vectors for {len(missing)} texts",
                    hint=f"the encoder {self._signature} is broken")
            start = len(self._index)
            self._index.update((t, start + k) for k, t in enumerate(missing))
            self._blocks.append(vectors)
        return np.fromiter((self._index[t] for t in texts), dtype=np.int64, count=len(texts))

    def encode(self, texts: list[str]) -> np.ndarray:
        rows = self.rows(list(texts))
        if len(rows) == 0:
            return np.zeros((0, self.matrix().shape[1] if self._index else 0), np.float32)
        return self.matrix()[rows]

    def save(self) -> Path | None:
        """Write the cache file atomically (only when new vectors were added)."""
        if self.path is None or len(self._index) == self._saved_rows:
            return self.path
        matrix = self.matrix()
        texts = [""] * len(self._index)
        for text, row in self._index.items():
            texts[row] = text
        frame = pl.DataFrame({TEXT: texts}).with_columns(
            pl.Series(VECTOR, matrix, dtype=pl.Array(pl.Float32, matrix.shape[1])))
        write_parquet_atomic(self.path, frame, metadata={"encoder": self._signature})
        self._saved_rows = len(texts)
        return self.path
