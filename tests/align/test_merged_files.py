"""Files holding several chapters without headings (issue 17): the linear cut DP, the cut of
one file by its content, and whole generated collections where merged files must be cut at
the true chapter starts and paired — and where nothing may be cut."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from devtools.doc_collection import make_collection
from cppdb.align.sentences.documents import pair_versions
from cppdb.align.sentences.types import VersionFile
from cppdb.align.sentences.merged import best_cut, segment, split_merged_files


@pytest.mark.parametrize("scores, min_lines, starts", [
    ([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1]], 1, [0, 2]),
    ([[1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1]], 1, [0, 1, 3]),
    # each part at least 2 lines: the lone line of part 0 is not enough
    ([[1, 0], [0, 1], [0, 1], [0, 1]], 2, [0, 2]),
    # a stray line inside part 0 does not cut it in the middle
    ([[1, 0], [0, 0.5], [1, 0], [1, 0], [0, 1], [0, 1]], 1, [0, 4]),
])
def test_segment_finds_the_best_cuts(scores, min_lines, starts) -> None:
    assert segment(np.asarray(scores, dtype=float), min_lines)[1] == starts


def test_segment_refuses_too_few_lines() -> None:
    assert segment(np.zeros((3, 2)), 2) == (-np.inf, [])


CAST = {1: ("哈利", "车站"), 2: ("莫里斯", "港口"), 3: ("安娜", "磨坊")}
VARIANT = {"哈利": "哈里", "莫里斯": "莫理斯", "安娜": "安妮娜"}


def _chapter(c: int, version: int, lines: int = 6) -> list[str]:
    name, place = CAST[c]
    name = VARIANT[name] if version == 1 else name
    return [f"{name}在{place}等了{c * 7 + k}分钟，{name}又回到了{place}。" for k in range(lines)]


def _file(version: int, name: str, lines: list[str]) -> VersionFile:
    return VersionFile(version, Path(f"v{version}") / name, "\n".join(lines))


@pytest.mark.parametrize("merged, targets, starts", [
    ([1, 2], [1, 2], (0, 6)),
    ([2, 1], [1, 2], (0, 6)),            # the targets' order in the file is found too
    ([3, 1, 2], [1, 2, 3], (0, 6, 12)),
])
def test_best_cut_of_one_merged_file(merged, targets, starts) -> None:
    file = _file(0, "all.txt", [line for c in merged for line in _chapter(c, 0)])
    cut = best_cut(file, [_file(1, f"{c}.txt", _chapter(c, 1)) for c in targets])
    assert cut is not None and cut.starts == starts
    assert [t.name for t in cut.targets] == [f"{c}.txt" for c in merged]
    assert [p.part for p in cut.parts()] == list(range(len(merged)))
    assert cut.parts()[1].text.split("\n")[0] == _chapter(merged[1], 0)[0]


@pytest.mark.parametrize("file_lines, targets", [
    # must NOT cut: one long chapter against its partner and an unrelated chapter
    (_chapter(1, 0, 14), [_chapter(1, 1), _chapter(2, 1)]),
    # must NOT cut: two copies of one chapter cannot be told apart
    (_chapter(1, 0, 12), [_chapter(1, 1), _chapter(1, 1)]),
])
def test_best_cut_refuses_a_single_chapter(file_lines, targets) -> None:
    file = _file(0, "one.txt", file_lines)
    assert best_cut(file, [_file(1, f"t{k}.txt", t) for k, t in enumerate(targets)]) is None


def _versions(root: Path, gold: dict) -> list[list[VersionFile]]:
    return [[VersionFile(v, path, "\n".join(x for x in path.read_text("utf-8").splitlines()
                                            if x.strip()))
             for path in sorted((root / f"v{v}").iterdir())] for v in range(len(gold))]


def test_merged_files_without_headings_are_cut_and_paired(tmp_path: Path) -> None:
    """One file holds 2 chapters, another 3, with no heading between them."""
    gold = make_collection(tmp_path, seed=2, chapters=10, extras=2, events=(30, 40),
                           merged_sizes=(2, 3), merged_headings=False)
    truth = json.loads((tmp_path / "merged_starts.json").read_text("utf-8"))
    versions, cuts = split_merged_files(_versions(tmp_path, gold))
    assert {(str(c.file.version), c.file.name): list(c.starts) for c in cuts} == {
        (v, name): starts for v, files in truth.items() for name, starts in files.items()}
    for cut in cuts:                       # each part was matched with its own chapter
        held = gold[str(cut.file.version)][cut.file.name]
        assert [gold[str(t.version)][t.name] for t in cut.targets] == [[c] for c in held]
    groups, unpaired = pair_versions(versions)

    def chapter(f: VersionFile) -> str:
        return gold[str(f.version)][f.name][f.part or 0]

    assert all(len({chapter(f) for f in g.files}) == 1 for g in groups)
    assert sorted(len(g.files) for g in groups) == [3] * 10
    assert sorted(chapter(u.file) for u in unpaired) == ["x1", "x2"]


@pytest.mark.parametrize("seed", [4, 6])
def test_nothing_is_cut_in_a_collection_of_single_chapters(tmp_path: Path, seed: int) -> None:
    """Must NOT fire: extras in one version only, one chapter made twice as long (the text
    of another translation appended), and a chapter present twice in one version (with seed
    6, the copies make chapter 7 of the other versions a candidate; its cut is refused)."""
    gold = make_collection(tmp_path, seed=seed, chapters=10, extras=3, events=(30, 40),
                           merged=False)
    versions = _versions(tmp_path, gold)
    chapter_of = {(f.version, gold[str(f.version)][f.name][0]): k
                  for v in versions for k, f in enumerate(v)}
    long, other = versions[0][chapter_of[(0, "5")]], versions[2][chapter_of[(2, "5")]]
    versions[0][chapter_of[(0, "5")]] = replace(long, text=long.text + "\n" + other.text)
    copy = versions[1][chapter_of[(1, "7")]]
    versions[1].append(replace(copy, path=copy.path.with_name("copy.txt")))
    assert split_merged_files(versions) == (versions, [])


@pytest.mark.slow
def test_extraction_cuts_a_merged_file_without_headings(tmp_path: Path) -> None:
    """``extract-monolingual`` cuts the file by content in its read stage: the parts become
    documents of their own (``file#k``), each paired and aligned with its chapter."""
    import polars as pl

    from cppdb.config import load_config
    from cppdb.extractors.monolingual import extract_monolingual

    gold = make_collection(tmp_path / "book", seed=1, versions=2, chapters=6, extras=0,
                           events=(20, 24), merged_sizes=(2,), merged_headings=False)
    (merged_name,) = [n for n, cs in gold["0"].items() if len(cs) == 2]
    config = load_config(overrides={"align_sentences.method": "bam"})
    summary = extract_monolingual([tmp_path / "book" / "v0", tmp_path / "book" / "v1"],
                                  tmp_path / "run", config)
    assert (summary.groups, summary.unpaired) == (6, 0)
    docs = pl.read_parquet(tmp_path / "run" / "documents.parquet")
    chapter_of = {(int(v), name, k if len(cs) > 1 else None): c
                  for v in ("0", "1") for name, cs in gold[v].items() for k, c in enumerate(cs)}
    for _, frame in docs.group_by("group"):
        assert len({chapter_of[(v, Path(p).name, k)]
                    for v, p, k in frame.select("version", "path", "part").iter_rows()}) == 1
    merged = docs.filter(pl.col("path").str.ends_with(merged_name))
    assert sorted(merged["part"].to_list()) == [0, 1] and merged["version"].to_list() == [0, 0]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text("utf-8"))
    assert merged_name in manifest["stages"]["read"]["notes"]["files_cut_by_content"][0]
