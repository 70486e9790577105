"""BAM anchors (seed 004): formulas by hand, the greedy search, no crossing."""
from __future__ import annotations

import numpy as np
import pytest

from cppdb.align.sentences.bam import (Anchor, BamSettings, Candidates, bam_anchors, candidates,
                                       common_characters, greedy_anchors, sentence_lengths)
from cppdb.errors import ConfigError

SRC = ["ab", "cde", "f"]          # lengths 2, 3, 1: Ls = 6
TGT = ["ab", "cdx", "fg"]         # lengths 2, 3, 2: Lt = 7


def test_p_value_by_hand() -> None:
    """P[0,0] and P[1,1] of the tiny pair, computed here step by step from the paper."""
    found = candidates(SRC, TGT, BamSettings(bam_threshold=50.0, bam_similarity_threshold=0.0))
    got = {(i, j): (p, s) for i, j, p, s in zip(found.src, found.tgt, found.cost,
                                                 found.similarity)}
    p0 = 6 / 7
    # (0, 0): U = virtual 1 / 1; D = 4 + 1 / 5 + 1; L = 2 / 2; alpha = (6/2 + 7/2) / 2
    alpha = (6 / 2 + 7 / 2) / 2
    location = alpha * (1 / 1 - p0) ** 2 + (2 / 2 - p0) ** 2 + alpha * (5 / 6 - p0) ** 2
    sim = (2 * 2 / (2 + 2)) * (2 / 2)                    # "ab" / "ab": common 2
    assert got[(0, 0)][1] == pytest.approx(sim)
    assert got[(0, 0)][0] == pytest.approx(location + 1 / sim)
    # (1, 1): U = 2 + 1 / 2 + 1; D = 1 + 1 / 2 + 1; L = 3 / 3; alpha = (6/3 + 7/3) / 2
    alpha = (6 / 3 + 7 / 3) / 2
    location = alpha * (3 / 3 - p0) ** 2 + (3 / 3 - p0) ** 2 + alpha * (2 / 3 - p0) ** 2
    sim = (2 * 2 / (3 + 3)) * (3 / 3)                    # "cde" / "cdx": common 2
    assert got[(1, 1)][0] == pytest.approx(location + 1 / sim)
    # the last row and column belong to the forced last pair, never candidates
    assert all(i < 2 and j < 2 for i, j in got)


def test_no_common_character_is_never_a_candidate() -> None:
    found = candidates(["甲乙", "丙"], ["丁戊", "丙"], BamSettings(bam_threshold=1e9))
    assert (0, 0) not in set(zip(found.src.tolist(), found.tgt.tolist()))


@pytest.mark.parametrize("src, tgt, expected", [
    ("他们到了摩押地", "他们来到摩押", 5),       # multiset overlap, not LCS
    ("啊啊啊", "啊啊", 2),
    ("a b", "ab", 2),                            # whitespace is not counted
])
def test_common_characters_is_multiset_overlap(src: str, tgt: str, expected: int) -> None:
    zero = np.zeros(1, np.int64)
    assert common_characters([src], [tgt], zero, zero)[0] == expected


def test_sentence_lengths_ignore_whitespace_and_are_positive() -> None:
    assert sentence_lengths(["a b", "", "  "]).tolist() == [2.0, 1.0, 1.0]


def test_greedy_takes_smallest_first_and_never_crosses() -> None:
    found = Candidates(src=np.array([2, 1, 3, 0, 1, 2, 4]),
                       tgt=np.array([2, 3, 1, 0, 1, 3, 4]),
                       cost=np.array([1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7]),
                       similarity=np.array([0.9, 0.9, 0.9, 0.9, 0.1, 0.9, 0.9]))
    accepted = greedy_anchors(found, n_src=6, n_tgt=6, similarity_threshold=0.3)
    # (1,3) and (3,1) cross (2,2); (1,1) fails the similarity filter; (2,3) shares row 2
    assert [(i, j) for i, j, _, _ in accepted] == [(2, 2), (0, 0), (4, 4)]


def test_anchors_on_a_real_looking_pair_are_increasing_and_end_with_last_pair() -> None:
    rng = np.random.default_rng(3)
    chars = list("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理")
    src = ["".join(rng.choice(chars, size=rng.integers(5, 30))) for _ in range(60)]
    tgt = [s[: max(2, len(s) - 2)] + "了" for s in src]
    anchors = bam_anchors(src, tgt, BamSettings(bam_threshold=8.0, bam_similarity_threshold=0.3))
    pairs = [(a.src, a.tgt) for a in anchors]
    assert pairs == sorted(pairs)
    assert all(a2.src > a1.src and a2.tgt > a1.tgt for a1, a2 in zip(anchors, anchors[1:]))
    assert anchors[-1] == Anchor(59, 59, anchors[-1].cost, anchors[-1].similarity, forced=True)
    assert sum(a.src == a.tgt for a in anchors) / len(anchors) > 0.9
    assert len(anchors) > 30


def test_bam_handles_5000_by_5000_in_blocks() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 40, size=5000)
    src = ["字" * int(n) for n in lengths]
    tgt = ["字" * int(max(1, n + rng.integers(-2, 3))) for n in lengths]
    anchors = bam_anchors(src, tgt, BamSettings(bam_threshold=3.0, bam_similarity_threshold=0.5))
    assert len(anchors) > 100
    assert all(a2.src > a1.src and a2.tgt > a1.tgt for a1, a2 in zip(anchors, anchors[1:]))


@pytest.mark.parametrize("kwargs", [{"bam_threshold": 1.0}, {"bam_similarity_threshold": 1.0},
                                    {"bam_virtual_length": 0.0}])
def test_bad_settings_are_config_errors(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        BamSettings(**kwargs)


def test_max_candidates_guard_says_how_to_fix() -> None:
    with pytest.raises(ConfigError, match="bam_threshold"):
        candidates(["字字"] * 50, ["字字"] * 50,
                   BamSettings(bam_threshold=1e9, bam_max_candidates=10))
