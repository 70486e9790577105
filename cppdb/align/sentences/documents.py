"""Document alignment: which files of two or more version directories are the same chapter.

Evidence per file pair (A from the first version, B from another):

* **chapter number** from the file name or the title line (第一章 / 第1章 / Chapter 1 / ep01 /
  E01 / S01E02): equal numbers add ``number_weight``, different numbers subtract it;
* **content**: cosine of TF-IDF vectors of *toneless pinyin syllable bigrams* of a sample of
  the text — transliteration variants (科诺夫尼岑 / 柯诺夫尼岑) and other named entities
  written with different characters of the same sound still match;
* **numbers** in the text (digits and Chinese numerals): Jaccard overlap;
* **subtitle times**: overlap of the time spans [first cue start, last cue end];
* **length**: min/max ratio of character counts.

The score is a weighted sum; an optimal one-to-one assignment (Hungarian) per version pair
then keeps the pairs scoring at least ``min_score``.  Every other file is reported unpaired
with the reason.  ``--pairs FILE`` replaces the automatic pairing (one group per line, the
file names of each version separated by tabs).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cppdb.align.sentences.chapters import chapter_number, numbers_in
from cppdb.errors import BadInputError, ConfigError

SAMPLE_CHARS = 6000


@dataclass(frozen=True)
class VersionFile:
    """One file of one version, with what pairing needs to know about it."""

    version: int
    path: Path
    text: str                  # the whole text (sentences joined by newlines)
    span_ms: tuple[int, int] | None = None   # subtitle files: first start, last end

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def title(self) -> str:
        return next((line.strip() for line in self.text.splitlines() if line.strip()), "")


@dataclass(frozen=True)
class DocumentGroup:
    """Files that are versions of one chapter/episode (one per version, in version order)."""

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
    content: float = 1.0
    number: float = 0.5
    numbers_overlap: float = 0.2
    times: float = 0.3
    length: float = 0.2
    min_score: float = 0.35


def _pinyin_bigrams(text: str) -> list[str]:
    from pypinyin import Style, lazy_pinyin

    sample = text[:SAMPLE_CHARS // 2] + text[-SAMPLE_CHARS // 2:] if len(text) > SAMPLE_CHARS \
        else text
    syllables = [s for s in lazy_pinyin(sample, style=Style.NORMAL, errors="ignore") if s.isalpha()]
    return [f"{a}_{b}" for a, b in zip(syllables, syllables[1:])]


def _tfidf_cosines(left: Sequence[VersionFile], right: Sequence[VersionFile]) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = [" ".join(_pinyin_bigrams(f.text)) for f in (*left, *right)]
    if not any(docs):
        return np.zeros((len(left), len(right)))
    matrix = TfidfVectorizer(token_pattern=r"\S+", sublinear_tf=True).fit_transform(docs)
    return np.asarray((matrix[: len(left)] @ matrix[len(left):].T).todense())


def _number_score(a: VersionFile, b: VersionFile) -> float:
    na = chapter_number(a.path.stem) or chapter_number(a.title)
    nb = chapter_number(b.path.stem) or chapter_number(b.title)
    if na is None or nb is None:
        return 0.0
    return 1.0 if na == nb else -1.0


def _jaccard(a: set[int], b: set[int]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _time_overlap(a: VersionFile, b: VersionFile) -> float:
    if a.span_ms is None or b.span_ms is None:
        return 0.0
    inter = min(a.span_ms[1], b.span_ms[1]) - max(a.span_ms[0], b.span_ms[0])
    union = max(a.span_ms[1], b.span_ms[1]) - min(a.span_ms[0], b.span_ms[0])
    return max(0.0, inter) / union if union > 0 else 0.0


def pairing_scores(left: Sequence[VersionFile], right: Sequence[VersionFile],
                   weights: PairingWeights) -> np.ndarray:
    """(len(left), len(right)) weighted evidence that two files are one chapter."""
    content = _tfidf_cosines(left, right)
    nums_l = [numbers_in(f.text) for f in left]
    nums_r = [numbers_in(f.text) for f in right]
    scores = weights.content * content
    for i, a in enumerate(left):
        for j, b in enumerate(right):
            la, lb = len(a.text), len(b.text)
            scores[i, j] += (weights.number * _number_score(a, b)
                             + weights.numbers_overlap * _jaccard(nums_l[i], nums_r[j])
                             + weights.times * _time_overlap(a, b)
                             + weights.length * (min(la, lb) / max(la, lb, 1)))
    return scores


def pair_versions(versions: Sequence[Sequence[VersionFile]], weights: PairingWeights | None = None
                  ) -> tuple[list[DocumentGroup], list[Unpaired]]:
    """Group the files of all versions; the first version is the pivot of every group."""
    from scipy.optimize import linear_sum_assignment

    weights = weights or PairingWeights()
    if len(versions) < 2:
        raise BadInputError(f"document alignment needs two or more versions, got {len(versions)}")
    pivot = list(versions[0])
    members: dict[int, dict[int, tuple[VersionFile, float]]] = {i: {} for i in range(len(pivot))}
    unpaired: list[Unpaired] = []
    for other in versions[1:]:
        other = list(other)
        if not pivot or not other:
            unpaired += [Unpaired(f, "the other version has no files") for f in other]
            continue
        scores = pairing_scores(pivot, other, weights)
        rows, cols = linear_sum_assignment(-scores)
        taken = set()
        for i, j in zip(rows.tolist(), cols.tolist()):
            if scores[i, j] >= weights.min_score:
                members[i][other[j].version] = (other[j], float(scores[i, j]))
                taken.add(j)
        for j, f in enumerate(other):
            if j not in taken:
                best = int(np.argmax(scores[:, j]))
                unpaired.append(Unpaired(f, f"no partner in {pivot[0].path.parent.name}: best "
                                            f"{pivot[best].name} scored {scores[best, j]:.2f} "
                                            f"< min_score {weights.min_score}"))
    groups: list[DocumentGroup] = []
    for i, found in members.items():
        if not found:
            unpaired.append(Unpaired(pivot[i], "no partner in any other version"))
            continue
        files = (pivot[i],) + tuple(found[v][0] for v in sorted(found))
        score = min(found[v][1] for v in found)
        groups.append(DocumentGroup(len(groups), files, score, "auto"))
    return groups, unpaired


def read_pairs_file(path: str | Path, versions: Sequence[Sequence[VersionFile]]
                    ) -> tuple[list[DocumentGroup], list[Unpaired]]:
    """Groups from a TSV file: each line names one file per version (by file name)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"pairs file {path} does not exist")
    by_name = [{f.name: f for f in files} for files in versions]
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
