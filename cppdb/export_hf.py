"""The Hugging Face ``datasets`` layout of a ranked run (``cppdb export RUN --format hf``).

``DIR/data/<type>/<tier>/train-<i>-of-<n>.parquet`` holds the pairs whose *smallest* tier is
``<tier>`` (the bands are disjoint, so no pair is stored twice), and the dataset card
``DIR/README.md`` declares one ``datasets`` config per type and nested tier (``phrase-M`` =
the S and M bands of phrases, PPDB's nested sizes), one per type (every tier) and a default
``all``.  ``datasets.load_dataset("parquet", data_dir=DIR)`` reads every shard (the ``all``
config); ``datasets.load_dataset(DIR, "pattern-S")`` reads one config.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl

from cppdb import schema as S
from cppdb.io import write_parquet_atomic, write_text_atomic
from cppdb.rank.tiers import RANK, SCORE, TIER, Tier

DATA_DIR = "data"
EXTRA_COLUMNS = {SCORE: pl.Float64, RANK: pl.Int64, TIER: pl.String, "percentile": pl.Float64,
                 S.RELATION: pl.String, S.RELATION_PROBABILITY: pl.Float64,
                 S.RELATION_EVIDENCE: pl.String}
_HF_DTYPES = {pl.String: "string", pl.Float64: "float64", pl.Int64: "int64", pl.Int32: "int32",
              pl.Boolean: "bool"}


def _feature_yaml(name: str, dtype: pl.DataType, indent: str = "  ") -> list[str]:
    """The ``datasets`` card entry of one column (a list of structs: its fields nested)."""
    if isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct):
        return [f"{indent}- name: {name}", f"{indent}  list:",
                *[line for field in dtype.inner.fields
                  for line in _feature_yaml(field.name, field.dtype, indent + "  ")]]
    if isinstance(dtype, pl.List):
        return [f"{indent}- name: {name}", f"{indent}  list: "
                + _HF_DTYPES[dtype.inner.base_type()]]
    return [f"{indent}- name: {name}", f"{indent}  dtype: " + _HF_DTYPES[dtype.base_type()]]


def _config_yaml(name: str, paths: list[str], default: bool = False) -> list[str]:
    lines = [f"- config_name: {name}"] + (["  default: true"] if default else [])
    lines += ["  data_files:", "  - split: train", "    path:"]
    return lines + [f"    - {p}" for p in paths]


def _band_frame(ranked: pl.DataFrame) -> pl.DataFrame:
    keep = {**S.PAIR_COLUMNS, **EXTRA_COLUMNS}
    return ranked.select([pl.col(c).cast(d) for c, d in keep.items() if c in ranked.columns])


def _write_shards(band: pl.DataFrame, folder: Path, rows_per_shard: int) -> list[str]:
    n = max(1, math.ceil(band.height / rows_per_shard))
    names = []
    for i in range(n):
        name = f"train-{i:05d}-of-{n:05d}.parquet"

        write_parquet_atomic(folder / name, band.slice(i * rows_per_shard, rows_per_shard))
        names.append(name)
    return names


def write_hf_dataset(ranked: pl.DataFrame, out: str | Path, tiers: tuple[Tier, ...],
                     manifest: dict[str, Any] | None = None, tier_table: pl.DataFrame | None = None,
                     rows_per_shard: int = 500_000) -> int:
    """Write the shards and the card; return the number of pairs written."""
    out = Path(out)
    frame = _band_frame(ranked).sort(S.TYPE, RANK)
    configs: list[list[str]] = [_config_yaml("all", [f"{DATA_DIR}/*/*/*.parquet"], True)]
    counts = []
    for pair_type in [t for t in S.PAIR_TYPES if t in set(frame[S.TYPE].to_list())]:
        of_type = frame.filter(pl.col(S.TYPE) == pair_type)
        configs.append(_config_yaml(pair_type, [f"{DATA_DIR}/{pair_type}/*/*.parquet"]))
        nested: list[str] = []
        for tier in tiers:
            band = of_type.filter(pl.col(TIER) == tier.name)
            folder = out / DATA_DIR / pair_type / tier.name
            if band.height:
                _write_shards(band, folder, rows_per_shard)
                nested.append(f"{DATA_DIR}/{pair_type}/{tier.name}/*.parquet")
            counts.append({"type": pair_type, "tier": tier.name, "band": band.height,
                           "cumulative": of_type.filter(pl.col(TIER).is_in(
                               [t.name for t in tiers[:tiers.index(tier) + 1]])).height})
            if nested:
                configs.append(_config_yaml(f"{pair_type}-{tier.name}", list(nested)))
    write_text_atomic(out / "README.md", dataset_card(frame, configs, counts, tiers, manifest,
                                                       tier_table))
    return frame.height


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < limit:
            return label
    return "10M<n<100M"


def dataset_card(frame: pl.DataFrame, configs: list[list[str]], counts: list[dict[str, Any]],
                 tiers: tuple[Tier, ...], manifest: dict[str, Any] | None,
                 tier_table: pl.DataFrame | None) -> str:
    """README.md: YAML header (configs, features, sizes; licence left to the user) + text."""
    features = ["dataset_info:", "  features:"]
    for name, dtype in frame.schema.items():
        features += ["  " + line for line in _feature_yaml(name, dtype)]
    yaml = ["---", "# licence: set this to the licence of your input corpora (e.g. cc-by-4.0)",
            "license: unknown", "language:", "- zh", "task_categories:",
            "- text-classification", "- sentence-similarity", "tags:", "- paraphrase",
            "- ppdb", "- cppdb", "size_categories:", f"- {_size_category(frame.height)}",
            "configs:", *[line for config in configs for line in config], *features, "---"]
    manifest = manifest or {}
    rows = "\n".join(f"| {c['type']} | {c['tier']} | {c['band']:,} | {c['cumulative']:,} |"
                     for c in counts)
    cutoffs = ""
    if tier_table is not None and tier_table.height:
        cutoffs = "\n".join(f"| {r['type']} | {r['tier']} | {r['share']:.0%} | {r['pairs']:,} | "
                            f"{'' if r['score_cutoff'] is None else format(r['score_cutoff'], '.3f')} |"
                            for r in tier_table.iter_rows(named=True))
        cutoffs = ("\n\nScore cut-offs (a tier holds the best ⌈share·n⌉ pairs of its type):\n\n"
                   "| type | tier | share | pairs | lowest score |\n|---|---|---|---|---|\n"
                   + cutoffs)
    signature = manifest.get("signature", "(no manifest found)")
    return "\n".join(yaml) + f"""

# Chinese paraphrase database (built with cppdb)

{frame.height:,} paraphrase pairs ranked by cppdb's ranker (`score`, about the 1–5
Callison-Burch scale) and split into nested size tiers ({', '.join(
        f'{t.name} = best {t.share:.0%}' for t in tiers)} of each type), like PPDB's S–XXXL.

## Pairs per type and tier

| type | tier | pairs in this band | pairs in the config (`<type>-<tier>`, nested) |
|---|---|---|---|
{rows}{cutoffs}

## Loading

```python
from datasets import load_dataset
everything = load_dataset("parquet", data_dir="THIS_DIR")   # every pair, split "train"
phrases_s = load_dataset("THIS_DIR", "phrase-S")            # the best 20 % of phrases
```

Configs: `all` (default), one per type (`phrase`, `pattern`, `sentence`), and `<type>-<tier>`
(nested: `phrase-M` holds the S and M bands).  Shards: `data/<type>/<tier>/*.parquet`, where
each pair sits in the band of its smallest tier.

## Fields

`source`, `target` (space-joined words; slots such as `[NP1]` in patterns), token and CTB POS
lists, `lhs` (phrase/slot label), pivot probabilities `p_t_given_s`/`p_s_given_t`, `count`,
`n_pivots`, `anchors` (English pivots, or the two document ids of a monolingual pair),
word links `align_src`/`align_tgt` (parallel lists, Pharaoh `i-j`), `origin`, `score`,
`rank` (within type), `percentile`, `tier`.

## How it was built

- tool: cppdb {manifest.get('cppdb_version', '?')}, command `{manifest.get('command', '?')}`
- run signature: `{signature}`
- input files: {len(manifest.get('inputs', {}))} (sha256 in the run's manifest.json)
- method: pivoting through English (bilingual zh–en text) and/or aligning several Chinese
  translations of one work (monolingual); LightGBM ranking; see the cppdb documentation.

## Licence and citation

Left to you: the pairs are derived from your input corpora, so their licence applies.  Set
`license:` in the header above and describe the sources here.

```json
{json.dumps({"pairs": frame.height, "types": sorted(set(frame[S.TYPE].to_list()))}, ensure_ascii=False)}
```
"""
