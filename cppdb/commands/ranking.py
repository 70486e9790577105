"""`cppdb rank`, `score`, `export` and `evaluate` (thin wrappers over cppdb.rank / evaluate)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb.commands.common import (ConfigOpt, DryRunOpt, EngineOpt, FreshOpt, JsonOpt, QuietOpt,
                                   SetOpt, SparkMasterOpt, make_config, print_json, print_plan)
from cppdb.errors import BadInputError
from cppdb.evaluate.display import (coverage_renderables, evaluation_rich_table, legend,
                                    relation_mix_renderables)
from cppdb.progress import console


def _print_table(frame, title: str) -> None:
    from rich.table import Table

    table = Table(title=title)
    for name in frame.columns:
        table.add_column(name)
    for row in frame.iter_rows():
        table.add_row(*["" if v is None else f"{v:.4f}" if isinstance(v, float) else str(v)
                        for v in row])
    console().print(table)


def _print_evaluation(frame, title: str, signed: str, coverage=None, relations=None) -> None:
    """The table, the word coverage, the relation mix, the legend and the signature on stdout
    (they are the command's result; the width follows the terminal, or $COLUMNS, 80 by
    default)."""
    from rich.console import Console

    out = Console(highlight=False)
    out.print(evaluation_rich_table(frame, title))
    for part in coverage_renderables(coverage):
        out.print(part)
    for part in relation_mix_renderables(relations):
        out.print(part)
    out.print(f"{legend(frame)}\nsignature: {signed}", markup=False, soft_wrap=True)


def _rank(run: Path, labels: Optional[Path], config: Optional[Path], overrides, quiet: bool,
          as_json: bool, fresh: bool, dry_run: bool = False, engine: str = "local",
          spark_master: Optional[str] = None) -> None:
    # lazy: `cppdb --help` loads no stage code (numpy, numba)
    from cppdb.rank.pipeline import plan_rank, rank_run, summary_dict

    cfg = make_config(config, overrides, quiet)
    if dry_run:
        print_plan(plan_rank(run, cfg, labels, engine=engine, spark_master=spark_master),
                   as_json)
        return
    summary = rank_run(run, cfg, labels, fresh=fresh, engine=engine, spark_master=spark_master)
    if as_json:
        print_json(summary_dict(summary))
        return
    typer.echo(f"ranked {summary.ranked} pairs ({summary.rejected} filtered out, "
               f"{summary.pruned} low-ranked unrelated pruned) with "
               f"{summary.model}; outputs in {summary.ranking_dir}")
    _print_table(summary.tiers, "size tiers")


def _evaluate(target: Path, sample: Optional[int], out: Optional[Path], config, overrides,
              quiet: bool, as_json: bool) -> None:
    # lazy: `cppdb --help` loads no stage code (numpy, numba)
    from cppdb.evaluate import api, sheet

    cfg = make_config(config, overrides, quiet, outputs=(out,))
    if not target.exists():
        raise BadInputError(f"{target} does not exist",
                            hint="give a ranked run directory (after `cppdb rank`), a pair file "
                                 "(.ppdb, .jsonl, .tsv, .parquet) or a filled annotation sheet")
    if api.is_annotation_sheet(target):
        table, unrated, signed = api.sheet_table(target, cfg)
        title = f"acceptability (human ratings; {unrated} unrated rows ignored)"
    elif sample is not None:
        out = out or (target / "annotation_sheet.tsv" if target.is_dir()
                      else target.with_suffix(".sheet.tsv"))
        rows = api.write_sheet(target, out, sample, cfg)
        if as_json:
            print_json({"sheet": str(out), "rows": rows})
        else:
            typer.echo(f"wrote {rows} pairs to {out}; fill the 'rating' column "
                       f"({sheet.SCALE_HELP}), then run `cppdb evaluate {out}`")
        return
    else:
        found = api.evaluate_ranking(target, cfg)
        if as_json:
            print_json(found.to_dict())
            return
        _print_evaluation(found.table, "diversity and consistency per type and top share",
                          found.signature, found.coverage, found.relations)
        return
    if as_json:
        print_json({"signature": signed, "table": table.to_dicts()})
    else:
        _print_table(table, title)
        typer.echo(f"95 % bootstrap intervals in the *_low/*_high columns; signature: {signed}")


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""

    @app.command("rank")
    def rank_cmd(
        run: Annotated[Path, typer.Argument(help="Run directory with phrase/pattern/sentence "
                                            "pair tables.")],
        labels: Annotated[Optional[Path], typer.Option(
            "--labels", help="Human labels: TSV source<TAB>target<TAB>score 1-5 (header "
                             "allowed). Without it the ranker learns from weak labels.")] = None,
        config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
        as_json: JsonOpt = False, fresh: FreshOpt = False, dry_run: DryRunOpt = False,
        engine: EngineOpt = "local", spark_master: SparkMasterOpt = None,
    ) -> None:
        """Filter, featurise and rank a run's pairs with LightGBM (outputs in RUN/ranking/)."""
        _rank(run, labels, config, set_, quiet, as_json, fresh, dry_run, engine, spark_master)

    @app.command("score")
    def score_cmd(
        pairs: Annotated[Path, typer.Argument(help="TSV: source<TAB>target per line.")],
        out: Annotated[Path, typer.Option("--out", "-o", help="Output TSV with a score column.")],
        model: Annotated[Optional[Path], typer.Option(
            "--model", help="Ranker JSON (e.g. RUN/ranking/ranker.json); default: the "
                            "shipped model.")] = None,
        config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Score arbitrary pairs: higher = better paraphrase (about the 1-5 scale)."""
        # lazy: `cppdb --help` loads no stage code (numpy, numba)
        from cppdb.rank.pipeline import score_file

        count = score_file(pairs, out, make_config(config, set_, quiet, outputs=(out,)), model)
        if as_json:
            print_json({"pairs": count, "out": str(out)})
        else:
            typer.echo(f"scored {count} pairs -> {out}")

    @app.command("export")
    def export_cmd(
        run: Annotated[Path, typer.Argument(help="Ranked run directory (after `cppdb rank`).")],
        top: Annotated[str, typer.Option(help="Share of each type's best pairs (20%, 0.2) "
                                              "or a size tier (S, M, L, XL).")] = "20%",
        type_: Annotated[Optional[str], typer.Option(
            "--type", help="Only this pair type: phrase | pattern | sentence.")] = None,
        format_: Annotated[str, typer.Option(
            "--format", help="ppdb | jsonl | tsv | parquet | hf (a Hugging Face datasets "
                        "directory with every tier; --top is ignored).")] = "jsonl",
        out: Annotated[Optional[Path], typer.Option(
            "--out", "-o", help="Output file (default RUN/export-<type>-top<k>.<format>).")] = None,
        config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Export the top k% (or a size tier) of the ranking."""
        # lazy: `cppdb --help` loads no stage code (numpy, numba)
        from cppdb.export_ranked import export_run

        # hf writes a dataset directory (checked by its writer), the others one file
        files = () if format_ == "hf" else (out,)
        path, count = export_run(run, top, type_, format_, out,
                                 make_config(config, set_, quiet, outputs=files))
        if as_json:
            print_json({"out": str(path), "pairs": count})
        else:
            typer.echo(f"exported {count} pairs -> {path}")

    @app.command("evaluate")
    def evaluate_cmd(
        target: Annotated[Path, typer.Argument(
            help="Ranked run directory, a pair file, or a filled annotation sheet.")],
        sample: Annotated[Optional[int], typer.Option(
            help="Write an annotation sheet with N pairs per type (stratified by top "
                 "share) instead of the automatic table.")] = None,
        out: Annotated[Optional[Path], typer.Option(
            "--out", "-o", help="Where --sample writes the sheet.")] = None,
        config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Diversity/consistency at the top 20/60/100%, or human acceptability from a sheet."""
        _evaluate(target, sample, out, config, set_, quiet, as_json)
