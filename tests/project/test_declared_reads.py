"""Declared = read: every file a stage body opens is one of the stage's declared reads.

Each stage of the demo pipelines (bilingual → rank, monolingual, compression) runs under a
file-access spy (``open``, polars' and pyarrow's readers).  A file under the test's run
directories or the bundled data that the stage reads without declaring it — as an
``Artifact`` / ``External`` read, or as its own output (chunk parts, staging files) — fails
the test.  Chunks in worker processes are outside the spy, so the runs use one worker.
A must-fire case feeds the spy a stage that reads a file it does not declare.
"""
from __future__ import annotations

import builtins
import contextlib
import contextvars
import fnmatch
import io
import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from cppdb import stages as stages_module
from cppdb.config import load_config
from cppdb.run import RunDir
from cppdb.stages import Artifact, External, Stage, run_stages

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
_CURRENT: contextvars.ContextVar[tuple[Path, str] | None] = contextvars.ContextVar(
    "stage", default=None)
#: the run directory's own bookkeeping, which the runner (not a stage body) owns
RUNNER_FILES = ("manifest.json", ".lock", "manifest.json.tmp")
POLARS_READERS = ("read_parquet", "scan_parquet", "read_parquet_schema", "read_csv",
                  "scan_csv", "read_ndjson", "scan_ndjson", "read_json", "read_ipc", "scan_ipc")
ARROW_READERS = ("ParquetFile", "read_table", "read_schema", "read_metadata")


class ReadSpy:
    """Records ``(run root, stage, path)`` for every file opened inside a stage body, and
    every stage's declaration as the runner received it."""

    def __init__(self, watched: tuple[Path, ...]) -> None:
        self.watched = tuple(p.resolve() for p in watched)
        self.reads: list[tuple[Path, str, Path]] = []
        self.declared: dict[tuple[Path, str], Stage] = {}

    def record(self, target: object) -> None:
        where = _CURRENT.get()
        if where is None or not isinstance(target, (str, Path)):
            return
        path = Path(target).resolve()
        if any(path.is_relative_to(w) for w in self.watched):
            self.reads.append((where[0], where[1], path))

    def wrap(self, reader):  # noqa: ANN001, ANN201 - any reader function
        def spied(source, *args, **kwargs):  # noqa: ANN001, ANN202
            for item in source if isinstance(source, (list, tuple)) else [source]:
                self.record(item)
            return reader(source, *args, **kwargs)
        return spied

    def wrap_open(self, real_open):  # noqa: ANN001, ANN201
        def spied(file, mode="r", *args, **kwargs):  # noqa: ANN001, ANN202
            if not set(mode) & set("wax"):               # a read (writes are not checked)
                self.record(file)
            return real_open(file, mode, *args, **kwargs)
        return spied

    @contextlib.contextmanager
    def installed(self, monkeypatch: pytest.MonkeyPatch) -> Iterator["ReadSpy"]:
        monkeypatch.setattr(builtins, "open", self.wrap_open(builtins.open))
        monkeypatch.setattr(io, "open", self.wrap_open(io.open))
        for name in POLARS_READERS:
            monkeypatch.setattr(pl, name, self.wrap(getattr(pl, name)))
        for name in ARROW_READERS:
            monkeypatch.setattr(pq, name, self.wrap(getattr(pq, name)))
        real_plan, real_stage = stages_module.plan_stages, RunDir.stage
        spy = self

        def plan(root, command, stages, **kwargs):  # noqa: ANN001, ANN202
            for stage in stages:
                spy.declared[(Path(root).resolve(), stage.name)] = stage
            return real_plan(root, command, stages, **kwargs)

        @contextlib.contextmanager
        def stage(run: RunDir, name: str):  # noqa: ANN202
            token = _CURRENT.set((run.root.resolve(), name))
            try:
                with real_stage(run, name) as handle:
                    yield handle
            finally:
                _CURRENT.reset(token)

        monkeypatch.setattr(stages_module, "plan_stages", plan)
        monkeypatch.setattr(RunDir, "stage", stage)
        yield self

    def undeclared(self) -> list[str]:
        """``stage in root reads path`` for every read the stage does not declare."""
        found = set()
        for root, name, path in self.reads:
            stage = self.declared[(root, name)]
            if not _declared(root, stage, path):
                found.add(f"stage '{name}' in {root} reads {path}")
        return sorted(found)


def _declared(root: Path, stage: Stage, path: Path) -> bool:
    """A declared read (an input folder counts for every file in it), the stage's own
    output, its chunk parts (``<output>.parts/``) and temporary files (``<output>.*``), or
    one of its declared ``scratch`` files."""
    exact = {root / name for name in RUNNER_FILES}
    trees = []
    for item in stage.reads:
        if isinstance(item, Artifact):
            exact.add(root / item.name)
        else:
            trees += [Path(p).resolve() for p in item.paths]
    if path in exact or any(path.is_relative_to(tree) for tree in trees):
        return True
    if not path.is_relative_to(root):
        return False
    first = path.relative_to(root).parts[0]
    return any(first == out or first.startswith(f"{out}.")
               for out in (*stage.writes, *stage.optional)) \
        or any(fnmatch.fnmatchcase(first, pattern) for pattern in stage.scratch)


def test_the_spy_fires_on_an_undeclared_read(tmp_path, monkeypatch):
    secret = tmp_path / "secret.txt"
    secret.write_text("x", "utf-8")
    declared = tmp_path / "declared.txt"
    declared.write_text("y", "utf-8")

    def body(handle) -> None:  # noqa: ANN001
        declared.read_text("utf-8")
        with open(secret, encoding="utf-8"):
            pass
        handle.write_parquet("out.parquet", pl.DataFrame({"a": [1]}))
        pl.read_parquet(handle.run.path("out.parquet"))          # its own output: allowed

    spy = ReadSpy((tmp_path,))
    with spy.installed(monkeypatch):
        run = RunDir(tmp_path / "run", load_config(), command="test")
        run_stages(run, "test", [Stage("s", (External("input", (declared,)),),
                                       ("out.parquet",), body)])
    assert spy.undeclared() == [f"stage 's' in {(tmp_path / 'run').resolve()} reads "
                                f"{secret.resolve()}"]
    assert {p.name for _, _, p in spy.reads} >= {"secret.txt", "declared.txt", "out.parquet"}


@pytest.mark.slow
def test_demo_stages_read_only_what_they_declare(tmp_path, monkeypatch):
    from cppdb.extractors.bilingual import extract_bilingual
    from cppdb.extractors.compression.builder import build_compression
    from cppdb.extractors.monolingual import extract_monolingual
    from cppdb.rank.pipeline import rank_run

    config = load_config(overrides={"annotate.workers": 1, "bilingual.workers": 1,
                                    "compression.workers": 1})
    spy = ReadSpy((tmp_path, DATA))
    with spy.installed(monkeypatch):
        bilingual = tmp_path / "bilingual"
        extract_bilingual(DATA / "parallel" / "sample.zh", DATA / "parallel" / "sample.en",
                          bilingual, config)
        rank_run(bilingual, config.with_overrides(["features.embedding=false"]))
        extract_monolingual([DATA / "story" / "version_a", DATA / "story" / "version_b"],
                            tmp_path / "monolingual", config)
        build_compression(DATA / "news" / "pairs.jsonl", tmp_path / "compression", config,
                          paraphrases=bilingual)
    found = spy.undeclared()
    assert not found, "\n".join(found)
    stages_seen = {name for _, name, _ in spy.reads}
    assert {"annotate", "align", "extract", "pivot", "filter", "features", "train", "score",
            "read", "documents", "pairs", "compress"} <= stages_seen
    manifest = json.loads((bilingual / "ranking" / "manifest.json").read_text("utf-8"))
    assert manifest["stages"]["features"]["notes"]["optional_inputs"] == {
        "the run's lexical tables and occurrences": True}


@pytest.mark.slow
def test_rank_without_lexical_tables_says_so(tmp_path):
    """A Pharaoh alignment leaves no lexical tables: the plan shows the three lexical
    features as null before anything runs, and the manifest records the input as absent."""
    from cppdb.extractors.bilingual import extract_bilingual
    from cppdb.rank.pipeline import plan_rank, rank_run
    from tests.extractors.test_bilingual_pipeline import ALIGNMENT, CORPUS

    (tmp_path / "par.txt").write_text(CORPUS, "utf-8")
    (tmp_path / "par.align").write_text(ALIGNMENT, "utf-8")
    config = load_config(overrides={"annotate.workers": 1})
    run = extract_bilingual(None, None, tmp_path / "bi", config, parallel_path=tmp_path / "par.txt",
                            alignment_path=tmp_path / "par.align").run_dir
    text = plan_rank(run, config).render()
    assert "lexical tables and occurrences" in text
    assert "(optional; absent, so f_lex_t_given_s, f_lex_s_given_t, f_lex_best are null" in text
    rank_run(run, config.with_overrides(["features.embedding=false"]))
    manifest = json.loads((run / "ranking" / "manifest.json").read_text("utf-8"))
    assert manifest["stages"]["features"]["notes"]["optional_inputs"] == {
        "the run's lexical tables and occurrences": False}
