"""``cppdb report RUN -o report.html``: one self-contained HTML page with a run's plots.

The page has no external resource (inline CSS, inline SVG, a 30-line inline script that
sorts tables and records script errors), so it opens offline and can be mailed around.
Sections: per-stage counts (all runs); score histograms with tier cut-offs, tier sizes, the
automatic evaluation table and sample pairs (ranked runs); BAM anchor scatter and bead-cost
histogram per document pair, OCR confidences (monolingual runs); compression-rate histogram
and rejection reasons (compression runs).
"""
from __future__ import annotations

import json
from html import escape
from pathlib import Path

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.io import write_text_atomic
from cppdb.report import sections

_STYLE = """
body{font:14px/1.45 system-ui,'WenQuanYi Micro Hei',sans-serif;margin:24px auto;max-width:980px;
color:#222;padding:0 16px}h1{font-size:22px}h2{font-size:17px;border-bottom:1px solid #ccc;
margin-top:28px}figure{margin:14px 0;padding:8px;border:1px solid #e3e3e3;border-radius:4px}
figcaption{font-weight:600;margin-bottom:6px}svg text{font-size:11px;fill:#333}
table{border-collapse:collapse;font-size:12px;width:100%}td,th{border:1px solid #ddd;
padding:3px 6px;text-align:left}th{background:#f2f2f2;cursor:pointer}.note{color:#666;
font-size:12px}.empty{color:#a33}code{background:#f4f4f4;padding:0 3px;word-break:break-all}
"""

# sorts a table on a header click; records script errors in data-script-errors
_SCRIPT = """
(function(){var root=document.documentElement;var errors=0;
window.addEventListener('error',function(){errors+=1;root.dataset.scriptErrors=errors;});
function cell(row,i){var t=row.children[i].textContent;var n=parseFloat(t.replace(/,/g,''));
return isNaN(n)?t:n;}
document.querySelectorAll('table.sortable th').forEach(function(th,i){
th.addEventListener('click',function(){var body=th.closest('table').tBodies[0];
var rows=Array.prototype.slice.call(body.rows);var asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
rows.sort(function(a,b){var x=cell(a,i),y=cell(b,i);return (x>y?1:x<y?-1:0)*(asc?1:-1);});
rows.forEach(function(r){body.appendChild(r);});});});
var plots=document.querySelectorAll('figure.plot');var filled=0;
plots.forEach(function(f){if(parseInt(f.dataset.points,10)>0){filled+=1;}});
root.dataset.plots=plots.length;root.dataset.plotsWithData=filled;
root.dataset.scriptErrors=errors;root.dataset.ready='1';})();
"""


def _kind(run: Path) -> str:
    if (run / S.COMPRESSION_REPORT_FILE).exists() and (run / S.COMPRESSIONS_FILE).exists():
        return "compression"
    if (run / S.BEADS_FILE).exists():
        return "monolingual"
    if (run / S.PHRASE_PAIRS_FILE).exists() or (run / S.PATTERN_PAIRS_FILE).exists():
        return "bilingual"
    raise BadInputError(f"{run} is not a cppdb run directory (no pair tables, beads or "
                        "compression report)", hint="pass the -o directory of a cppdb "
                                                    "extract-*/build-compression command")


def render_report(run: str | Path, evaluate: bool = True) -> str:
    """The HTML text of the report of ``run``."""
    run = Path(run)
    if not run.is_dir():
        raise BadInputError(f"run directory {run} does not exist")
    kind = _kind(run)
    manifest = sections._manifest(run / "manifest.json")
    parts = [f"<h2>Pipeline</h2>{sections.funnel(run)}"]
    if kind in ("bilingual", "monolingual"):
        parts.append("<h2>Ranking</h2>" + "".join(sections.ranking(run, evaluate)))
    if kind == "monolingual":
        parts.append("<h2>Sentence alignment</h2>" + "".join(sections.monolingual(run)))
    if kind == "compression":
        parts.append("<h2>Compression</h2>" + "".join(sections.compression(run)))
    header = (f"<h1>cppdb run report: {escape(run.name)} ({kind})</h1>"
              f'<p class="note">command <code>{escape(str(manifest.get("command", "?")))}</code>, '
              f'status {escape(str(manifest.get("status", "?")))}, signature '
              f'<code>{escape(str(manifest.get("signature", "?")))}</code></p>')
    meta = json.dumps({"run": str(run), "kind": kind})
    return (f'<!DOCTYPE html><html lang="zh"><head><meta charset="utf-8">'
            f"<title>cppdb report: {escape(run.name)}</title><style>{_STYLE}</style>"
            f'<script type="application/json" id="report-meta">{meta}</script></head>'
            f"<body>{header}{''.join(parts)}<script>{_SCRIPT}</script></body></html>")


def write_report(run: str | Path, out: str | Path | None = None, evaluate: bool = True) -> Path:
    """Write the report of ``run`` (default ``RUN/report.html``) atomically; return its path."""
    out = Path(out) if out is not None else Path(run) / "report.html"
    write_text_atomic(out, render_report(run, evaluate))
    return out
