"""Annotation records shared by every backend (same output type whatever the backend)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Span:
    """A labelled phrase over tokens ``[start, end)`` (0-based, end exclusive)."""

    start: int
    end: int
    label: str

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class AnnotatedSentence:
    """Tokens with Penn (English) or CTB (Chinese) POS tags and labelled phrase spans.

    ``heads`` are 0-based token indices with -1 for the root; ``deprels`` are the dependency
    labels.  Fields a backend does not produce are empty tuples.
    """

    tokens: tuple[str, ...]
    pos: tuple[str, ...]
    spans: tuple[Span, ...] = ()
    lemmas: tuple[str, ...] = ()
    heads: tuple[int, ...] = ()
    deprels: tuple[str, ...] = ()
    text: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)
