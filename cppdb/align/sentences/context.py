"""The context term of context-aware Vecalign (SPEC §2.4, seed 003 §3.2.2).

The paper: "context information is the weighted average of the word vectors of the context
words, weighted by TF-IDF".  Our reading (the paper is vague, choices documented here):

* the **context** of sentence i is the words of the sentences ``i-window .. i+window`` other
  than i itself (``include_self = false``: the sentence's own words are already in its
  sentence vector);
* the weight of word w is ``tf(w in the context) * idf(w)``, idf over the sentences of both
  documents (``log(N / df)``);
* **word vectors** must live in one space for both versions.  Source ``"input"`` (default)
  trains them on the input itself: a positive-PMI matrix of sentence-level co-occurrence of
  jieba tokens of both documents, reduced by truncated SVD (``U sqrt(S)``, ``dim``
  dimensions).  A word2vec text file (``word vectors path``) can be used instead;
* the sentence representation fed to the DP is ``[sqrt(1-w) e_i, sqrt(w) c_i]`` with unit
  ``e_i`` (sentence vector) and ``c_i`` (context vector), so a cosine of two
  representations is ``(1-w) cos(e) + w cos(c)``; ``w = context_weight``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from cppdb.errors import BadInputError, ConfigError

_WORD = re.compile(r"\w", re.UNICODE)


@dataclass(frozen=True)
class WordVectors:
    vocabulary: dict[str, int]
    matrix: np.ndarray   # (V, dim), unit rows


def tokenize(sentences: list[str]) -> list[list[str]]:
    """jieba tokens that contain a word character (punctuation and spaces dropped)."""
    import jieba

    jieba.setLogLevel(60)
    return [[tok for tok in jieba.lcut(s, HMM=False) if _WORD.search(tok)] for s in sentences]


def count_matrix(tokens: list[list[str]], vocabulary: dict[str, int]) -> sp.csr_matrix:
    """Sentence x word counts (words outside ``vocabulary`` ignored)."""
    rows, cols = [], []
    for row, sentence in enumerate(tokens):
        for tok in sentence:
            col = vocabulary.get(tok)
            if col is not None:
                rows.append(row)
                cols.append(col)
    data = np.ones(len(rows), dtype=np.float64)
    return sp.csr_matrix((data, (rows, cols)), shape=(len(tokens), max(len(vocabulary), 1)))


def build_vocabulary(tokens: list[list[str]], min_count: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    for sentence in tokens:
        for tok in sentence:
            counts[tok] = counts.get(tok, 0) + 1
    return {tok: k for k, tok in enumerate(sorted(t for t, c in counts.items() if c >= min_count))}


def train_ppmi_svd(tokens: list[list[str]], dim: int = 64, min_count: int = 2,
                   rng: np.random.Generator | None = None) -> WordVectors:
    """Word vectors from the input itself: PPMI of sentence co-occurrence, truncated SVD
    (randomised, seeded by ``rng``)."""
    from sklearn.utils.extmath import randomized_svd

    vocabulary = build_vocabulary(tokens, min_count)
    if len(vocabulary) < 3:
        raise BadInputError(f"only {len(vocabulary)} words occur {min_count}+ times: too little "
                            "text to train context word vectors",
                            hint="set align_sentences.context_weight = 0 for tiny inputs")
    presence = count_matrix(tokens, vocabulary)
    presence.data[:] = 1.0
    cooc = (presence.T @ presence).tocoo()
    total = cooc.data.sum()
    marginal = np.asarray(cooc.sum(axis=1)).ravel()
    pmi = np.log(cooc.data * total / (marginal[cooc.row] * marginal[cooc.col]))
    keep = (pmi > 0) & (cooc.row != cooc.col)
    ppmi = sp.csr_matrix((pmi[keep], (cooc.row[keep], cooc.col[keep])), shape=cooc.shape)
    k = max(1, min(dim, len(vocabulary) - 2))
    rng = rng or np.random.default_rng(0)
    u, s, _vt = randomized_svd(ppmi, n_components=k, n_iter=4,
                               random_state=int(rng.integers(0, 2**31 - 1)))
    vectors = u * np.sqrt(s)[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return WordVectors(vocabulary, (vectors / np.maximum(norms, 1e-12)).astype(np.float32))


def load_word2vec_text(path: str | Path) -> WordVectors:
    """Word vectors from a word2vec/fastText ``.vec`` text file (header line optional)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"word vector file {path} does not exist",
                          hint="set align_sentences.context_vectors = \"input\" to train on the input")
    vocabulary: dict[str, int] = {}
    rows: list[np.ndarray] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            parts = line.rstrip().split(" ")
            if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue
            try:
                vector = np.array(parts[1:], dtype=np.float32)
            except ValueError as exc:
                raise BadInputError(f"{path} line {number} is not 'word v1 v2 ...'") from exc
            if rows and vector.shape != rows[0].shape:
                raise BadInputError(f"{path} line {number} has {vector.size} values, "
                                    f"line 1 had {rows[0].size}")
            vocabulary.setdefault(parts[0], len(rows))
            if len(vocabulary) > len(rows):
                rows.append(vector)
    if not rows:
        raise BadInputError(f"{path} holds no word vectors")
    matrix = np.stack(rows)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return WordVectors(vocabulary, matrix / np.maximum(norms, 1e-12))


def idf_weights(counts: sp.csr_matrix) -> np.ndarray:
    df = np.asarray((counts > 0).sum(axis=0)).ravel()
    return np.log(counts.shape[0] / np.maximum(df, 1)).astype(np.float64)


def context_vectors(counts: sp.csr_matrix, idf: np.ndarray, vectors: np.ndarray,
                    window: int = 2, include_self: bool = False) -> np.ndarray:
    """(n, dim) unit TF-IDF-weighted mean word vector of each sentence's context."""
    n = counts.shape[0]
    # a document shorter than the window has fewer diagonals (one unit: none but its own)
    offsets = [k for k in range(-window, window + 1) if (include_self or k != 0) and abs(k) < n]
    band = sp.diags([np.ones(n - abs(k)) for k in offsets], offsets, shape=(n, n), format="csr") \
        if offsets else sp.csr_matrix((n, n))
    weights = (band @ counts).multiply(idf[None, :]).tocsr()
    summed = np.asarray(weights @ vectors)
    norms = np.linalg.norm(summed, axis=1, keepdims=True)
    return (summed / np.maximum(norms, 1e-12)).astype(np.float32)


def with_context(sentence_vectors: np.ndarray, context: np.ndarray, weight: float) -> np.ndarray:
    """``[sqrt(1-w) e, sqrt(w) c]`` (unit rows when e and c are unit rows)."""
    if not 0.0 <= weight < 1.0:
        raise ConfigError(f"context_weight must be in [0, 1), not {weight}")
    return np.hstack([np.sqrt(1.0 - weight) * sentence_vectors,
                      np.sqrt(weight) * context]).astype(np.float32)


def random_index_vectors(tokens: list[list[str]], dim: int = 256, min_count: int = 1,
                         rng: np.random.Generator | None = None) -> WordVectors:
    """Random indexing: every word gets a fixed random unit vector, so a TF-IDF-weighted
    average of them is a random projection of the TF-IDF bag of words (cosines preserved
    approximately, Johnson-Lindenstrauss) -- lexical overlap in a small dense space."""
    vocabulary = build_vocabulary(tokens, min_count)
    rng = rng or np.random.default_rng(0)
    matrix = rng.standard_normal((max(len(vocabulary), 1), dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return WordVectors(vocabulary, matrix)


def document_contexts(src: list[str], tgt: list[str], *, source: str = "input", dim: int = 64,
                      min_count: int = 2, window: int = 2, include_self: bool = False,
                      rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Context vectors of both documents, in one word-vector space.

    ``source``: ``"input"`` (PPMI + SVD over the input's tokens), ``"random"`` (random
    indexing, see :func:`random_index_vectors`) or the path of a word2vec text file.
    """
    tokens = tokenize(src + tgt)
    if source == "input":
        words = train_ppmi_svd(tokens, dim=dim, min_count=min_count, rng=rng)
    elif source == "random":
        words = random_index_vectors(tokens, dim=dim, min_count=1, rng=rng)
    else:
        words = load_word2vec_text(source)
    counts = count_matrix(tokens, words.vocabulary)
    idf = idf_weights(counts)
    src_ctx = context_vectors(counts[: len(src)], idf, words.matrix, window, include_self)
    tgt_ctx = context_vectors(counts[len(src):], idf, words.matrix, window, include_self)
    return src_ctx, tgt_ctx
