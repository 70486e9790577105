"""Plain-Python evaluation API (what ``cppdb evaluate`` calls)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from cppdb.config import Config, load_config
from cppdb.evaluate.sheet import (SHEET_COLUMNS, acceptability_table, read_annotation_sheet,
                                  write_annotation_sheet)
from cppdb.evaluate.tables import evaluation_table, load_ranked_file


def is_annotation_sheet(path: str | Path) -> bool:
    path = Path(path)
    if not path.is_file():
        return False
    with path.open(encoding="utf-8", errors="replace") as handle:
        return tuple(handle.readline().rstrip("\n").split("\t")) == SHEET_COLUMNS


def load_ranking(run_or_file: str | Path) -> pl.DataFrame:
    """A run directory's ranked pairs, or a pair file ranked by score / line order."""
    path = Path(run_or_file)
    if path.is_dir():
        from cppdb.rank.pipeline import read_ranked

        return read_ranked(path)
    return load_ranked_file(path)


def _encoders(config: Config) -> tuple[Any, Any]:
    section = config.section("evaluate")
    first = second = None
    if section["embedding"]:
        from cppdb.features.models import load_encoder

        first = load_encoder(config.section("embed"))
    if section["second_model_path"]:
        from cppdb.registry import load_backend

        second = load_backend("sentence_encoder", "sentence-transformers",
                              model_path=section["second_model_path"])
    return first, second


def evaluate_run(run_or_file: str | Path, config: Config | None = None) -> pl.DataFrame:
    """Tables 3/4/6: diversity and consistency per type at the top shares."""
    config = config or load_config()
    section = config.section("evaluate")
    first, second = _encoders(config)
    return evaluation_table(load_ranking(run_or_file), tuple(section["tops"]), encoder=first,
                            second_encoder=second, max_embedded=section["max_embedded_pairs"],
                            seed=section["seed"])


def write_sheet(run_or_file: str | Path, out: str | Path, n_per_type: int,
                config: Config | None = None) -> int:
    """Write an annotation sheet of ``n_per_type`` pairs per type; returns its rows."""
    config = config or load_config()
    section = config.section("evaluate")
    return write_annotation_sheet(load_ranking(run_or_file), out, n_per_type,
                                  tuple(section["tops"]), section["seed"])


def sheet_table(path: str | Path) -> tuple[pl.DataFrame, int]:
    """Acceptability table of a filled sheet, and the number of unrated rows."""
    sheet = read_annotation_sheet(path)
    return acceptability_table(sheet), int(sheet["rating"].is_null().sum())
