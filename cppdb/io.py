"""Atomic writes and checksums: a crash never leaves a half-written artifact behind."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from cppdb.errors import OutputPathError


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_umask())   # mkstemp makes 0600; outputs follow the umask
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text_atomic(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json_atomic(path: str | Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n")


def write_jsonl_atomic(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    count = 0
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


#: rows per Parquet row group of every file we write.  Fixed so that the same rows give the
#: same bytes: a streamed sink otherwise cuts row groups where its morsels happen to end,
#: which depends on thread timing (same content, different files).
ROW_GROUP_ROWS = 1 << 18


def write_parquet_atomic(path: str | Path, frame: pl.DataFrame | pl.LazyFrame,
                         metadata: dict[str, str] | None = None) -> int:
    """Write (or stream, for a LazyFrame) ``frame`` to ``path`` atomically; return its rows."""
    with atomic_path(path) as tmp:
        if isinstance(frame, pl.LazyFrame):
            frame.sink_parquet(tmp, metadata=metadata, row_group_size=ROW_GROUP_ROWS)
        else:
            frame.write_parquet(tmp, metadata=metadata, row_group_size=ROW_GROUP_ROWS)
    return pl.scan_parquet(path).select(pl.len()).collect().item()


def user_cache_dir() -> Path:
    """Where cppdb keeps what it builds or fetches once per machine (models, exported
    graphs): ``$XDG_CACHE_HOME/cppdb``, else ``~/.cache/cppdb``."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root).expanduser() / "cppdb"


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def inputs_checksum(paths: Iterable[str | Path]) -> dict[str, str]:
    """sha256 of every input file (directories: every file below them, sorted)."""
    sums: dict[str, str] = {}
    for raw in paths:
        path = Path(raw)
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            sums[str(file)] = file_sha256(file)
    return sums


# -- output paths and permissions ----------------------------------------------------------
def _umask() -> int:
    """The process umask (read without changing it where /proc allows)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _nearest_existing(path: Path) -> Path:
    probe = path.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def check_output_file(path: str | Path, what: str = "output file") -> Path:
    """Fail before any work if ``path`` cannot be written as a file."""
    path = Path(path)
    if path.is_dir():
        raise OutputPathError(f"{what} {path} is an existing directory",
                              hint="give a file name, e.g. " + str(path / "out"))
    base = _nearest_existing(path.parent)
    if not base.is_dir():
        raise OutputPathError(f"{what} {path}: {base} is a file, not a directory",
                              hint="choose a path whose parent is a directory")
    try:                            # a real probe: os.access says yes to root everywhere
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=path.parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputPathError(f"{what} {path} cannot be written: {exc.strerror or exc}",
                              hint="choose a writable location or fix the permissions") from exc
    return path


def check_run_dir(path: str | Path, marker: str = "manifest.json") -> Path:
    """Fail before any work if ``path`` cannot be (or is not) a cppdb run directory.

    An existing directory must be empty or hold a manifest: writing a run into a directory
    of other data would overwrite same-named files.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputPathError(f"run directory {path} is an existing file",
                              hint="give a directory path for -o/--out")
    if path.is_dir():
        foreign = [p.name for p in path.iterdir() if not p.name.startswith(".")]
        if foreign and not (path / marker).exists():
            raise OutputPathError(
                f"{path} is an existing directory of other data ({', '.join(sorted(foreign)[:3])}"
                f"{', …' if len(foreign) > 3 else ''}), not a cppdb run directory",
                hint="give a new or empty directory for -o/--out")
    check_output_file(path / marker, "run directory")
    return path
