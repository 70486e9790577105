"""Page-OCR benchmark: seconds per page, CER and header/footer removal on realistic screenshots.

Pages come from :mod:`devtools.screens` (seeded: the same pages every run): the bundled
story's text as phone (1080×2340, 1170×2532, 720×1600) and desktop (1920×1080, 1440×900)
e-reader screenshots in four faces, with status bars, running heads, several footer forms,
tinted and dark backgrounds and JPEG noise; ``--spreads``: two-page spreads instead (1920×1080,
2388×1668, 1440×900 readers showing two facing pages, each with its own head and folio, read
left page then right page). Every variant reads every page, page by page in
turn (interleaved, so that the load of the shared machine hits all variants alike), in one
process with one onnxruntime thread.

Variants (the page layout rules of :mod:`cppdb.ocr.page` are the same in all):

* ``rapidocr-default`` the engine path before this benchmark: rapidocr's own pipeline
                       (detection scaled to ≥ 736 px on the shorter side after capping the
                       longer at 2000, crops from that image, memory arena off);
* ``cppdb``            the defaults (``[ocr]`` ``page_det_side``, ``page_rec_pad``,
                       ``rec_batch``; see :mod:`cppdb.ocr.engines`);
* ``full-det``         ``cppdb`` with detection at full resolution (``page_det_side = 0``);
* ``no-pad``           ``cppdb`` without the margin around lines (``page_rec_pad = 0``);
* ``cppdb:KEY=V;...``  ``cppdb`` with other engine settings (``det_side``, ``rec_pad``,
                       ``rec_batch``), e.g. ``cppdb:rec_pad=0.25;det_side=800``.

CER = edit distance / reference characters over all pages, whitespace removed, punctuation
kept (and, second number, punctuation removed). ``leaks`` counts status-bar, head and
footer strings that reached the body text; ``read_as_spread`` the pages read as two facing
pages (all spreads, no single page).

Run: ``python -m bench.bench_ocr_pages [--pages 24] [--variants cppdb,rapidocr-default]``
(``--spreads --pages 6 --variants cppdb --workers ''`` for spreads).
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import record

VARIANTS = ("rapidocr-default", "cppdb", "full-det", "no-pad")
STORY = Path(__file__).resolve().parents[1] / "data" / "story"


def story_paragraphs() -> list[str]:
    return [line.strip() for path in sorted(STORY.glob("version_*/*.txt"))
            for line in path.read_text("utf-8").splitlines() if line.strip()]


def make_engine(variant: str):
    from cppdb.ocr.engines import RapidOCREngine

    if variant == "rapidocr-default":
        return _RapidOCRDefault()
    overrides: dict[str, float] = {"full-det": {"det_side": 0},
                                   "no-pad": {"rec_pad": 0.0}}.get(variant, {})
    if variant.startswith("cppdb:"):
        overrides = {key: float(value) for key, value in
                     (item.split("=") for item in variant[len("cppdb:"):].split(";"))}
    return RapidOCREngine(**overrides)


class _RapidOCRDefault:
    """rapidocr's whole pipeline with its own image handling (the code before the tuning)."""

    def __init__(self) -> None:
        from rapidocr import RapidOCR

        self._impl = RapidOCR(params={"Global.log_level": "error",
                                      "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                                      "EngineConfig.onnxruntime.inter_op_num_threads": 1})

    def read_lines(self, image):
        from cppdb.ocr.engines import _box
        from cppdb.ocr.types import OcrLine

        result = self._impl(image, use_cls=False)
        if getattr(result, "boxes", None) is None or not result.txts:
            return []
        return [OcrLine(text, _box(box), float(score))
                for box, text, score in zip(result.boxes, result.txts, result.scores)]


def _clean(text: str, punct: bool) -> str:
    import unicodedata

    return "".join(c for c in text if not c.isspace()
                   and (punct or unicodedata.category(c)[0] not in "PS"))


def measure(pages: list, variants: list[str]) -> dict[str, list[dict[str, Any]]]:
    from PIL import Image
    from rapidfuzz.distance import Levenshtein

    from cppdb.ocr.columns import find_gutter
    from cppdb.ocr.page import PageSettings, read_page_image

    engines = {v: make_engine(v) for v in variants}
    warm = Image.open(io.BytesIO(pages[0].data))
    for engine in engines.values():      # models load outside the timing
        read_page_image(engine, warm, PageSettings())
    rows: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    for page in pages:
        for variant, engine in engines.items():
            wall, cpu = time.perf_counter(), time.process_time()
            image = Image.open(io.BytesIO(page.data))    # decoding is part of the page's cost
            result = read_page_image(engine, image, PageSettings())
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            ref = page.body_text()
            leaks = [m for m in page.margins
                     if _clean(m, True) in _clean(result.text, True) and _clean(m, True) not in ref]
            # a spread's rows stay apart at the gutter; a single page's rows cross the middle
            read_as_spread = find_gutter([*result.lines, *result.removed], image.width,
                                         image.height, PageSettings().page_margin) is not None
            rows[variant].append({
                "device": page.device, "wall": wall, "cpu": cpu, "leaks": len(leaks),
                "read_as_spread": read_as_spread,
                **{f"err_{k}": Levenshtein.distance(_clean(ref, p), _clean(result.text, p))
                   for k, p in (("punct", True), ("nopunct", False))},
                **{f"len_{k}": len(_clean(ref, p))
                   for k, p in (("punct", True), ("nopunct", False))}})
    return rows


def summarise(variant: str, rows: list[dict[str, Any]], load: tuple[float, float],
              seed: int) -> dict:
    def stats(key: str, subset: list[dict[str, Any]]) -> dict[str, float]:
        values = np.array([r[key] for r in subset])
        return {"median": round(float(np.median(values)), 3),
                "p90": round(float(np.percentile(values, 90)), 3)} if len(values) else {}
    out: dict[str, Any] = {"variant": variant, "data": f"devtools.screens, seed {seed}",
                           "pages": len(rows), "threads": 1,
                           "load_before_after": [round(x, 2) for x in load]}
    for device in sorted({r["device"] for r in rows}):
        subset = [r for r in rows if r["device"] == device]
        out[device] = {"pages": len(subset), "wall_s": stats("wall", subset),
                       "cpu_s": stats("cpu", subset),
                       "read_as_spread": sum(r["read_as_spread"] for r in subset)}
    for kind in ("punct", "nopunct"):
        out[f"cer_{kind}"] = round(sum(r[f"err_{kind}"] for r in rows)
                                   / max(1, sum(r[f"len_{kind}"] for r in rows)), 5)
    out["leaks"] = sum(r["leaks"] for r in rows)
    out["pages_with_leaks"] = sum(r["leaks"] > 0 for r in rows)
    return record("ocr_pages", out)


def throughput(pages: list, workers: int) -> dict:
    """Whole `ocr_sources` on the phone pages written to a folder: pages per wall second."""
    import tempfile

    from cppdb.ocr.batch import OcrSettings, collect_images, ocr_sources

    folder = Path(tempfile.mkdtemp(prefix="cppdb-screens-"))
    phone = [p for p in pages if p.device == "phone"]
    if not phone:
        raise SystemExit("the throughput runs need phone pages (pass --workers '' with --spreads)")
    for page in phone:
        (folder / page.name).write_bytes(page.data)
    sources, _ = collect_images([folder])
    load = os.getloadavg()[0]
    started = time.perf_counter()
    results = ocr_sources(sources, OcrSettings(kind="page", workers=workers))
    seconds = time.perf_counter() - started
    return record("ocr_pages", {
        "variant": f"cppdb ocr_sources, workers={workers}", "pages": len(phone),
        "errors": sum(r.error is not None for r in results), "threads": 1,
        "seconds_per_page_incl_startup": round(seconds / len(phone), 3),
        "load_before_after": [round(load, 2), round(os.getloadavg()[0], 2)]})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--workers", default="1,2", help="throughput runs ('' = none)")
    parser.add_argument("--spreads", action="store_true",
                        help="two-page spreads instead of phone and desktop pages")
    args = parser.parse_args(argv)
    from devtools.screens import screenshots

    pages = screenshots(story_paragraphs(), args.pages, seed=args.seed,
                        devices=("spread",) if args.spreads else ("phone", "phone", "desktop"))
    variants = [v for v in args.variants.split(",") if v]
    load = os.getloadavg()[0]
    rows = measure(pages, variants)
    load_after = os.getloadavg()[0]
    for variant in variants:
        summarise(variant, rows[variant], (load, load_after), args.seed)
    for workers in filter(None, args.workers.split(",")):
        throughput(pages, int(workers))


if __name__ == "__main__":
    main(sys.argv[1:])
