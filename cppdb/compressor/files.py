"""`cppdb compress`: a file of sentences in, one JSON line per sentence out.

Input: plain text (one sentence per line) or JSONL whose objects carry ``tokens`` (a list of
words, taken as given: pre-tokenised gold) or ``sentence`` / ``text`` (cut by jieba).  Blank
lines are skipped and counted; a line that is neither is a coded error naming it.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cppdb.compressor.api import load_compressor
from cppdb.errors import BadInputError
from cppdb.io import check_output_file, write_jsonl_atomic

_TEXT_FIELDS = ("sentence", "text")


def read_sentences(path: str | Path) -> tuple[list[tuple[int, Any]], int]:
    """``(line number, tokens list or text)`` per non-blank line, and the blank-line count."""
    source = Path(path)
    if not source.is_file():
        raise BadInputError(f"{source}: no such file")
    is_json = source.suffix == ".jsonl"
    items, blank = [], 0
    for number, line in enumerate(source.read_text("utf-8-sig").splitlines(), start=1):
        if not line.strip():
            blank += 1
            continue
        if not is_json:
            items.append((number, line.strip()))
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadInputError(f"{source}:{number}: not JSON ({exc.msg})") from None
        tokens = obj.get("tokens") if isinstance(obj, dict) else None
        text = next((obj[f] for f in _TEXT_FIELDS if isinstance(obj, dict) and f in obj), None)
        if isinstance(tokens, list) and tokens and all(isinstance(t, str) and t for t in tokens):
            items.append((number, tokens))
        elif isinstance(text, str) and text.strip():
            items.append((number, text.strip()))
        else:
            raise BadInputError(f"{source}:{number}: needs a non-empty 'tokens' list or a "
                                f"'sentence' / 'text' string")
    return items, blank


def compress_file(model_dir: str | Path, input_path: str | Path, output_path: str | Path, *,
                  threshold: float | None = None, device: str = "auto") -> dict[str, Any]:
    """Compress every sentence of ``input_path`` into ``output_path`` (JSONL)."""
    check_output_file(output_path)
    compressor = load_compressor(model_dir, device)
    items, blank = read_sentences(input_path)
    given = [i for i, (_, v) in enumerate(items) if isinstance(v, list)]
    raw = [i for i, (_, v) in enumerate(items) if isinstance(v, str)]
    parsed: list[Any] = [None] * len(items)
    for index, sentence in zip(given, compressor.parse([items[i][1] for i in given])):
        parsed[index] = sentence
    for index, sentence in zip(raw, compressor.parse_texts([items[i][1] for i in raw])):
        parsed[index] = sentence
    cut = compressor.settings.threshold if threshold is None else threshold
    probabilities = compressor.probabilities(parsed)
    records = []
    for (number, _), sentence, probs in zip(items, parsed, probabilities):
        labels = [int(p >= cut) for p in probs]
        records.append({"line": number, "tokens": list(sentence.tokens), "labels": labels,
                        "keep_probability": [round(float(p), 4) for p in probs],
                        "compression": "".join(t for t, k in zip(sentence.tokens, labels) if k)})
    written = write_jsonl_atomic(output_path, records)
    return {"sentences": written, "blank_lines": blank, "threshold": cut,
            "output": str(output_path)}
