"""Files that hold several chapters without headings: find them and cut them by content.

A translator (or whoever made the files) may run two or three chapters together in one
file with no heading between them, while another version has them as separate files.
``chapters.heading_starts`` cannot see such a file; pairing then gives it one of its
chapters and leaves the others unpaired. Here:

1. **Candidates.** In the score matrix of a pair of versions (``documents.pair_scores``), a
   file ``j`` whose best counterpart ``i`` is paired with another file (or whose own pair is
   weaker than ``j``'s score with ``i``) *spills* into ``i`` when that score is at least
   ``SPILL_SHARE`` × the median of the pairs made: file ``i`` then matches several files of
   the other version well — its partner and its spills, the *targets*. A file of one chapter
   that has a partner is not a candidate unless another file matches it just as well, and
   its length must fit the targets' (``LENGTH_RATIO`` of their sum).
2. **The cut.** Each line of ``i`` gets a log-likelihood under each target: a smoothed
   unigram model of the target's tokens (toneless pinyin syllable bigrams, so 哈利 and 哈里
   are one token, plus numbers read to values). For every order of the targets
   (≤ ``MAX_PARTS``!), a DP over line boundaries finds the cuts that maximise the summed
   likelihood of each part under its target — linear in the number of lines (prefix sums
   and a running maximum), each part at least ``MIN_PART_SHARE`` of an even share. The cut
   is dropped unless, in every part, at least ``MIN_AGREEMENT`` of the lines are likeliest
   under the part's own target: a long chapter cut in two has one part whose lines all
   prefer the other target, and two copies of one chapter cannot be told apart at all.
3. **Confirmation.** The file is replaced by its parts and the version pair scored again:
   a cut is kept only if every part and its target are each other's best counterpart and
   score at least ``CONFIRM_SHARE`` × the median pair. A long chapter of one version does not
   pass: its second half still matches its own partner best, not an unrelated file.

Files already cut at headings (``part`` set) and single-file versions are left alone.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from cppdb.align.sentences.documents import (PairingWeights, assign_with_no_partner,
                                             check_versions, pair_scores)
from cppdb.align.sentences.pairing_signals import number_tokens, syllable_bigrams
from cppdb.align.sentences.types import VersionFile

SPILL_SHARE = 0.3
CONFIRM_SHARE = 0.5
LENGTH_RATIO = (0.5, 2.0)
MAX_PARTS = 4
MIN_PART_SHARE = 0.25
MIN_AGREEMENT = 0.6
SMOOTHING = 0.5

_Key = tuple[int, int]       # (version, index of the file in its version)


@dataclass(frozen=True)
class ContentCut:
    """A file cut into parts, each matching one file of another version."""

    file: VersionFile
    starts: tuple[int, ...]               # first line of each part (the first is 0)
    targets: tuple[VersionFile, ...]      # the file each part matched, in the parts' order

    def parts(self) -> list[VersionFile]:
        lines = self.file.text.split("\n")
        bounds = [*self.starts, len(lines)]
        return [replace(self.file, text="\n".join(lines[a:b]), part=k, span_ms=None,
                        cue_starts=(), chapter=None)
                for k, (a, b) in enumerate(zip(bounds, bounds[1:]))]


def split_merged_files(versions: Sequence[Sequence[VersionFile]],
                       weights: PairingWeights | None = None
                       ) -> tuple[list[list[VersionFile]], list[ContentCut]]:
    """The versions with every confirmed merged file replaced by its parts, and the cuts."""
    weights = weights or PairingWeights()
    check_versions(versions, weights)
    versions = [list(v) for v in versions]
    proposed = {}
    for key, targets in _candidates(versions, weights).items():
        cut = best_cut(versions[key[0]][key[1]], targets)
        if cut is not None:
            proposed[key] = cut
    if not proposed:
        return versions, []
    confirmed = _confirmed(versions, proposed, weights)
    return _with_parts(versions, confirmed), [proposed[key] for key in sorted(confirmed)]


def _candidates(versions: list[list[VersionFile]], weights: PairingWeights
                ) -> dict[_Key, list[VersionFile]]:
    """File -> the files of one other version it matches well (see step 1); the largest such
    set over the compared versions."""
    found: dict[_Key, list[VersionFile]] = {}
    for a, b, scores in pair_scores(versions, weights):
        if scores is None:
            continue
        pairs = assign_with_no_partner(scores, weights.pair_min_score)
        if not pairs:
            continue
        floor = max(weights.pair_min_score,
                    SPILL_SHARE * float(np.median([scores[i, j] for i, j in pairs])))
        for (x, y), matrix in (((a, b), scores), ((b, a), scores.T)):
            partner = {i: j for i, j in (pairs if x == a else [(j, i) for i, j in pairs])}
            taken = {j: i for i, j in partner.items()}
            spills: dict[int, list[int]] = {}
            for j in range(matrix.shape[1]):
                i = int(np.argmax(matrix[:, j]))
                own = taken.get(j)
                if (own != i and matrix[i, j] >= floor
                        and (own is None or matrix[own, j] < matrix[i, j])):
                    spills.setdefault(i, []).append(j)
            for i, extra in spills.items():
                file = versions[x][i]
                targets = sorted({*extra, *([partner[i]] if i in partner else [])})
                if file.part is not None or not 2 <= len(targets) <= MAX_PARTS:
                    continue
                sizes = sum(len(versions[y][j].text) for j in targets)
                if not LENGTH_RATIO[0] <= len(file.text) / max(sizes, 1) <= LENGTH_RATIO[1]:
                    continue
                if len(targets) > len(found.get((x, i), [])):
                    found[(x, i)] = [versions[y][j] for j in targets]
    return found


def _line_tokens(text: str) -> list[str]:
    """A line's tokens: the same content and number tokens the file pairing uses."""
    return syllable_bigrams(text) + number_tokens(text)


def line_likelihoods(lines: Sequence[str], targets: Sequence[str]) -> np.ndarray:
    """(lines × targets) log-likelihood of each line under a smoothed unigram model of each
    target's tokens (tokens no target has are left out: they favour none)."""
    counts = [_counts(_line_tokens(t)) for t in targets]
    vocabulary = sorted(set().union(*counts))
    index = {tok: k for k, tok in enumerate(vocabulary)}
    table = np.full((len(targets), len(vocabulary)), SMOOTHING)
    for m, count in enumerate(counts):
        for tok, n in count.items():
            table[m, index[tok]] += n
    logp = np.log(table / table.sum(axis=1, keepdims=True))
    out = np.zeros((len(lines), len(targets)))
    for k, line in enumerate(lines):
        ids = [index[tok] for tok in _line_tokens(line) if tok in index]
        if ids:
            out[k] = logp[:, ids].sum(axis=1)
    return out


def _counts(tokens: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for tok in tokens:
        out[tok] = out.get(tok, 0) + 1
    return out


def segment(scores: np.ndarray, min_lines: int) -> tuple[float, list[int]]:
    """Cut lines 0..n into ``k`` = scores.shape[1] consecutive parts, part m scored by
    column m, each at least ``min_lines`` long: (best total, first line of each part)."""
    n, k = scores.shape
    if n < k * min_lines:
        return -math.inf, []
    prefix = np.vstack([np.zeros(k), np.cumsum(scores, axis=0)])     # (n + 1) × k
    best = np.full(n + 1, -math.inf)
    best[min_lines:] = prefix[min_lines:, 0]           # part 0 ends at c (exclusive)
    back = np.zeros((k, n + 1), dtype=np.int64)
    for m in range(1, k):
        # best[c] = prefix_m[c] + max over c' <= c - min_lines of (previous[c'] - prefix_m[c'])
        gain = best - prefix[:, m]
        run = np.maximum.accumulate(gain)
        where = _running_argmax(gain)
        new = np.full(n + 1, -math.inf)
        new[min_lines:] = prefix[min_lines:, m] + run[:n + 1 - min_lines]
        back[m, min_lines:] = where[:n + 1 - min_lines]
        best = new
    starts, end = [], n
    for m in range(k - 1, 0, -1):
        end = int(back[m, end])
        starts.append(end)
    return float(best[n]), [0, *reversed(starts)]


def _running_argmax(values: np.ndarray) -> np.ndarray:
    """Index of the first maximum of values[:i + 1], for every i."""
    out = np.zeros(len(values), dtype=np.int64)
    for i in range(1, len(values)):
        out[i] = i if values[i] > values[out[i - 1]] else out[i - 1]
    return out


def best_cut(file: VersionFile, targets: Sequence[VersionFile]) -> ContentCut | None:
    """The cut of ``file`` into one part per target (every order of the targets tried)."""
    lines = file.text.split("\n")
    scores = line_likelihoods(lines, [t.text for t in targets])
    min_lines = max(1, int(MIN_PART_SHARE * len(lines) / len(targets)))
    best: tuple[float, list[int], tuple[int, ...]] | None = None
    for order in itertools.permutations(range(len(targets))):
        total, starts = segment(scores[:, list(order)], min_lines)
        if starts and (best is None or total > best[0]):
            best = (total, starts, order)
    if best is None:
        return None
    _, starts, order = best
    likeliest = np.argmax(scores, axis=1)
    for m, (a, b) in enumerate(zip(starts, [*starts[1:], len(lines)])):
        if np.mean(likeliest[a:b] == order[m]) < MIN_AGREEMENT:
            return None
    return ContentCut(file, tuple(starts), tuple(targets[m] for m in order))


def _with_parts(versions: list[list[VersionFile]], cuts: dict[_Key, ContentCut]
                ) -> list[list[VersionFile]]:
    return [[p for k, f in enumerate(files)
             for p in (cuts[(v, k)].parts() if (v, k) in cuts else [f])]
            for v, files in enumerate(versions)]


def _confirmed(versions: list[list[VersionFile]], proposed: dict[_Key, ContentCut],
               weights: PairingWeights) -> dict[_Key, ContentCut]:
    """The proposed cuts whose parts all pair with their targets once cut (step 3)."""
    trial = _with_parts(versions, proposed)
    position = {(f.version, f.path, f.part): k for files in trial for k, f in enumerate(files)}
    checks: dict[_Key, list[bool]] = {key: [] for key in proposed}
    for a, b, scores in pair_scores(trial, weights):
        if scores is None:
            continue
        pairs = assign_with_no_partner(scores, weights.pair_min_score)
        floor = CONFIRM_SHARE * float(np.median([scores[i, j] for i, j in pairs])) if pairs \
            else math.inf
        for key, cut in proposed.items():
            if key[0] not in (a, b) or cut.targets[0].version not in (a, b):
                continue
            matrix = scores if key[0] == a else scores.T
            for part, target in zip(cut.parts(), cut.targets):
                i = position[(part.version, part.path, part.part)]
                j = position[(target.version, target.path, target.part)]
                checks[key].append(int(np.argmax(matrix[i])) == j
                                   and int(np.argmax(matrix[:, j])) == i
                                   and matrix[i, j] >= floor)
    return {key: proposed[key] for key, ok in checks.items() if ok and all(ok)}
