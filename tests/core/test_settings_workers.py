"""One meaning per setting name: ``workers`` counts a stage's worker processes (0 = all cores,
1 = in this process), resolved by ``cppdb.workers.resolve_workers`` alone; thread counts are
``threads``; a renamed key fails before any work with the new name in the message."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from cppdb import workers as workers_module
from cppdb.annotate.settings import AnnotateSettings
from cppdb.config import load_config, resolve
from cppdb.defaults import all_sections
from cppdb.errors import ConfigError
from cppdb.workers import resolve_workers

PACKAGE = Path(__file__).resolve().parents[2] / "cppdb"
CORES = 6
#: sections with a ``workers`` setting; each is read through resolve_workers
WORKER_SECTIONS = {"align_words", "annotate", "bilingual", "compression", "ocr"}


@pytest.fixture
def six_cores(monkeypatch):
    monkeypatch.setattr(workers_module, "available_cores", lambda: CORES)


@pytest.mark.parametrize("setting, cap, expected", [
    (0, 0, CORES),          # all cores
    (1, 0, 1),              # in this process
    (3, 0, 3),
    (CORES + 4, 0, CORES + 4),   # an explicit count is taken as given
    (0, 4, 4),              # all cores, capped (ocr.max_workers)
    (0, CORES + 2, CORES),  # a cap above the cores changes nothing
    (9, 4, 9),              # the cap bounds only "all cores"
])
def test_resolve_workers_table(six_cores, setting, cap, expected):
    assert resolve_workers(setting, "x.workers", all_cores_cap=cap) == expected


@pytest.mark.parametrize("setting", [-1, -8, True, 1.5, "2"])
def test_resolve_workers_rejects_what_is_no_process_count(setting):
    with pytest.raises(ConfigError) as err:
        resolve_workers(setting, "ocr.workers")
    assert err.value.code == "E100" and "'ocr.workers'" in str(err.value)


def test_available_cores_is_this_process_share():
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count()
    assert workers_module.available_cores() == expected >= 1


def test_every_workers_setting_is_a_process_count_read_by_the_one_resolver():
    defaults = all_sections()
    with_workers = {name for name, table in defaults.items() if "workers" in table}
    assert with_workers == WORKER_SECTIONS, "a new `workers` setting: resolve it with " \
        "cppdb.workers.resolve_workers and add its section here"
    assert all(defaults[name]["workers"] >= 0 for name in with_workers)
    assert "workers" not in defaults["features"] and defaults["features"]["threads"] == 0


def test_only_workers_py_counts_cores():
    """A second resolver would count the cores itself (spark.py parses ``local[*]``)."""
    allowed = {PACKAGE / "workers.py", PACKAGE / "engine" / "spark.py"}
    found = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if p not in allowed
             and re.search(r"cpu_count\(|sched_getaffinity\(", p.read_text("utf-8"))]
    assert found == []


def test_stages_resolve_zero_as_all_cores(six_cores):
    from cppdb.annotate.pipeline import AnnotationSession
    from cppdb.ocr.batch import OcrSettings

    config = resolve(AnnotateSettings, load_config(overrides={"annotate.workers": 0}))
    assert AnnotationSession(config).workers == CORES
    assert AnnotationSession(config, workers=0).workers == CORES   # the same meaning in Python
    assert AnnotationSession(config, workers=1).workers == 1
    ocr = resolve(OcrSettings, load_config())
    assert (ocr.workers, ocr.max_workers) == (0, 4)                # the default: min(cores, 4)
    assert ocr.resolved_workers(100) == 4 and ocr.resolved_workers(2) == 2
    uncapped = resolve(OcrSettings, load_config(overrides={"ocr.max_workers": 0}))
    assert uncapped.resolved_workers(100) == CORES


def test_an_unknown_key_still_lists_the_known_ones():
    with pytest.raises(ConfigError) as err:
        load_config(overrides=["features.worker=2"])
    assert "unknown setting 'features.worker'" in str(err.value) and "threads" in str(err.value)


@pytest.mark.parametrize("threads, expected", [(0, -1), (1, 1), (3, 3)])
def test_features_threads_in_rapidfuzz_spelling(threads, expected):
    from cppdb.text.distance import rapidfuzz_workers

    assert rapidfuzz_workers(threads) == expected


def test_negative_threads_are_rejected():
    from cppdb.text.distance import rapidfuzz_workers

    with pytest.raises(ConfigError, match="features.threads"):
        rapidfuzz_workers(-1)
    with pytest.raises(ConfigError, match="out of range"):
        load_config(overrides=["features.threads=-1"])
