"""SimAlign and SHIFT-ATT aligners through the real loading code, on tiny random models."""
from __future__ import annotations

import numpy as np
import pytest

from cppdb.align.words.settings import AlignWordsSettings
from cppdb.align.words.api import align_tokenized
from cppdb.align.words.attention import AttentionAligner, _word_matrix
from cppdb.align.words.simalign_backend import SimAlignAligner
from cppdb.config import load_config, resolve
from cppdb.errors import ModelNotFoundError
from cppdb.registry import availability

pytestmark = pytest.mark.neural

PAIRS = [("他 死 于 一场 车祸 。".split(), "He died in a car accident .".split()),
         ("北京".split(), "beijing".split()),
         ("丹顶鹤 飞 到 北京 了".split(), "red crowned cranes flew to beijing".split())]


def test_simalign_matrices_from_a_local_encoder(tiny_bert_dir):
    aligner = SimAlignAligner(model_dir=str(tiny_bert_dir), layer=8, matching="itermax")
    mats = aligner.align(PAIRS)
    assert [m.shape for m in mats] == [(len(z), len(e)) for z, e in PAIRS]
    assert all(m.min() >= 0.0 and m.max() <= 1.0 for m in mats)
    assert all((m > 0).any() for m in mats)        # itermax links at least the mutual best
    assert mats[1][0, 0] == pytest.approx(1.0)     # a 1×1 pair: both softmaxes are 1
    soft = SimAlignAligner(model_dir=str(tiny_bert_dir), matching="none").align(PAIRS)
    assert np.all(soft[0] > 0)
    # matched cells keep the soft value of the unmatched run
    linked = mats[0] > 0
    assert np.allclose(mats[0][linked], soft[0][linked])
    # word vectors are sub-word means: same word, same vector, whatever the sentence
    vectors = aligner.embed([["北京"], ["北京"]])
    assert np.allclose(vectors[0], vectors[1])


def test_attention_aligner_reads_shifted_cross_attention(tiny_marian_dir):
    aligner = AttentionAligner(model_dir=str(tiny_marian_dir), layer=-1, shift=1)
    mats = aligner.align(PAIRS)
    assert [m.shape for m in mats] == [(len(z), len(e)) for z, e in PAIRS]
    for mat in mats:   # every en word's column is a distribution over the zh words
        assert np.allclose(mat.sum(axis=0), 1.0)
    unshifted = AttentionAligner(model_dir=str(tiny_marian_dir), shift=0).align(PAIRS)
    assert not np.allclose(mats[0], unshifted[0])


def test_word_matrix_averages_pieces_and_applies_the_shift():
    # 3 decoder steps × 3 source pieces; zh words = pieces [0,1] and [2]; en word = piece 0
    att = np.array([[1.0, 0.0, 0.0],
                    [0.0, 0.2, 0.8],
                    [0.5, 0.5, 0.0]])
    shifted = _word_matrix(att, [(0, 2), (2, 3)], [(1, 2)])      # read at step 1
    assert shifted[:, 0].tolist() == pytest.approx([0.2, 0.8])
    unshifted = _word_matrix(att, [(0, 2), (2, 3)], [(0, 1)])    # read at step 0
    assert unshifted[:, 0].tolist() == pytest.approx([1.0, 0.0])


@pytest.mark.parametrize("cls, key", [(SimAlignAligner, "simalign"),
                                      (AttentionAligner, "attention")])
def test_missing_models_are_clear_errors(cls, key, tmp_path):
    with pytest.raises(ModelNotFoundError, match=f"align_words.{key}.model_dir is empty"):
        cls().check()
    with pytest.raises(ModelNotFoundError, match="config.json missing"):
        cls(model_dir=str(tmp_path)).check()
    row = availability("word_aligner", key)
    assert row["usable"] is False and "model_dir" in row["how_to_enable"]


def test_ensemble_with_all_four_aligners(tiny_bert_dir, tiny_marian_dir):
    config = resolve(AlignWordsSettings, load_config(None, [
        'align_words.aligners=["thot", "dictionary", "simalign", "attention"]',
        f"align_words.simalign.model_dir={tiny_bert_dir}",
        f"align_words.attention.model_dir={tiny_marian_dir}",
        "align_words.strict=true"]))
    zh = [z for z, _ in PAIRS]
    en = [e for _, e in PAIRS]
    result = align_tokenized(zh, en, config, train=(zh * 5, en * 5), keep_matrices=True)
    assert result.aligners_used == ("thot", "dictionary", "simalign", "attention")
    assert set(result.matrices) == set(result.aligners_used)
    assert dict(result.params.weights)["simalign"] == pytest.approx(0.3 / 1.3)
    assert len(result.signatures) == 4
