"""cppdb export --format hf: loads with the `datasets` library ([hf] extra)."""
from __future__ import annotations

import polars as pl
import pytest



@pytest.fixture(scope="module")
def hf_dir(ranked_bilingual_run, tmp_path_factory):
    from cppdb.export_ranked import export_run

    out = tmp_path_factory.mktemp("hf") / "dataset"
    path, rows = export_run(ranked_bilingual_run, format="hf", out=out)
    assert path == out and rows > 0
    return out


def _ranked(run) -> pl.DataFrame:
    return pl.read_parquet(run / "ranking" / "ranked_pairs.parquet")


def test_loads_with_datasets_parquet_builder(hf_dir, ranked_bilingual_run, tmp_path):
    import datasets

    loaded = datasets.load_dataset("parquet", data_dir=str(hf_dir),
                                   cache_dir=str(tmp_path / "cache"))
    ranked = _ranked(ranked_bilingual_run)
    assert loaded["train"].num_rows == ranked.height           # every pair exactly once
    assert {"source", "target", "score", "tier", "pivots",
            "documents"} <= set(loaded["train"].column_names)


@pytest.mark.parametrize("config, tiers", [
    ("phrase-S", {"S"}), ("phrase-M", {"S", "M"}), ("pattern-L", {"S", "M", "L"}),
    ("pattern", {"S", "M", "L", "XL"}),
])
def test_configs_are_nested_tiers(hf_dir, ranked_bilingual_run, tmp_path, config, tiers):
    import datasets

    loaded = datasets.load_dataset(str(hf_dir), config, cache_dir=str(tmp_path / "cache"))
    pair_type = config.split("-")[0]
    expected = _ranked(ranked_bilingual_run).filter(pl.col("type") == pair_type,
                                                    pl.col("tier").is_in(list(tiers)))
    assert loaded["train"].num_rows == expected.height
    assert set(loaded["train"]["tier"]) == tiers and set(loaded["train"]["type"]) == {pair_type}


def test_default_config_and_card(hf_dir, ranked_bilingual_run, tmp_path):
    import datasets

    loaded = datasets.load_dataset(str(hf_dir), cache_dir=str(tmp_path / "cache"))
    assert loaded["train"].num_rows == _ranked(ranked_bilingual_run).height
    card = (hf_dir / "README.md").read_text("utf-8")
    assert card.startswith("---\n") and "license: unknown" in card
    ranked = _ranked(ranked_bilingual_run)
    for (pair_type, tier), part in ranked.group_by(["type", "tier"]):
        assert f"| {pair_type} | {tier} | {part.height:,} |" in card     # counts per band
    assert "extract-bilingual" in card                               # how it was built
