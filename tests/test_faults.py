"""Fault injection: a pipeline killed at any stage boundary or mid-chunk resumes to the
byte-identical result of an uninterrupted run.

The "kill" is an exception that is not a cppdb error (a BaseException, like a signal),
raised when a given stage starts or when a given chunk of a chunked stage is written.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from cppdb import run as run_module
from cppdb.config import load_config

DATA = Path(__file__).parents[1] / "data"
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


def _parquet(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.parquet"))}


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


PIPELINES = {"bilingual": (_bilingual, 4), "monolingual": (_monolingual, 5)}
CASES = [(name, "stage", k) for name, (_, n) in PIPELINES.items() for k in range(n)] + \
        [(name, "chunk", k) for name in PIPELINES for k in (0, 1)]


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict[str, dict[str, bytes]]:
    results = {}
    for name, (body, _) in PIPELINES.items():
        tmp = tmp_path_factory.mktemp(f"clean-{name}")
        body(tmp, tmp / "run")
        results[name] = _parquet(tmp / "run")
    return results


@pytest.mark.parametrize("pipeline, where, index", CASES)
def test_killed_run_resumes_to_the_identical_result(tmp_path, monkeypatch, clean, pipeline,
                                                    where, index):
    body, _ = PIPELINES[pipeline]
    with monkeypatch.context() as patch:
        (_kill_at_stage if where == "stage" else _kill_at_chunk)(patch, index)
        with pytest.raises(Killed):
            body(tmp_path, tmp_path / "run")
    body(tmp_path, tmp_path / "run")                     # resume, no fault
    assert _parquet(tmp_path / "run") == clean[pipeline]
