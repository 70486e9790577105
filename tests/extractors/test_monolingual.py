"""Document pairing, `cppdb align-sentences`, and `extract-monolingual` end to end."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from cppdb import schema
from cppdb.align.sentences.chapters import chapter_number, chinese_numeral
from cppdb.align.sentences.documents import pair_versions, read_pairs_file
from cppdb.align.sentences.versions import read_version_dir
from cppdb.cli import app
from cppdb.config import load_config
from cppdb.errors import BadInputError, RunStateError
from cppdb.extractors.monolingual import extract_monolingual, word_links

STORY = Path(__file__).resolve().parents[2] / "data" / "story"
UNRELATED = "今天上午，市政府召开新闻发布会，介绍了全市交通建设的最新进展。预计年底前完工。"


@pytest.mark.parametrize("text, number", [
    ("第一章 归乡", 1), ("第1章 回到故乡", 1), ("第二十三回", 23), ("第一百零五章", 105),
    ("chapter01", 1), ("Chapter 12", 12), ("ep01", 1), ("E07", 7), ("S01E02", 2),
    ("episode01.utf16", 1), ("没有数字", None),
])
def test_chapter_numbers(text: str, number: int | None) -> None:
    assert chapter_number(text) == number


def test_chinese_numerals() -> None:
    assert [chinese_numeral(t) for t in ("十", "十二", "二十", "一百零五", "三〇")] == [10, 12, 20, 105, 30]


def _versions(tmp_path: Path, names_b: dict[str, str], extra_b: dict[str, str] | None = None
              ) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(STORY / "version_a", a)
    b.mkdir()
    for new, old in names_b.items():
        shutil.copy(STORY / "version_b" / old, b / new)
    for name, text in (extra_b or {}).items():
        (b / name).write_text(text, "utf-8")
    return a, b


def _read(*dirs: Path):
    return [read_version_dir(d, v)[0] for v, d in enumerate(dirs)]


def test_pairing_by_chapter_titles_and_content(tmp_path: Path) -> None:
    # renamed files without numbers, order swapped, plus an unrelated file
    a, b = _versions(tmp_path, {"x.txt": "第二章.txt", "y.txt": "第一章.txt"},
                     {"notes.txt": UNRELATED * 5})
    docs = _read(a, b)
    groups, unpaired = pair_versions([[d.file for d in v] for v in docs])
    got = {g.files[0].name: g.files[1].name for g in groups}
    assert got == {"chapter01.txt": "y.txt", "chapter02.txt": "x.txt"}
    assert [(u.file.name, "min_score" in u.reason) for u in unpaired] == [("notes.txt", True)]


def test_pairing_content_alone_when_titles_are_missing(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for directory, names in ((a, ("chapter01.txt", "chapter02.txt")),
                             (b, ("第二章.txt", "第一章.txt"))):
        directory.mkdir()
        source = STORY / ("version_a" if directory == a else "version_b")
        for k, name in enumerate(names):
            body = (source / name).read_text("utf-8").split("\n", 1)[1]   # drop the title
            # names without numbers: "part0"/"part1" would read as chapters 0 and 1
            (directory / f"{'xy'[k]}.txt").write_text(body, "utf-8")
    groups, _ = pair_versions([[d.file for d in v] for v in _read(a, b)])
    assert sorted((g.files[0].name, g.files[1].name) for g in groups) == [
        ("x.txt", "y.txt"), ("y.txt", "x.txt")]


def test_pairs_file_overrides_and_reports_the_rest(tmp_path: Path) -> None:
    a, b = _versions(tmp_path, {"第一章.txt": "第一章.txt", "第二章.txt": "第二章.txt"})
    versions = [[d.file for d in v] for v in _read(a, b)]
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("# chosen by hand\nchapter01.txt\t第二章.txt\n", "utf-8")
    groups, unpaired = read_pairs_file(pairs, versions)
    assert [(g.files[0].name, g.files[1].name, g.method) for g in groups] == [
        ("chapter01.txt", "第二章.txt", "pairs-file")]
    assert sorted(u.file.name for u in unpaired) == ["chapter02.txt", "第一章.txt"]
    pairs.write_text("chapter01.txt\tnope.txt\n", "utf-8")
    with pytest.raises(BadInputError, match="no file 'nope.txt'"):
        read_pairs_file(pairs, versions)


def test_subtitle_units_keep_times(tmp_path: Path) -> None:
    docs, skipped = read_version_dir(STORY.parent / "subtitles" / "version_b", 1)
    assert docs and not skipped
    first = docs[0].units[0]
    assert first.start_ms is not None and first.end_ms >= first.start_ms
    assert docs[0].file.span_ms is not None


def test_unreadable_files_are_skipped_with_a_reason(tmp_path: Path) -> None:
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "notes.docx").write_bytes(b"PK\x03\x04")
    (tmp_path / "v" / "empty.txt").write_text("  \n", "utf-8")
    (tmp_path / "v" / "chapter01.txt").write_text("第一章\n他来了。她走了。", "utf-8")
    docs, skipped = read_version_dir(tmp_path / "v", 0)
    assert [d.file.name for d in docs] == ["chapter01.txt"]
    assert [u.text for u in docs[0].units] == ["第一章", "他来了。", "她走了。"]
    reasons = {s.path.name: s.reason for s in skipped}
    assert set(reasons) == {"notes.docx", "empty.txt"}
    assert "unsupported" in reasons["notes.docx"]


def test_align_sentences_cli_writes_beads_and_scores(tmp_path: Path) -> None:
    gold = STORY / "gold"
    out = tmp_path / "ch1.beads"
    result = CliRunner().invoke(app, [
        "align-sentences", str(gold / "chapter01.a.txt"), str(gold / "chapter01.b.txt"),
        "-o", str(out), "--method", "bam", "--units", "lines",
        "--gold", str(gold / "chapter01.beads"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["source_units"] == 77 and report["target_units"] == 76
    assert report["scores_one_to_one"]["f1_strict"] > 0.8
    assert out.read_text("utf-8").splitlines()[0].startswith("[0]:[0]:")


def test_align_sentences_cli_bad_input_is_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["align-sentences", str(tmp_path / "missing.txt"),
                                      str(tmp_path / "missing.txt"), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "missing.txt" in result.output


def test_word_links_are_monotone_identical_tokens() -> None:
    assert word_links(["他", "走进", "了", "房间"], ["他", "进", "了", "房间"]) == ([0, 2, 3], [0, 2, 3])


@pytest.mark.neural
def test_extract_monolingual_end_to_end_and_resume(tmp_path: Path,
                                                   tiny_sentence_transformer_dir: Path) -> None:
    a, b = _versions(tmp_path, {"第一章.txt": "第一章.txt", "第二章.txt": "第二章.txt"})
    config = load_config(overrides={"align_sentences.sentence_encoder": "embed",
                                    "embed.backend": "sentence-transformers",
                                    "embed.model_path": str(tiny_sentence_transformer_dir),
                                    "monolingual.chunk_size": 1,
                                    # a random tiny model: its costs say nothing of confidence
                                    "monolingual.min_confidence": 0.0})
    out = tmp_path / "run"
    summary = extract_monolingual([a, b], out, config)
    assert (summary.groups, summary.unpaired) == (2, 0)
    for artifact in ("units", "documents", "beads", "entities", "sentence_pairs"):
        assert (out / f"{artifact}.parquet").exists()
    assert not list(out.glob("*.parts"))
    pairs = pl.read_parquet(out / "sentence_pairs.parquet")
    assert pairs.height == summary.sentence_pairs > 60
    for column, dtype in schema.PAIR_COLUMNS.items():
        assert pairs.schema[column] == dtype, column
    assert set(pairs[schema.TYPE]) == {"sentence"} and set(pairs[schema.LHS]) == {"S"}
    assert pairs["anchor"].sum() > 20
    # entity normalisation: the two spellings become one, the originals stay
    row = pairs.filter(pl.col(schema.TARGET).str.contains("柯诺夫尼岑")).row(0, named=True)
    assert "柯诺夫尼岑" not in row["target_norm"] and "科诺夫尼岑" in row["target_norm"]
    first = pairs.row(0, named=True)
    assert first["src_pos"] == 0 and first["tgt_pos"] == 0 and first[schema.PIVOTS] == []
    assert first[schema.DOCUMENTS] == [
        {schema.VERSION: v, schema.PATH: first[f"path_{side}"], schema.PART: None}
        for v, side in ((0, "src"), (1, "tgt"))]
    beads = pl.read_parquet(out / "beads.parquet")
    low = pl.read_parquet(out / "low_confidence_pairs.parquet")
    assert beads.filter(pl.col("kind") == "1-1").height == pairs.height + low.height
    # resume: nothing is recomputed; other settings are refused
    stages = json.loads((out / "manifest.json").read_text("utf-8"))["stages"]
    extract_monolingual([a, b], out, config)
    again = json.loads((out / "manifest.json").read_text("utf-8"))["stages"]
    assert {k: v["finished"] for k, v in again.items()} == {k: v["finished"] for k, v in stages.items()}
    with pytest.raises(RunStateError):
        extract_monolingual([a, b], out, config.with_overrides({"align_sentences.seed": 1}))


def test_one_file_per_version_is_paired(tmp_path: Path) -> None:
    """A film's subtitle tracks or a one-chapter book: one file in each version (the demo's
    case; pairing once failed here on a 1 x 1 score matrix)."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    shutil.copy(STORY / "version_a" / "chapter01.txt", a / "chapter01.txt")
    shutil.copy(STORY / "version_b" / "第一章.txt", b / "第一章.txt")
    summary = extract_monolingual([a, b], tmp_path / "run", load_config())
    assert (summary.groups, summary.unpaired) == (1, 0) and summary.sentence_pairs > 10
