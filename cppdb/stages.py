"""Declared stages and the one runner every pipeline uses.

A :class:`Stage` names the artifacts it reads (with the key columns it needs), the
artifacts it writes and the function that computes them.  The function knows nothing about
skipping or failure bookkeeping: :func:`run_stages` orders the stages, checks the whole plan
before anything runs (every missing input is reported at once, in one :class:`PlanError`),
skips stages that are done, lets chunked stages resume from their parts on disk, and records
a failure as ``finish("failed")`` in the manifest.  :func:`plan_stages` gives the same plan
without running anything (``--dry-run``).

Inputs are of two kinds: :class:`Artifact` (a file in the run directory, made by an earlier
stage or already there) and :class:`External` (a user's file or an earlier run's table).
Every file a stage body opens is one of its reads
(``tests/project/test_declared_reads.py`` checks that with a file-access spy).  An
``optional`` external input may be absent: that is a planned choice, shown by ``--dry-run``
with its ``effect``, and recorded in the manifest (``notes.optional_inputs`` of the stage) —
never a silent change of the results.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from cppdb.errors import RunStateError
from cppdb.config import Config
from cppdb.io import inputs_checksum
from cppdb.run import fingerprint_of_checksums, manifest_fingerprint, what_differs

PARTS_SUFFIX = ".parts"


class PlanError(RunStateError):
    """A pipeline's plan cannot run: inputs are missing or lack the columns a stage needs."""

    code = "E410"


@dataclass(frozen=True)
class Artifact:
    """An artifact of the run directory, and the columns the reading stage relies on."""

    name: str
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class External:
    """A file outside the run directory; ``any_of``: at least one of ``paths`` must exist.
    ``optional``: the stage also runs without it (present = every path exists), and
    ``effect`` says what then changes."""

    label: str
    paths: tuple[Path, ...]
    any_of: bool = False
    columns: tuple[str, ...] = ()
    hint: str = "check the path"
    optional: bool = False
    effect: str = ""

    def present(self) -> bool:
        found = [Path(p).exists() for p in self.paths]
        return any(found) if self.any_of else bool(found) and all(found)

    def describe(self) -> str:
        text = f"{self.label}: {' | '.join(map(str, self.paths)) or '-'}"
        if not self.optional:
            return text
        state = "present" if self.present() else f"absent, so {self.effect or 'skipped'}"
        return f"{text} (optional; {state})"


def optional_inputs(stage: "Stage") -> dict[str, bool]:
    """Whether each optional input of ``stage`` is there (recorded in the manifest)."""
    return {r.label: r.present() for r in stage.reads
            if isinstance(r, External) and r.optional}


@dataclass(frozen=True)
class Stage:
    """One step: ``body(handle)`` reads ``reads`` and writes ``writes`` (plus ``optional``)."""

    name: str
    reads: tuple[Artifact | External, ...]
    writes: tuple[str, ...]
    body: Callable[[Any], None]
    chunked: bool = False
    optional: tuple[str, ...] = ()
    doc: str = ""
    #: the stage's own working files in the run directory (glob patterns): staging tables,
    #: per-chunk side outputs and work folders it writes, reads back and removes, and caches
    #: whose presence never changes a result (``embeddings-*.parquet``)
    scratch: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlannedStage:
    stage: Stage
    action: str          # "skip" (done), "resume" (parts on disk) or "run"
    parts: int = 0

    def to_json(self) -> dict[str, Any]:
        reads = [r.name if isinstance(r, Artifact) else r.describe() for r in self.stage.reads]
        return {"stage": self.stage.name, "action": self.action, "chunked": self.stage.chunked,
                "parts_on_disk": self.parts, "reads": reads, "writes": list(self.stage.writes),
                "optional_writes": list(self.stage.optional),
                "scratch": list(self.stage.scratch), "doc": self.stage.doc}


@dataclass(frozen=True)
class Plan:
    run_dir: Path
    command: str
    stages: tuple[PlannedStage, ...]
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {"run_dir": str(self.run_dir), "command": self.command,
                "stages": [s.to_json() for s in self.stages], "notes": list(self.notes)}

    def render(self) -> str:
        """The plan as text: one block per stage, in run order."""
        lines = [f"plan for `cppdb {self.command}` in {self.run_dir}"]
        lines += [f"  note: {note}" for note in self.notes]
        for k, planned in enumerate(self.stages, start=1):
            info = planned.to_json()
            extra = f", {planned.parts} part(s) on disk" if planned.parts else ""
            kind = "chunked" if planned.stage.chunked else "whole"
            lines.append(f"{k}. {planned.stage.name} [{planned.action}{extra}; {kind}]"
                         + (f" — {planned.stage.doc}" if planned.stage.doc else ""))
            lines.append(f"     reads:  {', '.join(info['reads']) or '-'}")
            writes = info["writes"] + [f"{w} (optional)" for w in info["optional_writes"]]
            lines.append(f"     writes: {', '.join(writes) or '-'}")
        return "\n".join(lines)


# -- the state of a run directory, without opening it -------------------------------------------
def _manifest(root: Path) -> dict[str, Any]:
    path = root / "manifest.json"
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError:
        return {}


def stage_done(root: Path, manifest: dict[str, Any], name: str) -> bool:
    """Done in the manifest and every recorded output still on disk (as ``RunDir.is_done``)."""
    info = manifest.get("stages", {}).get(name)
    return bool(info and info.get("status") == "done"
                and all((root / a).exists() for a in info.get("outputs", [])))


def _parts_on_disk(root: Path, stage: Stage) -> int:
    if not stage.chunked:
        return 0
    return sum(len(list((root / (w + PARTS_SUFFIX)).glob("part-*.parquet")))
               for w in stage.writes if (root / (w + PARTS_SUFFIX)).is_dir())


def _columns_of(path: Path) -> set[str] | None:
    if path.suffix != ".parquet" or not path.is_file():
        return None
    try:
        return set(pl.read_parquet_schema(path))
    except Exception:    # a corrupt file is reported as lacking everything
        return set()


def _missing_columns(path: Path, columns: Sequence[str]) -> list[str]:
    present = _columns_of(path)
    return [] if present is None or not columns else [c for c in columns if c not in present]


def check_plan(root: Path, stages: Sequence[Stage], manifest: dict[str, Any]) -> list[str]:
    """Every problem of the plan (empty when it can run): missing inputs, missing columns."""
    problems: list[str] = []
    names = [s.name for s in stages]
    if len(set(names)) != len(names):
        problems.append(f"stage names repeat: {names}")
    made: dict[str, str] = {}
    for stage in stages:
        done = stage_done(root, manifest, stage.name)
        for item in stage.reads:
            if isinstance(item, External):
                problems += _check_external(stage.name, item, needed=not done)
            elif not done:
                problems += _check_artifact(root, stage.name, item, made)
        for artifact in (*stage.writes, *stage.optional):
            made.setdefault(artifact, stage.name)
    return problems


def _check_external(stage: str, item: External, needed: bool) -> list[str]:
    if not needed:
        return []
    if item.optional:             # absent is a planned choice; present must have its columns
        return [f"stage '{stage}' needs columns {lacking} in {path}" for path in item.paths
                if Path(path).exists() and (lacking := _missing_columns(Path(path), item.columns))]
    present = [p for p in item.paths if Path(p).exists()]
    if item.any_of and not present:
        names = ", ".join(map(str, item.paths)) or "(none given)"
        return [f"stage '{stage}' needs {item.label}: none of {names} exists ({item.hint})"]
    problems = [] if item.any_of else [
        f"stage '{stage}' needs {item.label} {p}: it does not exist ({item.hint})"
        for p in item.paths if not Path(p).exists()]
    for path in present:
        lacking = _missing_columns(Path(path), item.columns)
        if lacking:
            problems.append(f"stage '{stage}' needs columns {lacking} in {path}")
    return problems


def _check_artifact(root: Path, stage: str, item: Artifact, made: dict[str, str]) -> list[str]:
    if item.name in made:
        return []        # an earlier stage of this plan writes it (and declares it)
    path = root / item.name
    if not path.exists():
        return [f"stage '{stage}' reads {item.name}, which no earlier stage writes and "
                f"{root} does not hold"]
    lacking = _missing_columns(path, item.columns)
    return [f"stage '{stage}' needs columns {lacking} in {path}"] if lacking else []


def plan_stages(root: str | Path, command: str, stages: Sequence[Stage], *,
                notes: Sequence[str] = (), manifest: dict[str, Any] | None = None) -> Plan:
    """Check the plan (raising one :class:`PlanError` listing every problem) and return it."""
    root = Path(root)
    manifest = _manifest(root) if manifest is None else manifest
    problems = check_plan(root, stages, manifest)
    if problems:
        raise PlanError(f"`cppdb {command}` cannot run in {root}; {len(problems)} problem(s):\n"
                        + "\n".join(f"  - {p}" for p in problems),
                        hint="give the missing inputs, or run the commands that make them first")
    planned = []
    for stage in stages:
        parts = _parts_on_disk(root, stage)
        action = ("skip" if stage_done(root, manifest, stage.name)
                  else "resume" if parts else "run")
        planned.append(PlannedStage(stage, action, parts))
    return Plan(root, command, tuple(planned), tuple(notes))


def dry_run_notes(root: Path, config: Config, inputs: Sequence[str | Path],
                  scope: Sequence[str] | None = None) -> list[str]:
    """What reopening ``root`` with ``config`` and ``inputs`` would do, for the plan's header
    (``scope``: the sections the command reads, as :class:`cppdb.run.RunDir` compares them)."""
    checksums = inputs_checksum(inputs)
    fingerprint = fingerprint_of_checksums(config, checksums, scope)
    manifest = _manifest(root)
    if not manifest:
        return [f"new run directory (fingerprint {fingerprint})"]
    if manifest_fingerprint(manifest, scope) != fingerprint:
        return [f"{root} was made with other settings or inputs "
                f"(fingerprint {manifest.get('fingerprint')}, now {fingerprint})"
                f"{what_differs(manifest, config.data, checksums, scope)}: "
                "the run would be refused without --fresh"]
    return [f"resuming run {fingerprint} (status {manifest.get('status')})"]


def run_stages(run: Any, command: str, stages: Sequence[Stage], *, finish: bool = True,
               progress: Callable[[str], None] | None = None) -> Plan:
    """Check the plan, then run every stage that is not done, in order.

    A stage body gets the stage handle (``run.stage``) and writes through it; when it
    returns, every declared (non-optional) output must exist.  Any failure marks the stage
    and the run as failed (``run.finish("failed")``) and is re-raised.
    """
    try:
        plan = plan_stages(run.root, command, stages, manifest=run.manifest)
        for planned in plan.stages:
            stage = planned.stage
            if planned.action != "skip":
                with run.stage(stage.name) as handle:
                    present = optional_inputs(stage)
                    if present:
                        handle.note("optional_inputs", present)
                    stage.body(handle)
                    _check_written(run, stage)
            if progress is not None:
                progress(stage.name)
    except BaseException:
        run.finish("failed")
        raise
    if finish:
        run.finish()
    return plan


def _check_written(run: Any, stage: Stage) -> None:
    missing = [w for w in stage.writes if not run.path(w).exists()]
    if missing:
        raise RunStateError(f"stage '{stage.name}' finished without writing {missing}",
                            hint="this is a bug in the stage; please report it")
