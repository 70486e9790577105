"""The `cppdb` command line: thin typer wrappers over plain functions in the API modules."""
from __future__ import annotations

import importlib
import os
import signal
import sys

import typer

from cppdb.commands.common import CliApp
from cppdb.errors import CppdbError, RunInterrupted
from cppdb.run import active_run_summary

app = CliApp(name="cppdb", no_args_is_help=True, add_completion=False,
                  help="Build, rank and export a Chinese paraphrase database.")

# Each module defines `register(app)`; the order is the order of `cppdb --help`.
COMMAND_MODULES = (
    "cppdb.commands.basic",        # doctor, config show, models fetch
    "cppdb.commands.annotate",     # annotate
    "cppdb.commands.align_words",  # align-words, align-words tune
    "cppdb.commands.bilingual",    # extract-bilingual
    "cppdb.commands.ocr",          # ocr
    "cppdb.commands.monolingual",  # align-sentences, extract-monolingual
    "cppdb.commands.ranking",      # rank, score, export, evaluate
    "cppdb.commands.compression",  # build-compression
    "cppdb.commands.compressor",   # train-compressor, compress
    "cppdb.commands.lookup",       # lookup, report
)

for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def _interrupted(signum: int, _frame: object) -> None:
    """Ctrl-C / SIGTERM: one coded line (what finished, how to resume), not tracebacks."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)      # a second Ctrl-C stops at once
    raise RunInterrupted(f"interrupted by {signal.Signals(signum).name}"
                         f"{active_run_summary()}; re-run the same command to resume "
                         "(finished stages are reused)")


def main() -> None:
    signal.signal(signal.SIGINT, _interrupted)
    signal.signal(signal.SIGTERM, _interrupted)
    try:
        app()
    except RunInterrupted as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        # at once: a normal exit joins the worker threads, and one in native code (thot
        # training a chunk) would keep a SIGTERMed process alive for minutes; what finished
        # is on disk (atomic writes), and worker processes die with this one
        os._exit(130)
    except CppdbError as exc:  # errors raised outside a command body
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from exc


if __name__ == "__main__":
    main()
