"""`cppdb extract-bilingual` as a plain function: annotate → align → extract → pivot.

Each stage writes its artifacts into the run directory and is skipped when already done
(``cppdb.run.RunDir``); the extract stage is chunked, so an interrupted run resumes at the
first missing chunk.

Artifacts: ``annotations.parquet`` (annotation colleague's schema), ``alignment.parquet``
(``id``, ``link_zh``, ``link_en``), ``phrase_occurrences.parquet`` (phrase and pattern
occurrences, :data:`~cppdb.extractors.occurrences.OCCURRENCE_SCHEMA`), ``phrase_pairs.parquet``
and ``pattern_pairs.parquet`` (``cppdb.schema.PAIR_COLUMNS`` + source_count, target_count,
slot_signature), ``rejected.jsonl`` (input lines kept out, with the reason), and when a
statistical aligner ran, ``lex_en_given_zh.parquet`` / ``lex_zh_given_en.parquet`` (columns
zh, en, prob) for the translation-probability features.
"""
from __future__ import annotations

import shutil
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from cppdb import schema as S
from cppdb.align.words.api import configured_workers
from cppdb.align.words.corpus import align_corpus, may_chunk, read_annotation_columns
from cppdb.align.words.ensemble import tuned_file_path
from cppdb.annotate.pipeline import annotate_into, stage_annotate_input
from cppdb.annotate.settings import AnnotateSettings
from cppdb.annotate.staging import STAGED_INPUT
from cppdb.config import Config, load_config, resolve, sections_read, settings_from
from cppdb.engine import LocalPool, make_engine
from cppdb.errors import BadInputError
from cppdb.extractors.pivot_sql import pivot_sql
from cppdb.io import ROW_GROUP_ROWS, write_parquet_atomic
from cppdb.extractors.occurrences import (ALIGNMENT_SCHEMA, COUNT_MODES, LINK_EN, LINK_ZH,
                                          OCCURRENCE_SCHEMA, ExtractionSettings, extract_range)
from cppdb.extractors.near_identity import near_identity_reason
from cppdb.extractors.pivot import PivotSettings, empty_pair_table, pivot
from cppdb.extractors.settings import BilingualRun, BilingualSettings
from cppdb.progress import progress_bar
from cppdb.readers.parallel import open_parallel_input, read_lines
from cppdb.readers.pharaoh import parse_links
from cppdb.run import RunDir, part_path
from cppdb.shipped import model_inputs
from cppdb.stages import (Artifact, External, Plan, Stage, dry_run_notes, plan_stages,
                          run_stages)
from cppdb.workers import resolve_workers, split_range

COMMAND = "extract-bilingual"
ANNOTATIONS, ALIGNMENT, OCCURRENCES = S.ANNOTATIONS_FILE, S.ALIGNMENT_FILE, S.OCCURRENCES_FILE
PHRASE_PAIRS, PATTERN_PAIRS = S.PHRASE_PAIRS_FILE, S.PATTERN_PAIRS_FILE
PIVOT_WRITES = (PHRASE_PAIRS, PATTERN_PAIRS, S.NEAR_IDENTITY_PAIRS)
REJECTED = S.REJECTED_FILE
LEX_EN_GIVEN_ZH, LEX_ZH_GIVEN_EN = S.LEX_EN_GIVEN_ZH_FILE, S.LEX_ZH_GIVEN_EN_FILE
_COUNT_PARTS = "consistency_counts.parts"
PIVOT_WORK = ".pivot-{kind}.work"          # the pivot's work folder per kind (removed after)
PIVOT_NEAR = ".pivot-{kind}.near.parquet"  # its near-identity pairs per kind (removed after)


@dataclass(frozen=True)
class BilingualResult:
    """What a run produced: paths and counts per stage (also in ``manifest.json``)."""

    run_dir: Path
    phrase_pairs: Path
    pattern_pairs: Path
    counts: dict[str, int] = field(default_factory=dict)
    aligned_phrase_pairs: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"run_dir": str(self.run_dir), "phrase_pairs": str(self.phrase_pairs),
                "pattern_pairs": str(self.pattern_pairs), "counts": self.counts,
                "aligned_phrase_pairs_per_mode": self.aligned_phrase_pairs}


# -- inputs ---------------------------------------------------------------------------------
def read_pharaoh(path: str | Path) -> list[list[tuple[int, int]]]:
    """One line of ``i-j`` links (0-based, zh first) per sentence pair."""
    return [parse_links(line, f"{path}, line {number}")
            for number, line in enumerate(read_lines(path, what="alignment"), start=1)]


# -- stages ---------------------------------------------------------------------------------
def _annotate(st: Any, settings: AnnotateSettings, inputs: "BilingualInputs") -> None:
    source = open_parallel_input(inputs.zh, inputs.en, inputs.parallel,
                                 max_chars=settings.max_chars)
    staged = stage_annotate_input(st, source, settings)    # streamed: the driver holds a batch
    if staged.pairs == 0:
        staged.path.unlink(missing_ok=True)
        raise BadInputError("no usable sentence pair in the input",
                            hint=f"see {st.run.path(REJECTED)} for the reasons")
    annotate_into(st, source, settings, staged=staged)


def _links_from_pharaoh(path: str | Path, ann: pl.DataFrame) -> pl.DataFrame:
    lines = read_pharaoh(path)
    ids = ann[S.ID].to_list()
    if ids and max(ids) >= len(lines):
        raise BadInputError(f"alignment file {path} has {len(lines)} lines, the input has "
                            f"at least {max(ids) + 1}",
                            hint="give one Pharaoh line per input line (empty line = no links)")
    zh_len = ann[S.ann("zh", "tokens")].list.len().to_list()
    en_len = ann[S.ann("en", "tokens")].list.len().to_list()
    link_zh, link_en = [], []
    for sid, nz, ne in zip(ids, zh_len, en_len):
        links = lines[sid]
        bad = [f"{i}-{j}" for i, j in links if i >= nz or j >= ne]
        if bad:
            raise BadInputError(
                f"alignment file {path}, line {sid + 1}: link(s) {', '.join(bad[:5])} point "
                f"past the tokens ({nz} zh, {ne} en)",
                hint="--alignment needs the tokenisation it was made on: use --parallel with "
                     "the pre-tokenised text")
        link_zh.append([i for i, _ in links])
        link_en.append([j for _, j in links])
    return pl.DataFrame({S.ID: ids, LINK_ZH: link_zh, LINK_EN: link_en}, schema=ALIGNMENT_SCHEMA)


def _align(st: Any, settings: BilingualRun, alignment_path: Path | None) -> None:
    """The word aligners (:func:`cppdb.align.words.corpus.align_corpus`), or the links of
    the given Pharaoh file."""
    if alignment_path is None:
        align_corpus(st, settings.align_words, settings.bilingual.chunk_size)
        return
    links = _links_from_pharaoh(alignment_path, read_annotation_columns(st.run.path(ANNOTATIONS)))
    st.note("source", f"pharaoh:{alignment_path}")
    st.count("links", int(links[LINK_ZH].list.len().sum() or 0))
    st.write_parquet(ALIGNMENT, links)


def _extract_part(ann_path: str, align_path: str, settings: ExtractionSettings,
                  counts_dir: str, start: int, stop: int) -> pl.DataFrame:
    """One chunk on an engine's worker: its counts (written first), then its frame."""
    frame, counts = extract_range(ann_path, align_path, start, stop, settings)
    write_parquet_atomic(part_path(Path(counts_dir), start),
                         pl.DataFrame([counts], schema=list(COUNT_MODES[:len(counts)]),
                                      orient="row"))
    return frame


def _extract(st: Any, bilingual: BilingualSettings) -> None:
    """Extract phrase and pattern occurrences (chunked, resumable; the runner puts the chunks
    on the run's engine, and what runs here is spread over a process pool)."""
    run = st.run
    settings = ExtractionSettings.of(bilingual)
    n_rows = run.scan(ANNOTATIONS).select(pl.len()).collect().item()
    workers = resolve_workers(bilingual.workers, "bilingual.workers")
    chunk = bilingual.chunk_size
    ann_path, align_path = run.path(ANNOTATIONS), run.path(ALIGNMENT)
    counts_dir = run.path(_COUNT_PARTS)
    counts_dir.mkdir(exist_ok=True)
    pools = LocalPool(workers if n_rows > bilingual.min_rows_for_pool else 1)

    def compute(start: int, stop: int) -> pl.DataFrame:
        ranges = split_range(start, stop, workers * 4)
        pool = pools.get()                 # started on the first chunk computed here
        if pool is None:
            results = [extract_range(ann_path, align_path, a, b, settings) for a, b in ranges]
        else:
            futures = [pool.submit(extract_range, ann_path, align_path, a, b, settings)
                       for a, b in ranges]
            results = [f.result() for f in futures]
        totals = [sum(r[1][k] for r in results) for k in range(len(settings.report_rules))]
        write_parquet_atomic(part_path(counts_dir, start),
                             pl.DataFrame([totals], schema=list(COUNT_MODES[:len(totals)]),
                                          orient="row"))
        frames = [r[0] for r in results if r[0].height]
        return pl.concat(frames) if frames else pl.DataFrame(schema=OCCURRENCE_SCHEMA)

    shipped = partial(_extract_part, str(ann_path), str(align_path), settings,
                      str(counts_dir))
    try:
        with progress_bar(n_rows, "extract") as advance:
            st.run_parts(OCCURRENCES, n_rows, chunk, compute,
                         shipped=lambda: nullcontext(shipped), progress=advance)
            kinds = (run.scan(OCCURRENCES).group_by("kind").agg(pl.len()).collect())
            for kind, n in kinds.iter_rows():
                st.count(f"{kind}_occurrence_rows", n)
            st.note("consistency", settings.rule.label)
            st.note("aligned_phrase_pairs_per_mode", _sum_counts(counts_dir, settings))
    finally:
        pools.shutdown()
    shutil.rmtree(counts_dir, ignore_errors=True)


def _sum_counts(counts_dir: Path, settings: ExtractionSettings) -> dict[str, int]:
    files = sorted(counts_dir.glob("part-*.parquet"))
    if not files or not settings.report_rules:
        return {}
    sums = pl.read_parquet(files).sum().row(0, named=True)
    return {rule.label: int(sums[mode]) for mode, rule in zip(COUNT_MODES, settings.report_rules)}


def _pivot(st: Any, bilingual: BilingualSettings) -> None:
    """Pivot occurrences into phrase_pairs.parquet and pattern_pairs.parquet (on the SQL
    session the run's engine lends, if any); the near-identity class
    (:mod:`cppdb.extractors.near_identity`) goes to its own file."""
    run = st.run
    engine = run.engine
    settings = pivot_settings(bilingual)
    separate = bilingual.separate_near_identity
    run.scan(OCCURRENCES)                              # a clear error when it is missing
    held: list[Path] = []
    for kind, artifact in (("phrase", PHRASE_PAIRS), ("pattern", PATTERN_PAIRS)):
        work = run.path(PIVOT_WORK.format(kind=kind))
        pruned: dict[str, int] = {}
        parts = pivot_pairs(engine, run.path(OCCURRENCES), kind, work, settings, pruned)
        for rule, count in pruned.items():
            st.count(f"pruned_{kind}_units_{rule}", count)
        frame = pl.scan_parquet(parts) if parts else empty_pair_table().lazy()
        frame = frame.with_columns(near_identity_reason())
        near = run.path(PIVOT_NEAR.format(kind=kind))
        frame.filter(pl.col(S.REASON).is_not_null()).sink_parquet(
            near, row_group_size=ROW_GROUP_ROWS)
        held.append(near)
        for reason, count in _reason_counts(near).items():
            st.count(f"near_identity_{kind}_{reason}", count)
        kept = frame.filter(pl.col(S.REASON).is_null()) if separate else frame
        st.write_parquet(artifact, kept.drop(S.REASON))
        shutil.rmtree(work, ignore_errors=True)
    st.write_parquet(S.NEAR_IDENTITY_PAIRS, pl.scan_parquet(held))
    for path in held:
        path.unlink()


def pivot_pairs(engine: Any, occurrences: Path, kind: str, work_dir: Path,
                settings: PivotSettings, pruned: dict[str, int] | None = None) -> list[Path]:
    """The pair files of one occurrence kind: the polars pivot, or its Spark SQL twin when
    the engine lends a SQL session (the same tables; tests/engine/test_spark_engine.py)."""
    session = engine.sql_session() if engine is not None else None
    if session is None:
        occ = pl.scan_parquet(occurrences).filter(pl.col(S.KIND) == kind)
        return pivot(occ, kind, work_dir, settings, pruned)

    return pivot_sql(session, occurrences, kind, work_dir, settings, pruned)


def _reason_counts(path: Path) -> dict[str, int]:
    counts = pl.scan_parquet(path).group_by(S.REASON).len().collect()
    return dict(zip(counts[S.REASON].to_list(), counts["len"].to_list(), strict=True))


@dataclass(frozen=True)
class BilingualInputs:
    """The user's files: raw ``zh``/``en`` or pre-tokenised ``parallel``, and a Pharaoh
    ``alignment`` that replaces the word aligner."""

    zh: Path | None = None
    en: Path | None = None
    parallel: Path | None = None
    alignment: Path | None = None

    def files(self) -> list[Path]:
        return [p for p in (self.zh, self.en, self.parallel, self.alignment) if p is not None]

    def corpus(self) -> External:
        if self.parallel is not None and (self.zh is not None or self.en is not None):
            raise BadInputError("give either --parallel or --zh/--en, not both")
        if self.parallel is None and (self.zh is None or self.en is None):
            raise BadInputError("missing input: give --zh FILE and --en FILE, or --parallel FILE",
                                hint="--parallel takes pre-tokenised 'zh tokens ||| en tokens' "
                                     "lines")
        paths = (self.parallel,) if self.parallel is not None else (self.zh, self.en)
        return External("the parallel corpus", tuple(Path(p) for p in paths if p is not None))


_ANN_KEYS = (S.ID, S.ann("zh", "tokens"), S.ann("en", "tokens"))


def bilingual_stages(settings: BilingualRun, inputs: BilingualInputs) -> list[Stage]:
    """The declared stages of ``extract-bilingual`` (see the module docstring).  Their chunks
    go where the run's engine puts them (``StageHandle.run_parts``), and the pivot runs on
    the SQL session the engine lends, if any."""
    align_reads: tuple[Artifact | External, ...] = (Artifact(ANNOTATIONS, _ANN_KEYS),)
    if inputs.alignment is not None:
        align_reads += (External("the Pharaoh alignment", (Path(inputs.alignment),)),)
    return [
        Stage("annotate", (inputs.corpus(),), (ANNOTATIONS, REJECTED),
              lambda st: _annotate(st, settings.annotate, inputs), chunked=True,
              scratch=(STAGED_INPUT,),
              doc="tokenise, tag, parse and chunk both sides"),
        Stage("align", align_reads, (ALIGNMENT,),
              lambda st: _align(st, settings, inputs.alignment),
              optional=(LEX_EN_GIVEN_ZH, LEX_ZH_GIVEN_EN),
              chunked=inputs.alignment is None and may_chunk(settings.align_words),
              doc="word alignment (statistical aligner or the given Pharaoh file)"),
        Stage("extract", (Artifact(ANNOTATIONS, _ANN_KEYS),
                          Artifact(ALIGNMENT, (S.ID, LINK_ZH, LINK_EN))), (OCCURRENCES,),
              lambda st: _extract(st, settings.bilingual), chunked=True,
              scratch=(_COUNT_PARTS,),
              doc="aligned phrase and pattern occurrences"),
        Stage("pivot", (Artifact(OCCURRENCES, ("kind",)),), PIVOT_WRITES,
              lambda st: _pivot(st, settings.bilingual),
              scratch=(PIVOT_WORK.format(kind="*"), PIVOT_NEAR.format(kind="*")),
              doc="pivot through English, p(z2|z1)"),
    ]


def run_stage(run: Any, config: Config, name: str) -> None:
    """Run one declared stage of :func:`bilingual_stages` on the artifacts already in ``run``
    (benchmarks: extract, pivot); skipped when done.  The corpus is a placeholder: only the
    annotate stage reads it."""
    stages = bilingual_stages(resolve(BilingualRun, config),
                              BilingualInputs(parallel=Path("(not read)")))
    run_stages(run, COMMAND, [s for s in stages if s.name == name], finish=False)


def pivot_settings(bilingual: BilingualSettings) -> PivotSettings:
    """The pivot and its PPDB-style pruning from the ``[bilingual]`` settings."""
    return settings_from(PivotSettings, bilingual)


# -- the API --------------------------------------------------------------------------------
def run_inputs(config: Config, inputs: BilingualInputs) -> list[Path]:
    """What a run reads, for its fingerprint: the corpus files and the tuned ensemble file
    (``align_words.tuned_file``), whose weights decide the links."""
    tuned = resolve(BilingualRun, config).align_words.tuned_file
    return inputs.files() + model_inputs([tuned_file_path(tuned) if tuned else None])


def _open(zh_path: str | Path | None, en_path: str | Path | None, config: Config | None,
          parallel_path: str | Path | None, alignment_path: str | Path | None
          ) -> tuple[Config, BilingualInputs, list[Stage]]:
    """The run's settings, resolved once here (the stages get them, typed; the run
    directory gets ``config`` for its manifest and fingerprint), its inputs and stages."""
    config = config or load_config()
    settings = resolve(BilingualRun, config)
    ExtractionSettings.of(settings.bilingual)                # invalid settings fail first
    configured_workers(settings.align_words)
    as_path = (lambda p: Path(p) if p is not None else None)
    inputs = BilingualInputs(as_path(zh_path), as_path(en_path), as_path(parallel_path),
                             as_path(alignment_path))
    return config, inputs, bilingual_stages(settings, inputs)


def plan_bilingual(zh_path: str | Path | None, en_path: str | Path | None,
                   out_dir: str | Path, config: Config | None = None, *,
                   parallel_path: str | Path | None = None,
                   alignment_path: str | Path | None = None, engine: str = "local",
                   spark_master: str | None = None) -> Plan:
    """The plan ``extract_bilingual`` would run (``--dry-run``); nothing is written."""
    chosen = make_engine(engine, master=spark_master)
    config, inputs, stages = _open(zh_path, en_path, config, parallel_path, alignment_path)
    plan_stages(out_dir, COMMAND, stages)          # every missing input at once
    scope = sections_read(BilingualRun)
    notes = dry_run_notes(Path(out_dir), config, run_inputs(config, inputs), scope)
    notes.append(f"engine: {chosen.name}" + (f" ({spark_master})" if spark_master else ""))
    return plan_stages(out_dir, COMMAND, stages, notes=notes)


def extract_bilingual(zh_path: str | Path | None, en_path: str | Path | None,
                      out_dir: str | Path, config: Config | None = None, *,
                      parallel_path: str | Path | None = None,
                      alignment_path: str | Path | None = None,
                      fresh: bool = False, engine: str = "local",
                      spark_master: str | None = None,
                      spark_session: Any = None) -> BilingualResult:
    """Run (or resume) bilingual pivot extraction into ``out_dir``.

    >>> result = extract_bilingual("data/parallel/sample.zh", "data/parallel/sample.en",
    ...                            "demo-run/bilingual")            # doctest: +SKIP
    >>> pl.read_parquet(result.phrase_pairs).head()                  # doctest: +SKIP

    ``engine="spark"`` runs the extract chunks and the pivot on Spark (``spark_master``, or
    an existing ``spark_session``); the outputs are the same Parquet artifacts.
    """
    chosen = make_engine(engine, master=spark_master, session=spark_session)
    chosen.check()                                       # a missing engine fails before work
    config, inputs, stages = _open(zh_path, en_path, config, parallel_path, alignment_path)
    plan_stages(out_dir, COMMAND, stages, manifest={})   # inputs checked before any work
    run = RunDir(out_dir, config, command=COMMAND, inputs=run_inputs(config, inputs), fresh=fresh,
                 engine=chosen, scope=sections_read(BilingualRun))
    run.record_backend("engine", chosen.describe())
    run_stages(run, COMMAND, stages)
    return _result(run)


def _result(run: Any) -> BilingualResult:
    counts: dict[str, int] = {}
    for stage in ("annotate", "align", "extract", "pivot"):
        for key, value in run.stage_info(stage).get("rows", {}).items():
            counts[f"{stage}.{key}"] = value
    notes = run.stage_info("extract").get("notes", {})
    return BilingualResult(run.root, run.path(PHRASE_PAIRS), run.path(PATTERN_PAIRS), counts,
                           notes.get("aligned_phrase_pairs_per_mode", {}))
