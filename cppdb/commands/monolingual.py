"""`cppdb align-sentences` and `cppdb extract-monolingual` (thin wrappers over the API)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cppdb.commands.common import (ConfigOpt, FreshOpt, JsonOpt, QuietOpt, SetOpt, fail,
                                   make_config, print_json)
from cppdb.errors import ConfigError, CppdbError


def align_files(src: Path, tgt: Path, out: Path, config, *, units: str | None = None,
                method: str | None = None, gold: Path | None = None,
                cache_dir: Path | None = None) -> dict:
    """Python API of `align-sentences`: write beads to ``out``; scores if ``gold`` is given."""
    from cppdb.align.sentences.align import AlignSettings, align_sentences
    from cppdb.align.sentences.beads import format_beads, read_beads
    from cppdb.align.sentences.scoring import score_beads
    from cppdb.align.sentences.versions import read_units
    from cppdb.io import write_text_atomic

    section = config.section("align_sentences")
    units = units or section["units"]
    if units not in ("lines", "sentences"):
        raise ConfigError(f"--units must be lines or sentences, not {units!r}")
    settings = AlignSettings.from_config(section, **({"method": method} if method else {}))
    src_units = read_units(src, units, config=config)
    tgt_units = read_units(tgt, units, config=config)
    encoder = None
    if settings.method != "bam":
        from cppdb.embed.cache import EmbeddingCache
        from cppdb.embed.encoders import encoder_from_config

        embed = config.section("embed")
        encoder = EmbeddingCache(encoder_from_config(embed), cache_dir)
    result = align_sentences([u.text for u in src_units], [u.text for u in tgt_units],
                             settings, encoder)
    if encoder is not None:
        encoder.save()
    write_text_atomic(out, format_beads(result.beads))
    report: dict = {"source_units": len(src_units), "target_units": len(tgt_units),
                    "beads": len(result.beads), "anchors": len(result.anchors),
                    "method": settings.method, "notes": list(result.notes),
                    "seconds": {k: round(v, 3) for k, v in result.seconds.items()}}
    if gold is not None:
        gold_beads = read_beads(gold)
        for name, one in (("all", False), ("one_to_one", True)):
            s = score_beads(gold_beads, result.beads, one_to_one=one)
            report[f"scores_{name}"] = {"precision_strict": s.precision_strict,
                                        "recall_strict": s.recall_strict,
                                        "f1_strict": s.f1_strict,
                                        "precision_lax": s.precision_lax,
                                        "recall_lax": s.recall_lax, "f1_lax": s.f1_lax}
    return report


def _print_scores(report: dict) -> None:
    for name in ("all", "one_to_one"):
        scores = report.get(f"scores_{name}")
        if scores:
            typer.echo(f"{'all beads' if name == 'all' else '1-1 beads'}: strict P/R/F1 "
                       f"{scores['precision_strict']:.4f} {scores['recall_strict']:.4f} "
                       f"{scores['f1_strict']:.4f} | lax P/R/F1 {scores['precision_lax']:.4f} "
                       f"{scores['recall_lax']:.4f} {scores['f1_lax']:.4f}")


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""

    @app.command("align-sentences")
    def align_sentences_cmd(
        src: Annotated[Path, typer.Argument(
            help="Source version: text, EPUB or subtitle file, or a folder/zip of images.")],
        tgt: Annotated[Path, typer.Argument(
            help="Target version: text, EPUB or subtitle file, or a folder/zip of images.")],
        out: Annotated[Path, typer.Option("--out", "-o", help="Output beads file "
                                          r"(Vecalign format \[i, j]:\[k]:cost, 0-based).")],
        units: Annotated[Optional[str], typer.Option(
            help="lines: each non-empty line/cue is a unit; sentences: segment first.")] = None,
        method: Annotated[Optional[str], typer.Option(
            help="bam | vecalign | bam+vecalign (default from config: bam+vecalign).")] = None,
        gold: Annotated[Optional[Path], typer.Option(
            help="Gold beads: print strict and lax P/R/F1 (all beads and 1-1 beads).")] = None,
        cache_dir: Annotated[Optional[Path], typer.Option(
            help="Keep sentence vectors here (reused by later runs).")] = None,
        config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
        json_: JsonOpt = False,
    ) -> None:
        """Align the sentences of two versions of one text (BAM anchors + Vecalign)."""
        try:
            cfg = make_config(config, set_, quiet)
            report = align_files(src, tgt, out, cfg, units=units, method=method, gold=gold,
                                 cache_dir=cache_dir)
        except CppdbError as exc:
            fail(exc)
            return
        if json_:
            print_json(report)
            return
        typer.echo(f"{report['beads']} beads ({report['anchors']} BAM anchors) -> {out}")
        for note in report["notes"]:
            typer.echo(f"note: {note}", err=True)
        _print_scores(report)

    @app.command("extract-monolingual")
    def extract_monolingual_cmd(
        version_dirs: Annotated[list[Path], typer.Argument(
            help="Two or more directories, one per version (translation / subtitle track).")],
        out: Annotated[Path, typer.Option("--out", "-o", help="Run directory.")],
        pairs: Annotated[Optional[Path], typer.Option(
            "--pairs", help="TSV of file names per version, one chapter per line "
                            "(replaces automatic document pairing).")] = None,
        config: ConfigOpt = None, set_: SetOpt = None, quiet: QuietOpt = False,
        json_: JsonOpt = False, fresh: FreshOpt = False,
    ) -> None:
        """Pair chapters, align sentences, and write 1-1 paraphrase sentence pairs."""
        from cppdb.extractors.monolingual import extract_monolingual

        try:
            cfg = make_config(config, set_, quiet)
            summary = extract_monolingual(version_dirs, out, cfg, pairs_file=pairs, fresh=fresh)
        except CppdbError as exc:
            fail(exc)
            return
        row = {"run_dir": str(summary.run_dir), "documents": summary.documents,
               "groups": summary.groups, "unpaired": summary.unpaired, "beads": summary.beads,
               "sentence_pairs": summary.sentence_pairs}
        if json_:
            print_json(row)
        else:
            typer.echo(f"{summary.groups} document groups ({summary.unpaired} unpaired files), "
                       f"{summary.beads} beads, {summary.sentence_pairs} sentence pairs "
                       f"-> {summary.run_dir}")
