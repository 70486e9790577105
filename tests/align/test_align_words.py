"""Word alignment: gold formats, AER, matching, symmetrisation, ensemble maths and tuning."""
from __future__ import annotations

import numpy as np
import pytest

from cppdb.align.words.base import cell_grid, check_pairs
from cppdb.align.words.ensemble import (EnsembleParams, combine, decode, decode_matrix,
                                        load_params, save_params, tune)
from cppdb.align.words.gold import (GoldAlignment, bootstrap_aer, check_gold_fits,
                                    format_links, parse_gold_line, score_alignment)
from cppdb.align.words.matching import itermax, max_weight_match, mutual_argmax
from cppdb.align.words.symmetrize import symmetrize
from cppdb.errors import BadInputError, ConfigError

S = frozenset


# -- gold formats ---------------------------------------------------------------------------
@pytest.mark.parametrize("line, one_based", [
    ("0-0 1-1 1-2-P", False),     # DeNero: i-j-P possible
    ("0-0 1-1 1p2", False),       # awesome-align / Tsinghua: ipj possible
    ("0-0 1-1 1?2", False),       # i?j possible
    ("0-0 1-1 1-2p", False),      # i-jp possible
    ("0-0 1-1-S 1-2-p", False),   # explicit sure, lowercase possible
    ("1-1 2-2 2-3-P", True),      # one-based
    ("1-1 2-2 2p3", True),
])
def test_every_gold_style_reads_the_same_links(line, one_based):
    gold = parse_gold_line(line, one_based=one_based)
    assert gold.sure == S({(0, 0), (1, 1)})
    assert gold.possible == S({(0, 0), (1, 1), (1, 2)})


@pytest.mark.parametrize("line, one_based, message", [
    ("0_0", False, "cannot read link '0_0'"),
    ("0-0 x", False, "cannot read link 'x'"),
    ("0-1", True, "index 0 in a one-based file"),
])
def test_bad_gold_links_are_clear_errors(line, one_based, message):
    with pytest.raises(BadInputError, match=message):
        parse_gold_line(line, one_based=one_based)


def test_gold_outside_the_sentence_says_where():
    gold = [parse_gold_line("0-0 3-1")]
    with pytest.raises(BadInputError, match="line 1: link 3-1 is outside the pair"):
        check_gold_fits(gold, [(2, 2)])
    with pytest.raises(BadInputError, match="1 lines but there are 2"):
        check_gold_fits(gold, [(4, 2), (1, 1)])


# -- AER on hand-checked examples -----------------------------------------------------------
@pytest.mark.parametrize("system, sure, possible, precision, recall, aer", [
    # A={00,11,22}, S={00,11}, P=S+{23}: |A∩S|=2 |A∩P|=2 -> AER = 1-4/5
    ([(0, 0), (1, 1), (2, 2)], {(0, 0), (1, 1)}, {(2, 3)}, 2 / 3, 1.0, 0.2),
    # a possible link counts for precision only: A={00,23}: |A∩S|=1 |A∩P|=2 -> 1-3/4
    ([(0, 0), (2, 3)], {(0, 0), (1, 1)}, {(2, 3)}, 1.0, 0.5, 0.25),
    # nothing proposed: AER 1
    ([], {(0, 0)}, set(), 0.0, 0.0, 1.0),
    # perfect on sure links only, no possible links
    ([(0, 0), (1, 1)], {(0, 0), (1, 1)}, set(), 1.0, 1.0, 0.0),
])
def test_aer_hand_checked(system, sure, possible, precision, recall, aer):
    gold = GoldAlignment(S(sure), S(sure | possible))
    score = score_alignment([system], [gold])
    assert score.precision == pytest.approx(precision)
    assert score.recall == pytest.approx(recall)
    assert score.aer == pytest.approx(aer)


def test_aer_sums_counts_over_sentences_before_dividing():
    gold = [parse_gold_line("0-0"), parse_gold_line("0-0 1-1 2-2")]
    score = score_alignment([[(0, 0)], [(0, 0)]], gold)
    # counts: A∩S = 2, A∩P = 2, |A| = 2, |S| = 4  ->  1 - 4/6 (not the mean of 0 and 0.5)
    assert score.aer == pytest.approx(1 - 4 / 6)
    low, high = bootstrap_aer([[(0, 0)], [(0, 0)]], gold, rng=np.random.default_rng(0),
                              samples=200)
    assert 0.0 <= low <= score.aer <= high <= 1.0


def test_aer_matches_the_shared_reference_formula_on_a_pharaoh_round_trip():
    links = [(1, 0), (0, 1), (2, 2)]
    assert format_links(links) == "0-1 1-0 2-2"
    gold = parse_gold_line("0-1 1-0 2-3-P")
    assert score_alignment([links], [gold]).aer == pytest.approx(1 - (2 + 2) / (3 + 2))


# -- matching (SimAlign) --------------------------------------------------------------------
def test_mutual_argmax_itermax_and_match():
    sim = np.array([[0.9, 0.8, 0.0],
                    [0.7, 0.1, 0.0],
                    [0.0, 0.0, 0.0]])
    arg = mutual_argmax(sim)
    assert set(zip(*np.nonzero(arg))) == {(0, 0)}
    it = itermax(sim)
    # round 2 looks only at cells with an unaligned word (0-0 is closed), damped by 0.9:
    # zh0's best open cell is 0-1 (.72) and en1's too; zh1's is 1-0 (.63) and en0's too
    assert set(zip(*np.nonzero(it))) == {(0, 0), (0, 1), (1, 0)}
    assert not it[2].any() and not it[:, 2].any()   # zero similarity never links
    match = max_weight_match(sim)
    assert set(zip(*np.nonzero(match))) == {(0, 1), (1, 0)}  # 0.8 + 0.7 > 0.9 + 0.1


# -- symmetrisation -------------------------------------------------------------------------
def _m(shape, links):
    out = np.zeros(shape, dtype=bool)
    for i, j in links:
        out[i, j] = True
    return out


def test_symmetrisation_heuristics_on_a_hand_example():
    forward = _m((3, 3), [(0, 0), (1, 1), (2, 1)])
    backward = _m((3, 3), [(0, 0), (1, 1), (1, 2)])
    links = lambda m: set(zip(*np.nonzero(m)))  # noqa: E731
    assert links(symmetrize(forward, backward, "intersection")) == {(0, 0), (1, 1)}
    assert links(symmetrize(forward, backward, "union")) == {(0, 0), (1, 1), (2, 1), (1, 2)}
    # grow-diag adds neighbours of the intersection that cover an unaligned word
    assert links(symmetrize(forward, backward, "grow-diag")) == {(0, 0), (1, 1), (2, 1), (1, 2)}
    # a link whose both words are unaligned is added by final-and; one sharing a word is not
    fwd = _m((4, 4), [(0, 0), (3, 3), (2, 0)])
    bwd = _m((4, 4), [(0, 0)])
    assert links(symmetrize(fwd, bwd, "grow-diag-final-and")) == {(0, 0), (3, 3)}
    # grow-diag-final needs only one of the two words unaligned
    assert links(symmetrize(fwd, bwd, "grow-diag-final")) == {(0, 0), (3, 3), (2, 0)}
    fwd2 = _m((4, 4), [(0, 0), (0, 3)])
    assert links(symmetrize(fwd2, bwd, "grow-diag-final-and")) == {(0, 0)}
    assert links(symmetrize(fwd2, bwd, "grow-diag-final")) == {(0, 0), (0, 3)}
    with pytest.raises(ConfigError, match="unknown symmetrisation"):
        symmetrize(fwd, bwd, "grow-sideways")


# -- ensemble maths -------------------------------------------------------------------------
def test_combine_normalises_weights_and_checks_shapes():
    a = [np.ones((2, 3))]
    b = [np.zeros((2, 3))]
    params = EnsembleParams((("a", 2.0), ("b", 1.0)), threshold=0.5)
    (combined,) = combine({"a": a, "b": b}, params)
    assert np.allclose(combined, 2 / 3)
    with pytest.raises(BadInputError, match="disagree on the matrix shape"):
        combine({"a": a, "b": [np.zeros((3, 2))]}, params)
    with pytest.raises(ConfigError, match="no matrices from aligner"):
        combine({"a": a}, params)


def test_restricted_keeps_available_aligners_and_renormalises():
    params = EnsembleParams((("thot", 0.4), ("simalign", 0.3), ("dictionary", 0.3)), 0.2)
    kept = params.restricted(("thot", "dictionary"))
    assert dict(kept.weights) == pytest.approx({"thot": 4 / 7, "dictionary": 3 / 7})
    with pytest.raises(ConfigError, match="no ensemble weight"):
        params.restricted(("attention",))


@pytest.mark.parametrize("weights, message", [
    ((("a", -0.1), ("b", 1.0)), "non-negative"),
    ((("a", 0.0),), "at least one ensemble weight"),
])
def test_bad_weights_are_errors(weights, message):
    with pytest.raises(ConfigError, match=message):
        EnsembleParams(weights, 0.5)


def test_decoding_threshold_and_gdfa_with_sure_links():
    prob = np.array([[0.9, 0.2, 0.0],
                     [0.1, 0.6, 0.55],
                     [0.0, 0.05, 0.1]])
    by_threshold = EnsembleParams((("x", 1.0),), threshold=0.5)
    assert set(zip(*np.nonzero(decode_matrix(prob, by_threshold)))) == {(0, 0), (1, 1), (1, 2)}
    gdfa = EnsembleParams((("x", 1.0),), threshold=0.5, decode="grow-diag-final-and")
    # directional argmax: en2's best zh is 1 (0.55) but zh1's best en is 1 -> the 1-2 link
    # is only in one direction and shares zh1 with an intersection link: grow adds it (diag)
    assert set(zip(*np.nonzero(decode_matrix(prob, gdfa)))) == {(0, 0), (1, 1), (1, 2)}
    strict = EnsembleParams((("x", 1.0),), threshold=0.58, decode="grow-diag-final-and")
    assert set(zip(*np.nonzero(decode_matrix(prob, strict)))) == {(0, 0), (1, 1)}
    with_sure = EnsembleParams((("x", 1.0),), 0.58, "grow-diag-final-and", sure_threshold=0.5)
    assert (1, 2) in set(zip(*np.nonzero(decode_matrix(prob, with_sure))))
    assert decode([prob], by_threshold) == [[(0, 0), (1, 1), (1, 2)]]


def test_tuning_recovers_known_weights_on_synthetic_matrices():
    rng = np.random.default_rng(7)
    true = np.array([0.6, 0.3, 0.1])
    mats = {"a": [], "b": [], "c": []}
    gold = []
    for _ in range(60):
        shape = tuple(rng.integers(4, 9, size=2))
        parts = [rng.random(shape) for _ in range(3)]
        for name, part in zip(mats, parts):
            mats[name].append(part)
        prob = sum(w * p for w, p in zip(true, parts))
        links = frozenset(zip(*(x.tolist() for x in np.nonzero(prob >= 0.62))))
        gold.append(GoldAlignment(links, links))
    result = tune(mats, gold, decodes=("threshold",), weight_step=0.1,
                  thresholds=np.round(np.arange(0.56, 0.69, 0.02), 3))
    found = np.array([w for _, w in result.params.weights])
    assert np.abs(found - true).max() <= 0.05 + 1e-9
    assert result.params.threshold == pytest.approx(0.62, abs=0.021)
    assert result.aer < 0.03
    # a decoy aligner weight must not help: the tuner gives it (almost) nothing
    assert found[2] < found[1] < found[0]


def test_tuned_params_round_trip_and_bad_files(tmp_path):
    mats = {"a": [np.array([[0.9, 0.1], [0.2, 0.8]])]}
    gold = [parse_gold_line("0-0 1-1")]
    result = tune(mats, gold, decodes=("threshold",))
    path = tmp_path / "tuned.json"
    save_params(path, result, {"aligners": ["a"]})
    assert load_params(path) == result.params
    assert result.aer == 0.0
    with pytest.raises(ConfigError, match="does not exist"):
        load_params(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text('{"ensemble": {"weights": 3}}')
    with pytest.raises(ConfigError, match="malformed"):
        load_params(tmp_path / "bad.json")


# -- bulk cell grid and input checks --------------------------------------------------------
def test_cell_grid_flattens_pairs_row_major():
    grid = cell_grid([(["a", "b"], ["x", "y", "z"]), (["c"], ["w"])])
    assert grid.size == 7
    assert grid.zh_pos.tolist() == [0, 0, 0, 1, 1, 1, 0]
    assert grid.en_pos.tolist() == [0, 1, 2, 0, 1, 2, 0]
    assert grid.zh_token.tolist() == [0, 0, 0, 1, 1, 1, 2]
    assert grid.en_token.tolist() == [0, 1, 2, 0, 1, 2, 3]
    mats = grid.split(np.arange(7.0))
    assert mats[0].tolist() == [[0, 1, 2], [3, 4, 5]] and mats[1].tolist() == [[6]]


@pytest.mark.parametrize("pairs, message", [
    ([("我 爱 你", ["I"])], "zh string instead of a token list"),
    ([([], ["I"])], "pair 1 has no zh tokens"),
    ([(["我"], ["I", "love you"])], "invalid en token 'love you'"),
])
def test_bad_pairs_are_clear_errors(pairs, message):
    with pytest.raises(BadInputError, match=message):
        check_pairs(pairs)
