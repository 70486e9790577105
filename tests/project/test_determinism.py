"""Same command, same input → byte-identical Parquet artifacts (bilingual, monolingual, rank)."""
from __future__ import annotations

from pathlib import Path

import pytest

from cppdb.config import load_config

DATA = Path(__file__).parents[2] / "data"
FAST = {"annotate.workers": 1, "features.embedding": False}


def _parquet_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.parquet"))}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("det-corpus")
    for side in ("zh", "en"):
        lines = (DATA / "parallel" / f"sample.{side}").read_text("utf-8").splitlines()[:80]
        (root / f"s.{side}").write_text("\n".join(lines) + "\n", "utf-8")
    return root / "s.zh", root / "s.en"


def test_bilingual_and_rank_twice_are_byte_identical(corpus, tmp_path):
    from cppdb.extractors.bilingual import extract_bilingual
    from cppdb.rank.pipeline import rank_run

    config = load_config(overrides=FAST)
    runs = []
    for name in ("a", "b"):
        extract_bilingual(*corpus, tmp_path / name, config)
        rank_run(tmp_path / name, config)
        runs.append(_parquet_bytes(tmp_path / name))
    assert runs[0].keys() == runs[1].keys() and "phrase_pairs.parquet" in runs[0]
    assert any(k.startswith("ranking") or "/" in k for k in runs[0])
    assert [k for k in runs[0] if runs[0][k] != runs[1][k]] == []


@pytest.mark.slow
def test_monolingual_twice_is_byte_identical(tmp_path):
    from cppdb.extractors.monolingual import extract_monolingual

    config = load_config(overrides=FAST)
    versions = [DATA / "story" / "version_a", DATA / "story" / "version_b"]
    runs = []
    for name in ("a", "b"):
        extract_monolingual(versions, tmp_path / name, config)
        runs.append(_parquet_bytes(tmp_path / name))
    assert "sentence_pairs.parquet" in runs[0]
    assert [k for k in runs[0] if runs[0][k] != runs[1][k]] == []
