"""The report's sections, each read from a run's artifacts (nothing is recomputed but the
automatic evaluation table, which ``cppdb evaluate`` computes the same way)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from cppdb import schema as S
from cppdb.align.sentences.types import DocumentKey
from cppdb.config import load_config, resolve
from cppdb.errors import CppdbError
from cppdb.evaluate.api import coverage_of, evaluate_run_full, load_ranking, tier_names
from cppdb.evaluate.relation_mix import relation_mix
from cppdb.evaluate.settings import EvaluateRun
from cppdb.rank.pipeline import read_pruned
from cppdb.report import svg

RANKING = S.RANKING_DIR
SAMPLES_PER_TIER = 10


def _manifest(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text("utf-8")) if path.exists() else {}


def funnel(run: Path) -> str:
    """Per-stage counts from the manifest(s), in stage order: what each stage kept."""
    items: list[tuple[str, float]] = []
    for prefix, manifest in (("", _manifest(run / "manifest.json")),
                             ("rank/", _manifest(run / RANKING / "manifest.json"))):
        for stage, info in manifest.get("stages", {}).items():
            for name, value in (info.get("rows") or {}).items():
                if isinstance(value, (int, float)):
                    items.append((f"{prefix}{stage}: {name}", value))
    return svg.bars("Per-stage counts (from manifest.json)", items,
                    note="Rows written or counted by each stage, in the order the stages ran.")


def _ranked(run: Path) -> pl.DataFrame | None:
    path = run / RANKING / S.RANKED_FILE
    return pl.read_parquet(path) if path.exists() else None


def _tiers(run: Path) -> pl.DataFrame | None:
    path = run / RANKING / S.TIERS_FILE
    return pl.read_parquet(path) if path.exists() else None


def ranking(run: Path, evaluate: bool = True) -> list[str]:
    ranked, tiers = _ranked(run), _tiers(run)
    if ranked is None:
        return ['<p class="note">This run is not ranked yet: run <code>cppdb rank RUN</code> '
                "for score histograms, tiers, the evaluation table and samples.</p>"]
    parts = []
    for pair_type in [t for t in S.PAIR_TYPES if t in set(ranked[S.TYPE].to_list())]:
        scores = ranked.filter(pl.col(S.TYPE) == pair_type)["score"].to_list()
        cuts = ([] if tiers is None else
                [(r["tier"], r["score_cutoff"]) for r in tiers.filter(
                    pl.col("type") == pair_type).iter_rows(named=True)
                 if r["share"] < 1.0])
        parts.append(svg.histogram(f"Scores of {pair_type} pairs ({len(scores):,}) with tier "
                                   f"cut-offs", scores, cutoffs=cuts))
    if tiers is not None:
        parts.append(svg.bars("Tier sizes (nested: S ⊂ M ⊂ L ⊂ XL)",
                              [(f"{r['type']} {r['tier']}", r["pairs"])
                               for r in tiers.iter_rows(named=True)]))
    parts += evaluation(run) if evaluate else [coverage(run, ranked)]
    parts.append(relations(ranked, read_pruned(run)))
    parts.append(samples(ranked))
    return parts


def evaluation(run: Path) -> list[str]:
    """The automatic table of ``cppdb evaluate RUN`` (diversity, consistency at 20/60/100 %)
    and its word coverage."""
    try:
        table, _, words = evaluate_run_full(run)
    except CppdbError as exc:   # an encoder missing: say so on the page, keep the rest
        return [svg.figure("table", "Automatic evaluation", "", 0, note=f"not computed: {exc}"),
                coverage(run)]
    return [svg.table("Automatic evaluation: diversity (edit distance, containment share) and "
                      "consistency (cosine) at the top 20/60/100 %", table.columns,
                      table.rows()),
            coverage_figure(words)]


def coverage(run: Path, ranked: pl.DataFrame | None = None) -> str:
    """The word coverage of ``cppdb evaluate RUN`` alone (no encoder needed)."""
    try:
        ranking = load_ranking(run) if ranked is None else ranked
        return coverage_figure(coverage_of(run, ranking, resolve(EvaluateRun, load_config())))
    except CppdbError as exc:   # jieba's list missing: say so on the page, keep the rest
        return svg.figure("table", COVERAGE_TITLE, "", 0, note=f"not computed: {exc}")


COVERAGE_TITLE = "Word coverage: the most frequent content words with a first-tier paraphrase"


def coverage_figure(words: pl.DataFrame | None) -> str:
    """The coverage table (:mod:`cppdb.evaluate.coverage`), one row per word list, with the
    most frequent words that have none."""
    if words is None:
        return svg.figure("table", COVERAGE_TITLE, "", 0,
                          note="not computed: the ranking has no tiers or no phrase pairs")
    rows = [(r["list"], r["content"], r["words"], r["with_tier"], _percent(r["share"]),
             r["with_any"], _percent(r["share_any"]), " ".join(r["missing"]))
            for r in words.iter_rows(named=True)]
    tier = words["tier"][0] if words.height else "S"
    return svg.table(f"{COVERAGE_TITLE} (tier {tier})",
                      ["list", "content tags", "top words", f"in {tier}", f"share in {tier}",
                       "any tier", "share any tier", f"most frequent without one in {tier}"],
                      rows, note=f"A word counts when `cppdb lookup WORD --tier {tier}` finds "
                                 "a phrase pair: a census of each list's top words "
                                 "(evaluate.coverage_words), not a sample.")


RELATIONS_TITLE = "Relation mix: the share of each relation per type and tier"


def relations(ranked: pl.DataFrame, pruned: pl.DataFrame | None = None) -> str:
    """The relation mix of ``cppdb evaluate`` (:mod:`cppdb.evaluate.relation_mix`): what each
    tier holds — Exclusion (antonyms, negation or number flips), entailment, undecided —
    and what the ranking pruned."""
    mix = relation_mix(ranked, tier_names(ranked, resolve(EvaluateRun, load_config())), pruned)
    if mix is None or not mix.height:
        return svg.figure("table", RELATIONS_TITLE, "", 0,
                          note="not computed: the ranking has no tiers")
    rows = [(r["type"], r["tier"], r["relation"], r["group"], r["pairs"],
             _percent(r["share"])) for r in mix.iter_rows(named=True)]
    return svg.table(RELATIONS_TITLE, ["type", "tier", "relation", "group", "pairs", "share"],
                     rows, note="A census of each tier (nested: S ⊂ M ⊂ L ⊂ XL), not a sample; "
                                "'pruned': the low-ranked unrelated pairs out of the table; "
                                "'undecided' means no test said anything, not a synonym.")


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f} %"


def samples(ranked: pl.DataFrame) -> str:
    """Ten pairs drawn (seeded) from each tier band of each type."""
    rows = []
    # types in PAIR_TYPES order, tiers best first (S, M, ...: by their best rank)
    for (pair_type, tier), part in sorted(ranked.group_by([S.TYPE, "tier"]), key=lambda g: (
            S.PAIR_TYPES.index(g[0][0]) if g[0][0] in S.PAIR_TYPES else 9, g[1]["rank"].min())):
        picked = part.sample(min(SAMPLES_PER_TIER, part.height), seed=0).sort("rank")
        rows += [(pair_type, tier, r["rank"], r["score"], r[S.SOURCE], r[S.TARGET])
                 for r in picked.iter_rows(named=True)]
    return svg.table(f"{SAMPLES_PER_TIER} sample pairs per type and tier (seeded)",
                     ["type", "tier", "rank", "score", "source", "target"], rows, "samples")


def monolingual(run: Path) -> list[str]:
    """Per document pair: the BAM anchor scatter and the bead-cost histogram."""
    path = run / S.BEADS_FILE
    if not path.exists():
        return []
    beads = pl.read_parquet(path).filter(pl.col("group").is_not_null())
    parts = []
    for (group,), part in sorted(beads.group_by(["group"]), key=lambda g: g[0][0]):
        first = part.row(0, named=True)
        name = (f"{DocumentKey(*(first[c] for c in S.SRC_DOC)).label} ↔ "
                f"{DocumentKey(*(first[c] for c in S.TGT_DOC)).label}")
        points = [(r["src"][0], r["tgt"][0], 1 if r["anchor"] else 0)
                  for r in part.iter_rows(named=True) if r["src"] and r["tgt"]]
        parts.append(svg.scatter(f"Alignment of {name}: beads and BAM anchors", points,
                                 ["bead", "BAM anchor"], "source sentence", "target sentence"))
        parts.append(svg.histogram(f"Bead costs of {name}", part["cost"].to_list(), bins=20))
    parts.append(ocr(run))
    return parts


def ocr(run: Path) -> str:
    """OCR confidences and rejected lines, from ``cppdb ocr`` JSONL files kept in the run."""
    confidences, removed = [], []
    for path in sorted(run.glob("*ocr*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            record = json.loads(line)
            confidences += [x.get("confidence") for x in record.get("lines") or []]
            removed.append((Path(record.get("path", "?")).name, len(record.get("removed") or [])))
    if not confidences:
        units = run / S.UNITS_FILE
        images = (pl.scan_parquet(units).filter(pl.col("kind") == "images").select(pl.len())
                  .collect().item() if units.exists() else 0)
        note = ("no OCR in this run" if not images else
                f"{images} units came from OCR, but the run keeps no per-line confidences; "
                "run `cppdb ocr DIR -o RUN/ocr.jsonl` to add them to this report")
        return svg.figure("histogram", "OCR confidence", "", 0, note=note)
    return (svg.histogram("OCR line confidence", confidences, bins=20)
            + svg.bars("OCR lines rejected per image", removed))


def compression(run: Path) -> list[str]:
    """Compression-rate histogram and rejection reasons (from report.json)."""
    path = run / "report.json"
    if not path.exists():
        return []
    report = json.loads(path.read_text("utf-8"))
    kept = run / S.COMPRESSIONS_FILE
    rates = ([json.loads(line).get("compression_rate") for line in
              kept.read_text("utf-8").splitlines() if line.strip()] if kept.exists() else [])
    counts = None if rates else _histogram_bins((report.get("compression_rate") or {})
                                                 .get("histogram"))
    parts = [svg.histogram(f"Compression rate of the {report.get('kept', 0)} kept pairs",
                           rates, bins=20, counts=counts)]
    reasons = sorted((report.get("rejected_by_rule") or {}).items(), key=lambda kv: -kv[1])
    parts.append(svg.bars(f"Rejected pairs by reason ({report.get('rejected', 0)} of "
                          f"{report.get('input_pairs', 0)})", [(k, v) for k, v in reasons if v]))
    return parts


def _histogram_bins(hist: Any) -> list[tuple[float, float, int]]:
    """report.json's histogram {"[0.2, 0.3)": n, ...} as (lo, hi, n) bins."""
    bins = []
    for label, n in (hist or {}).items():
        lo, _, hi = label.strip("[)]").partition(",")
        bins.append((float(lo), float(hi), int(n)))
    return sorted(bins)
