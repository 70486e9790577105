"""Universal Dependencies parse of Chinese on jieba tokens (capability ``ud_parser``).

The compression corpus (SPEC §4) needs UPOS tags and a UD dependency tree of each sentence,
on jieba tokens as in Zhao et al. (2022), whose rules use the UD Chinese GSD relation names
(``mark:relcl``, ``case:dec``, ``case:aspect``, ``cop``, ``nummod`` ...).

Two backends, same output (:class:`~cppdb.annotate.types.AnnotatedSentence` with ``pos`` =
UPOS, 0-based ``heads`` with -1 for the root, ``deprels``):

* :class:`UDChineseParser` (offline default, **weak**).  The ``udchinese`` package is a UDPipe
  1 model (UD Chinese GSD + classical Chinese).  Its own entry point ``udchinese.load()`` takes
  raw text only and segments it with the model's tokenizer, which splits modern words badly
  (出租车司机 -> 出租 / 车司 / 机).  We therefore bypass it and drive the same model through
  ``ufal.udpipe`` with pre-tokenised CoNLL-U input (jieba tokens, one sentence per block).
  Its tagger is also poor on jieba tokens (司机 VERB, 制度 ADV), so by default we supply UPOS
  from jieba's posseg tags (mapped below) and run only the parser (``tagger="jieba"``);
  ``tagger="udpipe"`` lets the model tag.  Attachments are still often wrong (it was trained on
  a different segmentation); use Stanza when its models are available.
* :class:`StanzaUDParser`: Stanza ``zh-hans`` (tokenize_pretokenized) from local model files;
  missing files raise :class:`~cppdb.errors.ModelNotFoundError` — nothing is downloaded.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from cppdb.annotate.types import AnnotatedSentence
from cppdb.errors import BackendUnavailableError, BadInputError, ConfigError, ModelNotFoundError
from cppdb.registry import Backend

# jieba posseg (ICTCLAS-style) tag -> UPOS.  Digits come out as "eng"/"m": handled in code.
JIEBA_TO_UPOS: dict[str, str] = {
    "n": "NOUN", "ng": "NOUN", "nl": "NOUN", "ns": "PROPN", "nr": "PROPN", "nrfg": "PROPN",
    "nrt": "PROPN", "nt": "PROPN", "nz": "PROPN", "j": "PROPN", "t": "NOUN", "tg": "NOUN",
    "s": "NOUN", "f": "NOUN", "g": "NOUN", "v": "VERB", "vn": "VERB", "vd": "VERB",
    "vg": "VERB", "vi": "VERB", "vq": "VERB", "vshi": "AUX", "vyou": "VERB", "i": "VERB",
    "l": "VERB", "a": "ADJ", "ad": "ADJ", "an": "ADJ", "ag": "ADJ", "z": "ADJ", "b": "ADJ",
    "d": "ADV", "dg": "ADV", "df": "ADV", "m": "NUM", "mq": "NUM", "q": "NOUN", "r": "PRON",
    "rr": "PRON", "rz": "PRON", "rg": "PRON", "p": "ADP", "c": "CCONJ", "cc": "CCONJ",
    "u": "PART", "uj": "PART", "ul": "PART", "uz": "PART", "ug": "PART", "uv": "PART",
    "ud": "PART", "y": "PART", "k": "PART", "h": "PART", "e": "INTJ", "o": "ADV",
    "x": "PUNCT", "w": "PUNCT", "eng": "X",
}
# jieba tags modal verbs and the copula as plain verbs; UD (and the DTT rules) want AUX.
AUX_WORDS = frozenset("是 会 能 能够 可以 可能 要 应该 应当 应 必须 得以 将 将要 可 敢 肯 愿意 "
                      "不会 不能 不可 不要 不应 不应该 不该 不得 不敢 不肯 不愿 未能".split())
_PUNCT = set("，。！？、；：“”‘’「」『』（）()《》〈〉【】—…·．,.!?;:\"'-~～/")


@dataclass(frozen=True)
class TaggedText:
    """A text cut into jieba tokens with UPOS tags (whitespace tokens dropped)."""

    tokens: tuple[str, ...]
    upos: tuple[str, ...]

    @property
    def text(self) -> str:
        return "".join(self.tokens)


def upos_of(token: str, jieba_flag: str) -> str:
    """UPOS for one jieba token: digits are NUM, punctuation PUNCT, else the mapped flag."""
    if token.isdigit() or all(ch in "0123456789０１２３４５６７８９.%％" for ch in token):
        return "NUM"
    if all(ch in _PUNCT for ch in token):
        return "PUNCT"
    if token in AUX_WORDS:
        return "AUX"
    return JIEBA_TO_UPOS.get(jieba_flag, "X")


def tokenize_tag(texts: Sequence[str]) -> list[TaggedText]:
    """jieba posseg over ``texts`` (the tokenisation the papers use), with UPOS."""
    try:
        import jieba
        import jieba.posseg as posseg
    except ImportError as exc:  # pragma: no cover - jieba is a core dependency
        raise BackendUnavailableError("jieba is not installed",
                                      hint="pip install jieba==0.42.1") from exc
    jieba.setLogLevel(60)
    out: list[TaggedText] = []
    for text in texts:
        pairs = [(p.word, p.flag) for p in posseg.cut(text) if p.word.strip()]
        out.append(TaggedText(tuple(w for w, _ in pairs),
                              tuple(upos_of(w, f) for w, f in pairs)))
    return out


def is_time_word(token: str) -> bool:
    """jieba's dictionary files ``token`` as a time word (今天 近日 日前 当晚: flag ``t``), or it
    is a number with a date unit (2020年, 3月, 15日)."""
    import jieba.posseg as posseg

    if posseg.dt.word_tag_tab.get(token) in ("t", "tg"):
        return True
    return bool(token) and token[-1] in "年月日号" and token[:-1].isdigit()


def _conllu_input(sentences: Sequence[TaggedText], with_upos: bool) -> str:
    blocks = []
    for sentence in sentences:
        lines = []
        for index, (token, upos) in enumerate(zip(sentence.tokens, sentence.upos), start=1):
            tag = upos if with_upos else "_"
            lines.append(f"{index}\t{token}\t{token}\t{tag}\t_\t_\t_\t_\t_\t_")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks) + "\n"


def parse_conllu(text: str) -> list[AnnotatedSentence]:
    """CoNLL-U (single-word tokens) -> AnnotatedSentence list (0-based heads, -1 root)."""
    sentences: list[AnnotatedSentence] = []
    rows: list[list[str]] = []

    def flush() -> None:
        if rows:
            sentences.append(AnnotatedSentence(
                tokens=tuple(r[1] for r in rows), pos=tuple(r[3] for r in rows),
                lemmas=tuple(r[2] for r in rows), heads=tuple(int(r[6]) - 1 for r in rows),
                deprels=tuple(r[7] for r in rows), text="".join(r[1] for r in rows)))
            rows.clear()

    for line in text.split("\n"):
        if not line.strip():
            flush()
        elif not line.startswith("#"):
            cols = line.split("\t")
            if len(cols) == 10 and cols[0].isdecimal():
                rows.append(cols)
    flush()
    return sentences


@lru_cache(maxsize=2)
def _udpipe_model(path: str) -> Any:
    """Load a UDPipe model once per process (28 MB, ~2 s); pipelines share it read-only."""
    import ufal.udpipe as udpipe

    model = udpipe.Model.load(path)
    if model is None:
        raise ModelNotFoundError(f"cannot load the UDPipe model {path}",
                                 hint="pip install --force-reinstall udchinese")
    return model


class UDChineseParser(Backend):
    """UD Chinese GSD UDPipe model from the ``udchinese`` package, fed jieba tokens (weak)."""

    name: ClassVar[str] = "udchinese"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (
        ("udchinese", "udchinese"), ("ufal.udpipe", "ufal.udpipe"), ("jieba", "jieba"))
    install_hint: ClassVar[str] = "pip install udchinese jieba"
    description: ClassVar[str] = ("offline UDPipe model of udchinese on jieba tokens "
                                  "(weak: trained on another segmentation)")

    def __init__(self, tagger: str = "jieba", **_: Any) -> None:
        if tagger not in ("jieba", "udpipe"):
            raise ConfigError(f"unknown udchinese tagger '{tagger}'",
                              hint="compression.udchinese_tagger is 'jieba' or 'udpipe'")
        self.tagger = tagger
        self._pipeline: Any = None

    def signature(self) -> str:
        return f"{self.name}[{self.version()}]+tagger:{self.tagger}"

    def _load(self) -> Any:
        if self._pipeline is None:
            self.check()
            import udchinese
            import ufal.udpipe as udpipe

            model = _udpipe_model(os.path.join(udchinese.PACKAGE_DIR, "ud-chinese.udpipe"))
            tagger = "none" if self.tagger == "jieba" else udpipe.Pipeline.DEFAULT
            self._model = model  # the pipeline keeps a raw pointer: keep the model alive
            self._pipeline = udpipe.Pipeline(model, "conllu", tagger,
                                             udpipe.Pipeline.DEFAULT, "conllu")
        return self._pipeline

    def parse(self, sentences: Sequence[TaggedText]) -> list[AnnotatedSentence]:
        """Parse a batch of pre-tokenised sentences (one UDPipe call per batch)."""
        if not sentences:
            return []
        empty = [i for i, s in enumerate(sentences) if not s.tokens]
        if empty:
            raise BadInputError(f"cannot parse an empty sentence (batch positions {empty[:5]})")
        import ufal.udpipe as udpipe

        pipeline = self._load()
        error = udpipe.ProcessingError()
        output = pipeline.process(_conllu_input(sentences, self.tagger == "jieba"), error)
        if error.occurred():
            raise BadInputError(f"UDPipe failed on a batch: {error.message}")
        parsed = parse_conllu(output)
        if len(parsed) != len(sentences):
            raise BadInputError(f"UDPipe returned {len(parsed)} sentences for {len(sentences)}")
        if self.tagger == "jieba":  # UDPipe echoes our tags; keep them exactly
            parsed = [AnnotatedSentence(tokens=s.tokens, pos=t.upos, lemmas=s.lemmas,
                                        heads=s.heads, deprels=s.deprels, text=s.text)
                      for s, t in zip(parsed, sentences)]
        return parsed


class StanzaUDParser(Backend):
    """Stanza ``zh-hans`` POS + depparse on jieba tokens, from local model files only."""

    name: ClassVar[str] = "stanza"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("stanza", "stanza"), ("jieba", "jieba"))
    install_hint: ClassVar[str] = "pip install 'cppdb[stanza]'"
    description: ClassVar[str] = "Stanza zh-hans UD parser from local models (strong)"
    PROCESSORS: ClassVar[tuple[str, ...]] = ("pos", "lemma", "depparse")

    def __init__(self, stanza_dir: str | Path = "", **_: Any) -> None:
        self.stanza_dir = str(stanza_dir)
        self._pipeline: Any = None

    def model_dir(self) -> Path:
        raw = (self.stanza_dir or os.environ.get("STANZA_RESOURCES_DIR")
               or str(Path.home() / "stanza_resources"))
        return Path(raw).expanduser()

    def check(self) -> None:
        super().check()
        root = self.model_dir()
        lang = root / "zh-hans"
        missing = [p for p in ("pos", "depparse") if not (lang / p).is_dir()]
        if not (root / "resources.json").is_file() or missing:
            raise ModelNotFoundError(
                f"Stanza Chinese models not found: expected {root}/resources.json and "
                f"{lang}/{{pos,lemma,depparse}}",
                hint=("on a machine with internet run `cppdb models fetch stanza-zh --target DIR` "
                      "(Stanza's own download), copy DIR here and point compression.stanza_dir "
                      "or $STANZA_RESOURCES_DIR at it"))

    def _load(self) -> Any:
        if self._pipeline is None:
            self.check()
            import stanza

            self._pipeline = stanza.Pipeline(
                "zh-hans", dir=str(self.model_dir()), download_method=None, use_gpu=False,
                processors="tokenize," + ",".join(self.PROCESSORS),
                tokenize_pretokenized=True, logging_level="WARN")
        return self._pipeline

    def parse(self, sentences: Sequence[TaggedText]) -> list[AnnotatedSentence]:
        if not sentences:
            return []
        doc = self._load()([list(s.tokens) for s in sentences])
        out = []
        for sentence in doc.sentences:
            words = sentence.words
            out.append(AnnotatedSentence(
                tokens=tuple(w.text for w in words), pos=tuple(w.upos for w in words),
                lemmas=tuple(w.lemma or w.text for w in words),
                heads=tuple(int(w.head) - 1 for w in words),
                deprels=tuple(w.deprel for w in words), text="".join(w.text for w in words)))
        return out
