"""`make demo` end to end on the bundled data: every run produces pairs (a pipeline change
that leaves one demo run empty — e.g. files left unpaired — fails here, not in front of a
user)."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cppdb.demo import main


@pytest.mark.slow
def test_demo_runs_and_every_run_has_pairs(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert main([str(out)]) == 0
    for name in ("monolingual-text", "monolingual-subtitles", "monolingual-screenshots"):
        pairs = pl.read_parquet(out / name / "sentence_pairs.parquet")
        assert pairs.height > 20, name
    assert pl.read_parquet(out / "bilingual" / "phrase_pairs.parquet").height > 100
    assert pl.read_parquet(out / "bilingual" / "pattern_pairs.parquet").height > 100
    assert (out / "compression" / "compressions.jsonl").read_text("utf-8").count("\n") > 10
    assert len(list(out.glob("*/report.html"))) == 5
    # the ranking keeps the sample's showcase pairs (not filtered, e.g. as weak evidence)
    ranked = pl.read_parquet(out / "bilingual" / "ranking" / "ranked_pairs.parquet")
    verbal = ranked.filter((pl.col("type") == "phrase") & (pl.col("lhs") == "VP")
                           & pl.col("source").str.contains("车祸")
                           & pl.col("target").str.contains("丧生"))
    assert verbal.height > 0
    born = ranked.filter((pl.col("type") == "pattern")
                         & pl.col("source").str.contains("出生 于 [NP1]", literal=True))
    assert born.height > 0


@pytest.mark.parametrize("argv, code", [(["--help"], 0), (["-h"], 0), (["--fast"], 2),
                                        (["a", "b"], 2)])
def test_demo_options_are_not_output_directories(argv, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == code
    assert list(tmp_path.iterdir()) == []
