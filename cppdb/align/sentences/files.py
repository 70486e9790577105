"""Python API of `cppdb align-sentences`: align two files of units, write Vecalign beads."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cppdb.align.sentences.align import AlignSettings, align_sentences, load_alignment_encoder
from cppdb.align.sentences.beads import format_beads, read_beads
from cppdb.align.sentences.scoring import bootstrap_f1, score_beads
from cppdb.align.sentences.versions import read_units
from cppdb.config import Config, resolve
from cppdb.embed.settings import EmbedSettings
from cppdb.errors import ConfigError
from cppdb.io import write_text_atomic
from cppdb.readers.settings import ReadingSettings


def align_files(src: Path, tgt: Path, out: Path, config: Config, *, units: str | None = None,
                method: str | None = None, gold: Path | None = None,
                cache_dir: Path | None = None) -> dict:
    """Python API of `align-sentences`: write beads to ``out``; scores if ``gold`` is given."""
    section = resolve(AlignSettings, config)
    units = units or section.units
    if units not in ("lines", "sentences"):
        raise ConfigError(f"--units must be lines or sentences, not {units!r}")
    settings = replace(section, method=method) if method else section
    reading = resolve(ReadingSettings, config)
    src_units = read_units(src, units, reading=reading)
    tgt_units = read_units(tgt, units, reading=reading)
    encoder = None
    if settings.method != "bam":
        encoder, _backend = load_alignment_encoder(settings, resolve(EmbedSettings, config),
                                                   cache_dir)
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
            low, high = bootstrap_f1(gold_beads, result.beads, one_to_one=one,
                                     seed=settings.seed)
            report[f"scores_{name}"].update(f1_strict_low=low, f1_strict_high=high)
    return report
