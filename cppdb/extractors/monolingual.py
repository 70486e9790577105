"""``extract-monolingual``: versions of one book/film -> 1-1 paraphrase sentence pairs.

Stages (each resumable; a finished stage is skipped when the run is reopened):

1. ``read``       units.parquet (one row per sentence/line of every file), skipped.parquet
2. ``documents``  documents.parquet: which files are the same chapter (groups), unpaired files
3. ``align``      beads.parquet: BAM + context-aware Vecalign per document pair (chunked;
                  on the local or the Spark engine)
4. ``entities``   entities.parquet: transliteration variant -> canonical name (names that
                  co-occur in aligned 1-1 pairs need less similarity)
5. ``pairs``      sentence_pairs.parquet: the 1-1 beads whose confidence reaches
                  ``min_confidence`` and, for subtitles, whose cues are on screen together
                  (``cue_*``, cppdb/align/sentences/cue_times.py) and whose lines mean the
                  same (``min_meaning_margin``, cppdb/align/sentences/meaning.py),
                  PAIR_COLUMNS + positions, costs, anchor flag, confidence, cue agreement,
                  meaning margin, entity-normalised forms;
                  low_confidence_pairs.parquet: the others, with the reason

Python API::

    from cppdb.config import load_config
    from cppdb.extractors.monolingual import extract_monolingual
    summary = extract_monolingual(["data/story/version_a", "data/story/version_b"],
                                  "runs/story", load_config())

The align stage runs on an engine (``engine="local"`` by default; ``"spark"`` with
``spark_master=`` or ``spark_session=`` runs every chunk of document pairs as a Spark task,
``cppdb.extractors.monolingual_align``); the other stages run in this process.
"""
from __future__ import annotations

import shutil
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from cppdb import schema
from cppdb.align.sentences.chapters import heading_starts
from cppdb.align.sentences.confidence import (ConfidenceModel, confidence_model_file,
                                               load_confidence_model)
from cppdb.align.sentences.cue_times import CueSettings, cue_agreement, cue_mismatch, cue_reason
from cppdb.align.sentences.documents import pair_versions, read_pairs_file
from cppdb.align.sentences.meaning import MEANING_MARGIN, MeaningSettings, meaning_margins
from cppdb.align.sentences.merged import split_merged_files
from cppdb.align.sentences.types import VersionFile
from cppdb.align.sentences.versions import VersionDocument, read_version_dir
from cppdb.config import Config, load_config, resolve, sections_read
from cppdb.embed.cache import CACHE_FILES
from cppdb.embed.settings import EmbedSettings
from cppdb.engine import make_engine
from cppdb.errors import BadInputError
from cppdb.extractors.settings import MonolingualRun, MonolingualSettings
from cppdb.extractors.monolingual_align import (NOTE_PARTS, AlignJob, align_chunk,
                                                alignment_encoder, document_pairs, read_notes)
from cppdb.features.models import load_encoder
from cppdb.progress import console, progress_bar
from cppdb.readers.settings import ReadingSettings
from cppdb.registry import load_backend
from cppdb.run import RunDir, StageHandle
from cppdb.shipped import model_inputs
from cppdb.stages import (PARTS_SUFFIX, Artifact, External, Plan, Stage, dry_run_notes,
                          plan_stages, run_stages)
from cppdb.text.entities import (EntityCluster, EntityNormalizer, build_normalizer,
                                 cooccurring_names)

UNITS, SKIPPED, DOCUMENTS = schema.UNITS_FILE, schema.SKIPPED_FILE, schema.DOCUMENTS_FILE
ENTITIES, BEADS, PAIRS = schema.ENTITIES_FILE, schema.BEADS_FILE, schema.SENTENCE_PAIRS_FILE
LOW_CONFIDENCE = "low_confidence_pairs.parquet"
COMMAND = "extract-monolingual"


@dataclass(frozen=True)
class MonolingualSummary:
    run_dir: Path
    documents: int
    groups: int
    unpaired: int
    beads: int
    sentence_pairs: int


def _read_stage(st: StageHandle, dirs: Sequence[Path], settings: MonolingualSettings,
                reading: ReadingSettings, by_content: bool = True) -> None:
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    documents = []
    for version, directory in enumerate(dirs):
        docs, bad = read_version_dir(directory, version, settings.units, reading=reading)
        skipped += [{"path": str(s.path), "reason": s.reason} for s in bad]
        documents += docs
    parts, cut, cut_by_content = _file_parts(documents, len(dirs), settings, by_content)
    for doc, part_no, a, b in parts:
        rows += [{schema.VERSION: doc.file.version, schema.PATH: str(doc.file.path),
                  schema.PART: part_no, "kind": doc.kind,
                  "position": k, "text": u.text, "original": u.original,
                  "start_ms": u.start_ms, "end_ms": u.end_ms}
                 for k, u in enumerate(doc.units[a:b])]
    for item in cut:
        console().print(f"[yellow]cut at chapter headings[/yellow] {item}")
    if cut:
        st.note("files_cut_at_headings", cut)
    for item in cut_by_content:
        console().print(f"[yellow]cut by content[/yellow] {item}")
    if cut_by_content:
        st.note("files_cut_by_content", cut_by_content)
    for item in skipped:
        console().print(f"[yellow]skipped[/yellow] {item['path']}: {item['reason']}")
    identical = _identical_versions(rows, len(dirs))
    for a, b in identical:
        console().print(f"[yellow]warning[/yellow]: versions {dirs[a]} and {dirs[b]} have "
                        "identical text: their sentence pairs will all be identical")
    if identical:
        st.note("identical_versions", [[str(dirs[a]), str(dirs[b])] for a, b in identical])
    st.write_parquet(UNITS, pl.DataFrame(rows, schema=schema.UNIT_SCHEMA))
    st.write_parquet(SKIPPED, pl.DataFrame(skipped, schema=schema.SKIPPED_SCHEMA))


def _file_parts(documents: list[VersionDocument], n_versions: int,
                settings: MonolingualSettings, by_content: bool) -> tuple[list[tuple[VersionDocument, int | None, int, int]],
                                           list[str], list[str]]:
    """(document, part number or None, first unit, end unit) of every file or chapter part:
    files cut at chapter headings (``split_chapters``), then files that hold several
    chapters without headings cut where their content matches several files of another
    version (``split_merged``, ``merged.split_merged_files``); and what was cut, readably."""
    parts: list[tuple[VersionDocument, int | None, int, int]] = []
    cut: list[str] = []
    for doc in documents:
        starts = heading_starts([u.text for u in doc.units]) if settings.split_chapters \
            else [0]
        if len(starts) > 1:
            cut.append(f"{doc.file.path}: {len(starts)} chapters")
        parts += [(doc, k if len(starts) > 1 else None, a, b)
                  for k, (a, b) in enumerate(zip(starts, [*starts[1:], len(doc.units)]))]
    if not (by_content and settings.split_merged) or n_versions < 2:
        return parts, cut, []
    versions: list[list[VersionFile]] = [[] for _ in range(n_versions)]
    for doc, part, a, b in parts:
        units = doc.units[a:b]
        times = [u for u in units if u.start_ms is not None]
        versions[doc.file.version].append(replace(
            doc.file, text="\n".join(u.text for u in units), part=part, chapter=None,
            span_ms=(min(u.start_ms for u in times), max(u.end_ms for u in times))
            if times else None, cue_starts=tuple(u.start_ms for u in times)))
    _, cuts = split_merged_files(versions, settings.pairing_weights())
    by_content_starts = {(c.file.version, c.file.path): c.starts for c in cuts}
    out: list[tuple[VersionDocument, int | None, int, int]] = []
    for doc, part, a, b in parts:
        starts = by_content_starts.get((doc.file.version, doc.file.path)) if part is None else None
        if starts is None:
            out.append((doc, part, a, b))
            continue
        out += [(doc, k, x, y) for k, (x, y) in enumerate(zip(starts, [*starts[1:], b]))]
    described = [f"{c.file.path}: {len(c.starts)} chapters from lines "
                 f"{', '.join(map(str, c.starts))}, matching "
                 f"{', '.join(t.label for t in c.targets)} (version {c.targets[0].version})"
                 for c in cuts]
    return out, cut, described


def _identical_versions(rows: list[dict[str, Any]], n_versions: int) -> list[tuple[int, int]]:
    """Pairs of versions whose unit texts are the same (a copy passed twice, by mistake)."""
    texts: list[list[str]] = [[] for _ in range(n_versions)]
    for row in rows:
        texts[row[schema.VERSION]].append(row["text"])
    return [(a, b) for a in range(n_versions) for b in range(a + 1, n_versions)
            if texts[a] and texts[a] == texts[b]]


def _version_files(units: pl.DataFrame, n_versions: int) -> list[list[VersionFile]]:
    versions: list[list[VersionFile]] = [[] for _ in range(n_versions)]
    for (version, path, part), frame in units.sort(*schema.DOC_KEY, "position").group_by(
            list(schema.DOC_KEY), maintain_order=True):
        starts = frame["start_ms"].drop_nulls()
        span = (int(starts.min()), int(frame["end_ms"].max())) if len(starts) else None
        versions[int(version)].append(VersionFile(
            int(version), Path(path), "\n".join(frame["text"].to_list()), span,
            tuple(int(x) for x in starts.to_list()), None if part is None else int(part)))
    for files in versions:
        files.sort(key=lambda f: (f.name, -1 if f.part is None else f.part))
    return versions


def _documents_stage(st: StageHandle, n_versions: int, settings: MonolingualSettings,
                     pairs_file: Path | None) -> None:
    run = st.run
    versions = _version_files(run.read(UNITS), n_versions)
    if pairs_file is not None:
        groups, unpaired = read_pairs_file(pairs_file, versions)
    else:
        groups, unpaired = pair_versions(versions, settings.pairing_weights())
    rows = [{"group": g.group, **dict(zip(schema.DOC_KEY, f.key)), "score": g.score,
             "method": g.method, "reason": None} for g in groups for f in g.files]
    rows += [{"group": None, **dict(zip(schema.DOC_KEY, u.file.key)), "score": None,
              "method": None, "reason": u.reason} for u in unpaired]
    for u in unpaired:
        console().print(f"[yellow]unpaired[/yellow] {u.file.path}: {u.reason}")
    st.write_parquet(DOCUMENTS, pl.DataFrame(rows, schema=schema.DOCUMENT_SCHEMA))
    st.count("groups", len(groups))
    st.count("unpaired", len(unpaired))


def _entities_stage(st: StageHandle, n_versions: int, settings: MonolingualSettings) -> None:
    run = st.run
    units = run.read(UNITS)
    per_version = [units.filter(pl.col(schema.VERSION) == v)["text"].to_list()
                   for v in range(n_versions)]
    aligned = _pairs_frame(run.read(BEADS), units)
    together = cooccurring_names(zip(aligned[schema.SOURCE].to_list(),
                                     aligned[schema.TARGET].to_list()))
    normalizer = build_normalizer(per_version, min_count=settings.entity_min_count,
                                  threshold=settings.entity_threshold,
                                  context_bonus=settings.entity_context_bonus,
                                  cooccurring=together)
    rows = [{"canonical": c.canonical, "variant": v, "count": n}
            for c in normalizer.clusters for v, n in zip(c.variants, c.counts)]
    st.write_parquet(ENTITIES, pl.DataFrame(rows, schema=schema.ENTITY_SCHEMA))


def load_normalizer(path: Path) -> EntityNormalizer:
    frame = pl.read_parquet(path)
    clusters = [EntityCluster(canon, tuple(g["variant"].to_list()), tuple(g["count"].to_list()))
                for (canon,), g in frame.group_by(["canonical"], maintain_order=True)]
    return EntityNormalizer.from_clusters(clusters)


def align_job(run: RunDir, settings: MonolingualRun) -> AlignJob:
    """The align stage's work for ``run``, as its workers get it (paths and settings)."""
    return AlignJob(units=str(run.path(UNITS)), documents=str(run.path(DOCUMENTS)),
                    beads_parts=str(run.path(BEADS + PARTS_SUFFIX)),
                    notes_parts=str(run.path(NOTE_PARTS)),
                    align=settings.align_sentences, embed=settings.embed,
                    cache_dir=str(run.root),
                    confidence_model=settings.monolingual.confidence_model)


def _align_stage(st: StageHandle, settings: MonolingualRun, confidence: ConfidenceModel
                 ) -> None:
    """BAM + Vecalign per document pair, chunk by chunk (``align_chunk``, picklable: the
    runner ships it to an engine that runs chunks elsewhere, or runs it here)."""
    run = st.run
    job = align_job(run, settings)
    n_pairs = len(document_pairs(run.read(DOCUMENTS)))
    chunk_size = max(1, settings.monolingual.chunk_size)
    _, backend = alignment_encoder(job, fresh=True)
    if backend is not None:
        run.record_backend("sentence_encoder", backend.describe())
    Path(job.notes_parts).mkdir(exist_ok=True)
    part = partial(align_chunk, job)
    with progress_bar(n_pairs, "aligning documents") as advance:
        st.run_parts(BEADS, n_pairs, chunk_size, part, shipped=lambda: nullcontext(part),
                     progress=advance)
    notes = read_notes(job.notes_parts)
    for note in notes:
        console().print(f"[yellow]note[/yellow] {note}")
    st.note("method", job.align.method)
    st.note("confidence_model", confidence.provenance)
    st.note("alignment_notes", notes)
    shutil.rmtree(job.notes_parts, ignore_errors=True)


def word_links(source: list[str], target: list[str]) -> tuple[list[int], list[int]]:
    """Monotone links between identical tokens (longest matching blocks): a cheap, real
    monolingual word alignment; paraphrased words stay unlinked."""
    src, tgt = [], []
    for block in SequenceMatcher(a=source, b=target, autojunk=False).get_matching_blocks():
        src += range(block.a, block.a + block.size)
        tgt += range(block.b, block.b + block.size)
    return src, tgt


def _pairs_frame(beads: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """The 1-1 beads with the text, times and origin of both lines (joined on the typed
    document keys and the positions)."""
    one = beads.filter(pl.col("kind") == "1-1").with_columns(
        pl.col("src").list.first().alias("src_pos"), pl.col("tgt").list.first().alias("tgt_pos"))
    left = units.select(*[pl.col(k).alias(c) for k, c in zip(schema.DOC_KEY, schema.SRC_DOC)],
                        pl.col("position").alias("src_pos"), pl.col("text").alias(schema.SOURCE),
                        pl.col("start_ms").alias(schema.SRC_START),
                        pl.col("end_ms").alias(schema.SRC_END),
                        pl.col("original").alias("source_original"),
                        pl.col("kind").alias("source_kind"))
    right = units.select(*[pl.col(k).alias(c) for k, c in zip(schema.DOC_KEY, schema.TGT_DOC)],
                         pl.col("position").alias("tgt_pos"), pl.col("text").alias(schema.TARGET),
                         pl.col("start_ms").alias(schema.TGT_START),
                         pl.col("end_ms").alias(schema.TGT_END),
                         pl.col("original").alias("target_original"))
    return (one.with_columns(pl.col("src_pos").cast(pl.Int64), pl.col("tgt_pos").cast(pl.Int64))
            .join(left, on=[*schema.SRC_DOC, "src_pos"], how="left", nulls_equal=True)
            .join(right, on=[*schema.TGT_DOC, "tgt_pos"], how="left", nulls_equal=True)
            .sort("group", *schema.SRC_DOC, *schema.TGT_DOC, "bead"))


def _pairs_stage(st: StageHandle, settings: MonolingualRun) -> None:
    run = st.run
    cues, meaning = settings.monolingual.cue_settings(), settings.monolingual.meaning_settings()
    units = run.read(UNITS)
    frame = cue_agreement(_pairs_frame(run.read(BEADS), units), cues.cue_offset_window)
    frame = frame.with_columns(_meaning_column(st, settings.embed, meaning, frame, units))
    normalizer = load_normalizer(run.path(ENTITIES))
    annotator = load_backend("zh_annotator", settings.annotate.zh_backend)
    run.record_backend("zh_annotator", annotator.describe())
    src_ann = annotator.annotate(frame[schema.SOURCE].to_list())
    tgt_ann = annotator.annotate(frame[schema.TARGET].to_list())
    links = [word_links(list(a.tokens), list(b.tokens)) for a, b in zip(src_ann, tgt_ann)]
    source_norm = normalizer.normalize_all(frame[schema.SOURCE].to_list())
    target_norm = normalizer.normalize_all(frame[schema.TARGET].to_list())
    is_subtitle = [kind == "subtitle" for kind in frame["source_kind"]]
    columns = {
        schema.SOURCE_TOKENS: [list(a.tokens) for a in src_ann],
        schema.TARGET_TOKENS: [list(b.tokens) for b in tgt_ann],
        schema.TYPE: ["sentence"] * len(frame), schema.LHS: ["S"] * len(frame),
        schema.SOURCE_POS: [list(a.pos) for a in src_ann],
        schema.TARGET_POS: [list(b.pos) for b in tgt_ann],
        schema.P_TGT_GIVEN_SRC: [None] * len(frame), schema.P_SRC_GIVEN_TGT: [None] * len(frame),
        schema.COUNT: [1] * len(frame), schema.N_PIVOTS: [0] * len(frame),
        schema.PIVOTS: [[]] * len(frame),
        schema.ALIGN_SRC: [s for s, _ in links], schema.ALIGN_TGT: [t for _, t in links],
        schema.ORIGIN: ["subtitle" if sub else "ebook" for sub in is_subtitle],
        schema.SOURCE_NORM: source_norm, schema.TARGET_NORM: target_norm,
        "identical_after_norm": [a == b for a, b in zip(source_norm, target_norm)],
    }
    table = pl.DataFrame({schema.SOURCE: frame[schema.SOURCE], schema.TARGET: frame[schema.TARGET],
                          schema.DOCUMENTS: frame.select(_documents()).to_series(), **columns},
                         schema_overrides={**schema.PAIR_COLUMNS})
    extras = frame.select("source_original", "target_original", "group", *schema.SRC_DOC,
                          *schema.TGT_DOC, "src_pos", "tgt_pos", "cost", "anchor",
                          "confidence", *schema.CUE_COLUMNS, MEANING_MARGIN)
    normalised = [schema.SOURCE_NORM, schema.TARGET_NORM, "identical_after_norm"]
    table = pl.concat([table.select(list(schema.PAIR_COLUMNS) + normalised), extras],
                      how="horizontal")
    _write_kept_and_low(st, table, settings.monolingual.min_confidence, cues, meaning)


def _documents() -> pl.Expr:
    """The pair's two documents as the ``schema.DOCUMENTS`` list (source first)."""
    return pl.concat_list([pl.struct([pl.col(c).alias(key) for c, key in zip(side, schema.DOC_KEY)])
                           for side in (schema.SRC_DOC, schema.TGT_DOC)])


def _meaning_column(st: StageHandle, embed: EmbedSettings, meaning: MeaningSettings,
                    frame: pl.DataFrame, units: pl.DataFrame) -> pl.Series:
    """The meaning margin of every pair (null when the check is off).  The vectors go to the
    run's embedding cache, where ``cppdb rank`` finds them again for its cosine feature."""
    if not meaning.enabled:
        return pl.Series(MEANING_MARGIN, [None] * frame.height, dtype=pl.Float64)
    encoder = load_encoder(embed, st.run.root)
    st.run.record_backend("meaning_encoder", encoder.describe())
    return meaning_margins(frame, units, encoder.encode, meaning.meaning_margin_k)


def _write_kept_and_low(st: StageHandle, table: pl.DataFrame, min_confidence: float,
                        cues: CueSettings, meaning: MeaningSettings) -> None:
    """Pairs that pass every check, and the others with every reason that applies (why not
    dropped silently: a user may want them back with other thresholds)."""
    unsure = pl.col("confidence") < min_confidence
    apart = cue_mismatch(cues, schema.SOURCE, schema.TARGET)
    unlike = (pl.col(MEANING_MARGIN) < meaning.min_meaning_margin).fill_null(False)
    reasons = pl.concat_str([
        pl.when("_unsure").then(pl.format("confidence {} < monolingual.min_confidence {}",
                                          pl.col("confidence").round(3), pl.lit(min_confidence))),
        pl.when("_apart").then(cue_reason(cues)),
        pl.when("_unlike").then(pl.format("meaning margin {} < monolingual.min_meaning_margin {}",
                                          pl.col(MEANING_MARGIN).round(3),
                                          pl.lit(meaning.min_meaning_margin)))],
        separator="; ", ignore_nulls=True)
    flags = ("_unsure", "_apart", "_unlike")
    flagged = table.with_columns(unsure.alias("_unsure"), apart.alias("_apart"),
                                 unlike.alias("_unlike"))
    low = pl.col("_unsure") | pl.col("_apart") | pl.col("_unlike")
    st.write_parquet(PAIRS, flagged.filter(~low).drop(flags))
    st.write_parquet(LOW_CONFIDENCE, flagged.filter(low).with_columns(reasons.alias("reason"))
                     .drop(flags))
    st.count("dropped_cue_times", int(flagged["_apart"].sum()))
    st.count("dropped_meaning_margin", int(flagged["_unlike"].sum()))


def monolingual_stages(dirs: Sequence[Path], settings: MonolingualRun, pairs_file: Path | None
                       ) -> list[Stage]:
    """The declared stages of ``extract-monolingual`` (see the module docstring); the align
    chunks go where the run's engine puts them (``StageHandle.run_parts``)."""
    section = settings.monolingual
    confidence = load_confidence_model(section.confidence_model)   # checked up front
    reading = settings.reading()
    n = len(dirs)
    units = Artifact(UNITS, (*schema.DOC_KEY, "position", "text"))
    docs_reads: tuple[Artifact | External, ...] = (units,)
    if pairs_file is not None:
        docs_reads += (External("the --pairs file", (pairs_file,)),)
    beads = Artifact(BEADS, ("group", *schema.SRC_DOC, *schema.TGT_DOC, "src", "tgt", "kind"))
    return [
        Stage("read", (External("the version directories", tuple(dirs)),), (UNITS, SKIPPED),
              lambda st: _read_stage(st, dirs, section, reading, pairs_file is None),
              doc="sentences/lines per file"),
        Stage("documents", docs_reads, (DOCUMENTS,),
              lambda st: _documents_stage(st, n, section, pairs_file),
              doc="which files are the same chapter"),
        Stage("align", (units, Artifact(DOCUMENTS, ("group", *schema.DOC_KEY))), (BEADS,),
              lambda st: _align_stage(st, settings, confidence), chunked=True,
              scratch=(NOTE_PARTS, CACHE_FILES),
              doc="BAM + Vecalign per document pair"),
        Stage("entities", (units, beads), (ENTITIES,),
              lambda st: _entities_stage(st, n, section), doc="transliteration variants"),
        Stage("pairs", (units, beads, Artifact(ENTITIES, ("canonical", "variant"))),
              (PAIRS, LOW_CONFIDENCE),
              lambda st: _pairs_stage(st, settings), scratch=(CACHE_FILES,),
              doc="1-1 sentence pairs (confident ones; the rest with the reason)"),
    ]


def monolingual_inputs(dirs: Sequence[Path], config: Config,
                       pairs_file: str | Path | None) -> list[Path]:
    """What a run reads, for its fingerprint: the version directories, the pairs file and
    the sentence-confidence model (the shipped one unless ``monolingual.confidence_model``)."""
    model = confidence_model_file(resolve(MonolingualRun, config).monolingual.confidence_model)
    return [*dirs, *([Path(pairs_file)] if pairs_file else []), *model_inputs([model])]


def _open(version_dirs: Sequence[str | Path], config: Config | None,
          pairs_file: str | Path | None) -> tuple[Config, list[Path], list[Stage]]:
    config = config or load_config()
    dirs = [Path(d) for d in version_dirs]
    if len(dirs) < 2:
        raise BadInputError(f"extract-monolingual needs two or more version directories, got "
                            f"{len(dirs)}", hint="pass one directory per translation/version")
    settings = resolve(MonolingualRun, config)
    settings.monolingual.pairing_weights().check(len(dirs))   # before any work
    return config, dirs, monolingual_stages(dirs, settings,
                                            Path(pairs_file) if pairs_file else None)


def plan_monolingual(version_dirs: Sequence[str | Path], out_dir: str | Path,
                     config: Config | None = None, *, pairs_file: str | Path | None = None,
                     engine: str = "local", spark_master: str | None = None) -> Plan:
    """The plan ``extract_monolingual`` would run (``--dry-run``); nothing is written."""
    chosen = make_engine(engine, master=spark_master)
    config, dirs, stages = _open(version_dirs, config, pairs_file)
    plan_stages(out_dir, COMMAND, stages, manifest={})
    inputs = monolingual_inputs(dirs, config, pairs_file)
    scope = sections_read(MonolingualRun)
    notes = dry_run_notes(Path(out_dir), config, inputs, scope)
    notes.append(f"engine: {chosen.name}" + (f" ({spark_master})" if spark_master else ""))
    return plan_stages(out_dir, COMMAND, stages, notes=notes)


def extract_monolingual(version_dirs: Sequence[str | Path], out_dir: str | Path,
                        config: Config | None = None, *, pairs_file: str | Path | None = None,
                        fresh: bool = False, engine: str = "local",
                        spark_master: str | None = None,
                        spark_session: Any = None) -> MonolingualSummary:
    """Run (or resume) every stage; returns counts.  See the module docstring.

    ``engine="spark"`` aligns the document pairs as Spark tasks (``spark_master``, or an
    existing ``spark_session``); the run directory must be on storage every executor sees.
    """
    chosen = make_engine(engine, master=spark_master, session=spark_session)
    chosen.check()                                         # a missing engine fails before work
    config, dirs, stages = _open(version_dirs, config, pairs_file)
    plan_stages(out_dir, COMMAND, stages, manifest={})     # inputs checked before any work
    inputs = monolingual_inputs(dirs, config, pairs_file)
    run = RunDir(out_dir, config, command=COMMAND, inputs=inputs, fresh=fresh, engine=chosen,
                 scope=sections_read(MonolingualRun))
    run.record_backend("engine", chosen.describe())
    run_stages(run, COMMAND, stages)
    documents = run.read(DOCUMENTS)
    return MonolingualSummary(
        run.root, documents.height, documents["group"].drop_nulls().n_unique(),
        documents["group"].null_count(), run.scan(BEADS).select(pl.len()).collect().item(),
        run.scan(PAIRS).select(pl.len()).collect().item())
