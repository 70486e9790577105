"""`build_compression`: the compression-corpus pipeline over a whole input file.

Output directory (a :class:`~cppdb.run.RunDir`: manifest, resumable)::

    records.parquet     one row per input pair, typed columns (schema.COMPRESSION_RECORD_SCHEMA)
    compressions.jsonl  kept pairs: tokens, UPOS, tree, keep labels, compression, links, ...
    rejected.jsonl      rejected pairs with the rule (and detail) that rejected them
    report.json         counts per filter, per alignment method, DTT rule; rate distribution

Chunks of ``batch_size * workers`` pairs are written atomically, so an interrupted run resumes.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from cppdb import schema
from cppdb.workers import resolve_workers
from cppdb.config import Config, resolve
from cppdb.engine.pools import process_pool
from cppdb.errors import ConfigError
from cppdb.extractors.compression.paraphrase_table import table_files
from cppdb.extractors.compression.pipeline import (CompressionPipeline, CompressionSettings,
                                                   Outcome, load_pipeline)
from cppdb.extractors.compression.reader import NewsPair, PairReader
from cppdb.extractors.compression.records import outcome_frame, output_record
from cppdb.extractors.compression.report import build_report
from cppdb.extractors.compression.risk import risk_model_file
from cppdb.extractors.compression.settings import CompressionToml
from cppdb.io import write_json_atomic, write_jsonl_atomic
from cppdb.progress import console, progress_bar
from cppdb.run import RunDir, StageHandle
from cppdb.shipped import model_inputs
from cppdb.stages import (Artifact, External, Plan, Stage, dry_run_notes, plan_stages,
                          run_stages)
from cppdb.text.negation import negation_file

RECORDS = "records.parquet"
COMPRESSIONS, REJECTED = schema.COMPRESSIONS_FILE, schema.REJECTED_FILE
REPORT = schema.COMPRESSION_REPORT_FILE
COMMAND = "build-compression"

RECORD_SCHEMA = schema.COMPRESSION_RECORD_SCHEMA


@dataclass(frozen=True)
class CompressionResult:
    """Where the outputs are, and the report (also in ``report.json``)."""

    out_dir: Path
    compressions: Path
    rejected: Path
    report: dict[str, Any]


# -- worker processes -----------------------------------------------------------------------
_WORKER: CompressionPipeline | None = None


def _init_worker(settings: CompressionSettings, table_path: str | None,
                 table_options: tuple[tuple[str, Any], ...]) -> None:
    global _WORKER
    _WORKER = load_pipeline(settings, table_path, table_options)


def _work(pairs: list[NewsPair]) -> list[Outcome]:
    if _WORKER is None:
        raise RuntimeError("compression worker process was not initialised")
    return _WORKER.process(pairs)


def _resolve_methods(toml: CompressionToml, explicit: bool,
                     paraphrases: str | Path | None) -> list[str]:
    """Methods to run; 'paraphrase' without a table is an error if asked for explicitly, and
    dropped with a loud warning if it only came from the defaults."""
    methods = list(toml.methods)
    if "paraphrase" in methods and paraphrases is None:
        if explicit:
            raise ConfigError("alignment method 'paraphrase' needs a paraphrase table",
                              hint="pass --paraphrases RUN_DIR_OR_TABLE, or leave 'paraphrase' "
                                   "out of --methods")
        console().print("[yellow]warning:[/yellow] no --paraphrases table given: "
                        "paraphrase-aware alignment is OFF for this run (recorded in report.json)")
        methods.remove("paraphrase")
    if not methods:
        raise ConfigError("no alignment method left to run", hint="--methods word,abbrev,...")
    return methods


def effective_config(config: Config, *, methods: Sequence[str] | None = None,
                     dtt: bool | None = None, parser: str | None = None,
                     bert_dir: str | Path | None = None) -> Config:
    """The config with the API/CLI arguments applied (they belong in the run fingerprint)."""
    overrides: dict[str, Any] = {}
    if methods is not None:
        overrides["compression.methods"] = list(methods)
    if dtt is not None:
        overrides["compression.dtt"] = bool(dtt)
    if parser is not None:
        overrides["compression.parser"] = parser
    if bert_dir is not None:
        overrides["compression.bert_dir"] = str(bert_dir)
    return config.with_overrides(overrides)


def _open(input_path: str | Path, config: Config, paraphrases: str | Path | None,
          methods: Sequence[str] | None, dtt: bool | None, parser: str | None,
          bert_dir: str | Path | None) -> tuple[Config, list[Path], list[Stage]]:
    config = effective_config(config, methods=methods, dtt=dtt, parser=parser, bert_dir=bert_dir)
    toml = resolve(CompressionToml, config)
    active = _resolve_methods(toml, methods is not None, paraphrases)
    skipped = [m for m in toml.methods if m not in active]
    toml = replace(toml, methods=tuple(active))
    settings = CompressionSettings.from_config(toml)
    reader = PairReader(input_path)
    models = [negation_file(toml.negation_words),
              risk_model_file(toml.risk_model) if toml.max_risk > 0 else None]
    inputs = ([reader.path] + (table_files(paraphrases) if paraphrases else [])
              + model_inputs(models))
    table_path = str(paraphrases) if paraphrases else None
    table_options = (("min_score", toml.paraphrase_min_score),
                     ("top_percent", toml.paraphrase_top_percent),
                     ("max_chars", toml.paraphrase_max_chars))
    workers = resolve_workers(toml.workers, "compression.workers")
    batch = max(1, toml.batch_size)
    stages = compression_stages(reader, settings, table_path, table_options, workers, batch,
                                skipped, Path(paraphrases) if paraphrases else None)
    return config, inputs, stages


def plan_compression(input_path: str | Path, out_dir: str | Path, config: Config, *,
                     paraphrases: str | Path | None = None,
                     methods: Sequence[str] | None = None, dtt: bool | None = None,
                     parser: str | None = None, bert_dir: str | Path | None = None) -> Plan:
    """The plan ``build_compression`` would run (``--dry-run``); nothing is written."""
    config, inputs, stages = _open(input_path, config, paraphrases, methods, dtt, parser,
                                   bert_dir)
    plan_stages(out_dir, COMMAND, stages, manifest={})
    return plan_stages(out_dir, COMMAND, stages,
                       notes=dry_run_notes(Path(out_dir), config, inputs))


def build_compression(input_path: str | Path, out_dir: str | Path, config: Config, *,
                      paraphrases: str | Path | None = None,
                      methods: Sequence[str] | None = None, dtt: bool | None = None,
                      parser: str | None = None, bert_dir: str | Path | None = None,
                      fresh: bool = False) -> CompressionResult:
    """Build a (sentence, compression) corpus from headline + first-sentence pairs.

    ``paraphrases`` is a run directory (``ranking/ranked_pairs.parquet`` or ``phrase_pairs.parquet`` /
    ``pattern_pairs.parquet``) or a table file (.parquet / .tsv); ``methods``, ``dtt``,
    ``parser`` and ``bert_dir`` override the ``[compression]`` settings.
    """
    config, inputs, stages = _open(input_path, config, paraphrases, methods, dtt, parser,
                                   bert_dir)
    plan_stages(out_dir, COMMAND, stages, manifest={})    # inputs checked before any work
    run = RunDir(out_dir, config, command=COMMAND, inputs=inputs, fresh=fresh)
    run_stages(run, COMMAND, stages)
    report = json.loads(run.path(REPORT).read_text("utf-8"))
    return CompressionResult(run.root, run.path(COMPRESSIONS), run.path(REJECTED), report)


def compression_stages(reader: PairReader, settings: CompressionSettings,
                       table_path: str | None, table_options: tuple[tuple[str, Any], ...],
                       workers: int, batch: int, skipped: list[str],
                       paraphrases: Path | None) -> list[Stage]:
    """The declared stages of ``build-compression`` (see the module docstring)."""
    loaded: list[CompressionPipeline] = []

    def local(run: RunDir) -> CompressionPipeline:
        if not loaded:       # the parser and the table load once, only when a stage runs
            loaded.append(load_pipeline(settings, table_path, table_options))
            run.record_backend("ud_parser", loaded[0].parser.describe())
            if loaded[0].bert is not None:
                run.record_backend("bert_align", loaded[0].bert.describe())
        return loaded[0]

    inputs: tuple[Artifact | External, ...] = (External("the input pairs", (reader.path,)),)
    if paraphrases is not None:
        inputs += (External("the paraphrase table", (paraphrases,)),)
    return [
        Stage("compress", inputs, (RECORDS,),
              lambda st: _compress_stage(st, reader, local(st.run), settings, table_path,
                                         table_options, workers, batch), chunked=True,
              doc="parse, align, compress (batch_size x workers pairs per chunk)"),
        Stage("write", (Artifact(RECORDS, tuple(RECORD_SCHEMA)),), (COMPRESSIONS, REJECTED, REPORT),
              lambda st: _write_stage(st, local(st.run), settings, skipped),
              doc="compressions.jsonl, rejected.jsonl, report.json"),
    ]


def _write_stage(stage: StageHandle, local: CompressionPipeline,
                 settings: CompressionSettings, skipped: list[str]) -> None:
    run = stage.run
    records = run.read(RECORDS)
    for name, status in ((COMPRESSIONS, "kept"), (REJECTED, "rejected")):
        rows = records.filter(pl.col("status") == status).iter_rows(named=True)
        stage.count(name, write_jsonl_atomic(run.path(name), map(output_record, rows)))
    report = build_report(records, settings, parser=local.parser.describe(),
                          paraphrase_table=_table_info(local), skipped_methods=skipped)
    write_json_atomic(run.path(REPORT), report)
    stage.count(REPORT, 1)


def _table_info(pipeline: CompressionPipeline) -> dict[str, Any] | None:
    table = pipeline.table
    if table is None:
        return None
    return {"source": table.source, "pairs": table.n_pairs, "scored": table.scored}


def _compress_stage(stage: StageHandle, reader: PairReader, local: CompressionPipeline,
                    settings: CompressionSettings, table_path: str | None,
                    table_options: tuple[tuple[str, Any], ...], workers: int, batch: int) -> None:
    run, chunk = stage.run, batch * workers
    with progress_bar(len(reader), "compressing") as advance:
        if workers <= 1:
            def compute(start: int, stop: int) -> pl.DataFrame:
                return outcome_frame(local.process(reader.read(start, stop)))

            run.run_chunked(stage, RECORDS, len(reader), chunk, compute, advance)
            return
        # spawn, not fork: forking after polars/jieba started threads can deadlock the child
        with process_pool(workers, start_method="spawn", initializer=_init_worker,
                          initargs=(settings, table_path, table_options)) as pool:
            def compute_parallel(start: int, stop: int) -> pl.DataFrame:
                pairs = reader.read(start, stop)
                parts = [pairs[i:i + batch] for i in range(0, len(pairs), batch)]
                return outcome_frame([o for part in pool.map(_work, parts) for o in part])

            run.run_chunked(stage, RECORDS, len(reader), chunk, compute_parallel, advance)
