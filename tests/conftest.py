"""Shared fixtures: offline settings, tiny random models built locally, a local Spark session."""
from __future__ import annotations

import os
import sys

# A hub call would hang for ~70 s on a machine without internet: never make one in tests.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests import tiny_models  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer random BertForMaskedLM + fast tokenizer, saved with save_pretrained."""
    return tiny_models.build_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def tiny_sentence_transformer_dir(tmp_path_factory: pytest.TempPathFactory,
                                  tiny_bert_dir: Path) -> Path:
    """A SentenceTransformer over the tiny BERT (mean pooling, normalised), saved with .save()."""
    return tiny_models.build_tiny_sentence_transformer(
        tmp_path_factory.mktemp("tiny-st") / "model", tiny_bert_dir)


@pytest.fixture(scope="session")
def tiny_marian_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer random MarianMTModel zh->en with sentencepiece tokenizers."""
    return tiny_models.build_tiny_marian(tmp_path_factory.mktemp("tiny-marian"))


@pytest.fixture(scope="session")
def ranked_bilingual_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled zh-en sample through extract-bilingual and rank (no sentence encoder)."""
    from cppdb.config import load_config
    from cppdb.extractors.bilingual import extract_bilingual
    from cppdb.rank.pipeline import rank_run

    run = tmp_path_factory.mktemp("ranked-bilingual") / "bilingual"
    config = load_config(overrides={"annotate.workers": 1})
    extract_bilingual(DATA / "parallel" / "sample.zh", DATA / "parallel" / "sample.en", run, config)
    rank_run(run, config.with_overrides(["features.embedding=false"]))
    return run


@pytest.fixture(scope="session")
def spark():
    """One local[2] SparkSession for every engine-parity test (the [spark] extra + Java)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)   # workers need cppdb's deps
    session = (SparkSession.builder.master("local[2]").appName("cppdb-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
