"""Prefetching (``align_words.prefetch``): while thot trains on its sample, pool workers compute
the fixed aligners' matrices of the slices still to align; the decoding pass reads them and
gives the links it would have computed itself, and leaves no file behind."""
from __future__ import annotations

import json
import time
from pathlib import Path

import polars as pl
import pytest

import cppdb.align.words.api as api
from cppdb.align.words import corpus as align_corpus
from cppdb.align.words.settings import AlignWordsSettings
from cppdb.config import load_config, resolve
from cppdb.extractors import bilingual

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "parallel"
#: thot + dictionary (float64 numpy, exact); 60 pairs in chunks of 20, a sample of 30
SETTINGS = {"annotate.workers": 1, "bilingual.workers": 1, "bilingual.chunk_size": 20,
            "align_words.train_sample": 30, "align_words.aligners": ["thot", "dictionary"],
            "align_words.tuned_file": "builtin:fast"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("prefetch-corpus")
    for lang in ("zh", "en"):
        lines = (SAMPLE / f"sample.{lang}").read_text("utf-8").splitlines()[:60]
        (root / f"c.{lang}").write_text("\n".join(lines) + "\n", "utf-8")
    return root / "c.zh", root / "c.en"


def _run(out: Path, corpus: tuple[Path, Path], **extra) -> Path:
    config = load_config(overrides={**SETTINGS, **extra})
    return bilingual.extract_bilingual(corpus[0], corpus[1], out, config).run_dir


def _tables(run: Path) -> dict[str, pl.DataFrame]:
    return {name: pl.read_parquet(run / name)
            for name in ("alignment.parquet", "phrase_pairs.parquet", "pattern_pairs.parquet")}


def _align_notes(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text("utf-8"))["stages"]["align"]["notes"]


def _training_waits_for_prefetch(monkeypatch, run: Path, expected_slices: int) -> None:
    """Training returns only once every slice is on disk, so the pass reads all of them."""
    real = align_corpus.train_ensemble
    folder = run / align_corpus.ALIGN_PREFETCH

    def slow_train(zh, en, settings):
        trained = real(zh, en, settings)
        deadline = time.monotonic() + 120
        while len(list(folder.glob("*.npz"))) < expected_slices:
            assert time.monotonic() < deadline, "prefetch workers wrote no slices"
            time.sleep(0.2)
        return trained

    monkeypatch.setattr(align_corpus, "train_ensemble", slow_train)


@pytest.mark.slow
def test_prefetched_matrices_give_the_links_of_the_plain_pass(tmp_path, corpus, monkeypatch):
    plain = _tables(_run(tmp_path / "plain", corpus, **{"align_words.workers": 2,
                                                       "align_words.prefetch": False}))
    single = _tables(_run(tmp_path / "single", corpus, **{"align_words.workers": 1}))
    # 3 chunks, each cut into 2 slices per worker
    _training_waits_for_prefetch(monkeypatch, tmp_path / "prefetched", expected_slices=12)
    run = _run(tmp_path / "prefetched", corpus, **{"align_words.workers": 2})
    notes = _align_notes(run)
    assert notes["prefetch"] == {"aligners": ["dictionary"], "slices": 12}
    assert notes["prefetched_slices"] == 12
    assert not (run / align_corpus.ALIGN_PREFETCH).exists()
    prefetched = _tables(run)
    assert prefetched["alignment.parquet"]["link_zh"].list.len().sum() > 100
    for name, frame in prefetched.items():
        assert plain[name].equals(frame), name
        assert single[name].equals(frame), name


def test_no_prefetch_with_one_worker_or_when_switched_off():
    class Step:
        engine_name = None

    for extra in ({"align_words.workers": 1}, {"align_words.prefetch": False}):
        settings = resolve(AlignWordsSettings, load_config(overrides={**SETTINGS, **extra}))
        workers = api.configured_workers(settings)
        assert align_corpus._start_prefetch(Step(), settings, 60, 20, workers) is None
    remote = Step()
    remote.engine_name = "spark"
    settings = resolve(AlignWordsSettings,
                       load_config(overrides={**SETTINGS, "align_words.workers": 2}))
    assert align_corpus._start_prefetch(remote, settings, 60, 20, 2) is None


def test_a_slice_of_another_length_is_refused(tmp_path):
    import numpy as np

    from cppdb.align.words.prefetch import _write_slice, read_slice
    from cppdb.errors import RunStateError

    settings = resolve(AlignWordsSettings, load_config(overrides=SETTINGS))
    zh = [["我们", "走"], ["他", "来"]]
    en = [["we", "go"], ["he", "comes"]]
    ensemble = api.train_ensemble(zh, en, settings)
    _write_slice(tmp_path / "000000000000-000000000002.npz",
                 {"dictionary": [np.zeros((2, 2), dtype=np.float32)]}, [])
    ready = read_slice(tmp_path, 0, 2)
    assert ready is not None and len(ready[0]["dictionary"]) == 1
    with pytest.raises(RunStateError, match="do not match their slice"):
        api.align_with(ensemble, zh, en, prefetched=ready)
    assert read_slice(tmp_path, 2, 4) is None and read_slice(None, 0, 2) is None


def test_an_interrupted_align_stage_resumes_without_training_again(monkeypatch, corpus,
                                                                   tmp_path):
    """The trained ensemble is kept in the run until every chunk is aligned: a resume
    decodes the chunks left with it (no second training) and gives the uninterrupted links."""
    clean = _tables(_run(tmp_path / "clean", corpus))
    real_part = align_corpus.align_part
    calls = {"n": 0}

    def interrupted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("interrupted after the first chunk")
        return real_part(*args, **kwargs)

    monkeypatch.setattr(align_corpus, "align_part", interrupted)
    out = tmp_path / "resumed"
    with pytest.raises(RuntimeError, match="interrupted"):
        _run(out, corpus)
    assert (out / align_corpus.ALIGN_TRAINED).exists()
    monkeypatch.setattr(align_corpus, "align_part", real_part)

    def no_training(*args, **kwargs):
        raise AssertionError("the resumed stage trained again")

    monkeypatch.setattr(align_corpus, "train_ensemble", no_training)
    resumed = _tables(_run(out, corpus))
    assert not (out / align_corpus.ALIGN_TRAINED).exists()
    assert _align_notes(out)["resumed_training"] == align_corpus.ALIGN_TRAINED
    for name, table in clean.items():
        assert resumed[name].equals(table), name
