"""EPUB reader: the spine's XHTML documents, in reading order, cut into paragraphs.

A paragraph is the text of a *leaf block* element (``p``, ``h1``–``h6``, ``li``, ``div``,
``blockquote``, ``td``, ``dd``, ``dt``, ``pre`` without block children); ``<br>`` inside a
block starts a new paragraph. Ruby annotations (``rt``/``rp``), scripts and styles are
dropped. A spine item that cannot be parsed is skipped and reported in ``problems``.
"""
from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

from cppdb.errors import BackendUnavailableError, BadInputError

BLOCK_TAGS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "div", "blockquote",
                        "td", "th", "dd", "dt", "pre", "section", "article", "figcaption"})
DROP_TAGS = ("rt", "rp", "script", "style", "head")


@dataclass(frozen=True)
class EpubContent:
    paragraphs: tuple[str, ...]
    problems: tuple[tuple[str, str], ...]
    title: str


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def xhtml_paragraphs(content: bytes) -> list[str]:
    """Paragraph texts of one XHTML document (raises lxml errors on garbage)."""
    import lxml.etree
    import lxml.html

    root = lxml.html.document_fromstring(content)
    for element in list(root.iter()):
        if _local(element.tag) in DROP_TAGS:
            element.drop_tree()
        elif _local(element.tag) == "br":
            element.tail = "\n" + (element.tail or "")
    body = root.find("body")
    scope = body if body is not None else root
    paragraphs: list[str] = []
    for element in scope.iter():
        if _local(element.tag) not in BLOCK_TAGS:
            continue
        if any(_local(child.tag) in BLOCK_TAGS for child in element.iterdescendants()):
            # text directly inside a container (not inside its block children) still counts
            loose = (element.text or "").strip()
            if loose:
                paragraphs.append(loose)
            continue
        for line in lxml.etree.tostring(element, method="text", encoding="unicode",
                                        with_tail=False).split("\n"):
            if line.strip():
                paragraphs.append(" ".join(line.split()))
    return paragraphs


def read_epub(path: Path) -> EpubContent:
    """Read an EPUB file into paragraphs in spine order."""
    try:
        import ebooklib
        from ebooklib import epub
    except ImportError as exc:
        raise BackendUnavailableError("reading EPUB needs the ebooklib package",
                                      hint="pip install ebooklib") from exc
    try:
        book = epub.read_epub(str(path), options={"ignore_ncx": True})
    except Exception as exc:  # noqa: BLE001 - ebooklib/lxml raise many types on broken files
        # (XMLSyntaxError, AttributeError on an empty container.xml, TypeError ...)
        raise BadInputError(f"{path} is not a readable EPUB: {type(exc).__name__}: {exc}",
                            hint="check that the file is a complete .epub (a zip with "
                                 "META-INF/container.xml)") from exc
    paragraphs: list[str] = []
    problems: list[tuple[str, str]] = []
    for idref, _linear in book.spine:
        item = book.get_item_with_id(idref)
        if item is None:
            problems.append((f"{path}:{idref}", "spine item missing from the manifest"))
            continue
        if item.get_type() != ebooklib.ITEM_DOCUMENT or isinstance(item, epub.EpubNav):
            continue
        try:
            paragraphs.extend(xhtml_paragraphs(item.get_content()))
        except (ValueError, TypeError) as exc:  # lxml's ParserError is a ValueError
            problems.append((f"{path}:{item.get_name()}", f"unparsable XHTML: {exc}"))
    if not paragraphs:
        raise BadInputError(f"{path} contains no text paragraphs",
                            hint="an image-only EPUB needs OCR: extract its pages as images")
    titles = book.get_metadata("DC", "title")
    return EpubContent(tuple(paragraphs), tuple(problems), titles[0][0] if titles else "")
