"""`cppdb align-words` (align + score against gold) and `cppdb align-words tune`."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb.commands.common import (CliApp, ConfigOpt, JsonOpt, QuietOpt, SetOpt, make_config,
                                   print_json)
from cppdb.errors import BadInputError
from cppdb.progress import console

ParallelOpt = Annotated[Optional[Path], typer.Option(
    "--parallel", help="Pre-tokenised pairs, one 'zh tokens ||| en tokens' per line "
                       "(a Tatoeba TSV en<TAB>zh is tokenised with the configured backends).")]
ZhOpt = Annotated[Optional[Path], typer.Option(
    "--zh", help="Raw Chinese sentences, one per line (tokenised with the annotate backends).")]
EnOpt = Annotated[Optional[Path], typer.Option(
    "--en", help="Raw English sentences, line-aligned with --zh.")]
TrainOpt = Annotated[Optional[Path], typer.Option(
    "--train", help="Extra parallel text (same formats as --parallel) used only to train the "
                    "statistical aligners.")]
GoldOneBasedOpt = Annotated[bool, typer.Option(
    "--gold-one-based", help="Gold link indices start at 1 (default: 0).")]


def _print_summary(summary: dict, as_json: bool) -> None:
    if as_json:
        print_json(summary)
        return
    out = console()
    out.print(f"aligned {summary.get('aligned', '')} of {summary.get('pairs', '')} pairs with "
              f"{', '.join(summary['aligners_used'])}")
    for name, reason in summary.get("aligners_skipped", {}).items():
        out.print(f"[yellow]skipped {name}:[/yellow] {reason}")
    if summary.get("rejected"):
        out.print(f"[yellow]{summary['rejected']} pair(s) rejected[/yellow] -> "
                  f"{summary.get('rejected_file', '(use -o to write them)')}")
    gold = summary.get("gold") or summary.get("dev")
    if gold:
        typer.echo(f"precision {gold['precision']:.4f}  recall {gold['recall']:.4f}  "
                   f"AER {gold['aer']:.4f}")
    for name, score in summary.get("single_aligner_dev", {}).items():
        typer.echo(f"  {name:<12} alone: AER {score['aer']:.4f} (P {score['precision']:.4f} "
                   f"R {score['recall']:.4f})")
    if "how_to_use" in summary:
        typer.echo(f"saved to {summary['output']}; use it with {summary['how_to_use']}")


def register(app: typer.Typer) -> None:
    """Add `align-words` (with its `tune` subcommand) to ``app``."""
    words = CliApp(
        name="align-words", add_completion=False, invoke_without_command=True,
        help="Word-align zh-en pairs with the aligner ensemble (Pharaoh i-j output, zh "
             "first, 0-based); score against gold; `tune` fits the ensemble on gold.")

    @words.callback()
    def align_words(
        ctx: typer.Context,
        parallel: ParallelOpt = None, zh: ZhOpt = None, en: EnOpt = None,
        train: TrainOpt = None,
        out: Annotated[Optional[Path], typer.Option(
            "-o", "--out", help="Write Pharaoh links here, one line per input pair (problem "
                                "pairs: empty line, listed in OUT.rejected.jsonl).")] = None,
        gold: Annotated[Optional[Path], typer.Option(
            "--gold", help="Gold alignment (i-j sure; ipj, i?j, i-j-P possible): print "
                           "precision, recall and AER.")] = None,
        gold_one_based: GoldOneBasedOpt = False,
        config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        if ctx.invoked_subcommand is not None:
            return
        # lazy: `cppdb --help` loads no stage code (numpy, numba)
        from cppdb.align.words.workflow import align_files

        cfg = make_config(config, set_, quiet, outputs=(out,))
        if out is None and gold is None:
            raise BadInputError("nothing to do: give -o FILE and/or --gold FILE")
        summary = align_files(cfg, out=out, parallel=parallel, zh=zh, en=en, train=train,
                              gold=gold, gold_one_based=gold_one_based)
        _print_summary(summary, as_json)

    @words.command("tune")
    def align_words_tune(
        gold: Annotated[Path, typer.Option("--gold", help="Gold alignment of the dev pairs.")],
        parallel: ParallelOpt = None, zh: ZhOpt = None, en: EnOpt = None,
        train: TrainOpt = None,
        out: Annotated[Path, typer.Option(
            "-o", "--out", help="JSON file for the tuned weights/threshold (read by "
                                "align_words.tuned_file).")] = Path("align_words.tuned.json"),
        gold_one_based: GoldOneBasedOpt = False,
        weight_step: Annotated[float, typer.Option(
            "--weight-step", help="Grid step of the ensemble weights (refined by half).")] = 0.1,
        config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Fit ensemble weights, decoding and threshold on dev gold (minimum AER)."""
        # lazy: `cppdb --help` loads no stage code (numpy, numba)
        from cppdb.align.words.workflow import tune_files

        cfg = make_config(config, set_, quiet, outputs=(out,))
        summary = tune_files(cfg, out=out, gold=gold, parallel=parallel, zh=zh, en=en,
                             train=train, gold_one_based=gold_one_based,
                             weight_step=weight_step)
        _print_summary(summary, as_json)

    app.add_typer(words, name="align-words")
