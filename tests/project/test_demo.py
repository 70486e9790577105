"""`make demo` end to end on the bundled data: every run produces pairs (a pipeline change
that leaves one demo run empty — e.g. files left unpaired — fails here, not in front of a
user)."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cppdb.demo import SHOWN_COMPRESSIONS, main, shown_compressions

#: kept pairs of data/news/pairs.jsonl in step 4 (the shipped defaults + the demo's table);
#: a change here is a change in what the demo shows: read the new compressions first
DEMO_KEPT = 6
#: a compression cannot end in these: they open or link a word that would follow
OPENERS = {"ADP", "CCONJ", "SCONJ"}


def is_subsequence(short: list[str], long: list[str]) -> bool:
    remaining = iter(long)
    return all(any(token == other for other in remaining) for token in short)


def _kept_ancestor(heads: list[int], node: int, kept: list[int]) -> int | None:
    """The nearest kept ancestor: a dropped head's kept children hang from it, as the
    builder's sentence check reads the tree."""
    head = heads[node]
    while head >= 0 and head not in kept:
        head = heads[head]
    return head if head >= 0 else None


def ends_at_a_sentence_boundary(row: dict) -> bool:
    """The last kept word does not open a phrase (preposition, conjunction, 的) and the kept
    words hang from a verb or adjective (dropped heads contracted): what is printed can end a
    sentence."""
    kept = [i for i, label in enumerate(row["labels"]) if label]
    last = kept[-1]
    top = next(i for i in kept if _kept_ancestor(row["heads"], i, kept) is None)
    particle = row["upos"][last] == "PART" and row["deprels"][last] in {
        "mark:relcl", "case:dec", "mark", "case"}
    return (row["upos"][last] not in OPENERS and not particle
            and row["upos"][top] in {"VERB", "ADJ"})


@pytest.mark.slow
def test_demo_runs_and_every_run_has_pairs(tmp_path: Path, capsys) -> None:
    out = tmp_path / "demo"
    assert main([str(out)]) == 0
    # a second demo resumes; a run an earlier version made (another model checksum) is redone
    manifest = out / "compression" / "manifest.json"
    data = json.loads(manifest.read_text("utf-8"))
    model = next(p for p in data["inputs"] if p.endswith("compression_risk.json"))
    data["inputs"][model] = "0" * 64
    manifest.write_text(json.dumps(data), "utf-8")
    capsys.readouterr()
    assert main([str(out)]) == 0
    said = " ".join(capsys.readouterr().out.split())     # rich wraps long lines
    assert said.count("was made with") == 1               # the other runs resumed
    assert "inputs compression_risk.json (made by" in said   # and nothing else changed
    for name in ("monolingual-text", "monolingual-subtitles", "monolingual-screenshots"):
        pairs = pl.read_parquet(out / name / "sentence_pairs.parquet")
        assert pairs.height > 20, name
    assert pl.read_parquet(out / "bilingual" / "phrase_pairs.parquet").height > 100
    assert pl.read_parquet(out / "bilingual" / "pattern_pairs.parquet").height > 100
    compressions = out / "compression" / "compressions.jsonl"
    assert compressions.read_text("utf-8").count("\n") == DEMO_KEPT
    shown = shown_compressions(compressions)
    assert len(shown) == SHOWN_COMPRESSIONS
    for row in shown:   # each printed compression: deletion-only, and it can end a sentence
        kept = [t for t, label in zip(row["tokens"], row["labels"]) if label]
        assert "".join(kept) == row["compression"]
        assert is_subsequence(kept, row["tokens"]) and "".join(row["tokens"]) in row["sentence"]
        assert ends_at_a_sentence_boundary(row), row["compression"]
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
