"""`cppdb annotate`: tokens, CTB/Penn POS and phrase spans of zh-en parallel text."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb.annotate.run import run_annotate
from cppdb.commands.common import (ConfigOpt, FreshOpt, JsonOpt, QuietOpt, SetOpt, make_config,
                                   print_json)

from cppdb.progress import console


def register(app: typer.Typer) -> None:
    """Add `cppdb annotate` to ``app``."""

    @app.command("annotate")
    def annotate_command(
        out: Annotated[Path, typer.Option("--out", "-o", help="Run directory to write.")],
        zh: Annotated[Optional[Path], typer.Option(
            "--zh", help="Chinese file, one sentence per line (with --en).")] = None,
        en: Annotated[Optional[Path], typer.Option(
            "--en", help="English file, line-aligned with --zh.")] = None,
        parallel: Annotated[Optional[Path], typer.Option(
            "--parallel", help="Pre-tokenised 'zh tokens ||| en tokens' file.")] = None,
        tatoeba: Annotated[Optional[Path], typer.Option(
            "--tatoeba", help="Tatoeba cmn.txt (en<TAB>zh<TAB>attribution).")] = None,
        limit: Annotated[Optional[int], typer.Option(
            "--limit", min=1, help="Annotate only the first N usable pairs.")] = None,
        config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
        json_: JsonOpt = False, fresh: FreshOpt = False,
    ) -> None:
        """Segment, POS-tag (CTB / Penn) and add phrase spans to zh-en parallel text."""
        cfg = make_config(config, set_, quiet)
        summary = run_annotate(cfg, out, zh=zh, en=en, parallel=parallel,
                               tatoeba=tatoeba, limit=limit, fresh=fresh)
        if json_:
            print_json(summary)
            return
        con = console()
        con.print(f"annotated {summary['pairs']} sentence pairs "
                  f"({summary['rejected_lines']} rejected lines -> {summary['rejected']})",
                  markup=False, highlight=False)
        con.print(f"wrote {summary['annotations']}", markup=False, highlight=False)
