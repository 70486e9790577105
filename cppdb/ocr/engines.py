"""OCR engines (registry capability "ocr"): detection + recognition of text lines.

Every engine offers two batch operations on BGR ``uint8`` images (OpenCV layout):

* :meth:`OcrEngine.read_lines` — detect text lines in a whole image and recognise them;
* :meth:`OcrEngine.recognize` — recognise images that each hold exactly one text line
  (used for subtitle lines we cut out ourselves: detection is the fragile step there).

``rapidocr`` is the offline default: PP-OCR ONNX models shipped inside the wheel, run by
onnxruntime. ``paddle`` adapts PaddleOCR for users who have it *and* its inference models on
disk (we never download): a missing package or model directory is a clear error.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cppdb.errors import BackendUnavailableError, ModelNotFoundError
from cppdb.ocr.types import Box, OcrLine
from cppdb.registry import Backend


def _box(points: Any) -> Box:
    corners = [(float(x), float(y)) for x, y in np.asarray(points).reshape(-1, 2)[:4]]
    return (corners[0], corners[1], corners[2], corners[3])


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

    def __init__(self, threads: int = 1, **_ignored: Any) -> None:
        self.threads = int(threads)
        self._impl: Any = None

    def _engine(self) -> Any:
        if self._impl is None:
            self.check()
            from rapidocr import RapidOCR

            self._impl = RapidOCR(params={
                "Global.log_level": "error",
                "EngineConfig.onnxruntime.intra_op_num_threads": self.threads,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            })
        return self._impl

    def read_lines(self, image: np.ndarray) -> list[OcrLine]:
        result = self._engine()(image, use_cls=False)
        if getattr(result, "boxes", None) is None or not result.txts:
            return []
        return [OcrLine(text, _box(box), float(score))
                for box, text, score in zip(result.boxes, result.txts, result.scores)]

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


def load_engine(name: str, *, threads: int = 1, paddle_model_dir: str = "") -> OcrEngine:
    """The configured engine, checked (clear error if it cannot run here)."""
    from cppdb.registry import load_backend

    engine = load_backend("ocr", name, threads=threads, model_dir=paddle_model_dir)
    if not isinstance(engine, OcrEngine):  # pragma: no cover - registry misconfiguration
        raise TypeError(f"ocr backend {name} is not an OcrEngine")
    return engine
