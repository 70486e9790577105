"""``cppdb annotate`` as a plain function (what the CLI command and ``cppdb.api`` call)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from cppdb.config import Config
from cppdb.readers.parallel import read_parallel_input


def run_annotate(config: Config, out: Path, *, zh: Path | None = None, en: Path | None = None,
                 parallel: Path | None = None, tatoeba: Path | None = None,
                 limit: int | None = None, fresh: bool = False) -> dict[str, Any]:
    """Plain-function form of the command; returns the summary it prints."""
    from cppdb.annotate.pipeline import REJECTED, annotate_stage
    from cppdb.run import RunDir

    text, files = read_parallel_input(zh, en, parallel, tatoeba, limit=limit,
                                      max_chars=int(config.section("annotate")["max_chars"]))
    run = RunDir(out, config, command="annotate", inputs=files, fresh=fresh)
    path = annotate_stage(run, text, config)
    run.finish()
    info = run.stage_info("annotate")
    return {"annotations": str(path), "rejected": str(run.path(REJECTED)),
            "pairs": len(text), "rejected_lines": len(text.problems),
            "pretokenized": text.pretokenized, "seconds": info.get("seconds"),
            "backends": {k: v.get("signature") for k, v in run.manifest["backends"].items()},
            "run_dir": str(out)}
