"""Evaluation tables on a tiny hand-checked set, and the annotation-sheet round trip."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.evaluate.sheet import (acceptability_table, read_annotation_sheet, sample_sheet,
                                  write_annotation_sheet)
from cppdb.evaluate.tables import edit_distances, evaluation_table

# rank order = row order; hand-computed character edit distances and lengths
HAND = [
    ("老人", "老头", 1, 1 / 2, 0.6),
    ("北京 到 上海 的 高铁", "北京 到 上海 高铁", 1, 1 / 8, 1.0),
    ("去世", "逝世", 1, 1 / 2, 1.0),
    ("车祸", "一 场 车祸", 2, 2 / 4, 0.0),
    ("ab", "xyz", 3, 1.0, -1.0),
]
VECTORS = {"老人": [1, 0], "老头": [0.6, 0.8], "北京到上海的高铁": [1, 0], "北京到上海高铁": [1, 0],
           "去世": [0, 1], "逝世": [0, 1], "车祸": [1, 0], "一场车祸": [0, 1], "ab": [1, 0],
           "xyz": [-1, 0]}


class TableEncoder:
    """Fixed unit vectors, so the expected cosines are known exactly."""

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.array([VECTORS[t] for t in texts], dtype=np.float32)


def ranked(rows=HAND, pair_type: str = "phrase") -> pl.DataFrame:
    n = len(rows)
    return pl.DataFrame({S.SOURCE: [r[0] for r in rows], S.TARGET: [r[1] for r in rows],
                         S.TYPE: [pair_type] * n, "rank": list(range(1, n + 1)),
                         "percentile": [i / n for i in range(1, n + 1)],
                         "score": [float(n - i) for i in range(n)]})


def test_edit_distance_definitions():
    ed, ned = edit_distances([r[0] for r in HAND] + [""], [r[1] for r in HAND] + [""])
    assert ed.tolist() == [r[2] for r in HAND] + [0]
    assert ned.tolist() == pytest.approx([r[3] for r in HAND] + [0.0])


def test_evaluation_table_by_hand():
    table = evaluation_table(ranked(), encoder=TableEncoder(), max_embedded=100)
    assert table["top"].to_list() == ["20%", "60%", "100%"]
    assert table["pairs"].to_list() == [1, 3, 5]                   # ceil(5 * share)
    assert table["edit_distance"].to_list() == pytest.approx([1.0, 1.0, 1.6])
    assert table["normalised_edit_distance"].to_list() == pytest.approx(
        [0.5, (0.5 + 0.125 + 0.5) / 3, (0.5 + 0.125 + 0.5 + 0.5 + 1.0) / 5])
    assert table["cosine"].to_list() == pytest.approx([0.6, 2.6 / 3, 1.6 / 5], abs=1e-6)
    # 北京到上海高铁 ⊂ 北京到上海的高铁? no (的 in the middle); 车祸 ⊂ 一场车祸: yes
    assert table["containment"].to_list() == pytest.approx([0.0, 0.0, 0.2])
    assert table["containment_low"][2] == 0.0 and table["containment_high"][2] > 0.2
    assert table["cosine_second"].to_list() == [None, None, None]   # no second model
    assert table["embedded"].to_list() == [1, 3, 5]


def test_evaluation_table_per_type_and_without_models():
    frame = pl.concat([ranked(), ranked(HAND[:2], "sentence")])
    table = evaluation_table(frame)
    assert table.filter(pl.col("type") == "sentence")["pairs"].to_list() == [1, 2, 2]
    assert table["cosine"].null_count() == table.height


def filled(sheet: pl.DataFrame, ratings: dict[str, int | None]) -> pl.DataFrame:
    return sheet.with_columns(pl.col("source").replace_strict(ratings, default=None)
                              .cast(pl.Int64).alias("rating"))


def ten_pairs() -> pl.DataFrame:
    rows = [(f"s{i}", f"t{i}", 0, 0.0, 0.0) for i in range(1, 11)]
    return ranked(rows)


def test_sheet_is_stratified_by_band():
    sheet = sample_sheet(ten_pairs(), 6)
    # bands: ranks 1-2 (top 20%), 3-6 (20-60%), 7-10 (60-100%); two pairs from each
    assert sheet.group_by("band").len().sort("band")["len"].to_list() == [2, 2, 2]
    sizes = sheet.unique("band").sort("band")["band_pairs"].to_list()
    assert sizes == [2, 4, 4]
    assert set(sheet.filter(pl.col("band") == 1)["source"]) == {"s1", "s2"}


def test_annotation_sheet_round_trip(tmp_path):
    path = tmp_path / "sheet.tsv"
    assert write_annotation_sheet(ten_pairs(), path, 6) == 6
    sheet = read_annotation_sheet(path)
    assert sheet["rating"].null_count() == 6
    band = dict(zip(sheet["source"], sheet["band"]))
    by_band = {1: [5, 5], 2: [4, 2], 3: [3, 1]}
    ratings = {}
    for source in sorted(band):
        ratings[source] = by_band[band[source]].pop(0)
    lines = path.read_text("utf-8").splitlines()
    out = [lines[0]] + [line + str(ratings[line.split("\t")[6]]) for line in lines[1:]]
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    table = acceptability_table(read_annotation_sheet(path))
    assert table["top"].to_list() == ["20%", "60%", "100%"]
    assert table["pairs"].to_list() == [2, 6, 10]
    assert table["rated"].to_list() == [2, 4, 6]
    # stratified: band shares weighted by band sizes 2, 4, 4
    assert table["share_5"].to_list() == pytest.approx([1.0, 2 / 6, 2 / 10])
    assert table["share_4_or_more"].to_list() == pytest.approx([1.0, 4 / 6, 4 / 10])
    assert table["share_3_or_more"].to_list() == pytest.approx([1.0, 4 / 6, 6 / 10])
    assert table["estimated_acceptable"].to_list() == [2, 4, 6]


def test_bad_rating_is_reported_with_its_line(tmp_path):
    path = tmp_path / "sheet.tsv"
    write_annotation_sheet(ten_pairs(), path, 3)
    lines = path.read_text("utf-8").splitlines()
    lines[2] += "6"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="line 3: rating '6' is not 1–5"):
        read_annotation_sheet(path)


def test_cli_sheet_round_trip(tmp_path):
    from cppdb.cli import app

    run = tmp_path / "run"
    (run / "ranking").mkdir(parents=True)
    ten_pairs().write_parquet(run / "ranking" / "ranked_pairs.parquet")
    runner = CliRunner()
    sheet = tmp_path / "sheet.tsv"
    result = runner.invoke(app, ["evaluate", str(run), "--sample", "6", "-o", str(sheet), "-q"])
    assert result.exit_code == 0, result.output
    lines = sheet.read_text("utf-8").splitlines()
    sheet.write_text("\n".join([lines[0]] + [line + "4" for line in lines[1:]]) + "\n", "utf-8")
    result = runner.invoke(app, ["evaluate", str(sheet), "--json"])
    assert result.exit_code == 0, result.output
    assert '"share_4_or_more": 1.0' in result.output
    result = runner.invoke(app, ["evaluate", str(run), "--json",
                                 "--set", "evaluate.embedding=false"])
    assert result.exit_code == 0, result.output
    assert '"top": "60%"' in result.output


def test_containment_fires_only_on_substrings():
    from cppdb.evaluate.tables import containment

    got = containment(["男孩", "这个 男孩", "公司", "老人", "北京 到 上海"],
                      ["这个 男孩", "男孩", "有限 公司", "老头", "北京 上海"])
    assert got.tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]


def test_cli_prints_the_diversity_table_at_80_columns(tmp_path, monkeypatch):
    from cppdb.cli import app

    path = tmp_path / "pairs.jsonl"
    ranked().select(S.SOURCE, S.TARGET, "score").write_ndjson(path)
    monkeypatch.setenv("COLUMNS", "80")
    result = CliRunner().invoke(app, ["evaluate", str(path), "--set", "evaluate.embedding=false"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines if not line.startswith("signature: ")) <= 80
    row = next(line for line in lines if "100%" in line)
    assert "1.60±" in row and "20.0%±" in row          # mean ED 1.6; one pair in five contained
    assert any(line.startswith("signature: ") and "ci:bootstrap-percentile-95" in line
               and "containment:substring-either-way" in line for line in lines)
