"""SHIFT-ATT attention aligner (Chen et al. 2020) over a local zh→en Marian/seq2seq model.

The model is teacher-forced on the English side.  At decoder step t the input is target
token t−1, so the cross-attention that *reads* target token i is the one at step i + shift
(shift = 1: "shift by one step").  The chosen layer's attention is averaged over heads,
sub-word rows/columns are averaged into words, and each en word's row is renormalised over the
zh words: P[i, j] = attention of en word j on zh word i.
"""
from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from cppdb.align.words.base import TokenPair, WordAligner, check_pairs
from cppdb.align.words.neural import (MODEL_LOAD_LOCK, batches, piece_ids, require_model_dir,
                                      word_spans)
from cppdb.defaults import toml_defaults

_ATTENTION = toml_defaults("align_words.attention")


class AttentionAligner(WordAligner):
    """Cross-attention of a zh→en translation model, shifted one step (needs [neural])."""

    name = "attention"
    requires = (("torch", "torch"), ("transformers", "transformers"),
                ("sentencepiece", "sentencepiece"))
    install_hint = "pip install 'cppdb[neural]' sentencepiece"
    description = "SHIFT-ATT: shifted cross-attention of a zh→en NMT model (e.g. opus-mt-zh-en)"

    def __init__(self, *, model_dir: str = _ATTENTION["model_dir"],
                 layer: int = _ATTENTION["layer"], shift: int = _ATTENTION["shift"],
                 batch_size: int = _ATTENTION["batch_size"],
                 device: str = _ATTENTION["device"]) -> None:
        self.model_dir = model_dir
        self.layer = layer
        self.shift = shift
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._tokenizer: Any = None
        self._src_cache: dict[str, list[int]] = {}
        self._trg_cache: dict[str, list[int]] = {}

    def check(self) -> None:
        super().check()
        require_model_dir(self.model_dir, self.name, "a zh→en Marian model such as "
                          "Helsinki-NLP/opus-mt-zh-en")

    def signature(self) -> str:
        return (f"{self.name}[{self.version()}|model:{self.model_dir}|layer:{self.layer}"
                f"|shift:{self.shift}]")

    def _load(self) -> None:
        if self._model is not None:
            return
        self.check()
        transformers = importlib.import_module("transformers")
        path = str(require_model_dir(self.model_dir, self.name, "a zh→en model"))
        with MODEL_LOAD_LOCK:
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(path)
            # eager attention: the fused kernels do not return attention weights
            self._model = transformers.AutoModelForSeq2SeqLM.from_pretrained(
                path, attn_implementation="eager").to(self.device).eval()

    def _src(self, word: str) -> list[int]:
        return self._tokenizer(word, add_special_tokens=False)["input_ids"]

    def _trg(self, word: str) -> list[int]:
        return self._tokenizer(text_target=word, add_special_tokens=False)["input_ids"]

    def align(self, pairs: Sequence[TokenPair], *,
              en_lemmas: Sequence[Sequence[str]] | None = None) -> list[np.ndarray]:
        check_pairs(pairs)
        self._load()
        out: list[np.ndarray] = []
        for batch in batches(len(pairs), self.batch_size):
            out.extend(self._align_batch([pairs[k] for k in batch]))
        return out

    def _align_batch(self, pairs: Sequence[TokenPair]) -> list[np.ndarray]:
        torch = importlib.import_module("torch")
        tok, config = self._tokenizer, self._model.config
        unk = tok.unk_token_id if tok.unk_token_id is not None else 0
        pad = config.pad_token_id if config.pad_token_id is not None else 0
        start = config.decoder_start_token_id if config.decoder_start_token_id is not None else pad
        eos = config.eos_token_id if config.eos_token_id is not None else pad
        src_pieces = [piece_ids(z, self._src, unk, self._src_cache) for z, _ in pairs]
        trg_pieces = [piece_ids(e, self._trg, unk, self._trg_cache) for _, e in pairs]
        src = [[i for w in p for i in w] + [eos] for p in src_pieces]
        trg = [[start] + [i for w in p for i in w] for p in trg_pieces]
        src_ids, src_mask = _pad(torch, src, pad)
        trg_ids, trg_mask = _pad(torch, trg, pad)
        with torch.no_grad():
            output = self._model(input_ids=src_ids.to(self.device),
                                 attention_mask=src_mask.to(self.device),
                                 decoder_input_ids=trg_ids.to(self.device),
                                 decoder_attention_mask=trg_mask.to(self.device),
                                 output_attentions=True)
        attention = output.cross_attentions[self.layer].mean(dim=1).float().cpu().numpy()
        mats = []
        for row, (sp, tp) in enumerate(zip(src_pieces, trg_pieces)):
            att = attention[row]  # target steps × source positions
            zh_spans = word_spans(sp, 0)
            en_spans = word_spans(tp, self.shift)  # target piece i is read at step i + shift
            mats.append(_word_matrix(att, zh_spans, en_spans))
        return mats


def _pad(torch: Any, seqs: list[list[int]], pad: int) -> tuple[Any, Any]:
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        ids[row, :len(seq)] = torch.tensor(seq)
        mask[row, :len(seq)] = 1
    return ids, mask


def _word_matrix(att: np.ndarray, zh_spans: list[tuple[int, int]],
                 en_spans: list[tuple[int, int]]) -> np.ndarray:
    """Average attention over word pieces; renormalise each en word over the zh words."""
    out = np.zeros((len(zh_spans), len(en_spans)))
    for j, (t0, t1) in enumerate(en_spans):
        t1 = min(t1, att.shape[0])
        if t0 >= t1:
            continue
        rows = att[t0:t1]
        for i, (s0, s1) in enumerate(zh_spans):
            out[i, j] = rows[:, s0:s1].sum(axis=1).mean()
    totals = out.sum(axis=0, keepdims=True)
    return np.divide(out, totals, out=np.zeros_like(out), where=totals > 0)
