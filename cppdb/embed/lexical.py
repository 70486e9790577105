"""``char-lsa``: a fast offline lexical sentence encoder, fitted per alignment job.

Two Chinese translations of one text share many characters (names, places, numbers,
content words), so character TF-IDF vectors already separate matching sentences from random
ones.  Single characters (``ngram_max = 1``) beat 1-2-grams on every benchmark set (bigrams
fragment the overlap of reworded sentences; the SVD then merges co-occurring characters).  Sparse TF-IDF is reduced by a randomized truncated SVD (latent semantic
analysis) to a few hundred dimensions, so the Vecalign DP can use dense dot products like
with e5 vectors, and rows are L2-normalised.  Encoding 10,000 sentences takes about a
second on one core, instead of minutes with e5.

The vector space is learnt from the texts being aligned: call ``fit(texts)`` with the
sentences of *both* sides first (``align_sentences`` does this for every encoder that has a
``fit`` method; :class:`cppdb.embed.cache.EmbeddingCache` forwards it).  The signature then
contains a hash of the fitted corpus and the settings, so cached vectors of one job are
never reused for another.  Fitting is deterministic (explicit ``seed``).
"""
from __future__ import annotations

import hashlib
from typing import Any, ClassVar

import numpy as np

from cppdb.defaults import toml_defaults
from cppdb.embed.encoders import _check_texts, normalise_rows
from cppdb.errors import BadInputError, ConfigError
from cppdb.registry import Backend

_EMBED = toml_defaults("embed")


class CharLsaEncoder(Backend):
    """Character n-gram TF-IDF + randomized truncated SVD, fitted on the job's texts."""

    name: ClassVar[str] = "char-lsa"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (
        ("scikit-learn", "sklearn"), ("scipy", "scipy"), ("threadpoolctl", "threadpoolctl"))
    install_hint: ClassVar[str] = "pip install scikit-learn"
    description: ClassVar[str] = ("character TF-IDF + SVD, fitted per alignment job "
                                  "(fast, lexical)")
    #: vectors belong to one job's fit and cost ~0.1 ms each: not worth a file per job
    persist_vectors: ClassVar[bool] = False

    def __init__(self, *, dim: int = _EMBED["lsa_dim"], ngram_max: int = _EMBED["lsa_ngram_max"],
                 seed: int = _EMBED["lsa_seed"], svd_iterations: int = 5) -> None:
        if dim < 2:
            raise ConfigError(f"embed.lsa_dim must be >= 2, not {dim}")
        if not 1 <= ngram_max <= 4:
            raise ConfigError(f"embed.lsa_ngram_max must be in 1..4, not {ngram_max}",
                              hint="1 (single characters) is the default; 2 adds character bigrams")
        if svd_iterations < 1:
            raise ConfigError(f"svd_iterations must be >= 1, not {svd_iterations}")
        self.dim = int(dim)
        self.ngram_max = int(ngram_max)
        self.seed = int(seed)
        self.svd_iterations = int(svd_iterations)
        self._vectorizer: Any = None
        self._components: np.ndarray | None = None   # (d, n_features) float32
        self._fit_hash = ""

    @property
    def fitted(self) -> bool:
        return self._components is not None

    def _settings(self) -> str:
        return f"dim:{self.dim}|ngrams:1-{self.ngram_max}|seed:{self.seed}|iter:{self.svd_iterations}"

    def fit(self, texts: list[str]) -> CharLsaEncoder:
        """Learn the vocabulary, IDF weights and SVD basis from ``texts`` (both sides)."""
        texts = _check_texts(texts, "CharLsaEncoder.fit")
        if not any(t.strip() for t in texts):
            raise BadInputError("char-lsa cannot be fitted on empty texts",
                                hint="pass the non-empty sentences of both documents")
        self.check()
        from threadpoolctl import threadpool_limits

        # why one BLAS thread: the matrices are small (sentences x n-grams, rank <= 256);
        # with several BLAS threads on a loaded 2-core machine, spin-waiting made the SVD
        # 20x slower in CPU time (14 CPU-s instead of 0.6 for 2,000 sentences)
        with threadpool_limits(limits=1, user_api="blas"):
            return self._fit(texts)

    def _fit(self, texts: list[str]) -> CharLsaEncoder:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        # why "char" and not "char_wb": Chinese has no spaces, and the bigrams across
        # punctuation are as informative as any other
        vectorizer = TfidfVectorizer(analyzer="char", ngram_range=(1, self.ngram_max),
                                     lowercase=True, sublinear_tf=True, dtype=np.float32)
        matrix = vectorizer.fit_transform(texts)
        # the SVD rank is bounded by both matrix dimensions; tiny inputs get fewer dims
        rank = min(self.dim, matrix.shape[0] - 1, matrix.shape[1] - 1)
        if rank >= 1:
            svd = TruncatedSVD(n_components=rank, algorithm="randomized",
                               n_iter=self.svd_iterations, random_state=self.seed)
            svd.fit(matrix)
            components = svd.components_.astype(np.float32)
        else:   # one distinct text or one feature: identity-like projection
            components = np.eye(1, matrix.shape[1], dtype=np.float32)
        digest = hashlib.sha256(self._settings().encode())
        for text in texts:
            digest.update(text.encode("utf-8"))
            digest.update(b"\0")
        self._vectorizer = vectorizer
        self._components = components
        self._fit_hash = digest.hexdigest()[:16]
        return self

    def encode(self, texts: list[str]) -> np.ndarray:
        texts = _check_texts(texts, "CharLsaEncoder")
        if self._components is None:
            raise ConfigError(
                "the char-lsa encoder is not fitted: its vector space is learnt from the "
                "texts being aligned",
                hint="call encoder.fit(source_sentences + target_sentences) first "
                     "(align_sentences does this itself)")
        if not texts:
            return np.zeros((0, self._components.shape[0]), dtype=np.float32)
        sparse = self._vectorizer.transform(texts)
        return normalise_rows(np.asarray(sparse @ self._components.T, dtype=np.float32))

    def signature(self) -> str:
        state = f"fit:{self._fit_hash}" if self.fitted else "unfitted"
        return f"{self.name}[{self.version()}]|{self._settings()}|{state}"
