"""Document pairing on content (issue 17): each signal, the assignment with files that must
stay unpaired, more than two versions (all pairs / pivot), files holding several chapters."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from devtools.doc_collection import make_collection
from cppdb.align.sentences.chapters import file_chapter, heading_starts
from cppdb.align.sentences.documents import (PairingWeights, VersionFile, _join_groups,
                                             assign_with_no_partner, margins, pair_versions)
from cppdb.align.sentences.pairing_signals import (SIGNAL_NAMES, cue_similarity,
                                                   date_time_tokens, file_tokens, name_keys,
                                                   relative, signal_matrices)
from cppdb.errors import ConfigError

# ---------------------------------------------------------------- signals


@pytest.mark.parametrize("text, tokens", [
    ("1998年3月5日", ["y1998", "m3d5"]),
    ("一九九八年三月五日", ["y1998", "m3d5"]),          # numerals read to the same tokens
    ("十二月初的一个傍晚", ["m12"]),
    ("下午三点半", ["t15:30"]),
    ("15:30", ["t15:30"]),
    ("晚上八点二十分", ["t20:20"]),
    ("三点钟", ["t3:00"]),
    ("快一点", []),                                     # "a bit", not one o'clock
    ("三点意见", []),                                   # "three points"
    ("九十年代", []),                                   # a decade, not a year
    ("第五章", []),
    ("他走了3公里", []),
])
def test_date_time_tokens(text: str, tokens: list[str]) -> None:
    assert date_time_tokens(text) == tokens


@pytest.mark.parametrize("stem, title, number", [
    ("chapter01", "", 1),
    ("03_归乡", "", 3),
    ("第十二章", "", 12),
    ("S01E02", "", 2),
    ("a8f3k2c1", "第十二章 归乡", 12),                   # random name: the title decides
    ("1b7e7072", "", None),                             # not episode 7072
    ("e5705b44", "", None),                             # not episode 5705
    ("notes", "他走了3公里，又回来了。", None),         # a number in the first sentence
])
def test_file_chapter(stem: str, title: str, number: int | None) -> None:
    assert file_chapter(stem, title) == number


def _file(version: int, name: str, text: str, **kw) -> VersionFile:
    return VersionFile(version, Path(f"v{version}") / name, text, **kw)


@pytest.mark.parametrize("left, right, same", [
    ("哈利", "哈里", True),                 # same sound, other characters
    ("科诺夫尼岑", "柯诺夫尼岑", True),
    ("哈利", "莫里斯", False),               # different names
])
def test_names_cluster_across_versions(left: str, right: str, same: bool) -> None:
    files = [_file(0, "a.txt", f"{left}来了。{left}走了。"),
             _file(1, "b.txt", f"{right}来了。{right}走了。")]
    keys = name_keys(files)
    assert keys[0] and keys[1]
    assert (set(keys[0].split()) == set(keys[1].split())) is same


CUES = [0, 2000, 4000, 30_000, 32_000, 90_000, 95_000, 100_000]


@pytest.mark.parametrize("a, a_end, b, b_end, low, high", [
    (CUES, 110_000, [s + 500 for s in CUES], 110_500, 0.95, 1.0),   # same episode, shifted
    (CUES, 110_000, [10_000, 50_000, 60_000, 70_000], 110_000, 0.0, 0.5),   # other profile
    (CUES, 110_000, CUES, 440_000, 0.0, 0.3),                       # 4x longer
    (CUES, 110_000, [], 0, 0.0, 0.0),                               # no cues: no evidence
])
def test_cue_similarity(a, a_end, b, b_end, low, high) -> None:
    assert low <= cue_similarity(a, a_end, b, b_end) <= high


@pytest.mark.parametrize("matrix, prior, expected", [
    ([[0.9, 0.2, 0.2], [0.2, 0.8, 0.2], [0.2, 0.2, 0.7]], 0.0,
     [[0.7, 0.0, 0.0], [0.0, 0.6, 0.0], [0.0, 0.0, 0.5]]),
    ([[0.5]], 0.2, [[0.3]]),                  # one file each side: the prior is the baseline
])
def test_relative(matrix, prior, expected) -> None:
    assert np.allclose(relative(np.array(matrix), prior), expected)


# ---------------------------------------------------------------- assignment


def test_chapter_number_and_numbers_in_text_are_different_signals() -> None:
    """``chapter_number`` compares the numbers of the file names (+1 same, -1 different);
    ``numbers_in_text`` the numbers the texts mention (1998 = 一九九八).  Here they disagree,
    and each weight steers the pairing of its own signal only."""
    left = [VersionFile(0, Path("a/chapter01.txt"), "他在1998年走了3公里。"),
            VersionFile(0, Path("a/chapter02.txt"), "她说了42次。")]
    right = [VersionFile(1, Path("b/chapter02.txt"), "他在一九九八年走了三公里。"),
             VersionFile(1, Path("b/chapter01.txt"), "她说了四十二次。")]
    tokens = file_tokens(left + right)
    signals = signal_matrices(left, right, tokens[:2], tokens[2:])
    assert signals.chapter_number.tolist() == [[-1.0, 1.0], [1.0, -1.0]]
    assert signals.numbers_in_text.argmax(axis=1).tolist() == [0, 1]
    assert not signals.cue_timing.any()                 # no cue times: no evidence
    assert [name for name, _ in signals.items()] == list(SIGNAL_NAMES)
    alone = {f"pair_weight_{name}": 0.0 for name in SIGNAL_NAMES}
    by_chapter = PairingWeights(**{**alone, "pair_weight_chapter_number": 1.0}).combine(signals)
    by_numbers = PairingWeights(**{**alone, "pair_weight_numbers_in_text": 1.0}).combine(signals)
    assert by_chapter.argmax(axis=1).tolist() == [1, 0]
    assert by_numbers.argmax(axis=1).tolist() == [0, 1]


@pytest.mark.parametrize("scores, min_score, pairs", [
    # greedy takes (0, 0) = 0.9 and is left with 0.1; the optimum is 0.8 + 0.8
    ([[0.9, 0.8], [0.8, 0.1]], 0.05, [(0, 1), (1, 0)]),
    # below min_score a file stays alone rather than take a poor partner
    ([[0.9, 0.0], [0.0, 0.05]], 0.1, [(0, 0)]),
    ([[0.05, 0.02]], 0.1, []),
    # more files on one side: the extra one stays alone
    ([[0.1, 0.9, 0.0], [0.8, 0.0, 0.2]], 0.1, [(0, 1), (1, 0)]),
    (np.zeros((0, 3)), 0.1, []),
])
def test_assignment_with_no_partner(scores, min_score, pairs) -> None:
    assert assign_with_no_partner(np.asarray(scores, dtype=float), min_score) == pairs


def test_margin_is_against_the_best_other_cell() -> None:
    got = margins(np.array([[1.0, 0.9], [0.2, 0.5]]))
    assert np.allclose(got, [[0.1, -0.1], [-0.8, -0.4]])


@pytest.mark.parametrize("scores, kept", [
    ([10.0, 12.0, 11.0, 3.0], [10.0, 12.0, 11.0]),      # 3 < 0.3 x median 10.5: two leftovers
    ([10.0, 12.0, 11.0, 4.0], [10.0, 12.0, 11.0, 4.0]),
    ([10.0, 2.0], [10.0, 2.0]),                          # too few pairs to know the usual
])
def test_pairs_far_weaker_than_the_usual_pair_are_dropped(scores, kept) -> None:
    from cppdb.align.sentences.documents import _drop_weak

    weak: dict = {}
    chosen = [(s, (0, k), (1, k)) for k, s in enumerate(scores)]
    assert [e[0] for e in _drop_weak(chosen, 0.3, weak)] == kept
    assert len(weak) == 2 * (len(scores) - len(kept))


def test_groups_never_hold_two_files_of_one_version() -> None:
    edges = [(0.9, (0, 0), (1, 0)), (0.8, (1, 0), (2, 0)), (0.7, (0, 0), (2, 1))]
    groups = sorted(sorted(g) for g in _join_groups(edges).values())
    assert groups == [[(0, 0), (1, 0), (2, 0)]]          # (2, 1) is dropped, not merged


# ---------------------------------------------------------------- whole pairings

STORY = {  # chapter -> (names, numbers/dates) shared by all versions of it
    1: ("哈利", "1998年3月5日，他带着35枚金币"),
    2: ("赫敏", "下午三点半，她数了72本书"),
    3: ("罗恩", "12月24日那天，他丢了8把钥匙"),
}
VARIANT = {"哈利": "哈里", "赫敏": "赫米", "罗恩": "罗思"}


def _chapter(c: int, version: int) -> str:
    name, event = STORY[c]
    name = VARIANT[name] if version == 1 else name
    return "\n".join([f"{name}来到了车站。{event}回来了。", f"{name}说：{name}不想走。"] * 6)


@pytest.mark.parametrize("mode, expected", [
    # chapter 3 is missing from version 0; chapter 2 from version 2
    ("all", [[(0, "a1"), (1, "b1"), (2, "c1")], [(0, "a2"), (1, "b2")], [(1, "b3"), (2, "c3")]]),
    ("pivot", [[(0, "a1"), (1, "b1"), (2, "c1")], [(0, "a2"), (1, "b2")]]),
])
def test_three_versions_all_pairs_or_pivot(mode: str, expected) -> None:
    versions = [[_file(0, "a1", _chapter(1, 0)), _file(0, "a2", _chapter(2, 0))],
                [_file(1, "b3", _chapter(3, 1)), _file(1, "b1", _chapter(1, 1)),
                 _file(1, "b2", _chapter(2, 1))],
                [_file(2, "c3", _chapter(3, 2)), _file(2, "c1", _chapter(1, 2))]]
    groups, unpaired = pair_versions(versions, PairingWeights(pair_mode=mode))
    assert [[(f.version, f.name) for f in g.files] for g in groups] == expected
    if mode == "pivot":                    # b3/c3 have no partner in the pivot version
        assert sorted(u.file.name for u in unpaired) == ["b3", "c3"]


def test_an_unrelated_file_stays_unpaired_with_a_reason() -> None:
    versions = [[_file(0, "a1", _chapter(1, 0)), _file(0, "a2", _chapter(2, 0))],
                [_file(1, "b2", _chapter(2, 1)), _file(1, "b1", _chapter(1, 1)),
                 _file(1, "notes", "译者的话：本书根据英文版译出。感谢编辑。" * 10)]]
    groups, unpaired = pair_versions(versions)
    assert sorted((g.files[0].name, g.files[1].name) for g in groups) == [("a1", "b1"),
                                                                          ("a2", "b2")]
    assert [u.file.name for u in unpaired] == ["notes"]
    assert "no partner" in unpaired[0].reason


def test_two_copies_of_one_chapter_are_ambiguous_not_guessed() -> None:
    versions = [[_file(0, f"a{c}", _chapter(c, 0)) for c in (1, 2, 3)],
                [_file(1, "b1", _chapter(1, 1)), _file(1, "b1-copy", _chapter(1, 1)),
                 _file(1, "b2", _chapter(2, 1)), _file(1, "b3", _chapter(3, 1))]]
    groups, unpaired = pair_versions(versions)
    assert [(g.files[0].name, g.files[1].name) for g in groups] == [("a2", "b2"), ("a3", "b3")]
    assert sorted(u.file.name for u in unpaired) == ["a1", "b1", "b1-copy"]
    reasons = {u.file.name: u.reason for u in unpaired}
    assert reasons["a1"].startswith("ambiguous") and reasons["b1"].startswith("ambiguous")
    assert "ambiguous between this file and another" in reasons["b1-copy"]


@pytest.mark.parametrize("settings, message", [
    ({"pair_mode": "bogus"}, "pair_mode"),
    ({"pair_mode": "pivot", "pair_pivot": 5}, "pair_pivot"),
])
def test_pairing_settings_are_validated(settings, message) -> None:
    versions = [[_file(0, "a1", _chapter(1, 0))], [_file(1, "b1", _chapter(1, 1))]]
    with pytest.raises(ConfigError, match=message):
        pair_versions(versions, PairingWeights(**settings))


# ---------------------------------------------------------------- several chapters per file

BODY = "他们在车站谈了很久，天黑才分开。" * 20


@pytest.mark.parametrize("lines, starts", [
    (["第一章 归乡", BODY, "第二章 离别", BODY], [0, 2]),
    (["前言", "第一章 归乡", BODY, "第二章 离别", BODY], [0, 3]),     # preface stays in part 0
    (["Chapter 1", BODY, "Chapter 2", BODY, "Chapter 3", BODY], [0, 2, 4]),
    (["第一章 归乡", BODY], [0]),                                     # one chapter: no cut
    (["目录", "第一章 归乡", "第二章 离别", "第三章", BODY], [0]),     # a table of contents
    (["第一章 归乡", BODY, "他读完了第二章的内容，" + BODY], [0]),     # not a heading line
])
def test_heading_starts(lines: list[str], starts: list[int]) -> None:
    assert heading_starts(lines) == starts


def test_generated_collection_is_paired(tmp_path: Path) -> None:
    """A small generated collection: renamed shuffled files, extras, one merged file."""
    import json

    gold = make_collection(tmp_path, seed=3, chapters=8, extras=2, events=(30, 40))
    versions = []
    for v in range(3):
        files = []
        for path in sorted((tmp_path / f"v{v}").iterdir()):
            lines = path.read_text("utf-8").splitlines()
            starts = heading_starts(lines)
            for k, (a, b) in enumerate(zip(starts, [*starts[1:], len(lines)])):
                files.append(VersionFile(v, path, "\n".join(lines[a:b]),
                                         part=k if len(starts) > 1 else None))
        versions.append(files)
    assert json.loads((tmp_path / "gold.json").read_text("utf-8")) == gold
    groups, unpaired = pair_versions(versions)

    def chapter(f: VersionFile) -> str:
        return gold[str(f.version)][f.name][f.part or 0]

    assert all(len({chapter(f) for f in g.files}) == 1 for g in groups)
    assert len(groups) == 8
    assert sorted(chapter(u.file) for u in unpaired) == ["x1", "x2"]
    assert sum(f.part is not None for v in versions for f in v) == 2     # the merged file


@pytest.mark.slow
def test_extraction_cuts_a_book_in_one_file_at_its_headings(tmp_path: Path) -> None:
    import shutil

    import polars as pl

    from cppdb.config import load_config
    from cppdb.extractors.monolingual import extract_monolingual

    story = Path(__file__).resolve().parents[2] / "data" / "story"
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(story / "version_a", a)
    b.mkdir()
    whole = "".join((story / "version_b" / n).read_text("utf-8") for n in ("第一章.txt",
                                                                            "第二章.txt"))
    (b / "全书.txt").write_text(whole, "utf-8")
    config = load_config(overrides={"align_sentences.method": "bam"})
    summary = extract_monolingual([a, b], tmp_path / "run", config)
    assert (summary.groups, summary.unpaired) == (2, 0)
    docs = pl.read_parquet(tmp_path / "run" / "documents.parquet").sort("group", "version")
    assert [(Path(p).name, k) for p, k in docs.select("path", "part").iter_rows()] == [
        ("chapter01.txt", None), ("全书.txt", 0), ("chapter02.txt", None), ("全书.txt", 1)]
    beads = pl.read_parquet(tmp_path / "run" / "beads.parquet")
    assert sorted(set(beads["part_tgt"].to_list())) == [0, 1]   # typed, joined as such
    assert summary.beads > 40          # both parts were aligned with their chapters


@pytest.mark.parametrize("overrides, message", [
    ({"monolingual.pair_mode": "every"}, "pair_mode"),
    ({"monolingual.pair_mode": "pivot", "monolingual.pair_pivot": 2}, "pair_pivot"),
])
def test_extraction_refuses_bad_pairing_settings_before_work(tmp_path: Path, overrides,
                                                             message) -> None:
    from cppdb.config import load_config
    from cppdb.extractors.monolingual import extract_monolingual

    story = Path(__file__).resolve().parents[2] / "data" / "story"
    with pytest.raises(ConfigError, match=message):
        extract_monolingual([story / "version_a", story / "version_b"], tmp_path / "run",
                            load_config(overrides=overrides))
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("scores, expected", [
    ([[0.7]], [[0.7]]),                                   # one file per version: no other cell
    ([[0.7, 0.2, 0.1]], [[0.5, -0.5, -0.6]]),             # one file on one side
    ([[0.7], [0.2]], [[0.5], [-0.5]]),
    ([[0.9, 0.1], [0.2, 0.8]], [[0.7, -0.8], [-0.7, 0.6]]),
])
def test_margins_of_small_score_matrices(scores, expected) -> None:
    from cppdb.align.sentences.documents import margins

    assert np.allclose(margins(np.array(scores)), np.array(expected))
