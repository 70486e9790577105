"""Which Chinese and English phrases of one sentence pair align: consistency rules.

* ``strict`` — PPDB/Thrax: no word inside either phrase may be linked to a word outside the
  other phrase, and at least one link joins them.
* ``relaxed`` — the Chinese-PPDB paper (SPEC §1.4): only words whose POS is in the
  *constrained* lists must obey that rule; other words (function words, punctuation, ...)
  may have stray links.
* ``tolerance`` — the paper's own example (丹顶鹤 ↔ "red crowned cranes", where *cranes* (NNS,
  a constrained tag) also links to 正 outside) fails the POS rule alone.  A tolerance of N lets
  up to N stray links of constrained words through, but only *anchored* ones: the word must
  also have a link inside the pair, so a word that belongs elsewhere still blocks the pair.
  The outside word must also be linked elsewhere outside the pair (正 is also linked to
  "are"), so a pair that leaves out part of its own translation (老人 ↔ "old" when "man" is
  linked only to 老人) is still refused.  The example needs tolerance 1.

Everything is vectorised per sentence (span × link incidence matrices and their products), so a
sentence with 30 × 30 candidate spans costs a handful of small numpy operations.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError

_BILINGUAL = toml_defaults("bilingual")

Mode = Literal["strict", "relaxed"]
MODES: tuple[str, ...] = ("strict", "relaxed")


@dataclass(frozen=True)
class ConsistencyRule:
    """A phrase-alignment rule: mode, tolerance and the constrained POS tags."""

    mode: Mode = _BILINGUAL["consistency"]
    tolerance: int = 0
    zh_constrained_pos: frozenset[str] = frozenset(_BILINGUAL["zh_constrained_pos"])
    en_constrained_pos: frozenset[str] = frozenset(_BILINGUAL["en_constrained_pos"])

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"unknown consistency mode '{self.mode}'",
                              hint=f"choose one of: {', '.join(MODES)}")
        if not isinstance(self.tolerance, int) or self.tolerance < 0:
            raise ConfigError(f"consistency tolerance must be an integer >= 0, "
                              f"got {self.tolerance!r}")

    @property
    def label(self) -> str:
        return self.mode if self.tolerance == 0 else f"{self.mode}+tolerance{self.tolerance}"

    def constrained(self, pos: Sequence[str], lang: Literal["zh", "en"]) -> np.ndarray:
        """Boolean mask of the words that must obey the consistency rule."""
        if self.mode == "strict":
            return np.ones(len(pos), dtype=bool)
        tags = self.zh_constrained_pos if lang == "zh" else self.en_constrained_pos
        return np.fromiter((tag in tags for tag in pos), dtype=bool, count=len(pos))


def rule_from_settings(mode: str, tolerance: int, zh_pos: Iterable[str],
                       en_pos: Iterable[str]) -> ConsistencyRule:
    return ConsistencyRule(mode=mode, tolerance=int(tolerance),  # type: ignore[arg-type]
                           zh_constrained_pos=frozenset(zh_pos),
                           en_constrained_pos=frozenset(en_pos))


def links_array(links: Iterable[tuple[int, int]]) -> np.ndarray:
    """Links as an (L, 2) int array (zh index, en index)."""
    arr = np.asarray(list(links), dtype=np.int64)
    return arr.reshape(-1, 2)


class SpanLinks:
    """Which links fall inside each candidate span of one sentence pair (shared by rules).

    ``z_in`` is S × L (link l starts inside Chinese span s), ``e_in`` T × L; counts over
    span pairs are matrix products, so one sentence costs a few small BLAS calls.
    """

    def __init__(self, zh_bounds: np.ndarray, en_bounds: np.ndarray, links: np.ndarray) -> None:
        self.lz, self.le = links[:, 0], links[:, 1]
        self.z_in = (self.lz >= zh_bounds[:, :1]) & (self.lz < zh_bounds[:, 1:])
        self.e_in = (self.le >= en_bounds[:, :1]) & (self.le < en_bounds[:, 1:])
        self.zf = self.z_in.astype(np.float32)
        self.ef = self.e_in.astype(np.float32)
        self.n_inside = self.zf @ self.ef.T                                   # S × T

    def aligned(self, zh_constrained: np.ndarray, en_constrained: np.ndarray,
                tolerance: int = 0) -> np.ndarray:
        """S × T boolean mask of the span pairs that align under the rule."""
        cz = zh_constrained[self.lz].astype(np.float32)
        ce = en_constrained[self.le].astype(np.float32)
        n_stray = (self.zf * cz) @ (1.0 - self.ef).T + (1.0 - self.zf) @ (self.ef * ce).T
        linked = self.n_inside > 0
        ok = linked & (n_stray == 0)
        if tolerance > 0:
            si, ti = np.nonzero(linked & (n_stray > 0) & (n_stray <= tolerance))
            if len(si):
                passed = self._anchored(si, ti, cz > 0, ce > 0)
                ok[si[passed], ti[passed]] = True
        return ok

    def _anchored(self, si: np.ndarray, ti: np.ndarray, cz: np.ndarray,
                  ce: np.ndarray) -> np.ndarray:
        """For candidate pairs (si, ti): is every stray link anchored on both ends?

        A stray link joins a constrained word inside the pair to a word outside it.  It is a
        tolerable aligner error only if the inside word also links inside the pair *and*
        the outside word also links elsewhere outside the pair (正 in the cranes example is
        also linked to "are").  If the outside word links only into the pair, the pair is an
        incomplete translation (老人 ↔ "old" with "man" left out) and stays rejected.
        """
        lz, le = self.lz, self.le
        same_z = (lz[:, None] == lz[None, :]).astype(np.float32)
        same_e = (le[:, None] == le[None, :]).astype(np.float32)
        zin, ein = self.z_in[si], self.e_in[ti]                                 # K × L
        inside = (zin & ein).astype(np.float32)
        z_stray = zin & ~ein & cz
        e_stray = ein & ~zin & ce
        z_anchored = (inside @ same_z) > 0
        e_anchored = (inside @ same_e) > 0
        e_elsewhere = ((~zin).astype(np.float32) @ same_e) > 0   # en word links outside zh span
        z_elsewhere = ((~ein).astype(np.float32) @ same_z) > 0
        bad = (z_stray & ~(z_anchored & e_elsewhere)) | (e_stray & ~(e_anchored & z_elsewhere))
        return ~bad.any(axis=1)


def consistent_pairs(zh_bounds: np.ndarray, en_bounds: np.ndarray, links: np.ndarray,
                     zh_constrained: np.ndarray, en_constrained: np.ndarray,
                     tolerance: int = 0) -> np.ndarray:
    """Indices ``(k, 2)`` of the (Chinese span, English span) pairs that align.

    ``zh_bounds``/``en_bounds`` are ``(S, 2)``/``(T, 2)`` arrays of ``[start, end)``;
    ``links`` is ``(L, 2)``; the masks say which words are constrained (all of them for the
    strict rule).
    """
    if len(zh_bounds) == 0 or len(en_bounds) == 0 or len(links) == 0:
        return np.empty((0, 2), dtype=np.int64)
    stats = SpanLinks(zh_bounds, en_bounds, links)
    return np.argwhere(stats.aligned(zh_constrained, en_constrained, tolerance))


def is_consistent(zh_span: tuple[int, int], en_span: tuple[int, int],
                  links: Iterable[tuple[int, int]], zh_pos: Sequence[str],
                  en_pos: Sequence[str], rule: ConsistencyRule) -> bool:
    """Whether one Chinese span and one English span align under ``rule`` (for tests/docs)."""
    result = consistent_pairs(np.array([zh_span]), np.array([en_span]), links_array(links),
                              rule.constrained(zh_pos, "zh"), rule.constrained(en_pos, "en"),
                              rule.tolerance)
    return len(result) == 1
