"""Load a cppdb paraphrase table for paraphrase-aware keyword alignment.

Accepted sources:

* a bilingual/monolingual **run directory**: ``ranking/ranked_pairs.parquet`` (written by
  ``cppdb rank``, with a ``score`` column; filtered-out pairs are not in it) if the run was
  ranked, else ``phrase_pairs.parquet`` and ``pattern_pairs.parquet`` (columns of
  :data:`cppdb.schema.PAIR_COLUMNS`; ``source``/``target`` are space-joined tokens);
* a **table file**: Parquet with ``source``, ``target`` [, ``score``], or TSV
  ``source<TAB>target[<TAB>score]`` (an optional header line starting with ``source``).

Entries are matched on character strings (tokens joined without spaces) because the table's
segmentation need not be jieba's.  Pattern pairs (``[NP1] 出生于 [NP2]``) contribute their
lexical part when each side has exactly one contiguous run of words between slots.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from cppdb import schema
from cppdb.errors import BadInputError

SCORE = "score"
_SLOT = re.compile(r"^\[[A-Z]+[0-9]*\]$")


@dataclass(frozen=True)
class ParaphraseTable:
    """Symmetric index: character string -> ((paraphrase string, score), ...), best first."""

    index: dict[str, tuple[tuple[str, float], ...]]
    source: str
    n_pairs: int
    scored: bool

    def lookup(self, text: str) -> tuple[tuple[str, float], ...]:
        return self.index.get(text, ())


def _lexical_part(tokens: str) -> str | None:
    """Characters of a phrase, or of a pattern's single lexical run; None if not usable."""
    words = tokens.split()
    runs: list[list[str]] = [[]]
    for word in words:
        if _SLOT.match(word):
            runs.append([])
        else:
            runs[-1].append(word)
    lexical = [run for run in runs if run]
    if len(lexical) != 1:
        return None
    return "".join(lexical[0])


def _read_table_file(path: Path) -> pl.DataFrame:
    if path.suffix == ".parquet":
        frame = pl.read_parquet(path)
    else:
        rows = []
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                cols = line.rstrip("\n").split("\t")
                if number == 1 and cols[0].strip().lower() == "source":
                    continue
                if not line.strip():
                    continue
                if len(cols) not in (2, 3):
                    raise BadInputError(
                        f"{path}:{number}: expected source<TAB>target[<TAB>score], "
                        f"found {len(cols)} column(s)")
                try:
                    score = float(cols[2]) if len(cols) == 3 else None
                except ValueError as exc:
                    raise BadInputError(f"{path}:{number}: score {cols[2]!r} is not a number") \
                        from exc
                rows.append((cols[0], cols[1], score))
        frame = pl.DataFrame(rows, schema={"source": pl.String, "target": pl.String,
                                           SCORE: pl.Float64}, orient="row")
        if frame[SCORE].null_count() == frame.height:
            frame = frame.drop(SCORE)
    missing = [c for c in (schema.SOURCE, schema.TARGET) if c not in frame.columns]
    if missing:
        raise BadInputError(f"paraphrase table {path} lacks column(s) {', '.join(missing)}",
                            hint="a table needs 'source' and 'target' (and optionally 'score')")
    return frame


def table_files(path: str | Path) -> list[Path]:
    """The files a table at ``path`` is read from: the file itself, or a run directory's
    ranked table, else its phrase and pattern tables (what the build's fingerprint covers:
    not the run's lock, manifest or lookup index, which change when it is only reopened)."""
    path = Path(path)
    if not path.is_dir():
        return [path]
    ranked = path / schema.RANKING_DIR / schema.RANKED_FILE
    if ranked.exists():
        return [ranked]
    return [path / n for n in (schema.PHRASE_PAIRS_FILE, schema.PATTERN_PAIRS_FILE)
            if (path / n).exists()]


def _read_source(path: Path) -> pl.DataFrame:
    if not path.exists():
        raise BadInputError(f"paraphrase table {path} does not exist",
                            hint="pass a run directory or a .parquet/.tsv table")
    parts = table_files(path)
    if path.is_file() or parts[:1] == [path / schema.RANKING_DIR / schema.RANKED_FILE]:
        return _read_table_file(parts[0])
    if not parts:
        raise BadInputError(
            f"run directory {path} has no {schema.RANKING_DIR}/{schema.RANKED_FILE}, "
            f"{schema.PHRASE_PAIRS_FILE} or {schema.PATTERN_PAIRS_FILE}",
            hint="run `cppdb extract-bilingual` (and `cppdb rank`) first")
    return pl.concat([pl.read_parquet(p, columns=[schema.SOURCE, schema.TARGET]) for p in parts])


def load_paraphrase_table(path: str | Path, *, min_score: float = 0.0,
                          top_percent: float = 100.0, max_chars: int = 12) -> ParaphraseTable:
    """Read, threshold (when scored) and index a paraphrase table symmetrically."""
    path = Path(path)
    frame = _read_source(path)
    scored = SCORE in frame.columns
    if scored:
        frame = frame.filter(pl.col(SCORE).is_not_null() & (pl.col(SCORE) >= min_score))
        if top_percent < 100.0:
            keep = int(round(frame.height * top_percent / 100.0))
            frame = frame.sort(SCORE, descending=True).head(keep)
    else:
        frame = frame.with_columns(pl.lit(1.0).alias(SCORE))
    best: dict[tuple[str, str], float] = {}
    for source, target, score in frame.select(schema.SOURCE, schema.TARGET, SCORE).iter_rows():
        if source is None or target is None:
            continue
        left, right = _lexical_part(source), _lexical_part(target)
        if not left or not right or left == right:
            continue
        if len(left) > max_chars or len(right) > max_chars:
            continue
        for key in ((left, right), (right, left)):
            best[key] = max(best.get(key, float("-inf")), float(score))
    grouped: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (left, right), score in best.items():
        grouped[left].append((right, score))
    index = {k: tuple(sorted(v, key=lambda item: (-item[1], item[0]))) for k, v in grouped.items()}
    return ParaphraseTable(index=index, source=str(path), n_pairs=len(best) // 2, scored=scored)
