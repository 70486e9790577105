"""Strict/lax bead scoring (Vecalign's score.py rules; counts first, ratios second)."""
from __future__ import annotations

import pytest

from cppdb.align.sentences.beads import parse_beads
from cppdb.align.sentences.scoring import BeadCounts, bead_counts, score_beads, scores_from_counts

GOLD = parse_beads("[0]:[0]\n[1, 2]:[1]\n[3]:[]\n[4]:[2, 3]\n[5]:[4]\n")


@pytest.mark.parametrize("system, one_to_one, expected", [
    # identical output: everything right (deletions count in precision, not in recall)
    ("[0]:[0]\n[1, 2]:[1]\n[3]:[]\n[4]:[2, 3]\n[5]:[4]\n", False, (5, 0, 5, 0, 4, 0, 4, 0)),
    # 1-2 merge split into 1-1 + deletion: strict wrong, lax right for the 1-1 part
    ("[0]:[0]\n[1]:[1]\n[2]:[]\n[3]:[]\n[4]:[2, 3]\n[5]:[4]\n", False, (4, 2, 5, 1, 3, 1, 4, 0)),
    # shifted 1-1 beads: wrong both ways
    ("[0]:[1]\n[1]:[0]\n", True, (0, 2, 0, 2, 0, 2, 0, 2)),
    # only 1-1 beads scored
    ("[0]:[0]\n[1, 2]:[1]\n[5]:[4]\n", True, (2, 0, 2, 0, 2, 0, 2, 0)),
])
def test_counts_table(system: str, one_to_one: bool, expected: tuple[int, ...]) -> None:
    assert bead_counts(GOLD, parse_beads(system), one_to_one=one_to_one).astuple() == expected


def test_scores_are_computed_from_summed_counts() -> None:
    first = bead_counts(GOLD, parse_beads("[0]:[0]\n[5]:[4]\n"), one_to_one=True)
    second = bead_counts(GOLD, parse_beads("[0]:[1]\n"), one_to_one=True)
    total = scores_from_counts(first + second)
    assert total.precision_strict == pytest.approx(2 / 3)
    assert total.recall_strict == pytest.approx(2 / 4)     # the gold is counted per document
    assert total.f1_strict == pytest.approx(4 / 7)


def test_empty_system_scores_zero_not_error() -> None:
    scores = score_beads(GOLD, [])
    assert scores.f1_strict == 0.0 and scores.counts == BeadCounts(0, 0, 0, 0, 0, 4, 0, 4)
    assert "precision" in scores.table()
