"""`cppdb lookup` (paraphrases of a phrase or pattern) and `cppdb report` (HTML run report)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb.commands.common import JsonOpt, QuietOpt, print_json

from cppdb.io import check_output_file


def _show(frame, text: str, features: bool) -> None:
    from rich.table import Table

    from cppdb.progress import console

    if frame.height == 0:
        typer.echo(f"no paraphrases of {text!r} in this database")
        return
    table = Table(title=f"paraphrases of {text}", title_justify="left")
    names = [c for c in frame.columns if features or c not in ("count", "origin")]
    for name in names:
        table.add_column(name, overflow="fold")
    for row in frame.select(names).iter_rows():
        table.add_row(*[_cell(v) for v in row])
    console().print(table)


def _cell(value: object) -> str:
    """One value as the table shows it (a document of ``schema.DOCUMENTS`` by its label)."""
    from cppdb import schema
    from cppdb.align.sentences.types import DocumentKey

    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list):
        return ", ".join(DocumentKey(*(v[k] for k in schema.DOC_KEY)).label
                         if isinstance(v, dict) else str(v) for v in value)
    return str(value)


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
        top: Annotated[int, typer.Option(help="How many paraphrases (per kind).")] = 10,
        tier: Annotated[Optional[str], typer.Option(
            help="Only pairs in this size tier (S, M, L, XL; nested).")] = None,
        features: Annotated[bool, typer.Option(
            "--features", help="Show every feature, the pivots and the word links.")] = False,
        rebuild: Annotated[bool, typer.Option(
            "--rebuild", help="Rebuild the index even if it is up to date.")] = False,
        quiet: QuietOpt = False, as_json: JsonOpt = False,
    ) -> None:
        """Paraphrases of TEXT, best first (an index is built once per database)."""
        from cppdb.lookup import open_database

        with open_database(db, rebuild=rebuild) as database:
            if database.built and not quiet and not as_json:
                typer.echo(f"built the lookup index {database.path} "
                           f"({database.built['rows']} pairs, "
                           f"{database.built['seconds']:.1f} s)", err=True)
            found = database.lookup(text, top, type_, tier, features)
        if as_json:
            print_json(found.to_dicts())
        else:
            _show(found, text, features)

    @app.command("report")
    def report_cmd(
        run: Annotated[Path, typer.Argument(help="Run directory (bilingual, monolingual or "
                                            "compression).")],
        out: Annotated[Optional[Path], typer.Option(
            "--out", "-o", help="HTML file to write (default RUN/report.html).")] = None,
        quiet: QuietOpt = False, as_json: JsonOpt = False,
    ) -> None:
        """One self-contained HTML page with the run's plots (opens offline)."""
        from cppdb.report import write_report

        if out is not None:
            check_output_file(out)
        path = write_report(run, out)
        if as_json:
            print_json({"report": str(path)})
        else:
            typer.echo(f"wrote {path}")
