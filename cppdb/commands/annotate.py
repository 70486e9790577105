"""`cppdb annotate`: tokens, CTB/Penn POS and phrase spans of zh-en parallel text."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from cppdb.commands.common import (ConfigOpt, FreshOpt, JsonOpt, QuietOpt, SetOpt, fail,
                                   make_config, print_json)
from cppdb.config import Config
from cppdb.errors import BadInputError, CppdbError
from cppdb.progress import console


def read_input(config: Config, zh: Path | None, en: Path | None, parallel: Path | None,
               tatoeba: Path | None, limit: int | None) -> tuple[Any, list[Path]]:
    """The ParallelText named by exactly one input form, and the files it came from."""
    from cppdb.readers.parallel import read_parallel, read_pretokenized, read_tatoeba_tsv

    max_chars = int(config.section("annotate")["max_chars"])
    forms = [f for f, given in (("--zh/--en", zh or en), ("--parallel", parallel),
                                ("--tatoeba", tatoeba)) if given]
    if len(forms) != 1:
        raise BadInputError(
            "give exactly one input: --zh FILE --en FILE, --parallel FILE or --tatoeba FILE"
            + (f" (got {', '.join(forms)})" if forms else ""),
            hint="e.g. cppdb annotate --zh data/parallel/sample.zh "
                 "--en data/parallel/sample.en -o runs/sample")
    if zh or en:
        if not (zh and en):
            raise BadInputError("--zh and --en must be given together",
                                hint="pass both line-aligned files")
        text, files = read_parallel(zh, en, max_chars=max_chars), [zh, en]
    elif parallel:
        text, files = read_pretokenized(parallel, max_chars=max_chars), [parallel]
    elif tatoeba:
        text, files = read_tatoeba_tsv(tatoeba, limit=limit, max_chars=max_chars), [tatoeba]
    return (text.head(limit) if limit is not None else text), files


def run_annotate(config: Config, out: Path, *, zh: Path | None = None, en: Path | None = None,
                 parallel: Path | None = None, tatoeba: Path | None = None,
                 limit: int | None = None, fresh: bool = False) -> dict[str, Any]:
    """Plain-function form of the command; returns the summary it prints."""
    from cppdb.annotate.pipeline import REJECTED, annotate_stage
    from cppdb.run import RunDir

    text, files = read_input(config, zh, en, parallel, tatoeba, limit)
    run = RunDir(out, config, command="annotate", inputs=files, fresh=fresh)
    path = annotate_stage(run, text, config)
    run.finish()
    info = run.stage_info("annotate")
    return {"annotations": str(path), "rejected": str(run.path(REJECTED)),
            "pairs": len(text), "rejected_lines": len(text.problems),
            "pretokenized": text.pretokenized, "seconds": info.get("seconds"),
            "backends": {k: v.get("signature") for k, v in run.manifest["backends"].items()},
            "run_dir": str(out)}


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
        try:
            cfg = make_config(config, set_, quiet)
            summary = run_annotate(cfg, out, zh=zh, en=en, parallel=parallel,
                                   tatoeba=tatoeba, limit=limit, fresh=fresh)
        except CppdbError as exc:
            fail(exc)
            return
        if json_:
            print_json(summary)
            return
        con = console()
        con.print(f"annotated {summary['pairs']} sentence pairs "
                  f"({summary['rejected_lines']} rejected lines -> {summary['rejected']})",
                  markup=False, highlight=False)
        con.print(f"wrote {summary['annotations']}", markup=False, highlight=False)
