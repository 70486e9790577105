"""Plain-Python evaluation API (what ``cppdb evaluate`` calls)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from cppdb import schema as S
from cppdb.config import Config, load_config, resolve
from cppdb.evaluate.coverage import coverage_table
from cppdb.evaluate.relation_mix import relation_mix
from cppdb.evaluate.settings import EvaluateRun, EvaluateSettings
from cppdb.evaluate.sheet import (SHEET_COLUMNS, acceptability_table, read_annotation_sheet,
                                  write_annotation_sheet)
from cppdb.features.models import load_encoder
from cppdb.rank.pipeline import RANK_DIR, read_pruned, read_ranked
from cppdb.rank.tiers import PERCENTILE
from cppdb.registry import load_backend
from cppdb.stats import model_sha, signature
from cppdb.evaluate.tables import (DEFINITIONS, evaluation_table, interval_method,
                                   load_ranked_file)
from cppdb.io import write_json_atomic

#: where ``evaluate_run_signed`` keeps a run's table and signature
EVALUATION_FILE = "evaluation.json"


def is_annotation_sheet(path: str | Path) -> bool:
    path = Path(path)
    if not path.is_file():
        return False
    with path.open(encoding="utf-8", errors="replace") as handle:
        return tuple(handle.readline().rstrip("\n").split("\t")) == SHEET_COLUMNS


def load_ranking(run_or_file: str | Path) -> pl.DataFrame:
    """A run directory's ranked pairs, or a pair file ranked by score / line order."""
    path = Path(run_or_file)
    if path.is_dir():
        return read_ranked(path)
    return load_ranked_file(path)


def _encoders(settings: EvaluateRun, run_or_file: str | Path) -> tuple[Any, Any]:
    evaluate = settings.evaluate
    first = second = None
    if evaluate.embedding:
        # a run directory's embedding cache (embed.cache) already holds the vectors `rank`
        # computed for its pairs' cosine feature: the same strings, so most need no encoding
        run = Path(run_or_file)
        first = load_encoder(settings.embed, run if run.is_dir() else None)
    if evaluate.second_model_path:
        second = load_backend("sentence_encoder", "sentence-transformers",
                              model_path=evaluate.second_model_path)
    return first, second


def ranking_fingerprint(run_or_file: str | Path) -> str:
    """What was evaluated: a ranked run's fingerprint (its ranking manifest), or the first 12
    hex digits of a pair file's SHA-256."""
    path = Path(run_or_file)
    if path.is_dir():
        manifest = path / RANK_DIR / "manifest.json"
        if manifest.exists():
            return str(json.loads(manifest.read_text("utf-8")).get("fingerprint", "unknown"))
        return "unknown"
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def config_hash(settings: EvaluateRun) -> str:
    """The first 12 hex digits of the SHA-256 of the [evaluate] and [embed] settings."""
    used = {"evaluate": vars(settings.evaluate), "embed": vars(settings.embed)}
    blob = json.dumps(used, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def evaluate_run(run_or_file: str | Path, config: Config | None = None) -> pl.DataFrame:
    """Tables 3/4/6: diversity and consistency per type at the top shares."""
    return evaluate_run_signed(run_or_file, config)[0]


def evaluate_run_signed(run_or_file: str | Path, config: Config | None = None
                        ) -> tuple[pl.DataFrame, str]:
    """The table of :func:`evaluate_run` and its signature (see :func:`evaluate_run_full`)."""
    return evaluate_run_full(run_or_file, config)[:2]


def coverage_of(run_or_file: str | Path, ranking: pl.DataFrame, settings: EvaluateRun
                ) -> pl.DataFrame | None:
    """The word coverage of a ranking (:mod:`cppdb.evaluate.coverage`); None when it has no
    tiers (a pair file written without them) or no phrase pairs (a monolingual run)."""
    if "tier" not in ranking.columns or (
            S.TYPE in ranking.columns and not (ranking[S.TYPE] == "phrase").any()):
        return None
    evaluate = settings.evaluate
    path = Path(run_or_file)
    first = settings.rank.tier_list()[0].name
    return coverage_table(ranking, path / S.ANNOTATIONS_FILE if path.is_dir() else None,
                          first, evaluate.coverage_words, evaluate.coverage_examples)


def tier_names(ranking: pl.DataFrame, settings: EvaluateRun) -> list[str]:
    """The ranking's tiers, smallest first: in ``rank.tiers`` order when they are those
    tiers, else (a run ranked with other tiers) by their pairs' best percentile."""
    if "tier" not in ranking.columns:
        return []
    present = set(ranking["tier"].drop_nulls())
    names = [t.name for t in settings.rank.tier_list()]
    if present <= set(names):
        return [name for name in names if name in present]
    return (ranking.drop_nulls("tier").group_by("tier").agg(pl.col(PERCENTILE).min())
            .sort(PERCENTILE, "tier")["tier"].to_list())


@dataclass(frozen=True)
class Evaluation:
    """Everything ``cppdb evaluate`` reports on a ranking."""

    table: pl.DataFrame                 # Tables 3/4/6 (:func:`evaluate_run`)
    signature: str
    coverage: pl.DataFrame | None       # :func:`coverage_of`
    relations: pl.DataFrame | None      # :func:`cppdb.evaluate.relation_mix.relation_mix`

    def to_dict(self) -> dict[str, Any]:
        """What ``--json`` prints and ``evaluation.json`` keeps."""
        return {"signature": self.signature, "table": self.table.to_dicts(),
                "coverage": None if self.coverage is None else self.coverage.to_dicts(),
                "relations": None if self.relations is None else self.relations.to_dicts()}


def evaluate_run_full(run_or_file: str | Path, config: Config | None = None
                      ) -> tuple[pl.DataFrame, str, pl.DataFrame | None]:
    """The table of :func:`evaluate_run`, its signature and the word coverage
    (:func:`coverage_of`); see :func:`evaluate_ranking`."""
    found = evaluate_ranking(run_or_file, config)
    return found.table, found.signature, found.coverage


def evaluate_ranking(run_or_file: str | Path, config: Config | None = None) -> Evaluation:
    """The table of :func:`evaluate_run`, its signature, the word coverage and the relation
    mix per type and tier; a run directory also keeps them in ``evaluation.json`` (what
    produced the numbers stays next to them)."""
    settings = resolve(EvaluateRun, config or load_config())
    section = settings.evaluate
    first, second = _encoders(settings, run_or_file)
    ranking = load_ranking(run_or_file)
    table = evaluation_table(ranking, section.tops, encoder=first,
                             second_encoder=second, max_embedded=section.max_embedded_pairs,
                             seed=section.seed, bootstrap_max=section.bootstrap_max_items)
    extra = {"second-sha": model_sha(second)} if second is not None else {}
    signed = signature(encoder=first, seed=section.seed, n=ranking.height,
                       extra={"run": ranking_fingerprint(run_or_file),
                              "config": config_hash(settings),
                              "tops": "/".join(f"{t:g}" for t in section.tops),
                              "ci": interval_method(section.bootstrap_max_items),
                              **DEFINITIONS,
                              "cosine-cap": f"{section.max_embedded_pairs}/type/top",
                              "coverage": f"top{section.coverage_words}-content-words/"
                                          "first-tier-phrase-source", **extra})
    pruned = read_pruned(run_or_file) if Path(run_or_file).is_dir() else None
    found = Evaluation(table, signed, coverage_of(run_or_file, ranking, settings),
                       relation_mix(ranking, tier_names(ranking, settings), pruned))
    if Path(run_or_file).is_dir():
        write_json_atomic(Path(run_or_file) / EVALUATION_FILE, found.to_dict())
    return found


def write_sheet(run_or_file: str | Path, out: str | Path, n_per_type: int,
                config: Config | None = None) -> int:
    """Write an annotation sheet of ``n_per_type`` pairs per type; returns its rows."""
    section = resolve(EvaluateSettings, config or load_config())
    return write_annotation_sheet(load_ranking(run_or_file), out, n_per_type,
                                  section.tops, section.seed)


def sheet_table(path: str | Path, config: Config | None = None
                ) -> tuple[pl.DataFrame, int, str]:
    """Acceptability table of a filled sheet, the number of unrated rows, and the signature."""
    seed = resolve(EvaluateSettings, config or load_config()).seed
    sheet = read_annotation_sheet(path)
    rated = int(sheet["rating"].is_not_null().sum())
    signed = signature(seed=seed, n=rated, extra={"judgements": "human"})
    return acceptability_table(sheet, seed), int(sheet["rating"].is_null().sum()), signed
