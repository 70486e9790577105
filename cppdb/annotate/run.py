"""``cppdb annotate`` as a plain function (what the CLI command and ``cppdb.api`` call)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from cppdb.annotate.pipeline import REJECTED, annotate_stage
from cppdb.annotate.settings import AnnotateSettings
from cppdb.config import Config, resolve, sections_read
from cppdb.readers.parallel import open_parallel_input
from cppdb.run import RunDir


def run_annotate(config: Config, out: Path, *, zh: Path | None = None, en: Path | None = None,
                 parallel: Path | None = None, tatoeba: Path | None = None,
                 limit: int | None = None, fresh: bool = False) -> dict[str, Any]:
    """Plain-function form of the command; returns the summary it prints."""
    settings = resolve(AnnotateSettings, config)
    source = open_parallel_input(zh, en, parallel, tatoeba, limit=limit,
                                 max_chars=settings.max_chars)
    run = RunDir(out, config, command="annotate", inputs=list(source.files), fresh=fresh,
                 scope=sections_read(AnnotateSettings))
    path = annotate_stage(run, source, settings)   # streamed: the driver holds one batch
    run.finish()
    info = run.stage_info("annotate")
    pairs = pl.scan_parquet(path).select(pl.len()).collect().item()
    return {"annotations": str(path), "rejected": str(run.path(REJECTED)),
            "pairs": pairs, "rejected_lines": info.get("rows", {}).get(REJECTED, 0),
            "pretokenized": source.pretokenized, "seconds": info.get("seconds"),
            "backends": {k: v.get("signature") for k, v in run.manifest["backends"].items()},
            "run_dir": str(out)}
