"""The offline aligners (thot, eflomal, dictionary) on small data, and `align_tokenized`."""
from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import polars as pl
import pytest

from cppdb.align.words.api import align_tokenized
from cppdb.align.words.dictionary import DictionaryAligner
from cppdb.align.words.english import lemma_candidates, number_key, punct_key
from cppdb.align.words.ensemble import EnsembleParams, decode
from cppdb.align.words.gold import GoldAlignment, read_gold, score_alignment
from cppdb.align.words.settings import AlignWordsSettings
from cppdb.align.words.statistical import EflomalAligner, ThotAligner
from cppdb.align.words.symmetrize import symmetrize
from cppdb.config import load_config, resolve
from cppdb.errors import BadInputError, ConfigError, ModelNotFoundError, RunStateError
from cppdb.readers.parallel import read_pretokenized


def synthetic_corpus(n: int, seed: int = 3):
    """Pairs over a 30-word lexicon z_k ↔ e_k, English order with some adjacent swaps."""
    rng = np.random.default_rng(seed)
    pairs, gold = [], []
    for _ in range(n):
        words = rng.choice(30, size=int(rng.integers(3, 7)), replace=False)
        order = list(range(len(words)))
        if rng.random() < 0.4:
            k = int(rng.integers(0, len(words) - 1))
            order[k], order[k + 1] = order[k + 1], order[k]
        zh = [f"z{w}" for w in words]
        en = [f"e{words[o]}" for o in order]
        pairs.append((zh, en))
        links = frozenset((order[j], j) for j in range(len(order)))
        gold.append(GoldAlignment(links, links))
    return pairs, gold


def _gdfa_links(aligner, pairs):
    forward, backward = aligner.directional_links(pairs)
    return [list(zip(*np.nonzero(symmetrize(f, b, "grow-diag-final-and"))))
            for f, b in zip(forward, backward)]


@pytest.mark.parametrize("model", ["eflomal", "hmm", "fast_align"])
def test_thot_learns_a_synthetic_lexicon(model):
    pairs, gold = synthetic_corpus(300)
    aligner = ThotAligner(model=model)
    aligner.train(pairs)
    test_pairs, test_gold = pairs[-40:], gold[-40:]
    assert score_alignment(_gdfa_links(aligner, test_pairs), test_gold).aer < 0.1
    mats = aligner.align(test_pairs)
    assert [m.shape for m in mats] == [(len(z), len(e)) for z, e in test_pairs]
    assert all(0.0 <= m.min() and m.max() <= 1.0 for m in mats)
    soft = decode(mats, EnsembleParams((("thot", 1.0),), 0.5))
    assert score_alignment(soft, test_gold).aer < 0.1
    e_given_z, z_given_e = aligner.lexical_frames()
    assert e_given_z.columns == ["zh", "en", "prob"] == z_given_e.columns
    best = e_given_z.filter(pl.col("zh") == "z7").sort("prob", descending=True)
    assert best["en"][0] == "e7" and best["prob"][0] > 0.5
    best = z_given_e.filter(pl.col("en") == "e7").sort("prob", descending=True)
    assert best["zh"][0] == "z7"


def test_thot_must_be_trained_and_rejects_bad_settings():
    with pytest.raises(RunStateError, match="not trained"):
        ThotAligner().align([(["z1"], ["e1"])])
    with pytest.raises(ConfigError, match="unknown thot model 'giza'"):
        ThotAligner(model="giza")
    with pytest.raises(BadInputError, match="no en tokens"):
        ThotAligner().train([(["z1"], [])])


@pytest.mark.parametrize("decode", [[0, 8, 2], [1, 0, 0], [1, 4, 4], [1, 4], [1, 4, -1]])
def test_eflomal_decode_settings_are_checked(decode):
    with pytest.raises(ConfigError, match="eflomal_decode must be"):
        ThotAligner(eflomal_decode=decode)


def test_eflomal_decode_sweeps_reach_the_models_and_travel_with_them():
    """The sweeps used for pairs outside training are set on both trained models, on a
    copy sent to another process too, and are part of the aligner's signature (they change
    the links) — the training pairs keep their training links whatever the setting."""
    pairs, gold = synthetic_corpus(200)
    aligner = ThotAligner(eflomal_decode=(1, 5, 1))
    aligner.train(pairs)
    assert [m.get_decode_params() for m in aligner._models] == [(1, 5, 1)] * 2
    copy = pickle.loads(pickle.dumps(aligner))
    assert [m.get_decode_params() for m in copy._models] == [(1, 5, 1)] * 2
    assert "decode:1,5,1" in aligner.signature()
    assert ThotAligner().signature() != aligner.signature()
    assert "decode" not in ThotAligner(model="hmm").signature()
    assert score_alignment(_gdfa_links(copy, pairs[-40:]), gold[-40:]).aer < 0.1


def test_thot_trains_in_worker_processes_with_the_same_result(monkeypatch):
    """Both directions in two processes (thot holds the GIL, so threads train one after the
    other): same training links, same held-out links, same lexical tables as in-process."""
    import cppdb.align.words.statistical as statistical

    pairs, _ = synthetic_corpus(300)
    train, held_out = pairs[:260], pairs[260:]
    results = {}
    for mode, min_pairs in (("in-process", 10**9), ("workers", 10)):
        monkeypatch.setattr(statistical, "PROCESS_MIN_PAIRS", min_pairs)
        aligner = ThotAligner(model="hmm", threads=2)
        aligner.train(train)
        assert (aligner._training is not None) == (mode == "workers")
        results[mode] = (aligner.training_links(train[50:], 50), aligner.align(held_out),
                         aligner.lexical_frames())
    (links_a, held_a, lex_a), (links_b, held_b, lex_b) = results.values()
    for a, b in zip(links_a, links_b, strict=True):
        assert len(a) == len(b) == len(train) - 50
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert all(np.array_equal(x, y) for x, y in zip(held_a, held_b, strict=True))
    assert lex_a[0].equals(lex_b[0]) and lex_a[1].equals(lex_b[1])


def test_thot_falls_back_to_training_in_process_when_a_worker_fails(monkeypatch, capsys):
    import cppdb.align.words.statistical as statistical

    monkeypatch.setattr(statistical, "PROCESS_MIN_PAIRS", 10)
    monkeypatch.setattr(statistical.sys, "executable", "/bin/false")
    pairs, _ = synthetic_corpus(100)
    aligner = ThotAligner(model="hmm", threads=2)
    aligner.train(pairs)
    assert aligner._training is None
    assert "training in worker processes failed" in capsys.readouterr().err
    assert len(aligner.align_trained(pairs[:5], 0)) == 5


# `make test` installs the optional GPL extra cppdb[eflomal] so that this adapter is tested.
def test_eflomal_package_learns_a_synthetic_lexicon():
    pairs, gold = synthetic_corpus(300)
    aligner = EflomalAligner()
    aligner.train(pairs[:-40])
    test_pairs, test_gold = pairs[-40:], gold[-40:]
    assert score_alignment(_gdfa_links(aligner, test_pairs), test_gold).aer < 0.15
    mats = aligner.align(test_pairs)
    assert [m.shape for m in mats] == [(len(z), len(e)) for z, e in test_pairs]
    e_given_z, _ = aligner.lexical_frames()
    assert e_given_z.filter(pl.col("zh") == "z3").sort("prob", descending=True)["en"][0] == "e3"


# -- dictionary -----------------------------------------------------------------------------
@pytest.mark.parametrize("word, expected", [
    ("cats", "cat"), ("studies", "study"), ("stopped", "stop"), ("making", "make"),
    ("went", "go"), ("children", "child"),
])
def test_rule_lemmatiser_proposes_the_base_form(word, expected):
    assert expected in lemma_candidates(word)


@pytest.mark.parametrize("token, key", [
    ("22日", "N:22"), ("22nd", "N:22"), ("1,000", "N:1000"), ("三十", "N:30"),
    ("二〇〇二年", "N:2002"), ("Shanghai", None),
])
def test_number_keys(token, key):
    assert number_key(token) == key


@pytest.mark.parametrize("zh, en", [("，", ","), ("。", "."), ("（", "-LRB-"), ("《", "``")])
def test_punctuation_keys_match_across_scripts(zh, en):
    assert punct_key(zh) == punct_key(en)


def test_dictionary_links_glosses_lemmas_numbers_and_pieces():
    aligner = DictionaryAligner(matching="none")
    pairs = [("我 喜欢 猫 。".split(), "I like cats .".split()),
             ("3月 22日 WTO 开会".split(), "WTO met on March 22nd".split()),
             ("红猫 跑".split(), "the red cat runs".split())]
    sims = aligner.similarity(pairs)
    zh, en = pairs[0]
    sim = sims[0]
    assert sim[zh.index("猫"), en.index("cats")] == 1.0          # lemma of cats in 猫's glosses
    assert sim[zh.index("喜欢"), en.index("like")] == 1.0
    assert sim[zh.index("。"), en.index(".")] == 1.0
    assert sim[zh.index("猫"), en.index("like")] == 0.0
    zh, en = pairs[1]
    assert sims[1][zh.index("3月"), en.index("March")] == 1.0     # 3月 → 三月 → March
    assert sims[1][zh.index("22日"), en.index("22nd")] == 1.0     # same number
    assert sims[1][zh.index("WTO"), en.index("WTO")] == 1.0       # same Latin string
    zh, en = pairs[2]
    # 红猫 is not in CC-CEDICT: its pieces 红 + 猫 give a weaker similarity
    assert 0 < sims[2][0, en.index("cat")] < 1.0
    assert sims[2][0, en.index("red")] == sims[2][0, en.index("cat")]
    # spaCy lemmas, when given, are used instead of the rule lemmatiser
    lemmas = [["I", "like", "cat", "."], ["WTO", "meet", "on", "March", "22nd"],
              ["the", "red", "cat", "run"]]
    assert aligner.similarity(pairs, en_lemmas=lemmas)[0][2, 2] == 1.0
    with pytest.raises(ConfigError, match="one lemma per English token"):
        aligner.similarity(pairs, en_lemmas=[["x"]] * 3)


def test_dictionary_word_caches_do_not_change_the_similarities():
    """Per-word results are kept across chunks; a warm aligner, a fresh one and a copy
    sent to another process (caches dropped) give the same matrices."""
    pairs = [("我 喜欢 猫 。".split(), "I like cats .".split()),
             ("3月 22日 WTO 开会".split(), "WTO met on March 22nd".split()),
             ("红猫 跑 , 猫 跑".split(), "the red cat runs , the cat runs".split())]
    warm = DictionaryAligner(matching="none")
    first = warm.similarity(pairs)
    assert "猫" in warm._zh_cache and ("cats", "") in warm._en_cache
    again = warm.similarity(pairs[::-1])[::-1]
    fresh = DictionaryAligner(matching="none").similarity(pairs)
    copy = pickle.loads(pickle.dumps(warm))
    assert copy._zh_cache == {} and copy._en_cache == {}
    for a, b, c, d in zip(first, again, fresh, copy.similarity(pairs), strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(a, d)


def test_dictionary_matching_keeps_one_to_one_links():
    aligner = DictionaryAligner(matching="argmax")
    pairs = [("猫 和 猫".split(), "a cat and a cat".split())]
    (mat,) = aligner.align(pairs)
    links = set(zip(*np.nonzero(mat)))
    # the tie-break links each 猫 to the nearer "cat"
    assert links == {(0, 1), (2, 4)}
    with pytest.raises(ConfigError, match="unknown matching method"):
        DictionaryAligner(matching="best")


# -- the API ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sample(data_dir):
    text = read_pretokenized(data_dir / "wordalign" / "sample.txt")
    train = read_pretokenized(data_dir / "parallel" / "sample.tok.txt")
    gold = read_gold(data_dir / "wordalign" / "sample.gold")
    return ([list(z) for z in text.zh], [list(e) for e in text.en],
            ([list(z) for z in train.zh], [list(e) for e in train.en]), gold)


def test_align_tokenized_on_the_bundled_gold_sample(sample):
    zh, en, train, gold = sample
    result = align_tokenized(zh, en, resolve(AlignWordsSettings, load_config()), train=train)
    assert result.aligners_used == ("thot", "dictionary", "simalign-e5")
    assert len(result.links) == len(zh)
    for links, z, e in zip(result.links, zh, en):
        assert all(0 <= i < len(z) and 0 <= j < len(e) for i, j in links)
    score = score_alignment(result.links, gold)
    assert score.aer < 0.3, score
    assert {"zh", "en", "prob"} == set(result.lex_en_given_zh.columns)
    assert result.lex_zh_given_en.height > 0
    # the ensemble beats the statistical aligner alone (tiny corpus: the dictionary matters)
    thot = resolve(AlignWordsSettings, load_config(None, ['align_words.aligners=["thot"]']))
    alone = align_tokenized(zh, en, thot, train=train)
    assert score.aer < score_alignment(alone.links, gold).aer


def test_rejected_pairs_keep_their_place(sample):
    zh, en, train, _ = sample
    long_zh = ["字"] * 12
    zh2 = [zh[0], [], long_zh, zh[1]]
    en2 = [en[0], ["x"], ["y"] * 3, en[1]]
    config = resolve(AlignWordsSettings, load_config(None, [
        "align_words.max_tokens=10", 'align_words.aligners=["dictionary"]']))
    result = align_tokenized(zh2, en2, config)
    assert [r.index for r in result.rejected] == [1, 2]
    assert "empty zh side" in result.rejected[0].reason
    assert "too long: 12 zh" in result.rejected[1].reason
    assert result.links[1] == [] and result.links[2] == []
    assert result.links[0] and result.links[3]
    assert result.lex_en_given_zh.height == 0      # no statistical aligner: empty tables


def test_unusable_aligners_are_skipped_loudly_or_fail_when_strict(sample):
    zh, en, train, _ = sample
    config = resolve(AlignWordsSettings,
                     load_config(None, ['align_words.aligners=["dictionary", "simalign"]']))
    result = align_tokenized(zh[:3], en[:3], config)
    assert result.aligners_used == ("dictionary",)
    assert result.skipped_aligners[0].name == "simalign"
    assert "model_dir" in result.skipped_aligners[0].reason
    strict = dataclasses.replace(config, strict=True)
    with pytest.raises(ModelNotFoundError, match="align_words.simalign.model_dir"):
        align_tokenized(zh[:3], en[:3], strict)


@pytest.mark.parametrize("overrides, args, error, message", [
    ([], ([["我"]], [["I"], ["x"]]), BadInputError, "1 Chinese sentences but 2 English"),
    (['align_words.aligners=["giza"]'], ([["我"]], [["I"]]), ConfigError, "unknown aligner"),
    (["align_words.tuned_file=/nonexistent.json"], ([["我"]], [["I"]]), ConfigError,
     "does not exist"),
])
def test_api_errors(overrides, args, error, message):
    with pytest.raises(error, match=message):
        align_tokenized(*args, resolve(AlignWordsSettings, load_config(None, overrides)))


def test_pos_and_lemma_lengths_are_checked():
    with pytest.raises(BadInputError, match="en_lemmas must have one entry per token"):
        align_tokenized([["我"]], [["I", "am"]], AlignWordsSettings(), en_lemmas=[["I"]])


def test_training_alignments_are_reused_and_range_checked():
    pairs, gold = synthetic_corpus(200)
    aligner = ThotAligner(model="fast_align")
    aligner.train(pairs)
    mats = aligner.align_trained(pairs[150:], 150)
    assert [m.shape for m in mats] == [(len(z), len(e)) for z, e in pairs[150:]]
    soft = decode(mats, EnsembleParams((("thot", 1.0),), 0.5))
    assert score_alignment(soft, gold[150:]).aer < 0.1
    with pytest.raises(RunStateError, match="only 200 pairs were trained"):
        aligner.align_trained(pairs[150:], 160)


@pytest.mark.slow
def test_streaming_in_chunks_gives_the_same_links(sample, monkeypatch):
    import cppdb.align.words.api as api

    zh, en, train, _ = sample
    # fp32: in bf16 the encoder's batches (cut by the chunks) move the last bits of a few
    # similarities, which can move a link; what is tested here is the streaming itself
    config = resolve(AlignWordsSettings,
                     load_config(overrides={"align_words.simalign-e5.precision": "fp32"}))
    whole = align_tokenized(zh, en, config, train=train)
    monkeypatch.setattr(api, "CHUNK_PAIRS", 7)
    chunked = align_tokenized(zh, en, config, train=train, keep_matrices=True)
    assert chunked.links == whole.links
    assert len(chunked.matrices["thot"]) == len(zh)
