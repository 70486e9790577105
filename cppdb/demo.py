"""`make demo`: the main jobs on the bundled sample data, end to end.

1. bilingual pivot extraction over data/parallel (phrases, patterns), and the word-alignment
   ensemble scored against the bundled gold,
2. ranking, a top-20% export and the evaluation table of that run,
3. monolingual extraction from two translations of the bundled story: as text, as subtitles
   (one of them Big5 and traditional), and with one version only as rendered page screenshots
   (OCR),
4. a compression corpus from the bundled news pairs, with the demo run's paraphrase table,
5. an HTML report per run (``RUN/report.html``).

Outputs go to ./demo-run (or the directory given as the first argument).
"""
from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import polars as pl
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cppdb import schema as S
from cppdb.align.words.workflow import align_files
from cppdb.config import Config, load_config
from cppdb.errors import RunMismatchError
from cppdb.evaluate.api import evaluate_run
from cppdb.evaluate.display import evaluation_rich_table, legend
from cppdb.export_ranked import export_run
from cppdb.extractors.bilingual import extract_bilingual
from cppdb.extractors.compression.builder import build_compression
from cppdb.extractors.monolingual import extract_monolingual
from cppdb.ocr.render import render_page_images
from cppdb.rank.pipeline import rank_run, read_ranked
from cppdb.report import write_report

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
console = Console()
T = TypeVar("T")


def _table(title: str, frame: pl.DataFrame) -> None:
    table = Table(title=title, title_justify="left")
    for column in frame.columns:
        table.add_column(column, overflow="fold")
    for row in frame.iter_rows():
        table.add_row(*[f"{v:.3f}" if isinstance(v, float) else str(v) for v in row])
    console.print(table)


def _evaluation(title: str, frame: pl.DataFrame) -> None:
    console.print(evaluation_rich_table(frame, title))
    console.print(legend(frame), markup=False, highlight=False)


def _step(title: str) -> float:
    console.rule(f"[bold]{title}")
    return time.perf_counter()


def _resumed(command: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``command`` resuming its run directory, or redoing it (``fresh=True``) when an earlier
    demo made it with other settings or models (a new version of cppdb)."""
    try:
        return command(*args, **kwargs)
    except RunMismatchError as exc:
        console.print(f"[yellow]{escape(exc.message)}[/yellow]\n(made by an earlier demo or "
                      "version of cppdb: running it again from the start)")
        return command(*args, **kwargs, fresh=True)


def bilingual(out: Path, config: Config) -> Path:
    started = _step("1. bilingual pivot extraction (data/parallel, 294 zh-en pairs)")
    result = _resumed(extract_bilingual, DATA / "parallel" / "sample.zh",
                      DATA / "parallel" / "sample.en", out / "bilingual", config)
    for name, path in (("phrase pairs", result.phrase_pairs), ("pattern pairs", result.pattern_pairs)):
        frame = pl.read_parquet(path)
        best = (frame.filter(pl.col("count") >= 2).sort("p_t_given_s", descending=True)
                .select("source", "target", "lhs", "p_t_given_s", "count").head(6))
        _table(f"{name}: {frame.height} in all; a few with count >= 2", best)
    console.print(f"run directory: {out / 'bilingual'} ({time.perf_counter() - started:.0f} s)")
    return out / "bilingual"


def word_alignment(out: Path, config: Config) -> None:
    started = _step("1b. word alignment ensemble scored against the bundled gold (30 pairs)")
    report = align_files(config, out=out / "wordalign.align",
                         parallel=DATA / "wordalign" / "sample.txt",
                         train=DATA / "parallel" / "sample.tok.txt",
                         gold=DATA / "wordalign" / "sample.gold")
    gold = report["gold"]
    console.print(f"aligners {', '.join(report['aligners_used'])}: precision {gold['precision']:.3f} "
                  f"recall {gold['recall']:.3f} AER {gold['aer']:.3f} -> {report['output']} "
                  f"({time.perf_counter() - started:.0f} s)")


def ranking(run_dir: Path, config: Config) -> None:
    started = _step("2. features, filtering, LightGBM ranking, top-20% export, evaluation")
    summary = _resumed(rank_run, run_dir, config)
    console.print(f"{summary.pairs} candidates, {summary.rejected} filtered out (with reasons), "
                  f"{summary.ranked} ranked with model {summary.model}, {summary.pruned} "
                  "low-ranked unrelated pruned")
    ranked = read_ranked(run_dir)
    _table("best-ranked pairs", ranked.sort("score", descending=True)
           .select("type", "source", "target", "score").head(8))
    path, rows = export_run(run_dir, top=0.2, format="jsonl", out=run_dir / "top20.jsonl",
                            config=config)
    console.print(f"top 20%: {rows} pairs -> {path}")
    _evaluation("evaluation (diversity and consistency by tier)", evaluate_run(run_dir, config))
    console.print(f"({time.perf_counter() - started:.0f} s)")


def _subtitle_versions(work: Path) -> list[Path]:
    a, b = work / "subs_a", work / "subs_b"
    for folder in (a, b):
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    shutil.copy(DATA / "subtitles" / "version_a" / "episode01.srt", a)
    shutil.copy(DATA / "subtitles" / "version_b" / "ep1.big5.srt", b)   # Big5, traditional
    return [a, b]


def _screenshot_version(work: Path) -> Path:
    target = work / "screenshots_b"
    if not target.exists():
        for chapter in sorted((DATA / "story" / "version_b").glob("*.txt")):
            lines = chapter.read_text("utf-8").splitlines()
            render_page_images(lines[1:], target / chapter.stem, title=lines[0])
    return target


def monolingual(out: Path, config: Config) -> None:
    started = _step("3. monolingual extraction: two translations of the bundled story")
    work = out / "inputs"
    cases = [
        ("text", [DATA / "story" / "version_a", DATA / "story" / "version_b"]),
        ("subtitles", _subtitle_versions(work)),
        ("screenshots (OCR)", [DATA / "story" / "version_a", _screenshot_version(work)]),
    ]
    for name, dirs in cases:
        run_dir = out / f"monolingual-{name.split()[0]}"
        summary = _resumed(extract_monolingual, dirs, run_dir, config)
        pairs = pl.read_parquet(run_dir / S.SENTENCE_PAIRS_FILE)
        console.print(f"[bold]{name}[/bold]: {summary.documents} documents, {summary.beads} beads, "
                      f"{summary.sentence_pairs} sentence pairs -> {run_dir}")
        _table(f"{name}: sentence pairs", pairs.select("source", "target").head(3))
    console.print(f"({time.perf_counter() - started:.0f} s)")

    text_run = out / "monolingual-text"
    summary = _resumed(rank_run, text_run, config.with_overrides(["rank.model=default"]))
    path, rows = export_run(text_run, top=0.2, format="jsonl", out=text_run / "top20.jsonl",
                            config=config)
    console.print(f"sentence pairs ranked with the shipped model: {summary.ranked}; "
                  f"top 20% ({rows}) -> {path}")
    _evaluation("evaluation of the sentence pairs", evaluate_run(text_run, config))


#: how many kept compressions step 4 prints: the first ones in input order, not a selection
SHOWN_COMPRESSIONS = 5


def shown_compressions(compressions: Path) -> list[dict]:
    """The kept pairs step 4 prints: the first :data:`SHOWN_COMPRESSIONS` in input order."""
    import json

    rows = [json.loads(line) for line in compressions.read_text("utf-8").splitlines()]
    return sorted(rows, key=lambda row: row["line"])[:SHOWN_COMPRESSIONS]


def compression(out: Path, bilingual_run: Path, config: Config) -> None:
    started = _step("4. compression corpus from data/news with the demo paraphrase table")
    aware = config.with_overrides(["compression.overlap_denominator=headline_content",
                                   "compression.overlap_source=alignment"])
    result = _resumed(build_compression, DATA / "news" / "pairs.jsonl", out / "compression",
                      aware, paraphrases=bilingual_run)
    report = result.report
    console.print(f"{report['input_pairs']} pairs: {report['kept']} kept, {report['rejected']} "
                  f"rejected {report['rejected_by_rule']}")
    shown = shown_compressions(Path(result.compressions))
    _table(f"the first {len(shown)} kept compressions (input order)", pl.DataFrame({
        "headline": [r["headline"] for r in shown],
        "compression": [r["compression"] for r in shown],
        "sentence": [r["sentence"] for r in shown]}))
    console.print(f"outputs: {out / 'compression'} ({time.perf_counter() - started:.0f} s)")


def reports(out: Path) -> None:
    _step("5. one HTML report per run (open in a browser; works offline)")
    for run_dir in sorted(p.parent for p in out.glob("*/manifest.json")):
        console.print(f"report: {write_report(run_dir)}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        # an option is not an output directory: `python -m cppdb.demo --help` must not
        # run the demo into ./--help
        console.print("usage: python -m cppdb.demo [OUTPUT_DIR]   (default: ./demo-run)")
        return 0 if argv[0] in ("-h", "--help") else 2
    out = Path(argv[0]) if argv else REPO / "demo-run"
    config = load_config()
    started = time.perf_counter()
    bilingual_run = bilingual(out, config)
    word_alignment(out, config)
    ranking(bilingual_run, config)
    monolingual(out, config)
    compression(out, bilingual_run, config)
    reports(out)
    console.rule("[bold]done")
    console.print(f"All outputs are under {out} ({time.perf_counter() - started:.0f} s). "
                  "Each run directory has a manifest.json with counts and timings.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
