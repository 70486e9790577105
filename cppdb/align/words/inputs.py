"""Reading sentence pairs for `cppdb align-words`: ``zh ||| en`` (pre-tokenised), raw
``--zh/--en`` files or a Tatoeba TSV (tokenised with the configured annotation backends).

Problem lines (empty sides, overlong, missing separator) keep their place: the output has one
line per input line, problem lines get no links and are reported with their reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cppdb.annotate.pipeline import AnnotationSession
from cppdb.annotate.settings import AnnotateSettings
from cppdb.errors import BadInputError
from cppdb.readers.parallel import read_parallel_input


@dataclass(frozen=True)
class TokenizedPairs:
    """Token lists per usable line, their 0-based line numbers, problems, total lines."""

    line_ids: tuple[int, ...]
    zh: tuple[tuple[str, ...], ...]
    en: tuple[tuple[str, ...], ...]
    en_lemmas: tuple[tuple[str, ...], ...] | None
    problems: tuple[Any, ...]   # cppdb.readers.parallel.Problem
    n_lines: int
    source: str


def _tokenize(settings: AnnotateSettings, text: Any) -> tuple[tuple, tuple, tuple | None]:
    with AnnotationSession(settings) as session:
        zh = session.annotate("zh", list(text.zh))
        en = session.annotate("en", list(text.en))
    lemmas = tuple(tuple(s.lemmas) if len(s.lemmas) == len(s.tokens) else tuple(s.tokens)
                   for s in en)
    return (tuple(tuple(s.tokens) for s in zh), tuple(tuple(s.tokens) for s in en), lemmas)


def load_pairs(settings: AnnotateSettings, *, parallel: Path | None = None, zh: Path | None = None,
               en: Path | None = None, what: str = "input") -> TokenizedPairs:
    """Exactly one of ``parallel`` (``zh ||| en``, or a Tatoeba TSV) or ``zh`` + ``en``.

    Every pair is held in memory: the statistical aligner trains one global model on the
    whole corpus (the streamed reader underneath holds one block while reading)."""
    text, files = read_parallel_input(zh, en, parallel, max_chars=settings.max_chars)
    source = "+".join(map(str, files))
    n_lines = len(text.ids) + len(text.problems)
    if text.pretokenized:
        zh_tok = tuple(tuple(z) for z in text.zh)
        en_tok = tuple(tuple(e) for e in text.en)
        lemmas = None
    else:
        zh_tok, en_tok, lemmas = _tokenize(settings, text)
    if n_lines == 0:
        raise BadInputError(f"{what}: {source} is empty")
    return TokenizedPairs(tuple(text.ids), zh_tok, en_tok, lemmas, tuple(text.problems),
                          n_lines, source)
