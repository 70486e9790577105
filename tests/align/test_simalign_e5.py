"""SimAlign over e5-tokens: words ↔ tokens by character offsets, and real links."""
from __future__ import annotations

import numpy as np
import pytest

from cppdb.align.words.settings import AlignWordsSettings
from cppdb.align.words.simalign_e5 import E5SimAlignAligner, join_words, word_vectors
from cppdb.embed.e5_tokens import TokenStates
from cppdb.errors import ConfigError

PAIRS = [("他 死 于 一场 车祸 。".split(), "He died in a car accident .".split()),
         ("北京".split(), "Beijing".split()),
         ("我 喜欢 猫 。".split(), "I like cats .".split())]


@pytest.mark.parametrize("words, sep, text, spans", [
    (["北京", "人"], None, "北京人", [(0, 2), (2, 3)]),
    (["NBA", "球星", "New", "York", "2024"], None, "NBA球星New York 2024",
     [(0, 3), (3, 5), (5, 8), (9, 13), (14, 18)]),
    (["在", "2024", "年"], None, "在2024年", [(0, 1), (1, 5), (5, 6)]),
    (["New", "York"], " ", "New York", [(0, 3), (4, 8)]),
    (["a"], " ", "a", [(0, 1)]),
])
def test_join_words_gives_character_spans(words, sep, text, spans):
    assert join_words(words, sep) == (text, spans)


def _states(starts, ends, special):
    n = len(starts)
    hidden = np.arange(n, dtype=np.float32)[None, :, None] * np.ones((1, n, 2), np.float32)
    return TokenStates(np.zeros(n, np.int64), np.asarray(starts), np.asarray(ends),
                       np.asarray(special), hidden, (8,))


@pytest.mark.parametrize("starts, ends, special, spans, expected", [
    # <s> 北京 人 </s>: each word takes its own token
    ([0, 0, 2, 0], [0, 2, 3, 0], [1, 0, 0, 1], [(0, 2), (2, 3)], [1.0, 2.0]),
    # one token "北京人" straddles the words 北京 | 人: both get it
    ([0, 0, 0], [0, 3, 0], [1, 0, 1], [(0, 2), (2, 3)], [1.0, 1.0]),
    # a word of two tokens: their mean; the empty "▁" token (3) counts for nobody
    ([0, 0, 2, 4, 4], [0, 2, 4, 4, 0], [1, 0, 0, 0, 1], [(0, 4)], [1.5]),
    # specials never count, even with a range
    ([0, 0, 0], [1, 1, 1], [1, 0, 1], [(0, 1)], [1.0]),
])
def test_word_vectors_average_overlapping_tokens(starts, ends, special, spans, expected):
    vectors = word_vectors(_states(starts, ends, np.asarray(special, bool)), spans, (8,))
    assert vectors.shape == (1, len(spans), 2)
    assert vectors[0, :, 0].tolist() == pytest.approx(expected)


@pytest.fixture(scope="module")
def aligner() -> E5SimAlignAligner:
    return E5SimAlignAligner(layer=7, matching="itermax")


def test_real_links_on_simple_pairs(aligner):
    mats = aligner.align(PAIRS)
    assert [m.shape for m in mats] == [(len(z), len(e)) for z, e in PAIRS]
    assert all(m.min() >= 0.0 and m.max() <= 1.0 for m in mats)
    links = [set(zip(*np.nonzero(m > 0))) for m in mats]
    assert {(0, 0), (1, 1), (2, 2), (5, 6)} <= links[0]    # 他–He, 死–died, 于–in, 。–.
    assert links[0] & {(4, 4), (4, 5)}                     # 车祸–car / accident
    assert (0, 4) not in links[0]                          # 他–car must NOT link
    assert links[1] == {(0, 0)}
    assert {(0, 0), (1, 1), (2, 2), (3, 3)} <= links[2]


def test_chunking_does_not_change_matrices():
    # fp32 on both sides: under bf16 a batch's padding moves values by ~1e-3, which is the
    # runtime's numerics (test_e5_torch), not the chunking this test is about
    def make(**extra):
        return E5SimAlignAligner(layer=7, matching="itermax", precision="fp32", **extra)
    chunked = make(chunk_pairs=1).align(PAIRS)
    whole = make().align(PAIRS)
    assert len(whole) == len(chunked) == len(PAIRS)
    for a, b, (zh, en) in zip(whole, chunked, PAIRS, strict=True):
        assert a.shape == b.shape == (len(zh), len(en))
        assert np.allclose(a, b, atol=1e-4)


@pytest.mark.parametrize("bad", [{"matching": "best"}, {"layer": 13}])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ConfigError):
        E5SimAlignAligner(**bad)


@pytest.mark.parametrize("tuned_file, names", [
    ("", ("thot", "dictionary", "simalign-e5")),       # the shipped default
    ("builtin:fast", ("thot", "dictionary")),          # the switch for very large corpora
])
def test_default_ensemble_and_the_fast_switch(tuned_file, names):
    from cppdb.align.words.api import ensemble_params
    from cppdb.config import load_config, resolve

    config = load_config(overrides={"align_words.tuned_file": tuned_file})
    params = ensemble_params(resolve(AlignWordsSettings, config))
    assert params.names == names
    assert params.decode == "grow-diag-final-and"


def test_unknown_builtin_tuned_file_names_the_choices():
    from cppdb.align.words.ensemble import load_params

    with pytest.raises(ConfigError, match="builtin") as info:
        load_params("builtin:nope")
    assert "builtin:fast" in info.value.hint


def test_ensemble_end_to_end_uses_simalign_e5():
    from cppdb.align.words.api import align_tokenized
    from cppdb.config import load_config, resolve

    zh = [p[0] for p in PAIRS] * 3
    en = [p[1] for p in PAIRS] * 3
    result = align_tokenized(zh, en, AlignWordsSettings(), keep_matrices=True)
    assert "simalign-e5" in result.aligners_used
    assert (1, 1) in result.links[0]                        # 死–died
    fast = align_tokenized(zh, en, resolve(AlignWordsSettings, load_config(overrides={
        "align_words.tuned_file": "builtin:fast"})))
    assert "simalign-e5" not in fast.aligners_used


def test_repeated_sentences_are_encoded_once_and_align_alike(aligner, monkeypatch):
    seen: list[int] = []
    original = aligner.encoder.encode_tokens

    def counting(texts, layers=(-1,)):
        seen.append(len(texts))
        return original(texts, layers)

    monkeypatch.setattr(aligner.encoder, "encode_tokens", counting)
    mats = aligner.align(PAIRS + PAIRS)
    assert seen == [len(PAIRS), len(PAIRS)]              # zh side, en side: unique texts only
    assert len(mats) == 2 * len(PAIRS)
    for a, b in zip(mats[:len(PAIRS)], mats[len(PAIRS):], strict=True):
        assert np.array_equal(a, b)
