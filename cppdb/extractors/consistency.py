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
  The example needs tolerance 1.

Everything is vectorised per sentence over (Chinese span × English span × link) so that a
sentence with 30 × 30 candidate spans costs a handful of numpy operations.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from cppdb.errors import ConfigError

Mode = Literal["strict", "relaxed"]
MODES: tuple[str, ...] = ("strict", "relaxed")

#: SPEC §1.4 word POS lists of the relaxed rule.
EN_CONSTRAINED_POS = ("CD", "JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "PRP", "PRP$", "RB",
                      "VB", "VBD", "VBP", "VBZ")
ZH_CONSTRAINED_POS = ("AD", "CD", "NN", "NR", "NT", "OD", "VA", "VV")


@dataclass(frozen=True)
class ConsistencyRule:
    """A phrase-alignment rule: mode, tolerance and the constrained POS tags."""

    mode: Mode = "relaxed"
    tolerance: int = 0
    zh_constrained_pos: frozenset[str] = frozenset(ZH_CONSTRAINED_POS)
    en_constrained_pos: frozenset[str] = frozenset(EN_CONSTRAINED_POS)

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
    lz, le = links[:, 0], links[:, 1]
    z_in = (lz >= zh_bounds[:, :1]) & (lz < zh_bounds[:, 1:])          # S × L
    e_in = (le >= en_bounds[:, :1]) & (le < en_bounds[:, 1:])          # T × L
    inside = z_in[:, None, :] & e_in[None, :, :]                       # S × T × L
    z_stray = z_in[:, None, :] & ~e_in[None, :, :] & zh_constrained[lz]
    e_stray = e_in[None, :, :] & ~z_in[:, None, :] & en_constrained[le]
    ok = inside.any(axis=2)
    if tolerance == 0:
        ok &= ~(z_stray.any(axis=2) | e_stray.any(axis=2))
    else:
        # a stray link is tolerated only if its constrained word also links inside the pair
        same_z = (lz[:, None] == lz[None, :]).astype(np.int32)
        same_e = (le[:, None] == le[None, :]).astype(np.int32)
        inside_i = inside.astype(np.int32)
        z_anchored = (inside_i @ same_z) > 0
        e_anchored = (inside_i @ same_e) > 0
        unanchored = (z_stray & ~z_anchored).any(axis=2) | (e_stray & ~e_anchored).any(axis=2)
        n_stray = z_stray.sum(axis=2) + e_stray.sum(axis=2)
        ok &= ~unanchored & (n_stray <= tolerance)
    return np.argwhere(ok)


def is_consistent(zh_span: tuple[int, int], en_span: tuple[int, int],
                  links: Iterable[tuple[int, int]], zh_pos: Sequence[str],
                  en_pos: Sequence[str], rule: ConsistencyRule) -> bool:
    """Whether one Chinese span and one English span align under ``rule`` (for tests/docs)."""
    result = consistent_pairs(np.array([zh_span]), np.array([en_span]), links_array(links),
                              rule.constrained(zh_pos, "zh"), rule.constrained(en_pos, "en"),
                              rule.tolerance)
    return len(result) == 1
