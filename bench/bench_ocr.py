"""OCR benchmark: character error rate and seconds per image on real subtitle bitmaps.

Data: ``../shared/data/ocr-subtitle-images`` (100 real DVD subtitle cues, gray+alpha PNG,
``labels.tsv`` with reviewed text, ``<NL>`` joining lines). Without it (a fresh machine) the
benchmark renders its own outlined subtitle images from text and says so in every row.

Variants (same engine models, different handling of the image):

* ``raw``            rapidocr called on the file, default settings (it composites
                     transparency onto white itself: white letters become hollow outlines);
* ``det-light-pad``  our compositing onto white + 40 px padding, then detection + recognition;
* ``det-dark-pad``   composite the fill onto black, invert to dark-on-white, pad, det + rec;
* ``lines-nopad``    ours without margin: cut lines, recognise each line (2 px margin);
* ``lines-light``    ours, but composited onto white (hollow letters) — compositing ablation;
* ``cppdb``          the default pipeline (:mod:`cppdb.ocr.subtitle`).

CER = summed edit distance / summed reference length (counts first, ratios second), in three
forms: ignoring punctuation, symbols and whitespace (the acceptance metric); with
punctuation as is; with punctuation after folding glyph variants (⋯→…, 〝〞 and straight
quotes → one quote, NFKC).

Run: ``python -m bench.bench_ocr [--limit N] [--variants raw,cppdb]``
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.common import record, shared_data

VARIANTS = ("raw", "det-light-pad", "det-dark-pad", "lines-nopad", "lines-light", "cppdb")
_FOLD = str.maketrans({"⋯": "…", "〝": '"', "〞": '"', "“": '"', "”": '"', "＂": '"',
                       "‘": "'", "’": "'"})


def strip_text(text: str, mode: str) -> str:
    text = text.replace("<NL>", "")
    if mode == "folded":
        text = unicodedata.normalize("NFKC", text.translate(_FOLD))
    keep_punct = mode in ("punct", "folded")
    return "".join(c for c in text if not c.isspace()
                   and (keep_punct or unicodedata.category(c)[0] not in "PSZ"))


def load_cases(limit: int) -> tuple[list[tuple[Path, str]], str]:
    folder = shared_data("ocr-subtitle-images")
    if folder is not None:
        rows = [line.rstrip("\n").split("\t", 1)
                for line in (folder / "labels.tsv").read_text("utf-8").splitlines() if line]
        return [(folder / name, label) for name, label in rows[:limit]], \
            "ocr-subtitle-images (real DVD cues)"
    from cppdb.ocr.render import render_subtitle_image

    texts = ["在麦太即将临盆的时候", "一只胶兜在九龙上空飞过", "更正一下：", "转呀，转⋯",
             "希望他好聪明，读书好叻！", "于是她向胶兜补充说：", "又或者⋯",
             "我们今天去学校<NL>然后回家"]
    out = Path(tempfile.mkdtemp(prefix="cppdb-bench-ocr-"))
    cases = [(render_subtitle_image(t.replace("<NL>", "\n"), out / f"{i:04d}.png"), t)
             for i, t in enumerate(texts[:limit])]
    return cases, "generated outlined subtitle images (shared data absent)"


def _raw() -> Callable[[Path], str]:
    from rapidocr import RapidOCR

    engine = RapidOCR(params={"Global.log_level": "error"})

    def run(path: Path) -> str:
        result = engine(str(path))
        return "".join(result.txts or ()) if getattr(result, "txts", None) else ""
    return run


def _detect_padded(light: bool) -> Callable[[Path], str]:
    import cv2
    from PIL import Image

    from cppdb.ocr.engines import RapidOCREngine
    from cppdb.ocr.page import group_rows
    from cppdb.ocr.subtitle import _force_background, composite

    engine = RapidOCREngine()

    def run(path: Path) -> str:
        image = Image.open(path)
        gray, _ = _force_background(image, "light") if light else composite(image)
        padded = cv2.copyMakeBorder(np.clip(gray, 0, 255).astype(np.uint8), 40, 40, 40, 40,
                                    cv2.BORDER_CONSTANT, value=255)
        rows = group_rows(engine.read_lines(cv2.cvtColor(padded, cv2.COLOR_GRAY2BGR)))
        return "".join(r.text for r in rows)
    return run


def _lines(**overrides) -> Callable[[Path], str]:
    from PIL import Image

    from cppdb.config import load_config, resolve
    from cppdb.ocr.batch import OcrSettings
    from cppdb.ocr.engines import RapidOCREngine
    from cppdb.ocr.subtitle import read_subtitle_image

    settings = resolve(OcrSettings, load_config()).subtitle_settings()
    settings = replace(settings, **overrides)
    engine = RapidOCREngine()

    def run(path: Path) -> str:
        return read_subtitle_image(engine, Image.open(path), settings)[0]
    return run


def make_variant(name: str) -> Callable[[Path], str]:
    return {"raw": _raw, "det-light-pad": lambda: _detect_padded(True),
            "det-dark-pad": lambda: _detect_padded(False),
            "lines-nopad": lambda: _lines(subtitle_pad=0.0),
            "lines-light": lambda: _lines(subtitle_background="light"),
            "cppdb": _lines}[name]()


def evaluate(name: str, cases: list[tuple[Path, str]], data: str) -> dict:
    from rapidfuzz.distance import Levenshtein

    run = make_variant(name)
    run(cases[0][0])  # load the models outside the timing
    errors = {"nopunct": 0, "punct": 0, "folded": 0}
    lengths = dict.fromkeys(errors, 0)
    empty = exact = 0
    started = time.perf_counter()
    for path, label in cases:
        hypothesis = run(path)
        empty += not hypothesis.strip()
        for mode in errors:
            ref, hyp = strip_text(label, mode), strip_text(hypothesis, mode)
            errors[mode] += Levenshtein.distance(ref, hyp)
            lengths[mode] += len(ref)
        exact += strip_text(label, "punct") == strip_text(hypothesis, "punct")
    seconds = time.perf_counter() - started
    return record("ocr", {
        "variant": name, "data": data, "images": len(cases),
        "cer_no_punct": round(errors["nopunct"] / lengths["nopunct"], 4),
        "cer_punct": round(errors["punct"] / lengths["punct"], 4),
        "cer_punct_folded": round(errors["folded"] / lengths["folded"], 4),
        "empty_outputs": empty, "exact_cues": exact,
        "seconds_per_image": round(seconds / len(cases), 4),
        "threads": "onnxruntime default (all cores)" if name == "raw" else 1})


def bench_pages() -> None:
    """Page screenshots: see :mod:`bench.bench_ocr_pages` (realistic generated pages)."""
    from bench import bench_ocr_pages

    bench_ocr_pages.main([])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--no-pages", action="store_true")
    args = parser.parse_args(argv)
    cases, data = load_cases(args.limit)
    for name in filter(None, args.variants.split(",")):
        evaluate(name, cases, data)
    if not args.no_pages:
        bench_pages()


if __name__ == "__main__":
    main(sys.argv[1:])
