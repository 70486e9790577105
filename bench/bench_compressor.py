"""Keep-label F1 of compressors trained on built corpora, on Zhao et al.'s 1,000 gold sentences.

The gold (``devtools/prepare_compression_gold.py``) is pre-tokenised by jieba: its words are fed
to the compressor as given (UPOS from jieba in context where jieba cuts the same way, else
jieba's dictionary tag, else the tag of the jieba word holding the word's last character;
then the corpus's own parser), so predictions and gold labels are on the same tokens and no
offset mapping is needed.  Scores: precision / recall / F1 of kept tokens against each
annotator on the 900 test sentences (micro: all tokens pooled, as Table 4 of the paper; macro:
mean per-sentence F1 with its 95 % interval).  The 100 dev sentences choose each model's
keep threshold and the length rule's k; nothing is tuned on test.

    python -m bench.bench_compressor --gold /work/corpora/compression-gold \\
        --corpus word=/work/runs/hl-word --corpus word+dtt=/work/runs/hl-word-dtt \\
        --models /work/runs/compressor-models

Each ``--corpus LABEL=RUN`` trains a model into ``MODELS/LABEL`` (reused when its model.json
names the same corpus file and settings; ``--retrain`` forces it).  Prints a Markdown table,
writes it to ``--table`` and appends one row per line to ``bench/results/compressor.jsonl``.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


from bench.common import record
from cppdb.compressor.metrics import keep_f1
from devtools.keep_share import first_share, top_share

ANNOTATORS = ("annotation_1", "annotation_2")
THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]
LENGTH_SHARES = [round(0.05 * i, 2) for i in range(1, 21)]


def read_gold(folder: Path) -> dict[str, list[dict[str, Any]]]:
    return {split: [json.loads(line) for line in
                    (folder / f"{split}.jsonl").read_text("utf-8").splitlines()]
            for split in ("dev", "test")}


def score(predicted: list[list[int]], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """F1 against each annotator, and the compression rate in characters."""
    out: dict[str, Any] = {}
    for key in ANNOTATORS:
        out[key] = keep_f1(predicted, [r[key] for r in rows])
    kept = sum(len("".join(t for t, k in zip(r["tokens"], p) if k))
               for r, p in zip(rows, predicted))
    out["compression_rate"] = kept / sum(len("".join(r["tokens"])) for r in rows)
    return out


def mean_f1(scores: dict[str, Any]) -> float:
    return (scores["annotation_1"]["f1"] + scores["annotation_2"]["f1"]) / 2


def baselines(gold: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    rows = [{"model": "keep everything", "tuned": "", **score(
        [[1] * len(r["tokens"]) for r in gold["test"]], gold["test"])}]
    best = max(LENGTH_SHARES, key=lambda s: (mean_f1(score(first_share(gold["dev"], s),
                                                           gold["dev"])), -s))
    rows.append({"model": f"first {best:.0%} of the tokens", "tuned": f"k = {best:.2f} on dev",
                 **score(first_share(gold["test"], best), gold["test"])})
    return rows


def _same_training(model_dir: Path, corpus: Path, settings: dict[str, Any]) -> bool:
    info_path = model_dir / "model.json"
    if not info_path.is_file():
        return False
    from cppdb.compressor.data import corpus_records
    from cppdb.io import file_sha256

    info = json.loads(info_path.read_text("utf-8"))
    return (info["corpus"]["sha256"] == file_sha256(corpus_records(corpus))
            and info["settings"] == settings)


def evaluate_model(label: str, corpus: Path, models: Path, gold: dict[str, Any],
                   config: Any, device: str | None, retrain: bool,
                   parsed_cache: dict[str, Any]) -> list[dict[str, Any]]:
    from cppdb.compressor.api import load_compressor, train_compressor
    from cppdb.compressor.train import TrainSettings

    model_dir = models / label
    settings = TrainSettings.from_config(config.section("compressor")).to_json()
    if retrain or not _same_training(model_dir, corpus, settings):
        train_compressor(corpus, model_dir, config, device=device)
    compressor = load_compressor(model_dir, device or "auto")
    key = json.dumps(compressor.info["parser"], sort_keys=True)
    if key not in parsed_cache:
        parsed_cache[key] = {split: compressor.parse([r["tokens"] for r in rows])
                             for split, rows in gold.items()}
    probs = {split: compressor.probabilities(parsed_cache[key][split]) for split in gold}
    info = compressor.info
    base = {"corpus": str(corpus), "train_sentences": info["corpus"]["train"],
            "corpus_kept_share": round(info["corpus"]["kept_share"], 4),
            "device": info["device"], "train_seconds": info["seconds"],
            "epochs": info["log"]}

    def at(split: str, cut: float) -> list[list[int]]:
        return [(p >= cut).astype(int).tolist() for p in probs[split]]

    def top(split: str, share: float) -> list[list[int]]:
        return [top_share(p, share) for p in probs[split]]

    tuned = max(THRESHOLDS, key=lambda t: (mean_f1(score(at("dev", t), gold["dev"])), -t))
    rate = max(LENGTH_SHARES, key=lambda r: (mean_f1(score(top("dev", r), gold["dev"])), -r))
    default = compressor.settings.threshold
    return [{"model": label, "tuned": f"threshold {default} (default)", **base,
             **score(at("test", default), gold["test"])},
            {"model": label, "tuned": f"threshold {tuned} on dev", **base,
             **score(at("test", tuned), gold["test"])},
            {"model": label, "tuned": f"most probable {rate:.0%} of each sentence (on dev)",
             **base, **score(top("test", rate), gold["test"])}]


def agreement(rows: list[dict[str, Any]]) -> float:
    """F1 of one annotator's kept tokens against the other's (symmetric): a ceiling."""
    return keep_f1([r["annotation_2"] for r in rows], [r["annotation_1"] for r in rows])["f1"]


def table(rows: list[dict[str, Any]], ceiling: float) -> str:
    lines = ["| model (training corpus) | threshold / k | F1 ann-1 | F1 ann-2 | P / R ann-1 | "
             "macro F1 ann-1 (± 1.96·SE) | macro F1 ann-2 | CR (chars) | train sentences |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a, b = r["annotation_1"], r["annotation_2"]
        lines.append(
            f"| {r['model']} | {r['tuned'] or '–'} | {100 * a['f1']:.1f} | {100 * b['f1']:.1f} | "
            f"{100 * a['precision']:.1f} / {100 * a['recall']:.1f} | "
            f"{100 * a['f1_macro']:.1f} ± {196 * a['f1_macro_se']:.1f} | "
            f"{100 * b['f1_macro']:.1f} ± {196 * b['f1_macro_se']:.1f} | "
            f"{r['compression_rate']:.2f} | {r.get('train_sentences', '–')} |")
    n = rows[0]["annotation_1"]
    lines.append(f"\nn = {n['sentences']} test sentences, {n['tokens']} tokens; one annotator "
                 f"scored against the other: F1 {100 * ceiling:.1f}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--corpus", action="append", default=[], metavar="LABEL=RUN")
    parser.add_argument("--models", type=Path, help="folder of the trained models")
    parser.add_argument("--set", action="append", default=[], dest="overrides")
    parser.add_argument("--device", default=None)
    parser.add_argument("--retrain", action="store_true")
    parser.add_argument("--table", type=Path, help="write the Markdown table here too")
    args = parser.parse_args(argv)
    from cppdb.config import load_config

    config = load_config(None, args.overrides)
    gold = read_gold(args.gold)
    rows = baselines(gold)
    parsed_cache: dict[str, Any] = {}
    for item in args.corpus:
        label, _, run = item.partition("=")
        if not run or args.models is None:
            parser.error("--corpus takes LABEL=RUN, and needs --models")
        rows += evaluate_model(label, Path(run), args.models, gold, config, args.device,
                               args.retrain, parsed_cache)
    for row in rows:
        record("compressor", {**row, "gold": str(args.gold), "overrides": args.overrides})
    text = table(rows, agreement(gold["test"]))
    print(text)
    if args.table:
        args.table.write_text(text + "\n", "utf-8")


if __name__ == "__main__":
    main()
