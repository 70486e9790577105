"""File-level workflows behind `cppdb align-words` and `cppdb align-words tune`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from cppdb.version import __version__
from cppdb.align.words.api import (align_tokenized, build_aligners, compute_matrices,
                                   configured_workers, ensemble_params, screen_pairs)
from cppdb.align.words.ensemble import EnsembleParams, decode, save_params, tune
from cppdb.align.words.gold import check_gold_fits, format_links, read_gold, score_alignment
from cppdb.align.words.inputs import TokenizedPairs, load_pairs
from cppdb.align.words.settings import AlignWordsRun
from cppdb.config import Config, resolve
from cppdb.errors import BadInputError
from cppdb.io import write_jsonl_atomic, write_text_atomic


def _train(settings: AlignWordsRun, train: Path | None) -> tuple[list, list] | None:
    if train is None:
        return None
    pairs = load_pairs(settings.annotate, parallel=train, what="--train")
    return list(pairs.zh), list(pairs.en)


def _gold_for_lines(gold_path: Path, one_based: bool, pairs: TokenizedPairs):
    """Gold lines of the usable input lines (gold has one line per input line)."""
    gold = read_gold(gold_path, one_based=one_based)
    if len(gold) != pairs.n_lines:
        raise BadInputError(f"gold file {gold_path} has {len(gold)} lines but the input has "
                            f"{pairs.n_lines}", hint="one gold line per input sentence pair")
    chosen = [gold[k] for k in pairs.line_ids]
    check_gold_fits(chosen, [(len(z), len(e)) for z, e in zip(pairs.zh, pairs.en)],
                    where=str(gold_path))
    return chosen


def align_files(config: Config, *, out: Path | None, parallel: Path | None = None,
                zh: Path | None = None, en: Path | None = None, train: Path | None = None,
                gold: Path | None = None, gold_one_based: bool = False) -> dict[str, Any]:
    """Align a file; write Pharaoh lines (one per input line) and report gold scores."""
    settings = resolve(AlignWordsRun, config)
    pairs = load_pairs(settings.annotate, parallel=parallel, zh=zh, en=en)
    gold_pairs = _gold_for_lines(gold, gold_one_based, pairs) if gold else None
    result = align_tokenized(list(pairs.zh), list(pairs.en), settings.align_words,
                             train=_train(settings, train), en_lemmas=pairs.en_lemmas,
                             workers=configured_workers(settings.align_words))
    lines = [""] * pairs.n_lines
    for line_id, links in zip(pairs.line_ids, result.links):
        lines[line_id] = format_links(links)
    rejected = [p.to_record(pairs.source) for p in pairs.problems]
    rejected += [{"line": pairs.line_ids[r.index] + 1, "id": pairs.line_ids[r.index],
                  "reason": r.reason, "source": pairs.source} for r in result.rejected]
    summary: dict[str, Any] = {
        "pairs": pairs.n_lines, "aligned": len(pairs.line_ids) - len(result.rejected),
        "rejected": len(rejected), "aligners_used": list(result.aligners_used),
        "aligners_skipped": {s.name: s.reason for s in result.skipped_aligners},
        "ensemble": result.params.to_json() if result.params else None,
        "signature": "|".join((f"cppdb:{__version__}",) + result.signatures),
        "links": sum(len(links) for links in result.links)}
    if out is not None:
        write_text_atomic(out, "\n".join(lines) + "\n")
        summary["output"] = str(out)
        if rejected:
            rejected_path = Path(f"{out}.rejected.jsonl")
            write_jsonl_atomic(rejected_path, sorted(rejected, key=lambda r: r["line"]))
            summary["rejected_file"] = str(rejected_path)
    if gold_pairs is not None:
        summary["gold"] = score_alignment(result.links, gold_pairs).as_dict()
    return summary


def _single_scores(matrices, names, gold_pairs, params: EnsembleParams) -> dict[str, Any]:
    """AER of each aligner alone, decoded the same way as the ensemble."""
    scores = {}
    for name in names:
        alone = EnsembleParams(((name, 1.0),), params.threshold, params.decode,
                               params.sure_threshold)
        scores[name] = score_alignment(decode(matrices[name], alone), gold_pairs).as_dict()
    return scores


def tune_files(config: Config, *, out: Path, gold: Path, parallel: Path | None = None,
               zh: Path | None = None, en: Path | None = None, train: Path | None = None,
               gold_one_based: bool = False, weight_step: float = 0.1) -> dict[str, Any]:
    """Fit ensemble weights, decoding and thresholds on dev gold; save them to ``out``."""
    settings = resolve(AlignWordsRun, config)
    words = settings.align_words
    pairs = load_pairs(settings.annotate, parallel=parallel, zh=zh, en=en, what="dev set")
    gold_pairs = _gold_for_lines(gold, gold_one_based, pairs)
    kept, rejected = screen_pairs(pairs.zh, pairs.en, words.max_tokens)
    if rejected:
        raise BadInputError(f"dev pair {rejected[0].index + 1}: {rejected[0].reason}",
                            hint="tuning needs every dev pair; raise align_words.max_tokens")
    aligners, skipped = build_aligners(words, ensemble_params(words).names)
    train_pairs = _train(settings, train)
    train_list = list(zip(*train_pairs)) if train_pairs else []
    token_pairs = list(zip(pairs.zh, pairs.en))
    matrices = compute_matrices(aligners, token_pairs, train_list,
                                list(pairs.en_lemmas) if pairs.en_lemmas else None)
    result = tune(matrices, gold_pairs, weight_step=weight_step)
    singles = _single_scores(matrices, list(aligners), gold_pairs, result.params)
    extra = {"aligners": list(aligners), "single_aligner_dev": singles,
             "dev_file": pairs.source, "gold_file": str(gold),
             "signature": "|".join([f"cppdb:{__version__}"]
                                   + [a.signature() for a in aligners.values()])}
    save_params(out, result, extra)
    return {"output": str(out), "ensemble": result.params.to_json(),
            "dev": {"aer": round(result.aer, 4), "precision": round(result.precision, 4),
                    "recall": round(result.recall, 4)},
            "single_aligner_dev": singles, "aligners_used": list(aligners),
            "aligners_skipped": {s.name: s.reason for s in skipped},
            "how_to_use": f"--set align_words.tuned_file={out}"}

