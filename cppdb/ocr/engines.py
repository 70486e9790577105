"""OCR engines (registry capability "ocr"): detection + recognition of text lines.

Every engine offers two batch operations on BGR ``uint8`` images (OpenCV layout):

* :meth:`OcrEngine.read_lines` — detect text lines in a whole image and recognise them;
* :meth:`OcrEngine.recognize` — recognise images that each hold exactly one text line
  (used for subtitle lines we cut out ourselves: detection is the fragile step there).

``rapidocr`` is the offline default: PP-OCR ONNX models shipped inside the wheel, run by
onnxruntime. Its page path is tuned for screenshots (measured in ``docs/benchmarks/ocr.md``):
detection runs on the page scaled down to ``det_side`` pixels on the longer side (text on
screenshots is large; rapidocr's own pipeline detects at up to 2000 px on the longer and at
least 736 px on the shorter side), lines are then cut from the full-resolution image (not
from the detector's smaller copy), given a vertical margin
of ``rec_pad`` × their height (the recogniser's input is 48 px high and as wide as the line
scaled to that height: smaller text in it means fewer columns to compute) and recognised in
batches of ``rec_batch`` (1 by default: fastest on CPU, and a line's text then cannot
depend on the width of the lines batched with it); the angle classifier is off (pages are upright) and onnxruntime
keeps its memory arena between runs (rapidocr turns it off, which costs ~20 %).

``paddle`` adapts PaddleOCR for users who have it *and* its inference models on disk
(we never download): a missing package or model directory is a clear error.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cppdb.defaults import toml_defaults
from cppdb.errors import BackendUnavailableError, ModelNotFoundError
from cppdb.ocr.types import Box, OcrLine
from cppdb.registry import Backend, load_backend

_OCR = toml_defaults("ocr")


def _box(points: Any) -> Box:
    corners = [(float(x), float(y)) for x, y in np.asarray(points).reshape(-1, 2)[:4]]
    return (corners[0], corners[1], corners[2], corners[3])


#: defaults of the rapidocr page path (see the module docstring; ``[ocr]`` settings)
DET_SIDE, REC_PAD, REC_BATCH = _OCR["page_det_side"], _OCR["page_rec_pad"], _OCR["rec_batch"]
MIN_SHORT_SIDE = 64


def scale_down(image: np.ndarray, longest: int) -> tuple[np.ndarray, float]:
    """``image`` shrunk (area-averaged) so its longer side is at most ``longest`` (0 = as is),
    and the factor applied. The shorter side is never shrunk below ``MIN_SHORT_SIDE``: a
    thin strip stays as it is (and the engine says if it cannot take it) instead of
    becoming a few pixels the detector silently finds nothing in."""
    import cv2

    height, width = image.shape[:2]
    scale = longest / max(height, width) if longest else 1.0
    scale = max(scale, min(1.0, MIN_SHORT_SIDE / max(1, min(height, width))))
    if scale >= 1.0:
        return image, 1.0
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA), scale


def line_crop(image: np.ndarray, quad: np.ndarray, pad: float) -> np.ndarray:
    """The text line inside ``quad`` (4 corners, clockwise from top-left) straightened, with a
    margin of ``pad`` × its height above and below (edge pixels repeated)."""
    import cv2

    width = int(max(np.linalg.norm(quad[0] - quad[1]), np.linalg.norm(quad[3] - quad[2])))
    height = int(max(np.linalg.norm(quad[0] - quad[3]), np.linalg.norm(quad[1] - quad[2])))
    width, height = max(width, 1), max(height, 1)
    target = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    crop = cv2.warpPerspective(image, cv2.getPerspectiveTransform(quad.astype(np.float32), target),
                               (width, height), flags=cv2.INTER_CUBIC,
                               borderMode=cv2.BORDER_REPLICATE)
    margin = int(round(pad * height))
    return cv2.copyMakeBorder(crop, margin, margin, 0, 0, cv2.BORDER_REPLICATE) if margin else crop


class OcrEngine(Backend):
    """Protocol of the OCR engines (see the module docstring)."""

    def read_lines(self, image: np.ndarray) -> list[OcrLine]:
        raise NotImplementedError

    def recognize(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        raise NotImplementedError


class RapidOCREngine(OcrEngine):
    """PP-OCR (det + rec) through rapidocr/onnxruntime; models come with the wheel."""

    name: ClassVar[str] = "rapidocr"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (
        ("rapidocr", "rapidocr"), ("onnxruntime", "onnxruntime"))
    install_hint: ClassVar[str] = "pip install rapidocr onnxruntime"
    description: ClassVar[str] = "PP-OCR ONNX models in the rapidocr wheel (offline default)"

    def __init__(self, threads: int = _OCR["threads"], det_side: int = DET_SIDE,
                 rec_pad: float = REC_PAD, rec_batch: int = REC_BATCH,
                 **_ignored: Any) -> None:
        self.threads = int(threads)
        self.det_side, self.rec_pad, self.rec_batch = int(det_side), float(rec_pad), int(rec_batch)
        self._impl: Any = None

    def _engine(self) -> Any:
        if self._impl is None:
            self.check()
            from rapidocr import RapidOCR

            params: dict[str, Any] = {
                "Global.log_level": "error",
                "EngineConfig.onnxruntime.intra_op_num_threads": self.threads,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
                "EngineConfig.onnxruntime.enable_cpu_mem_arena": True,
                "Rec.rec_batch_num": self.rec_batch,
            }
            if self.det_side:   # we scale down ourselves; rapidocr must not scale back up
                params |= {"Det.limit_type": "max", "Det.limit_side_len": self.det_side}
            self._impl = RapidOCR(params=params)
        return self._impl

    def read_lines(self, image: np.ndarray) -> list[OcrLine]:
        small, scale = scale_down(image, self.det_side)
        found = self._engine()(small, use_cls=False, use_rec=False)
        boxes = getattr(found, "boxes", None)
        if boxes is None or len(boxes) == 0:
            return []
        quads = [np.asarray(box, np.float32).reshape(4, 2) / scale for box in boxes]
        texts = self.recognize([line_crop(image, quad, self.rec_pad) for quad in quads])
        return [OcrLine(text, _box(quad), score)
                for quad, (text, score) in zip(quads, texts) if text.strip()]

    def recognize(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        if not crops:
            return []
        result = self._engine().recognize_txt(list(crops))
        return [(text, float(score)) for text, score in zip(result.txts, result.scores)]

    def signature(self) -> str:
        return f"{self.name}:{self._models()}[{self.version()}]"

    def _models(self) -> str:
        spec = importlib.util.find_spec("rapidocr")
        if spec is None or spec.origin is None:
            return "?"
        models = sorted(p.stem for p in (Path(spec.origin).parent / "models").glob("*.onnx"))
        return "+".join(models) or "?"


class PaddleOCREngine(OcrEngine):
    """PaddleOCR with inference models from ``model_dir`` (``det/`` and ``rec/`` inside)."""

    name: ClassVar[str] = "paddle"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (
        ("paddleocr", "paddleocr"), ("paddlepaddle", "paddle"))
    install_hint: ClassVar[str] = "pip install paddleocr paddlepaddle (the cppdb 'paddle' extra)"
    description: ClassVar[str] = "PaddleOCR (the paper's engine) with local inference models"

    def __init__(self, model_dir: str | Path = "", **_ignored: Any) -> None:
        self.model_dir = Path(model_dir).expanduser() if str(model_dir) else None
        self._impl: Any = None

    def check(self) -> None:
        super().check()
        expected = "<model_dir>/det and <model_dir>/rec (PaddleOCR inference models)"
        if self.model_dir is None:
            raise ModelNotFoundError(
                "the paddle OCR engine needs local models; none configured",
                hint=f"set ocr.paddle_model_dir to a directory with {expected} "
                     "(cppdb never downloads models)")
        for part in ("det", "rec"):
            if not (self.model_dir / part).is_dir():
                raise ModelNotFoundError(
                    f"PaddleOCR model directory {self.model_dir / part} does not exist",
                    hint=f"put the models at {expected}; download them once with PaddleOCR "
                         "on a machine with internet access and copy them here")

    def _engine(self) -> Any:
        if self._impl is None:
            self.check()
            try:
                from paddleocr import PaddleOCR
            except ImportError as exc:
                raise BackendUnavailableError(f"cannot import paddleocr: {exc}",
                                              hint=self.install_hint) from exc
            det, rec = str(self.model_dir / "det"), str(self.model_dir / "rec")
            major = int(importlib.metadata.version("paddleocr").split(".")[0])
            if major >= 3:
                self._impl = PaddleOCR(text_detection_model_dir=det,
                                       text_recognition_model_dir=rec,
                                       use_doc_orientation_classify=False,
                                       use_doc_unwarping=False, use_textline_orientation=False)
            else:
                self._impl = PaddleOCR(det_model_dir=det, rec_model_dir=rec, use_angle_cls=False,
                                       lang="ch", show_log=False)
            self._major = major
        return self._impl

    def read_lines(self, image: np.ndarray) -> list[OcrLine]:
        engine = self._engine()
        if self._major >= 3:
            lines: list[OcrLine] = []
            for page in engine.predict(image):
                for poly, text, score in zip(page["rec_polys"], page["rec_texts"],
                                             page["rec_scores"]):
                    lines.append(OcrLine(text, _box(poly), float(score)))
            return lines
        result = engine.ocr(image, cls=False)
        page = result[0] if result else None
        return [OcrLine(text, _box(poly), float(score)) for poly, (text, score) in page or []]

    def recognize(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        engine = self._engine()
        out: list[tuple[str, float]] = []
        for crop in crops:
            if self._major >= 3:
                found = self.read_lines(crop)
                out.append(("".join(line.text for line in found),
                            min((line.confidence for line in found), default=0.0)))
            else:
                result = engine.ocr(crop, det=False, cls=False)
                text, score = result[0][0] if result and result[0] else ("", 0.0)
                out.append((text, float(score)))
        return out

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "model_dir": str(self.model_dir or "")}


def load_engine(name: str, *, threads: int = _OCR["threads"],
                paddle_model_dir: str = _OCR["paddle_model_dir"],
                det_side: int = DET_SIDE, rec_pad: float = REC_PAD,
                rec_batch: int = REC_BATCH) -> OcrEngine:
    """The configured engine, checked (clear error if it cannot run here)."""
    engine = load_backend("ocr", name, threads=threads, model_dir=paddle_model_dir,
                          det_side=det_side, rec_pad=rec_pad, rec_batch=rec_batch)
    if not isinstance(engine, OcrEngine):  # pragma: no cover - registry misconfiguration
        raise TypeError(f"ocr backend {name} is not an OcrEngine")
    return engine
