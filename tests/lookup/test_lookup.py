"""cppdb lookup / cppdb.open_database on a run built from the bundled data."""
from __future__ import annotations

import json
import os
import re

import polars as pl
import pytest
from typer.testing import CliRunner

import cppdb
from cppdb.errors import BadInputError
from cppdb.lookup.keys import query_keys


@pytest.mark.parametrize("query, key, shape, fixed", [
    ("出生于", "出生于", "出生于", "出生于"),
    ("出生 于", "出生于", "出生于", "出生于"),                     # segmentation does not matter
    ("這座城市", "这座城市", "这座城市", "这座城市"),               # traditional -> simplified
    ("ＡＢＣ　公司", "ABC公司", "ABC公司", "ABC公司"),              # widths, ideographic space
    ("[np1] 出生 于 [NP2]", "[NP1]出生于[NP2]", "[X]出生于[X]", "|出生于|"),
    ("[X] 旅游", "[X]旅游", "[X]旅游", "|旅游"),
])
def test_query_keys(query, key, shape, fixed):
    keys = query_keys(query)
    assert (keys["key"], keys["shape"], keys["fixed"]) == (key, shape, fixed)


@pytest.fixture(scope="module")
def db(ranked_bilingual_run):
    database = cppdb.open_database(ranked_bilingual_run)
    yield database
    database.close()


@pytest.mark.parametrize("variants", [
    ("每天早上", "每 天 早上", "每天 早上", "每天早上 "),
    ("这座城市", "這座城市", "这 座 城市"),
])
def test_spellings_of_one_phrase_find_the_same_pairs(db, variants):
    answers = [db.paraphrases(v, top=20) for v in variants]
    assert answers[0].height > 0
    for other in answers[1:]:
        assert other.equals(answers[0])


def test_paraphrases_are_ranked_best_first_within_the_tier(db):
    found = db.paraphrases("这座城市", top=50)
    assert found["score"].to_list() == sorted(found["score"].to_list(), reverse=True)
    assert set(found["source"]) == {"这 座 城市"}
    best = db.paraphrases("这座城市", tier="S")
    assert set(best["tier"]) == {"S"} and best.height < found.height
    assert db.paraphrases("这座城市", top=1).height == 1


@pytest.mark.parametrize("query, expect_sources, expect_none", [
    ("[NP1] 出生于 [NP2]", {"[NP1] 出生 于 [NP2]"}, False),            # exact slots
    ("[np1] 出生 于 [np2]", {"[NP1] 出生 于 [NP2]"}, False),           # case, segmentation
    ("[X] 出生于 [X]", {"[NP1] 出生 于 [NP2]"}, False),                # generic slots
    ("[VP1] 出生于 [NP2]", {"[NP1] 出生 于 [NP2]"}, False),            # other labels: shape
    ("出生于", {"[NP1] 出生 于 [NP2]", "出生 于 [NP1]"}, False),        # fixed words alone
    ("[NP1] 出生于 [NP2] 飞机场", set(), True),                        # must not fire
    ("飞机场", set(), True),
])
def test_pattern_queries(db, query, expect_sources, expect_none):
    found = db.patterns(query, top=50)
    assert set(found["type"]) <= {"pattern"}
    if expect_none:
        assert found.height == 0
    else:
        assert expect_sources <= set(found["source"])


def test_phrase_lookup_is_exact_and_typed(db):
    assert db.paraphrases("早", top=5).height == 0          # no prefix/substring matches
    mixed = db.lookup("出生于", top=50)
    assert "pattern" in set(mixed["type"])
    assert set(db.paraphrases("出生于", type="phrase")["type"]) <= {"phrase"}
    features = db.paraphrases("这座城市", features=True)
    assert {"p_t_given_s", "f_jaccard_distance", "align_src", "percentile"} <= set(features.columns)


def test_sample_is_seeded_and_stays_in_the_tier(db):
    first, again = db.sample(tier="S", n=20), db.sample(tier="S", n=20)
    assert first.height == 20 and first.equals(again)
    assert set(first["tier"]) == {"S"}
    assert not db.sample(tier="S", n=20, seed=1).equals(first)
    stats = db.stats()
    assert stats["pairs"].sum() == pl.read_parquet(
        db.source.files[0]).height


def test_index_is_built_once_and_rebuilt_when_the_data_changes(ranked_bilingual_run):
    with cppdb.open_database(ranked_bilingual_run) as database:
        assert database.built is None                        # the module fixture built it
    ranked = ranked_bilingual_run / "ranking" / "ranked_pairs.parquet"
    stat = ranked.stat()
    os.utime(ranked, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    with cppdb.open_database(ranked_bilingual_run) as database:
        assert database.built is not None and database.built["rows"] > 0


@pytest.mark.parametrize("suffix", ["parquet", "jsonl", "ppdb"])
def test_an_export_file_is_a_database(ranked_bilingual_run, tmp_path, suffix):
    from cppdb.export_ranked import export_run

    path, rows = export_run(ranked_bilingual_run, top="S", format=suffix,
                            out=tmp_path / f"top.{suffix}")
    with cppdb.open_database(path) as database:
        found = database.paraphrases("每天早上")
        assert found.height > 0
        assert found["score"].to_list() == sorted(found["score"].to_list(), reverse=True)
        assert database.stats()["pairs"].sum() == rows
        if suffix == "parquet":                     # the other formats keep no tier column
            assert set(found["tier"]) == {"S"}


@pytest.mark.parametrize("call, message", [
    (lambda d: d.paraphrases("这座城市", tier="XXL"), "unknown tier"),
    (lambda d: d.paraphrases("这座城市", type="word"), "unknown pair type"),
    (lambda d: d.paraphrases("这座城市", top=0), "top must be"),
    (lambda d: d.patterns("  "), "empty lookup text"),
])
def test_bad_queries_are_coded_errors(db, call, message):
    with pytest.raises(BadInputError, match=message):
        call(db)


def test_missing_database_is_a_coded_error(tmp_path):
    with pytest.raises(BadInputError, match="does not exist"):
        cppdb.open_database(tmp_path / "nope")


def test_cli_lookup_prints_json(ranked_bilingual_run):
    from cppdb.cli import app

    result = CliRunner().invoke(app, ["lookup", "每 天 早上", "--db", str(ranked_bilingual_run),
                                      "--top", "2", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 2 and rows[0]["source"] == "每 天 早上" and rows[0]["pivots"]
    bad = CliRunner().invoke(app, ["lookup", "x", "--db", str(ranked_bilingual_run),
                                   "--tier", "Q"])
    assert bad.exit_code == 2 and "unknown tier" in bad.output


def test_readme_example_runs(ranked_bilingual_run, repo_root):
    readme = (repo_root / "README.md").read_text("utf-8")
    block = re.search(r"<!-- lookup-example.*?```python\n(.*?)```", readme, re.S)
    assert block, "README lost its lookup example"
    code = block.group(1).replace('"demo-run/bilingual"', repr(str(ranked_bilingual_run)))
    shown: list = []
    exec(compile(code, "README.md", "exec"), {"print": shown.append})   # what it prints
    phrases, with_slots, by_words, sample, columns = shown
    assert "早晨" in phrases["target"].to_list()
    assert "[NP1] 出生 于 [NP2]" in with_slots["source"].to_list()
    assert "[NP1] 出生 于 [NP2]" in by_words["source"].to_list()
    assert sample.height == 20 and set(sample["tier"]) == {"S"}
    assert "f_jaccard_distance" in columns


def test_documents_are_shown_by_their_labels() -> None:
    from cppdb.lookup.view import cell as _cell

    documents = [{"version": 0, "path": "/runs/in/a/第一章.txt", "part": None},
                 {"version": 1, "path": "b/全书.txt", "part": 2}]
    assert _cell(documents) == "0:a/第一章.txt, 1:b/全书.txt#2"
    assert _cell(["big dog", "large dog"]) == "big dog, large dog"
