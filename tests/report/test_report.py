"""cppdb report: rendered in headless Chromium as a person would open it."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cppdb.errors import BadInputError
from cppdb.report import render_report, svg, write_report

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--enable-logging=stderr",
                  "--v=0"]


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return name
    raise AssertionError("headless Chromium is missing: `make test` installs the Debian "
                         "package chromium (apt-get install chromium)")


def render_dom(page: Path, profile: Path) -> tuple[str, str]:
    """The DOM after the page's scripts ran, and Chromium's log (console errors)."""
    done = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                           "--dump-dom", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


@pytest.fixture(scope="module")
def monolingual_run(tmp_path_factory, data_dir) -> Path:
    from cppdb.config import load_config
    from cppdb.extractors.monolingual import extract_monolingual

    run = tmp_path_factory.mktemp("mono") / "monolingual"
    extract_monolingual([data_dir / "story" / "version_a", data_dir / "story" / "version_b"],
                        run, load_config(overrides=["align_sentences.method=bam"]))
    return run


@pytest.fixture(scope="module")
def compression_run(tmp_path_factory, data_dir) -> Path:
    from cppdb.extractors.compression.builder import build_compression

    run = tmp_path_factory.mktemp("comp") / "compression"
    from cppdb.config import load_config

    # the demo's alignment-aware overlap rule: under the paper's rule (the default) none of
    # the bundled pairs is kept, and the compression-rate plot would have nothing to draw
    aware = load_config(overrides=["compression.overlap_denominator=headline_content",
                                   "compression.overlap_source=alignment"])
    build_compression(data_dir / "news" / "pairs.jsonl", run, aware)
    return run


# per run kind: the plots a person must see with data in them (figure captions)
EXPECTED = {
    "bilingual": ["Per-stage counts", "Scores of phrase pairs", "Scores of pattern pairs",
                  "Tier sizes", "Automatic evaluation", "Relation mix",
                  "sample pairs per type and tier"],
    "monolingual": ["Per-stage counts", "beads and BAM anchors", "Bead costs"],
    "compression": ["Per-stage counts", "Compression rate", "Rejected pairs by reason"],
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_report_renders_in_chromium_with_data_in_every_plot(kind, request, tmp_path):
    run = request.getfixturevalue({"bilingual": "ranked_bilingual_run",
                                   "monolingual": "monolingual_run",
                                   "compression": "compression_run"}[kind])
    page = write_report(run, tmp_path / "report.html")
    html = page.read_text("utf-8")
    assert not re.search(r"""(src|href)=["']?https?:""", html)     # nothing fetched at view time
    dom, log = render_dom(page, tmp_path / "profile")
    root = re.search(r"<html[^>]*>", dom).group(0)
    assert 'data-ready="1"' in root and 'data-script-errors="0"' in root, root
    assert "Uncaught" not in log
    figures = re.findall(r'<figure class="plot" data-kind="(\w+)" data-points="(\d+)">'
                         r"<figcaption>(.*?)</figcaption>", dom)
    captions = {caption: int(points) for _, points, caption in figures}
    for expected in EXPECTED[kind]:
        hits = [n for caption, n in captions.items() if expected in caption]
        assert hits and all(n > 0 for n in hits), (expected, captions)
    # every counted point is a drawn SVG mark (bars, histogram bins, scatter dots)
    drawn = sum(int(points) for kind_, points, _ in figures if kind_ not in ("table", "samples"))
    assert len(re.findall(r'class="mark"', dom)) == drawn


def test_ranked_report_marks_tier_cutoffs_and_samples_each_tier(ranked_bilingual_run):
    html = render_report(ranked_bilingual_run, evaluate=False)
    assert html.count('class="cutoff"') == 2 * 3            # S, M, L per type (XL = all)
    for tier in ("S", "M", "L", "XL"):
        assert f"<td>phrase</td><td>{tier}</td>" in html
    assert "Relation mix" in html
    mix = html[html.index("Relation mix"):]
    assert "<td>phrase</td><td>S</td><td>" in mix and "%</td>" in mix


def test_unranked_run_says_how_to_rank(monolingual_run):
    html = render_report(monolingual_run)
    assert "cppdb rank RUN" in html and "no OCR in this run" in html


@pytest.mark.parametrize("values, cutoffs, points", [
    ([1.0, 1.0, 2.0, 5.0], [("S", 4.0)], 3),
    ([], [], 0),                                        # an empty plot says so
    ([3.0, 3.0], [("S", 99.0)], 1),                     # a cut-off off the scale is not drawn
])
def test_histogram_counts_its_marks(values, cutoffs, points):
    html = svg.histogram("t", values, bins=4, cutoffs=cutoffs)
    assert f'data-points="{points}"' in html
    assert ("no data" in html) == (points == 0)
    assert html.count('class="cutoff"') == sum(1 for _, x in cutoffs if x < 10)


def test_not_a_run_is_a_coded_error(tmp_path):
    with pytest.raises(BadInputError, match="not a cppdb run directory"):
        render_report(tmp_path)
