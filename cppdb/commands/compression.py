"""`cppdb build-compression`: a (sentence, compression) corpus from headline + sentence pairs."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb.commands.common import (ConfigOpt, DryRunOpt, FreshOpt, JsonOpt, QuietOpt, SetOpt,
                                   make_config, print_json, print_plan)
from cppdb.errors import ConfigError


def _split_methods(text: str | None) -> list[str] | None:
    if text is None:
        return None
    methods = [m.strip() for m in text.split(",") if m.strip()]
    if not methods:
        raise ConfigError("--methods is empty", hint="e.g. --methods word,abbrev,paraphrase")
    return methods


def build_compression_command(
    input_path: Annotated[Path, typer.Argument(
        metavar="INPUT", help="JSONL (headline + sentence, or text) or TSV with a header "
                              "line headline<TAB>sentence.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output (run) directory.")],
    paraphrases: Annotated[Optional[Path], typer.Option(
        "--paraphrases", "-p", help="Paraphrase table: a run directory (ranking/ranked_pairs.parquet or "
                                    "phrase/pattern_pairs.parquet) or a .parquet/.tsv table "
                                    "(source, target[, score]).")] = None,
    methods: Annotated[Optional[str], typer.Option(
        "--methods", help="Alignment methods in cascade order, comma-separated: "
                          "word,abbrev,paraphrase,bert (default: compression.methods).")] = None,
    no_dtt: Annotated[bool, typer.Option(
        "--no-dtt", help="Skip the dependency tree transformation (particles, auxiliaries, "
                         "numerals, negation).")] = False,
    parser: Annotated[Optional[str], typer.Option(
        "--parser", help="UD parser backend: udchinese (offline, weak) or stanza "
                         "(local models).")] = None,
    bert_dir: Annotated[Optional[Path], typer.Option(
        "--bert-dir", help="Local Chinese BERT directory for --methods ...,bert.")] = None,
    config: ConfigOpt = None, overrides: SetOpt = None, quiet: QuietOpt = False,
    json_out: JsonOpt = False, fresh: FreshOpt = False, dry_run: DryRunOpt = False,
) -> None:
    """Build a Chinese sentence-compression corpus (SPEC §4) with paraphrase-aware alignment."""
    # lazy: `cppdb --help` loads no stage code (numpy, numba)
    from cppdb.extractors.compression.builder import build_compression, plan_compression
    from cppdb.extractors.compression.report import print_report

    cfg = make_config(config, overrides, quiet)
    if dry_run:
        print_plan(plan_compression(
            input_path, out, cfg, paraphrases=paraphrases, methods=_split_methods(methods),
            dtt=False if no_dtt else None, parser=parser, bert_dir=bert_dir), json_out)
        return
    result = build_compression(
        input_path, out, cfg, paraphrases=paraphrases, methods=_split_methods(methods),
        dtt=False if no_dtt else None, parser=parser, bert_dir=bert_dir, fresh=fresh)
    if json_out:
        print_json({"compressions": str(result.compressions), "rejected": str(result.rejected),
                    "report": result.report})
    elif not quiet:
        print_report(result.report)


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.command("build-compression")(build_compression_command)
