"""Options shared by every command, and the helper that turns them into a Config."""
from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from collections.abc import Callable
from typing import Annotated, Any, Optional

import typer

from cppdb.config import Config, load_config
from cppdb.errors import CppdbError
from cppdb.io import check_output_file
from cppdb.progress import set_quiet

ConfigOpt = Annotated[Optional[Path], typer.Option(
    "--config", "-c", help="TOML config file (see `cppdb config show`).")]
SetOpt = Annotated[Optional[list[str]], typer.Option(
    "--set", help="Override a setting: --set section.key=value (repeatable).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars or chatter.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
FreshOpt = Annotated[bool, typer.Option(
    "--fresh", help="Discard finished stages of an existing run directory and start over.")]
EngineOpt = Annotated[str, typer.Option(
    "--engine", help="local (polars + process pool) or spark (the [spark] extra).")]
SparkMasterOpt = Annotated[Optional[str], typer.Option(
    "--spark-master", help="With --engine spark: local[N], spark://host:port, yarn or k8s://...")]
DryRunOpt = Annotated[bool, typer.Option(
    "--dry-run", help="Check the inputs and print the stage plan (what runs, resumes or is "
                      "skipped; what each stage reads and writes); run nothing.")]


def make_config(config: Path | None, overrides: list[str] | None, quiet: bool = False,
                outputs: tuple[Path | None, ...] = ()) -> Config:
    """The effective Config, after checking every output file can be written: both fail
    here, before any work starts (an unwritable -o must not lose an hour of alignment)."""
    set_quiet(quiet)
    cfg = load_config(config, overrides)
    for path in outputs:
        if path is not None:
            check_output_file(path)
    return cfg


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n")


def fail(exc: CppdbError) -> None:
    """Print a cppdb error without a traceback and exit with status 2."""
    # errors are printed even under --quiet (quiet silences progress, not failures)
    from rich.console import Console
    from rich.markup import escape

    # soft_wrap: never break a message (or a path in it) at the terminal width
    Console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {escape(str(exc))}",
                                               markup=True, highlight=False)
    raise typer.Exit(2)


def handles_errors(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with every cppdb error turned into one printed line and exit status 2 —
    the one place a command's errors meet the terminal."""
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except CppdbError as exc:
            fail(exc)
    return wrapper


class CliApp(typer.Typer):
    """A Typer app whose commands and callbacks all go through :func:`handles_errors`."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Any]:
        register = super().command(*args, **kwargs)
        return lambda function: register(handles_errors(function))

    def callback(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Any]:
        register = super().callback(*args, **kwargs)
        return lambda function: register(handles_errors(function))


def print_plan(plan: Any, as_json: bool) -> None:
    """A ``cppdb.stages.Plan`` on stdout (``--dry-run``)."""
    if as_json:
        print_json(plan.to_json())
    else:
        sys.stdout.write(plan.render() + "\n")
