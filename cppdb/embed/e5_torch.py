"""The e5-small encoder in torch: the same bundled weights as the numpy path, on CPU or GPU.

:class:`TorchE5Runner` is a drop-in for :func:`cppdb.embed.e5_tokens.run_encoder` (same
inputs, same ``[len(layers), B, L, H]`` float32 output) built from the :class:`E5Weights`
the numpy path reads, so both answer for one file.  The word-embedding rows are still
dequantised in numpy per batch (the 250k-row table stays 4-bit in memory); the layers run in
torch under ``inference_mode`` with attention as two batched matmuls.

Precision: ``fp32`` reproduces the numpy path (cosine > 0.99999); ``bf16`` runs the matmuls in
bfloat16 (≈3× faster on a CPU with AVX512-BF16 or AMX, cosine ≥ 0.9999 to fp32 on real
sentences: tests/embed/test_e5_torch.py, docs/benchmarks/e5_tokens.md); ``fp16`` is the GPU's.
``auto`` picks fp16 on CUDA, bf16 on a CPU that computes it natively, else fp32 — on a CPU
without native bf16 the emulated kind is slower than fp32 (and there ``runtime = "auto"``
prefers onnxruntime fp32, :mod:`cppdb.embed.e5_onnx`, which exports :func:`encoder_module`).
"""
from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cppdb.defaults import toml_defaults
from cppdb.embed.e5_weights import E5Weights
from cppdb.errors import BackendUnavailableError, ConfigError

_EMBED = toml_defaults("embed")

RUNTIMES = ("auto", "numpy", "torch", "onnx")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
TORCH_HINT = "pip install 'torch==2.13.0' (or the [neural] extra)"


def torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


def check_device(device: str) -> None:
    """Validate the spelling of a device setting (before any work starts)."""
    if device in ("auto", "cpu", "cuda"):
        return
    if device.startswith("cuda:") and device[5:].isdecimal():
        return
    raise ConfigError(f"device must be auto, cpu, cuda or cuda:N, not {device!r}",
                      hint='"auto" uses a GPU when torch sees one')


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when torch sees a GPU, else ``cpu``; a named GPU must exist."""
    check_device(device)
    if device == "cpu":
        return device
    if not torch_available():
        if device == "auto":
            return "cpu"
        raise BackendUnavailableError(f"device {device!r} needs torch", hint=TORCH_HINT)
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not torch.cuda.is_available():
        raise BackendUnavailableError(f"device {device!r} asked for, but torch sees no GPU",
                                      hint='use device = "cpu" or "auto", or install a CUDA '
                                           "build of torch")
    index = int(device[5:]) if ":" in device else 0
    if index >= torch.cuda.device_count():
        raise BackendUnavailableError(f"device {device!r} asked for, but torch sees "
                                      f"{torch.cuda.device_count()} GPU(s)",
                                      hint="cuda:0 is the first GPU")
    return device


def cpu_has_native_bf16() -> bool:
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ConfigError(f"precision must be one of {', '.join(PRECISIONS)}, not "
                          f"{precision!r}")


def resolve_precision(precision: str, device: str) -> str:
    check_precision(precision)
    if precision != "auto":
        if precision == "fp16" and device == "cpu":
            raise ConfigError("precision fp16 is for GPUs", hint='use "bf16" or "fp32" on CPU')
        return precision
    if device.startswith("cuda"):
        return "fp16"
    return "bf16" if cpu_has_native_bf16() else "fp32"


LAYER_TENSORS = ("qkv", "qkv_b", "ao", "ao_b", "aln_w", "aln_b", "fi", "fi_b", "fo", "fo_b",
                 "oln_w", "oln_b")
_TRANSPOSED = frozenset({"qkv", "ao", "fi", "fo"})
LINEAR_TENSORS = ("qkv", "qkv_b", "ao", "ao_b", "fi", "fi_b", "fo", "fo_b")


def layer_tensors(layer: Any, tensor: Callable[[np.ndarray, bool], Any]) -> dict[str, Any]:
    """One :class:`E5Layer` as torch tensors; torch's linear wants ``[out, in]``, the numpy
    path keeps ``[in, out]``."""
    return {name: tensor(getattr(layer, name), name in _TRANSPOSED) for name in LAYER_TENSORS}


def encoder_layer(x: Any, w: dict[str, Any], mask: Any, heads: int, eps: float) -> Any:
    """One BERT layer on ``x`` ``[B, L, H]`` with an additive padding ``mask``
    ``[B, 1, 1, L]``: the one definition the torch runner and the ONNX graph share."""
    import torch
    import torch.nn.functional as F

    B, L, H = x.shape
    qkv = F.linear(x, w["qkv"], w["qkv_b"]).view(B, L, 3, heads, H // heads)
    q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)                  # [B, NH, L, hd]
    # plain matmuls: on CPU faster than scaled_dot_product_attention at these lengths (it
    # does not take its fused path with a padding mask)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (H // heads) ** -0.5 + mask
    ctx = torch.matmul(torch.softmax(scores.float(), dim=-1).to(v.dtype), v)
    ctx = ctx.transpose(1, 2).reshape(B, L, H)
    x = F.layer_norm(F.linear(ctx, w["ao"], w["ao_b"]) + x, (H,), w["aln_w"], w["aln_b"],
                     eps=eps)
    mid = F.gelu(F.linear(x, w["fi"], w["fi_b"]))
    return F.layer_norm(F.linear(mid, w["fo"], w["fo_b"]) + x, (H,), w["oln_w"], w["oln_b"],
                        eps=eps)


def padding_mask(lengths: np.ndarray, width: int) -> np.ndarray:
    """Additive attention mask ``[B, 1, 1, width]``: 0 on tokens, -1e30 on padding."""
    keep = np.arange(width)[None, :] < np.asarray(lengths)[:, None]
    return np.where(keep, 0.0, -1e30).astype(np.float32)[:, None, None, :]


def encoder_module(weights: E5Weights, depth: int) -> Any:
    """The encoder after the word-embedding lookup, up to layer ``depth``, as a
    ``torch.nn.Module`` (fp32, CPU): ``forward(words [B, L, H], mask [B, 1, 1, L])`` returns
    the hidden states of layers 0..depth, one tensor each.  What the ONNX runtime exports."""
    import torch

    cfg = weights.config

    def tensor(array: np.ndarray, transpose: bool = False) -> Any:
        return torch.from_numpy(np.ascontiguousarray(array.T if transpose else array))

    class E5Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            for number, layer in enumerate(weights.layers[:depth]):
                for name, value in layer_tensors(layer, tensor).items():
                    self.register_buffer(f"l{number}_{name}", value)
            for name in ("position", "token_type", "emb_ln_w", "emb_ln_b"):
                self.register_buffer(name, tensor(getattr(weights, name)))

        def forward(self, words: Any, mask: Any) -> tuple[Any, ...]:
            x = words + self.position[:words.shape[1]][None] + self.token_type
            x = torch.nn.functional.layer_norm(x, (cfg.hidden,), self.emb_ln_w, self.emb_ln_b,
                                               eps=cfg.eps)
            states = [x]
            for number in range(depth):
                layer = {name: getattr(self, f"l{number}_{name}") for name in LAYER_TENSORS}
                x = encoder_layer(x, layer, mask, cfg.heads, cfg.eps)
                states.append(x)
            return tuple(states)

    return E5Encoder().eval()


class TorchE5Runner:
    """The encoder layers of :class:`E5Weights` as torch tensors on one device."""

    def __init__(self, weights: E5Weights, device: str = _EMBED["device"],
                 precision: str = _EMBED["precision"]) -> None:
        if not torch_available():
            raise BackendUnavailableError("the torch runtime of e5-tokens needs torch",
                                          hint=TORCH_HINT)
        import torch

        self.weights = weights
        self.device = resolve_device(device)
        self.precision = resolve_precision(precision, self.device)
        dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
        # on GPU the weights are stored in the compute dtype; on CPU autocast casts them
        self._autocast_dtype = dtype[self.precision]
        store = dtype[self.precision] if self.device != "cpu" else torch.float32

        def tensor(array: np.ndarray, transpose: bool = False) -> Any:
            data = np.ascontiguousarray(array.T if transpose else array)
            return torch.from_numpy(data).to(self.device, store)

        self._layers = [layer_tensors(layer, tensor) for layer in weights.layers]
        if self.device == "cpu" and self.precision != "fp32":
            # autocast casts an fp32 weight to the compute dtype on every call (it keeps the
            # casts only of tensors that require grad): cast the linear layers once — the same
            # bits; layer norms and embeddings stay fp32, as autocast runs those in fp32
            for layer in self._layers:
                for name in LINEAR_TENSORS:
                    layer[name] = layer[name].to(self._autocast_dtype)
        self._position = tensor(weights.position)
        self._token_type = tensor(weights.token_type)
        self._emb_ln = (tensor(weights.emb_ln_w), tensor(weights.emb_ln_b))
        self._store = store

    def describe(self) -> str:
        return f"torch:{self.device}:{self.precision}"

    def __call__(self, ids: np.ndarray, lengths: np.ndarray, layers: Sequence[int]
                 ) -> np.ndarray:
        """Hidden states ``[len(layers), B, L, H]`` (float32 numpy) of a padded batch."""
        import torch
        import torch.nn.functional as F

        cfg = self.weights.config
        B, L = ids.shape
        H, NH = cfg.hidden, cfg.heads
        words = self.weights.word_vectors(ids.reshape(-1)).reshape(B, L, H)
        device_type = "cuda" if self.device.startswith("cuda") else "cpu"
        wanted = {layer: k for k, layer in enumerate(layers)}
        out = np.empty((len(layers), B, L, H), dtype=np.float32)
        with torch.inference_mode(), torch.autocast(device_type, dtype=self._autocast_dtype,
                                                    enabled=self.precision != "fp32"):
            x = torch.from_numpy(words).to(self.device, self._store)
            x = x + self._position[:L][None] + self._token_type
            x = F.layer_norm(x, (H,), *self._emb_ln, eps=cfg.eps)
            mask = torch.from_numpy(padding_mask(lengths, L)).to(self.device)
            if 0 in wanted:
                out[wanted[0]] = x.float().cpu().numpy()
            for number, w in enumerate(self._layers[:max(layers, default=0)], start=1):
                x = encoder_layer(x, w, mask, NH, cfg.eps)
                if number in wanted:
                    out[wanted[number]] = x.float().cpu().numpy()
        return out
