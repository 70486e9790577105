"""Document alignment: which files of two or more version directories are the same chapter.

The evidence for a pair of files is the weighted sum of the signals of
``pairing_signals`` (names, numbers, dates/times, subtitle cue timing, pinyin content,
length, and the chapter number of the file name or title line — one signal among others).
For every pair of versions that is compared (``mode = "all"``: every pair; ``"pivot"``: the
pivot version with each other one) the pairs are chosen by one optimal assignment
(Hungarian, ``scipy.optimize.linear_sum_assignment``) in which every file may also stay
without a partner: a pair is made only when its score beats ``min_score``, and the total of
(score - min_score) over the pairs is the largest possible — not greedily file by file.

The pairs of all version pairs are then joined into groups (one file per version) from the
best-scoring pair down; a pair that would put two files of one version into one group is
dropped.  Files in no group are reported unpaired with the reason; nothing is fatal.
A file holding several chapters is cut at its chapter headings before pairing
(``chapters.heading_starts``; each part is a ``VersionFile`` with ``part`` set).
``--pairs FILE`` replaces the automatic pairing (one group per line, the file names of each
version separated by tabs).
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cppdb.align.sentences.pairing_signals import (SIGNAL_NAMES, PairingSignals, file_tokens,
                                                   signal_matrices, standardised)
from cppdb.align.sentences.types import VersionFile
from cppdb.defaults import toml_defaults
from cppdb.errors import BadInputError, ConfigError

_MONOLINGUAL = toml_defaults("monolingual")
PAIR_MODES = ("all", "pivot")


@dataclass(frozen=True)
class DocumentGroup:
    """Files that are versions of one chapter/episode (at most one per version, in version
    order)."""

    group: int
    files: tuple[VersionFile, ...]
    score: float
    method: str          # "auto" | "pairs-file"


@dataclass(frozen=True)
class Unpaired:
    file: VersionFile
    reason: str


@dataclass(frozen=True)
class PairingWeights:
    """The document-pairing settings of ``[monolingual]`` (fields are its TOML keys): the
    weight of each ``pairing_signals.PairingSignals`` signal (``pair_weight_<signal>``), the
    score a pair must beat, and which versions are compared."""

    pair_weight_content: float = _MONOLINGUAL["pair_weight_content"]
    pair_weight_names: float = _MONOLINGUAL["pair_weight_names"]
    pair_weight_numbers_in_text: float = _MONOLINGUAL["pair_weight_numbers_in_text"]
    pair_weight_dates: float = _MONOLINGUAL["pair_weight_dates"]
    pair_weight_cue_timing: float = _MONOLINGUAL["pair_weight_cue_timing"]
    pair_weight_length: float = _MONOLINGUAL["pair_weight_length"]
    pair_weight_chapter_number: float = _MONOLINGUAL["pair_weight_chapter_number"]
    pair_min_score: float = _MONOLINGUAL["pair_min_score"]
    pair_min_margin: float = _MONOLINGUAL["pair_min_margin"]
    pair_min_relative: float = _MONOLINGUAL["pair_min_relative"]
    pair_mode: str = _MONOLINGUAL["pair_mode"]
    pair_pivot: int = _MONOLINGUAL["pair_pivot"]

    def check(self, n_versions: int) -> None:
        """ConfigError unless the mode and pivot make sense for ``n_versions`` versions."""
        if self.pair_mode not in PAIR_MODES:
            raise ConfigError(f"pair_mode must be one of {', '.join(PAIR_MODES)}, not "
                              f"{self.pair_mode!r}", hint="e.g. --set monolingual.pair_mode=all")
        if not 0 <= self.pair_pivot < n_versions:
            raise ConfigError(f"pair_pivot = {self.pair_pivot} is not a version: there are "
                              f"{n_versions} (0 to {n_versions - 1}, in the order given)",
                              hint="e.g. --set monolingual.pair_pivot=0")

    @property
    def signal_weights(self) -> PairingSignals[float]:
        return PairingSignals(**{name: getattr(self, f"pair_weight_{name}")
                                 for name in SIGNAL_NAMES})

    def combine(self, signals: PairingSignals[np.ndarray]) -> np.ndarray:
        """The weighted sum of the :func:`~pairing_signals.standardised` signals (a signal
        of weight 0 is not computed into it)."""
        weights = self.signal_weights
        return sum(weight * standardised(matrix) for (_, matrix), (_, weight)
                   in zip(signals.items(), weights.items()) if weight)


def assign_with_no_partner(scores: np.ndarray, min_score: float) -> list[tuple[int, int]]:
    """The one-to-one pairs (i, j) maximising the sum of (score - min_score), where leaving a
    file without a partner is worth 0: a pair scoring below ``min_score`` is never made."""
    from scipy.optimize import linear_sum_assignment

    n, m = scores.shape
    if n == 0 or m == 0:
        return []
    forbidden = 1e9
    cost = np.zeros((n + m, m + n))
    cost[:n, :m] = min_score - scores
    cost[:n, m:] = forbidden
    cost[n:, :m] = forbidden
    cost[np.arange(n), m + np.arange(n)] = 0.0          # row i stays alone
    cost[n + np.arange(m), np.arange(m)] = 0.0          # column j stays alone
    rows, cols = linear_sum_assignment(cost)
    return sorted((int(i), int(j)) for i, j in zip(rows, cols)
                  if i < n and j < m and scores[i, j] > min_score)


def margins(scores: np.ndarray) -> np.ndarray:
    """How far each cell beats the best other cell of its row and of its column (a pair must
    stand out: a file with no partner only has a best among equals)."""
    n, m = scores.shape
    out = np.empty_like(scores, dtype=float)
    order = np.sort(scores, axis=1)
    col_order = np.sort(scores, axis=0)
    for i in range(n):
        for j in range(m):
            others = []
            if m > 1:        # a single file on one side has no other cell to beat
                others.append(order[i, -2] if scores[i, j] == order[i, -1] else order[i, -1])
            if n > 1:
                others.append(col_order[-2, j] if scores[i, j] == col_order[-1, j]
                              else col_order[-1, j])
            out[i, j] = scores[i, j] - max(others) if others else scores[i, j]
    return out


def _drop_weak(chosen: list[tuple[float, _Key, _Key]], min_relative: float,
               weak: dict[_Key, float]) -> list[tuple[float, _Key, _Key]]:
    """Pairs scoring at least ``min_relative`` × the median pair of this version pair (with 3
    or more pairs: two leftover chapters that share a cast are not a translation pair)."""
    if len(chosen) < 3:
        return chosen
    floor = min_relative * float(np.median([score for score, _, _ in chosen]))
    for score, a, b in chosen:
        if score < floor:
            weak[a] = weak[b] = score / floor * min_relative
    return [edge for edge in chosen if edge[0] >= floor]


def version_pairs(n_versions: int, mode: str, pivot: int) -> list[tuple[int, int]]:
    if mode == "pivot":
        return [(min(pivot, v), max(pivot, v)) for v in range(n_versions) if v != pivot]
    return [(a, b) for a in range(n_versions) for b in range(a + 1, n_versions)]


_Key = tuple[int, int]       # (version, index of the file in its version)


def _join_groups(edges: list[tuple[float, _Key, _Key]]) -> dict[_Key, list[_Key]]:
    """Groups from the pairs, best first; a pair joining two files of one version is dropped."""
    members: dict[_Key, list[_Key]] = {}
    root: dict[_Key, _Key] = {}
    for _, a, b in sorted(edges, key=lambda e: (-e[0], e[1], e[2])):
        ra, rb = root.get(a, a), root.get(b, b)
        if ra == rb:
            continue
        group_a, group_b = members.get(ra, [a]), members.get(rb, [b])
        if {k[0] for k in group_a} & {k[0] for k in group_b}:
            continue
        members.pop(rb, None)
        members[ra] = group_a + group_b
        for key in members[ra]:
            root[key] = ra
    return members


def check_versions(versions: Sequence[Sequence[VersionFile]], weights: PairingWeights) -> None:
    if len(versions) < 2:
        raise BadInputError(f"document alignment needs two or more versions, got {len(versions)}")
    weights.check(len(versions))


def pair_scores(versions: Sequence[Sequence[VersionFile]], weights: PairingWeights
                ) -> Iterator[tuple[int, int, np.ndarray | None]]:
    """(a, b, the weighted score matrix of version a × version b) for every compared pair of
    versions that both have files; None for one file in each (there is nothing for a
    relative score to be relative to)."""
    flat = [f for v in versions for f in v]
    tokens = file_tokens(flat)
    offsets = np.cumsum([0, *(len(v) for v in versions)])
    tokens_of = [tokens[offsets[v]:offsets[v + 1]] for v in range(len(versions))]
    for a, b in version_pairs(len(versions), weights.pair_mode, weights.pair_pivot):
        if not versions[a] or not versions[b]:
            continue
        if len(versions[a]) == len(versions[b]) == 1:
            yield a, b, None
            continue
        yield a, b, weights.combine(signal_matrices(versions[a], versions[b],
                                                    tokens_of[a], tokens_of[b]))


def pair_versions(versions: Sequence[Sequence[VersionFile]], weights: PairingWeights | None = None
                  ) -> tuple[list[DocumentGroup], list[Unpaired]]:
    """Group the files of all versions (see the module docstring)."""
    weights = weights or PairingWeights()
    check_versions(versions, weights)
    versions = [list(v) for v in versions]
    edges: list[tuple[float, _Key, _Key]] = []
    best: dict[_Key, tuple[float, _Key]] = {}
    close: dict[_Key, float] = {}      # files whose best pair did not stand out
    weak: dict[_Key, float] = {}       # files whose pair was far weaker than the usual pair
    for a, b, scores in pair_scores(versions, weights):
        if scores is None:
            # one file in each (a film's tracks, a one-chapter book): scores are relative to
            # the other files of the collection, and there are none, so the only candidate
            # pair is made; its recorded score is the threshold it is taken to meet
            edges.append((weights.pair_min_score, (a, 0), (b, 0)))
            continue
        margin = margins(scores)
        chosen = []
        for i, j in assign_with_no_partner(scores, weights.pair_min_score):
            if margin[i, j] >= weights.pair_min_margin:
                chosen.append((float(scores[i, j]), (a, i), (b, j)))
            else:
                close[(a, i)] = close[(b, j)] = float(margin[i, j])
        edges += _drop_weak(chosen, weights.pair_min_relative, weak)
        for i in range(len(versions[a])):
            j = int(np.argmax(scores[i]))
            best[(a, i)] = max(best.get((a, i), (-math.inf, (b, j))), (float(scores[i, j]), (b, j)))
        for j in range(len(versions[b])):
            i = int(np.argmax(scores[:, j]))
            best[(b, j)] = max(best.get((b, j), (-math.inf, (a, i))), (float(scores[i, j]), (a, i)))
    score_of = {(a, b): s for s, a, b in edges} | {(b, a): s for s, a, b in edges}
    groups: list[DocumentGroup] = []
    grouped: set[_Key] = set()
    for keys in sorted(_join_groups(edges).values(), key=lambda ks: sorted(ks)):
        keys = sorted(keys)
        grouped.update(keys)
        used = [s for (x, y), s in score_of.items() if x in keys and y in keys]
        groups.append(DocumentGroup(len(groups), tuple(versions[v][k] for v, k in keys),
                                    min(used), "auto"))
    unpaired = [Unpaired(versions[v][k], _unpaired_reason(best.get((v, k)), close.get((v, k)),
                                                          weak.get((v, k)), versions, weights,
                                                          grouped))
                for v in range(len(versions)) for k in range(len(versions[v]))
                if (v, k) not in grouped]
    return groups, unpaired


def _unpaired_reason(best: tuple[float, _Key] | None, margin: float | None,
                     relative: float | None, versions: Sequence[Sequence[VersionFile]],
                     weights: PairingWeights, grouped: set[_Key]) -> str:
    if best is None:
        return "no file to compare with (the versions compared with it are empty)"
    score, (v, k) = best
    other = versions[v][k].label
    if relative is not None:
        return (f"weak: the best candidate {other} (version {v}) scored {score:.2f}, "
                f"{relative:.0%} of the median pair "
                f"(pair_min_relative {weights.pair_min_relative})")
    if margin is not None:
        return (f"ambiguous: the best candidate {other} (version {v}) scored {score:.2f}, only "
                f"{margin:.2f} above another candidate "
                f"(pair_min_margin {weights.pair_min_margin}); "
                "one of the files may hold several chapters without headings")
    if score <= weights.pair_min_score:
        return (f"no partner: the best candidate {other} (version {v}) scored {score:.2f} "
                f"<= pair_min_score {weights.pair_min_score}")
    if (v, k) in grouped:
        return (f"no partner: the best candidate {other} (version {v}) scored {score:.2f} but "
                "is paired with a file that fits it better")
    return (f"no partner: the best candidate {other} (version {v}) scored {score:.2f} but "
            "was left unpaired itself (ambiguous between this file and another)")


def read_pairs_file(path: str | Path, versions: Sequence[Sequence[VersionFile]]
                    ) -> tuple[list[DocumentGroup], list[Unpaired]]:
    """Groups from a TSV file: each line names one file per version (by file name)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"pairs file {path} does not exist")
    by_name = [{f.label: f for f in files} for files in versions]
    groups: list[DocumentGroup] = []
    used: set[Path] = set()
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        names = [n.strip() for n in line.split("\t")]
        if len(names) != len(versions):
            raise BadInputError(f"{path} line {number} names {len(names)} files, expected one "
                                f"per version ({len(versions)}), tab-separated")
        files = []
        for version, name in enumerate(names):
            found = by_name[version].get(name)
            if found is None:
                known = ", ".join(sorted(by_name[version])[:8])
                raise BadInputError(f"{path} line {number}: no file {name!r} in version "
                                    f"{version + 1}", hint=f"files there: {known} ...")
            files.append(found)
        used.update(f.path for f in files)
        groups.append(DocumentGroup(len(groups), tuple(files), math.nan, "pairs-file"))
    unpaired = [Unpaired(f, f"not listed in {path.name}")
                for files in versions for f in files if f.path not in used]
    return groups, unpaired
