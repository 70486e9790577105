"""The per-chunk functions distributed engines call, checked without a cluster.

A Spark task receives a pickled function and pickled arguments; these tests do the same
round trip in-process: the trained word-alignment ensemble survives pickling with the same
links, annotation of a staged slice equals annotation of the same pairs in memory, and
``compute_parts`` computes exactly the chunks that are not on disk yet.
"""
from __future__ import annotations

import pickle
from pathlib import Path

import polars as pl
import pytest

from cppdb.align.words.settings import AlignWordsSettings
from cppdb.annotate.settings import AnnotateSettings
from cppdb.config import load_config, resolve
from cppdb.engine import Engine, Shared, compute_parts
from cppdb.run import chunk_ranges, part_path

ZH = [["我", "爱", "你"], ["你", "好"], ["我", "很", "好"], ["爱", "你"], ["他", "爱", "她"]]
EN = [["i", "love", "you"], ["hello", "you"], ["i", "am", "fine"], ["love", "you"],
      ["he", "loves", "her"]]


class RecordingEngine(Engine):
    """Runs chunks in this process, after pickling them as a Spark task would be."""

    name = "recording"
    remote = True

    def __init__(self) -> None:
        self.chunks: list[tuple[int, int]] = []

    def map_chunks(self, compute, chunks) -> None:
        compute = pickle.loads(pickle.dumps(compute))
        for start, stop in chunks:
            self.chunks.append((start, stop))
            compute(start, stop)


def _rows(start: int, stop: int) -> pl.DataFrame:
    return pl.DataFrame({"row": list(range(start, stop))}, schema={"row": pl.Int64})


@pytest.mark.parametrize("n, size, on_disk, expected", [
    (10, 4, [], [(0, 4), (4, 8), (8, 10)]),
    (10, 4, [4], [(0, 4), (8, 10)]),             # a resumed run: only what is missing
    (10, 4, [0, 4, 8], []),
    (0, 4, [], [(0, 0)]),                         # an empty input still gets its empty part
    (3, 10, [], [(0, 3)]),
])
def test_compute_parts_runs_only_missing_chunks(tmp_path, n, size, on_disk, expected):
    parts = tmp_path / "x.parquet.parts"
    parts.mkdir()
    for start in on_disk:
        _rows(start, min(start + size, n)).write_parquet(part_path(parts, start))
    engine = RecordingEngine()
    compute_parts(engine, parts, n, size, _rows)
    assert engine.chunks == expected
    assert sorted(p.name for p in parts.iterdir()) == \
        [part_path(parts, a).name for a, _ in chunk_ranges(n, size)]


def test_compute_parts_leaves_the_local_engine_to_run_chunked(tmp_path):
    from cppdb.engine import LocalEngine

    compute_parts(LocalEngine(), tmp_path / "parts", 10, 4, _rows)
    assert not (tmp_path / "parts").exists()


def _stage_on(tmp_path: Path, engine: Engine | None, on_disk: list[int]):
    from cppdb.run import RunDir
    from cppdb.stages import Stage, run_stages

    local: list[tuple[int, int]] = []
    entered: list[bool] = []

    def compute(start: int, stop: int) -> pl.DataFrame:
        local.append((start, stop))
        return _rows(start, stop)

    def shipped():
        from contextlib import contextmanager

        @contextmanager
        def ship():
            entered.append(True)
            yield _rows
        return ship()

    run = RunDir(tmp_path / "run", load_config(), command="test", engine=engine)
    parts = run.path("x.parquet.parts")
    parts.mkdir(parents=True)
    for start in on_disk:
        _rows(start, min(start + 4, 10)).write_parquet(part_path(parts, start))
    body = (lambda st: st.run_parts("x.parquet", 10, 4, compute, shipped=shipped))
    run_stages(run, "test", [Stage("s", (), ("x.parquet",), body, chunked=True)])
    assert pl.read_parquet(run.path("x.parquet"))["row"].to_list() == list(range(10))
    return local, entered


def test_the_runner_ships_missing_chunks_to_a_remote_engine(tmp_path):
    engine = RecordingEngine()
    local, entered = _stage_on(tmp_path, engine, [4])
    assert engine.chunks == [(0, 4), (8, 10)] and local == [] and entered == [True]


@pytest.mark.parametrize("engine", [None, "local"])
def test_the_runner_computes_chunks_here_on_the_local_engine(tmp_path, engine):
    from cppdb.engine import LocalEngine

    local, entered = _stage_on(tmp_path, LocalEngine() if engine else None, [4])
    assert local == [(0, 4), (8, 10)] and entered == []       # nothing shipped, nothing set up


def test_a_resumed_run_with_every_part_on_disk_ships_nothing(tmp_path):
    engine = RecordingEngine()
    local, entered = _stage_on(tmp_path, engine, [0, 4, 8])
    assert engine.chunks == [] and local == [] and entered == []


@pytest.mark.parametrize("model", ["eflomal", "ibm4", "fast_align"])
@pytest.mark.slow
def test_a_trained_ensemble_aligns_alike_after_pickling(model):
    from cppdb.align.words.api import align_with, train_ensemble

    config = resolve(AlignWordsSettings, load_config(overrides={"align_words.thot.model": model}))
    ensemble = train_ensemble(ZH * 20, EN * 20, config)
    shipped = pickle.loads(pickle.dumps(ensemble))
    links, _ = align_with(ensemble, ZH, EN)
    assert any(links)
    assert align_with(shipped, ZH, EN)[0] == links
    # models travel as their files, not as the loaded dictionary or encoder weights
    assert len(pickle.dumps(ensemble)) < 5_000_000


def test_a_pickled_thot_aligner_is_not_a_trained_corpus():
    from cppdb.align.words.api import train_ensemble
    from cppdb.errors import RunStateError

    ensemble = train_ensemble(ZH * 20, EN * 20, resolve(AlignWordsSettings, load_config()))
    thot = pickle.loads(pickle.dumps(ensemble.aligners["thot"]))
    with pytest.raises(RunStateError, match="trained"):
        thot.align_trained([(ZH[0], EN[0])], 0)


@pytest.mark.parametrize("pretokenized", [False, True])
def test_annotating_a_staged_slice_equals_annotating_in_memory(tmp_path, pretokenized):
    from cppdb.annotate.pipeline import (AnnotationSession, _annotate_chunk, annotate_part,
                                         stage_input)
    from cppdb.readers.parallel import ParallelText

    if pretokenized:
        zh, en = tuple(tuple(x) for x in ZH), tuple(tuple(x) for x in EN)
    else:
        zh, en = tuple("".join(x) for x in ZH), tuple(" ".join(x) for x in EN)
    parallel = ParallelText((0, 2, 3, 5, 6), zh, en, pretokenized=pretokenized)
    config = AnnotateSettings(workers=1)
    staged = stage_input(parallel, tmp_path / "input.parquet")
    part = pickle.loads(pickle.dumps(annotate_part))(str(staged), config, 1, 4)
    with AnnotationSession(config, workers=1) as session:
        direct = _annotate_chunk(session, parallel, 1, 4)
    assert part.height == 3 and part["id"].to_list() == [2, 3, 5]
    assert part.equals(direct)


def test_the_local_engine_shares_the_value_itself():
    value = {"model": [1, 2]}
    assert Shared(value).value is value
    from cppdb.engine import LocalEngine

    assert LocalEngine().share(value).value is value


def test_align_part_reads_only_its_rows(tmp_path):
    from cppdb.align.words.api import train_ensemble
    from cppdb.align.words.corpus import align_part
    from cppdb.schema import ann

    ann_path = tmp_path / "annotations.parquet"
    pl.DataFrame({"id": [10, 11, 12, 13, 14], ann("zh", "tokens"): ZH,
                  ann("en", "tokens"): EN}).write_parquet(ann_path)
    ensemble = Shared(train_ensemble(ZH * 20, EN * 20, AlignWordsSettings()))
    part = align_part(str(ann_path), ensemble, 1, 3)
    assert part["id"].to_list() == [11, 12]
    assert part["link_zh"].list.len().sum() > 0
    assert Path(ann_path).exists()
