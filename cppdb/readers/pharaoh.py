"""Pharaoh word alignments: ``i-j i-j …`` per sentence pair (0-based, source index first) —
the one reader and writer of the format.  (The gold files' DeNero extension with sure and
possible links, ``i-j-S`` / ``i-jp``, is read in ``align/words/gold.py``.)"""
from __future__ import annotations

from collections.abc import Iterable

from cppdb.errors import BadInputError

Link = tuple[int, int]
HINT = "links are 0-based 'zh-en' pairs such as 0-0 1-2"


def parse_link(item: str) -> Link | None:
    """``"3-5"`` → (3, 5); None when the item is not a link."""
    left, sep, right = item.partition("-")
    if not sep or not left.isdecimal() or not right.isdecimal():
        return None
    return int(left), int(right)


def parse_links(line: str | Iterable[str], where: str) -> list[Link]:
    """Every link of a line (or of its already split items); a bad item is a coded error that
    names ``where`` (file and line) and the item."""
    items = line.split() if isinstance(line, str) else line
    links = []
    for item in items:
        link = parse_link(item)
        if link is None:
            raise BadInputError(f"{where}: '{item}' is not a Pharaoh link (i-j)", hint=HINT)
        links.append(link)
    return links


def format_links(links: Iterable[Link]) -> str:
    """Pharaoh line ``i-j i-j`` (0-based, zh first), sorted."""
    return " ".join(f"{i}-{j}" for i, j in sorted(links))
