"""doctor, config show, models fetch."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cppdb.commands.common import CliApp, ConfigOpt, JsonOpt, SetOpt, make_config, print_json
from cppdb.doctor import doctor_rows, missing_defaults
from cppdb.models import MODELS, fetch_model


def doctor(config: ConfigOpt = None, overrides: SetOpt = None, as_json: JsonOpt = False) -> None:
    """Show every capability, its backends, whether each is usable here, and how to enable it."""
    cfg = make_config(config, overrides)
    rows = doctor_rows(cfg)
    if as_json:
        print_json(rows)
    else:
        table = Table(title="cppdb doctor", show_lines=False)
        for column in ("capability", "backend", "alias", "default", "usable", "version",
                       "compute", "how to enable"):
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(row["capability"], row["backend"], row["alias"],
                          "yes" if row["default"] else "",
                          "[green]yes[/green]" if row["usable"] else "[red]no[/red]",
                          escape(row["version"]), escape(row.get("compute", "")),
                          escape(row["how_to_enable"]))
        Console(width=None if sys.stdout.isatty() else 180).print(table)
    if missing_defaults(rows):
        raise typer.Exit(1)


def config_show(config: ConfigOpt = None, overrides: SetOpt = None,
                as_json: JsonOpt = False) -> None:
    """Print the effective configuration (defaults + file + --set overrides)."""
    cfg = make_config(config, overrides)
    if as_json:
        print_json(cfg.data)
    else:
        typer.echo(cfg.to_toml())


def models_fetch(
    name: Annotated[str, typer.Argument(help="Model name, e.g. stanza-zh, opus-mt-zh-en.")],
    target: Annotated[Optional[Path], typer.Option("--target", help="Directory to put it in.")] = None,
) -> None:
    """Download a full model with its library's own call (needs internet)."""
    path = fetch_model(name, target)
    typer.echo(f"downloaded {name} to {path}")


def models_list(as_json: JsonOpt = False) -> None:
    """List the full models cppdb knows how to fetch and which setting points at them."""
    rows = [{"name": m.name, "source": m.ident, "used_for": m.used_for,
             "setting": m.config_key} for m in MODELS.values()]
    if as_json:
        print_json(rows)
        return
    table = Table(title="full models")
    for column in ("name", "source", "used_for", "setting"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row.values())
    Console().print(table)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
    config_app = CliApp(help="Inspect the configuration.", no_args_is_help=True)
    config_app.command("show")(config_show)
    app.add_typer(config_app, name="config")
    models_app = CliApp(help="Full models (Stanza, Hugging Face) for users with internet.",
                             no_args_is_help=True)
    models_app.command("fetch")(models_fetch)
    models_app.command("list")(models_list)
    app.add_typer(models_app, name="models")
