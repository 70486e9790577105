"""Image documents: a folder or zip archive of page screenshots or subtitle images → OCR.

Units are the OCR text of each image, in natural file-name order (``p2`` before ``p10``).
For pages, a paragraph cut by a page break is kept whole: when a page's text does not end
with sentence-final punctuation, its last paragraph is moved to the start of the next page's
unit (joined without a break). Images that cannot be decoded, or in which no text was
recognised, are skipped and listed in ``problems``; if no image yields text the document is
a :class:`BadInputError` that lists the first problems.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cppdb.errors import BadInputError
from cppdb.ocr.batch import OcrSettings, collect_images, ocr_sources
from cppdb.ocr.types import ImageText
from cppdb.progress import progress_bar
from cppdb.text.segment import CLOSERS, TERMINATORS, join_lines


@dataclass(frozen=True)
class ImagesContent:
    units: tuple[str, ...]
    kinds: tuple[str, ...]          # "page" / "subtitle" per unit
    sources: tuple[str, ...]        # image path (or archive!/member) per unit
    problems: tuple[tuple[str, str], ...]


def _ends_sentence(text: str) -> bool:
    text = text.rstrip()
    while text and text[-1] in CLOSERS:
        text = text[:-1]
    return bool(text) and text[-1] in TERMINATORS


def carry_broken_paragraphs(pages: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Move a page's unfinished last paragraph onto the next page (see module docstring).

    ``pages`` and the result are ``(text, source)`` pairs; a page left empty disappears.
    """
    out: list[tuple[str, str]] = []
    carry = ""
    for index, (text, source) in enumerate(pages):
        if carry:
            first, _, rest = text.partition("\n")
            text = join_lines([carry, first]) + ("\n" + rest if rest else "")
            carry = ""
        if index + 1 < len(pages) and not _ends_sentence(text):
            head, _, last = text.rpartition("\n")
            carry, text = last, head
        if text.strip():
            out.append((text, source))
    if carry:
        out.append((carry, pages[-1][1]))
    return out


def read_images(path: Path, settings: OcrSettings, *, recursive: bool = True) -> ImagesContent:
    """OCR the images of a folder or zip archive into units.

    ``recursive=False`` takes only the image files lying directly in the folder.
    """
    sources, problems = collect_images([path], recursive=recursive)
    if not sources:
        why = "; ".join(reason for _, reason in problems[:3])
        raise BadInputError(f"{path} contains no images" + (f" ({why})" if why else ""),
                            hint="expected .png/.jpg files or a .zip archive of them")
    with progress_bar(len(sources), f"OCR {path.name}") as advance:
        results = ocr_sources(sources, settings, progress=advance)
    usable: list[ImageText] = []
    found = list(problems)
    for result in results:
        if result.error:
            found.append((result.path, result.error))
        elif not result.text.strip():
            found.append((result.path, "no text recognised"))
        else:
            usable.append(result)
    if not usable:
        listed = "; ".join(f"{w}: {r}" for w, r in found[:3])
        raise BadInputError(f"no text could be read from the images in {path} ({listed})",
                            hint="check the images, or the OCR settings (`cppdb ocr` shows "
                                 "per-image results)")
    pages = [r for r in usable if r.kind == "page"]
    if len(pages) == len(usable):
        carried = carry_broken_paragraphs([(r.text, r.path) for r in usable])
        return ImagesContent(tuple(t for t, _ in carried), ("page",) * len(carried),
                             tuple(s for _, s in carried), tuple(found))
    return ImagesContent(tuple(r.text for r in usable), tuple(r.kind for r in usable),
                         tuple(r.path for r in usable), tuple(found))
