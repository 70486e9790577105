"""``cppdb export``: the ranked pairs of a run (``rank/``'s output) written as files.

Kept out of ``rank/pipeline.py`` so that ranking never imports the exporters (``export_hf``
reads the tiers of ``rank``; the dependency points one way).
"""
from __future__ import annotations

import json
from pathlib import Path

from cppdb import schema as S
from cppdb.config import Config, load_config, resolve
from cppdb.errors import BadInputError, ConfigError
from cppdb.export import write_pairs
from cppdb.export_hf import write_hf_dataset
from cppdb.rank import tiers
from cppdb.rank.pipeline import read_ranked
from cppdb.rank.settings import RankRun


def export_run(run_dir: str | Path, top: str | float = 0.2, type: str | None = None,
               format: str = "jsonl", out: str | Path | None = None,
               config: Config | None = None) -> tuple[Path, int]:
    """Write the best ``top`` share (or tier) of each pair type with ``cppdb.export``."""
    tier_list = resolve(RankRun, config or load_config()).rank.tier_list()
    if format == "hf":
        return _export_hf(run_dir, type, out, tier_list)
    share = tiers.parse_top(top, tier_list)
    ranked = read_ranked(run_dir)
    if type is not None:            # a type the run does not hold is an error, not an empty file
        held = sorted(ranked.get_column(S.TYPE).unique().to_list())
        if type not in held:
            raise BadInputError(f"run {run_dir} has no {type!r} pairs (it holds: "
                                f"{', '.join(held) or 'none'})",
                                hint=f"use --type {' or '.join(held)}, or omit --type")
    selected = tiers.select_top(ranked, share, type)
    if out is None:
        suffix = {"ppdb": "ppdb", "jsonl": "jsonl", "tsv": "tsv", "parquet": "parquet"}
        if format not in suffix:
            raise ConfigError(f"unknown export format {format!r}",
                                hint="choose ppdb, jsonl, tsv or parquet")
        out = Path(run_dir) / f"export-{type or 'all'}-top{round(share * 100)}.{suffix[format]}"
    keep = [c for c in list(S.PAIR_COLUMNS) + [tiers.SCORE, tiers.TIER, S.RELATION,
                                                S.RELATION_PROBABILITY, S.RELATION_EVIDENCE]
            if c in selected.columns]
    written = write_pairs(selected.select(keep), out, format)
    return Path(out), written


def _export_hf(run_dir: str | Path, type: str | None, out: str | Path | None,
               tier_list: tuple[tiers.Tier, ...]) -> tuple[Path, int]:
    """Every ranked pair in the HF datasets layout (tiers are configs, so no ``top``)."""
    ranked = read_ranked(run_dir)
    if type is not None:
        ranked = tiers.select_top(ranked, 1.0, type)
    manifest_path = Path(run_dir) / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8")) if manifest_path.exists() else {}
    out = Path(out) if out is not None else Path(run_dir) / "export-hf"
    written = write_hf_dataset(ranked, out, tier_list, manifest,
                               tiers.tier_table(ranked, tier_list))
    return out, written
