"""Subtitle images (one cue per image, often transparent, outlined, cut tight) → text.

Why not just run the engine: DVD/Blu-ray subtitle bitmaps are white text with a dark outline
on a transparent background, cropped so tightly that the text touches the image edge. Loaded
naively (transparent → white) the white fill vanishes and the letters become hollow outlines,
and the detector, which needs background around text, returns nothing for many cues.

What we do instead:

1. **Composite** onto a background that contrasts with the *fill* (the interior of the
   strokes, found by eroding the opaque mask), not with the outline: white fill → black
   background, so the outline melts into the background and clean glyphs remain. Opaque
   images are used as they are; their background colour is the median of the border.
2. **Normalise polarity** to dark text on a light background (what PP-OCR sees most).
3. **Cut lines** ourselves: rows containing ink form text lines; gaps of at least
   ``min_gap`` empty rows separate the lines of a multi-line cue; slivers (thin runs such as
   the lower stroke of 二 cut off by a gap) are merged into the nearest line.
4. **Pad and scale** every line: a margin of ``pad`` × line height on all sides (the
   recogniser, like the detector, expects background around the text), then scale to
   ``line_height`` pixels of text height.
5. **Recognise** the lines in one batch with the engine's recogniser (no detection).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from cppdb.defaults import toml_defaults
from cppdb.ocr.engines import OcrEngine
from cppdb.ocr.types import OcrLine, box_from_rect

_OCR = toml_defaults("ocr")

Background = Literal["auto", "dark", "light"]


@dataclass(frozen=True)
class SubtitleSettings:
    """The subtitle-image settings of ``[ocr]`` (fields = TOML keys)."""

    subtitle_background: Background = _OCR["subtitle_background"]
    subtitle_pad: float = _OCR["subtitle_pad"]
    subtitle_line_height: int = _OCR["subtitle_line_height"]
    subtitle_min_gap: int = _OCR["subtitle_min_gap"]
    min_confidence: float = _OCR["min_confidence"]
    # not a setting: a gap this many line heights wide separates two words of one line
    word_gap: ClassVar[float] = 1.0


def _erode(mask: np.ndarray, steps: int = 1) -> np.ndarray:
    out = mask.copy()
    for _ in range(steps):
        shrunk = out.copy()
        shrunk[1:, :] &= out[:-1, :]
        shrunk[:-1, :] &= out[1:, :]
        shrunk[:, 1:] &= out[:, :-1]
        shrunk[:, :-1] &= out[:, 1:]
        out = shrunk
    return out


def has_transparency(image) -> bool:
    """True if some pixel of the PIL ``image`` is (partly) transparent.

    Screenshots are often saved as RGBA with every pixel opaque: those are not subtitles.
    """
    if image.mode == "P" and "transparency" in image.info:
        return True
    if image.mode not in ("LA", "RGBA", "PA"):
        return False
    low, _high = image.getchannel("A").getextrema()
    return low < 250


def composite(image) -> tuple[np.ndarray, np.ndarray]:
    """Gray image as dark ink on a white background, and the boolean ink mask.

    ``image`` is a PIL image in any mode.
    """
    if has_transparency(image):
        la = np.asarray(image.convert("LA"), dtype=np.float32)
        gray, alpha = la[..., 0], la[..., 1] / 255.0
        opaque = alpha > 0.5
        fill = _erode(opaque, 2)
        fill = fill if fill.sum() >= 0.02 * max(opaque.sum(), 1) else opaque
        fill_is_light = bool(opaque.any()) and float(gray[fill].mean()) >= 128
        background = 0.0 if fill_is_light else 255.0
        flat = gray * alpha + background * (1 - alpha)
        dark_on_light = 255.0 - flat if fill_is_light else flat
        return dark_on_light, dark_on_light < 128
    gray = np.asarray(image.convert("L"), dtype=np.float32)
    border = np.concatenate([gray[0], gray[-1], gray[:, 0], gray[:, -1]])
    background = float(np.median(border))
    if background < 128:
        gray, background = 255.0 - gray, 255.0 - background
    return gray, np.abs(gray - background) > 60


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def _merge_runs(runs: list[tuple[int, int]], min_gap: int) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, stop in runs:
        if merged and start - merged[-1][1] < min_gap:
            merged[-1] = (merged[-1][0], stop)
        else:
            merged.append((start, stop))
    if not merged:
        return merged
    tallest = max(b - a for a, b in merged)
    # a sliver (e.g. the top stroke of 二 cut off by a gap) joins its nearer neighbour
    while len(merged) > 1:
        slivers = [i for i, (a, b) in enumerate(merged) if b - a < 0.35 * tallest]
        if not slivers:
            break
        i = slivers[0]
        gap_before = merged[i][0] - merged[i - 1][1] if i > 0 else None
        gap_after = merged[i + 1][0] - merged[i][1] if i + 1 < len(merged) else None
        j = i + 1 if gap_before is None or (gap_after is not None and gap_after < gap_before) \
            else i - 1
        low, high = min(i, j), max(i, j)
        merged[low:high + 1] = [(merged[low][0], merged[high][1])]
    return merged


def _segments(ink_columns: np.ndarray, height: int, min_gap: float) -> list[tuple[int, int]]:
    """Column ranges of one line, split where the empty gap is at least ``min_gap``."""
    runs = _runs(ink_columns)
    segments: list[tuple[int, int]] = []
    for start, stop in runs:
        if segments and start - segments[-1][1] < min_gap * height:
            segments[-1] = (segments[-1][0], stop)
        else:
            segments.append((start, stop))
    return segments


def find_lines(ink: np.ndarray, min_gap: int = 3, word_gap: float = 1.0,
               ) -> list[list[tuple[int, int, int, int]]]:
    """Text lines of a cue, top to bottom; each a list of (top, bottom, left, right) pieces.

    A line is cut into pieces where an empty gap is at least ``word_gap`` × its height
    (subtitles separate two utterances on one line by wide spaces; the pieces are read
    separately and joined with a space).
    """
    if not ink.any():
        return []
    row_ink = ink.sum(axis=1) >= max(1, int(0.002 * ink.shape[1]))
    lines = []
    for top, bottom in _merge_runs(_runs(row_ink), min_gap):
        columns = ink[top:bottom].any(axis=0)
        lines.append([(top, bottom, left, right)
                      for left, right in _segments(columns, bottom - top, word_gap)])
    return lines


def line_crop(gray: np.ndarray, line: tuple[int, int, int, int], pad: float,
              line_height: int) -> np.ndarray:
    """Cut one line out, pad it with white and scale it; returns a BGR uint8 image."""
    import cv2

    top, bottom, left, right = line
    crop = gray[top:bottom, left:right]
    scale = line_height / max(bottom - top, 1)
    if abs(scale - 1) > 0.05:
        interpolation = cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA
        crop = cv2.resize(crop, (max(1, round(crop.shape[1] * scale)), line_height),
                          interpolation=interpolation)
    margin = max(2, round(pad * line_height))
    crop = cv2.copyMakeBorder(np.clip(crop, 0, 255).astype(np.uint8), margin, margin, margin,
                              margin, cv2.BORDER_CONSTANT, value=255)
    return cv2.cvtColor(crop, cv2.COLOR_GRAY2BGR)


def read_subtitle_image(engine: OcrEngine, image, settings: SubtitleSettings,
                        ) -> tuple[str, list[OcrLine], list[OcrLine]]:
    """Text of one cue image (lines joined by ``\\n``), its pieces, and dropped pieces.

    Pieces recognised with a confidence below ``settings.min_confidence`` are dropped
    (returned separately so that callers can report them).
    """
    if settings.subtitle_background in ("dark", "light"):
        gray, ink = _force_background(image, settings.subtitle_background)
    else:
        gray, ink = composite(image)
    lines = find_lines(ink, settings.subtitle_min_gap, settings.word_gap)
    pieces = [piece for line in lines for piece in line]
    crops = [line_crop(gray, piece, settings.subtitle_pad, settings.subtitle_line_height)
             for piece in pieces]
    results = iter(engine.recognize(crops))
    kept: list[OcrLine] = []
    dropped: list[OcrLine] = []
    texts: list[str] = []
    for line in lines:
        words: list[str] = []
        for top, bottom, left, right in line:
            text, score = next(results)
            piece = OcrLine(text.strip(), box_from_rect(left, top, right, bottom), score)
            if not piece.text:
                continue
            if score < settings.min_confidence:
                dropped.append(piece)
                continue
            kept.append(piece)
            words.append(piece.text)
        if words:
            texts.append(" ".join(words))
    return "\n".join(texts), kept, dropped


def _force_background(image, background: str) -> tuple[np.ndarray, np.ndarray]:
    """Composite onto a fixed background (settings.subtitle_background = dark | light)."""
    la = np.asarray(image.convert("LA"), dtype=np.float32)
    gray, alpha = la[..., 0], la[..., 1] / 255.0
    value = 0.0 if background == "dark" else 255.0
    flat = gray * alpha + value * (1 - alpha)
    out = 255.0 - flat if background == "dark" else flat
    return out, out < 128
