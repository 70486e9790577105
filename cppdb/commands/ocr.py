"""`cppdb ocr`: page screenshots and subtitle images → JSONL (one record per image)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb import api
from cppdb.commands.common import ConfigOpt, JsonOpt, QuietOpt, SetOpt, make_config, print_json
from cppdb.progress import console


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""

    @app.command("ocr")
    def ocr_command(
        inputs: Annotated[list[Path], typer.Argument(
            help="Images (.png/.jpg/...), folders of them (searched recursively) or .zip "
                 "archives of them.")],
        output: Annotated[Path, typer.Option("--output", "-o",
                                             help="JSONL file to write (one record per image).")],
        kind: Annotated[Optional[str], typer.Option(
            help="auto | page | subtitle (default: ocr.kind, auto = subtitle if transparent "
                 "or wider than 4:1).")] = None,
        engine: Annotated[Optional[str], typer.Option(
            help="OCR engine: rapidocr (offline default) | paddle (needs local models).")] = None,
        workers: Annotated[Optional[int], typer.Option(
            help="Worker processes over images (default: ocr.workers; 0 = all cores, at most "
                 "ocr.max_workers; 1 = in this process).")] = None,
        config: ConfigOpt = None,
        set_: SetOpt = None,
        quiet: QuietOpt = False,
        json_: JsonOpt = False,
    ) -> None:
        """OCR images into text: reading order, header/footer removal, subtitle compositing.

        Each record has path, kind, text, lines (text, box, confidence), removed lines
        (headers, footers, page numbers, low confidence) and error (null, or why the image
        could not be read: the other images are still processed).
        """
        cfg = make_config(config, set_, quiet, outputs=(output,))
        summary = api.run_ocr(inputs, output, cfg, kind=kind, engine=engine, workers=workers)
        if json_:
            print_json(summary.to_json())
            return
        from rich.markup import escape

        out = console()
        out.print(f"{summary.images} images → {escape(str(output))}: "
                  f"{summary.with_text} with text, "
                  f"{summary.empty} empty, {len(summary.errors)} errors; "
                  f"{summary.seconds / max(summary.images, 1):.2f} s per image")
        for where, reason in summary.errors[:20]:
            out.print(f"  [yellow]skipped[/yellow] {escape(where)}: {escape(reason)}",
                      highlight=False)
