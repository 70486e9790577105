"""Prepare the 1,000 human compressions of Zhao et al. (2022) as cppdb's compression gold.

The paper's evaluation set (``ExperimentCode/data``: ``data_annotation-1_1k.txt``,
``data_annotation-2_1k.txt``, Apache-2.0) holds 1,000 news sentences pre-tokenised by jieba,
one ``token<TAB>label`` line per word (1 = kept), a blank line between sentences, each
sentence opened by ``#id = N`` (or ``#id_mask = N`` for the 30 sentences whose sensitive
words the authors replaced by ``[MASK]`` tokens).  Both files hold the same sentences and
tokens; only the labels differ.

The paper uses "100 sentences for development and 900 sentences for testing" without saying
which; neither its repository nor its code repository (``ExperimentCode/code``: a README only)
says more.  We take the **first 100 sentences in file order (ids 1–100) as dev** and the
other 900 as test.

Writes, under ``--out``:

- ``dev.jsonl`` / ``test.jsonl``: one object per sentence, in id order:
  ``{"id", "masked", "tokens", "annotation_1", "annotation_2"}`` (labels as 0/1 lists)
- ``stats.json``: counts, kept shares, agreement (Cohen's κ over tokens) and the raw files'
  SHA-256

    python -m devtools.prepare_compression_gold --raw /work/corpora/compression-gold/raw \\
        --out /work/corpora/compression-gold

Deterministic: the same raw files give byte-identical outputs.  Never commit the output.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path
from typing import Any

ANNOTATIONS = ("data_annotation-1_1k.txt", "data_annotation-2_1k.txt")
N_SENTENCES = 1000
N_DEV = 100
_HEADER = re.compile(r"#id(_mask)? = (\d+)\s*$")


def parse_annotation(text: str, name: str) -> list[dict[str, Any]]:
    """The sentences of one annotation file: ``{"id", "masked", "tokens", "labels"}``."""
    sentences = []
    for number, block in enumerate(b for b in text.split("\n\n") if b.strip()):
        lines = block.strip("\n").split("\n")
        header = _HEADER.match(lines[0])
        if header is None:
            raise SystemExit(f"{name}: sentence {number + 1} has no '#id = N' line: {lines[0]!r}")
        tokens, labels = [], []
        for line in lines[1:]:
            token, sep, label = line.rpartition("\t")
            if not sep or not token or label not in ("0", "1"):
                raise SystemExit(f"{name}: id {header.group(2)}: bad line {line!r}")
            tokens.append(token)
            labels.append(int(label))
        sentences.append({"id": int(header.group(2)), "masked": header.group(1) is not None,
                          "tokens": tokens, "labels": labels})
    return sentences


def merge(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per sentence with both annotators' labels; the files must agree on the rest."""
    if len(first) != N_SENTENCES or len(second) != N_SENTENCES:
        raise SystemExit(f"expected {N_SENTENCES} sentences per file, got "
                         f"{len(first)} and {len(second)}")
    rows = []
    for a, b in zip(first, second):
        if (a["id"], a["masked"], a["tokens"]) != (b["id"], b["masked"], b["tokens"]):
            raise SystemExit(f"the two files differ on sentence id {a['id']} / {b['id']}")
        rows.append({"id": a["id"], "masked": a["masked"], "tokens": a["tokens"],
                     "annotation_1": a["labels"], "annotation_2": b["labels"]})
    if [r["id"] for r in rows] != list(range(1, N_SENTENCES + 1)):
        raise SystemExit("sentence ids are not 1..1000 in file order")
    return rows


def cohen_kappa(a: list[int], b: list[int]) -> float:
    """Unweighted κ of two binary label lists (the paper's Table 3 reports 0.75)."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return (observed - expected) / (1 - expected)


def statistics(rows: list[dict[str, Any]], digests: dict[str, str]) -> dict[str, Any]:
    a = [x for r in rows for x in r["annotation_1"]]
    b = [x for r in rows for x in r["annotation_2"]]

    def kept_chars(key: str) -> float:
        return sum(len("".join(t for t, k in zip(r["tokens"], r[key]) if k))
                   for r in rows) / len(rows)

    return {"sentences": len(rows), "dev": N_DEV, "test": len(rows) - N_DEV,
            "split": f"dev = ids 1..{N_DEV} (file order), test = the rest",
            "masked_sentences": sum(r["masked"] for r in rows), "tokens": len(a),
            "kept_share_annotation_1": round(sum(a) / len(a), 4),
            "kept_share_annotation_2": round(sum(b) / len(b), 4),
            "mean_sentence_chars": round(sum(len("".join(r["tokens"])) for r in rows)
                                         / len(rows), 2),
            "mean_kept_chars_annotation_1": round(kept_chars("annotation_1"), 2),
            "mean_kept_chars_annotation_2": round(kept_chars("annotation_2"), 2),
            "cohen_kappa_tokens": round(cohen_kappa(a, b), 4), "raw_sha256": digests}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raw", type=Path, required=True,
                        help="folder holding the two data_annotation-*_1k.txt files")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    parsed, digests = [], {}
    for name in ANNOTATIONS:
        data = (args.raw / name).read_bytes()
        digests[name] = hashlib.sha256(data).hexdigest()
        parsed.append(parse_annotation(data.decode("utf-8"), name))
    rows = merge(*parsed)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "dev.jsonl", rows[:N_DEV])
    write_jsonl(args.out / "test.jsonl", rows[N_DEV:])
    stats = statistics(rows, digests)
    (args.out / "stats.json").write_text(json.dumps(stats, ensure_ascii=False, indent=2) + "\n",
                                         "utf-8")
    print(json.dumps(stats, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
