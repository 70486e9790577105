"""`cppdb extract-bilingual`: pivot paraphrase extraction from a zh–en parallel corpus."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb.commands.common import (ConfigOpt, DryRunOpt, EngineOpt, FreshOpt, JsonOpt, QuietOpt,
                                   SetOpt, SparkMasterOpt, make_config, print_json, print_plan)
from cppdb.progress import console


def extract_bilingual_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (created/resumed).")],
    zh: Annotated[Optional[Path], typer.Option(
        "--zh", help="Chinese side, one raw sentence per line.")] = None,
    en: Annotated[Optional[Path], typer.Option(
        "--en", help="English side, line-aligned with --zh.")] = None,
    parallel: Annotated[Optional[Path], typer.Option(
        "--parallel", help="Pre-tokenised 'zh tokens ||| en tokens' file (instead of --zh/--en).")
    ] = None,
    alignment: Annotated[Optional[Path], typer.Option(
        "--alignment", help="Pharaoh word alignment (0-based zh-en, one line per input line); "
                            "skips the word aligner.")] = None,
    consistency: Annotated[Optional[str], typer.Option(
        "--consistency", help="Phrase alignment rule: strict (PPDB) or relaxed (POS-limited).")
    ] = None,
    tolerance: Annotated[Optional[int], typer.Option(
        "--tolerance", help="Relaxed rule: stray links of constrained words allowed per "
                            "phrase pair (anchored ones only; the paper's example needs 1).")
    ] = None,
    max_phrase_len: Annotated[Optional[int], typer.Option(
        "--max-phrase-len", help="Maximum words per phrase on each side.")] = None,
    config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
    json_out: JsonOpt = False, fresh: FreshOpt = False, dry_run: DryRunOpt = False,
    engine: EngineOpt = "local", spark_master: SparkMasterOpt = None,
) -> None:
    """Annotate, word-align, extract aligned phrases and patterns, and pivot through English."""
    # lazy: `cppdb --help` loads no stage code (numpy, numba)
    from cppdb.extractors.bilingual import extract_bilingual, plan_bilingual

    overrides = list(set_ or [])
    for key, value in (("consistency", consistency), ("tolerance", tolerance),
                       ("max_phrase_len", max_phrase_len)):
        if value is not None:
            overrides.append(f"bilingual.{key}={value!r}" if isinstance(value, str)
                             else f"bilingual.{key}={value}")
    cfg = make_config(config, overrides, quiet)
    if dry_run:
        print_plan(plan_bilingual(zh, en, out, cfg, parallel_path=parallel,
                                  alignment_path=alignment, engine=engine,
                                  spark_master=spark_master), json_out)
        return
    result = extract_bilingual(zh, en, out, cfg, parallel_path=parallel,
                               alignment_path=alignment, fresh=fresh, engine=engine,
                               spark_master=spark_master)
    if json_out:
        print_json(result.to_json())
        return
    _print_summary(result, quiet)


def _print_summary(result: object, quiet: bool) -> None:
    if quiet:
        return
    out = console()
    info = result.to_json()  # type: ignore[attr-defined]
    out.print(f"run directory: {info['run_dir']}")
    for key, value in info["counts"].items():
        out.print(f"  {key}: {value}")
    for mode, value in info["aligned_phrase_pairs_per_mode"].items():
        out.print(f"  aligned phrase pairs ({mode}): {value}")
    out.print(f"phrase pairs: {info['phrase_pairs']}\npattern pairs: {info['pattern_pairs']}")


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.command("extract-bilingual")(extract_bilingual_command)
