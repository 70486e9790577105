"""Evaluation tables on a tiny hand-checked set, and the annotation-sheet round trip."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from cppdb import schema as S
from cppdb.config import load_config
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


# a tiny hand-made ranked run: ED on the character text (spaces removed), ED ÷ longer side,
# containment (one side inside the other), in order (one side's words in order in the
# other's, or contained); rank = row order
RUN_PAIRS = [
    # source, target, type, ED, ED/len, contained, in order
    ("男孩", "这个 男孩", "phrase", 2, 2 / 4, 1.0, 1.0),     # must fire: 男孩 ⊂ 这个男孩
    ("她 丈夫", "丈夫", "phrase", 1, 1 / 3, 1.0, 1.0),       # must fire: the other way round
    ("老人", "老头", "phrase", 1, 1 / 2, 0.0, 0.0),         # must not fire: shares 老 only
    # contained must not fire (到 in the middle); in order must (a word added inside)
    ("北京 到 上海", "北京 上海", "phrase", 1, 1 / 5, 0.0, 1.0),
    ("去世", "逝世", "phrase", 1, 1 / 2, 0.0, 0.0),
    # 出生 ≠ 生: one word replaced, not added — neither fires
    ("[NP1] 出生 于 [NP2]", "[NP1] 生 于 [NP2]", "pattern", 1, 1 / 7, 0.0, 0.0),
    ("[NP1] 出生 了", "[NP1] 出生", "pattern", 1, 1 / 5, 1.0, 1.0),
]


def tiny_run(tmp_path):
    run = tmp_path / "run"
    (run / "ranking").mkdir(parents=True)
    frames = []
    for pair_type in ("phrase", "pattern"):
        rows = [r for r in RUN_PAIRS if r[2] == pair_type]
        frames.append(ranked([(s, t, 0, 0.0, 0.0) for s, t, *_ in rows], pair_type))
    pl.concat(frames).write_parquet(run / "ranking" / "ranked_pairs.parquet")
    (run / "ranking" / "manifest.json").write_text('{"fingerprint": "f00dfeed"}', "utf-8")
    return run


def test_containment_fires_only_on_substrings():
    from cppdb.evaluate.tables import containment

    got = containment([r[0] for r in RUN_PAIRS], [r[1] for r in RUN_PAIRS])
    assert got.tolist() == [r[5] for r in RUN_PAIRS]


def test_tiny_run_by_hand(tmp_path):
    from cppdb.evaluate.api import evaluate_run_signed

    config = load_config().with_overrides(["evaluate.embedding=false"])
    table, signed = evaluate_run_signed(tiny_run(tmp_path), config)
    phrase = table.filter(pl.col("type") == "phrase")
    rows = [r for r in RUN_PAIRS if r[2] == "phrase"]
    # tops of five phrase pairs: ceil(0.2·5) = 1, ceil(0.6·5) = 3, 5
    assert phrase["pairs"].to_list() == [1, 3, 5]
    for size, row in zip((1, 3, 5), phrase.iter_rows(named=True)):
        assert row["edit_distance"] == pytest.approx(sum(r[3] for r in rows[:size]) / size)
        assert row["normalised_edit_distance"] == pytest.approx(
            sum(r[4] for r in rows[:size]) / size)
        assert row["containment"] == pytest.approx(sum(r[5] for r in rows[:size]) / size)
        assert row["containment_low"] <= row["containment"] <= row["containment_high"]
        assert row["containment_in_order"] == pytest.approx(
            sum(r[6] for r in rows[:size]) / size)
    assert phrase["containment"].to_list() == pytest.approx([1.0, 2 / 3, 0.4])
    assert phrase["containment_in_order"].to_list() == pytest.approx([1.0, 2 / 3, 0.6])
    pattern = table.filter(pl.col("type") == "pattern")
    # a slot is written §<index> in the character text: §1出生于§2 (7) / §1生于§2 (6)
    assert pattern["normalised_edit_distance"].to_list() == pytest.approx(
        [1 / 7, (1 / 7 + 1 / 5) / 2, (1 / 7 + 1 / 5) / 2])
    assert pattern["containment"].to_list() == pytest.approx([0.0, 0.5, 0.5])
    assert pattern["containment_in_order"].to_list() == pytest.approx([0.0, 0.5, 0.5])
    # over the template words the slots drop out: 出生于 / 生于 (1/3), 出生了 / 出生 (1/3)
    assert pattern["template_edit_distance"].to_list() == pytest.approx([1.0, 1.0, 1.0])
    assert pattern["template_normalised_edit_distance"].to_list() == pytest.approx(
        [1 / 3, 1 / 3, 1 / 3])
    # a phrase has no slots: both definitions agree
    assert phrase["template_normalised_edit_distance"].to_list() == pytest.approx(
        phrase["normalised_edit_distance"].to_list())
    for field in ("run:f00dfeed", "tops:0.2/0.6/1", "ci:bootstrap-percentile-95",
                  "ed:levenshtein-nfkc-chars-nospace", "ed-len:ed/max-len",
                  "template-ed:ed-of-template-words-noslots",
                  "containment:substring-either-way-nospace",
                  "in-order:word-subsequence-or-substring", "cosine-cap:1000/type/top",
                  "seed:13", "config:", "version:"):
        assert field in signed
    assert (tmp_path / "run" / "evaluation.json").exists()


def test_cosine_sample_is_capped_per_top_and_nested():
    from cppdb.evaluate.tables import cosine_sample

    rows = [(f"s{i}", f"t{i}", 0, 0.0, 0.0) for i in range(1, 101)]
    frame = ranked(rows).with_columns(pl.int_range(pl.len()).alias("_row"))
    sample = cosine_sample(frame, (0.2, 0.6, 1.0), 10, seed=5)
    ranks = sample.join(frame.select("_row", "rank"), on="_row")
    for index, share in enumerate((0.2, 0.6, 1.0)):
        own = ranks.filter(pl.col(f"_cosine_sample_{index}"))
        assert own.height == 10 and own["rank"].max() <= 100 * share   # its cap, inside it
    # the union of the samples holds more of the 60 % top than its own sample: a cell's
    # mean must use its own flags, not every encoded pair inside it
    assert ranks.filter(pl.col("rank") <= 60).height > 10
    assert cosine_sample(frame, (0.2, 0.6, 1.0), 10, seed=5).equals(sample)
    assert not cosine_sample(frame, (0.2, 0.6, 1.0), 10, seed=6).equals(sample)


def test_in_order_containment_counts_words_added_anywhere():
    from cppdb.features.table import contained_in_order

    got = contained_in_order(
        ["腐败 和 [NP1]", "[NP1] 出生 于 [NP2]", "北京 到 上海", "我 爱 你", "[NP1] 的 [NP2]",
         "公司", "老人", "这个　男孩", "出生 于 [NP1]"],
        ["腐败 和 其他 [NP1]", "[NP1] 在 1990 年 出生 于 [NP2]", "北京 上海", "你 爱 我",
         "[NP2] 的 [NP1]", "有限公司", "老头", "男孩", "出生 在 [NP1]"])
    # must fire: a word inserted inside (a pattern, a phrase), several words, the other way
    # round, a substring without spaces, a full-width space; must not fire: the same words
    # in another order, swapped slots, a shared character only, a word replaced
    assert got.tolist() == [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    assert contained_in_order([], []).size == 0


def test_containment_ignores_spaces_and_direction():
    from cppdb.evaluate.tables import containment

    got = containment(["男孩", "这个 男孩", "公司", "老人", "北京 到 上海"],
                      ["这个 男孩", "男孩", "有限 公司", "老头", "北京 上海"])
    assert got.tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]


def test_cli_prints_the_diversity_table_at_80_columns(tmp_path, monkeypatch):
    from cppdb.cli import app

    monkeypatch.setenv("COLUMNS", "80")
    result = CliRunner().invoke(app, ["evaluate", str(tiny_run(tmp_path)),
                                      "--set", "evaluate.embedding=false"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines if not line.startswith("signature: ")) <= 80
    assert "…" not in result.output                  # rich fits a table by cutting cells
    row = next(line for line in lines if "phrase" in line and "100%" in line)
    assert "1.20±" in row and "0.407±" in row and "40.0%±" in row
    # the patterns again over their template words, in a table of their own: 1/3 at each top
    words = lines.index(next(line for line in lines if "template words" in line))
    pattern_rows = [line for line in lines[words + 1:] if line.startswith("pattern ")]
    assert len(pattern_rows) == 3 and all("0.333±" in line for line in pattern_rows)
    assert any(line.startswith("template words = ") for line in lines)   # the legend says so
    assert any(line.startswith("signature: ") and "run:f00dfeed" in line for line in lines)
    result = CliRunner().invoke(app, ["evaluate", str(tmp_path / "run"), "--json",
                                      "--set", "evaluate.embedding=false"])
    assert result.exit_code == 0, result.output
    assert '"containment": 0.4' in result.output and '"signature": "encoder:none' in result.output


def test_display_stacks_a_second_cosine_instead_of_widening(tmp_path):
    from rich.console import Console

    from cppdb.evaluate.display import evaluation_rich_table

    table = evaluation_table(ranked(), encoder=TableEncoder(), second_encoder=TableEncoder(),
                             max_embedded=100)
    console = Console(width=80, record=True, file=open(tmp_path / "out.txt", "w"))
    console.print(evaluation_rich_table(table, "t"))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80 and "…" not in text
    assert "cosine 2" in text and text.count("100%") == 2          # once in each table
    assert "0.320±" in text                                         # mean cosine of all five


def test_cli_evaluates_a_pair_file_at_80_columns(tmp_path, monkeypatch):
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
    assert "template words" not in result.output       # no patterns: no template-word table
    assert any(line.startswith("signature: ") and "ci:bootstrap-percentile-95" in line
               and "containment:substring-either-way" in line for line in lines)


def test_large_cells_get_the_normal_interval_and_say_so():
    from cppdb.evaluate.tables import interval_method

    table = evaluation_table(ranked(), bootstrap_max=3)          # cells of 1, 3 and 5 pairs
    ed = np.array([r[2] for r in HAND], dtype=float)
    half = 1.96 * ed.std(ddof=1) / np.sqrt(5)
    last = table.row(2, named=True)
    assert (last["edit_distance_low"], last["edit_distance_high"]) == pytest.approx(
        (1.6 - half, 1.6 + half), abs=1e-3)
    bootstrapped = evaluation_table(ranked()).row(2, named=True)
    assert bootstrapped["edit_distance_low"] != pytest.approx(1.6 - half, abs=1e-3)
    assert table.row(1, named=True) == evaluation_table(ranked()).row(1, named=True)
    assert interval_method(3) == "bootstrap-percentile-95(n<=3),normal-1.96se(n>3)"
