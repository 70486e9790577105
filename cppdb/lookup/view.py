"""How ``cppdb lookup`` shows answers in a terminal: a compact view that fits 80 columns, and
the wide one with every column.

The compact view has one row per target: the rows of one target that differ only in their
left-hand-side label (大洋 as NP and as NN) are one row whose ``LHS`` cell lists the labels,
best first; its score, tier and pivot count are those of the best of them.  Each pattern
source gets its own table (a word query finds patterns of several sources), the queried
text's own tables first.  Its rows come
in the order of the relation groups (:mod:`cppdb.rank.relation_groups`: equivalence,
entailment, then the related pairs after a blank line), best first within each; an
Exclusion row is shown in red and a line under the table says what Exclusion means.

The relation column is the export's ``entailment`` field (:func:`cppdb.export.entailment_of`:
``Exclusion`` where the ranked table's ``relation`` says so, else Forward/ReverseEntailment
where one side's words all occur in the other, ``-`` where that test says nothing).
"""
from __future__ import annotations

import re
from typing import Any

import polars as pl

from cppdb import schema as S
from cppdb.align.sentences.types import DocumentKey
from cppdb.export import entailment_of
from cppdb.features.table import FEATURE_DESCRIPTIONS
from cppdb.lookup.explain import LOG_ODDS
from cppdb.lookup.keys import query_keys
from cppdb.rank.exclusion import EVIDENCE, EXCLUSION
from cppdb.rank.relation_groups import GROUP, RELATED, group_rank, with_group

#: the pair's relation as an export names it (PPDB's entailment field)
RELATION = "entailment"
SCORE, TIER = "score", "tier"
#: the compact view's column headers, in order (``relation`` shows the ``entailment``
#: column: PPDB 2.0's six relations; ``pivots`` = how many English pivots)
COMPACT_COLUMNS = ("target", "relation", SCORE, TIER, "pivots", "LHS")
UNKNOWN = "-"
#: under a table that shows Exclusion rows: they are answers a user must not take as synonyms
EXCLUSION_NOTE = f"Exclusion = not a paraphrase ({', '.join(EVIDENCE)})"


def with_relation(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the relation column: the database's own (an export file keeps it),
    else what the export would write for the pair."""
    if RELATION in frame.columns:
        return frame.with_columns(pl.col(RELATION).fill_null(""))
    return frame.with_columns(entailment_of(frame.columns).alias(RELATION))


def merged_targets(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per (type, source, target), the relation groups in order and best first
    within each: the best row's score, tier and pivot count, the relation and its group, and
    every LHS label joined by commas (best first)."""
    frame = with_group(with_relation(frame))
    score = (pl.col(SCORE) if SCORE in frame.columns else pl.lit(None, dtype=pl.Float64))
    frame = frame.with_columns(score.cast(pl.Float64).alias("_score"),
                               pl.int_range(pl.len()).alias("_order"),
                               group_rank(pl.col(GROUP)).alias("_group"))
    for name, dtype in ((TIER, pl.String), (S.N_PIVOTS, pl.Int64), (S.LHS, pl.String)):
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=dtype).alias(name))
    best_first = frame.sort("_group", "_score", "_order", descending=[False, True, False],
                            nulls_last=True)
    keys = [S.TYPE, S.SOURCE, S.TARGET]
    return (best_first.group_by(keys, maintain_order=True)
            .agg(pl.col(RELATION).first(), pl.col(GROUP).first(),
                 pl.col("_score").first().alias(SCORE),
                 pl.col(TIER).first(), pl.col(S.N_PIVOTS).first(),
                 pl.col(S.LHS).drop_nulls().unique(maintain_order=True).str.join(",")))


def ordered_targets(frame: pl.DataFrame, text: str) -> pl.DataFrame:
    """:func:`merged_targets` in the compact view's order: the queried text's own
    paraphrases first (compared as the index keys a query: script, width, spaces), then the
    patterns that contain it; relation groups and scores keep their order within each."""
    wanted = query_keys(text)["key"]
    return merged_targets(frame).sort(
        pl.col(S.SOURCE).str.replace_all(r"\s+", "") != wanted, maintain_order=True)


#: rows the compact view reads per target it shows (a target has a row per LHS label)
ROWS_PER_TARGET = 5


def compact_tables(frame: pl.DataFrame, text: str, top: int | None = None) -> list[Any]:
    """The compact view: per (type, source) a title line and a table, each row one target
    (the title is a line of its own: a table's title wraps at the table's width).  ``top``
    keeps the best ``top`` targets of each kind (patterns; phrases and sentences)."""
    from rich.console import Group
    from rich.text import Text

    merged = ordered_targets(frame, text)
    wanted = query_keys(text)["key"]
    if top is not None:
        kind = pl.col(S.TYPE) == "pattern"
        merged = merged.filter(pl.int_range(pl.len()).over(kind) < top)
    tables = []
    for (pair_type, source), part in merged.group_by([S.TYPE, S.SOURCE], maintain_order=True):
        title = (f"{pair_type} paraphrases of {source}" if _key(source) == wanted
                 else f"{pair_type} paraphrases of {source} (contains {text})")
        table = _table()
        groups = part[GROUP].to_list()
        for index, row in enumerate(part.iter_rows(named=True)):
            # a blank line before the related rows: what follows is not a paraphrase
            last_first = (groups[index] != RELATED and index + 1 < len(groups)
                          and groups[index + 1] == RELATED)
            # Text, not str: a cell's brackets are data, never rich markup
            table.add_row(Text(row[S.TARGET]), row[RELATION] or UNKNOWN, _number(row[SCORE]),
                          row[TIER] or UNKNOWN, _count(row[S.N_PIVOTS]), row[S.LHS] or "",
                          style="red" if row[RELATION] == EXCLUSION else None,
                          end_section=last_first)
        note = ([Text(EXCLUSION_NOTE, style="italic")]
                if EXCLUSION in part[RELATION].to_list() else [])
        tables.append(Group(Text(title, style="bold"), table, *note))
    return tables


def _key(text: str) -> str:
    return "".join(text.split())


def _number(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value:.2f}"


def _count(value: int | None) -> str:
    return UNKNOWN if value is None else str(value)


def _table() -> Any:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    for name in COMPACT_COLUMNS:
        # the target wraps (between words: the data keeps spaces between them); the short
        # cells never do, so a column is as wide as its widest value
        table.add_column(name, justify="right" if name in (SCORE, "pivots") else "left",
                         no_wrap=name != "target", overflow="fold")
    return table


def wide_table(frame: pl.DataFrame, text: str, features: bool) -> Any:
    """Every column, one row per pair (``--wide``; with ``--features`` also the features)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(f"paraphrases of {text}"), title_justify="left")
    names = [c for c in frame.columns if features or c not in ("count", "origin")]
    for name in names:
        table.add_column(name, overflow="fold")
    for row in frame.select(names).iter_rows():
        table.add_row(*[Text(cell(v)) for v in row])
    return table


def cell(value: object) -> str:
    """One value as the wide table shows it (a document of ``schema.DOCUMENTS`` by its
    label)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list):
        return ", ".join(DocumentKey(*(v[k] for k in S.DOC_KEY)).label
                         if isinstance(v, dict) else str(v) for v in value)
    return str(value)


#: how many features an explanation lists (the rest are summed on one line)
EXPLAIN_FEATURES = 8
#: a feature's description is cut here (two lines of its column at 80 columns)
DESCRIPTION_CHARS = 60


def explanation_renderables(explanation: Any, features: int = EXPLAIN_FEATURES) -> list[Any]:
    """``cppdb lookup --explain``: the pair, its model score's largest contributions, the
    penalties, its pivots with their probabilities, and what could not be explained."""
    from rich.text import Text

    pair = explanation.pair
    sides = {name: [pair[name]] for name in (S.SOURCE, S.TARGET, RELATION, S.RELATION)
             if name in pair}
    relation = with_relation(pl.DataFrame(sides))[RELATION][0] or UNKNOWN
    probability = pair.get(S.RELATION_PROBABILITY)
    if probability is not None:
        relation += f" (p {probability:.2f})"
    head = (f"{pair.get(S.TYPE)} {pair[S.SOURCE]} → {pair[S.TARGET]}  (LHS {pair.get(S.LHS)}; "
            f"tier {pair.get(TIER) or UNKNOWN}, rank {pair.get('rank') or UNKNOWN}, score "
            f"{_number(pair.get(SCORE))}; {RELATION} {relation})")
    parts: list[Any] = [Text(head, style="bold")]
    if explanation.contributions is not None:
        parts += [Text(_score_line(explanation)),
                  Text(f"features that moved it most ({explanation.unit})"),
                  _contribution_table(explanation, features)]
    if explanation.pivots is not None:
        parts += _pivot_table(explanation.pivots, pair)
    parts += [Text(note, style="italic") for note in explanation.notes]
    return parts


def _score_line(explanation: Any) -> str:
    total = f"base {explanation.base:+.3f} + Σ contributions"
    formula = f"1 + 4·σ({total})" if explanation.unit == LOG_ODDS else total
    line = f"model score {explanation.model_score:.3f} = {formula}"
    if explanation.penalty is not None and abs(explanation.penalty) > 5e-4:
        line += (f"\nscore {explanation.pair[SCORE]:.3f} = model score - "
                 f"{explanation.penalty:.3f} of sameness penalties (containment, diversity)")
    return line


def _short(description: str) -> str:
    """A feature's description without its source tag (``[7]``, ``extra:``) and its fine
    print (after the first ``;``)."""
    text = re.sub(r"^(\[\d+\]|extra:)\s*", "", description).split("; ")[0]
    if len(text) <= DESCRIPTION_CHARS:
        return text
    return text[:DESCRIPTION_CHARS].rsplit(" ", 1)[0] + " …"


def _contribution_table(explanation: Any, features: int) -> Any:
    from rich.text import Text

    table = _plain_table("", ("feature", "value", "contribution", "what it measures"))
    frame = explanation.contributions
    for row in frame.head(features).iter_rows(named=True):
        table.add_row(row["feature"], _value(row["value"]), f"{row['contribution']:+.3f}",
                      Text(_short(FEATURE_DESCRIPTIONS.get(row["feature"], ""))))
    rest = frame.slice(features)
    if rest.height:
        table.add_row(f"{rest.height} other features", "",
                      f"{rest['contribution'].sum():+.3f}", "")
    return table


def _pivot_table(pivots: pl.DataFrame, pair: dict[str, Any]) -> list[Any]:
    from rich.text import Text

    shown, total = pivots.height, pair.get(S.N_PIVOTS)
    count = f"{shown} of {total}" if total is not None and total != shown else f"{shown}"
    p_ts = pair.get(S.P_TGT_GIVEN_SRC)
    tail = f"; p_t_given_s {p_ts:.3f} sums all its pivots" if p_ts is not None else ""
    names = [c for c in ("pivot", "p_e_given_source", "p_target_given_e", "product")
             if c in pivots.columns]
    labels = {"p_e_given_source": "p(e|source)", "p_target_given_e": "p(target|e)"}
    table = _plain_table("", tuple(labels.get(n, n) for n in names))
    for row in pivots.select(names).iter_rows():
        table.add_row(*[_value(v) if isinstance(v, float) else Text("" if v is None else str(v))
                        for v in row])
    return [Text(f"English pivots e ({count}, best first{tail})"), table]


def _value(value: float | None) -> str:
    if value is None or value != value:
        return UNKNOWN
    return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"


def _plain_table(title: str, columns: tuple[str, ...]) -> Any:
    from rich import box
    from rich.table import Table

    table = Table(title=title or None, title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False, show_edge=False, collapse_padding=True)
    for index, name in enumerate(columns):
        last = index == len(columns) - 1 and name == "what it measures"
        # names and numbers never wrap; the description (English words) wraps to fit
        table.add_column(name, justify="left" if index == 0 or last else "right",
                         no_wrap=not last)
    return table
