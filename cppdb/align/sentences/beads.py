"""Beads and Vecalign's text format ``[i, j]:[k]:cost`` (0-based; ``[]`` for an empty side)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from cppdb.errors import BadInputError

_BEAD = re.compile(r"^\s*\[([^\]]*)\]\s*:\s*\[([^\]]*)\]\s*(?::\s*(\S+))?\s*$")


@dataclass(frozen=True)
class Bead:
    """Source and target sentence indices aligned together, with the aligner's cost."""

    src: tuple[int, ...]
    tgt: tuple[int, ...]
    cost: float = 0.0
    anchor: bool = False   # a BAM anchor (fixed before the DP)

    @property
    def is_one_to_one(self) -> bool:
        return len(self.src) == 1 and len(self.tgt) == 1

    @property
    def kind(self) -> str:
        return f"{len(self.src)}-{len(self.tgt)}"

    def format(self) -> str:
        cost = "nan" if math.isnan(self.cost) else f"{self.cost:.6f}"
        return (f"[{', '.join(map(str, self.src))}]:[{', '.join(map(str, self.tgt))}]"
                f":{cost}")


def _indices(text: str, where: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise BadInputError(f"{where}: bead indices must be integers: [{text}]",
                            hint="beads look like [0, 1]:[2]:0.25 (0-based)") from exc


def parse_beads(text: str, source: str = "<beads>") -> list[Bead]:
    beads = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _BEAD.match(line)
        where = f"{source} line {number}"
        if not match:
            raise BadInputError(f"{where} is not a bead: {line[:80]!r}",
                                hint="expected Vecalign format [i, j]:[k] or [i, j]:[k]:cost")
        cost = float(match.group(3)) if match.group(3) else 0.0
        beads.append(Bead(_indices(match.group(1), where), _indices(match.group(2), where), cost))
    return beads


def read_beads(path: str | Path) -> list[Bead]:
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"bead file {path} does not exist")
    return parse_beads(path.read_text("utf-8"), str(path))


def format_beads(beads: list[Bead]) -> str:
    return "".join(bead.format() + "\n" for bead in beads)


def check_coverage(beads: list[Bead], n_src: int, n_tgt: int) -> None:
    """Every sentence exactly once, in order (a property of every aligner output)."""
    src = [i for b in beads for i in b.src]
    tgt = [j for b in beads for j in b.tgt]
    if src != list(range(n_src)) or tgt != list(range(n_tgt)):
        raise BadInputError(
            f"beads do not cover 0..{n_src - 1} x 0..{n_tgt - 1} monotonically "
            f"(got {len(src)} source and {len(tgt)} target indices)")
