"""The Python API: every CLI command is a thin wrapper over one of these functions.

Names are imported lazily (PEP 562), so ``from cppdb import api`` is cheap and a function
only pulls in the libraries it needs when it is first used.

>>> from cppdb import api
>>> config = api.load_config(overrides=["annotate.workers=1"])
>>> result = api.extract_bilingual("data/parallel/sample.zh", "data/parallel/sample.en",
...                                "runs/demo", config)                      # doctest: +SKIP
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    # configuration and environment
    "load_config": "cppdb.config",
    "doctor_rows": "cppdb.doctor",
    "fetch_model": "cppdb.models",
    # annotation (cppdb annotate)
    "annotate_texts": "cppdb.annotate.pipeline",
    "run_annotate": "cppdb.annotate.run",
    "read_parallel": "cppdb.readers.parallel",
    "read_pretokenized": "cppdb.readers.parallel",
    "open_parallel_input": "cppdb.readers.parallel",   # streamed rows, bounded memory
    # word alignment (cppdb align-words)
    "align_tokenized": "cppdb.align.words.api",
    # bilingual extraction (cppdb extract-bilingual) and export formats
    "extract_bilingual": "cppdb.extractors.bilingual",
    "write_pairs": "cppdb.export",
    "read_pairs": "cppdb.export",
    # monolingual (cppdb ocr, align-sentences, extract-monolingual)
    "read_document": "cppdb.readers.documents",
    "read_version_dir": "cppdb.readers.documents",
    "split_sentences": "cppdb.text.segment",
    "ocr_to_jsonl": "cppdb.ocr.batch",
    "run_ocr": "cppdb.ocr.batch",
    "align_sentence_files": "cppdb.align.sentences.files:align_files",
    "extract_monolingual": "cppdb.extractors.monolingual",
    # post-processing (cppdb rank, score, export, evaluate)
    "rank_run": "cppdb.rank.pipeline",
    "read_ranked": "cppdb.rank.pipeline",
    "score_pairs": "cppdb.rank.pipeline",
    "score_file": "cppdb.rank.pipeline",
    "export_run": "cppdb.export_ranked",
    "evaluate_run": "cppdb.evaluate.api",
    "evaluate_run_signed": "cppdb.evaluate.api",
    "write_sheet": "cppdb.evaluate.api",
    "sheet_table": "cppdb.evaluate.api",
    # using a database (cppdb lookup, report, export --format hf)
    "open_database": "cppdb.lookup",
    "write_report": "cppdb.report",
    "write_hf_dataset": "cppdb.export_hf",
    # compression corpus (cppdb build-compression)
    "build_compression": "cppdb.extractors.compression.builder",
    # a compressor trained on the corpus (cppdb train-compressor, compress)
    "train_compressor": "cppdb.compressor.api",
    "load_compressor": "cppdb.compressor.api",
    "compress_file": "cppdb.compressor.files",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"cppdb.api has no attribute {name!r}")
    module_name, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module_name), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
