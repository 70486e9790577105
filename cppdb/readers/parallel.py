"""Sentence-aligned zh-en text: two line-aligned files, ``zh ||| en`` files, Tatoeba TSV.

Files may be UTF-8 (with or without BOM), UTF-16 (BOM, or BOM-less detected from NUL
bytes), GBK/GB18030 or Big5: BOMs are sniffed first, then strict UTF-8 is tried, then
charset-normalizer chooses among Chinese encodings.  Empty and overlong lines are not
silently dropped: they are listed in ``ParallelText.problems`` (line + reason) and kept out
of ``ids``/``zh``/``en``; callers write them to a rejected file.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

from cppdb.errors import BadInputError
from cppdb.readers.encoding import decode_bytes
from cppdb.readers.stream import EncodingRedetected, check_text_file, iter_lines

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
    try:
        return list(iter_lines(path, what=what))
    except EncodingRedetected as redo:
        return list(iter_lines(path, what=what, encoding=redo.encoding))


# -- readers ----------------------------------------------------------------------------------
Row = tuple[int, Any, Any, "str | None"]   # 0-based line, zh item, en item, problem or None


def _collect(pairs: Iterable[Row], *, pretokenized: bool, source: str) -> ParallelText:
    ids, zh, en, problems = [], [], [], []
    for line, zh_item, en_item, reason in pairs:
        if reason is not None:
            problems.append(problem_of((line, zh_item, en_item, reason)))
            continue
        ids.append(line)
        zh.append(zh_item)
        en.append(en_item)
    return ParallelText(tuple(ids), tuple(zh), tuple(en), tuple(problems), pretokenized, source)


def problem_of(row: Row) -> Problem:
    line, zh_item, en_item, reason = row
    return Problem(line + 1, str(reason), _as_text(zh_item), _as_text(en_item))


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


def pair_rows(zh_lines: Iterable[str], en_lines: Iterable[str], *, zh_path: Any,
              en_path: Any, max_chars: int) -> Iterator[Row]:
    """Rows of two line-aligned files, streamed; unequal line counts fail at the end."""
    counts = [0, 0]
    for i, (z, e) in enumerate(zip_longest(zh_lines, en_lines)):
        if z is None or e is None:            # one file ended: count the other's rest
            counts = [i + (z is not None), i + (e is not None)]
            counts[z is None] += sum(1 for _ in (en_lines if z is None else zh_lines))
            break
        counts = [i + 1, i + 1]
        yield i, z.strip(), e.strip(), _line_problem(z, e, max_chars)
    if counts[0] != counts[1]:
        raise BadInputError(
            f"zh file {zh_path} has {counts[0]} lines, en file {en_path} has {counts[1]}",
            hint="the files must be line-aligned (line i of one translates line i of the other)")


def pretokenized_rows(lines: Iterable[str], *, max_chars: int) -> Iterator[Row]:
    """Rows of ``zh tokens ||| en tokens`` lines (token tuples)."""
    for i, line in enumerate(lines):
        if line.count(SEPARATOR) != 1:
            reason = (f"expected one '{SEPARATOR}' separator, found "
                      f"{line.count(SEPARATOR)}") if line.strip() else "empty line"
            yield i, line, "", reason
            continue
        zh, en = (side.strip() for side in line.split(SEPARATOR))
        yield i, tuple(zh.split()), tuple(en.split()), _line_problem(zh, en, max_chars)


def tatoeba_rows(lines: Iterable[str], *, max_chars: int, limit: int | None = None
                 ) -> Iterator[Row]:
    """Rows of Tatoeba TSV lines; lines from ``limit`` on are read (errors) but not used."""
    for i, line in enumerate(lines):
        if limit is not None and i >= limit:
            continue
        fields = line.split("\t")
        if len(fields) < 2:
            yield i, "", line, f"expected en<TAB>zh, found {len(fields)} column(s)"
            continue
        en, zh = fields[0].strip(), fields[1].strip()
        yield i, zh, en, _line_problem(zh, en, max_chars)


def read_parallel(zh_path: str | Path, en_path: str | Path, *,
                  max_chars: int = DEFAULT_MAX_CHARS) -> ParallelText:
    """Two line-aligned files; line counts must match."""
    return ParallelSource("pair", (Path(zh_path), Path(en_path)), max_chars,
                          source=f"{zh_path}+{en_path}").collect()


def read_pretokenized(path: str | Path, *, max_chars: int = DEFAULT_MAX_CHARS) -> ParallelText:
    """``zh tokens ||| en tokens`` per line, tokens separated by spaces."""
    return ParallelSource("pretokenized", (Path(path),), max_chars, source=str(path)).collect()


def read_tatoeba_tsv(path: str | Path, *, limit: int | None = None,
                     max_chars: int = DEFAULT_MAX_CHARS) -> ParallelText:
    """Tatoeba's ``cmn.txt``: ``en<TAB>zh<TAB>attribution`` per line (extra columns ignored)."""
    return ParallelSource("tatoeba", (Path(path),), max_chars, source=str(path),
                          line_limit=limit).collect()


@dataclass
class ParallelSource:
    """One parallel input, read as a stream of rows (bounded memory); :meth:`collect`
    materialises it as a :class:`ParallelText` for callers that need every pair at once."""

    kind: str                          # "pair" (--zh/--en), "pretokenized", "tatoeba"
    files: tuple[Path, ...]
    max_chars: int
    source: str = ""
    line_limit: int | None = None      # Tatoeba: raw lines from here on are not used
    limit: int | None = None           # usable pairs (problems after the last one dropped)
    encodings: dict[Path, str] = field(default_factory=dict)   # after EncodingRedetected

    @property
    def pretokenized(self) -> bool:
        return self.kind == "pretokenized"

    def check(self) -> "ParallelSource":
        """Fail now (before a run starts) on missing, non-file or empty inputs."""
        for path, what in zip(self.files, self._whats()):
            check_text_file(path, what)
        return self

    def _whats(self) -> tuple[str, ...]:
        return {"pair": ("zh", "en"), "pretokenized": ("parallel",),
                "tatoeba": ("Tatoeba TSV",)}[self.kind]

    def _lines(self, index: int) -> Iterator[str]:
        path = self.files[index]
        return iter_lines(path, what=self._whats()[index], encoding=self.encodings.get(path))

    def _raw_rows(self) -> Iterator[Row]:
        if self.kind == "pair":
            return pair_rows(self._lines(0), self._lines(1), zh_path=self.files[0],
                             en_path=self.files[1], max_chars=self.max_chars)
        if self.kind == "pretokenized":
            return pretokenized_rows(self._lines(0), max_chars=self.max_chars)
        return tatoeba_rows(self._lines(0), max_chars=self.max_chars, limit=self.line_limit)

    def rows(self) -> Iterator[Row]:
        """Every row in file order, ``limit`` applied as :meth:`ParallelText.head` does.

        May raise :class:`EncodingRedetected` (after :meth:`redetected`, read again)."""
        return _head_rows(self._raw_rows(), self.limit)

    def redetected(self, redo: EncodingRedetected) -> None:
        if redo.path in self.encodings:      # cannot happen twice: forced codecs do not redo
            raise RuntimeError(f"{redo.path} re-detected twice")
        self.encodings[redo.path] = redo.encoding

    def collect(self) -> ParallelText:
        """All rows in memory (small inputs, or a caller whose model needs every pair)."""
        while True:
            try:
                return _collect(self.rows(), pretokenized=self.pretokenized,
                                source=self.source)
            except EncodingRedetected as redo:
                self.redetected(redo)


def _head_rows(rows: Iterator[Row], limit: int | None) -> Iterator[Row]:
    """The first ``limit`` usable rows and the problems before the last of them; the rest
    of the input is still read to its end (its decoding errors and line counts count)."""
    if limit is None:
        yield from rows
        return
    usable, pending = 0, []
    for row in rows:
        if usable >= limit:
            continue
        if row[3] is not None:
            pending.append(row)
            continue
        yield from pending
        pending = []
        usable += 1
        yield row


def open_parallel_input(zh: str | Path | None, en: str | Path | None,
                        parallel: str | Path | None, tatoeba: str | Path | None = None, *,
                        max_chars: int, limit: int | None = None) -> ParallelSource:
    """The streamed parallel text named by exactly one input form (--zh/--en, --parallel,
    --tatoeba), its files checked; nothing is read yet beyond a head sample."""
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
        source = ParallelSource("pair", (Path(zh), Path(en)), max_chars, f"{zh}+{en}")
    elif parallel:
        # a Tatoeba-style TSV passed as --parallel is read as one (no ||| but tabs)
        kind = "tatoeba" if _sniff_tsv(Path(parallel)) else "pretokenized"
        source = ParallelSource(kind, (Path(parallel),), max_chars, str(parallel))
    else:
        source = ParallelSource("tatoeba", (Path(tatoeba),), max_chars, str(tatoeba),
                                line_limit=limit)
    source.limit = limit
    return source.check()


def read_parallel_input(zh: str | Path | None, en: str | Path | None,
                        parallel: str | Path | None, tatoeba: str | Path | None = None, *,
                        max_chars: int, limit: int | None = None
                        ) -> tuple[ParallelText, list[Path]]:
    """The parallel text named by exactly one input form, in memory, and the files it came
    from (streaming callers use :func:`open_parallel_input`)."""
    source = open_parallel_input(zh, en, parallel, tatoeba, max_chars=max_chars, limit=limit)
    return source.collect(), list(source.files)


def _sniff_tsv(path: Path) -> bool:
    if not path.is_file():
        return False             # the reader reports the missing file
    with path.open("rb") as handle:
        head = handle.read(4096).decode("utf-8", errors="replace")
    return "|||" not in head and "\t" in head
