"""`cppdb ocr`: page screenshots and subtitle images → JSONL (one record per image)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb.commands.common import ConfigOpt, JsonOpt, QuietOpt, SetOpt, make_config, print_json
from cppdb.errors import BadInputError
from cppdb.progress import console, progress_bar


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
            help="Worker processes over images (0 = min(cores, 4)).")] = None,
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
        from cppdb.ocr.batch import OcrSettings, collect_images, ocr_to_jsonl

        overrides = list(set_ or [])
        for key, value in (("kind", kind), ("engine", engine), ("workers", workers)):
            if value is not None:
                overrides.append(f"ocr.{key}={value!r}" if isinstance(value, str)
                                 else f"ocr.{key}={value}")
        cfg = make_config(config, overrides, quiet, outputs=(output,))
        settings = OcrSettings.from_section(cfg.section("ocr"))
        total = len(collect_images(inputs)[0])
        with progress_bar(total, "OCR") as advance:
            summary = ocr_to_jsonl(inputs, output, settings, progress=advance)
        if summary.with_text == 0 and summary.errors:
            raise BadInputError(
                f"no image could be read ({len(summary.errors)} errors, first: "
                f"{summary.errors[0][0]}: {summary.errors[0][1]}); records in {output}",
                hint="check the files; every record in the output says what went wrong")
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
