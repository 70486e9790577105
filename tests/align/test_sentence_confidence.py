"""Confidence of 1-1 sentence pairs: features, the shipped model, the threshold in
``extract-monolingual``."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cppdb.align.sentences.beads import Bead
from cppdb.align.sentences.confidence import (FEATURES, ConfidenceModel, bead_features,
                                              load_confidence_model)
from cppdb.config import load_config
from cppdb.errors import ConfigError
from cppdb.extractors.monolingual import extract_monolingual

STORY = Path(__file__).resolve().parents[2] / "data" / "story"


def _run(costs: list[float | None], anchor_at: int = -1) -> list[Bead]:
    """One bead per entry: a cost makes a 1-1 bead, None a deletion."""
    beads, i = [], 0
    for k, cost in enumerate(costs):
        beads.append(Bead((i,), ()) if cost is None
                     else Bead((i,), (i,), cost, anchor=k == anchor_at))
        i += 1
    return beads


SHIPPED = load_confidence_model()


def _middle(costs: list[float | None], anchor: bool = False, lengths: tuple[int, int] = (20, 20)
            ) -> float:
    beads = _run(costs, anchor_at=len(costs) // 2 if anchor else -1)
    src = ["字" * 20] * len(beads)
    tgt = ["字" * 20] * len(beads)
    src[len(beads) // 2] = "字" * lengths[0]
    tgt[len(beads) // 2] = "字" * lengths[1]
    return SHIPPED.confidences(beads, src, tgt)[len(beads) // 2]


@pytest.mark.parametrize("name, costs, anchor, lengths, low, high", [
    ("good pair among good pairs", [0.2, 0.2, 0.25, 0.2, 0.2], False, (20, 20), 0.9, 1.0),
    ("random-level pair among random-level pairs (a shifted stretch)",
     [1.0, 1.0, 1.0, 1.0, 1.0], False, (20, 12), 0.0, 0.3),
    ("the same with equal lengths: still well below a good pair",
     [1.0, 1.0, 1.0, 1.0, 1.0], False, (20, 20), 0.0, 0.7),
    ("random-level pair between deletions", [None, None, 1.0, None, None], False, (20, 20),
     0.0, 0.5),
    ("a good pair keeps its confidence next to one deletion", [0.2, None, 0.2, 0.2, 0.2], False,
     (20, 20), 0.9, 1.0),
])
def test_confidence_table(name: str, costs: list, anchor: bool, lengths: tuple[int, int],
                          low: float, high: float) -> None:
    assert low <= _middle(costs, anchor, lengths) <= high, name


def test_anchor_raises_confidence_of_the_same_bead() -> None:
    costs = [0.6, 0.6, 0.7, 0.6, 0.6]
    assert _middle(costs, anchor=True) > _middle(costs, anchor=False)


def test_lengths_far_apart_lower_confidence() -> None:
    costs = [0.5, 0.5, 0.6, 0.5, 0.5]
    values = [_middle(costs, lengths=(20, n)) for n in (20, 14, 8, 4)]
    assert values == sorted(values, reverse=True) and values[0] - values[-1] > 0.2


def test_confidence_falls_as_cost_rises() -> None:
    # between good neighbours a random-level bead stays fairly likely: on the development and
    # subtitle cases 80-85 % of such beads were right (short lines the encoder cannot compare)
    values = [_middle([0.3, 0.3, c, 0.3, 0.3]) for c in (0.1, 0.4, 0.7, 1.0, 1.3)]
    assert values == sorted(values, reverse=True) and 0.8 < values[-1] < values[0] - 0.05
    shifted = [_middle([c] * 5, lengths=(20, 15)) for c in (0.3, 0.6, 0.9, 1.2)]
    assert shifted == sorted(shifted, reverse=True) and shifted[0] - shifted[-1] > 0.5


def test_beads_that_are_not_one_to_one_get_none() -> None:
    beads = [Bead((0,), (0,), 0.2), Bead((1, 2), (1,), 0.3), Bead((), (2,)), Bead((3,), ())]
    conf = SHIPPED.confidences(beads, ["甲"] * 4, ["乙"] * 3)
    assert conf[0] is not None and conf[1:] == [None, None, None]
    assert bead_features(beads, [1] * 4, [1] * 3).shape == (4, len(FEATURES))


def test_model_files_are_checked(tmp_path: Path) -> None:
    assert "Bible" in SHIPPED.provenance and len(SHIPPED.weights) == len(FEATURES)
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps({"features": ["cost"], "intercept": 0, "weights": [1]}))
    with pytest.raises(ConfigError, match="features"):
        load_confidence_model(str(bad))
    with pytest.raises(ConfigError, match="cannot read"):
        load_confidence_model(str(tmp_path / "missing.json"))
    with pytest.raises(ConfigError, match="weights"):
        ConfidenceModel(0.0, (1.0,))


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_threshold_is_validated(value: float) -> None:
    with pytest.raises(ConfigError, match="min_confidence"):
        load_config(overrides={"monolingual.min_confidence": value})


@pytest.mark.parametrize("threshold, all_low", [(0.0, False), (1.0, True)])
@pytest.mark.slow
def test_extract_monolingual_keeps_confident_pairs_and_records_the_rest(
        tmp_path: Path, threshold: float, all_low: bool) -> None:
    config = load_config(overrides={"monolingual.min_confidence": threshold})
    out = tmp_path / "run"
    extract_monolingual([STORY / "version_a", STORY / "version_b"], out, config)
    kept = pl.read_parquet(out / "sentence_pairs.parquet")
    low = pl.read_parquet(out / "low_confidence_pairs.parquet")
    ones = pl.read_parquet(out / "beads.parquet").filter(pl.col("kind") == "1-1")
    assert kept.height + low.height == ones.height > 10
    assert (kept.height == 0) == all_low and (low.height == 0) == (not all_low)
    assert kept["confidence"].is_between(threshold, 1.0).all()
    if all_low:
        assert low["reason"][0].startswith("confidence ") and "min_confidence 1.0" in low["reason"][0]


@pytest.mark.slow
def test_default_threshold_drops_few_pairs_of_the_bundled_story(tmp_path: Path) -> None:
    out = tmp_path / "run"
    extract_monolingual([STORY / "version_a", STORY / "version_b"], out, load_config())
    kept = pl.read_parquet(out / "sentence_pairs.parquet").height
    low = pl.read_parquet(out / "low_confidence_pairs.parquet").height
    assert kept > 0 and low / (kept + low) < 0.1
