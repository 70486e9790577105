"""`cppdb train-compressor` and `cppdb compress`: a keep/drop tagger over a built corpus."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb.commands.common import (ConfigOpt, JsonOpt, QuietOpt, SetOpt, make_config,
                                   print_json)
from cppdb.progress import console

DeviceOpt = Annotated[Optional[str], typer.Option(
    "--device", help="auto (a GPU when torch sees one), cpu, cuda or cuda:N "
                     "(default: compressor.device).")]


def train_compressor_command(
    corpus: Annotated[Path, typer.Option(
        "--corpus", help="A `cppdb build-compression` run directory (its kept rows).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Model directory to write.")],
    device: DeviceOpt = None, config: ConfigOpt = None, overrides: SetOpt = None,
    quiet: QuietOpt = False, json_out: JsonOpt = False,
) -> None:
    """Train a keep/drop compressor on a built compression corpus (settings: [compressor])."""
    # lazy: `cppdb --help` loads no stage code (numpy, numba)
    from cppdb.compressor.api import train_compressor

    cfg = make_config(config, overrides, quiet)
    info = train_compressor(corpus, out, cfg, device=device)
    summary = {"model": str(out), "device": info["device"], "corpus": info["corpus"],
               "log": info["log"], "seconds": info["seconds"]}
    if json_out:
        print_json(summary)
    elif not quiet:
        best = max((row.get("held_out_f1", 0.0) for row in info["log"]), default=0.0)
        console().print(f"trained on {info['corpus']['train']} sentences "
                        f"({info['corpus']['held_out']} held out, best held-out token F1 "
                        f"{best:.3f}) on {info['device']} in {info['seconds']} s -> {out}",
                        markup=False, highlight=False)


def compress_command(
    model: Annotated[Path, typer.Option("--model", "-m", help="Model directory.")],
    input_path: Annotated[Path, typer.Option(
        "--in", help="Sentences: text (one a line) or .jsonl with 'tokens' or 'sentence'.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output JSONL.")],
    threshold: Annotated[Optional[float], typer.Option(
        "--threshold", min=0.0, max=1.0,
        help="Keep a token when P(keep) >= this (default: the model's).")] = None,
    device: DeviceOpt = None, quiet: QuietOpt = False, json_out: JsonOpt = False,
) -> None:
    """Compress sentences with a trained compressor (deletion only: kept tokens in order)."""
    # lazy: `cppdb --help` loads no stage code (numpy, numba)
    from cppdb.compressor.files import compress_file

    make_config(None, None, quiet, outputs=(out,))
    summary = compress_file(model, input_path, out, threshold=threshold,
                            device=device or "auto")
    if json_out:
        print_json(summary)
    elif not quiet:
        console().print(f"compressed {summary['sentences']} sentences "
                        f"({summary['blank_lines']} blank lines skipped) -> {out}",
                        markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.command("train-compressor")(train_compressor_command)
    app.command("compress")(compress_command)
