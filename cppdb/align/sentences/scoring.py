"""Strict and lax precision/recall/F1 of sentence-alignment beads (Vecalign's score.py rules).

Counts first, ratios second: :func:`bead_counts` returns integer counts per document, they
are summed over documents, and :func:`scores_from_counts` turns the sum into P/R/F1.

* strict: a system bead is correct if the same bead (both sides) is in the gold;
* lax: a wrong bead still counts if it overlaps a gold bead on both sides;
* recall is precision with the roles swapped, insertions/deletions removed from both;
* ``one_to_one``: only 1-1 beads are scored (the beads cppdb keeps as paraphrase pairs).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from cppdb.align.sentences.beads import Bead

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
