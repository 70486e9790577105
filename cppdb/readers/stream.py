"""Streaming reads of sentence-aligned text: bounded memory whatever the corpus size.

The encoding is detected from a bounded head sample (BOMs, UTF-16 NUL patterns, strict
UTF-8, plausibility-scored GB18030/Big5, charset-normalizer: :mod:`cppdb.readers.encoding`),
then the file is decoded incrementally in fixed-size blocks and split on ``\\n``, ``\\r\\n``
and ``\\r`` only (never on U+2028, ``\\x85``, ``\\x1c`` … as ``str.splitlines`` would).

If the sample's encoding fails later in the file (e.g. 64 KiB of plain ASCII, then GB18030),
the whole file is re-detected once, as the old whole-file reader did, and reading restarts
with that encoding (:class:`EncodingRedetected`); a file no encoding decodes is a coded
:class:`BadInputError` naming the file and line.
"""
from __future__ import annotations

import codecs
from collections.abc import Iterator
from pathlib import Path

from cppdb.errors import BadInputError
from cppdb.readers.encoding import _BOMS, _looks_like_utf16, decode_bytes

#: bytes of the head sample the encoding is detected from
SAMPLE_BYTES = 1 << 16
#: bytes decoded per step
BLOCK_BYTES = 1 << 20
#: characters at the start of the text checked for control characters (binary files)
BINARY_SAMPLE_CHARS = 8192


class EncodingRedetected(Exception):
    """The head sample's encoding failed later in ``path``; read again with ``encoding``."""

    def __init__(self, path: Path, encoding: str) -> None:
        super().__init__(f"{path}: re-detected as {encoding}")
        self.path, self.encoding = path, encoding


def check_text_file(path: str | Path, what: str) -> Path:
    """A readable, non-empty regular file (clear errors before any work)."""
    path = Path(path)
    if not path.exists():
        raise BadInputError(f"{what} file {path} does not exist", hint="check the path")
    if not path.is_file():
        raise BadInputError(f"{what} path {path} is not a regular file", hint="pass a file")
    if _only_whitespace(path):
        raise BadInputError(f"{what} file {path} is empty",
                            hint="pass a file with one sentence per line")
    return path


def _only_whitespace(path: Path) -> bool:
    with path.open("rb") as handle:
        while block := handle.read(BLOCK_BYTES):
            if block.strip():
                return False
    return True


def detect_stream_encoding(path: Path, what: str) -> tuple[str, int]:
    """(codec, bytes to skip) for ``path``, from its first :data:`SAMPLE_BYTES`."""
    with path.open("rb") as handle:
        sample = handle.read(SAMPLE_BYTES + 1)
    for bom, codec, _name in _BOMS:
        if sample.startswith(bom):
            return codec, len(bom)
    where = f"{what} file {path}"
    if len(sample) <= SAMPLE_BYTES:                  # the whole file: exactly as before
        return decode_bytes(sample, where=where).encoding, 0
    sample = _whole_lines(sample[:SAMPLE_BYTES])
    last: BadInputError | None = None
    for cut in range(4):           # one line longer than the sample: it may end mid-character
        try:
            return decode_bytes(sample[:len(sample) - cut], where=where).encoding, 0
        except BadInputError as exc:
            last = exc
    assert last is not None
    raise last


def _whole_lines(sample: bytes) -> bytes:
    """The sample up to its last line end: never inside a character (in UTF-8, GB18030 and
    Big5 the byte 0x0A is only ever a line feed; UTF-16 is cut to whole code units)."""
    if _looks_like_utf16(sample):
        return sample[:len(sample) // 2 * 2]
    end = sample.rfind(b"\n")
    return sample[:end + 1] if end > 0 else sample


def iter_lines(path: str | Path, *, what: str = "input", encoding: str | None = None,
               block_bytes: int | None = None) -> Iterator[str]:
    """The lines of ``path`` (no line-end characters), decoded block by block.

    Same lines, errors and BOM handling as reading and decoding the whole file.
    ``encoding`` skips detection (used after :class:`EncodingRedetected`).
    """
    path = check_text_file(path, what)
    if encoding is None:
        codec, skip = detect_stream_encoding(path, what)
    else:
        codec, skip = encoding, 0
    block_bytes = block_bytes or BLOCK_BYTES
    decoder = codecs.getincrementaldecoder(codec)(errors="strict")
    state = _LineState(path, what)
    with path.open("rb") as handle:
        handle.seek(skip)
        while True:
            block = handle.read(block_bytes)
            final = not block
            try:
                text = decoder.decode(block, final=final)
            except UnicodeDecodeError as exc:
                raise _late_failure(path, what, codec, encoding,
                                    state.line_of(exc, codec)) from exc
            yield from state.feed(text, final)
            if final:
                return


class _LineState:
    """Carries a partial line (and a trailing ``\\r``) across blocks; checks the head."""

    def __init__(self, path: Path, what: str) -> None:
        self.path, self.what = path, what
        self.carry = ""
        self.lines = 0
        self.head: list[str] | None = []
        self.head_chars = 0
        self.first = True

    def feed(self, text: str, final: bool) -> Iterator[str]:
        if self.first and text:
            text, self.first = text.removeprefix("\ufeff"), False
        self._check_head(text, final)
        text = self.carry + text
        hold = "\r" if not final and text.endswith("\r") else ""   # maybe half of \r\n
        if hold:
            text = text[:-1]
        parts = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.carry = parts.pop() + hold
        if final and self.carry:
            parts.append(self.carry)
            self.carry = ""
        self.lines += len(parts)
        yield from parts

    def line_of(self, exc: UnicodeDecodeError, codec: str) -> int:
        """The 1-based line on which ``exc`` (raised decoding the next block) happened."""
        before = self.carry + exc.object[:exc.start].decode(codec, errors="replace")
        return self.lines + before.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1

    def _check_head(self, text: str, final: bool) -> None:
        if self.head is None:
            return
        self.head.append(text[:BINARY_SAMPLE_CHARS - self.head_chars])
        self.head_chars += len(self.head[-1])
        if self.head_chars >= BINARY_SAMPLE_CHARS or final:
            sample, self.head = "".join(self.head), None
            if looks_binary(sample):
                raise BadInputError(
                    f"{self.what} file {self.path} looks binary, not text (many control "
                    f"characters after decoding)",
                    hint="pass a plain-text file with one sentence per line")


def looks_binary(sample: str) -> bool:
    bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f\v") or ch == "\ufffd")
    return bad > max(8, len(sample) // 100)


def _late_failure(path: Path, what: str, codec: str, forced: str | None,
                  line: int) -> Exception:
    """Re-detect on the whole file (rare: the head sample misled) or a coded error."""
    if forced is None:
        whole = decode_bytes(path.read_bytes(), where=f"{what} file {path}")
        if whole.encoding != codec:
            return EncodingRedetected(path, _codec_of(whole.encoding, path))
    return BadInputError(
        f"{what} file {path} is not valid {codec} at line {line}"
        + ("" if forced else " (the encoding was detected from the start of the file)"),
        hint="convert the whole file to one encoding (UTF-8 is best), e.g. with iconv")


def _codec_of(name: str, path: Path) -> str:
    """The incremental codec for an encoding name decode_bytes returned (BOM names kept)."""
    with path.open("rb") as handle:
        head = handle.read(4)
    for bom, codec, bom_name in _BOMS:
        if head.startswith(bom) and bom_name == name:
            return codec
    return name
