"""Stanza backends (full models, optional extra ``cppdb[stanza]``), loaded from local files only.

Models are looked up in ``annotate.stanza_dir``, else ``$STANZA_RESOURCES_DIR``, else
``~/stanza_resources``; nothing is ever downloaded at run time (``download_method=None``).
Chinese follows the papers: jieba tokens are fed to Stanza with ``tokenize_pretokenized``;
POS tags are Stanza's xpos (CTB for zh, Penn for en) and phrases come from its
constituency trees (every constituent, plus preterminals as single-token spans).
"""
from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from cppdb.annotate.chinese import JiebaChinese
from cppdb.annotate.phrases import sort_spans, with_spans
from cppdb.annotate.types import AnnotatedSentence, Span
from cppdb.errors import BackendUnavailableError, ModelNotFoundError
from cppdb.registry import Backend

STANZA_INSTALL_HINT = "pip install 'cppdb[stanza]'"


def stanza_resources_dir(configured: str | os.PathLike[str] | None = None) -> Path:
    """Configured dir, else $STANZA_RESOURCES_DIR, else ~/stanza_resources."""
    if configured:
        return Path(configured).expanduser()
    env = os.environ.get("STANZA_RESOURCES_DIR")
    return Path(env).expanduser() if env else Path.home() / "stanza_resources"


def tree_spans(tree: Any) -> tuple[Span, ...]:
    """Every constituent of a Stanza tree as a labelled span (preterminals: their tag)."""
    spans: list[Span] = []

    def visit(node: Any, start: int) -> int:
        if node.is_leaf():
            return start + 1
        end = start
        for child in node.children:
            end = visit(child, end)
        if node.label != "ROOT" and end > start:
            spans.append(Span(start, end, node.label))
        return end

    visit(tree, 0)
    return sort_spans(spans)


class _StanzaBackend(Backend):
    """Shared loading and error handling of the Stanza zh / en pipelines."""

    requires: ClassVar[tuple[tuple[str, str], ...]] = (("stanza", "stanza"),)
    install_hint: ClassVar[str] = STANZA_INSTALL_HINT
    lang: ClassVar[str] = ""
    lang_dir: ClassVar[str] = ""          # directory of the language's models
    processors: ClassVar[tuple[str, ...]] = ()
    fetch_name: ClassVar[str] = ""

    def __init__(self, stanza_dir: str = "", batch_size: int = 64) -> None:
        self.model_dir = stanza_resources_dir(stanza_dir)
        self.batch_size = batch_size
        self._pipelines: dict[bool, Any] = {}

    def check(self) -> None:
        if importlib.util.find_spec("stanza") is None:
            raise BackendUnavailableError(
                f"backend '{self.name}' needs the Python package stanza", hint=self.install_hint)
        missing = [p for p in self._model_processors() if not self._has_model(p)]
        if not (self.model_dir / "resources.json").is_file() or missing:
            expected = self.model_dir / self.lang_dir
            what = ", ".join(missing) if missing else "resources.json"
            raise ModelNotFoundError(
                f"Stanza {self.lang} models not found: expected {what} under {expected} "
                f"(resources.json in {self.model_dir})",
                hint=f"run `cppdb models fetch {self.fetch_name} --target {self.model_dir}` "
                     "(needs internet; or copy a stanza_resources directory from a machine "
                     "that has one), or set annotate.stanza_dir / $STANZA_RESOURCES_DIR to "
                     "the directory holding the models")

    def _model_processors(self) -> tuple[str, ...]:
        return tuple(p for p in self.processors if p != "tokenize")

    def _has_model(self, processor: str) -> bool:
        folder = self.model_dir / self.lang_dir / processor
        return folder.is_dir() and any(folder.glob("*.pt"))

    def _pipeline(self, pretokenized: bool) -> Any:
        if pretokenized not in self._pipelines:
            self.check()
            import stanza

            try:
                self._pipelines[pretokenized] = stanza.Pipeline(
                    lang=self.lang, dir=str(self.model_dir), processors=",".join(self.processors),
                    tokenize_pretokenized=pretokenized, download_method=None, use_gpu=False,
                    logging_level="WARN")
            except (FileNotFoundError, ValueError, KeyError) as exc:
                raise ModelNotFoundError(
                    f"Stanza could not load its {self.lang} models from {self.model_dir}: {exc}",
                    hint=f"run `cppdb models fetch {self.fetch_name}`") from exc
        return self._pipelines[pretokenized]

    def _run(self, inputs: Sequence[Any], pretokenized: bool,
             texts: Sequence[str]) -> list[AnnotatedSentence]:
        """Annotate in batches; empty inputs give empty sentences (Stanza rejects them)."""
        nlp = self._pipeline(pretokenized)
        out: list[AnnotatedSentence | None] = [None] * len(inputs)
        todo = [i for i, item in enumerate(inputs) if item]
        for i in set(range(len(inputs))) - set(todo):
            out[i] = AnnotatedSentence((), (), text=texts[i])
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start:start + self.batch_size]
            if pretokenized:  # one Stanza sentence per token list
                doc = nlp([list(inputs[i]) for i in batch])
                for i, sentence in zip(batch, doc.sentences):
                    out[i] = _from_sentences([sentence], texts[i])
            else:
                for i, doc in zip(batch, nlp.bulk_process([inputs[i] for i in batch])):
                    out[i] = _from_sentences(doc.sentences, texts[i])
        return [s for s in out if s is not None]

    def add_spans(self, sentences: Sequence[AnnotatedSentence]) -> list[AnnotatedSentence]:
        """Parse given tokens and attach the tree's spans (keeps the given POS tags)."""
        parsed = self.annotate_pretokenized([s.tokens for s in sentences])
        return with_spans(sentences, [p.spans for p in parsed])

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "model_dir": str(self.model_dir),
                "processors": ",".join(self.processors)}


def _from_sentences(sentences: Sequence[Any], text: str) -> AnnotatedSentence:
    """One AnnotatedSentence from Stanza sentences (several are concatenated)."""
    tokens, pos, lemmas, heads, deprels, spans = [], [], [], [], [], []
    for sentence in sentences:
        offset = len(tokens)
        for word in sentence.words:
            tokens.append(word.text)
            pos.append(word.xpos or word.upos or "")
            lemmas.append(word.lemma or word.text)
            if word.head is not None:
                heads.append(word.head - 1 + offset if word.head > 0 else -1)
                deprels.append(word.deprel or "")
        tree = getattr(sentence, "constituency", None)
        if tree is not None:
            spans.extend(Span(s.start + offset, s.end + offset, s.label)
                         for s in tree_spans(tree))
    complete = len(heads) == len(tokens)
    return AnnotatedSentence(tuple(tokens), tuple(pos), spans=sort_spans(spans),
                             lemmas=tuple(lemmas), heads=tuple(heads) if complete else (),
                             deprels=tuple(deprels) if complete else (), text=text)


class StanzaChinese(_StanzaBackend):
    """Stanza zh: CTB POS + constituency over jieba tokens (tokenize_pretokenized)."""

    name: ClassVar[str] = "stanza"
    description: ClassVar[str] = "Stanza zh-hans POS (CTB) + constituency over jieba tokens"
    #: the tokens come from jieba, so the signature must name its version too
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("stanza", "stanza"), ("jieba", "jieba"))
    lang: ClassVar[str] = "zh-hans"
    lang_dir: ClassVar[str] = "zh-hans"
    processors: ClassVar[tuple[str, ...]] = ("tokenize", "pos", "constituency")
    fetch_name: ClassVar[str] = "stanza-zh"

    def annotate(self, texts: Sequence[str]) -> list[AnnotatedSentence]:
        segmented = JiebaChinese().annotate(texts)
        return self._run([s.tokens for s in segmented], True, list(texts))

    def annotate_pretokenized(self, sentences: Sequence[Sequence[str]]) -> list[AnnotatedSentence]:
        tokens = [[t for t in s if t.strip()] for s in sentences]
        return self._run(tokens, True, ["".join(t) for t in tokens])


class StanzaEnglish(_StanzaBackend):
    """Stanza en: tokens, Penn POS, lemmas, dependencies and constituency."""

    name: ClassVar[str] = "stanza"
    description: ClassVar[str] = "Stanza en: Penn POS, lemmas, dependencies, constituency"
    lang: ClassVar[str] = "en"
    lang_dir: ClassVar[str] = "en"
    processors: ClassVar[tuple[str, ...]] = ("tokenize", "pos", "lemma", "depparse",
                                             "constituency")
    fetch_name: ClassVar[str] = "stanza-en"

    def _model_processors(self) -> tuple[str, ...]:
        # unlike zh, English text is tokenized by Stanza's own model
        return self.processors

    def annotate(self, texts: Sequence[str]) -> list[AnnotatedSentence]:
        return self._run(list(texts), False, list(texts))

    def annotate_pretokenized(self, sentences: Sequence[Sequence[str]]) -> list[AnnotatedSentence]:
        tokens = [[t for t in s if t.strip()] for s in sentences]
        return self._run(tokens, True, [" ".join(t) for t in tokens])
