"""Chinese sentence segmentation, and the rules that turn subtitle cues into sentences.

Rules of :func:`split_sentences` (each guarded by a test in ``tests/text/test_segment.py``):

1. A sentence ends after a run of terminators: ``。！？`` (and ``!?`` ASCII, ``；`` is *not*
   a terminator), the ellipses ``…`` / ``⋯`` (``……`` counts as one), and an ASCII ``.`` only
   when it is followed by whitespace or the end of the text and not preceded by a digit
   (so ``3.14`` and ``v1.2`` stay whole).
2. Closing quotes and brackets right after a terminator stay with the sentence they close:
   ``他问：“你好吗？”`` is one sentence, and so is ``（见上。）``.
3. Inside an open quote or bracket a terminator does not end the sentence, except when the
   closers right after it close every open quote: ``他说：“好。我去。”然后走了。`` gives
   ``他说：“好。我去。”`` + ``然后走了。``. If a quote is never closed in the paragraph, the
   paragraph is split as if quotes were absent (a quote mark lost by OCR must not glue a
   whole chapter together).
4. A newline always ends a sentence (paragraphs are never merged). Whitespace at the ends of
   sentences is stripped and empty sentences are dropped.

Subtitle cues (:func:`cue_sentences`): a cue is a timed piece of text, often without any
final punctuation. The rules, in order:

a. Lines inside a cue are joined with nothing between two CJK characters and a space
   otherwise; lines starting with a dialogue dash (``-``, ``－``, ``—``) are separate
   speakers and therefore separate sentences (the dash is removed).
b. A cue is split into sentences with :func:`split_sentences`. Spaces inside a cue (Chinese
   subtitles use them instead of commas: ``请问 这是小河站吗``) are kept and do not split.
c. A cue's last sentence continues into the next cue only when it ends with a continuation
   mark (``，、：；`` or ``,`` or ``—``/``-``) *and* the next cue starts less than
   ``join_gap_ms`` after it ends; at most ``max_join`` cues are merged into one sentence.
   Otherwise the cue boundary is a sentence boundary (Chinese subtitles usually drop the
   final ``。``, so an unpunctuated cue end counts as a sentence end).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

TERMINATORS = frozenset("。！？!?…⋯")
#: closing marks that belong to the sentence before them
CLOSERS = frozenset("”’」』）)】》〉〕］]\"'")
#: opening -> closing pairs tracked for rule 3 (ASCII quotes toggle, handled separately)
PAIRS = {"“": "”", "‘": "’", "「": "」", "『": "』", "（": "）", "(": ")", "【": "】",
         "《": "》", "〈": "〉", "〔": "〕", "［": "］"}
CONTINUATION_MARKS = frozenset("，、：；,:;—-")
DIALOGUE_DASHES = ("-", "－", "—", "–")

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


def _is_terminator_at(text: str, i: int) -> bool:
    char = text[i]
    if char in TERMINATORS:
        return True
    if char == ".":
        after_ok = i + 1 == len(text) or text[i + 1].isspace()
        before_ok = i == 0 or not text[i - 1].isdigit()
        return after_ok and before_ok
    return False


def _open_close(stack: list[str], char: str) -> None:
    """Track quotes/brackets: push the expected closer on an opener, pop on a match."""
    if char == '"':
        if stack and stack[-1] == '"':
            stack.pop()
        else:
            stack.append('"')
    elif char in PAIRS:
        stack.append(PAIRS[char])
    elif stack and char == stack[-1]:
        stack.pop()


def _sentence_end(text: str, i: int, stack: list[str]) -> int | None:
    """If a sentence ends with the terminator at ``i``, the index after it (and its closers).

    Consumes the rest of a terminator run (``？！``, ``……``) and the closing marks that
    follow; inside quotes the sentence ends only if those closers close every open quote.
    """
    end = i + 1
    while end < len(text) and _is_terminator_at(text, end):
        end += 1
    trial = list(stack)
    while end < len(text) and text[end] in CLOSERS:
        if trial and text[end] == trial[-1]:
            trial.pop()
        elif trial:  # a closer that does not match: stop, the quote is still open
            break
        end += 1
    if trial:
        return None
    stack.clear()
    return end


def _split_paragraph(text: str, respect_quotes: bool) -> tuple[list[str], bool]:
    """Split one paragraph; also say whether every quote/bracket was closed."""
    sentences: list[str] = []
    stack: list[str] = []  # closing marks we wait for
    start = i = 0
    while i < len(text):
        if _is_terminator_at(text, i):
            end = _sentence_end(text, i, stack if respect_quotes else [])
            if end is not None:
                sentences.append(text[start:end])
                start = i = end
                continue
        _open_close(stack, text[i])
        i += 1
    sentences.append(text[start:])
    return [s.strip() for s in sentences if s.strip()], not stack


def split_sentences(text: str) -> list[str]:
    """Split Chinese (or mixed) text into sentences; see the module docstring for the rules.

    >>> split_sentences("他问：“你好吗？”她没回答。天黑了……我们走吧！")
    ['他问：“你好吗？”', '她没回答。', '天黑了……', '我们走吧！']
    """
    sentences: list[str] = []
    for paragraph in text.splitlines():
        if not paragraph.strip():
            continue
        parts, balanced = _split_paragraph(paragraph, respect_quotes=True)
        if not balanced:
            parts, _ = _split_paragraph(paragraph, respect_quotes=False)
        sentences.extend(parts)
    return sentences


class TimedText(Protocol):
    """Anything with a start, an end (milliseconds) and text: a subtitle cue."""

    start_ms: int
    end_ms: int
    text: str


@dataclass(frozen=True)
class CueSentence:
    """A sentence made from subtitle cues: its text, time span and source cue indices."""

    text: str
    start_ms: int
    end_ms: int
    cues: tuple[int, ...]


def join_lines(lines: Sequence[str]) -> str:
    """Join lines: nothing between two CJK characters, one space otherwise."""
    joined = ""
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if joined and not (_CJK.match(joined[-1]) and _CJK.match(line[0])):
            joined += " "
        joined += line
    return joined


def cue_text_sentences(text: str) -> list[str]:
    """Rules a and b: the sentences of one cue's (possibly multi-line) text."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    speakers: list[list[str]] = []
    for line in lines:
        if line.startswith(DIALOGUE_DASHES) and len(line) > 1:
            speakers.append([line.lstrip("".join(DIALOGUE_DASHES)).strip()])
        elif speakers:
            speakers[-1].append(line)
        else:
            speakers.append([line])
    sentences: list[str] = []
    for speaker_lines in speakers:
        sentences.extend(split_sentences(join_lines(speaker_lines)))
    return sentences


def cue_sentences(cues: Sequence[TimedText], *, join_gap_ms: int = 1000,
                  max_join: int = 3) -> list[CueSentence]:
    """Rules a–c: turn subtitle cues into sentences with time spans and cue indices."""
    out: list[CueSentence] = []
    pending: CueSentence | None = None  # an unfinished sentence waiting for the next cue
    for index, cue in enumerate(cues):
        parts = cue_text_sentences(cue.text)
        if not parts:
            continue
        if pending is not None and cue.start_ms - pending.end_ms < join_gap_ms:
            parts[0] = join_lines([pending.text, parts[0]])
            first = CueSentence(parts[0], pending.start_ms, cue.end_ms, pending.cues + (index,))
        else:
            if pending is not None:
                out.append(pending)
            first = CueSentence(parts[0], cue.start_ms, cue.end_ms, (index,))
        pending = None
        sentences = [first] + [CueSentence(p, cue.start_ms, cue.end_ms, (index,))
                               for p in parts[1:]]
        last = sentences[-1]
        if last.text[-1] in CONTINUATION_MARKS and len(last.cues) < max_join:
            pending = last
            sentences = sentences[:-1]
        out.extend(sentences)
    if pending is not None:
        out.append(pending)
    return out
