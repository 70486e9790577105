"""Every command names the model files it reads among its inputs (cppdb.shipped), so that an
upgrade that changes one is noticed when a run resumes (the rank case: tests/rank)."""
from __future__ import annotations

from pathlib import Path

from cppdb.config import load_config
from cppdb.extractors.bilingual import BilingualInputs, run_inputs
from cppdb.extractors.compression.builder import _open as open_compression
from cppdb.extractors.monolingual import monolingual_inputs
from cppdb.run import fingerprint_of
from cppdb.shipped import RESOURCES, model_inputs


def _names(paths) -> set[str]:
    return {Path(p).name for p in paths}


def test_model_inputs_keeps_files_only(tmp_path):
    (tmp_path / "a.json").write_text("{}")
    assert model_inputs([tmp_path / "a.json", "", None, tmp_path / "missing.json",
                         str(tmp_path / "a.json")]) == [tmp_path / "a.json"]


def test_bilingual_names_its_tuned_ensemble(data_dir):
    corpus = BilingualInputs(data_dir / "parallel" / "sample.zh",
                             data_dir / "parallel" / "sample.en", None, None)
    assert _names(run_inputs(load_config(), corpus)) == {"sample.zh", "sample.en"}
    fast = load_config(overrides=['align_words.tuned_file="builtin:fast"'])
    assert RESOURCES / "ensembles" / "fast.json" in run_inputs(fast, corpus)


def test_monolingual_names_its_confidence_model(tmp_path):
    assert "sentence_confidence.json" in _names(
        monolingual_inputs([tmp_path / "a", tmp_path / "b"], load_config(), None))


def test_compression_names_its_risk_model_and_negation_words(data_dir):
    def inputs(*overrides: str) -> set[str]:
        config = load_config(overrides=list(overrides))
        return _names(open_compression(data_dir / "news" / "pairs.jsonl", config, None,
                                       None, None, None, None)[1])
    assert {"pairs.jsonl", "compression_risk.json", "negation_words.txt"} <= inputs()
    assert "compression_risk.json" not in inputs("compression.max_risk=0")


def test_a_paraphrase_run_counts_by_the_table_read_not_its_bookkeeping(data_dir, tmp_path):
    """The run's lock (a pid) and manifest change whenever the run is reopened: a build that
    read its ranked table must still resume afterwards."""
    run = tmp_path / "run"
    (run / "ranking").mkdir(parents=True)
    (run / "ranking" / "ranked_pairs.parquet").write_bytes(b"table")
    (run / "phrase_pairs.parquet").write_bytes(b"pairs")
    (run / ".lock").write_text("123")
    (run / "manifest.json").write_text("{}")
    config = load_config()

    def inputs() -> list[Path]:
        return open_compression(data_dir / "news" / "pairs.jsonl", config, run,
                                None, None, None, None)[1]
    assert run / "ranking" / "ranked_pairs.parquet" in inputs()
    assert not {".lock", "manifest.json", "phrase_pairs.parquet"} & _names(inputs())
    before = fingerprint_of(config, inputs())
    (run / ".lock").write_text("456")
    (run / "manifest.json").write_text('{"status": "done"}')
    assert fingerprint_of(config, inputs()) == before
