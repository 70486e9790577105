"""Our Vecalign DP on constructed examples (deterministic toy vectors: fast, exact)."""
from __future__ import annotations

import numpy as np
import pytest

from cppdb.align.sentences.align import AlignSettings, align_sentences, beads_from_anchors
from cppdb.align.sentences.bam import Anchor
from cppdb.align.sentences.beads import Bead, check_coverage, format_beads, parse_beads
from cppdb.align.sentences.context import (context_vectors, count_matrix, idf_weights,
                                           train_ppmi_svd, with_context)
from cppdb.align.sentences.vecalign import (VecalignSettings, band_from_path, usable_anchors,
                                            prepare_level, vecalign, window_vectors)
from cppdb.errors import BadInputError, ConfigError


def concepts(n: int, dim: int = 64, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, dim))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def keys(beads: list[Bead]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    return [(b.src, b.tgt) for b in beads]


def noisy(vectors: np.ndarray, seed: int, scale: float = 0.15) -> np.ndarray:
    noise = np.random.default_rng(seed).standard_normal(vectors.shape).astype(np.float32)
    return unit(vectors + scale * noise / np.sqrt(vectors.shape[1]) * 4)


def test_merges_and_splits_are_found() -> None:
    c = concepts(12)
    # target merges source 2+3 and splits source 6 into two halves
    src = noisy(c[:10], 1)
    half_a, half_b = unit(c[6] + 0.3 * c[10]), unit(c[6] + 0.3 * c[11])
    tgt = noisy(np.stack([c[0], c[1], unit(c[2] + c[3]), c[4], c[5], half_a, half_b, c[7],
                          c[8], c[9]]), 2)
    beads = vecalign(src, tgt, VecalignSettings(max_bead_size=4), rng=np.random.default_rng(0))
    check_coverage(beads, 10, 10)
    assert keys(beads) == [((0,), (0,)), ((1,), (1,)), ((2, 3), (2,)), ((4,), (3,)),
                           ((5,), (4,)), ((6,), (5, 6)), ((7,), (7,)), ((8,), (8,)),
                           ((9,), (9,))]


def test_deletions_and_insertions_with_one_to_one_beads() -> None:
    c = concepts(12)
    src = noisy(c[[0, 1, 2, 3, 4, 5, 6, 7]], 3)
    tgt = noisy(c[[0, 1, 3, 4, 10, 5, 6, 7]], 4)       # 2 omitted, 10 added
    beads = vecalign(src, tgt, VecalignSettings(max_bead_size=2), rng=np.random.default_rng(0))
    got = keys(beads)
    assert ((2,), ()) in got and ((), (4,)) in got
    assert ((3,), (2,)) in got and ((5,), (5,)) in got


def test_window_vectors_are_unit_means() -> None:
    c = concepts(4)
    windows = window_vectors(c, 3)
    np.testing.assert_allclose(windows[1, 0], unit(c[0] + c[1]), atol=1e-6)
    np.testing.assert_allclose(windows[2, 1], unit(c[1] + c[2] + c[3]), atol=1e-6)
    np.testing.assert_allclose(windows[2, 3], c[3], atol=1e-6)   # clipped at the end


def test_downsampled_dp_equals_full_dp_on_a_long_document() -> None:
    n = 900
    c = concepts(n, dim=48, seed=1)
    noise = np.random.default_rng(2).standard_normal((n, 48)).astype(np.float32) * 0.2
    keep = np.ones(n, bool)
    keep[[100, 101, 500, 777]] = False           # omitted sentences
    tgt = unit(c[keep] + noise[keep])
    full = vecalign(c, tgt, VecalignSettings(max_size_full_dp=1000), rng=np.random.default_rng(0))
    fast = vecalign(c, tgt, VecalignSettings(max_size_full_dp=60), rng=np.random.default_rng(0))
    assert keys(fast) == keys(full)
    check_coverage(fast, n, int(keep.sum()))
    one_to_one = {b.src[0]: b.tgt[0] for b in fast if b.is_one_to_one}
    assert not {100, 101, 500, 777} & set(one_to_one)
    assert one_to_one[50] == 50 and one_to_one[300] == 298 and one_to_one[899] == 895


def test_band_contains_the_path_and_spans_the_grid() -> None:
    path = np.array([[0, 0], [1, 1], [2, 1], [3, 2], [4, 4], [5, 5]])
    lo, hi = band_from_path(path, 5, 5, width=1)
    assert lo[0] == 0 and hi[-1] == 5
    for i, j in path:
        assert lo[i] <= j <= hi[i]
    assert (np.diff(lo) >= 0).all() and (np.diff(hi) >= 0).all()


def test_hard_anchors_are_forced_and_flagged() -> None:
    c = concepts(8)
    src, tgt = noisy(c, 5), noisy(c, 6)
    beads = vecalign(src, tgt, VecalignSettings(anchor_mode="hard"),
                     rng=np.random.default_rng(0), anchors=[(3, 3), (5, 5)])
    assert [(b.src, b.tgt) for b in beads if b.anchor] == [((3,), (3,)), ((5,), (5,))]
    check_coverage(beads, 8, 8)


def test_soft_anchors_guide_but_a_wrong_one_is_overruled() -> None:
    c = concepts(8)
    src, tgt = noisy(c, 5), noisy(c, 6)
    beads = vecalign(src, tgt, VecalignSettings(anchor_mode="soft", anchor_factor=0.5),
                     rng=np.random.default_rng(0), anchors=[(2, 3), (5, 5)])
    assert [(b.src, b.tgt) for b in beads if b.anchor] == [((5,), (5,))]
    assert keys(beads) == [((i,), (i,)) for i in range(8)]


def test_soft_anchor_decides_an_ambiguous_choice() -> None:
    c = concepts(4)
    src = noisy(c[[0, 1, 3]], 7)
    tgt = noisy(c[[0, 1, 1, 3]], 8)          # source 1 has two (nearly) equally good partners
    for anchor in ((1, 1), (1, 2)):
        beads = vecalign(src, tgt, VecalignSettings(max_bead_size=2, anchor_factor=0.5),
                         rng=np.random.default_rng(0), anchors=[anchor])
        assert ((anchor[0],), (anchor[1],)) in keys(beads)


def test_an_anchor_the_dp_would_never_keep_is_dropped() -> None:
    c = concepts(20)
    tgt = c.copy()
    tgt[15] = -c[6]                      # anti-correlated: far worse than a random pair
    level = prepare_level(c, tgt, VecalignSettings(), np.random.default_rng(0))
    assert usable_anchors(level, [(4, 4), (6, 15)]) == [(4, 4)]


def test_crossing_anchors_are_bad_input() -> None:
    c = concepts(10)
    with pytest.raises(BadInputError, match="cross"):
        vecalign(c, c, rng=np.random.default_rng(0), anchors=[(5, 5), (4, 6)])


def test_mismatched_dimensions_are_bad_input() -> None:
    with pytest.raises(BadInputError, match="dimensions"):
        vecalign(concepts(3, 8), concepts(3, 16), rng=np.random.default_rng(0))


def test_empty_side_gives_only_deletions() -> None:
    beads = vecalign(concepts(3), np.zeros((0, 64), np.float32), rng=np.random.default_rng(0))
    assert keys(beads) == [((0,), ()), ((1,), ()), ((2,), ())]


def test_bead_text_format_round_trips() -> None:
    beads = [Bead((0, 1), (0,), 0.25), Bead((2,), (), 1.0), Bead((), (1,), 1.0)]
    text = format_beads(beads)
    assert text.splitlines()[0] == "[0, 1]:[0]:0.250000"
    assert keys(parse_beads(text)) == keys(beads)
    with pytest.raises(BadInputError, match="line 1"):
        parse_beads("0-1\n")


def test_bam_only_beads_fill_gaps_between_anchors() -> None:
    src, tgt = ["甲", "乙", "丙", "丁"], ["甲", "乙丙", "丁"]
    beads = beads_from_anchors(src, tgt, [Anchor(0, 0, 1.0, 1.0), Anchor(3, 2, 1.0, 1.0, True)])
    assert keys(beads) == [((0,), (0,)), ((1, 2), (1,)), ((3,), (2,))]
    assert [b.anchor for b in beads] == [True, False, True]


def test_context_vectors_average_neighbours_weighted_by_idf() -> None:
    tokens = [["甲", "乙"], ["丙"], ["甲", "丁"]]
    vocab = {"甲": 0, "乙": 1, "丙": 2, "丁": 3}
    counts = count_matrix(tokens, vocab)
    idf = idf_weights(counts)
    assert idf[0] == pytest.approx(np.log(3 / 2)) and idf[2] == pytest.approx(np.log(3))
    words = np.eye(4, dtype=np.float32)
    ctx = context_vectors(counts, idf, words, window=1)
    # sentence 1's context = sentences 0 and 2: 甲 twice (idf log 1.5), 乙 and 丁 once (log 3)
    expected = unit(np.array([2 * np.log(1.5), np.log(3), 0, np.log(3)]))
    np.testing.assert_allclose(ctx[1], expected, atol=1e-6)
    np.testing.assert_allclose(ctx[0], [0, 0, 1, 0], atol=1e-6)   # own words excluded


def test_with_context_weights_cosines() -> None:
    e, c = concepts(2, 8), concepts(2, 8, seed=5)
    rep = with_context(e, c, 0.25)
    assert rep[0] @ rep[1] == pytest.approx(0.75 * (e[0] @ e[1]) + 0.25 * (c[0] @ c[1]), abs=1e-6)
    with pytest.raises(ConfigError):
        with_context(e, c, 1.0)


def test_ppmi_svd_word_vectors_are_unit_and_share_one_space() -> None:
    tokens = [["猫", "吃", "鱼"], ["狗", "吃", "肉"], ["猫", "喝", "水"], ["狗", "喝", "水"]] * 3
    words = train_ppmi_svd(tokens, dim=3, min_count=2)
    assert set(words.vocabulary) == {"猫", "吃", "鱼", "狗", "肉", "喝", "水"}
    np.testing.assert_allclose(np.linalg.norm(words.matrix, axis=1), 1.0, atol=1e-5)


class ToyEncoder:
    """Each character is a fixed random direction; a text is the unit sum of its characters."""

    def __init__(self) -> None:
        self.table: dict[str, np.ndarray] = {}
        self.rng = np.random.default_rng(7)

    def encode(self, texts: list[str]) -> np.ndarray:
        out = []
        for text in texts:
            vec = np.zeros(32)
            for ch in text:
                if ch not in self.table:
                    self.table[ch] = self.rng.standard_normal(32)
                vec += self.table[ch]
            out.append(vec / max(np.linalg.norm(vec), 1e-9))
        return np.array(out, dtype=np.float32).reshape(-1, 32)

    def signature(self) -> str:
        return "toy"


@pytest.mark.parametrize("method", ["bam", "vecalign", "bam+vecalign"])
def test_align_sentences_methods_cover_both_texts(method: str) -> None:
    src = ["今天天气很好。", "我们去公园散步。", "公园里有很多人。", "孩子们在放风筝。", "我们很晚才回家。"]
    tgt = ["今天天气不错。", "我们到公园去散步，", "那里人很多。", "孩子们在放风筝。", "我们很晚回家。"]
    settings = AlignSettings(method=method, context_weight=0.0)
    result = align_sentences(src, tgt, settings, ToyEncoder())
    check_coverage(result.beads, len(src), len(tgt))
    assert ((0,), (0,)) in keys(result.beads) and ((4,), (4,)) in keys(result.beads)


def test_encode_window_mode_re_encodes_concatenations() -> None:
    src = ["甲乙", "丙丁", "戊"]
    tgt = ["甲乙丙丁", "戊"]
    settings = AlignSettings(method="vecalign", window_vectors="encode", context_weight=0.0)
    result = align_sentences(src, tgt, settings, ToyEncoder())
    assert keys(result.beads) == [((0, 1), (0,)), ((2,), (1,))]


def test_vector_methods_need_an_encoder() -> None:
    with pytest.raises(ConfigError, match="encoder"):
        align_sentences(["甲"], ["甲"], AlignSettings(method="vecalign"))


def test_tiny_documents_skip_the_context_term_and_say_so() -> None:
    result = align_sentences(["甲。"], ["甲。"], AlignSettings(method="vecalign",
                                                            context_weight=0.2), ToyEncoder())
    assert keys(result.beads) == [((0,), (0,))]
    assert result.notes and "context term skipped" in result.notes[0]
