"""Run directories: a manifest, stage bookkeeping, resumable chunked stages.

A run directory holds ``manifest.json`` and one artifact (Parquet/JSONL) per stage output.
A finished stage is skipped on re-run; a chunked stage writes each chunk atomically under
``<artifact>.parts/`` so an interrupted run resumes where it stopped and never duplicates
rows.  A run directory belongs to one fingerprint (config + inputs): reopening it with other
settings is refused unless ``fresh=True``.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl

from cppdb.config import Config
from cppdb.errors import RunMismatchError, RunStateError
from cppdb.io import check_run_dir, inputs_checksum, write_json_atomic, write_parquet_atomic
from cppdb.schema import sort_for_write
from cppdb.version import __version__

MANIFEST = "manifest.json"
LOCK = ".lock"
PREV_SUFFIX = ".prev"
_HELD: dict[Path, Any] = {}     # run directories this process holds the lock of


def chunk_ranges(n_items: int, chunk_size: int) -> list[tuple[int, int]]:
    """``[start, stop)`` of every chunk; one empty chunk for an empty input (so an empty
    artifact is still written)."""
    return [(start, min(start + chunk_size, n_items))
            for start in range(0, max(n_items, 1), chunk_size)]


def part_path(parts_dir: Path, start: int) -> Path:
    """The file of the chunk starting at row ``start`` (names sort in row order)."""
    return Path(parts_dir) / f"part-{start:012d}.parquet"


def _lock(root: Path) -> Any:
    """Lock ``root`` against a second writer (released on exit, also on SIGKILL)."""
    key = root.resolve()
    if key in _HELD:                # this process re-opens its own run: take the lock over
        _HELD.pop(key).close()
    handle = open(root / LOCK, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        owner = handle.read().strip() or "?"
        handle.close()
        raise RunStateError(f"run directory {root} is in use by another cppdb process "
                            f"(pid {owner})",
                            hint="wait for it to finish, or use another output directory")
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    _HELD[key] = handle
    return handle


_ACTIVE: list["RunDir"] = []      # the run this process is writing (for the interrupt line)


def active_run_summary() -> str:
    """``"; finished: a, b in RUN"`` for the run being written, or ``""``."""
    if not _ACTIVE:
        return ""
    run = _ACTIVE[-1]
    done = [n for n, i in run.manifest.get("stages", {}).items() if i.get("status") == "done"]
    return f"; finished stages in {run.root}: {', '.join(done) or 'none'}"


def _unlock(root: Path) -> None:
    handle = _HELD.pop(root.resolve(), None)
    if handle is not None:
        handle.close()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


#: settings that say where work runs, not what it computes: left out of the fingerprint so a
#: run may resume on another machine (the backend signatures in the manifest still name them)
PLACEMENT_KEYS = frozenset({"device"})


def _without_placement(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_placement(v) for k, v in value.items() if k not in PLACEMENT_KEYS}
    return value


def _fingerprint(config: dict[str, Any], inputs: dict[str, str],
                 scope: Sequence[str] | None = None) -> str:
    """Hash of the settings the run reads (``scope``: its sections; None: all of them) and
    its inputs' checksums.  Scoping keeps a long run resumable after an upgrade that changed
    only the defaults of sections it never reads."""
    if scope is not None:
        config = {name: config[name] for name in sorted(scope) if name in config}
    blob = json.dumps({"config": _without_placement(config), "inputs": sorted(inputs.values())},
                      sort_keys=True,
                      ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def fingerprint_of(config: Config, inputs: Sequence[str | Path],
                   scope: Sequence[str] | None = None) -> str:
    """The fingerprint a run directory opened with ``config`` and ``inputs`` would get."""
    return fingerprint_of_checksums(config, inputs_checksum(inputs), scope)


def fingerprint_of_checksums(config: Config, checksums: dict[str, str],
                             scope: Sequence[str] | None = None) -> str:
    """As :func:`fingerprint_of`, with the inputs' checksums already computed."""
    return _fingerprint(config.data, checksums, scope)


def manifest_fingerprint(manifest: dict[str, Any], scope: Sequence[str] | None) -> str | None:
    """The fingerprint of an existing manifest's own config and inputs, over ``scope`` (None:
    every section): a run written with another scope (before its command scoped the
    fingerprint, or by a caller that does not scope) matches when the sections read now are
    unchanged."""
    if "config" not in manifest or "inputs" not in manifest:
        return manifest.get("fingerprint")
    return _fingerprint(manifest["config"], manifest["inputs"], scope)


def what_differs(manifest: dict[str, Any], config: dict[str, Any], inputs: dict[str, str],
                  scope: Sequence[str] | None) -> str:
    """``: settings [rank]; inputs relation_model.json`` — what changed since the manifest
    was written (settings sections within ``scope``; input files whose content changed, or
    that are new or gone), so the refusal says why; empty for a manifest without them."""
    if "config" not in manifest or "inputs" not in manifest:
        return ""
    old_config, old_inputs = manifest["config"], manifest["inputs"]
    sections = sorted(name for name in set(config) | set(old_config)
                      if (scope is None or name in scope)
                      and _without_placement(config.get(name)) != _without_placement(
                          old_config.get(name)))
    old_sums, new_sums = set(old_inputs.values()), set(inputs.values())
    files = sorted({Path(p).name for p, s in inputs.items() if s not in old_sums}
                   | {Path(p).name for p, s in old_inputs.items() if s not in new_sums})
    parts = ([f"settings [{'], ['.join(sections)}]"] if sections else []) \
        + ([f"inputs {', '.join(files[:4])}" + (" …" if len(files) > 4 else "")]
           if files else [])
    return (": " + "; ".join(parts)) if parts else ""


@dataclass
class StageHandle:
    """What a stage body uses to write its outputs and record counts."""

    run: "RunDir"
    name: str
    rows: dict[str, int] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)

    def write_parquet(self, artifact: str, frame: pl.DataFrame | pl.LazyFrame) -> Path:
        path = self.run.path(artifact)
        self.rows[artifact] = write_parquet_atomic(
            path, sort_for_write(artifact, frame),
            metadata={"cppdb_signature": self.run.signature})
        return path

    def count(self, key: str, value: int) -> None:
        self.rows[key] = int(value)

    def note(self, key: str, value: Any) -> None:
        self.notes[key] = value

    def run_parts(self, artifact: str, n_items: int, chunk_size: int,
                  compute: Callable[[int, int], pl.DataFrame], *,
                  shipped: Callable[[], AbstractContextManager[Callable[[int, int], Any]]]
                  | None = None, progress: Callable[[int], None] | None = None) -> Path:
        """Every chunk of ``artifact`` (items ``[start, stop)``), resumable, then assembled.

        Where the chunks run is the run's engine's business, not the stage's: an engine that
        runs them elsewhere (``Engine.remote``: Spark) gets ``shipped()`` — a context
        manager yielding the same computation as a picklable function — for every chunk not
        yet on disk; ``compute`` makes in this process whatever is still missing."""
        self._ship(artifact, n_items, chunk_size, shipped)
        return self.run.run_chunked(self, artifact, n_items, chunk_size, compute, progress)

    def map_parts(self, name: str, n_items: int, chunk_size: int,
                  compute: Callable[[int, int], pl.DataFrame], *,
                  shipped: Callable[[], AbstractContextManager[Callable[[int, int], Any]]]
                  | None = None) -> list[Path]:
        """As :meth:`run_parts`, but the chunk files of ``<name>.parts/`` are returned in row
        order instead of assembled (for a stage that combines them itself)."""
        self._ship(name, n_items, chunk_size, shipped)
        parts = self.run.path(name + ".parts")
        parts.mkdir(parents=True, exist_ok=True)
        for start, stop in chunk_ranges(n_items, chunk_size):
            if not part_path(parts, start).exists():
                write_parquet_atomic(part_path(parts, start), compute(start, stop))
        return [part_path(parts, start) for start, _ in chunk_ranges(n_items, chunk_size)]

    def _ship(self, name: str, n_items: int, chunk_size: int, shipped: Any) -> None:
        engine = self.run.engine
        if shipped is None or engine is None or not engine.remote:
            return
        parts = self.run.path(name + ".parts")
        if all(part_path(parts, a).exists() for a, _ in chunk_ranges(n_items, chunk_size)):
            return                                  # resumed: nothing left to ship
        with shipped() as part:
            engine.compute_parts(parts, n_items, chunk_size, part)

    def share(self, value: Any) -> Any:
        """A handle whose ``.value`` is ``value`` in every chunk: the engine's broadcast
        where chunks run elsewhere, else the value itself."""
        engine = self.run.engine
        return engine.share(value) if engine is not None else SimpleNamespace(value=value)

    @property
    def engine_name(self) -> str | None:
        """The run's engine when it runs chunks elsewhere (for the manifest), else None."""
        engine = self.run.engine
        return engine.name if engine is not None and engine.remote else None


class RunDir:
    """A run directory and its manifest."""

    def __init__(self, root: str | Path, config: Config, *, command: str,
                 inputs: Sequence[str | Path] = (), fresh: bool = False,
                 engine: Any = None, scope: Sequence[str] | None = None) -> None:
        self.root = Path(root)
        #: where chunked stages run (``cppdb.engine``); None: in this process
        self.engine = engine
        check_run_dir(self.root)
        self.config = config
        checksums = inputs_checksum(inputs)
        fingerprint = _fingerprint(config.data, checksums, scope)
        self.root.mkdir(parents=True, exist_ok=True)
        _lock(self.root)
        existing = self._read_manifest()
        same = bool(existing) and manifest_fingerprint(existing, scope) == fingerprint
        if existing and not same and not fresh:
            _unlock(self.root)
            raise RunMismatchError(
                f"run directory {self.root} was made with another config or other inputs "
                f"(fingerprint {existing.get('fingerprint')}, now {fingerprint})"
                + what_differs(existing, config.data, checksums, scope),
                hint="use a new output directory, or pass --fresh to discard its stages")
        self.prev: Path | None = None
        if existing and same and not fresh:
            self.manifest = existing
            self.manifest.update(fingerprint=fingerprint, config=config.data)
        else:
            if existing and fresh:
                self._move_aside()
            self.manifest = {
                "cppdb_version": __version__, "created": _now(), "command": command,
                "fingerprint": fingerprint, "config": config.data, "inputs": checksums,
                "backends": {}, "stages": {}, "status": "running",
            }
        self.manifest["status"] = "running"
        self._save()
        _ACTIVE[:] = [self]             # the latest run opened is the one being written

    # -- --fresh: the old run is kept until the new one has finished ------------------------
    def _move_aside(self) -> None:
        """Move the old run to ``RUN.prev``; it is deleted when the new run finishes, and put
        back if the new run fails before finishing any stage (a bad input, a bad label file)."""
        prev = self.root.with_name(self.root.name + PREV_SUFFIX)
        self._remove(prev)
        _unlock(self.root)
        os.replace(self.root, prev)
        self.root.mkdir(parents=True)
        _lock(self.root)
        (prev / LOCK).unlink(missing_ok=True)
        self.prev = prev

    def _settle_prev(self, ok: bool) -> None:
        if self.prev is None or not self.prev.exists():
            return
        if ok:
            self._remove(self.prev)
        elif not any(i.get("status") == "done" for i in self.manifest["stages"].values()):
            _unlock(self.root)
            self._remove(self.root)          # nothing of the new run is worth keeping
            os.replace(self.prev, self.root)
            print(f"the previous run in {self.root} was kept (the --fresh run failed before "
                  "finishing a stage)", file=sys.stderr)
            self.prev = None
            return
        else:
            print(f"the previous run is kept in {self.prev} (the --fresh run stopped part-way; "
                  "re-run to resume it, or delete that directory)", file=sys.stderr)
        self.prev = None

    # -- paths and manifest ---------------------------------------------------------------
    def path(self, artifact: str) -> Path:
        return self.root / artifact

    @property
    def signature(self) -> str:
        """sacrebleu-style one-line summary of everything that changes results."""
        parts = [f"cppdb:{__version__}", f"fp:{self.manifest['fingerprint']}"]
        for name, info in sorted(self.manifest["backends"].items()):
            parts.append(f"{name}:{info.get('signature', info.get('version', '?'))}")
        return "|".join(parts)

    def _read_manifest(self) -> dict[str, Any] | None:
        path = self.root / MANIFEST
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text("utf-8"))
        except json.JSONDecodeError as exc:
            raise RunStateError(f"{path} is corrupt: {exc}",
                                hint="delete the run directory or pass --fresh") from exc

    def _save(self) -> None:
        self.manifest["signature"] = self.signature
        write_json_atomic(self.root / MANIFEST, self.manifest)

    @staticmethod
    def _remove(path: Path) -> None:
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()

    def record_backend(self, role: str, info: dict[str, Any]) -> None:
        self.manifest["backends"][role] = info
        self._save()

    def finish(self, status: str = "done") -> None:
        if status != "done" and self.prev is not None and not any(
                i.get("status") == "done" for i in self.manifest["stages"].values()):
            self._settle_prev(ok=False)          # the old run is back in place, untouched
            return
        self.manifest["status"] = status
        self.manifest["finished"] = _now()
        self._save()
        self._settle_prev(ok=status == "done")
        _unlock(self.root)

    # -- stages ---------------------------------------------------------------------------
    def is_done(self, stage: str) -> bool:
        info = self.manifest["stages"].get(stage)
        return bool(info and info.get("status") == "done"
                    and all(self.path(a).exists() for a in info.get("outputs", [])))

    def stage_info(self, stage: str) -> dict[str, Any]:
        return self.manifest["stages"].get(stage, {})

    @contextmanager
    def stage(self, name: str) -> Iterator[StageHandle]:
        """Run a stage body, recording status, timings, counts and outputs."""
        handle = StageHandle(self, name)
        started = time.perf_counter()
        self.manifest["stages"][name] = {"status": "running", "started": _now()}
        self._save()
        try:
            yield handle
        except BaseException as exc:
            info = self.manifest["stages"][name]
            info.update(status="failed", error=f"{type(exc).__name__}: {exc}"[:2000],
                        seconds=round(time.perf_counter() - started, 3))
            self.manifest["status"] = "failed"
            self._save()
            self._settle_prev(ok=False)
            raise
        info = self.manifest["stages"][name]
        info.update(status="done", finished=_now(), seconds=round(time.perf_counter() - started, 3),
                    rows=handle.rows, outputs=sorted(set(handle.rows) & self._artifacts()),
                    **({"notes": handle.notes} if handle.notes else {}))
        self._save()

    def _artifacts(self) -> set[str]:
        return {p.name for p in self.root.iterdir() if p.name != LOCK}

    def run_chunked(self, handle: StageHandle, artifact: str, n_items: int, chunk_size: int,
                    compute: Callable[[int, int], pl.DataFrame],
                    progress: Callable[[int], None] | None = None) -> Path:
        """Compute rows ``[start, stop)`` chunk by chunk, each chunk written atomically.

        Chunks already on disk (from an interrupted run) are reused, so a resumed run
        produces exactly the rows an uninterrupted one would, with nothing duplicated.
        """
        parts = self.path(artifact + ".parts")
        parts.mkdir(parents=True, exist_ok=True)
        for start, stop in chunk_ranges(n_items, chunk_size):
            part = part_path(parts, start)
            if not part.exists():
                write_parquet_atomic(part, compute(start, stop))
            if progress:
                progress(stop - start)
        files = sorted(parts.glob("part-*.parquet"))
        out = handle.write_parquet(artifact, pl.scan_parquet(files))
        shutil.rmtree(parts)
        return out

    def read(self, artifact: str) -> pl.DataFrame:
        path = self.path(artifact)
        if not path.exists():
            raise RunStateError(f"{path} does not exist",
                                hint="run the stage that produces it first")
        return pl.read_parquet(path)

    def scan(self, artifact: str) -> pl.LazyFrame:
        path = self.path(artifact)
        if not path.exists():
            raise RunStateError(f"{path} does not exist",
                                hint="run the stage that produces it first")
        return pl.scan_parquet(path)
