"""Evidence that two files of different versions hold the same chapter/episode.

Each signal is a matrix of shape (len(left), len(right)); :func:`signal_matrices` computes
them all as one :class:`PairingSignals` (a field per signal, each described there) and
``documents.pair_versions`` weighs them.  Similarity signals are in [0, 1]; the chapter
number is +1 (same), -1 (different) or 0 (unknown on either side).

``relative`` turns a signal matrix into "how much better than the usual": each cell minus
the larger of its row and column medians (most cells are non-pairs, so the medians are the
level of unrelated chapters of one book).  A pair then has to stand out, not only be similar.
``standardised`` then puts every signal in units of its own spread, scaled by how clearly it
pairs this collection (the share of mutual best matches), so the weighted sum is not
dominated by whichever signal is loud but noisy on these files.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Generic, TypeVar

import numpy as np

from cppdb.align.sentences.chapters import numbers_in
from cppdb.align.sentences.types import VersionFile
from cppdb.text.entities import name_candidates, pinyin_key
from cppdb.text.numerals import ZH_NUMERAL_CHARS, numeral_value

SAMPLE_CHARS = 6000
CUE_BIN_MS = 10_000
NAME_THRESHOLD = 0.75      # pinyin-letter similarity that joins two names of different versions
MAX_NAMES = 600            # most frequent name candidates per version kept for the clusters

Matrix = np.ndarray
T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True)
class PairingSignals(Generic[T]):
    """One value per pairing signal: its (left × right) matrix, or a number per signal (its
    prior in :func:`relative`, its weight in ``documents.PairingWeights``).  The field order
    is the order in which the weighted signals are summed."""

    content: T
    """Cosine of TF-IDF vectors of toneless pinyin syllable bigrams of a sample of the text."""
    names: T
    """Cosine of TF-IDF vectors of transliterated names, each mapped to its cluster across
    versions (哈利 / 哈里 / 哈瑞 -> one token): names are what changes least between
    translations and most between chapters."""
    numbers_in_text: T
    """Cosine of TF-IDF vectors of the numbers mentioned in the text (digits and Chinese
    numerals read to values, so 1998 and 一九九八 are one token, :func:`number_tokens`)."""
    dates: T
    """Cosine of TF-IDF vectors of dates and clock times (3月5日 / 三月五日, 下午三点半 /
    15:30 -> one token, :func:`date_time_tokens`)."""
    cue_timing: T
    """Subtitles only: the duration ratio × the cosine of the cue start profiles (cues per
    10 s, smoothed): the same episode has its silences at the same minutes in every version."""
    length: T
    """Min/max ratio of the character counts."""
    chapter_number: T
    """Agreement of the chapter/episode numbers of the file names or title lines: +1 same,
    -1 different, 0 unknown on either side."""

    def items(self) -> Iterator[tuple[str, T]]:
        """(field name, value) in field order."""
        return ((f.name, getattr(self, f.name)) for f in fields(self))

    def zip_with(self, other: "PairingSignals[U]", fn: Callable[[T, U], object]
                 ) -> "PairingSignals":
        """``fn(mine, other's)`` field by field."""
        return PairingSignals(**{name: fn(value, getattr(other, name))
                                 for name, value in self.items()})


SIGNAL_NAMES = tuple(f.name for f in fields(PairingSignals))


def _tfidf_cosines(left_docs: Sequence[str], right_docs: Sequence[str]) -> Matrix:
    """Cosines of TF-IDF vectors of space-separated tokens (0 where a side has none)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = [*left_docs, *right_docs]
    if not any(d.strip() for d in docs):
        return np.zeros((len(left_docs), len(right_docs)))
    matrix = TfidfVectorizer(token_pattern=r"\S+", sublinear_tf=True,
                             lowercase=False).fit_transform(docs)
    return np.asarray((matrix[: len(left_docs)] @ matrix[len(left_docs):].T).todense())


def _sample(text: str) -> str:
    half = SAMPLE_CHARS // 2
    return text[:half] + text[-half:] if len(text) > SAMPLE_CHARS else text


def syllable_bigrams(text: str) -> list[str]:
    """Bigrams of the pinyin syllables (no tones) of ``text``'s Chinese characters: what
    two translations of one passage share even when their characters differ."""
    from pypinyin import Style, lazy_pinyin

    syllables = [s for s in lazy_pinyin(text, style=Style.NORMAL, errors="ignore")
                 if s.isalpha()]
    return [f"{a}_{b}" for a, b in zip(syllables, syllables[1:])]


def number_tokens(text: str) -> list[str]:
    """The numbers in ``text`` (digits or Chinese numerals) as ``#n`` tokens, sorted."""
    return [f"#{n}" for n in sorted(numbers_in(text))]


def pinyin_bigrams(text: str) -> str:
    return " ".join(syllable_bigrams(_sample(text)))


# ---------------------------------------------------------------- names

def name_keys(files: Sequence[VersionFile], threshold: float = NAME_THRESHOLD
              ) -> list[str]:
    """Per file, its transliterated names as space-separated cluster tokens.

    Candidates are found per version (``entities.name_candidates``: repeated runs of
    transliteration characters); candidates of different versions whose pinyin letters are
    similar enough are joined (union-find over the ``rapidfuzz`` similarity matrix of the
    two versions' candidates), and every occurrence in a file is replaced by its cluster id.
    """
    from rapidfuzz.distance import Levenshtein
    from rapidfuzz.process import cdist

    versions = sorted({f.version for f in files})
    names: dict[int, list[str]] = {}
    for v in versions:
        counts = name_candidates([f.text for f in files if f.version == v], min_count=2)
        names[v] = [n for n, _ in sorted(counts.items(), key=lambda x: (-x[1], x[0]))
                    ][:MAX_NAMES]
    letters = {v: ["".join(pinyin_key(n)) for n in names[v]] for v in versions}
    parent: dict[tuple[int, str], tuple[int, str]] = {(v, n): (v, n)
                                                      for v in versions for n in names[v]}

    def find(x: tuple[int, str]) -> tuple[int, str]:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for k, a in enumerate(versions):
        for b in versions[k + 1:]:
            if not names[a] or not names[b]:
                continue
            sims = cdist(letters[a], letters[b], scorer=Levenshtein.normalized_similarity)
            for i, j in zip(*np.nonzero(sims >= threshold)):
                parent[find((a, names[a][i]))] = find((b, names[b][j]))
    token = {key: "n" + "".join(pinyin_key(find(key)[1])) for key in parent}
    patterns = {v: re.compile("|".join(map(re.escape, sorted(names[v], key=len, reverse=True))))
                for v in versions if names[v]}
    out = []
    for f in files:
        pattern = patterns.get(f.version)
        found = pattern.findall(f.text) if pattern else []
        out.append(" ".join(token[(f.version, n)] for n in found))
    return out


# ---------------------------------------------------------------- dates and times

_NUM = rf"(?:[0-9０-９]{{1,4}}|[{''.join(sorted(ZH_NUMERAL_CHARS))}]{{1,5}})"
_DATE = re.compile(rf"(?:({_NUM})年)?({_NUM})月(?:({_NUM})[日号])?")
_YEAR = re.compile(rf"({_NUM})年(?!代)")
_TIME = re.compile(rf"(凌晨|早上|上午|中午|下午|傍晚|晚上|夜里)?({_NUM})[点时](?:({_NUM})分|(半)|(钟))?"
                   rf"|([0-9]{{1,2}})[:：]([0-9]{{2}})(?![0-9])")
_PM = {"下午", "傍晚", "晚上", "夜里"}


def _value(token: str | None) -> int | None:
    if not token:
        return None
    token = token.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    return int(token) if token.isdecimal() else numeral_value(token)


def date_time_tokens(text: str) -> list[str]:
    """Dates and clock times as normalised tokens: ``y1998``, ``m3d5``, ``t15:30``."""
    tokens = []
    for year in _YEAR.finditer(text):
        value = _value(year.group(1))
        if value is not None and value >= 100:
            tokens.append(f"y{value}")
    for date in _DATE.finditer(text):
        month, day = _value(date.group(2)), _value(date.group(3))
        if month is not None and 1 <= month <= 12:
            tokens.append(f"m{month}" + (f"d{day}" if day is not None and 1 <= day <= 31 else ""))
    for time in _TIME.finditer(text):
        period, hour_text, minute_text, half, clock, digit_hour, digit_minute = time.groups()
        if digit_hour:
            hour, minute = int(digit_hour), int(digit_minute)
        elif period or minute_text or half or clock:    # 快一点 / 三点意见 are not times
            hour = _value(hour_text)
            minute = 30 if half else (_value(minute_text) or 0)
            if hour is not None and period in _PM and hour < 12:
                hour += 12
        else:
            continue
        if hour is not None and 0 <= hour <= 24 and 0 <= minute < 60:
            tokens.append(f"t{hour}:{minute:02d}")
    return tokens


# ---------------------------------------------------------------- subtitle cues

def cue_profile(starts: Sequence[int], length_ms: int) -> np.ndarray:
    """Cue starts per ``CUE_BIN_MS`` over [0, length_ms], smoothed, unit length."""
    bins = max(1, -(-length_ms // CUE_BIN_MS))
    counts = np.bincount(np.minimum(np.asarray(starts, dtype=np.int64) // CUE_BIN_MS, bins - 1),
                         minlength=bins).astype(float)
    smooth = np.convolve(counts, [1.0, 2.0, 1.0], mode="same")
    norm = np.linalg.norm(smooth)
    return smooth / norm if norm else smooth


def cue_similarity(a: Sequence[int], a_end: int, b: Sequence[int], b_end: int) -> float:
    """Duration ratio × cosine of the cue profiles (0 when either side has no cues)."""
    if not a or not b or a_end <= 0 or b_end <= 0:
        return 0.0
    length = max(a_end, b_end)
    cosine = float(cue_profile(a, length) @ cue_profile(b, length))
    return min(a_end, b_end) / length * cosine


# ---------------------------------------------------------------- the matrices

def _pairwise(left: Sequence[VersionFile], right: Sequence[VersionFile],
              fn: Callable[[VersionFile, VersionFile], float]) -> Matrix:
    return np.array([[fn(a, b) for b in right] for a in left], dtype=float).reshape(
        len(left), len(right))


def _cues(a: VersionFile, b: VersionFile) -> float:
    if a.span_ms is None or b.span_ms is None:
        return 0.0
    return cue_similarity(a.cue_starts, a.span_ms[1], b.cue_starts, b.span_ms[1])


def _length(a: VersionFile, b: VersionFile) -> float:
    return min(len(a.text), len(b.text)) / max(len(a.text), len(b.text), 1)


def _chapter_number(a: VersionFile, b: VersionFile) -> float:
    na, nb = a.chapter, b.chapter
    if na is None or nb is None:
        return 0.0
    return 1.0 if na == nb else -1.0


def relative(matrix: Matrix, prior: float) -> Matrix:
    """Each cell minus the larger of its row and column medians (see the module docstring);
    ``prior`` is the usual level of two unrelated chapters of one book (see
    :func:`_baseline` for rows and columns of one or two cells)."""
    if matrix.size == 0:
        return matrix
    n, m = matrix.shape
    return matrix - np.maximum(_baseline(matrix, 1, prior), _baseline(matrix, 0, prior))


def _baseline(matrix: Matrix, axis: int, prior: float) -> Matrix:
    """Medians along ``axis``; with fewer than 3 cells the median is half a true pair, so it
    is not allowed below ``prior`` (else the two files left over after one true pair would
    look like a pair), and one cell has only the prior."""
    size = matrix.shape[axis]
    median = np.median(matrix, axis=axis, keepdims=True)
    if size >= 3:
        return median
    if size == 2:
        return np.maximum(median, prior)
    return np.full_like(median, prior)


#: the level of two unrelated chapters of one book, per signal (see :func:`relative`)
RELATIVE_PRIORS: PairingSignals[float] = PairingSignals(
    content=0.15, names=0.1, numbers_in_text=0.05, dates=0.0, cue_timing=0.3, length=0.6,
    chapter_number=0.0)


@dataclass(frozen=True)
class FileTokens:
    """The token documents of one file's TF-IDF signals (space-separated; computed once per
    file)."""

    content: str
    names: str
    numbers_in_text: str
    dates: str


def file_tokens(files: Sequence[VersionFile]) -> list[FileTokens]:
    """Per file, the token documents of the TF-IDF signals."""
    names = name_keys(files)
    return [FileTokens(content=pinyin_bigrams(f.text), names=names[k],
                       numbers_in_text=" ".join(number_tokens(f.text)),
                       dates=" ".join(date_time_tokens(f.text))) for k, f in enumerate(files)]


def signal_matrices(left: Sequence[VersionFile], right: Sequence[VersionFile],
                    left_tokens: Sequence[FileTokens], right_tokens: Sequence[FileTokens]
                    ) -> PairingSignals[Matrix]:
    """Every signal for (left × right), the similarity signals made :func:`relative`."""
    def cosines(document: Callable[[FileTokens], str]) -> Matrix:
        return _tfidf_cosines([document(t) for t in left_tokens],
                              [document(t) for t in right_tokens])

    raw: PairingSignals[Matrix] = PairingSignals(
        content=cosines(lambda t: t.content), names=cosines(lambda t: t.names),
        numbers_in_text=cosines(lambda t: t.numbers_in_text), dates=cosines(lambda t: t.dates),
        cue_timing=_pairwise(left, right, _cues), length=_pairwise(left, right, _length),
        chapter_number=_pairwise(left, right, _chapter_number))
    # a signal nobody has (cue times of book chapters) is no evidence either way
    return raw.zip_with(RELATIVE_PRIORS, lambda m, prior: relative(m, prior) if m.any() else m)


def mutual_best_rate(matrix: Matrix) -> float:
    """Share of files whose best partner has them as its best partner too: how clearly a
    signal pairs this collection (1 for names in a book of distinct chapters, low for a
    signal that is flat or noisy here)."""
    if matrix.size == 0 or not matrix.any():
        return 0.0
    by_row = matrix.argmax(axis=1)
    by_col = matrix.argmax(axis=0)
    mutual = sum(1 for i, j in enumerate(by_row) if by_col[j] == i)
    return mutual / min(matrix.shape)


def standardised(matrix: Matrix) -> Matrix:
    """A relative signal in units of its own spread, scaled by its :func:`mutual_best_rate`:
    signals on different scales become comparable, and one that cannot tell the chapters of
    this collection apart (names in a book whose chapters share their cast) weighs little."""
    spread = float(matrix.std())
    if spread == 0.0:
        return np.zeros_like(matrix)
    return matrix / spread * mutual_best_rate(matrix)
