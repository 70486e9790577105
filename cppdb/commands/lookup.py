"""`cppdb lookup` (paraphrases of a phrase or pattern) and `cppdb report` (HTML run report)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb import schema as S
from cppdb.commands.common import JsonOpt, QuietOpt, print_json

from cppdb.io import check_output_file
from cppdb.lookup import open_database
from cppdb.rank.relation_groups import ALL, check_relation


#: ``--relation``: the groups of cppdb/rank/relation_groups.py
RelationOpt = Annotated[str, typer.Option(
    "--relation", help="equivalence (Equivalence, and pairs no test decided) | entailment "
                       "(Forward/ReverseEntailment) | related (OtherRelated, Independent, "
                       "Exclusion) | all (the groups in that order, best first within each).")]


def console():
    """The command's result goes to stdout (``| less`` works); its width follows the
    terminal, or $COLUMNS (80 when neither says)."""
    from rich.console import Console

    return Console(highlight=False)


def _say(line: str) -> None:
    """A line of the answer, wrapped at the terminal's width like the tables (as text: its
    brackets are data, never markup)."""
    from rich.text import Text

    console().print(Text(line))


def _rejected_by(rejected) -> str:
    reasons = ", ".join(f"{reason} {n:,}" for reason, n in rejected.iter_rows())
    total = rejected["pairs"].sum()
    return (f"the ranker rejected its {total:,} candidate "
            f"pair{'s' if total > 1 else ''}: {reasons}")


def _no_answer(text: str, rejected, nearby) -> None:
    """Say that ``text`` has no paraphrase, why when the ranker's filters rejected its
    candidates, and what the database has nearby (cppdb.lookup.Database.rejected/nearby)."""
    _say(f"no paraphrases of {text!r} in this database")
    if rejected.height:
        _say(f"  {_rejected_by(rejected)} (the run's "
             f"{S.RANKING_DIR}/{S.FILTERED_FILE} and {S.PRUNED_FILE} list them)")
    for where, label in (("inside", "phrases inside it"), ("containing", "phrases containing it")):
        part = nearby.filter(nearby["where"] == where)
        if part.height:
            listed = ", ".join(f"{phrase} ({n})" for phrase, n, _ in part.iter_rows())
            _say(f"  {label} that have paraphrases: {listed}")
    if nearby.height:
        _say(f"  try: cppdb lookup '{nearby['phrase'][0]}' (with the same --db)")


def _only_patterns(text: str, rejected) -> None:
    """A word query answered by patterns alone: say that the word itself has no phrase
    paraphrase, and why when the ranker's filters rejected its candidates."""
    why = f" ({_rejected_by(rejected)})" if rejected.height else ""
    _say(f"no phrase paraphrases of {text!r} itself{why}; patterns that contain it:")


def _show(frame, text: str, wide: bool, features: bool, top: int) -> None:
    """The answers: the compact 80-column view (the best ``top`` targets per kind), or with
    ``--wide``/``--features`` every column (cppdb.lookup.view)."""
    # lazy: `cppdb --help` loads no stage code (numpy, numba)
    from cppdb.lookup.view import compact_tables, wide_table

    out = console()
    if wide or features:
        out.print(wide_table(frame, text, features))
        return
    for table in compact_tables(frame, text, top):
        out.print(table)


def _explain(database, text: str, target: str, type_: Optional[str], as_json: bool) -> None:
    # lazy: `cppdb --help` loads no stage code (numpy, numba)
    from cppdb.lookup.explain import explain_pairs
    from cppdb.lookup.view import explanation_renderables

    explained = explain_pairs(database, text, target, type_)
    if as_json:
        print_json([e.to_dict() for e in explained])
        return
    out = console()
    for index, explanation in enumerate(explained):
        if index:
            out.print()
        for part in explanation_renderables(explanation):
            out.print(part)


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""

    @app.command("lookup")
    def lookup_cmd(
        text: Annotated[str, typer.Argument(help="A phrase (出生于, 出生 于), a pattern "
                                            "([NP1] 出生于 [NP2]) or a sentence.")],
        db: Annotated[Path, typer.Option(
            "--db", help="Run directory (ranked or not), `--format hf` export directory or "
                         "an export file.")] = Path("."),
        type_: Annotated[Optional[str], typer.Option(
            "--type", help="phrase | pattern | sentence (default: phrases and sentences, "
                           "plus patterns containing the words).")] = None,
        top: Annotated[int, typer.Option(help="How many paraphrases per kind (patterns; "
                                              "phrases and sentences): targets in the "
                                              "default view, rows with --wide/--json.")] = 10,
        tier: Annotated[Optional[str], typer.Option(
            help="Only pairs in this size tier (S, M, L, XL; nested).")] = None,
        features: Annotated[bool, typer.Option(
            "--features", help="Show every feature, the pivots and the word links.")] = False,
        relation: RelationOpt = ALL,
        min_probability: Annotated[Optional[float], typer.Option(
            "--min-probability", metavar="P", min=0.0, max=1.0,
            help="Only pairs whose relation the classifier gave with probability >= P (0-1); "
                 "with --relation equivalence, 0.9 keeps surer synonyms (right 85 % of the "
                 "time in cross-validation).")] = None,
        wide: Annotated[bool, typer.Option(
            "--wide", help="Every column, one row per pair (default: one row per target, "
                           "80 columns).")] = False,
        explain: Annotated[Optional[str], typer.Option(
            "--explain", metavar="TARGET",
            help="Why TEXT -> TARGET has its score: the features that moved it most and "
                 "its English pivots with their probabilities.")] = None,
        rebuild: Annotated[bool, typer.Option(
            "--rebuild", help="Rebuild the index even if it is up to date.")] = False,
        quiet: QuietOpt = False, as_json: JsonOpt = False,
    ) -> None:
        """Paraphrases of TEXT, best first (an index is built once per database)."""
        # lazy: `cppdb --help` loads no stage code (numpy, numba)
        from cppdb.lookup.view import ROWS_PER_TARGET

        # before the index is built (minutes on a large run): a typo fails at once
        check_relation(relation)
        with open_database(db, rebuild=rebuild) as database:
            if database.built and not quiet and not as_json:
                typer.echo(f"built the lookup index {database.path} "
                           f"({database.built['rows']} pairs, "
                           f"{database.built['seconds']:.1f} s)", err=True)
            if explain is not None:
                _explain(database, text, explain, type_, as_json)
                return
            rows_only = as_json or wide or features
            # the compact view merges a target's rows (one per LHS label): it reads more
            found = database.lookup(text, top if rows_only else top * ROWS_PER_TARGET, type_,
                                    tier, features,
                                    extra=() if rows_only else ("entailment", S.RELATION),
                                    relation=relation, min_probability=min_probability)
            if found.height == 0 and not as_json:
                narrowed = tier is not None or relation != ALL or min_probability is not None
                if narrowed and database.lookup(text, 1, type_).height:
                    _say(f"no paraphrases of {text!r} with these filters; "
                         "it has some without them")
                else:
                    _no_answer(text, database.rejected(text), database.nearby(text))
                return
            only_patterns = (type_ is None and found.height
                             and found.filter(found[S.TYPE] != "pattern").height == 0)
            if only_patterns and not as_json:
                _only_patterns(text, database.rejected(text))
        if as_json:
            print_json(found.to_dicts())
        else:
            _show(found, text, wide, features, top)

    @app.command("report")
    def report_cmd(
        run: Annotated[Path, typer.Argument(help="Run directory (bilingual, monolingual or "
                                            "compression).")],
        out: Annotated[Optional[Path], typer.Option(
            "--out", "-o", help="HTML file to write (default RUN/report.html).")] = None,
        quiet: QuietOpt = False, as_json: JsonOpt = False,
    ) -> None:
        """One self-contained HTML page with the run's plots (opens offline)."""
        # lazy: `cppdb --help` loads no stage code (numpy, numba)
        from cppdb.report import write_report

        if out is not None:
            check_output_file(out)
        path = write_report(run, out)
        if as_json:
            print_json({"report": str(path)})
        else:
            typer.echo(f"wrote {path}")
