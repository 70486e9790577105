"""Sentence-aligned zh-en text: two line-aligned files, ``zh ||| en`` files, Tatoeba TSV.

Files may be UTF-8 (with or without BOM), UTF-16 (BOM, or BOM-less detected from NUL
bytes), GBK/GB18030 or Big5: BOMs are sniffed first, then strict UTF-8 is tried, then
charset-normalizer chooses among Chinese encodings.  Empty and overlong lines are not
silently dropped: they are listed in ``ParallelText.problems`` (line + reason) and kept out
of ``ids``/``zh``/``en``; callers write them to a rejected file.
"""
from __future__ import annotations

import codecs
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cppdb.errors import BadInputError
from cppdb.readers.encoding import decode_bytes

#: encodings charset-normalizer may choose among (Chinese text and its usual companions)
CANDIDATE_ENCODINGS = ("gb18030", "big5", "utf_16", "utf_8", "cp1252")
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"),
         (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
DEFAULT_MAX_CHARS = 2000
SEPARATOR = "|||"


@dataclass(frozen=True)
class Problem:
    """A line kept out of processing: 1-based ``line`` number, ``reason``, raw sides."""

    line: int
    reason: str
    zh: str = ""
    en: str = ""

    def to_record(self, source: str = "") -> dict[str, Any]:
        return {"line": self.line, "id": self.line - 1, "reason": self.reason,
                "zh": self.zh[:500], "en": self.en[:500], "source": source}


@dataclass(frozen=True)
class ParallelText:
    """Usable sentence pairs with their original 0-based line numbers, plus problems.

    ``zh``/``en`` items are strings (raw text) or tuples of tokens (pre-tokenised input).
    """

    ids: tuple[int, ...]
    zh: tuple[Any, ...]
    en: tuple[Any, ...]
    problems: tuple[Problem, ...] = ()
    pretokenized: bool = False
    source: str = ""

    def __post_init__(self) -> None:
        if not len(self.ids) == len(self.zh) == len(self.en):
            raise ValueError(f"ParallelText: {len(self.ids)} ids, {len(self.zh)} zh, "
                             f"{len(self.en)} en items")

    def __len__(self) -> int:
        return len(self.ids)

    def head(self, n: int) -> "ParallelText":
        """The first ``n`` usable pairs (problems on later lines are left out)."""
        last = self.ids[n - 1] if 0 < n <= len(self.ids) else (self.ids[-1] if self.ids else -1)
        return ParallelText(self.ids[:n], self.zh[:n], self.en[:n],
                            tuple(p for p in self.problems if p.line - 1 <= last),
                            self.pretokenized, self.source)


# -- decoding -------------------------------------------------------------------------------
def detect_encoding(data: bytes, path: Path | str = "<bytes>") -> str:
    """The encoding :func:`cppdb.readers.encoding.decode_bytes` detects for ``data``."""
    return decode_bytes(data, where=str(path)).encoding


def read_lines(path: str | Path, *, what: str = "input") -> list[str]:
    """Decode a text file into lines (no line-end characters); clear errors for bad files."""
    path = Path(path)
    if not path.exists():
        raise BadInputError(f"{what} file {path} does not exist", hint="check the path")
    if not path.is_file():
        raise BadInputError(f"{what} path {path} is not a regular file", hint="pass a file")
    data = path.read_bytes()
    if not data.strip():
        raise BadInputError(f"{what} file {path} is empty",
                            hint="pass a file with one sentence per line")
    decoded = decode_bytes(data, where=f"{what} file {path}")
    encoding, text = decoded.encoding, decoded.text.removeprefix("\ufeff")
    if _looks_binary(text):
        raise BadInputError(f"{what} file {path} looks binary, not text "
                            f"(many control characters after decoding as {encoding})",
                            hint="pass a plain-text file with one sentence per line")
    # split on line ends only: str.splitlines() would also split on U+2028, \x1c, \x85 ...
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":  # the final line end does not start another line
        lines.pop()
    return lines


def _looks_binary(text: str) -> bool:
    sample = text[:8192]
    bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f\v") or ch == "\ufffd")
    return bad > max(8, len(sample) // 100)


# -- readers ----------------------------------------------------------------------------------
def _collect(pairs: Iterable[tuple[int, Any, Any, str | None]], *, pretokenized: bool,
             source: str) -> ParallelText:
    ids, zh, en, problems = [], [], [], []
    for line, zh_item, en_item, reason in pairs:
        if reason is not None:
            problems.append(Problem(line + 1, reason, _as_text(zh_item), _as_text(en_item)))
            continue
        ids.append(line)
        zh.append(zh_item)
        en.append(en_item)
    return ParallelText(tuple(ids), tuple(zh), tuple(en), tuple(problems), pretokenized, source)


def _as_text(item: Any) -> str:
    return " ".join(item) if isinstance(item, tuple) else str(item)


def _line_problem(zh: str, en: str, max_chars: int) -> str | None:
    if not zh.strip() and not en.strip():
        return "empty line (both sides)"
    if not zh.strip():
        return "empty zh side"
    if not en.strip():
        return "empty en side"
    longest = max(len(zh), len(en))
    if longest > max_chars:
        side = "zh" if len(zh) >= len(en) else "en"
        return f"{side} side has {longest} characters (limit annotate.max_chars={max_chars})"
    return None


def read_parallel(zh_path: str | Path, en_path: str | Path, *,
                  max_chars: int = DEFAULT_MAX_CHARS) -> ParallelText:
    """Two line-aligned files; line counts must match."""
    zh_lines = read_lines(zh_path, what="zh")
    en_lines = read_lines(en_path, what="en")
    if len(zh_lines) != len(en_lines):
        raise BadInputError(
            f"zh file {zh_path} has {len(zh_lines)} lines, en file {en_path} has "
            f"{len(en_lines)}",
            hint="the files must be line-aligned (line i of one translates line i of the other)")
    return _collect(((i, z.strip(), e.strip(), _line_problem(z, e, max_chars))
                     for i, (z, e) in enumerate(zip(zh_lines, en_lines))),
                    pretokenized=False, source=f"{zh_path}+{en_path}")


def read_pretokenized(path: str | Path, *, max_chars: int = DEFAULT_MAX_CHARS) -> ParallelText:
    """``zh tokens ||| en tokens`` per line, tokens separated by spaces."""
    def rows() -> Iterable[tuple[int, Any, Any, str | None]]:
        for i, line in enumerate(read_lines(path, what="parallel")):
            if line.count(SEPARATOR) != 1:
                reason = (f"expected one '{SEPARATOR}' separator, found "
                          f"{line.count(SEPARATOR)}") if line.strip() else "empty line"
                yield i, line, "", reason
                continue
            zh, en = (side.strip() for side in line.split(SEPARATOR))
            yield i, tuple(zh.split()), tuple(en.split()), _line_problem(zh, en, max_chars)
    return _collect(rows(), pretokenized=True, source=str(path))


def read_tatoeba_tsv(path: str | Path, *, limit: int | None = None,
                     max_chars: int = DEFAULT_MAX_CHARS) -> ParallelText:
    """Tatoeba's ``cmn.txt``: ``en<TAB>zh<TAB>attribution`` per line (extra columns ignored)."""
    def rows() -> Iterable[tuple[int, Any, Any, str | None]]:
        for i, line in enumerate(read_lines(path, what="Tatoeba TSV")):
            if limit is not None and i >= limit:
                return
            fields = line.split("\t")
            if len(fields) < 2:
                yield i, "", line, f"expected en<TAB>zh, found {len(fields)} column(s)"
                continue
            en, zh = fields[0].strip(), fields[1].strip()
            yield i, zh, en, _line_problem(zh, en, max_chars)
    return _collect(rows(), pretokenized=False, source=str(path))


def read_parallel_input(zh: str | Path | None, en: str | Path | None,
                        parallel: str | Path | None, tatoeba: str | Path | None = None, *,
                        max_chars: int, limit: int | None = None
                        ) -> tuple[ParallelText, list[Path]]:
    """The parallel text named by exactly one input form (--zh/--en, --parallel, --tatoeba),
    and the files it came from: what every command that reads parallel text calls."""
    forms = [f for f, given in (("--zh/--en", zh or en), ("--parallel", parallel),
                                ("--tatoeba", tatoeba)) if given]
    if len(forms) != 1:
        raise BadInputError(
            "give exactly one input: --zh FILE --en FILE, --parallel FILE or --tatoeba FILE"
            + (f" (got {', '.join(forms)})" if forms else ""),
            hint="e.g. cppdb annotate --zh data/parallel/sample.zh "
                 "--en data/parallel/sample.en -o runs/sample")
    if zh or en:
        if not (zh and en):
            raise BadInputError("--zh and --en must be given together",
                                hint="pass both line-aligned files")
        text, files = read_parallel(zh, en, max_chars=max_chars), [Path(zh), Path(en)]
    elif parallel:
        # a Tatoeba-style TSV passed as --parallel is read as one (no ||| but tabs)
        reader = read_tatoeba_tsv if _sniff_tsv(Path(parallel)) else read_pretokenized
        text, files = reader(parallel, max_chars=max_chars), [Path(parallel)]
    elif tatoeba:
        text, files = read_tatoeba_tsv(tatoeba, limit=limit, max_chars=max_chars), [Path(tatoeba)]
    return (text.head(limit) if limit is not None else text), files


def _sniff_tsv(path: Path) -> bool:
    if not path.is_file():
        return False             # the reader reports the missing file
    with path.open("rb") as handle:
        head = handle.read(4096).decode("utf-8", errors="replace")
    return "|||" not in head and "\t" in head
