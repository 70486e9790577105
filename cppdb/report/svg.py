"""Inline SVG charts (no JavaScript library, no network): bars, histograms, scatter plots.

Every chart is a ``<figure class="plot">`` whose ``data-points`` attribute counts the marks
drawn, so a test (or a person with the DOM inspector) can tell an empty plot from a full one.
Each mark carries a ``<title>`` (the browser's tooltip) with its exact value.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

WIDTH, BAR_H, PAD_L, PAD_R = 720, 22, 230, 80
PALETTE = ("#3b6ea8", "#d9822b", "#4f9a55", "#b5475b", "#7a5ba8", "#8c8c8c")


def figure(kind: str, title: str, svg: str, points: int, note: str = "") -> str:
    caption = f"<figcaption>{escape(title)}</figcaption>"
    body = svg if points else '<p class="empty">no data in this run</p>'
    extra = f'<p class="note">{escape(note)}</p>' if note else ""
    return (f'<figure class="plot" data-kind="{kind}" data-points="{points}">{caption}'
            f"{body}{extra}</figure>")


def _fmt(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.3g}"


def bars(title: str, items: Sequence[tuple[str, float]], note: str = "",
         colors: Sequence[str] | None = None) -> str:
    """Horizontal bars, one per (label, value), in the given order (a funnel when ordered)."""
    items = [(label, float(v)) for label, v in items if v is not None]
    top = max((v for _, v in items), default=0.0) or 1.0
    span = WIDTH - PAD_L - PAD_R
    rows = []
    for i, (label, value) in enumerate(items):
        y = 4 + i * (BAR_H + 4)
        w = max(1.0, span * value / top)
        color = (colors or PALETTE)[i % len(colors or PALETTE)] if colors else PALETTE[0]
        rows.append(
            f'<text x="{PAD_L - 6}" y="{y + 15}" text-anchor="end">{escape(label)}</text>'
            f'<rect class="mark" x="{PAD_L}" y="{y}" width="{w:.1f}" height="{BAR_H}" '
            f'fill="{color}"><title>{escape(label)}: {_fmt(value)}</title></rect>'
            f'<text x="{PAD_L + w + 4:.1f}" y="{y + 15}">{_fmt(value)}</text>')
    height = 8 + len(items) * (BAR_H + 4)
    svg = (f'<svg viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
           f'role="img">{"".join(rows)}</svg>')
    return figure("bars", title, svg, len(items), note)


def _axis(x0: float, x1: float, left: int, span: int, base: int) -> str:
    ticks = []
    for k in range(5):
        value = x0 + (x1 - x0) * k / 4
        x = left + span * k / 4
        ticks.append(f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}" stroke="#555"/>'
                     f'<text x="{x:.1f}" y="{base + 16}" text-anchor="middle">{value:.3g}</text>')
    return (f'<line x1="{left}" y1="{base}" x2="{left + span}" y2="{base}" stroke="#555"/>'
            + "".join(ticks))


def histogram(title: str, values: Sequence[float], bins: int = 30,
              cutoffs: Sequence[tuple[str, float]] = (), note: str = "",
              counts: Sequence[tuple[float, float, int]] | None = None) -> str:
    """A histogram of ``values`` (or of precomputed ``counts`` = (lo, hi, n) bins), with
    labelled vertical lines at ``cutoffs`` (e.g. the score cut-off of each tier)."""
    values = [float(v) for v in values if v is not None and math.isfinite(v)]
    if counts is None:
        if not values:
            return figure("histogram", title, "", 0, note)
        lo, hi = min(values), max(values)
        hi = hi if hi > lo else lo + 1.0
        width = (hi - lo) / bins
        tally = [0] * bins
        for v in values:
            tally[min(bins - 1, int((v - lo) / width))] += 1
        counts = [(lo + i * width, lo + (i + 1) * width, n) for i, n in enumerate(tally)]
    if not counts or not sum(n for *_, n in counts):
        return figure("histogram", title, "", 0, note)
    lo, hi = counts[0][0], counts[-1][1]
    left, span, height, base = 50, WIDTH - 70, 190, 160
    peak = max(n for *_, n in counts) or 1
    scale = span / ((hi - lo) or 1.0)
    marks = []
    for a, b, n in counts:
        if not n:
            continue
        h = 140 * n / peak
        marks.append(f'<rect class="mark" x="{left + (a - lo) * scale:.1f}" y="{base - h:.1f}" '
                     f'width="{max(1.0, (b - a) * scale - 1):.1f}" height="{h:.1f}" '
                     f'fill="{PALETTE[0]}"><title>[{a:.3g}, {b:.3g}): {n}</title></rect>')
    for i, (label, x) in enumerate(cutoffs):
        if x is None or not lo <= x <= hi:
            continue
        px = left + (x - lo) * scale
        marks.append(f'<line class="cutoff" x1="{px:.1f}" y1="14" x2="{px:.1f}" y2="{base}" '
                     f'stroke="{PALETTE[1 + i % 4]}" stroke-dasharray="4 3" stroke-width="2">'
                     f'<title>{escape(label)} cut-off: {x:.3f}</title></line>'
                     f'<text x="{px + 3:.1f}" y="{12 + 12 * (i % 4)}" fill="{PALETTE[1 + i % 4]}">'
                     f'{escape(label)}</text>')
    svg = (f'<svg viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img">'
           f'{"".join(marks)}{_axis(lo, hi, left, span, base)}</svg>')
    return figure("histogram", title, svg, sum(1 for *_, n in counts if n), note)


def scatter(title: str, points: Sequence[tuple[float, float, int]], labels: Sequence[str],
            x_label: str, y_label: str, note: str = "") -> str:
    """Points (x, y, class) with one colour per class; ``labels`` names the classes."""
    if not points:
        return figure("scatter", title, "", 0, note)
    size, left, base = 300, 50, 320
    x_hi = max(p[0] for p in points) or 1
    y_hi = max(p[1] for p in points) or 1
    marks = [f'<circle class="mark" cx="{left + size * x / x_hi:.1f}" '
             f'cy="{base - size * y / y_hi:.1f}" r="{3.5 if c else 2.2}" '
             f'fill="{PALETTE[c % len(PALETTE)]}"><title>{labels[c]} ({x:g}, {y:g})</title>'
             f"</circle>" for x, y, c in sorted(points, key=lambda p: p[2])]
    legend = "".join(f'<circle cx="{left + size + 30}" cy="{30 + 18 * i}" r="5" '
                     f'fill="{PALETTE[i % len(PALETTE)]}"/><text x="{left + size + 40}" '
                     f'y="{34 + 18 * i}">{escape(name)}</text>' for i, name in enumerate(labels))
    axes = (f'<line x1="{left}" y1="{base}" x2="{left + size}" y2="{base}" stroke="#555"/>'
            f'<line x1="{left}" y1="{base}" x2="{left}" y2="{base - size}" stroke="#555"/>'
            f'<text x="{left + size / 2}" y="{base + 28}" text-anchor="middle">'
            f'{escape(x_label)} (0–{x_hi:g})</text>'
            f'<text x="14" y="{base - size / 2}" transform="rotate(-90 14 {base - size / 2})" '
            f'text-anchor="middle">{escape(y_label)} (0–{y_hi:g})</text>')
    svg = (f'<svg viewBox="0 0 {WIDTH} {base + 40}" width="{WIDTH}" height="{base + 40}" '
           f'role="img">{axes}{"".join(marks)}{legend}</svg>')
    return figure("scatter", title, svg, len(points), note)


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[object]],
          kind: str = "table", note: str = "") -> str:
    """A plain sortable table (the page script sorts on a header click)."""
    head = "".join(f"<th>{escape(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{escape(_cell(v))}</td>" for v in row) + "</tr>"
                   for row in rows)
    html = f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    return figure(kind, title, html, len(rows), note)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)
