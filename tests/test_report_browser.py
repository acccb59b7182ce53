"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``, which
``.ci/run`` installs) driven by Playwright loads every page of the report from disk,
fails on any image that does not display, any request that fails and any link to a
missing file or anchor or outside the report (the shared check: browsercheck.py); every
table fits a 1400-pixel window (a wide CSV data table scrolls inside its own box, which
fits); no table header breaks inside a word; proofs are counted only where a certified
run proved digits of published values; formulas are MathML the browser renders; and a screenshot of the overview goes to
``test-artifacts/report-overview.png`` (or ``$MPVI_ARTIFACTS/``) for a reviewer.

Skipped, with the reason, when Playwright or a Chromium executable is missing (set
``MPVI_CHROMIUM`` to use another Chromium build; ``MPVI_REQUIRE_BROWSER=1`` makes a
missing browser a failure)."""
import re
import shutil
from dataclasses import dataclass, field

import pytest

from browsercheck import (artifacts, broken_words, chromium_executable, crawl, crawl_all,
                          internal_wording, launch, math_sizes, table_widths)
from mpvi.repro.declare import all_reproductions, default_out_dir
from mpvi.repro.report import write_report

WINDOW = {"width": 1400, "height": 900}


@pytest.fixture(scope="module")
def browser():
    yield from launch()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report"
    index, papers = write_report(default_out_dir(False), out)
    return out, index, papers


_PROOFS = """() => Array.from(document.querySelectorAll('section.item')).map(s => ({
  id: s.id,
  meta: Array.from(s.querySelectorAll(':scope > p.meta .proof')).map(e => e.innerText.trim()),
  enclosed: Array.from(s.querySelectorAll('table.values span.proven'))
                 .filter(e => /\\d/.test(e.innerText)).length,
  proofs: Array.from(s.querySelectorAll('table.values div.proof')).map(e => e.innerText.trim()),
  summary: Array.from(s.querySelectorAll('.certified p.meta')).map(e => e.innerText).join(' '),
}))"""


def _pages(out, papers):
    return ["index.html", *sorted(p.name for p in out.glob("errata-*.html")),
            *(p.page for p in papers)]


@dataclass
class Tour:
    """What one pass over the report at :data:`WINDOW` found: the crawl from the index (its
    problems, the pages it reached) and, per page, what the checks below read from it."""
    found: object
    proofs: dict = field(default_factory=dict)
    formulas: dict = field(default_factory=dict)
    widths: dict = field(default_factory=dict)
    headers: dict = field(default_factory=dict)
    wording: dict = field(default_factory=dict)


@pytest.fixture(scope="module")
def tour(browser, report):
    """Every page of the report loaded once at :data:`WINDOW`: the crawl of
    :func:`browsercheck.crawl` reads its links and images, and on the same load the proof
    counts (:data:`_PROOFS`), the formulas, the tables' widths, the headers' words and the
    internal wording (in this order: the widths open every ``<details>``)."""
    out, index, papers = report
    page = browser.new_page(viewport=WINDOW)
    tour = Tour(found=None)

    def visit(name):
        tour.proofs[name] = page.evaluate(_PROOFS)
        tour.formulas[name] = math_sizes(page)
        tour.widths[name] = table_widths(page)
        tour.headers[name] = (page.locator("th").count(), broken_words(page, "th"))
        tour.wording[name] = internal_wording(page)

    tour.found = crawl_all(page, out, index.name, _pages(out, papers), visit)
    page.close()
    return tour


def test_report_pages_load_with_every_image_and_link(browser, report, tour):
    out, index, papers = report
    found = tour.found
    assert found.problems == []
    assert found.visited >= {"index.html", "errata-mpvi-papers-hermite.html",
                             *(p.page for p in papers)}

    page = browser.new_page(viewport=WINDOW)
    page.goto(index.resolve().as_uri(), wait_until="load")
    overview = page.locator("#overview").inner_text()
    for name in {r.paper for r in all_reproductions().values()}:
        assert name in overview
    shot = artifacts() / "report-overview.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    print(f"screenshot of the report's overview: {shot}")


def test_report_tables_fit_a_1400_pixel_window_and_formulas_are_mathml(report, tour):
    out, _, papers = report
    problems, widest, formulas = [], (0, None), tour.formulas
    for name in _pages(out, papers):
        found, w = tour.widths[name]
        problems += [f"{name}: {p}" for p in found]
        widest = max(widest, (w[0], f"{name}: {w[1]}"), key=lambda x: x[0])
    print(f"widest table at {WINDOW['width']} px: {widest[1]}, right edge {widest[0]:.0f} px")
    assert problems == []
    assert widest[0] > 0.8 * WINDOW["width"] - 200               # measured real tables
    for name in ("hermite.html", "mutze.html"):                 # printed formulas
        rendered, fractions = formulas[name]
        assert rendered > 50, (name, rendered)
        # a fraction stacks its numerator over its denominator (MathML rendered, not
        # shown as a line of text)
        assert fractions and max(fractions) > 1.8, (name, fractions[:5])


@pytest.mark.parametrize("width", [1400, 1024])
def test_no_report_table_header_breaks_inside_a_word(browser, report, tour, width):
    # "compariso n": a header broken inside a word, in every published-values table (at
    # 1400 px as the tour read them, at 1024 px loaded again)
    out, _, papers = report
    seen = {}
    if width == WINDOW["width"]:
        seen = {name: tour.headers[name] for name in _pages(out, papers)}
    else:
        page = browser.new_page(viewport={"width": width, "height": 900})
        for name in _pages(out, papers):
            page.goto((out / name).resolve().as_uri(), wait_until="load")
            seen[name] = (page.locator("th").count(), broken_words(page, "th"))
    assert sum(n for n, _ in seen.values()) > 100
    assert [f"{name}: {p}" for name, (_, found) in seen.items() for p in found] == []


def test_proofs_are_counted_only_where_published_values_were_proven(browser, report, tour):
    # "0 proven match, 0 proven misprint" on a figure whose certified run encloses none of
    # its published values: the page says nothing about proofs there
    out, index, papers = report
    totals, certified = {}, 0
    for paper in papers:
        match = misprint = 0
        for s in tour.proofs[paper.page]:
            counts = [s["proofs"].count("proven match"), s["proofs"].count("proven misprint")]
            if s["enclosed"]:
                assert s["meta"] == [f"{counts[0]} proven match",
                                     f"{counts[1]} proven misprint"], s
            else:
                assert s["meta"] == [] and counts == [0, 0], s
            assert not re.search(r"\b0 (compared value|column)", s["summary"]), s
            certified += bool(s["summary"])
            match, misprint = match + counts[0], misprint + counts[1]
        totals[paper.name] = (match, misprint)
    assert certified > 10 and any(totals.values())
    page = browser.new_page(viewport=WINDOW)
    page.goto(index.resolve().as_uri(), wait_until="load")
    cells = page.evaluate("""() => Object.fromEntries(Array.from(
        document.querySelectorAll('#overview tr')).map(r => [r.dataset.paper || 'total',
        r.cells[r.cells.length - 2].innerText.trim()]))""")
    for name, (match, misprint) in totals.items():
        assert cells[name] == (f"{match} match, {misprint} misprint" if match + misprint
                               else cells[name]), (name, cells[name])
        assert not re.match(r"0 match, 0 misprint", cells[name]), (name, cells[name])
    match, misprint = map(sum, zip(*totals.values()))
    assert cells["total"] == f"{match} match, {misprint} misprint"


def test_no_internal_wording_in_the_report(browser, report, tour):
    # "issue 45" in an errata heading, "issue acceptance" as where a value is printed
    out, _, papers = report
    assert [f"{name}: ...{w}..." for name in _pages(out, papers)
            for w in tour.wording[name]] == []
    page = browser.new_page(viewport=WINDOW)
    page.set_content("<p>fixed in issue 47 (#46)</p><details><summary>s</summary>the "
                     "issue's acceptance</details><img alt='a' title='see issue 3'>")
    assert len(internal_wording(page)) == 4


def test_the_browser_check_catches_broken_images_links_and_anchors(browser, report, tmp_path):
    out, _, _ = report
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    (bad / "files" / "mutze" / "mutze_fig02.png").unlink()
    index = bad / "index.html"
    index.write_text(index.read_text(encoding="utf-8").replace(
        "</main>", '<a href="nowhere.html">x</a> <a href="top2025.html#no-such-item">y</a> '
                   '<a href="https://example.org/">z</a>'
                   f'<table><tr><td>{"w" * 400}</td></tr></table></main>'),
        encoding="utf-8")
    page = browser.new_page(viewport=WINDOW)
    text = "\n".join(crawl(page, bad).problems)
    assert "mutze.html: image does not display" in text and "mutze_fig02.png" in text
    assert "index.html: broken link" in text and "nowhere.html" in text
    assert "index.html: no anchor #no-such-item in top2025.html" in text
    assert "index.html: link outside the site: https://example.org/" in text
    page.goto(index.resolve().as_uri(), wait_until="load")
    problems, _ = table_widths(page)
    assert any("beyond the 1400 px window" in p for p in problems), problems
    # a header broken inside a word, and one whose word spills out of its cell
    page.set_content('<table style="width: 14em"><tr><th style="overflow-wrap: anywhere">a '
                     'incomprehensibilities</th><th style="width: 2em; max-width: 2em; '
                     'overflow: hidden">unbreakable</th><th>predicted_<wbr>norm</th>'
                     '<td>x</td></tr></table>')
    found = broken_words(page, "th")
    assert len(found) == 2 and "the word \"incomprehensibilities\" breaks" in found[0] and \
        "unbreakable" in found[1], found


def test_a_missing_browser_skips_unless_required(monkeypatch):
    monkeypatch.setenv("MPVI_CHROMIUM", "/nonexistent/chromium")
    monkeypatch.delenv("MPVI_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Chromium executable"):
        chromium_executable()
    monkeypatch.setenv("MPVI_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="MPVI_REQUIRE_BROWSER=1 and no Chromium"):
        chromium_executable()
