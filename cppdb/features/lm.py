"""Language-model features: how probable each side of a pair is as Chinese text.

Two backends of the registry capability ``language_model``:

``char-ngram`` (:class:`CharNgramLM`, the offline default)
    A character n-gram model (order 3 by default) with Witten–Bell interpolation down to an
    add-one unigram, **trained on the run's own text** (the unique sources and targets of the
    pairs being ranked, or the texts given to ``fit``).  Training and scoring are polars
    group-bys/joins, so millions of strings take seconds.  The score of a text is its mean
    natural-log probability per character, the end-of-text symbol included.  Because the
    model has seen the strings it scores, the value measures how typical a string's
    character sequences are for the corpus (garbled OCR, broken segmentation and rare
    fragments score low), not a held-out perplexity.

``bert`` (:class:`MaskedLM`)
    The paper's masked-LM generation probability: the pseudo-log-likelihood of a text
    (each token masked in turn, log p of the true token), averaged per token, from a local
    BERT-style model directory (``features.lm_model_path``).  Needs the ``[neural]`` extra.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import ClassVar

import numpy as np
import polars as pl

from cppdb.defaults import toml_defaults
from cppdb.errors import BadInputError, ModelNotFoundError
from cppdb.io import write_parquet_atomic
from cppdb.registry import Backend

_FEATURES = toml_defaults("features")

_BOS = "\x02"
_EOS = "\x03"


def _char_rows(texts: list[str], order: int) -> pl.DataFrame:
    """One row per predicted character: doc index, char ``w`` and contexts ``h1..h{n-1}``."""
    pad = _BOS * (order - 1)
    frame = pl.DataFrame({"doc": np.arange(len(texts), dtype=np.int64),
                          "text": pl.Series(texts, dtype=pl.String)})
    frame = (frame.select("doc", pl.concat_str([pl.lit(pad), pl.col("text").fill_null(""),
                                               pl.lit(_EOS)]).str.split("").alias("w"))
             .explode("w")
             .with_columns(pl.int_range(pl.len()).over("doc").alias("pos")))
    # the padding makes every kept position look back only inside its own document,
    # so a plain (global) shift gives the context
    contexts = []
    for k in range(1, order):
        parts = [pl.col("w").shift(i) for i in range(k, 0, -1)]
        contexts.append(pl.concat_str(parts).alias(f"h{k}"))
    return frame.with_columns(contexts).filter(pl.col("pos") >= order - 1).drop("pos")


class CharNgramLM(Backend):
    """Witten–Bell interpolated character n-gram LM trained on the run's own text."""

    name: ClassVar[str] = "char-ngram"
    description: ClassVar[str] = "character n-gram LM trained on the run's own text (offline)"

    def __init__(self, order: int = _FEATURES["lm_order"], **_unused: object) -> None:
        if order < 1:
            raise BadInputError(f"char n-gram order must be >= 1, got {order}")
        self.order = order
        self._unigrams: pl.DataFrame | None = None
        self._tables: list[tuple[pl.DataFrame, pl.DataFrame]] = []
        self._total = 0
        self._vocab = 0
        self._fingerprint = "unfitted"

    def signature(self) -> str:
        return f"char-ngram[order={self.order},text={self._fingerprint}]"

    def fit(self, texts: list[str]) -> CharNgramLM:
        rows = _char_rows(list(texts), self.order)
        self._unigrams = rows.group_by("w").agg(pl.len().alias("c0"))
        self._total = rows.height
        self._vocab = self._unigrams.height
        self._tables = []
        for k in range(1, self.order):
            h = f"h{k}"
            joint = rows.group_by(h, "w").agg(pl.len().alias(f"c{k}"))
            context = joint.group_by(h).agg(pl.col(f"c{k}").sum().alias(f"n{k}"),
                                            pl.len().alias(f"t{k}"))
            self._tables.append((joint, context))
        digest = hashlib.sha256("\n".join(sorted(set(texts))).encode()).hexdigest()[:12]
        self._fingerprint = digest
        return self

    def save(self, path: str | Path) -> bool:
        """Write the fitted counts to one Parquet file (atomically): a row per (order ``k``,
        history ``h``, character ``w``) with its count ``c``; k = 0 are the unigrams.  The
        context totals are sums over these rows, so :meth:`restore` recomputes them."""
        self._require_fit()
        rows = [self._unigrams.select(pl.lit(0, pl.Int32).alias("k"),
                                      pl.lit(None, pl.String).alias("h"), "w",
                                      pl.col("c0").alias("c"))]
        for k, (joint, _context) in enumerate(self._tables, start=1):
            rows.append(joint.select(pl.lit(k, pl.Int32).alias("k"), pl.col(f"h{k}").alias("h"),
                                     "w", pl.col(f"c{k}").alias("c")))
        write_parquet_atomic(path, pl.concat(rows), metadata={
            "cppdb_char_ngram_order": str(self.order),
            "cppdb_char_ngram_text": self._fingerprint})
        return True

    def restore(self, path: str | Path) -> CharNgramLM:
        """The state :meth:`save` wrote (scores are identical to the saved model's)."""
        metadata = pl.read_parquet_metadata(path)
        order = int(metadata.get("cppdb_char_ngram_order", -1))
        if order != self.order:
            raise BadInputError(f"{path} holds a char n-gram LM of order {order}, not "
                                f"{self.order}", hint=f"delete {path}; it is refitted")
        counts = pl.read_parquet(path)
        self._unigrams = counts.filter(pl.col("k") == 0).select("w", pl.col("c").alias("c0"))
        self._total = int(self._unigrams["c0"].sum())
        self._vocab = self._unigrams.height
        self._tables = []
        for k in range(1, self.order):
            h = f"h{k}"
            joint = counts.filter(pl.col("k") == k).select(pl.col("h").alias(h), "w",
                                                           pl.col("c").alias(f"c{k}"))
            context = joint.group_by(h).agg(pl.col(f"c{k}").sum().alias(f"n{k}"),
                                            pl.len().alias(f"t{k}"))
            self._tables.append((joint, context))
        self._fingerprint = metadata["cppdb_char_ngram_text"]
        return self

    def _require_fit(self) -> None:
        if self._unigrams is None:
            raise BadInputError("the char n-gram LM is not trained",
                                hint="call fit(texts) before score(texts)")

    def score(self, texts: list[str]) -> np.ndarray:
        """Mean natural-log probability per character (end symbol included) of each text."""
        self._require_fit()
        rows = (_char_rows(list(texts), self.order).with_row_index("_row")
                .join(self._unigrams, on="w", how="left"))
        prob = (pl.col("c0").fill_null(0) + 1) / (self._total + self._vocab + 1)
        for k, (joint, context) in enumerate(self._tables, start=1):
            h = f"h{k}"
            rows = rows.join(joint, on=[h, "w"], how="left").join(context, on=h, how="left")
            c, n, t = pl.col(f"c{k}").fill_null(0), pl.col(f"n{k}"), pl.col(f"t{k}")
            prob = pl.when(n.is_null()).then(prob).otherwise((c + t * prob) / (n + t))
        # summed in row order (not by a parallel group-by, whose float sums vary in the last
        # bit from run to run): identical runs must give identical features
        scored = rows.select("_row", "doc", prob.log().alias("logp")).sort("_row")
        doc = scored["doc"].to_numpy()
        sums = np.bincount(doc, weights=scored["logp"].to_numpy(), minlength=len(texts))
        counts = np.bincount(doc, minlength=len(texts))
        return np.divide(sums, counts, out=np.zeros(len(texts)), where=counts > 0)


class MaskedLM(Backend):
    """Pseudo-log-likelihood per token from a local masked language model (BERT-style)."""

    name: ClassVar[str] = "bert"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("transformers", "transformers"),
                                                        ("torch", "torch"))
    install_hint: ClassVar[str] = "pip install 'cppdb[neural]'"
    description: ClassVar[str] = "masked-LM pseudo-log-likelihood from a local model directory"

    def __init__(self, model_path: str | Path = _FEATURES["lm_model_path"],
                 batch_size: int = _FEATURES["batch_size"], max_tokens: int = 64,
                 **_unused: object) -> None:
        self.model_path = Path(model_path) if model_path else None
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self._model = None
        self._tokenizer = None

    def check(self) -> None:
        super().check()
        if self.model_path is None or not (self.model_path / "config.json").is_file():
            raise ModelNotFoundError(
                f"masked LM directory {self.model_path or '(not set)'} has no config.json",
                hint="set features.lm_model_path to a local BERT-style model directory "
                     "(e.g. a saved bert-base-chinese), or use features.language_model="
                     "'char-ngram'")

    def signature(self) -> str:
        return f"bert[{self.version()},model={self.model_path}]"

    def fit(self, texts: list[str]) -> MaskedLM:
        """Pretrained: nothing to fit (kept for the common language-model protocol)."""
        return self

    def save(self, path: str | Path) -> bool:
        """Pretrained: no fitted state to write (workers load the model directory)."""
        return False

    def restore(self, path: str | Path) -> MaskedLM:
        return self

    def _load(self) -> None:
        if self._model is None:
            self.check()
            from transformers import AutoModelForMaskedLM, AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_path))
            self._model = AutoModelForMaskedLM.from_pretrained(str(self.model_path)).eval()

    def _masked_items(self, texts: list[str]) -> list[tuple[int, int, int, list[int]]]:
        items = []
        for doc, text in enumerate(texts):
            ids = self._tokenizer(text, truncation=True, max_length=self.max_tokens)["input_ids"]
            for position in range(1, len(ids) - 1):  # skip [CLS] and [SEP]
                items.append((doc, position, ids[position], ids))
        return items

    def score(self, texts: list[str]) -> np.ndarray:
        import torch

        self._load()
        texts = list(texts)
        items = self._masked_items(texts)
        total = np.zeros(len(texts))
        counts = np.zeros(len(texts))
        mask_id = self._tokenizer.mask_token_id
        pad_id = self._tokenizer.pad_token_id or 0
        for start in range(0, len(items), self.batch_size):
            batch = items[start:start + self.batch_size]
            width = max(len(ids) for *_x, ids in batch)
            input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
            attention = torch.zeros((len(batch), width), dtype=torch.long)
            for row, (_doc, position, _tok, ids) in enumerate(batch):
                input_ids[row, :len(ids)] = torch.tensor(ids)
                attention[row, :len(ids)] = 1
                input_ids[row, position] = mask_id
            with torch.no_grad():
                logits = self._model(input_ids=input_ids, attention_mask=attention).logits
            logp = torch.log_softmax(logits, dim=-1)
            for row, (doc, position, token, _ids) in enumerate(batch):
                total[doc] += float(logp[row, position, token])
                counts[doc] += 1
        return np.where(counts > 0, total / np.maximum(counts, 1), 0.0)
