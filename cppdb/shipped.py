"""Files shipped inside the package (``cppdb/resources``): where they are, in one place.

A run reads some of them (the rankers, the relation classifier, word lists, the risk and
confidence models, tuned ensembles) and names them among its inputs, so their checksums are
part of its fingerprint: after an upgrade that changed one, resuming the run is refused
with the ``--fresh`` hint instead of mixing the old model's rows with the new one's.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

RESOURCES = Path(__file__).resolve().parent / "resources"


def shipped_file(*parts: str) -> Path:
    """The path of a shipped file, e.g. ``shipped_file("ensembles", "fast.json")``."""
    return RESOURCES.joinpath(*parts)


def model_inputs(paths: Iterable[str | Path | None]) -> list[Path]:
    """The model files a run reads, for its inputs: the ones given that exist, deduplicated
    and sorted (a setting that names no file, such as "" or "none", adds nothing)."""
    return sorted({Path(p) for p in paths if p and Path(p).is_file()})
