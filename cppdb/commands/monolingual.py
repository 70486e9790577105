"""`cppdb align-sentences` and `cppdb extract-monolingual` (thin wrappers over the API)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb.commands.common import (ConfigOpt, DryRunOpt, EngineOpt, FreshOpt, JsonOpt, QuietOpt,
                                   SetOpt, SparkMasterOpt, make_config, print_json, print_plan)


def _print_scores(report: dict) -> None:
    for name in ("all", "one_to_one"):
        scores = report.get(f"scores_{name}")
        if scores:
            typer.echo(f"{'all beads' if name == 'all' else '1-1 beads'}: strict P/R/F1 "
                       f"{scores['precision_strict']:.4f} {scores['recall_strict']:.4f} "
                       f"{scores['f1_strict']:.4f} | lax P/R/F1 {scores['precision_lax']:.4f} "
                       f"{scores['recall_lax']:.4f} {scores['f1_lax']:.4f}")


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""

    @app.command("align-sentences")
    def align_sentences_cmd(
        src: Annotated[Path, typer.Argument(
            help="Source version: text, EPUB or subtitle file, or a folder/zip of images.")],
        tgt: Annotated[Path, typer.Argument(
            help="Target version: text, EPUB or subtitle file, or a folder/zip of images.")],
        out: Annotated[Path, typer.Option("--out", "-o", help="Output beads file "
                                          r"(Vecalign format \[i, j]:\[k]:cost, 0-based).")],
        units: Annotated[Optional[str], typer.Option(
            help="lines: each non-empty line/cue is a unit; sentences: segment first.")] = None,
        method: Annotated[Optional[str], typer.Option(
            help="bam | vecalign | bam+vecalign (default from config: bam+vecalign).")] = None,
        gold: Annotated[Optional[Path], typer.Option(
            help="Gold beads: print strict and lax P/R/F1 (all beads and 1-1 beads).")] = None,
        cache_dir: Annotated[Optional[Path], typer.Option(
            help="Keep sentence vectors here (reused by later runs).")] = None,
        config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
        json_: JsonOpt = False,
    ) -> None:
        """Align the sentences of two versions of one text (BAM anchors + Vecalign)."""
        # lazy: `cppdb --help` loads no stage code (numpy, numba)
        from cppdb.align.sentences.files import align_files
        cfg = make_config(config, set_, quiet, outputs=(out,))
        report = align_files(src, tgt, out, cfg, units=units, method=method, gold=gold,
                             cache_dir=cache_dir)
        if json_:
            print_json(report)
            return
        typer.echo(f"{report['beads']} beads ({report['anchors']} BAM anchors) -> {out}")
        for note in report["notes"]:
            typer.echo(f"note: {note}", err=True)
        _print_scores(report)

    @app.command("extract-monolingual")
    def extract_monolingual_cmd(
        version_dirs: Annotated[list[Path], typer.Argument(
            help="Two or more directories, one per version (translation / subtitle track).")],
        out: Annotated[Path, typer.Option("--out", "-o", help="Run directory.")],
        pairs: Annotated[Optional[Path], typer.Option(
            "--pairs", help="TSV of file names per version, one chapter per line "
                            "(replaces automatic document pairing).")] = None,
        config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
        json_: JsonOpt = False, fresh: FreshOpt = False, dry_run: DryRunOpt = False,
        engine: EngineOpt = "local", spark_master: SparkMasterOpt = None,
    ) -> None:
        """Pair chapters, align sentences, and write 1-1 paraphrase sentence pairs."""
        # lazy: `cppdb --help` loads no stage code (numpy, numba)
        from cppdb.extractors.monolingual import extract_monolingual, plan_monolingual

        cfg = make_config(config, set_, quiet)
        if dry_run:
            print_plan(plan_monolingual(version_dirs, out, cfg, pairs_file=pairs, engine=engine,
                                        spark_master=spark_master), json_)
            return
        summary = extract_monolingual(version_dirs, out, cfg, pairs_file=pairs, fresh=fresh,
                                      engine=engine, spark_master=spark_master)
        row = {"run_dir": str(summary.run_dir), "documents": summary.documents,
               "groups": summary.groups, "unpaired": summary.unpaired, "beads": summary.beads,
               "sentence_pairs": summary.sentence_pairs}
        if json_:
            print_json(row)
        else:
            typer.echo(f"{summary.groups} document groups ({summary.unpaired} unpaired files), "
                       f"{summary.beads} beads, {summary.sentence_pairs} sentence pairs "
                       f"-> {summary.run_dir}")
