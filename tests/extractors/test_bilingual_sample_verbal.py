"""The bundled sample yields the paper's verb-phrase showcase pairs (issue 11 acceptance)."""
from __future__ import annotations

import polars as pl
import pytest

from cppdb.config import load_config
from cppdb.extractors.bilingual import extract_bilingual

pytestmark = pytest.mark.slow          # the bundled sample through the pipeline


@pytest.fixture(scope="module")
def sample_run(data_dir, tmp_path_factory):
    config = load_config(overrides={"annotate.workers": 1, "bilingual.workers": 1})
    return extract_bilingual(data_dir / "parallel" / "sample.zh", data_dir / "parallel" / "sample.en",
                             tmp_path_factory.mktemp("sample") / "bi", config)


def _pairs(path) -> set[tuple[str, str, str]]:
    return set(pl.read_parquet(path).select("lhs", "source", "target").rows())


def test_verb_phrase_pair_of_fig_5(sample_run):
    pairs = _pairs(sample_run.phrase_pairs)
    assert ("VP", "死 于 一 场 车祸", "在 一 场 车祸 中 丧生") in pairs
    assert ("VP", "在 一 场 车祸 中 丧生", "死 于 一 场 车祸") in pairs


def test_born_in_pattern_pair(sample_run):
    pairs = _pairs(sample_run.pattern_pairs)
    assert ("IP", "[NP1] 出生 于 [NP2]", "[NP1] 生于 [NP2]") in pairs
    assert ("VP", "生于 [NP1]", "出生 于 [NP1]") in pairs


def test_paper_label_set_has_no_verb_phrases(data_dir, tmp_path):
    config = load_config(overrides={"annotate.workers": 1, "bilingual.workers": 1,
                                    "bilingual.phrase_labels": "paper"})
    run = extract_bilingual(data_dir / "parallel" / "sample.zh", data_dir / "parallel" / "sample.en",
                            tmp_path / "paper", config)
    lhs = set(pl.read_parquet(run.phrase_pairs)["lhs"]) | set(pl.read_parquet(run.pattern_pairs)["lhs"])
    assert not lhs & {"VP", "IP"}
