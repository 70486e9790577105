"""Render text as book-like page screenshots and as subtitle bitmaps (tests and the demo).

Pages look like an e-reader screenshot: a running head (book/chapter title) over a rule,
body paragraphs with a two-character first-line indent wrapped at the text width, and the
page number centred in the footer. Subtitle images imitate DVD/Blu-ray bitmaps: white text
with a dark outline on a transparent background (gray + alpha), cropped tight to the text.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cppdb.errors import BackendUnavailableError

DEFAULT_FONTS = (
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
)


def find_cjk_font(font: str | Path | None = None) -> Path:
    """The given font, or the first installed CJK font of :data:`DEFAULT_FONTS`."""
    candidates = [Path(font)] if font else [Path(p) for p in DEFAULT_FONTS]
    for path in candidates:
        if path.is_file():
            return path
    raise BackendUnavailableError(
        f"no CJK font found (looked for {', '.join(map(str, candidates))})",
        hint="install one: apt-get install fonts-wqy-microhei (or pass font=PATH)")


_NO_LINE_START = frozenset("，。！？、；：”’）》」』…⋯")


def _wrap(text: str, font, width: float, indent: str = "") -> list[str]:
    """Wrap a paragraph character by character (Chinese has no spaces to break at)."""
    lines: list[str] = []
    current = indent
    for char in text:
        # closing punctuation hangs in the margin rather than starting a line (kinsoku)
        if current and char not in _NO_LINE_START and font.getlength(current + char) > width:
            lines.append(current)
            current = ""
        current += char
    if current.strip():
        lines.append(current)
    return lines


def render_page_images(text_lines: Sequence[str], out_dir: str | Path, *,
                       font: str | Path | None = None, title: str = "",
                       size: tuple[int, int] = (720, 960), font_size: int = 26,
                       prefix: str = "page") -> list[Path]:
    """Render paragraphs ``text_lines`` onto as many pages as needed; return the PNG paths.

    Each page has the running head ``title`` (default: the first paragraph), the body and a
    page-number footer. Files are ``<prefix>-001.png``, ``<prefix>-002.png``, ...
    """
    from PIL import Image, ImageDraw, ImageFont

    font_path = find_cjk_font(font)
    body = ImageFont.truetype(str(font_path), font_size)
    small = ImageFont.truetype(str(font_path), max(12, int(font_size * 0.62)))
    width, height = size
    margin = int(width * 0.09)
    line_step = int(font_size * 1.7)
    top, bottom = int(height * 0.11), height - int(height * 0.11)
    rows: list[str] = []
    for paragraph in text_lines:
        if paragraph.strip():
            rows.extend(_wrap(paragraph.strip(), body, width - 2 * margin, indent="\u3000\u3000"))
    per_page = max(1, (bottom - top) // line_step)
    head = title or (text_lines[0].strip() if text_lines else "")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for number, start in enumerate(range(0, max(len(rows), 1), per_page), start=1):
        page = Image.new("RGB", size, (250, 248, 240))
        draw = ImageDraw.Draw(page)
        draw.text((width / 2, int(height * 0.045)), head[:30], font=small, fill=(120, 120, 120),
                  anchor="mt")
        rule_y = int(height * 0.045) + int(font_size * 0.9)
        draw.line([(margin, rule_y), (width - margin, rule_y)], fill=(180, 180, 180), width=1)
        for index, row in enumerate(rows[start:start + per_page]):
            draw.text((margin, top + index * line_step), row, font=body, fill=(30, 30, 30))
        draw.text((width / 2, height - int(height * 0.05)), str(number), font=small,
                  fill=(120, 120, 120), anchor="mb")
        path = out_dir / f"{prefix}-{number:03d}.png"
        page.save(path)
        paths.append(path)
    return paths


def render_subtitle_image(text: str, path: str | Path, *, font: str | Path | None = None,
                          font_size: int = 44, outline: int = 3) -> Path:
    """White text (lines separated by ``\\n``) with a dark outline on transparency, cut tight."""
    from PIL import Image, ImageDraw, ImageFont

    face = ImageFont.truetype(str(find_cjk_font(font)), font_size)
    lines = text.split("\n")
    line_step = int(font_size * 1.25)
    width = int(max(face.getlength(line) for line in lines)) + 4 * outline + 8
    canvas = Image.new("LA", (width, line_step * len(lines) + 4 * outline + 8), (0, 0))
    draw = ImageDraw.Draw(canvas)
    for index, line in enumerate(lines):
        draw.text((width / 2, 2 * outline + 4 + index * line_step), line, font=face,
                  fill=(218, 255), stroke_width=outline, stroke_fill=(16, 255), anchor="ma")
    bbox = canvas.getchannel("A").getbbox()
    out = canvas.crop(bbox) if bbox else canvas
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out.save(path)
    return path
