"""Decode the bytes of a Chinese text or subtitle file: BOMs, UTF-8/16/32, GB18030, Big5.

Order of detection (first match wins):

1. a byte-order mark (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE);
2. UTF-16 without BOM, recognised by NUL bytes on every other position;
3. strict UTF-8;
4. the legacy Chinese code pages that decode the bytes *strictly* — GB18030 (a superset of
   GBK and GB2312) and Big5 (cp950, then Big5-HKSCS). When several decode, the one whose
   characters are more often *common* characters wins: GB2312's 6,763 hanzi for GB18030,
   Big5's level-1 block (0xA440–0xC67E, 5,401 common characters) for Big5. Wrong guesses
   decode into rare characters, so the score separates them even on short cues;
5. charset-normalizer for anything else (e.g. Latin-1 English).

A file that none of these decode is a :class:`BadInputError` naming the encodings tried.
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


@dataclass(frozen=True)
class DecodedText:
    text: str
    encoding: str


def _is_han(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def _common_share(text: str, encoding: str) -> float:
    """Share of the Han characters of ``text`` that are common in ``encoding``'s charset."""
    han = [c for c in text if _is_han(c)]
    if not han:
        return 0.0
    common = 0
    for char in han:
        if encoding == "gb18030":
            try:
                char.encode("gb2312")
                common += 1
            except UnicodeEncodeError:
                pass
        else:
            try:
                code = int.from_bytes(char.encode("cp950"), "big")
            except UnicodeEncodeError:
                continue
            common += _BIG5_COMMON[0] <= code <= _BIG5_COMMON[1]
    return common / len(han)


def _looks_like_utf16(data: bytes) -> str | None:
    sample = data[:4000]
    if len(sample) < 4:
        return None
    even_nuls = sample[0::2].count(0) / len(sample[0::2])
    odd_nuls = sample[1::2].count(0) / len(sample[1::2])
    # ASCII-heavy UTF-16 has NULs on one side; CJK-only UTF-16 has none, so also try a
    # strict decode whose result is mostly Han characters.
    if odd_nuls > 0.3 and even_nuls < 0.05:
        return "utf-16-le"
    if even_nuls > 0.3 and odd_nuls < 0.05:
        return "utf-16-be"
    return None


def _try(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def _legacy_chinese(data: bytes) -> DecodedText | None:
    candidates = [(enc, text) for enc in LEGACY_CHINESE
                  if (text := _try(data, enc)) is not None]
    if not candidates:
        return None
    scored = [(_common_share(text, enc), -rank, enc, text)
              for rank, (enc, text) in enumerate(candidates)]
    _, _, enc, text = max(scored)
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
    if (utf16 := _looks_like_utf16(data)) and (text := _try(data, utf16)) is not None:
        return DecodedText(text, utf16)
    if (text := _try(data, "utf-8")) is not None:
        return DecodedText(text, "utf-8")
    if (legacy := _legacy_chinese(data)) is not None:
        return legacy
    return _fallback(data, where)


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
