"""Batches of images: collect them from files, folders and zip archives; OCR in parallel.

A corrupt image, zip member or archive never stops a batch: it becomes an
:class:`~cppdb.ocr.types.ImageText` with ``error`` set (or a ``problems`` entry for a whole
archive that cannot be opened), and every other image is still processed.
"""
from __future__ import annotations

import io
import re
import sys
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from cppdb.config import Config, resolve, settings_from
from cppdb.defaults import toml_defaults
from cppdb.engine.pools import process_pool
from cppdb.errors import BadInputError, ConfigError, CppdbError
from cppdb.io import write_jsonl_atomic
from cppdb.ocr.engines import DET_SIDE, OcrEngine, load_engine
from cppdb.ocr.page import PageSettings, read_page_image, remove_running_heads
from cppdb.ocr.subtitle import SubtitleSettings, has_transparency, read_subtitle_image
from cppdb.ocr.types import ImageText
from cppdb.progress import progress_bar
from cppdb.workers import resolve_workers

_OCR = toml_defaults("ocr")

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff", ".gif"})
KINDS = ("auto", "page", "subtitle")


def natural_key(name: str) -> list[Any]:
    """Sort ``page-2`` before ``page-10``."""
    return [int(part) if part.isdecimal() else part.lower() for part in re.split(r"(\d+)", name)]


@dataclass(frozen=True)
class ImageSource:
    """One image: a file, or a member of a zip archive (``archive.zip!/dir/001.png``)."""

    path: Path
    member: str | None = None

    @property
    def name(self) -> str:
        return f"{self.path}!/{self.member}" if self.member else str(self.path)

    @property
    def container(self) -> str:
        """The folder or archive the image came from (pages of one document)."""
        return str(self.path) if self.member else str(self.path.parent)

    def read_bytes(self) -> bytes:
        if self.member is None:
            return self.path.read_bytes()
        with zipfile.ZipFile(self.path) as archive, archive.open(self.member) as member:
            data = member.read(MAX_MEMBER_BYTES + 1)   # streamed: never more than the limit
        if len(data) > MAX_MEMBER_BYTES:
            raise OSError(f"archive member is larger than {MAX_MEMBER_BYTES >> 20} MB "
                          "(skipped; extract it if it really is one image)")
        return data


MAX_MEMBER_BYTES = 64 << 20      # an image inside a zip larger than this is skipped, not read
MIN_DET_SIDE = 320               # detection below this many pixels loses ordinary text


@dataclass(frozen=True)
class OcrSettings:
    """The ``[ocr]`` section (fields = TOML keys, see ``cppdb/defaults/ocr.toml``); the
    subtitle and page readers take their views of it (:meth:`subtitle_settings`,
    :meth:`page_settings`).  Building one checks the values only OCR can judge."""

    SECTION: ClassVar[str] = "ocr"

    engine: str = _OCR["engine"]
    paddle_model_dir: str = _OCR["paddle_model_dir"]
    kind: str = _OCR["kind"]
    workers: int = _OCR["workers"]
    max_workers: int = _OCR["max_workers"]
    threads: int = _OCR["threads"]
    rec_batch: int = _OCR["rec_batch"]
    min_confidence: float = _OCR["min_confidence"]
    subtitle_background: str = _OCR["subtitle_background"]
    subtitle_pad: float = _OCR["subtitle_pad"]
    subtitle_line_height: int = _OCR["subtitle_line_height"]
    subtitle_min_gap: int = _OCR["subtitle_min_gap"]
    page_margin: float = _OCR["page_margin"]
    page_repeat_share: float = _OCR["page_repeat_share"]
    page_det_side: int = _OCR["page_det_side"]
    page_rec_pad: float = _OCR["page_rec_pad"]

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"unknown ocr.kind '{self.kind}'",
                              hint=f"choose one of: {', '.join(KINDS)}")
        if self.subtitle_background not in ("auto", "dark", "light"):
            raise ConfigError(f"unknown ocr.subtitle_background "
                              f"'{self.subtitle_background}'", hint="auto, dark or light")
        if 0 < self.page_det_side < MIN_DET_SIDE:
            raise ConfigError(f"ocr.page_det_side = {self.page_det_side} is too small to find "
                              "text in", hint=f"use 0 (full resolution) or at least "
                                              f"{MIN_DET_SIDE}; the default is {DET_SIDE}")

    def subtitle_settings(self) -> SubtitleSettings:
        return settings_from(SubtitleSettings, self)

    def page_settings(self) -> PageSettings:
        return settings_from(PageSettings, self)

    def engine_key(self) -> tuple[str, int, str, int, float, int]:
        """What the engine is built from (one engine per process and key)."""
        return (self.engine, self.threads, self.paddle_model_dir, self.page_det_side,
                self.page_rec_pad, self.rec_batch)

    def resolved_workers(self, n_images: int) -> int:
        workers = resolve_workers(self.workers, "ocr.workers", all_cores_cap=self.max_workers)
        return max(1, min(workers, n_images))


def _zip_members(path: Path) -> tuple[list[ImageSource], list[tuple[str, str]]]:
    try:
        with zipfile.ZipFile(path) as archive:
            names = [info.filename for info in archive.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, OSError) as exc:
        return [], [(str(path), f"not a readable zip archive: {exc}")]
    images = sorted((n for n in names if Path(n).suffix.lower() in IMAGE_SUFFIXES
                     and not Path(n).name.startswith(".") and "__MACOSX" not in n),
                    key=natural_key)
    if not images:
        return [], [(str(path), "zip archive contains no images")]
    return [ImageSource(path, member) for member in images], []


def collect_images(inputs: Sequence[str | Path], *, recursive: bool = True,
                   ) -> tuple[list[ImageSource], list[tuple[str, str]]]:
    """Image sources of files, folders (recursively) and zip archives, naturally sorted.

    Returns the sources and the ``(where, reason)`` problems: unreadable archives, files
    that are not images. A path that does not exist is a :class:`BadInputError`.
    ``recursive=False``: only the image files lying directly in a folder (nothing else).
    """
    sources: list[ImageSource] = []
    problems: list[tuple[str, str]] = []
    for raw in inputs:
        path = Path(raw)
        if not path.exists():
            raise BadInputError(f"{path} does not exist", hint="check the path")
        if path.is_dir() and not recursive:
            sources.extend(ImageSource(p) for p in sorted(path.iterdir(),
                                                          key=lambda p: natural_key(p.name))
                           if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
                           and not p.name.startswith("."))
            continue
        files = sorted((p for p in path.rglob("*") if p.is_file()),
                       key=lambda p: natural_key(str(p))) if path.is_dir() else [path]
        for file in files:
            if file.name.startswith("."):
                continue
            if file.suffix.lower() == ".zip":
                found, trouble = _zip_members(file)
                sources.extend(found)
                problems.extend(trouble)
            elif file.suffix.lower() in IMAGE_SUFFIXES:
                sources.append(ImageSource(file))
            else:
                problems.append((str(file), "not an image or zip archive (skipped)"))
    return sources, problems


@lru_cache(maxsize=4)
def _engine(key: tuple[str, int, str, int, float, int]) -> OcrEngine:
    """One engine per process and configuration (models load once, not per image)."""
    name, threads, paddle_model_dir, det_side, rec_pad, rec_batch = key
    return load_engine(name, threads=threads, paddle_model_dir=paddle_model_dir,
                       det_side=det_side, rec_pad=rec_pad, rec_batch=rec_batch)


def image_kind(image, requested: str) -> str:
    """``subtitle`` for transparent or very wide images when ``requested`` is auto."""
    if requested != "auto":
        return requested
    wide = image.width >= 4 * image.height
    return "subtitle" if wide or has_transparency(image) else "page"


def ocr_image_bytes(name: str, data: bytes, settings: OcrSettings) -> ImageText:
    """OCR one encoded image; a corrupt image gives a record with ``error`` set."""
    from PIL import Image, UnidentifiedImageError

    started = time.perf_counter()
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except UnidentifiedImageError:
        reason = f"not a recognised image format ({len(data)} bytes; corrupt or not an image)"
        return ImageText(path=name, kind="unknown", text="", lines=(),
                         error=f"cannot decode image: {reason}",
                         seconds=time.perf_counter() - started)
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        return ImageText(path=name, kind="unknown", text="", lines=(),
                         error=f"cannot decode image (truncated or corrupt): {exc}",
                         seconds=time.perf_counter() - started)
    kind = image_kind(image, settings.kind)
    engine = _engine(settings.engine_key())
    try:
        if kind == "subtitle":
            text, kept, dropped = read_subtitle_image(engine, image, settings.subtitle_settings())
            result = ImageText(path=name, kind=kind, text=text, lines=tuple(kept),
                               removed=tuple(dropped))
        else:
            result = read_page_image(engine, image, settings.page_settings(), path=name)
    except CppdbError:
        raise
    except Exception as exc:  # noqa: BLE001 - a third-party engine failing on one image
        # (e.g. rapidocr's ResizeImgError on a 50x20000 strip) must not stop the batch
        return ImageText(path=name, kind=kind, text="", lines=(),
                         error=f"OCR engine failed on this {image.width}x{image.height} image: "
                               f"{type(exc).__name__}: {exc}",
                         seconds=time.perf_counter() - started, width=image.width,
                         height=image.height)
    return replace(result, seconds=time.perf_counter() - started, width=image.width,
                   height=image.height)


def _read_or_error(source: ImageSource) -> tuple[bytes | None, str | None]:
    try:
        return source.read_bytes(), None
    except (OSError, zipfile.BadZipFile, KeyError) as exc:
        return None, f"cannot read: {type(exc).__name__}: {exc}"


def _ocr_source_serial(source: ImageSource, settings: OcrSettings) -> ImageText:
    data, error = _read_or_error(source)
    if data is None:
        return ImageText(path=source.name, kind="unknown", text="", lines=(), error=error)
    return ocr_image_bytes(source.name, data, settings)


def _iter_results(sources: Sequence[ImageSource], settings: OcrSettings,
                  workers: int) -> Iterator[ImageText]:
    """Results in input order; at most ``4 * workers`` images in flight."""
    with process_pool(workers, start_method=_start_method(),
                      initializer=_engine.cache_clear) as pool:
        pending: list[tuple[ImageSource, Future[ImageText] | ImageText]] = []
        for source in sources:
            data, error = _read_or_error(source)
            item: Future[ImageText] | ImageText = (
                pool.submit(ocr_image_bytes, source.name, data, settings) if data is not None
                else ImageText(path=source.name, kind="unknown", text="", lines=(), error=error))
            pending.append((source, item))
            while len(pending) >= 4 * workers:
                yield _resolve(pending.pop(0)[1])
        for _, item in pending:
            yield _resolve(item)


def _start_method() -> str:
    """``fork`` on Linux, ``spawn`` elsewhere.

    ``spawn`` re-imports the caller's ``__main__``, which breaks for code run from stdin and
    re-runs scripts without a ``__main__`` guard. Forking is safe here because every worker
    starts with an empty engine cache (``initializer``) and so builds its own onnxruntime
    sessions instead of using ones inherited from the parent.
    """
    return "fork" if sys.platform.startswith("linux") else "spawn"


def _resolve(item: Future[ImageText] | ImageText) -> ImageText:
    return item.result() if isinstance(item, Future) else item


def ocr_sources(sources: Sequence[ImageSource], settings: OcrSettings, *,
                progress: Callable[[int], None] | None = None) -> list[ImageText]:
    """OCR every source (in parallel when worthwhile); results keep the input order.

    Page images of one folder/archive then lose their repeated running heads.
    """
    if not sources:
        return []
    _engine(settings.engine_key())  # fail early
    workers = settings.resolved_workers(len(sources))
    iterator = (iter(_ocr_source_serial(s, settings) for s in sources) if workers == 1
                else _iter_results(sources, settings, workers))
    results: list[ImageText] = []
    for result in iterator:
        results.append(result)
        if progress:
            progress(1)
    return _without_running_heads(sources, results, settings)


def _without_running_heads(sources: Sequence[ImageSource], results: list[ImageText],
                           settings: OcrSettings) -> list[ImageText]:
    groups: dict[str, list[int]] = {}
    for index, (source, result) in enumerate(zip(sources, results)):
        if result.kind == "page" and result.error is None:
            groups.setdefault(source.container, []).append(index)
    for indices in groups.values():
        pages = [results[i] for i in indices]
        cleaned = remove_running_heads(pages, [p.height for p in pages],
                                       settings.page_settings())
        for i, page in zip(indices, cleaned):
            results[i] = page
    return results


@dataclass(frozen=True)
class OcrSummary:
    """What `cppdb ocr` did: counts, time, and the records that carry an error."""

    output: Path
    images: int
    with_text: int
    empty: int
    errors: tuple[tuple[str, str], ...]
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"output": str(self.output), "images": self.images, "with_text": self.with_text,
                "empty": self.empty, "errors": [list(e) for e in self.errors],
                "seconds": round(self.seconds, 3),
                "seconds_per_image": round(self.seconds / max(self.images, 1), 4)}


def ocr_to_jsonl(inputs: Sequence[str | Path], output: str | Path, settings: OcrSettings, *,
                 progress: Callable[[int], None] | None = None) -> OcrSummary:
    """OCR images/folders/zip archives into a JSONL file, one record per image.

    Unreadable archives and non-image files get a record too (``kind: "unknown"`` with
    ``error`` set), so nothing is silently dropped. The file is written atomically.
    """
    started = time.perf_counter()
    sources, problems = collect_images(inputs)
    if not sources and not problems:
        raise BadInputError(f"no images found in {', '.join(map(str, inputs))}",
                            hint="pass .png/.jpg files, folders or .zip archives of them")
    results = ocr_sources(sources, settings, progress=progress)
    records = [r.to_json() for r in results] + [
        ImageText(path=where, kind="unknown", text="", lines=(), error=reason).to_json()
        for where, reason in problems]
    write_jsonl_atomic(output, records)
    errors = tuple((r.path, r.error) for r in results if r.error) + tuple(problems)
    return OcrSummary(Path(output), len(results),
                      sum(1 for r in results if r.text.strip()),
                      sum(1 for r in results if not r.error and not r.text.strip()),
                      errors, time.perf_counter() - started)


def run_ocr(inputs: Sequence[str | Path], output: str | Path, config: Config, *,
            kind: str | None = None, engine: str | None = None,
            workers: int | None = None) -> OcrSummary:
    """`cppdb ocr`: the ``[ocr]`` settings with the given arguments applied, a progress bar,
    and an error if no image at all could be read (a few bad ones are only recorded)."""
    chosen = {"kind": kind, "engine": engine, "workers": workers}
    config = config.with_overrides({f"ocr.{key}": value for key, value in chosen.items()
                                    if value is not None})
    settings = resolve(OcrSettings, config)
    with progress_bar(len(collect_images(inputs)[0]), "OCR") as advance:
        summary = ocr_to_jsonl(inputs, output, settings, progress=advance)
    if summary.with_text == 0 and summary.errors:
        where, reason = summary.errors[0]
        raise BadInputError(
            f"no image could be read ({len(summary.errors)} errors, first: {where}: {reason}); "
            f"records in {output}",
            hint="check the files; every record in the output says what went wrong")
    return summary
