"""Decode the bytes of a Chinese text or subtitle file: BOMs, UTF-8/16/32, GB18030, Big5.

Order of detection (first match wins):

1. a byte-order mark (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE);
2. UTF-16 without BOM, recognised by NUL bytes on every other position (ASCII content);
3. strict UTF-8;
4. every legacy decoding that succeeds *strictly* — GB18030 (a superset of GBK/GB2312),
   Big5 (cp950, Big5-HKSCS) and BOM-less UTF-16 LE/BE (all-CJK text has no NULs) — is scored
   by plausibility: common hanzi (GB2312's 6,763 or Big5 level 1's 5,401), ASCII and CJK
   punctuation score 1, rare hanzi 0.3, private-use/control characters 0. Wrong guesses
   decode into rare or private-use characters, so the score separates them even on short
   cues; ties go to GB18030, then Big5;
5. charset-normalizer for anything else (e.g. Latin-1 English).

A file that none of these decode, or that has NUL bytes (outside UTF-16) or many control
characters, is a :class:`BadInputError`.
"""
from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path

from cppdb.errors import BadInputError

_BOMS = (  # longest first: the UTF-32 LE BOM starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le", "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig", "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "utf-16"),
)
LEGACY_CHINESE = ("gb18030", "cp950", "big5hkscs")
_BIG5_COMMON = (0xA440, 0xC67E)
#: below this plausibility a legacy Chinese decoding is rejected (falls to charset-normalizer)
MIN_PLAUSIBILITY = 0.6


@dataclass(frozen=True)
class DecodedText:
    text: str
    encoding: str


def _is_han(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def _is_common_han(char: str) -> bool:
    """In GB2312 (6,763 common simplified) or Big5 level 1 (5,401 common traditional)."""
    try:
        char.encode("gb2312")
        return True
    except UnicodeEncodeError:
        pass
    try:
        code = int.from_bytes(char.encode("cp950"), "big")
    except UnicodeEncodeError:
        return False
    return _BIG5_COMMON[0] <= code <= _BIG5_COMMON[1]


def _plausibility(text: str) -> float:
    """Mean per-character plausibility: common hanzi, ASCII and CJK punctuation score 1,
    rare hanzi 0.3, private-use, control and other characters 0 (wrong decodings)."""
    total = score = 0.0
    for char in text:
        if char.isspace():
            continue
        total += 1
        if " " < char <= "~" or "\u3000" <= char <= "\u303f" or "\uff00" <= char <= "\uffef" \
                or char in "“”‘’…⋯—·":
            score += 1
        elif _is_han(char):
            score += 1 if _is_common_han(char) else 0.3
    return score / total if total else 0.0


def _looks_like_utf16(data: bytes) -> str | None:
    """UTF-16 without BOM whose text has ASCII (NULs on one side of each code unit)."""
    sample = data[:4000]
    if len(sample) < 4:
        return None
    even_nuls = sample[0::2].count(0) / len(sample[0::2])
    odd_nuls = sample[1::2].count(0) / len(sample[1::2])
    # GBK/Big5/UTF-8 text has no NUL bytes at all; all-CJK UTF-16 has them only in the
    # few ASCII code units (line ends, digits), so a lopsided NUL count is enough.
    # (a CJK code unit such as U+4E00 may put a NUL on the other side now and then).
    if odd_nuls > 0.2 and even_nuls < 0.05 or odd_nuls > 0 and odd_nuls >= 2 * even_nuls:
        return "utf-16-le"
    if even_nuls > 0.2 and odd_nuls < 0.05 or even_nuls > 0 and even_nuls >= 2 * odd_nuls:
        return "utf-16-be"
    return None


def _try(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def _legacy_chinese(data: bytes) -> DecodedText | None:
    """The most plausible strict decoding among GB18030, Big5 and BOM-less UTF-16."""
    encodings = LEGACY_CHINESE + (("utf-16-le", "utf-16-be") if len(data) % 2 == 0 else ())
    candidates = [(enc, text) for enc in encodings if (text := _try(data, enc)) is not None]
    if not candidates:
        return None
    scored = [(_plausibility(text[:5000]), -rank, enc, text)
              for rank, (enc, text) in enumerate(candidates)]
    score, _, enc, text = max(scored)
    if score < MIN_PLAUSIBILITY:  # mostly rare/odd characters: not Chinese after all
        return None
    return DecodedText(text, enc)


def decode_bytes(data: bytes, *, where: str = "input", encoding: str = "auto") -> DecodedText:
    """Decode ``data``; ``encoding`` other than ``"auto"`` is used as given (strictly)."""
    if encoding != "auto":
        text = _try(data, encoding)
        if text is None:
            raise BadInputError(f"{where} cannot be decoded as {encoding}",
                                hint="pass the right encoding, or use encoding = \"auto\"")
        return DecodedText(text.lstrip("\ufeff"), encoding)
    for bom, codec, name in _BOMS:
        if data.startswith(bom):
            text = _try(data[len(bom):], codec)
            if text is None:
                raise BadInputError(f"{where} starts with a {name} byte-order mark but is not "
                                    f"valid {name}", hint="re-save the file in one encoding")
            return DecodedText(text, name)
    if utf16 := _looks_like_utf16(data):
        # U+3000 (ideographic space) also makes NULs, so let plausibility pick the order
        orders = [utf16] + [e for e in ("utf-16-le", "utf-16-be") if e != utf16]
        decoded = [(_plausibility(t[:5000]), -rank, enc, t) for rank, enc in enumerate(orders)
                   if (t := _try(data, enc)) is not None]
        if decoded:
            _, _, enc, text = max(decoded)
            return DecodedText(text, enc)
    if b"\x00" in data[:4000]:
        raise _binary(where)
    if (text := _try(data, "utf-8")) is not None:
        return _checked(DecodedText(text, "utf-8"), where)
    if (legacy := _legacy_chinese(data)) is not None:
        return _checked(legacy, where)
    return _checked(_fallback(data, where), where)


def _binary(where: str) -> BadInputError:
    return BadInputError(f"{where} looks binary, not like a text file",
                         hint="pass a text/subtitle file (images go through OCR)")


def _checked(decoded: DecodedText, where: str) -> DecodedText:
    sample = decoded.text[:5000]
    control = sum(1 for c in sample if ord(c) < 32 and c not in "\t\n\r\x0c")
    if sample and control / len(sample) > 0.05:
        raise _binary(where)
    return decoded


def _fallback(data: bytes, where: str) -> DecodedText:
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None or best.encoding is None:
        raise BadInputError(
            f"{where}: cannot detect the text encoding (tried BOMs, UTF-16, UTF-8, "
            f"{', '.join(LEGACY_CHINESE)}, charset-normalizer)",
            hint="convert the file to UTF-8, or set readers.encoding to its encoding")
    return DecodedText(str(best), best.encoding)


def read_text_bytes(path: Path, *, encoding: str = "auto") -> DecodedText:
    """Read and decode a file; empty files are a :class:`BadInputError`."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not data.strip():
        raise BadInputError(f"{path} is empty", hint="remove the file or give it content")
    return decode_bytes(data, where=str(path), encoding=encoding)
