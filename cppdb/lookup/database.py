"""``open_database(path)``: query a paraphrase database from Python (and ``cppdb lookup``).

>>> db = open_database("demo-run/bilingual")                        # doctest: +SKIP
>>> db.paraphrases("出生于", top=10)      # polars DataFrame, best first  # doctest: +SKIP
>>> db.patterns("[NP1] 出生于 [NP2]")     # or db.patterns("出生于")       # doctest: +SKIP
>>> db.sample(tier="S", n=20)                                      # doctest: +SKIP
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.lookup.index import ORDER, SCORE, connect, ensure_index
from cppdb.lookup.keys import ANY_SLOT, SLOT, has_slots, key_expr, query_keys
from cppdb.lookup.source import PairSource, resolve_source
from cppdb.rank.filters import FILTER_REASON
from cppdb.rank.relation_groups import ALL, GROUP, GROUPS, check_relation, wanted_groups
from cppdb.rank.settings import RankSettings

TIER = "tier"
#: what every answer shows; ``features=True`` adds every other numeric column and the links
BASE_COLUMNS = (S.TYPE, S.SOURCE, S.TARGET, SCORE, TIER, "rank", S.LHS, S.COUNT, S.N_PIVOTS,
                S.PIVOTS, S.DOCUMENTS, S.ORIGIN, S.RELATION, S.RELATION_PROBABILITY, GROUP)
#: ``relation="all"`` orders the groups (equivalence, entailment, related) before the score
_GROUP_ORDER = (f"CASE {GROUP} " + " ".join(f"WHEN '{g}' THEN {i}" for i, g in enumerate(GROUPS))
                + f" ELSE {len(GROUPS)} END")
_INTERNAL = {"key", "shape", "fixed", ORDER}
#: the most rows :meth:`Database.find_pair` reads to find one target among a text's answers
PAIR_SEARCH_LIMIT = 1_000_000


def _tier_order() -> list[str]:
    return [t.name for t in RankSettings().tier_list()]


class Database:
    """A read-only connection to the lookup index of one run directory or export."""

    def __init__(self, source: PairSource, rebuild: bool = False) -> None:
        self.source = source
        self.built = ensure_index(source, rebuild=rebuild)
        self._con = connect(source.index_path)
        self._columns = [r[0] for r in self._con.execute("DESCRIBE pairs").fetchall()]
        self._types = {r[0]: r[1] for r in self._con.execute("DESCRIBE pairs").fetchall()}

    # -- plumbing -----------------------------------------------------------------------
    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def path(self) -> Path:
        return self.source.index_path

    def _select(self, features: bool, extra: Sequence[str] = ()) -> list[str]:
        cols = [c for c in (*BASE_COLUMNS, *extra) if c in self._columns]
        cols = list(dict.fromkeys(cols))
        if features:
            cols += [c for c in self._columns if c not in cols and c not in _INTERNAL]
        return cols

    def _tier_filter(self, tier: str | None, params: list[Any]) -> str:
        if tier is None:
            return ""
        order = _tier_order()
        if tier not in order:
            raise BadInputError(f"unknown tier {tier!r}", hint=f"choose one of {', '.join(order)}")
        if TIER not in self._columns:
            raise BadInputError(f"{self.source.files[0]} has no tiers (it is not ranked)",
                                hint="run `cppdb rank RUN` and look up in the run directory")
        allowed = order[:order.index(tier) + 1]
        params.extend(allowed)
        return f" AND {TIER} IN ({', '.join('?' * len(allowed))})"

    def _relation_filter(self, relation: str | None, params: list[Any]) -> tuple[str, str]:
        """The WHERE clause and the leading ORDER BY term of a ``relation`` choice
        (:mod:`cppdb.rank.relation_groups`; None: every pair, by score alone)."""
        if check_relation(relation) is None:
            return "", ""
        if relation == ALL:
            return "", f"{_GROUP_ORDER}, "
        params.append(relation)
        return f" AND {GROUP} = ?", ""

    def _probability_filter(self, min_probability: float | None, params: list[Any]) -> str:
        """Only pairs whose relation the classifier gave with at least this probability (the
        rule's Exclusion and undecided pairs have none, so they go too)."""
        if min_probability is None:
            return ""
        if not 0 <= min_probability <= 1:
            raise BadInputError(f"min_probability must be in [0, 1], got {min_probability}",
                                hint="e.g. 0.9: Equivalence was right 85 % of the time there "
                                     "(docs/benchmarks/rank.md, Relations)")
        if S.RELATION_PROBABILITY not in self._columns:
            raise BadInputError(f"{self.source.files[0]} has no {S.RELATION_PROBABILITY} "
                                "column (ranked before relations, or an export without it)",
                                hint="rank the run again with `cppdb rank RUN --fresh`")
        params.append(float(min_probability))
        return f" AND {S.RELATION_PROBABILITY} >= ?"

    def _query(self, where: str, params: list[Any], top: int, tier: str | None,
               features: bool, extra: Sequence[str] = (), relation: str | None = None,
               min_probability: float | None = None) -> pl.DataFrame:
        if top < 1:
            raise BadInputError(f"top must be at least 1, got {top}")
        cols = self._select(features, extra)
        tier_sql = self._tier_filter(tier, params)
        relation_sql, first = self._relation_filter(relation, params)
        relation_sql += self._probability_filter(min_probability, params)
        sql = (f"SELECT {', '.join(cols)} FROM pairs WHERE {where}{tier_sql}{relation_sql} "
               f"ORDER BY {first}{ORDER} DESC NULLS LAST, {S.TARGET} LIMIT {int(top)}")
        rows = self._con.execute(sql, params).fetchall()
        return pl.DataFrame(rows, schema=cols, orient="row", infer_schema_length=None)

    # -- queries --------------------------------------------------------------------------
    def paraphrases(self, text: str, top: int = 10, type: str | None = None,
                    tier: str | None = None, features: bool = False,
                    extra: Sequence[str] = (), relation: str | None = None,
                    min_probability: float | None = None) -> pl.DataFrame:
        """Paraphrases of ``text`` best first; a text with slots (``[NP1]``) is a pattern query.

        Without ``type``, a slot-free text is looked up as a phrase and a sentence; with
        ``type="pattern"`` (or slots in the text) see :meth:`patterns`.  ``extra`` names
        columns to add when the database has them (``entailment`` of an export file).
        ``relation``: ``equivalence``, ``entailment`` or ``related`` keeps that group
        (:mod:`cppdb.rank.relation_groups`); ``all`` keeps every pair, the groups in that
        order (best first within each); None (the default) orders by score alone.
        ``min_probability``: only pairs whose ``relation_probability`` (the classifier's) is at
        least this; with ``relation="equivalence"``, 0.9 keeps surer synonyms.
        """
        if type is not None and type not in S.PAIR_TYPES:
            raise BadInputError(f"unknown pair type {type!r}",
                                hint=f"choose one of {', '.join(S.PAIR_TYPES)}")
        if type == "pattern" or (type is None and has_slots(text)):
            return self.patterns(text, top, tier, features, extra, relation, min_probability)
        keys = query_keys(text)
        types = [type] if type else ["phrase", "sentence"]
        where = f"{S.TYPE} IN ({', '.join('?' * len(types))}) AND key = ?"
        return self._query(where, [*types, keys["key"]], top, tier, features, extra, relation,
                           min_probability)

    def patterns(self, text: str, top: int = 10, tier: str | None = None,
                 features: bool = False, extra: Sequence[str] = (),
                 relation: str | None = None, min_probability: float | None = None
                 ) -> pl.DataFrame:
        """Pattern paraphrases: by the pattern (``[NP1] 出生于 [NP2]``) or by fixed words alone.

        A pattern whose slot labels are generic (``[X]``) matches any labels; with specific
        labels it matches them exactly, falling back to any labels when none match.  Words
        without slots find every pattern whose fixed words contain them (出生于 finds
        ``[NP1] 出生 于 [NP2]`` and ``[NP1] 在 [NT2] 出生 于 上海``).
        """
        keys = query_keys(text)
        if not keys["key"]:
            raise BadInputError("empty lookup text", hint="pass a phrase, e.g. 出生于")
        if has_slots(text):
            if not keys["generic"]:
                exact = self._query(f"{S.TYPE} = 'pattern' AND key = ?", [keys["key"]], top,
                                    tier, features, extra, relation, min_probability)
                if exact.height:
                    return exact
            return self._query(f"{S.TYPE} = 'pattern' AND shape = ?", [keys["shape"]], top,
                               tier, features, extra, relation, min_probability)
        where = (f"{S.TYPE} = 'pattern' AND key IN "
                 "(SELECT key FROM pattern_keys WHERE contains(fixed, ?))")
        return self._query(where, [keys["fixed"]], top, tier, features, extra, relation,
                           min_probability)

    def lookup(self, text: str, top: int = 10, type: str | None = None, tier: str | None = None,
               features: bool = False, extra: Sequence[str] = (),
               relation: str | None = None, min_probability: float | None = None
               ) -> pl.DataFrame:
        """What ``cppdb lookup`` prints: phrases/sentences and, for slot-free words, patterns
        (``relation`` and ``min_probability`` as in :meth:`paraphrases`; the command passes
        ``all`` by default)."""
        if type is not None or has_slots(text):
            return self.paraphrases(text, top, type, tier, features, extra, relation,
                                    min_probability)
        found = [self.paraphrases(text, top, None, tier, features, extra, relation,
                                  min_probability),
                 self.patterns(text, top, tier, features, extra, relation, min_probability)]
        return pl.concat([f for f in found if f.height] or found[:1], how="diagonal_relaxed")

    def nearby(self, text: str, limit: int = 5) -> pl.DataFrame:
        """What to try when ``text`` has no paraphrase: the database's phrases inside it
        (two characters or more) and the phrases that contain it, each with how many pairs
        it has — ``phrase``, ``pairs``, ``where`` ("inside" | "containing"), most pairs
        first (``limit`` of each)."""
        key = query_keys(text)["key"]
        rows: list[tuple[str, int, str]] = []
        for where, condition in (("inside", "contains(?, key) AND length(key) >= 2"),
                                 ("containing", "contains(key, ?)")):
            sql = (f"SELECT min({S.SOURCE}), count(*) AS n FROM pairs WHERE {S.TYPE} = "
                   f"'phrase' AND key <> ? AND {condition} GROUP BY key "
                   f"ORDER BY n DESC, key LIMIT {int(limit)}")
            rows += [(phrase, n, where)
                     for phrase, n in self._con.execute(sql, [key, key]).fetchall()]
        return pl.DataFrame(rows, schema={"phrase": pl.String, "pairs": pl.Int64,
                                          "where": pl.String}, orient="row")

    def rejected(self, text: str) -> pl.DataFrame:
        """Why ``text``'s candidate pairs are not in the database: the ranker's filter
        reasons, and ``pruned <relation>`` for the low-ranked unrelated pairs the score stage
        pruned, with how many pairs each rejected (``filter_reason``, ``pairs``, most first),
        read from a ranked run's ``ranking/filtered_pairs.parquet`` and
        ``ranking/pruned_pairs.parquet`` (empty for an export or an unranked run: they keep
        no rejected pairs)."""
        empty = pl.DataFrame(schema={FILTER_REASON: pl.String, "pairs": pl.UInt32})
        run = self.source.run_dir
        if run is None:
            return empty
        key = query_keys(text)["key"]
        reasons = {S.FILTERED_FILE: pl.col(FILTER_REASON),
                   S.PRUNED_FILE: pl.format("pruned {}", pl.col(S.RELATION))}
        parts = [pl.scan_parquet(path).filter(key_expr(S.SOURCE) == key)
                 .select(reason.alias(FILTER_REASON))
                 for name, reason in reasons.items()
                 if (path := run / S.RANKING_DIR / name).exists()]
        if not parts:
            return empty
        return (pl.concat(parts).group_by(FILTER_REASON).agg(pl.len().alias("pairs"))
                .sort(["pairs", FILTER_REASON], descending=[True, False]).collect())

    def find_pair(self, text: str, target: str, type: str | None = None) -> pl.DataFrame:
        """Every row (all columns) among the answers to ``text`` whose target is ``target``,
        spelled as a query may be (spaces, script, width; ``[X]`` slots match any labels):
        one row per LHS label (or pattern source) of the pair, best first."""
        wanted = query_keys(target)
        found = self.lookup(text, PAIR_SEARCH_LIMIT, type, features=True)
        if found.height == 0:
            return found
        keyed = found.with_columns(pl.col(S.TARGET).str.replace_all(r"\s+", "").alias("_key"))
        if wanted["generic"]:
            keyed = keyed.with_columns(pl.col("_key").str.replace_all(SLOT.pattern, ANY_SLOT))
            return keyed.filter(pl.col("_key") == wanted["shape"]).drop("_key")
        return keyed.filter(pl.col("_key") == wanted["key"]).drop("_key")

    def sample(self, tier: str | None = None, n: int = 20, type: str | None = None,
               seed: int = 0, features: bool = False) -> pl.DataFrame:
        """``n`` pairs drawn at random (seeded: the same sample every time) from a tier."""
        params: list[Any] = []
        where = "TRUE"
        if type is not None:
            where, params = f"{S.TYPE} = ?", [type]
        cols = self._select(features)
        tier_sql = self._tier_filter(tier, params)
        sql = (f"SELECT {', '.join(cols)} FROM pairs WHERE {where}{tier_sql} "
               f"ORDER BY hash(key || '\t' || {S.TARGET} || '{int(seed)}'), key, {S.TARGET} "
               f"LIMIT {int(n)}")
        rows = self._con.execute(sql, params).fetchall()
        return pl.DataFrame(rows, schema=cols, orient="row", infer_schema_length=None)

    def stats(self) -> pl.DataFrame:
        """Pairs per type (and tier, when ranked)."""
        group = [S.TYPE] + ([TIER] if TIER in self._columns else [])
        sql = (f"SELECT {', '.join(group)}, count(*) AS pairs FROM pairs "
               f"GROUP BY ALL ORDER BY ALL")
        rows = self._con.execute(sql).fetchall()
        return pl.DataFrame(rows, schema=[*group, "pairs"], orient="row")


def open_database(path: str | Path, index: str | Path | None = None,
                  rebuild: bool = False) -> Database:
    """Open (building the index once if needed) the paraphrase database at ``path``.

    ``path`` is a run directory (ranked or not), an ``--format hf`` export directory, or a
    file written by ``cppdb export``.  The index is stored next to it unless ``index`` says
    where; ``rebuild`` forces a new one (it is rebuilt anyway when the data changed).
    """
    return Database(resolve_source(path, index), rebuild=rebuild)
