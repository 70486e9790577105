"""Pair tables in and out of ranking: a run's pair tables, raw text pairs, label files."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import polars as pl

from cppdb import schema as S
from cppdb.annotate.settings import AnnotateSettings
from cppdb.errors import BadInputError, RunStateError
from cppdb.readers.encoding import read_text_bytes
from cppdb.registry import load_backend

PAIR_TABLES = S.PAIR_TABLE_FILES
#: extra columns of monolingual sentence pairs that ranking uses (weak labels, filters)
EXTRA_COLUMNS = {"anchor": pl.Boolean, "cost": pl.Float64, S.SOURCE_NORM: pl.String,
                 S.TARGET_NORM: pl.String}
LABEL = "label"


def pair_table_paths(run_dir: str | Path) -> list[Path]:
    run_dir = Path(run_dir)
    paths = [run_dir / name for name in PAIR_TABLES if (run_dir / name).exists()]
    if not paths:
        raise RunStateError(f"{run_dir} holds no pair table ({', '.join(PAIR_TABLES)})",
                            hint="run `cppdb extract-bilingual` or `cppdb extract-monolingual` "
                                 "into this directory first")
    return paths


def read_run_pairs(run_dir: str | Path) -> pl.DataFrame:
    """All pair tables of a run in one frame: PAIR_COLUMNS plus the known extra columns."""
    frames = []
    for path in pair_table_paths(run_dir):
        frame = pl.read_parquet(path)
        missing = [c for c in (S.SOURCE, S.TARGET, S.TYPE) if c not in frame.columns]
        if missing:
            raise BadInputError(f"{path} lacks column(s) {', '.join(missing)}",
                                hint="pair tables follow cppdb.schema.PAIR_COLUMNS")
        wanted = {**S.PAIR_COLUMNS, **EXTRA_COLUMNS}
        frames.append(frame.select(
            [pl.col(c).cast(t) if c in frame.columns else pl.lit(None, dtype=t).alias(c)
             for c, t in wanted.items()]))
    return pl.concat(frames, how="vertical")


def text_pairs(sources: list[str], targets: list[str], annotate: AnnotateSettings
               ) -> pl.DataFrame:
    """A pair table from raw text pairs, segmented and POS-tagged by the zh annotator."""
    if len(sources) != len(targets):
        raise BadInputError(f"{len(sources)} sources but {len(targets)} targets")
    annotator = load_backend("zh_annotator", annotate.zh_backend)
    src = annotator.annotate(sources) if sources else []
    tgt = annotator.annotate(targets) if targets else []
    frame = pl.DataFrame({
        S.SOURCE: sources, S.TARGET: targets,
        S.SOURCE_TOKENS: [list(a.tokens) for a in src],
        S.TARGET_TOKENS: [list(b.tokens) for b in tgt],
        S.SOURCE_POS: [list(a.pos) for a in src], S.TARGET_POS: [list(b.pos) for b in tgt],
    }, schema={S.SOURCE: pl.String, S.TARGET: pl.String,
               S.SOURCE_TOKENS: pl.List(pl.String), S.TARGET_TOKENS: pl.List(pl.String),
               S.SOURCE_POS: pl.List(pl.String), S.TARGET_POS: pl.List(pl.String)})
    return frame.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in S.PAIR_COLUMNS.items()
                               if c not in frame.columns]).select(list(S.PAIR_COLUMNS))


def read_tsv_pairs(path: str | Path, *, with_score: bool = False,
                   ignored: list[str] | None = None) -> pl.DataFrame:
    """``source<TAB>target[<TAB>score]`` lines; a first line ``source<TAB>target…`` is a header.

    Parsed strictly: any encoding the other readers detect (GBK, Big5, UTF-16…), CSV-style
    double quotes (a quoted field may hold a tab), and every line must have the column count
    of the first one.  Columns beyond the ones used are allowed only when every line has
    them; they are described in ``ignored`` (if given) so the caller can say so.  Raises
    :class:`BadInputError` naming the first bad line.
    """
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"pairs file {path} does not exist", hint="check the path")
    text = read_text_bytes(path).text.lstrip("\ufeff")
    need = 3 if with_score else 2
    hint = "write source<TAB>target" + ("<TAB>score" * with_score) + \
        " (quote a field that holds a tab or starts with a quote: \"a<TAB>b\", " \
        "\"\"\"hi\"\" she said\")"
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quotechar='"',
                        strict=True)
    rows: list[list[str]] = []
    header: list[str] | None = None
    width = 0
    skipped_blank = 0
    try:
        for fields in reader:
            number = reader.line_num
            if not any(f.strip() for f in fields):
                skipped_blank += 1
                continue
            if header is None and not rows and fields[0].strip().lower() == "source":
                header, width = fields, len(fields)
                continue
            width = width or len(fields)
            if len(fields) != width:
                raise BadInputError(f"{path}: line {number} has {len(fields)} field(s), the "
                                    f"first line has {width}", hint=hint)
            if len(fields) < need or not fields[0].strip() or not fields[1].strip():
                raise BadInputError(f"{path}: line {number} has {len(fields)} field(s), "
                                    f"expected {need} non-empty tab-separated fields", hint=hint)
            rows.append(fields[:need])
    except csv.Error as exc:
        raise BadInputError(f"{path}: line {reader.line_num}: {exc}", hint=hint) from exc
    if not rows:
        raise BadInputError(f"{path} contains no pairs", hint=hint)
    if ignored is not None:
        if width > need:
            names = header[need:] if header else [f"column {i + 1}" for i in range(need, width)]
            ignored.append(f"{len(rows)} lines: ignored extra column(s) {', '.join(names)}")
        if skipped_blank:
            ignored.append(f"{skipped_blank} blank line(s) skipped")
    frame = pl.DataFrame(rows, schema=["source", "target", "score"][:need], orient="row")
    if with_score:
        frame = _parse_scores(frame, path)
    return frame


def _parse_scores(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    scores = frame["score"].str.strip_chars().cast(pl.Float64, strict=False)
    bad = scores.is_null() | (scores < 1) | (scores > 5)
    if bad.any():
        row = int(bad.arg_max())
        raise BadInputError(f"{path}: label {frame['score'][row]!r} of pair {row + 1} is not a "
                            "number from 1 to 5", hint="use the 1–5 Callison-Burch scale")
    return frame.with_columns(scores.alias(LABEL)).drop("score")


def join_key(column: str) -> pl.Expr:
    """Match key of a side: NFKC text without whitespace (phrases are space-joined)."""
    return pl.col(column).str.normalize("NFKC").str.replace_all(r"\s+", "")
