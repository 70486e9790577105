"""Build tiny random transformer models locally, saved the way real models are saved.

Tests of the full-model code paths (SimAlign, attention aligner, masked-LM feature, BERT-align,
sentence-transformers encoders) load these through the same code that loads real models from
a local directory.  Nothing is downloaded.
"""
from __future__ import annotations

from pathlib import Path

# Characters and words the tests use; every one gets its own vocabulary entry.
CHINESE_CHARS = ("的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子"
                 "那得于着下自之年过发后作里用道行所然家种事成方多经么去法学如都同现当没动面起看定"
                 "天分还进好小部其些主样理心她本前开但因只从想实日军者意无力它与长把机十民第公此已工"
                 "使情明性知全三又关点正业外将两高间由问很最重并物手应战向头文体政美相见被利什二等"
                 "死车祸丧场故交通事老头位北京海上铁到高速出版社丹顶鹤西班牙留守剩余首相访问会谈")
ENGLISH_WORDS = ("the a an he she it they we you i died in car accident was born shanghai beijing "
                 "old man red crowned cranes high speed rail from to of and is are not will "
                 "spain prime minister visit talks remaining left behind . , ! ?").split()
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _bert_tokenizer(vocab: list[str]):
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece
    from transformers import PreTrainedTokenizerFast

    ids = {token: index for index, token in enumerate(vocab)}
    backend = Tokenizer(WordPiece(vocab=ids, unk_token="[UNK]", continuing_subword_prefix="##"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True, handle_chinese_chars=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])])
    from tokenizers import decoders
    backend.decoder = decoders.WordPiece(prefix="##")
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=128)
    if len(tokenizer) != len(vocab):
        raise RuntimeError(f"tiny tokenizer has {len(tokenizer)} tokens, expected {len(vocab)}")
    return tokenizer


def build_tiny_bert(path: Path, seed: int = 0) -> Path:
    """A 2-layer BertForMaskedLM with a char+word vocabulary, saved with save_pretrained."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    vocab = SPECIAL + sorted(set(CHINESE_CHARS)) + sorted(set(ENGLISH_WORDS))
    tokenizer = _bert_tokenizer(vocab)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=128, pad_token_id=0)
    model = BertForMaskedLM(config).eval()
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_sentence_transformer(path: Path, bert_dir: Path) -> Path:
    """A SentenceTransformer (tiny BERT + mean pooling + normalise) saved with .save()."""
    from sentence_transformers import SentenceTransformer, models

    word = models.Transformer(str(bert_dir), max_seq_length=64)
    pooling = models.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
    model = SentenceTransformer(modules=[word, pooling, models.Normalize()], device="cpu")
    model.save(str(path))
    return path


def _train_spm(texts: list[str], prefix: Path, vocab_size: int) -> None:
    import sentencepiece as spm

    corpus = prefix.with_suffix(".txt")
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(prefix), vocab_size=vocab_size,
        character_coverage=1.0, model_type="unigram", hard_vocab_limit=False,
        bos_id=-1, eos_id=1, unk_id=2, pad_id=0, minloglevel=2)
    corpus.unlink()


def build_tiny_marian(path: Path, seed: int = 0) -> Path:
    """A 2-layer MarianMTModel zh->en with sentencepiece tokenizers (like opus-mt-zh-en)."""
    import json

    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    torch.manual_seed(seed)
    path.mkdir(parents=True, exist_ok=True)
    zh_texts = [CHINESE_CHARS[i:i + 12] for i in range(0, len(CHINESE_CHARS), 6)]
    en_texts = [" ".join(ENGLISH_WORDS[i:i + 8]) for i in range(0, len(ENGLISH_WORDS), 3)]
    _train_spm(zh_texts, path / "source", vocab_size=200)
    _train_spm(en_texts, path / "target", vocab_size=120)
    vocab: dict[str, int] = {"<pad>": 0, "</s>": 1, "<unk>": 2}
    import sentencepiece as spm
    for name in ("source", "target"):
        processor = spm.SentencePieceProcessor(model_file=str(path / f"{name}.model"))
        for index in range(processor.get_piece_size()):
            vocab.setdefault(processor.id_to_piece(index), len(vocab))
    (path / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (path / "source.model").rename(path / "source.spm")
    (path / "target.model").rename(path / "target.spm")
    for leftover in path.glob("*.vocab"):
        leftover.unlink()
    tokenizer = MarianTokenizer(vocab=str(path / "vocab.json"),
                                source_spm=str(path / "source.spm"),
                                target_spm=str(path / "target.spm"),
                                source_lang="zh", target_lang="en")
    config = MarianConfig(vocab_size=len(vocab), d_model=32, encoder_layers=2, decoder_layers=2,
                          encoder_attention_heads=2, decoder_attention_heads=2,
                          encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=128,
                          pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    model = MarianMTModel(config).eval()
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
