"""Writers and readers of pair tables: PPDB lines, Chinese-PPDB JSONL, TSV, Parquet.

``write_pairs(frame, path, format)`` writes any pair table (``cppdb.schema.PAIR_COLUMNS``
plus numeric feature/score columns); ``read_pairs(path, format)`` reads it back.

* ``ppdb`` — ``[LHS] ||| source ||| target ||| name=value ... ||| 0-0 1-2 ||| entailment``
  (PPDB 2.0's layout; slots are written PPDB-style ``[NP,1]`` and read back as cppdb's
  ``[NP1]``); the entailment field as in JSONL.  Five-field lines (PPDB 1.0) are read too.
* ``jsonl`` — one object per pair in the Chinese-PPDB release layout: ``type`` (``phrase``,
  ``template`` for patterns, ``sentence``), ``source``, ``target``, ``from`` (origin),
  ``anchor`` (the English pivots), ``features`` (object), ``alignment`` (Pharaoh ``"i-j"``
  strings), ``entailment`` (the ranked table's ``relation``: the relation classifier's, or
  ``Exclusion`` by the ranker's rule; a table without one gets Forward/ReverseEntailment when
  one side's words all occur in the other, longer side, ``""`` = unknown); plus the cppdb
  extensions ``relation_evidence`` (why a pair is Exclusion: ``antonym increase/decrease``,
  ``negation``, ``number``, ``kin``, ``name``), ``lhs`` and ``documents``
  (the documents a monolingual pair was aligned in: ``{"version", "path", "part"}`` objects).
* ``tsv`` — every column; list columns as JSON arrays.
* ``parquet`` — every column, unchanged.

What does not survive a round trip: PPDB lines keep no pivots, documents, origin or POS;
JSONL keeps no POS.  Token lists are rebuilt by splitting ``source``/``target`` on spaces.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError, ConfigError
from cppdb.io import ROW_GROUP_ROWS, atomic_path
from cppdb.readers.pharaoh import parse_links

Format = Literal["ppdb", "jsonl", "tsv", "parquet"]
FORMATS: tuple[str, ...] = ("ppdb", "jsonl", "tsv", "parquet")
_SUFFIXES = {".ppdb": "ppdb", ".txt": "ppdb", ".jsonl": "jsonl", ".json": "jsonl",
             ".tsv": "tsv", ".parquet": "parquet"}
INT_FEATURES = frozenset({S.COUNT, S.N_PIVOTS, "source_count", "target_count"})
_TYPE_TO_RELEASE = {"pattern": "template"}
_TYPE_FROM_RELEASE = {"template": "pattern", "lexical": "phrase"}
_CPPDB_SLOT = re.compile(r"\[([^\[\]\s,]+?)(\d+)\]")
_PPDB_SLOT = re.compile(r"\[([^\[\]\s,]+),(\d+)\]")
SEP = " ||| "


def resolve_format(path: str | Path, format: str | None) -> str:
    if format is None:
        format = _SUFFIXES.get(Path(path).suffix.lower())
        if format is None:
            raise ConfigError(f"cannot tell the export format of {path} from its suffix",
                              hint="name the file .ppdb/.txt, .jsonl/.json, .tsv or .parquet "
                                   f"(Python API: format= one of {', '.join(FORMATS)})")
    if format not in FORMATS:
        raise ConfigError(f"unknown pair-table format '{format}'",
                          hint=f"choose one of: {', '.join(FORMATS)}")
    return format


def feature_columns(schema: pl.Schema | dict[str, pl.DataType]) -> list[str]:
    """Numeric columns that are features (probabilities, counts, scores)."""
    return [name for name, dtype in schema.items() if dtype.is_numeric()]


def _with_defaults(lf: pl.LazyFrame) -> pl.LazyFrame:
    names = lf.collect_schema().names()
    missing = [c for c in (S.SOURCE, S.TARGET) if c not in names]
    if missing:
        raise BadInputError(f"pair table lacks column(s) {', '.join(missing)}",
                            hint="pass a table with the columns of cppdb.schema.PAIR_COLUMNS")
    defaults = {S.TYPE: pl.lit("phrase"), S.LHS: pl.lit("X"), S.ORIGIN: pl.lit(""),
                S.PIVOTS: pl.lit([], dtype=S.PAIR_COLUMNS[S.PIVOTS]),
                S.DOCUMENTS: pl.lit([], dtype=S.PAIR_COLUMNS[S.DOCUMENTS]),
                S.ALIGN_SRC: pl.lit([], dtype=pl.List(pl.Int32)),
                S.ALIGN_TGT: pl.lit([], dtype=pl.List(pl.Int32)),
                "entailment": entailment_of(names), S.RELATION_EVIDENCE: pl.lit(None, dtype=pl.String)}
    return lf.with_columns([expr.alias(name) for name, expr in defaults.items()
                            if name not in names])


def entailment_of(columns: list[str]) -> pl.Expr:
    """The entailment field of a table with these columns: its ``relation`` where decided
    (the classifier's, :mod:`cppdb.rank.relations`, or the rule's ``Exclusion``,
    :mod:`cppdb.rank.exclusion`), else :func:`entailment_expr`."""
    if S.RELATION not in columns:
        return entailment_expr()
    return (pl.when(pl.col(S.RELATION).is_not_null()).then(pl.col(S.RELATION))
            .otherwise(entailment_expr()))


def entailment_expr() -> pl.Expr:
    """PPDB 2.0's label where word containment decides it, else "" (unknown).

    A side whose words all occur in the other, longer side is more general: 这 座 城市 →
    城市 is ForwardEntailment (the source entails the target), 城市 → 这 座 城市
    ReverseEntailment.  Equivalence needs a model (PPDB 2.0 used a classifier), so it is not
    guessed here: a ranked table's ``relation`` carries the classifier's (:func:`entailment_of`).
    """
    src = pl.col(S.SOURCE).str.split(" ")
    tgt = pl.col(S.TARGET).str.split(" ")
    src_only = src.list.set_difference(tgt).list.len()
    tgt_only = tgt.list.set_difference(src).list.len()
    return (pl.when((tgt_only == 0) & (src_only > 0)).then(pl.lit("ForwardEntailment"))
            .when((src_only == 0) & (tgt_only > 0)).then(pl.lit("ReverseEntailment"))
            .otherwise(pl.lit("")))


#: above every Int32 position, so (i, j) → i·2³¹ + j in an Int64 is lossless for any pair table
#: (imported files and whole-sentence alignments included) — not schema.LINK_BASE, which holds
#: only positions inside one phrase.  Packing walks the two lists together 3-4× faster than
#: zipping them by an explode and a group-by (docs/benchmarks/links.md)
_INT32_SPAN = 1 << 31


def _pharaoh_expr() -> pl.Expr:
    """Pharaoh ``"i-j i-j"`` from the parallel lists, vectorised (no per-row Python)."""
    packed = (pl.col(S.ALIGN_SRC).cast(pl.List(pl.Int64)) * _INT32_SPAN
              + pl.col(S.ALIGN_TGT).cast(pl.List(pl.Int64)))
    links = packed.list.eval((pl.element() // _INT32_SPAN).cast(pl.String) + "-"
                             + (pl.element() % _INT32_SPAN).cast(pl.String))
    return links.list.join(" ").fill_null("")


def _ppdb_slots(expr: pl.Expr) -> pl.Expr:
    return expr.str.replace_all(_CPPDB_SLOT.pattern, "[${1},${2}]")


def _ppdb_lines(lf: pl.LazyFrame, features: list[str]) -> pl.LazyFrame:
    parts = [pl.when(pl.col(f).is_not_null()).then(pl.lit(f"{f}=") + pl.col(f).cast(pl.String))
             for f in features]
    feats = pl.concat_str(parts, separator=" ", ignore_nulls=True) if parts else pl.lit("")
    line = pl.concat_str([pl.lit("[") + pl.col(S.LHS) + pl.lit("]"),
                          _ppdb_slots(pl.col(S.SOURCE)), _ppdb_slots(pl.col(S.TARGET)),
                          feats.fill_null(""), _pharaoh_expr(),
                          pl.col("entailment").fill_null("")], separator=SEP)
    return lf.select(line.alias("line"))


def _jsonl_records(lf: pl.LazyFrame, features: list[str]) -> pl.LazyFrame:
    kind = pl.col(S.TYPE).replace(_TYPE_TO_RELEASE)
    align = _pharaoh_expr().str.split(" ").list.eval(pl.element().filter(pl.element() != ""))
    feats = pl.struct(features) if features else pl.lit(None, dtype=pl.Struct({}))
    return lf.select(kind.alias("type"), S.SOURCE, S.TARGET, pl.col(S.ORIGIN).alias("from"),
                     pl.col(S.PIVOTS).alias("anchor"), feats.alias("features"),
                     align.alias("alignment"), pl.col("entailment").fill_null(""), S.LHS,
                     S.DOCUMENTS, pl.col(S.RELATION_EVIDENCE).fill_null(""))


def _tsv_frame(lf: pl.LazyFrame) -> pl.LazyFrame:
    schema = lf.collect_schema()
    lists = [name for name, dtype in schema.items() if isinstance(dtype, pl.List)]
    # JSON arrays via polars' struct encoder: {"v":[...]} with the wrapper stripped
    encode = [pl.struct(pl.col(c).alias("v")).struct.json_encode()
              .str.strip_prefix('{"v":').str.strip_suffix("}").alias(c) for c in lists]
    return lf.with_columns(encode)


def write_pairs(frame: pl.DataFrame | pl.LazyFrame, path: str | Path,
                format: Format | None = None) -> int:
    """Write a pair table to ``path`` atomically; return the number of pairs written."""
    format = resolve_format(path, format)  # type: ignore[assignment]
    lf = frame.lazy()
    if format in ("ppdb", "jsonl"):
        lf = _with_defaults(lf)
    else:
        _with_defaults(lf)   # checks that source and target exist
    features = feature_columns(lf.collect_schema())
    with atomic_path(path) as tmp:
        if format == "parquet":
            lf.sink_parquet(tmp, row_group_size=ROW_GROUP_ROWS)
        elif format == "tsv":
            _tsv_frame(lf).sink_csv(tmp, separator="\t", quote_style="never")
        elif format == "ppdb":
            _ppdb_lines(lf, features).sink_csv(tmp, include_header=False,
                                               quote_style="never")
        else:
            _jsonl_records(lf, features).sink_ndjson(tmp)
    return _count(path, format)


def _count(path: str | Path, format: str) -> int:
    if format == "parquet":
        return pl.scan_parquet(path).select(pl.len()).collect().item()
    with open(path, "rb") as handle:
        lines = sum(1 for _ in handle)
    return lines - (1 if format == "tsv" else 0)


# -- readers --------------------------------------------------------------------------------
def _split_pharaoh(links: list[str], where: str) -> tuple[list[int], list[int]]:
    pairs = parse_links(links, where)
    return [i for i, _ in pairs], [j for _, j in pairs]


def _parse_features(text: str, where: str) -> dict[str, Any]:
    feats: dict[str, Any] = {}
    for item in text.split():
        name, sep, value = item.partition("=")
        if not sep:
            raise BadInputError(f"{where}: feature '{item}' is not name=value")
        try:
            feats[name] = int(value) if name in INT_FEATURES else float(value)
        except ValueError as exc:
            raise BadInputError(f"{where}: feature {name} has a non-numeric value "
                                f"'{value}'") from exc
    return feats


def _pair_type(source: str, target: str) -> str:
    return "pattern" if _CPPDB_SLOT.search(source) or _CPPDB_SLOT.search(target) else "phrase"


def _read_ppdb(path: Path) -> list[dict[str, Any]]:
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.rstrip("\n")
            if not line.strip():
                continue
            fields = line.split(SEP.strip())
            if len(fields) not in (5, 6):
                raise BadInputError(f"{path}, line {number}: {len(fields)} '|||' fields, "
                                    f"expected 5 (LHS, source, target, features, alignment) "
                                    f"or 6 (and PPDB 2.0's entailment)")
            lhs, source, target, feats, align = (f.strip() for f in fields[:5])
            source = _PPDB_SLOT.sub(r"[\1\2]", source)
            target = _PPDB_SLOT.sub(r"[\1\2]", target)
            src, tgt = _split_pharaoh(align.split(), f"{path}, line {number}")
            records.append({S.LHS: lhs.strip("[]"), S.SOURCE: source, S.TARGET: target,
                            S.TYPE: _pair_type(source, target), S.ALIGN_SRC: src,
                            S.ALIGN_TGT: tgt,
                            "entailment": fields[5].strip() if len(fields) == 6 else "",
                            **_parse_features(feats, f"{path}, line {number}")})
    return records


# the JSON type each field of a JSONL pair record must have (what write_pairs writes)
_JSONL_FIELDS: dict[str, tuple[type, type | None]] = {
    "source": (str, None), "target": (str, None), "type": (str, None), "lhs": (str, None),
    "from": (str, None), "entailment": (str, None), "relation_evidence": (str, None),
    "alignment": (list, str),
    "anchor": (list, str), "features": (dict, None)}


def _check_jsonl_record(obj: Any, where: str) -> None:
    if not isinstance(obj, dict) or "source" not in obj or "target" not in obj:
        raise BadInputError(f"{where}: expected an object with 'source' and 'target'")
    for key, (kind, item) in _JSONL_FIELDS.items():
        value = obj.get(key)
        if value is None and key not in ("source", "target"):
            continue
        if not isinstance(value, kind) or (item and not all(isinstance(v, item) for v in value)):
            raise BadInputError(f"{where}: '{key}' is {json.dumps(value)[:40]}, expected "
                                f"{kind.__name__}{f' of {item.__name__}' if item else ''}",
                                hint="see `cppdb export --format jsonl` for the layout")
    for name, value in (obj.get("features") or {}).items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise BadInputError(f"{where}: feature {name!r} is {json.dumps(value)[:40]}, "
                                "expected a number or null")


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BadInputError(f"{path}, line {number}: not JSON ({exc})") from exc
            _check_jsonl_record(obj, f"{path}, line {number}")
            src, tgt = _split_pharaoh(list(obj.get("alignment") or []), f"{path}, line {number}")
            kind = obj.get("type") or _pair_type(obj["source"], obj["target"])
            records.append({S.TYPE: _TYPE_FROM_RELEASE.get(kind, kind),
                            S.SOURCE: obj["source"], S.TARGET: obj["target"],
                            S.ORIGIN: obj.get("from", ""), S.PIVOTS: obj.get("anchor") or [],
                            S.DOCUMENTS: obj.get("documents") or [],
                            S.ALIGN_SRC: src, S.ALIGN_TGT: tgt, S.LHS: obj.get("lhs", "X"),
                            "entailment": obj.get("entailment", ""),
                            S.RELATION_EVIDENCE: obj.get(S.RELATION_EVIDENCE, ""),
                            **{k: v for k, v in (obj.get("features") or {}).items()}})
    return records


def _frame_from_records(records: list[dict[str, Any]]) -> pl.DataFrame:
    frame = pl.DataFrame(records, infer_schema_length=None) if records else pl.DataFrame()
    frame = frame.with_columns(
        pl.col(S.SOURCE).str.split(" ").alias(S.SOURCE_TOKENS),
        pl.col(S.TARGET).str.split(" ").alias(S.TARGET_TOKENS)) if records else frame
    casts = {name: dtype for name, dtype in S.PAIR_COLUMNS.items() if name in frame.columns}
    casts.update({name: pl.Int64 for name in INT_FEATURES if name in frame.columns})
    return frame.with_columns([pl.col(n).cast(d) for n, d in casts.items()])


def _read_tsv(path: Path) -> pl.DataFrame:
    frame = pl.read_csv(path, separator="\t", quote_char=None, infer_schema_length=10000)
    decode = []
    for name in frame.columns:
        dtype = S.PAIR_COLUMNS.get(name)
        if isinstance(dtype, pl.List):
            decode.append(pl.col(name).str.json_decode(dtype))
        elif dtype is not None:
            decode.append(pl.col(name).cast(dtype))
    return frame.with_columns(decode)


def read_pairs(path: str | Path, format: Format | None = None) -> pl.DataFrame:
    """Read a pair table written by :func:`write_pairs` (or a PPDB / Chinese-PPDB file)."""
    path = Path(path)
    format = resolve_format(path, format)  # type: ignore[assignment]
    if not path.is_file():
        raise BadInputError(f"pair file {path} does not exist")
    if format == "parquet":
        return pl.read_parquet(path)
    if format == "tsv":
        return _read_tsv(path)
    records = _read_ppdb(path) if format == "ppdb" else _read_jsonl(path)
    return _frame_from_records(records)
