"""The e5-small encoder in onnxruntime: a graph exported on this machine from the bundled weights.

Why: on a CPU without native bf16, onnxruntime fp32 runs the encoder ~2.9x as fast as the
numpy path, torch fp32 only ~1.45x (docs/benchmarks/e5_tokens.md).  Nothing is downloaded:
the graph is the torch module of :func:`cppdb.embed.e5_torch.encoder_module` (the layer code
the torch runner runs) exported with torch's exporter (``torch.export`` + onnxscript), once
per machine, weights file, depth and exporter.

One graph per depth: onnxruntime runs every node of a graph whatever outputs are fetched
(``only_execute_path_to_fetches`` did not prune here), so SimAlign's layer 7 gets a graph cut
at layer 7.  Graphs live in ``user_cache_dir()/e5-onnx``, named by the weights file's sha256,
the depth, the opset, :data:`GRAPH_FORMAT` and the exporter's versions, and are written
atomically (two processes racing both write whole files; the last rename wins).  The name is
also stored in the graph's metadata: a cached file that onnxruntime cannot load, or that names
another graph, is exported again; without an exporter that is a coded error.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import os
import re
import warnings
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from cppdb.embed import e5_torch
from cppdb.embed.e5_weights import E5Weights
from cppdb.errors import BackendUnavailableError, BadInputError
from cppdb.io import atomic_path, file_sha256, user_cache_dir

OPSET = 18
#: bump when encoder_module or the graph's inputs/outputs change (old graphs are then unused)
GRAPH_FORMAT = 1
CACHE_FOLDER = "e5-onnx"
METADATA_KEY = "cppdb_graph"
EXPORTER_HINT = ("pip install 'onnxscript>=0.7,<0.8' (torch's ONNX exporter, which brings "
                 "onnx; torch is needed too), or use runtime = \"torch\"")
ORT_HINT = "pip install 'onnxruntime>=1.20,<2' (a base dependency of cppdb)"


def onnxruntime_available() -> bool:
    return importlib.util.find_spec("onnxruntime") is not None


def exporter_available() -> bool:
    """torch's dynamo exporter can run here (it needs onnxscript and onnx besides torch)."""
    return e5_torch.torch_available() and all(
        importlib.util.find_spec(name) is not None for name in ("onnxscript", "onnx"))


def exporter_tag() -> str:
    version = importlib.metadata.version
    return f"torch{version('torch')}-onnxscript{version('onnxscript')}"


@lru_cache(maxsize=8)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(path)


def weights_digest(model_path: str | Path) -> str:
    """sha256 of the weights file (hashed once per process and file version)."""
    stat = Path(model_path).stat()
    return _sha256(str(model_path), stat.st_size, stat.st_mtime_ns)


def cache_folder() -> Path:
    return user_cache_dir() / CACHE_FOLDER


def _stem(model_path: str | Path) -> str:
    return f"e5-{weights_digest(model_path)[:16]}"


_NAME = re.compile(r"-d(\d+)-opset(\d+)-g(\d+)-(.+)\.onnx$")


def cached_graphs(model_path: str | Path) -> list[tuple[int, Path]]:
    """(depth, path) of the graphs cached for these weights at this opset and format, in
    name order."""
    found = []
    for path in sorted(cache_folder().glob(f"{_stem(model_path)}-d*.onnx")):
        match = _NAME.search(path.name)
        if match and (int(match[2]), int(match[3])) == (OPSET, GRAPH_FORMAT):
            found.append((int(match[1]), path))
    return found


def graph_path(model_path: str | Path, depth: int) -> Path | None:
    """The graph to run for layers up to ``depth``: with an exporter here, the one it writes
    (which may not exist yet); without, the shallowest cached graph that reaches ``depth``
    (the last in name order among equals), or None."""
    if exporter_available():
        return cache_folder() / (f"{_stem(model_path)}-d{depth}-opset{OPSET}-g{GRAPH_FORMAT}"
                                 f"-{exporter_tag()}.onnx")
    deep_enough = [(d, path) for d, path in cached_graphs(model_path) if d >= depth]
    if not deep_enough:
        return None
    shallowest = min(d for d, _ in deep_enough)
    return [path for d, path in deep_enough if d == shallowest][-1]


def onnx_usable(model_path: str | Path, depth: int) -> bool:
    """onnxruntime is installed and a graph reaching ``depth`` can be exported or is cached."""
    if not onnxruntime_available():
        return False
    return exporter_available() or graph_path(model_path, depth) is not None


def export_graph(weights: E5Weights, path: Path, depth: int) -> None:
    """Export layers 0..depth of ``weights`` to ``path`` (atomically), fp32, dynamic batch and
    length (up to the model's positions)."""
    import torch

    module = e5_torch.encoder_module(weights, depth)
    batch = torch.export.Dim("batch")
    length = torch.export.Dim("length", max=weights.config.max_positions)
    example = (torch.zeros(2, 8, weights.config.hidden), torch.zeros(2, 1, 1, 8))
    exporter_log = logging.getLogger("torch.onnx")
    level = exporter_log.level
    exporter_log.setLevel(logging.ERROR)   # "torchvision is not installed" notes, per op
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(
                module, example, dynamo=True, opset_version=OPSET, verbose=False,
                input_names=["words", "mask"],
                output_names=[f"hidden_{k}" for k in range(depth + 1)],
                dynamic_shapes={"words": {0: batch, 1: length}, "mask": {0: batch, 3: length}})
    except Exception as exc:   # the exporter's own kinds (version clashes, tracing errors)
        raise BackendUnavailableError(
            f"exporting the e5 graph (layers 0..{depth}) failed: {exc}",
            hint=f"{EXPORTER_HINT}; the versions here: {exporter_tag()}") from exc
    finally:
        exporter_log.setLevel(level)
    program.model.metadata_props[METADATA_KEY] = path.stem
    with atomic_path(path) as tmp:
        program.save(tmp, external_data=False)


def intra_op_threads() -> int:
    """The threads torch's intra-op pool uses here (physical cores, or what the process set:
    OMP_NUM_THREADS, torch.set_num_threads), so both runtimes use the same cores."""
    if e5_torch.torch_available():
        import torch

        return torch.get_num_threads()
    return int(os.environ.get("OMP_NUM_THREADS") or 0)      # 0 = onnxruntime's own default


def open_session(path: Path, threads: int) -> Any:
    """An onnxruntime CPU session on ``path``; raises BadInputError when the file is not a
    loadable graph or names another graph."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.use_deterministic_compute = True
    options.log_severity_level = 3
    # idle threads sleep instead of spinning: spinning pools stall each other on shared
    # cores (measured: 5.8 s spinning vs 3.3 s at load 2.5 on 2 cores)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        # SkipLayerNormalization (the fused residual add + layer norm) ran slower here than
        # the two ops it replaces: 3.0 vs 3.3 s on 1,000 news sentences, layer 7, 2 cores
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"],
                                       disabled_optimizers=["SkipLayerNormFusion"])
    except Exception as exc:   # onnxruntime raises its own Fail / InvalidProtobuf kinds
        raise BadInputError(f"cached e5 graph {path} cannot be loaded: {exc}",
                            hint=f"delete {path}; it is exported again on the next run "
                                 f"(needs {EXPORTER_HINT})") from exc
    stored = session.get_modelmeta().custom_metadata_map.get(METADATA_KEY)
    if stored != path.stem:
        raise BadInputError(f"cached e5 graph {path} says it is {stored!r}",
                            hint=f"delete {path}; it is exported again on the next run")
    return session


class OnnxE5Runner:
    """Drop-in for :class:`cppdb.embed.e5_torch.TorchE5Runner` on onnxruntime (CPU, fp32)."""

    device = "cpu"
    precision = "fp32"

    def __init__(self, weights: E5Weights, model_path: str | Path) -> None:
        if not onnxruntime_available():
            raise BackendUnavailableError("the onnx runtime of e5-tokens needs onnxruntime",
                                          hint=ORT_HINT)
        self.weights = weights
        self.model_path = Path(model_path)
        self.threads = intra_op_threads()
        self._sessions: dict[int, Any] = {}

    def describe(self) -> str:
        return f"onnx:{self.device}:{self.precision}"

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("OnnxE5Runner holds onnxruntime sessions and is not pickled; "
                        "E5TokenEncoder drops it and rebuilds it on the other side")

    def session(self, depth: int) -> Any:
        """The session of the graph reaching ``depth``: cached, else exported now; a cached
        file that does not load is exported again when the exporter is here."""
        if depth in self._sessions:
            return self._sessions[depth]
        path = graph_path(self.model_path, depth)
        if path is None:
            raise BackendUnavailableError(
                f"the onnx runtime of e5-tokens has no graph of layers 0..{depth} for "
                f"{self.model_path} in {cache_folder()} and cannot export one",
                hint=EXPORTER_HINT)
        if not path.is_file():
            export_graph(self.weights, path, depth)
        try:
            session = open_session(path, self.threads)
        except BadInputError:
            if not exporter_available():
                raise
            export_graph(self.weights, path, depth)
            session = open_session(path, self.threads)
        self._sessions[depth] = session
        return session

    def __call__(self, ids: np.ndarray, lengths: np.ndarray, layers: Sequence[int]
                 ) -> np.ndarray:
        """Hidden states ``[len(layers), B, L, H]`` (float32) of a padded batch."""
        B, L = ids.shape
        words = self.weights.word_vectors(ids.reshape(-1)).reshape(B, L, -1)
        session = self.session(max(layers, default=0))
        hidden = session.run([f"hidden_{layer}" for layer in layers],
                             {"words": words, "mask": e5_torch.padding_mask(lengths, L)})
        return np.stack(hidden)
