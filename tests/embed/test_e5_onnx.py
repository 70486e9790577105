"""The onnx runtime of e5-tokens: a graph exported here from the bundled weights, cached once
per machine, same answers as numpy; and how ``runtime = "auto"`` picks between the runtimes.

Graphs are exported into a temporary cache folder (``XDG_CACHE_HOME``), never the user's.
"""
from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from cppdb.config import load_config
from cppdb.embed import e5_onnx, e5_torch
from cppdb.embed.e5_tokens import E5TokenEncoder
from cppdb.errors import BackendUnavailableError, BadInputError, ConfigError
from tests.embed.test_e5_torch import _cosines, _sentences

DEPTH = 12          # encode() pools the last layer; layer 7 is SimAlign's


@pytest.fixture(scope="module")
def graph_cache(tmp_path_factory):
    """One cache folder for the module (each graph is exported once, ~10 s)."""
    with pytest.MonkeyPatch.context() as patch:
        root = tmp_path_factory.mktemp("xdg-cache")
        patch.setenv("XDG_CACHE_HOME", str(root))
        yield root / "cppdb" / e5_onnx.CACHE_FOLDER


@pytest.fixture
def exports(monkeypatch, graph_cache):
    """Counts the graphs exported while a test runs."""
    calls: list[int] = []
    real = e5_onnx.export_graph

    def counting(weights, path, depth):
        calls.append(depth)
        real(weights, path, depth)

    monkeypatch.setattr(e5_onnx, "export_graph", counting)
    return calls


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    return _sentences(200)


def test_onnx_matches_numpy_on_bundled_sentences(graph_cache, sentences):
    """fp32 like numpy: every token vector of layers 7 and 12 and the pooled vectors within
    cosine 0.9999 (measured > 0.99999)."""
    onnx = E5TokenEncoder(runtime="onnx")
    numpy = E5TokenEncoder(runtime="numpy")
    got = onnx.encode_tokens(sentences, layers=(7, DEPTH))
    ref = numpy.encode_tokens(sentences, layers=(7, DEPTH))
    assert [len(s.ids) for s in got] == [len(s.ids) for s in ref]
    for layer in (7, DEPTH):
        assert _cosines(got, ref, layer).min() >= 0.9999, layer
    # the check can fail: another layer's states are far from these
    x, y = (np.concatenate([s.layer(layer) for s in states]) for states, layer
            in ((got, DEPTH), (ref, 7)))
    assert ((x * y).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)).min() < 0.9
    pooled = np.sum(onnx.encode(sentences) * numpy.encode(sentences), axis=1)
    assert pooled.min() >= 0.9999
    assert onnx.placement() == onnx.runner.describe() == "onnx:cpu:fp32"
    assert "compute:onnx:cpu:fp32" in onnx.signature() and "onnxruntime==" in onnx.version()


def test_a_cached_graph_is_reused_also_after_pickling(graph_cache, exports):
    encoder = E5TokenEncoder(runtime="onnx")
    first = encoder.encode_tokens(["丹顶鹤飞到北京了。"], layers=(DEPTH,))  # cached or now
    before = len(exports)
    copy = pickle.loads(pickle.dumps(encoder))
    assert copy._runner is None and copy._weights is None
    again = copy.encode_tokens(["丹顶鹤飞到北京了。"], layers=(DEPTH,))
    assert len(exports) == before, "the second load exported the graph again"
    assert np.array_equal(first[0].hidden, again[0].hidden)   # deterministic session
    with pytest.raises(TypeError, match="not pickled"):
        pickle.dumps(encoder.runner)


def test_one_graph_per_depth_named_by_weights_opset_and_exporter(graph_cache, exports):
    encoder = E5TokenEncoder(runtime="onnx")
    encoder.encode_tokens(["你好"], layers=(1,))
    path = e5_onnx.graph_path(encoder.model_path(), 1)
    assert exports == [1] and path.is_file() and path.parent == graph_cache
    digest = e5_onnx.weights_digest(encoder.model_path())
    assert path.name.startswith(f"e5-{digest[:16]}-d1-opset{e5_onnx.OPSET}-")
    assert e5_onnx.exporter_tag() in path.name
    assert not list(graph_cache.glob(".*.tmp")), "a temporary file was left behind"


def test_a_corrupt_cached_graph_is_exported_again(graph_cache, exports):
    encoder = E5TokenEncoder(runtime="onnx")
    ref = encoder.encode_tokens(["他死于一场车祸。"], layers=(2,))
    path = e5_onnx.graph_path(encoder.model_path(), 2)
    path.write_bytes(path.read_bytes()[:5000])           # a half-written file
    fresh = E5TokenEncoder(runtime="onnx")
    got = fresh.encode_tokens(["他死于一场车祸。"], layers=(2,))
    assert exports.count(2) == 2
    assert np.array_equal(got[0].hidden, ref[0].hidden)


def test_a_corrupt_graph_without_exporter_is_a_coded_error(graph_cache, monkeypatch):
    E5TokenEncoder(runtime="onnx").encode_tokens(["你好"], layers=(3,))
    path = e5_onnx.graph_path(E5TokenEncoder().model_path(), 3)
    path.write_bytes(b"not a graph")
    monkeypatch.setattr(e5_onnx, "exporter_available", lambda: False)
    encoder = E5TokenEncoder(runtime="onnx")
    assert e5_onnx.graph_path(encoder.model_path(), 3) == path   # the shallowest cached
    with pytest.raises(BadInputError, match="cannot be loaded") as info:
        encoder.encode_tokens(["你好"], layers=(3,))
    assert str(path) in info.value.hint


def test_a_graph_of_another_name_is_refused(graph_cache, tmp_path):
    encoder = E5TokenEncoder(runtime="onnx")
    encoder.encode_tokens(["你好"], layers=(1,))
    moved = tmp_path / "other.onnx"
    moved.write_bytes(e5_onnx.graph_path(encoder.model_path(), 1).read_bytes())
    with pytest.raises(BadInputError, match="says it is"):
        e5_onnx.open_session(moved, 1)


def test_explicit_onnx_without_exporter_or_graph_says_how_to_enable(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))     # an empty cache
    monkeypatch.setattr(e5_onnx, "exporter_available", lambda: False)
    with pytest.raises(BackendUnavailableError, match="ONNX exporter") as info:
        E5TokenEncoder(runtime="onnx").check()
    assert "onnxscript" in info.value.hint
    monkeypatch.setattr(e5_onnx, "onnxruntime_available", lambda: False)
    with pytest.raises(BackendUnavailableError, match="needs onnxruntime") as info:
        E5TokenEncoder(runtime="onnx").check()
    assert "onnxruntime" in info.value.hint


@pytest.mark.parametrize("options", [{"device": "cuda"}, {"precision": "bf16"},
                                     {"precision": "fp16"}])
def test_onnx_runs_fp32_on_cpu_only(options):
    with pytest.raises(ConfigError, match="onnx runtime of e5-tokens runs fp32 on CPU only"):
        E5TokenEncoder(runtime="onnx", **options)


# -- runtime = "auto" -------------------------------------------------------------------------
@pytest.fixture
def machine(monkeypatch, tmp_path):
    """A machine whose CPU features, packages and cache the test sets."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)

    def make(*, bf16: bool, exporter: bool = True, torch_here: bool = True) -> None:
        monkeypatch.setattr(e5_torch, "cpu_has_native_bf16", lambda: bf16)
        monkeypatch.setattr(e5_onnx, "exporter_available", lambda: exporter)
        monkeypatch.setattr(e5_torch, "torch_available", lambda: torch_here)
    return make


@pytest.mark.parametrize("features, precision, expected", [
    ({"bf16": True}, "auto", "torch:cpu:bf16"),
    ({"bf16": True}, "fp32", "onnx:cpu:fp32"),        # fp32 asked: the fastest fp32
    ({"bf16": False}, "auto", "onnx:cpu:fp32"),
    ({"bf16": False}, "bf16", "torch:cpu:bf16"),      # emulated, but asked for
    ({"bf16": False, "exporter": False}, "auto", "torch:cpu:fp32"),
    ({"bf16": False, "exporter": False, "torch_here": False}, "auto", "numpy:cpu:fp32"),
])
def test_auto_picks_by_cpu_and_packages(machine, features, precision, expected):
    machine(**features)
    encoder = E5TokenEncoder(precision=precision)
    assert encoder.placement() == expected
    assert f"compute:{expected}" in encoder.signature()


def test_auto_uses_a_cached_graph_without_exporter(machine, tmp_path):
    machine(bf16=False, exporter=False)
    model = E5TokenEncoder().model_path()
    folder = tmp_path / "cppdb" / e5_onnx.CACHE_FOLDER
    folder.mkdir(parents=True)
    name = f"e5-{e5_onnx.weights_digest(model)[:16]}-d7-opset{e5_onnx.OPSET}-g" \
           f"{e5_onnx.GRAPH_FORMAT}-torchX-onnxscriptY.onnx"
    (folder / name).write_bytes(b"")
    assert E5TokenEncoder().placement() == "onnx:cpu:fp32"
    assert e5_onnx.graph_path(model, 7) == folder / name
    assert e5_onnx.graph_path(model, 8) is None        # not deep enough


def test_auto_on_a_gpu_is_torch(machine, monkeypatch):
    machine(bf16=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert E5TokenEncoder().placement() == "torch:cuda:fp16"


def test_auto_is_resolved_again_after_pickling(machine, monkeypatch):
    """A pickled aligner resolves ``auto`` on the machine that unpickles it."""
    machine(bf16=True)
    encoder = E5TokenEncoder()
    assert encoder.placement() == "torch:cpu:bf16"
    monkeypatch.setattr(e5_torch, "cpu_has_native_bf16", lambda: False)
    assert pickle.loads(pickle.dumps(encoder)).placement() == "onnx:cpu:fp32"


def test_doctor_shows_onnx_when_chosen(machine):
    from cppdb.registry import availability

    machine(bf16=False)
    row = availability("word_aligner", "simalign-e5", load_config())
    assert row["usable"] and row["compute"] == "onnx:cpu:fp32", row
    explicit = availability("token_encoder", "e5-tokens", load_config(
        overrides=['embed.runtime="onnx"']))
    assert explicit["compute"] == "onnx:cpu:fp32", explicit


def test_runtime_is_part_of_the_fingerprint_device_is_not():
    from cppdb.run import fingerprint_of

    inputs = [Path(__file__).resolve().parents[2] / "data" / "parallel" / "sample.zh"]
    base = load_config(overrides=[])
    onnx = load_config(overrides=['align_words.simalign-e5.runtime="onnx"'])
    assert fingerprint_of(base, inputs) != fingerprint_of(onnx, inputs)


def test_a_failing_export_is_a_coded_error(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def broken(*args, **kwargs):
        raise RuntimeError("the exporter broke")

    monkeypatch.setattr(torch.onnx, "export", broken)
    with pytest.raises(BackendUnavailableError, match="the exporter broke") as info:
        E5TokenEncoder(runtime="onnx").encode_tokens(["你好"], layers=(1,))
    assert "onnxscript" in info.value.hint
    assert not list((tmp_path / "cppdb" / e5_onnx.CACHE_FOLDER).glob("*")), "a file was left"
