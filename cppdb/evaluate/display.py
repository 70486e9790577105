"""The evaluation table (Table 3/4 columns) for a terminal: one ``mean±half`` cell per metric,
so the table fits 80 columns (``cppdb evaluate``, ``make demo``)."""
from __future__ import annotations

from typing import Any

import polars as pl

from cppdb.evaluate.relation_mix import PRUNED

#: what the columns and the ± mean, printed under the table (:func:`legend`)
TEMPLATE_LEGEND = "template words = the same without a pattern's slots (both sides share them);\n"
LEGEND = ("ED = character edit distance (spaces removed); ED÷len = ED / longer side;\n"
          "contained = one side is a substring of the other; in order = one side's\n"
          "words appear in order in the other's (words added anywhere, or contained);\n"
          "cosine over a seeded sample of each cell (cosine-cap: below); ± = the wider\n"
          "side of the 95 % interval (seeded percentile bootstrap; 1.96·SE for a cell\n"
          "over evaluate.bootstrap_max_items pairs: see ci: below)")


def legend(frame: pl.DataFrame) -> str:
    """:data:`LEGEND`, with the template-word line when the table has patterns."""
    if frame.filter(pl.col("type") == "pattern").is_empty():
        return LEGEND
    first, rest = LEGEND.split("\n", 1)
    return f"{first}\n{TEMPLATE_LEGEND}{rest}"


def interval_text(row: dict, metric: str, percent: bool = False) -> str:
    """``mean±half`` of a metric's 95 % interval (the wider side when it is asymmetric)."""
    mean, low, high = row[metric], row[f"{metric}_low"], row[f"{metric}_high"]
    if mean is None:
        return "-"
    scale, unit = (100.0, "%") if percent else (1.0, "")
    half = max(mean - low, high - mean) if low is not None and high is not None else 0.0
    digits = 1 if percent else (2 if abs(mean) >= 1 else 3)
    return f"{mean * scale:.{digits}f}{unit}±{half * scale:.{digits}f}"


def evaluation_rich_table(frame: pl.DataFrame, title: str) -> Any:
    """A rich renderable of an evaluation table (:func:`cppdb.evaluate.tables.evaluation_table`):
    the diversity and first-cosine table; under it, when there are patterns, their ED and
    ED÷len over the template words, and when a second model was set, a small table of its
    cosines (stacked rather than widened, so 80 columns still suffice)."""
    from rich.console import Group

    main = _table(title, ("type", "top", "n", "ED", "ED÷len", "contained", "in order",
                          "cosine"))
    for row in frame.iter_rows(named=True):
        main.add_row(row["type"], row["top"], str(row["pairs"]),
                     interval_text(row, "edit_distance"),
                     interval_text(row, "normalised_edit_distance"),
                     interval_text(row, "containment", percent=True),
                     interval_text(row, "containment_in_order", percent=True),
                     interval_text(row, "cosine"))
    parts = [main]
    patterns = frame.filter(pl.col("type") == "pattern")
    if patterns.height:
        words = _table("patterns over their template words",
                       ("type", "top", "n", "ED", "ED÷len"))
        for row in patterns.iter_rows(named=True):
            words.add_row(row["type"], row["top"], str(row["pairs"]),
                          interval_text(row, "template_edit_distance"),
                          interval_text(row, "template_normalised_edit_distance"))
        parts.append(words)
    if frame["cosine_second"].is_not_null().any():
        second = _table("cosine with the second model (evaluate.second_model_path)",
                        ("type", "top", "k", "cosine 2"))
        for row in frame.iter_rows(named=True):
            second.add_row(row["type"], row["top"], str(row["embedded"] or "-"),
                           interval_text(row, "cosine_second"))
        parts.append(second)
    return main if len(parts) == 1 else Group(*parts)


def _table(title: str, columns: tuple[str, ...]) -> Any:
    from rich import box
    from rich.table import Table

    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                  show_edge=False, collapse_padding=True)
    for name in columns:
        table.add_column(name, justify="left" if name in ("type", "top") else "right",
                         no_wrap=True)
    return table


def coverage_renderables(coverage: pl.DataFrame | None) -> list[Any]:
    """The word coverage (:mod:`cppdb.evaluate.coverage`) for a terminal: a small table, then
    each list's most frequent words without a first-tier paraphrase (lines that wrap)."""
    from rich.text import Text

    if coverage is None or coverage.is_empty():
        return [Text("word coverage: not computed (no tiers, or no phrase pairs)")]
    tier = coverage["tier"][0]
    table = _table("", ("type", "top", f"in {tier}", "any tier"))
    table.columns[0].header = "word list"
    for row in coverage.iter_rows(named=True):
        table.add_row(row["list"], f"{row['words']:,}", _share(row["with_tier"], row["words"]),
                      _share(row["with_any"], row["words"]))
    parts: list[Any] = [Text(f"word coverage: top content words with a phrase paraphrase in "
                             f"tier {tier}"), table]
    for row in coverage.iter_rows(named=True):
        words = " ".join(row["missing"]) or "-"
        parts.append(Text(f"{row['list']} ({row['content']}), the most frequent without "
                          f"one in {tier}: {words}"))
    return parts


def _share(count: int, total: int) -> str:
    return f"{count:,} = {100 * count / total:.1f}%" if total else "-"


#: the relation labels as the mix's columns name them (short: the table keeps to 80 columns)
RELATION_HEADERS = {"Equivalence": "Equivalence", "ForwardEntailment": "Forward",
                    "ReverseEntailment": "Reverse", "Exclusion": "Exclusion",
                    "OtherRelated": "Other", "Independent": "Independent",
                    "undecided": "undecided"}


def relation_mix_renderables(mix: pl.DataFrame | None) -> list[Any]:
    """The relation mix (:mod:`cppdb.evaluate.relation_mix`) for a terminal: one row per type
    and tier, one column per label that occurs (its share of the tier's pairs)."""
    from rich.text import Text

    if mix is None or mix.is_empty():
        return [Text("relation mix: not computed (no tiers)")]
    pruned, mix = mix.filter(pl.col("tier") == PRUNED), mix.filter(pl.col("tier") != PRUNED)
    labels = [label for label in RELATION_HEADERS if label in set(mix["relation"])]
    labels += sorted(set(mix["relation"]) - set(labels))
    table = _table("", ("type", "top", "n",
                        *(RELATION_HEADERS.get(label, label) for label in labels)))
    table.columns[1].header = "tier"
    for (pair_type, tier), part in mix.group_by("type", "tier", maintain_order=True):
        shares = dict(zip(part["relation"], part["share"], strict=True))
        table.add_row(pair_type, tier, f"{part['pairs'].sum():,}",
                      *(f"{100 * shares[label]:.1f}%" if label in shares else "-"
                        for label in labels))
    # the title is a line of its own: a table's title wraps at the table's width
    return [Text("relation mix: each label's share of a tier's pairs (tiers nested)"), table,
            Text("labels: the relation classifier's, Exclusion from the rule's evidence;\n"
                 "Forward/Reverse = Forward/ReverseEntailment; undecided = ranked without one"),
            *_pruned_lines(pruned)]


def _pruned_lines(pruned: pl.DataFrame) -> list[Any]:
    """One line per type on the pairs the ranking pruned (a row of the table would not fit
    in 80 columns beside the tier names)."""
    from rich.text import Text

    lines = []
    for (pair_type,), part in pruned.group_by("type", maintain_order=True):
        shares = ", ".join(f"{RELATION_HEADERS.get(r, r)} {100 * v:.1f}%"
                           for r, v in zip(part["relation"], part["share"], strict=True))
        lines.append(Text(f"pruned {pair_type} pairs (out of the table): "
                          f"{part['pairs'].sum():,} ({shares})"))
    return lines
