"""The documentation site in a real browser: headless Chromium loads every page reachable
from the index (and the search and index pages), and fails on a broken link, a missing
anchor, an image that does not display, a request that fails, a script error, a link
outside the site other than the theme's credits (the docs are self-contained and read
offline), or a tutorial cell that raised (the shared check: browsercheck.py).  A
screenshot of the tutorial index goes to ``test-artifacts/docs-tutorials.png`` (or
``$MPVI_ARTIFACTS/``).

The site: ``$MPVI_DOCS_HTML`` (a built site, a directory with ``index.html``; CI builds it
first), or else built here once per session with ``sphinx-build -W -b html docs <tmp>``
(tutorials executed, their outputs cached in ``docs/_build/.jupyter_cache`` as for any
build).  Skipped, with the reason, without Sphinx and the docs extra
(``pip install -e '.[docs]'``), Playwright or Chromium (``MPVI_REQUIRE_BROWSER=1``: a
missing browser fails instead)."""
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from browsercheck import (artifacts, broken_words, crawl, crawl_all, hidden_overflow,
                          internal_wording, launch, site_pages, table_widths)

import mpvi

ROOT = Path(__file__).resolve().parent.parent
EXTERNAL_OK = ("https://www.sphinx-doc.org/", "https://pradyunsg.me/",
               "https://github.com/pradyunsg/furo")
"""The only links out of the site: the furo theme's footer credits ("Made with Sphinx and
@pradyunsg's Furo").  Any other external link fails the test: the docs hold what they
cite, so that they read offline."""
WINDOW = {"width": 1400, "height": 900}
NARROW = {"width": 1280, "height": 800}
"""A laptop's window: every table and every code or output block fits it."""
API_PAGE_HEIGHT = 25_000
"""The tallest API page allowed, in CSS pixels at :data:`NARROW` (the single API page was
about 108,000 px)."""


@pytest.fixture(scope="session")
def docs_html(tmp_path_factory):
    """The built documentation site (a directory with index.html)."""
    given = os.environ.get("MPVI_DOCS_HTML")
    if given:
        site = Path(given)
        assert (site / "index.html").is_file(), f"MPVI_DOCS_HTML={given} has no index.html"
        return site
    for module in ("sphinx", "myst_nb", "furo", "numpydoc"):
        pytest.importorskip(module, reason=f"{module} is not installed: the docs extra "
                                           f"(pip install -e '.[docs]') builds the site")
    out = tmp_path_factory.mktemp("docs") / "html"
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-j", "2", "-b", "html",
                          str(ROOT / "docs"), str(out)], cwd=ROOT, capture_output=True,
                         text=True, timeout=1200)
    assert run.returncode == 0, ("sphinx-build -W -b html docs failed:\n"
                                 + "\n".join((run.stdout + run.stderr).splitlines()[-40:]))
    return out


@pytest.fixture(scope="module")
def browser():
    yield from launch()


def starts(site):
    """The index, and the search and general index pages (no link of the theme reaches
    them: a form and the sidebar's script do)."""
    return ["index.html", *(p for p in ("search.html", "genindex.html") if (site / p).is_file())]


@dataclass
class Tour:
    """What one pass over the site found: the crawl from :func:`starts` (its problems, the
    pages it reached), and for every page of the site (:func:`site_pages`, the report
    inside it included) what the checks below read from it, each page loaded once."""
    found: object
    wording: dict = field(default_factory=dict)
    layout: dict = field(default_factory=dict)
    blocks: dict = field(default_factory=dict)
    heights: dict = field(default_factory=dict)
    documented: set = field(default_factory=set)
    api_links: set = field(default_factory=set)


@pytest.fixture(scope="module")
def tour(browser, docs_html):
    """Every page of the site loaded once, at :data:`NARROW`: the crawl of
    :func:`browsercheck.crawl` reads links, images, anchors and cells, and on the same load
    the API facts (before any ``<details>`` is opened: the page's height), the internal
    wording and, on the site proper, the layout (tables, blocks, header words)."""
    page = browser.new_page(viewport=NARROW)
    tour = Tour(found=None)

    def visit(rel):
        if rel.startswith("reference/api"):
            tour.heights[rel] = page.evaluate("document.documentElement.scrollHeight")
            tour.documented |= set(page.evaluate(
                "Array.from(document.querySelectorAll('dt[id^=\"mpvi.\"]')).map(e => e.id)"))
            if rel == "reference/api.html":
                tour.api_links = set(page.evaluate(
                    "Array.from(document.querySelectorAll('article a.reference')).map("
                    "a => a.getAttribute('href').split('#')[0])"))
        tour.wording[rel] = internal_wording(page)
        if not rel.startswith("report/"):
            tour.blocks[rel] = page.locator("article table, article pre").count()
            found, _ = table_widths(page)
            tour.layout[rel] = found + hidden_overflow(page) + broken_words(page, "article th")

    tour.found = crawl_all(page, docs_html, starts(docs_html), site_pages(docs_html), visit,
                           external_ok=EXTERNAL_OK)
    page.close()
    return tour


def test_docs_pages_load_with_every_link_image_and_cell(browser, docs_html, tour):
    found = tour.found
    assert found.problems == []
    tutorials = {p for p in found.visited if p.startswith("tutorials/")}
    assert "tutorials/index.html" in tutorials and len(tutorials) > 1, sorted(found.visited)
    built = {str(p.relative_to(docs_html)) for p in docs_html.glob("tutorials/*.html")}
    assert built <= found.visited, f"tutorials no link reaches: {sorted(built - found.visited)}"

    page = browser.new_page(viewport=WINDOW)
    page.goto((docs_html / "tutorials" / "index.html").resolve().as_uri(), wait_until="load")
    shot = artifacts() / "docs-tutorials.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    print(f"screenshot of the tutorial index: {shot}; {len(found.visited)} pages; links out: "
          f"{sorted(found.external)}")


def _replace_once(path, pattern, replacement):
    text = path.read_text(encoding="utf-8")
    new, n = re.subn(pattern, replacement, text, count=1)
    assert n == 1, f"{pattern!r} not in {path}"
    path.write_text(new, encoding="utf-8")


def test_the_docs_check_reports_a_broken_link_image_anchor_and_a_raised_cell(
        browser, docs_html, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(docs_html, site)
    tutorials = site / "tutorials" / "index.html"
    # a link to a missing page and one to a missing anchor of an existing page
    link = r'(<a\b[^>]*?\bhref=")(?!https?:|#|no-such)([^"#]+\.html)(#[^"]*)?"'
    _replace_once(tutorials, link, r'\1no-such-page.html"')
    _replace_once(tutorials, link, r'\1\2#no-such-anchor"')
    # an image whose file is missing, on a page that shows one
    with_image = next(p for p in sorted(site.rglob("*.html")) if "<img " in
                      p.read_text(encoding="utf-8") and "_static" not in p.parts)
    _replace_once(with_image, r'(<img\b[^>]*?\bsrc=")[^"]+"', r'\1missing-image.png"')
    # a tutorial cell that raised, as myst-nb writes it
    tutorial = next(p for p in sorted((site / "tutorials").glob("*.html"))
                    if p.name != "index.html")
    _replace_once(tutorial, r"</article>",
                  '<div class="cell_output docutils container"><div class="output traceback '
                  'highlight-ipythontb notranslate"><div class="highlight"><pre>Traceback '
                  '(most recent call last)\nZeroDivisionError: division by zero</pre></div>'
                  '</div></div></article>')
    # and a link out of the site that is not the theme's credits
    _replace_once(tutorials, r"</article>", '<a href="https://example.org/x">x</a></article>')

    page = browser.new_page(viewport=WINDOW)
    problems = crawl(page, site, starts(site), external_ok=EXTERNAL_OK).problems
    text = "\n".join(problems)
    image_page = str(with_image.relative_to(site))
    assert re.search(r"^tutorials/index\.html: broken link: .*/no-such-page\.html$", text, re.M), text
    assert re.search(r"^tutorials/index\.html: no anchor #no-such-anchor in ", text, re.M), text
    assert f"{image_page}: image does not display: " in text and "missing-image.png" in text, text
    assert f"tutorials/{tutorial.name}: cell raised: ZeroDivisionError: division by zero" in text
    assert "tutorials/index.html: link outside the site: https://example.org/x" in text
    expected = ("no-such-page.html", "#no-such-anchor", "missing-image.png", "ZeroDivisionError",
                "https://example.org/x")
    assert all(any(e in p for e in expected) for p in problems), text   # nothing else


def test_no_internal_wording_on_any_page(tour, docs_html):
    # "issue 45" in the errata, "issue 35" in the guides, "issue 39's increment" in the
    # benchmarks: every page of the site, the report inside it included
    pages = site_pages(docs_html)
    assert sorted(tour.wording) == pages
    assert len(pages) > 30 and "guide/errata.html" in pages and "report/index.html" in pages
    assert [f"{rel}: ...{w}..." for rel in pages for w in tour.wording[rel]] == []


def test_every_table_and_block_fits_a_1280_pixel_window(tour, docs_html):
    # the method catalogue's reference column behind a scroll bar 2,700 px down, the
    # tutorials' outputs cut: nothing wider than its box, on any page of the site proper
    # (the report inside it has its own test at 1400 px), at 1280 px
    pages = [p for p in site_pages(docs_html) if not p.startswith("report/")]
    assert sorted(tour.layout) == pages
    assert sum(tour.blocks.values()) > 300
    assert [f"{rel}: {p}" for rel in pages for p in tour.layout[rel]] == []


def test_the_api_reference_is_a_page_per_group_each_documenting_its_names(tour):
    api = sorted(tour.heights)
    assert "reference/api.html" in api and len(api) >= 8, api
    print(f"API pages at {NARROW['width']} px: " + ", ".join(
        f"{r.removeprefix('reference/')} {h} px" for r, h in tour.heights.items()))
    assert {r: h for r, h in tour.heights.items() if h > API_PAGE_HEIGHT} == {}
    assert [n for n in mpvi.__all__ if f"mpvi.{n}" not in tour.documented] == []
    # the index links every page of the group
    assert {f"api/{r.rsplit('/', 1)[1]}" for r in api if r != "reference/api.html"} \
        <= tour.api_links
