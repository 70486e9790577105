"""Gold word alignments (every common style) and AER / precision / recall.

Accepted link styles in one gold line (mixable):
  ``i-j``  sure · ``ipj`` / ``i?j`` possible (awesome-align, Tsinghua) ·
  ``i-j-P`` / ``i-jp`` / ``i-j-p`` possible (DeNero) · ``i-j-S`` sure.
Indices are zh first, 0-based unless ``one_based``.  Sure links are also possible (S ⊆ P).

Scores follow sacrebleu's rule: counts per sentence, ratios from summed counts, so a bootstrap
interval comes for free.  AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|)  (Och & Ney 2003).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cppdb.errors import BadInputError
from cppdb.readers.pharaoh import format_links  # noqa: F401  (re-exported)
from cppdb.stats import bootstrap_counts

_LINK = re.compile(r"(\d+)(-|p|\?)(\d+)(?:(-?[pP])|-S)?")

Link = tuple[int, int]


@dataclass(frozen=True)
class GoldAlignment:
    """Sure and possible links of one sentence pair (``possible`` includes ``sure``)."""

    sure: frozenset[Link]
    possible: frozenset[Link]


@dataclass(frozen=True)
class AlignmentCounts:
    """Per-sentence statistics; add them up, then read the ratios."""

    a_and_s: int
    a_and_p: int
    a: int
    s: int

    def __add__(self, other: "AlignmentCounts") -> "AlignmentCounts":
        return AlignmentCounts(self.a_and_s + other.a_and_s, self.a_and_p + other.a_and_p,
                               self.a + other.a, self.s + other.s)


@dataclass(frozen=True)
class AlignmentScore:
    precision: float
    recall: float
    f1: float
    aer: float
    n_pairs: int
    n_links: int
    n_sure: int

    def as_dict(self) -> dict[str, float]:
        return {"precision": round(self.precision, 4), "recall": round(self.recall, 4),
                "f1": round(self.f1, 4), "aer": round(self.aer, 4), "pairs": self.n_pairs,
                "links": self.n_links, "sure": self.n_sure}


def parse_gold_line(line: str, *, one_based: bool = False, where: str = "gold") -> GoldAlignment:
    sure: set[Link] = set()
    possible: set[Link] = set()
    for token in line.split():
        match = _LINK.fullmatch(token)
        if match is None:
            raise BadInputError(f"{where}: cannot read link {token!r}",
                                hint="links look like i-j (sure), ipj, i?j or i-j-P (possible)")
        i, j = int(match.group(1)), int(match.group(3))
        if one_based:
            if i == 0 or j == 0:
                raise BadInputError(f"{where}: link {token!r} has index 0 in a one-based file",
                                    hint="drop --gold-one-based if the file is 0-based")
            i, j = i - 1, j - 1
        is_possible = match.group(2) in ("p", "?") or bool(match.group(4))
        (possible if is_possible else sure).add((i, j))
    return GoldAlignment(frozenset(sure), frozenset(possible | sure))


def read_gold(path: str | Path, *, one_based: bool = False) -> list[GoldAlignment]:
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"gold file {path} does not exist")
    lines = path.read_text(encoding="utf-8").splitlines()
    return [parse_gold_line(line, one_based=one_based, where=f"{path}:{n + 1}")
            for n, line in enumerate(lines)]


def check_gold_fits(gold: Sequence[GoldAlignment], shapes: Sequence[tuple[int, int]],
                    where: str = "gold") -> None:
    """Gold and system must have the same pairs, and links must fit the token counts."""
    if len(gold) != len(shapes):
        raise BadInputError(f"{where} has {len(gold)} lines but there are {len(shapes)} "
                            "sentence pairs", hint="one gold line per sentence pair")
    for n, (g, (rows, cols)) in enumerate(zip(gold, shapes)):
        for i, j in g.possible:
            if i >= rows or j >= cols:
                raise BadInputError(
                    f"{where} line {n + 1}: link {i}-{j} is outside the pair "
                    f"({rows} zh tokens, {cols} en tokens)",
                    hint="check the index order (zh first) and --gold-one-based")


def sentence_counts(links: Iterable[Link], gold: GoldAlignment) -> AlignmentCounts:
    system = set(links)
    return AlignmentCounts(len(system & gold.sure), len(system & gold.possible), len(system),
                           len(gold.sure))


def score_counts(counts: Sequence[AlignmentCounts]) -> AlignmentScore:
    total = sum(counts, AlignmentCounts(0, 0, 0, 0))
    precision = total.a_and_p / total.a if total.a else 0.0
    recall = total.a_and_s / total.s if total.s else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    denom = total.a + total.s
    aer = 1.0 - (total.a_and_s + total.a_and_p) / denom if denom else 1.0
    return AlignmentScore(precision, recall, f1, aer, len(counts), total.a, total.s)


def score_alignment(system: Sequence[Iterable[Link]], gold: Sequence[GoldAlignment]
                    ) -> AlignmentScore:
    """AER, precision, recall and F1 of system links against gold (same number of pairs)."""
    if len(system) != len(gold):
        raise BadInputError(f"{len(system)} system alignments but {len(gold)} gold lines")
    return score_counts([sentence_counts(s, g) for s, g in zip(system, gold)])


def bootstrap_aer(system: Sequence[Iterable[Link]], gold: Sequence[GoldAlignment], *,
                  rng: np.random.Generator, samples: int = 1000) -> tuple[float, float]:
    """95% bootstrap interval of AER, resampling sentence pairs."""
    counts = np.array([[c.a_and_s, c.a_and_p, c.a, c.s] for c in
                       (sentence_counts(s, g) for s, g in zip(system, gold))], dtype=np.float64)

    def aer(sums: np.ndarray) -> np.ndarray:
        return 1.0 - (sums[:, 0] + sums[:, 1]) / np.maximum(sums[:, 2] + sums[:, 3], 1.0)

    low, high = bootstrap_counts(counts, aer, resamples=samples,
                                 seed=int(rng.integers(0, 2**31 - 1)))
    return float(low), float(high)


def gold_matrices(gold: Sequence[GoldAlignment], shapes: Sequence[tuple[int, int]]
                  ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Boolean sure and possible matrices per pair (for fast tuning)."""
    sure_m, poss_m = [], []
    for g, shape in zip(gold, shapes):
        s = np.zeros(shape, dtype=bool)
        p = np.zeros(shape, dtype=bool)
        for i, j in g.sure:
            s[i, j] = True
        for i, j in g.possible:
            p[i, j] = True
        sure_m.append(s)
        poss_m.append(p)
    return sure_m, poss_m
