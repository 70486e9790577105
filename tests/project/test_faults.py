"""Fault injection: a pipeline killed at any stage boundary or mid-chunk resumes to the
byte-identical result of an uninterrupted run.

Two kinds of kill, for every pipeline (bilingual, monolingual, rank, compression):
- in process, an exception that is not a cppdb error (a BaseException, like a signal), raised
  when a given stage starts or when a given chunk of a chunked stage is written;
- a real ``SIGKILL`` of a child process running the pipeline, sent by the process to itself
  when a given stage starts, or in the middle of an atomic write (the temporary file is on
  disk, the rename has not happened): no handler, no ``finally``, no flush runs.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cppdb import run as run_module
from cppdb.config import load_config

pytestmark = pytest.mark.slow          # kill/resume of whole pipelines: minutes (make test)

DATA = Path(__file__).parents[2] / "data"
CORPUS = """\
那位 老人 在 院子 里 种 了 一 棵 树 。 ||| The old man planted a tree in the garden .
那个 老头 在 花园 里 种 了 一 棵 树 。 ||| The old man planted a tree in the garden .
那个 老头 坐 在 窗户 旁边 。 ||| The old man sat by the window .
他 的 老 朋友 来 了 。 ||| His old friend came .
"""
ALIGNMENT = """\
0-0 1-1 1-2 2-6 3-8 5-3 5-4 7-4 8-4 9-5 10-9
0-0 1-1 1-2 2-6 3-8 5-3 5-4 7-4 8-4 9-5 10-9
0-0 1-1 1-2 2-3 4-6 5-4 6-7
0-0 2-1 3-2 4-3 5-3 6-4
"""


class Killed(BaseException):
    """Stands for SIGKILL/SIGTERM: not an Exception, so nothing on the way catches it."""


#: run files whose bytes legitimately differ between runs (timestamps, the writer's lock)
VOLATILE = {"manifest.json", ".lock"}


def _parquet(root: Path) -> dict[str, bytes]:
    """Every output of a run: Parquet, JSONL and JSON files (not the manifest)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in VOLATILE
            and p.suffix in (".parquet", ".jsonl", ".json")}


def _kill_at_stage(monkeypatch, index: int) -> None:
    original = run_module.RunDir.stage
    seen = {"n": 0}

    def stage(self, name):
        seen["n"] += 1
        if seen["n"] == index + 1:
            raise Killed(f"killed before stage {name}")
        return original(self, name)

    monkeypatch.setattr(run_module.RunDir, "stage", stage)


def _kill_at_chunk(monkeypatch, index: int) -> None:
    original = run_module.write_parquet_atomic
    seen = {"n": 0}

    def write(path, frame, metadata=None):
        if Path(path).parent.name.endswith(".parts"):
            seen["n"] += 1
            if seen["n"] == index + 1:
                raise Killed(f"killed writing {path}")
        return original(path, frame, metadata)

    monkeypatch.setattr(run_module, "write_parquet_atomic", write)


def _bilingual(tmp: Path, out: Path) -> None:
    from cppdb.extractors.bilingual import extract_bilingual

    (tmp / "par.txt").write_text(CORPUS, "utf-8")
    (tmp / "par.align").write_text(ALIGNMENT, "utf-8")
    config = load_config(overrides={"annotate.workers": 1, "annotate.chunk_size": 1,
                                    "bilingual.chunk_size": 1})
    extract_bilingual(None, None, out, config, parallel_path=tmp / "par.txt",
                      alignment_path=tmp / "par.align")


def _monolingual(tmp: Path, out: Path) -> None:
    from cppdb.extractors.monolingual import extract_monolingual

    extract_monolingual([DATA / "story" / "version_a", DATA / "story" / "version_b"], out,
                        load_config(overrides={"monolingual.chunk_size": 1}))


NO_EMBEDDING = {"features.embedding": False}
PARAPHRASE_TABLE = "留守\t剩余\t0.9\n抵京\t抵达 北京\t0.8\n访华\t访问\t0.3\n"


def _prepare_rank(tmp: Path) -> None:
    """The bilingual run that ``_rank`` ranks, extracted before any fault is armed."""
    _bilingual(tmp, tmp / "bilingual-for-rank")


def _rank(tmp: Path, out: Path) -> None:
    from cppdb.rank.pipeline import rank_run

    if not out.exists():
        shutil.copytree(tmp / "bilingual-for-rank", out)
    rank_run(out, load_config(overrides=NO_EMBEDDING))


def _compression(tmp: Path, out: Path) -> None:
    from cppdb.extractors.compression.builder import build_compression

    # one table path for every run: the report records it, and it must not differ
    table = Path(tempfile.gettempdir()) / "cppdb-test-faults-paraphrases.tsv"
    table.write_text(PARAPHRASE_TABLE, "utf-8")
    config = load_config(overrides=["compression.overlap_denominator=headline_content",
                                    "compression.overlap_source=alignment"])
    build_compression(DATA / "news" / "pairs.jsonl", out, config, paraphrases=table)


PIPELINES = {"bilingual": (_bilingual, 4), "monolingual": (_monolingual, 5),
             "rank": (_rank, 4), "compression": (_compression, 2)}
CHUNKED = ("bilingual", "monolingual")
#: work a pipeline needs done before it starts (not faulted)
PREPARE = {"rank": _prepare_rank}


def _prepare(pipeline: str, tmp: Path) -> None:
    if pipeline in PREPARE:
        PREPARE[pipeline](tmp)
CASES = [(name, "stage", k) for name, (_, n) in PIPELINES.items() for k in range(n)] + \
        [(name, "chunk", k) for name in CHUNKED for k in (0, 1)]


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict[str, dict[str, bytes]]:
    results = {}
    for name, (body, _) in PIPELINES.items():
        tmp = tmp_path_factory.mktemp(f"clean-{name}")
        _prepare(name, tmp)
        body(tmp, tmp / "run")
        results[name] = _parquet(tmp / "run")
    return results


@pytest.mark.parametrize("pipeline, where, index", CASES)
def test_killed_run_resumes_to_the_identical_result(tmp_path, monkeypatch, clean, pipeline,
                                                    where, index):
    body, _ = PIPELINES[pipeline]
    _prepare(pipeline, tmp_path)
    with monkeypatch.context() as patch:
        (_kill_at_stage if where == "stage" else _kill_at_chunk)(patch, index)
        with pytest.raises(Killed):
            body(tmp_path, tmp_path / "run")
    body(tmp_path, tmp_path / "run")                     # resume, no fault
    assert _parquet(tmp_path / "run") == clean[pipeline]


# -- a real SIGKILL in a child process ----------------------------------------------------------
CHILD = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from cppdb import io as io_module, run as run_module
import test_faults
where, index = {where!r}, {index}
seen = {{"n": 0}}
if where == "stage":
    original = run_module.RunDir.stage
    def stage(self, name):
        seen["n"] += 1
        if seen["n"] == index + 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, name)
    run_module.RunDir.stage = stage
else:
    # die between writing the temporary file of an atomic write and renaming it
    original_replace = os.replace
    def replace(src, dst, *a, **k):
        seen["n"] += 1
        if seen["n"] == index + 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return original_replace(src, dst, *a, **k)
    os.replace = replace
test_faults.PIPELINES[{pipeline!r}][0](Path({tmp!r}), Path({out!r}))
"""
SIGKILL_CASES = [("bilingual", "stage", 2), ("bilingual", "write", 3),
                 ("monolingual", "stage", 3), ("monolingual", "write", 2),
                 ("rank", "stage", 2), ("rank", "write", 1),
                 ("compression", "stage", 1), ("compression", "write", 0)]


@pytest.mark.parametrize("pipeline, where, index", SIGKILL_CASES)
def test_sigkilled_process_resumes_to_the_identical_result(tmp_path, clean, pipeline, where,
                                                           index):
    out = tmp_path / "run"
    _prepare(pipeline, tmp_path)
    script = CHILD.format(tests=str(Path(__file__).parent), where=where, index=index,
                          pipeline=pipeline, tmp=str(tmp_path), out=str(out))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    child = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=600)
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    assert out.exists()                                   # it died with work on disk
    body, _ = PIPELINES[pipeline]
    body(tmp_path, out)                                   # resume, no fault
    assert _parquet(out) == clean[pipeline]


# -- SIGKILL from outside, at a seeded random moment of a real `cppdb` process ------------------
def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "cppdb.cli", *args, "-q"]


def _cli_case(pipeline: str, tmp: Path, out: Path) -> list[str]:
    if pipeline == "rank":
        if not out.exists():
            shutil.copytree(tmp / "bilingual-for-rank", out)
        return _cli("rank", str(out), "--set", "features.embedding=false")
    table = tmp / "paraphrases.tsv"
    table.write_text(PARAPHRASE_TABLE, "utf-8")
    return _cli("build-compression", str(DATA / "news" / "pairs.jsonl"), "-o", str(out),
                "--paraphrases", str(table),
                "--set", "compression.overlap_denominator=headline_content",
                "--set", "compression.overlap_source=alignment")


def _outputs_without_paths(root: Path, tmp: Path) -> dict[str, bytes]:
    """Every output, with the case's own temporary directory written out of the bytes (the
    compression report records the paraphrase table's path)."""
    return {name: data.replace(str(tmp).encode(), b"TMP")
            for name, data in _parquet(root).items()}


def _wait_for_stages(child: subprocess.Popen, manifest: Path) -> None:
    import time

    deadline = time.monotonic() + 120
    while not (manifest.exists() and '"stages"' in manifest.read_text("utf-8")):
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)


#: attempts to kill a run before it finishes (each one sooner)
KILL_TRIES = 3


@pytest.mark.slow
@pytest.mark.parametrize("pipeline, seed", [("rank", 0), ("rank", 1), ("compression", 0),
                                            ("compression", 1)])
def test_sigkill_at_a_random_moment_resumes_to_the_identical_result(tmp_path_factory, pipeline,
                                                                   seed):
    """The real process is killed by a signal from outside at a seeded random point of the
    time its pipeline works (from the moment its run manifest appears to the end of a clean
    run); the re-run of the same command gives the byte-identical outputs of a clean run."""
    import random
    import time

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    outputs, window = {}, 0.0
    for case in ("clean", "killed"):
        tmp = tmp_path_factory.mktemp(f"{pipeline}-{seed}-{case}")
        if pipeline == "rank":
            _prepare_rank(tmp)
        out = tmp / "run"
        command = _cli_case(pipeline, tmp, out)
        manifest = out / "ranking" / "manifest.json" if pipeline == "rank" else out / "manifest.json"

        def start() -> subprocess.Popen:
            child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
            _wait_for_stages(child, manifest)
            return child

        child = start()
        working = time.monotonic()
        if case == "clean":
            assert child.wait(600) == 0
            window = time.monotonic() - working
        else:
            delay = random.Random(seed).uniform(0.05, 0.9) * window
            # on a loaded machine the clean run can take longer than this one: a copy that
            # finishes first is started again from nothing and killed sooner
            for _ in range(KILL_TRIES):
                time.sleep(delay)
                child.kill()
                if child.wait(60) == -signal.SIGKILL:
                    break
                shutil.rmtree(manifest.parent)
                delay /= 3
                child = start()
            else:
                pytest.fail(f"finished before each of {KILL_TRIES} kills: no fault")
            subprocess.run(command, env=env, check=True, capture_output=True, timeout=600)
        outputs[case] = _outputs_without_paths(out, tmp)
    assert outputs["killed"] == outputs["clean"]
