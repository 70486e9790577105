"""Strict and lax precision/recall/F1 of sentence-alignment beads (Vecalign's score.py rules).

Counts first, ratios second: :func:`bead_counts` returns integer counts per document, they
are summed over documents, and :func:`scores_from_counts` turns the sum into P/R/F1.

* strict: a system bead is correct if the same bead (both sides) is in the gold;
* lax: a wrong bead still counts if it overlaps a gold bead on both sides;
* recall is precision with the roles swapped, insertions/deletions removed from both;
* ``one_to_one``: only 1-1 beads are scored (the beads cppdb keeps as paraphrase pairs).

:func:`bootstrap_f1` gives a 95 % interval of strict F1 by cutting the document into blocks
of source sentences and resampling blocks (beads are not independent: one wrong bead
shifts its neighbours, so whole stretches are resampled together).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from cppdb.align.sentences.beads import Bead
from cppdb.stats import bootstrap_counts

_Key = tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class BeadCounts:
    p_tp_strict: int = 0
    p_fp_strict: int = 0
    p_tp_lax: int = 0
    p_fp_lax: int = 0
    r_tp_strict: int = 0
    r_fn_strict: int = 0
    r_tp_lax: int = 0
    r_fn_lax: int = 0

    def __add__(self, other: "BeadCounts") -> "BeadCounts":
        return BeadCounts(*(a + b for a, b in zip(self.astuple(), other.astuple())))

    def astuple(self) -> tuple[int, ...]:
        return (self.p_tp_strict, self.p_fp_strict, self.p_tp_lax, self.p_fp_lax,
                self.r_tp_strict, self.r_fn_strict, self.r_tp_lax, self.r_fn_lax)


@dataclass(frozen=True)
class BeadScores:
    precision_strict: float
    recall_strict: float
    f1_strict: float
    precision_lax: float
    recall_lax: float
    f1_lax: float
    counts: BeadCounts

    def table(self) -> str:
        return ("            strict    lax\n"
                f"precision   {self.precision_strict:.4f}   {self.precision_lax:.4f}\n"
                f"recall      {self.recall_strict:.4f}   {self.recall_lax:.4f}\n"
                f"F1          {self.f1_strict:.4f}   {self.f1_lax:.4f}\n")


def _keys(beads: Iterable[Bead], one_to_one: bool, drop_deletions: bool) -> set[_Key]:
    out = set()
    for bead in beads:
        if not bead.src and not bead.tgt:
            continue
        if one_to_one and not bead.is_one_to_one:
            continue
        if drop_deletions and not (bead.src and bead.tgt):
            continue
        out.add((tuple(bead.src), tuple(bead.tgt)))
    return out


def _precision(gold: set[_Key], test: set[_Key]) -> tuple[int, int, int, int]:
    links: dict[int, set[int]] = defaultdict(set)
    for src, tgt in gold:
        for i in src:
            links[i].update(tgt)
    tp_strict = fp_strict = tp_lax = fp_lax = 0
    for src, tgt in test:
        if (src, tgt) in gold:
            tp_strict += 1
            tp_lax += 1
            continue
        fp_strict += 1
        reachable = set().union(*(links[i] for i in src)) if src else set()
        if reachable.intersection(tgt):
            tp_lax += 1
        else:
            fp_lax += 1
    return tp_strict, fp_strict, tp_lax, fp_lax


def bead_counts(gold: list[Bead], test: list[Bead], *, one_to_one: bool = False) -> BeadCounts:
    p = _precision(_keys(gold, one_to_one, False), _keys(test, one_to_one, False))
    r = _precision(_keys(test, one_to_one, True), _keys(gold, one_to_one, True))
    return BeadCounts(*p, *r)


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def scores_from_counts(counts: BeadCounts) -> BeadScores:
    ps = _ratio(counts.p_tp_strict, counts.p_tp_strict + counts.p_fp_strict)
    pl = _ratio(counts.p_tp_lax, counts.p_tp_lax + counts.p_fp_lax)
    rs = _ratio(counts.r_tp_strict, counts.r_tp_strict + counts.r_fn_strict)
    rl = _ratio(counts.r_tp_lax, counts.r_tp_lax + counts.r_fn_lax)
    return BeadScores(ps, rs, _f1(ps, rs), pl, rl, _f1(pl, rl), counts)


def score_beads(gold: list[Bead], test: list[Bead], *, one_to_one: bool = False) -> BeadScores:
    return scores_from_counts(bead_counts(gold, test, one_to_one=one_to_one))


def _position(key: _Key, scale: float) -> float:
    src, tgt = key
    return float(min(src)) if src else min(tgt) * scale


def bootstrap_f1(gold: list[Bead], test: list[Bead], *, one_to_one: bool = False,
                 block: int = 20, seed: int = 13) -> tuple[float | None, float | None]:
    """95 % interval of strict F1, resampling blocks of ``block`` source sentences."""
    gold_keys, test_keys = _keys(gold, one_to_one, False), _keys(test, one_to_one, False)
    n_src = max((i for key in gold_keys | test_keys for i in key[0]), default=0) + 1
    n_tgt = max((j for key in gold_keys | test_keys for j in key[1]), default=0) + 1
    scale = n_src / n_tgt
    blocks = np.zeros((n_src // block + 1, 2 * 2))     # precision tp/fp, recall tp/fn
    for column, reference, system in ((0, gold_keys, test_keys),
                                      (2, _keys(test, one_to_one, True),
                                       _keys(gold, one_to_one, True))):
        for key in system:
            hit = key in reference
            blocks[int(_position(key, scale)) // block, column + (0 if hit else 1)] += 1

    def f1(sums: np.ndarray) -> np.ndarray:
        precision = sums[:, 0] / np.maximum(sums[:, 0] + sums[:, 1], 1)
        recall = sums[:, 2] / np.maximum(sums[:, 2] + sums[:, 3], 1)
        return 2 * precision * recall / np.maximum(precision + recall, 1e-12)

    return bootstrap_counts(blocks[blocks.sum(axis=1) > 0], f1, seed=seed)
