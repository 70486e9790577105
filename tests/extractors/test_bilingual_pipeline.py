"""`extract-bilingual` end to end on a tiny pre-tokenised corpus with a Pharaoh alignment."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from cppdb import schema as S
from cppdb.cli import app
from cppdb.config import load_config
from cppdb.errors import BadInputError, ConfigError
from cppdb.extractors.bilingual import extract_bilingual, read_pharaoh
from cppdb.stages import PlanError

CORPUS = """\
那位 老人 在 院子 里 种 了 一 棵 树 。 ||| The old man planted a tree in the garden .
那个 老头 在 花园 里 种 了 一 棵 树 。 ||| The old man planted a tree in the garden .
那个 老头 坐 在 窗户 旁边 。 ||| The old man sat by the window .
 ||| An empty Chinese side .
"""
ALIGNMENT = """\
0-0 1-1 1-2 2-6 3-8 5-3 5-4 7-4 8-4 9-5 10-9
0-0 1-1 1-2 2-6 3-8 5-3 5-4 7-4 8-4 9-5 10-9
0-0 1-1 1-2 2-3 4-6 5-4 6-7

"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("corpus")
    (root / "par.txt").write_text(CORPUS, "utf-8")
    (root / "par.align").write_text(ALIGNMENT, "utf-8")
    return root / "par.txt", root / "par.align"


@pytest.fixture(scope="module")
def result(corpus, tmp_path_factory):
    parallel, alignment = corpus
    config = load_config(overrides={"annotate.workers": 1})
    return extract_bilingual(None, None, tmp_path_factory.mktemp("run") / "bi", config,
                             parallel_path=parallel, alignment_path=alignment)


def test_stages_write_their_artifacts_and_counts(result):
    run = result.run_dir
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    assert manifest["status"] == "done"
    assert [manifest["stages"][s]["status"] for s in ("annotate", "align", "extract", "pivot")] \
        == ["done"] * 4
    assert result.counts["annotate.annotations.parquet"] == 3
    assert result.counts["align.links"] == 11 + 11 + 7
    rejected = [json.loads(x) for x in (run / "rejected.jsonl").read_text("utf-8").splitlines()]
    assert [(r["line"], r["reason"]) for r in rejected] == [(4, "empty zh side")]
    # the report per consistency mode is in the manifest too
    per_mode = manifest["stages"]["extract"]["notes"]["aligned_phrase_pairs_per_mode"]
    assert per_mode == result.aligned_phrase_pairs
    assert per_mode["strict"] <= per_mode["relaxed"] <= per_mode["relaxed+tolerance1"]


def test_pairs_have_the_shared_columns_and_expected_paraphrases(result):
    phrases = pl.read_parquet(result.phrase_pairs)
    for name, dtype in S.PAIR_COLUMNS.items():
        assert phrases.schema[name] == dtype, name
    pairs = set(phrases.select("source", "target").rows())
    assert ("院子", "花园") in pairs and ("花园", "院子") in pairs
    assert ("那位 老人", "那个 老头") in pairs
    row = phrases.filter(source="那位 老人", target="那个 老头").row(0, named=True)
    assert row["pivots"] == ["The old man"] and row["lhs"] == "NP"
    assert list(zip(row["align_src"], row["align_tgt"])) == [(0, 0), (1, 1)]
    assert all(s != t for s, t in pairs)


def test_rerun_skips_finished_stages(result, corpus):
    parallel, alignment = corpus
    before = (result.run_dir / "manifest.json").read_text("utf-8")
    again = extract_bilingual(None, None, result.run_dir,
                              load_config(overrides={"annotate.workers": 1}),
                              parallel_path=parallel, alignment_path=alignment)
    after = json.loads((result.run_dir / "manifest.json").read_text("utf-8"))
    assert json.loads(before)["stages"] == after["stages"]
    assert again.counts == result.counts


def test_cli_json_and_strict_mode(corpus, tmp_path):
    parallel, alignment = corpus
    out = CliRunner().invoke(app, ["extract-bilingual", "--parallel", str(parallel),
                                   "--alignment", str(alignment), "-o", str(tmp_path / "r"),
                                   "--consistency", "strict",   # ignores the tolerance
                                   "--set", "annotate.workers=1", "--json", "--quiet"])
    assert out.exit_code == 0, out.output
    info = json.loads(out.stdout)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text("utf-8"))
    assert manifest["stages"]["extract"]["notes"]["consistency"] == "strict"
    assert info["counts"]["extract.phrase_occurrence_rows"] == info[
        "aligned_phrase_pairs_per_mode"]["strict"]


def test_process_pool_and_small_chunks_give_the_same_pairs(result, corpus, tmp_path):
    parallel, alignment = corpus
    config = load_config(overrides={"annotate.workers": 1, "bilingual.workers": 2,
                                    "bilingual.min_rows_for_pool": 0,
                                    "bilingual.chunk_size": 2})
    pooled = extract_bilingual(None, None, tmp_path / "pooled", config,
                               parallel_path=parallel, alignment_path=alignment)
    for name in ("phrase_pairs", "pattern_pairs"):
        ours = pl.read_parquet(getattr(pooled, name)).sort("source", "target")
        ref = pl.read_parquet(getattr(result, name)).sort("source", "target")
        assert ours.equals(ref), name
    assert pooled.aligned_phrase_pairs == result.aligned_phrase_pairs


def test_alignment_pointing_past_the_tokens_is_a_clear_error(corpus, tmp_path):
    parallel, _ = corpus
    bad = tmp_path / "bad.align"
    bad.write_text("0-0\n0-0\n0-40\n\n", "utf-8")
    out = CliRunner().invoke(app, ["extract-bilingual", "--parallel", str(parallel),
                                   "--alignment", str(bad), "-o", str(tmp_path / "r"),
                                   "--set", "annotate.workers=1", "--quiet"])
    assert out.exit_code == 2
    assert "line 3" in out.output and "0-40" in out.output and "--parallel" in out.output


def test_bad_inputs_and_settings(tmp_path, corpus):
    parallel, _ = corpus
    with pytest.raises(ConfigError, match="unknown consistency mode"):
        extract_bilingual(None, None, tmp_path / "r",
                          load_config(overrides={"bilingual.consistency": "loose"}),
                          parallel_path=parallel)
    with pytest.raises(PlanError, match=r"(?s)2 problem.*missing.zh.*missing.en"):
        extract_bilingual(tmp_path / "missing.zh", tmp_path / "missing.en", tmp_path / "r2")
    assert not (tmp_path / "r2").exists()        # checked before anything is written
    with pytest.raises(BadInputError, match="give --zh FILE and --en FILE"):
        extract_bilingual(parallel, None, tmp_path / "r3")
    junk = tmp_path / "junk.align"
    junk.write_text("0-0 1_1\n", "utf-8")
    with pytest.raises(BadInputError, match="line 1: '1_1'"):
        read_pharaoh(junk)
