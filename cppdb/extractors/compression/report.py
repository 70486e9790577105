"""The build report: counts first (per filter, per method, per DTT rule), ratios second."""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from cppdb.extractors.compression.dtt import RULE_NAMES as DTT_RULES
from cppdb.extractors.compression.filters import POST_RULES
from cppdb.extractors.compression.pipeline import CompressionSettings
from cppdb.extractors.compression.sentence import RULE_NAMES as SENTENCE_RULES
from cppdb.extractors.compression.surface import RULE_NAMES as SURFACE_RULES
from cppdb.progress import console

RATE_BINS = [round(0.1 * i, 1) for i in range(1, 10)]
UDCHINESE_NOTE = ("parser 'udchinese' is a weak offline substitute (UDPipe model trained on "
                  "another segmentation): trees, and so compressions, are noisier than with Stanza")


def _counts(frame: pl.DataFrame, column: str) -> dict[str, int]:
    if frame.is_empty():
        return {}
    grouped = frame.group_by(column).agg(pl.len().alias("n")).sort(column)
    return {str(k): int(v) for k, v in grouped.iter_rows()}


def _method_stats(kept: pl.DataFrame, methods: tuple[str, ...]) -> dict[str, dict[str, int]]:
    links = (kept.select("line", "link_methods", "link_h_tokens")
             .explode(["link_methods", "link_h_tokens"])
             .drop_nulls("link_methods"))
    stats = {m: {"links": 0, "headline_tokens_aligned": 0, "pairs_with_link": 0}
             for m in methods}
    if links.is_empty():
        return stats
    grouped = links.group_by("link_methods").agg(
        pl.len().alias("links"), pl.col("link_h_tokens").sum().alias("tokens"),
        pl.col("line").n_unique().alias("pairs"))
    for method, n_links, tokens, pairs in grouped.iter_rows():
        stats[method] = {"links": int(n_links), "headline_tokens_aligned": int(tokens),
                         "pairs_with_link": int(pairs)}
    return stats


def _rate_distribution(kept: pl.DataFrame) -> dict[str, Any]:
    rates = kept["compression_rate"].drop_nulls()
    if rates.is_empty():
        return {"count": 0}
    values = rates.to_numpy()
    edges = [0.0] + RATE_BINS + [float("inf")]
    labels = [f"[{lo:.1f}, {hi:.1f})" if hi != float("inf") else f"[{lo:.1f}, inf)"
              for lo, hi in zip(edges[:-1], edges[1:])]
    counts = np.histogram(values, bins=edges)[0]
    return {
        "count": rates.len(), "mean": round(float(rates.mean()), 4),
        "median": round(float(rates.median()), 4),
        **{f"p{q}": round(float(rates.quantile(q / 100, "nearest")), 4)
           for q in (10, 25, 75, 90)},
        "min": round(float(rates.min()), 4), "max": round(float(rates.max()), 4),
        "histogram": {label: int(n) for label, n in zip(labels, counts) if n},
    }


def build_report(records: pl.DataFrame, settings: CompressionSettings, *,
                 parser: dict[str, Any], paraphrase_table: dict[str, Any] | None,
                 skipped_methods: list[str]) -> dict[str, Any]:
    """Report dict written to ``report.json`` (and pretty-printed by the command)."""
    kept = records.filter(pl.col("status") == "kept")
    rejected = records.filter(pl.col("status") == "rejected")
    rule_names = list(settings.filters.names) + list(POST_RULES)
    by_rule = {name: 0 for name in rule_names}
    by_rule.update(_counts(rejected, "rule"))
    added = _counts(kept.select(pl.col("dtt_rules").explode()).drop_nulls(), "dtt_rules")
    dtt_counts = {name: 0 for name in settings.dtt_rules.rules} if settings.dtt else {}
    dtt_counts.update({k: v for k, v in added.items() if k in DTT_RULES})
    sentence_counts = {name: 0 for name in settings.sentence.rules}
    sentence_counts.update({k: v for k, v in added.items() if k in SENTENCE_RULES})
    surface_counts = {name: 0 for name in settings.surface.rules}
    surface_counts.update({k: v for k, v in added.items() if k in SURFACE_RULES})
    content = int(kept["n_headline_content"].sum() or 0)
    aligned = int(kept["n_headline_aligned"].sum() or 0)
    notes = [UDCHINESE_NOTE] if parser.get("name") == "udchinese" else []
    notes += [f"method '{m}' skipped: no paraphrase table given" for m in skipped_methods]
    return {
        "input_pairs": records.height, "kept": kept.height, "rejected": rejected.height,
        "kept_fraction": round(kept.height / records.height, 4) if records.height else 0.0,
        "rejected_by_rule": by_rule,
        "methods": list(settings.align.methods),
        "alignment": _method_stats(kept, settings.align.methods),
        "keywords_total": int(kept["n_keywords"].sum() or 0),
        "headline_content_words": content,
        "headline_tokens_aligned": aligned,
        "dtt": settings.dtt, "dtt_added": dtt_counts, "sentence_added": sentence_counts,
        "surface_added": surface_counts,
        "compression_rate": _rate_distribution(kept),
        "headline_ratio_mean": (round(float(kept["headline_ratio"].mean()), 4)
                                if kept.height else None),
        "parser": parser, "paraphrase_table": paraphrase_table, "notes": notes,
    }


def print_report(report: dict[str, Any]) -> None:
    """Human-readable tables on stderr (stdout stays for --json)."""
    from rich.markup import escape
    from rich.table import Table

    out = console()
    parser = escape(str(report["parser"].get("signature")))
    out.print(f"[bold]{report['kept']}[/bold] of {report['input_pairs']} pairs kept "
              f"({report['kept_fraction']:.1%}); parser {parser}")
    rules = Table("rejected by rule", "pairs")
    for rule, count in report["rejected_by_rule"].items():
        rules.add_row(rule, str(count))
    out.print(rules)
    methods = Table("method", "links", "headline tokens", "pairs with link")
    for method, stats in report["alignment"].items():
        methods.add_row(method, str(stats["links"]), str(stats["headline_tokens_aligned"]),
                        str(stats["pairs_with_link"]))
    out.print(methods)
    rate = report["compression_rate"]
    if rate.get("count"):
        out.print(f"compression rate (chars C / chars S): mean {rate['mean']:.3f}, median "
                  f"{rate['median']:.3f}, p10 {rate['p10']:.3f}, p90 {rate['p90']:.3f}")
    if report["dtt"]:
        out.print("DTT additions: " + ", ".join(f"{k} {v}" for k, v in report["dtt_added"].items()))
    if report.get("sentence_added"):
        out.print("sentence-rule additions: "
                  + ", ".join(f"{k} {v}" for k, v in report["sentence_added"].items()))
    if report.get("surface_added"):
        out.print("surface-rule additions: "
                  + ", ".join(f"{k} {v}" for k, v in report["surface_added"].items()))
    for note in report["notes"]:
        out.print(f"[yellow]note:[/yellow] {escape(note)}")
