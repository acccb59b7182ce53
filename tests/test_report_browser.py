"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``, which
``.ci/run`` installs) driven by Playwright loads every page of the report from disk,
fails on any image that does not display, any request that fails and any link to a
missing file or anchor or outside the report (the shared check: browsercheck.py); every
table fits a 1400-pixel window (a wide CSV data table scrolls inside its own box, which
fits); formulas are MathML the browser renders; and a screenshot of the overview goes to
``test-artifacts/report-overview.png`` (or ``$MPVI_ARTIFACTS/``) for a reviewer.

Skipped, with the reason, when Playwright or a Chromium executable is missing (set
``MPVI_CHROMIUM`` to use another Chromium build; ``MPVI_REQUIRE_BROWSER=1`` makes a
missing browser a failure)."""
import shutil

import pytest

from browsercheck import artifacts, chromium_executable, crawl, launch, math_sizes, table_widths
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


def test_report_pages_load_with_every_image_and_link(browser, report):
    out, index, papers = report
    page = browser.new_page(viewport=WINDOW)
    found = crawl(page, out, index.name)
    assert found.problems == []
    assert found.visited >= {"index.html", "errata-mpvi-papers-hermite.html",
                             *(p.page for p in papers)}

    page.goto(index.resolve().as_uri(), wait_until="load")
    overview = page.locator("#overview").inner_text()
    for name in {r.paper for r in all_reproductions().values()}:
        assert name in overview
    shot = artifacts() / "report-overview.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    print(f"screenshot of the report's overview: {shot}")


def test_report_tables_fit_a_1400_pixel_window_and_formulas_are_mathml(browser, report):
    out, _, papers = report
    page = browser.new_page(viewport=WINDOW)
    problems, widest, formulas = [], (0, None), {}
    for name in ["index.html", "errata-mpvi-papers-hermite.html", *(p.page for p in papers)]:
        page.goto((out / name).resolve().as_uri(), wait_until="load")
        found, w = table_widths(page)
        problems += [f"{name}: {p}" for p in found]
        widest = max(widest, (w[0], f"{name}: {w[1]}"), key=lambda x: x[0])
        formulas[name] = math_sizes(page)
    print(f"widest table at {WINDOW['width']} px: {widest[1]}, right edge {widest[0]:.0f} px")
    assert problems == []
    assert widest[0] > 0.8 * WINDOW["width"] - 200               # measured real tables
    for name in ("hermite.html", "mutze.html"):                 # printed formulas
        rendered, fractions = formulas[name]
        assert rendered > 50, (name, rendered)
        # a fraction stacks its numerator over its denominator (MathML rendered, not
        # shown as a line of text)
        assert fractions and max(fractions) > 1.8, (name, fractions[:5])


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


def test_a_missing_browser_skips_unless_required(monkeypatch):
    monkeypatch.setenv("MPVI_CHROMIUM", "/nonexistent/chromium")
    monkeypatch.delenv("MPVI_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Chromium executable"):
        chromium_executable()
    monkeypatch.setenv("MPVI_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="MPVI_REQUIRE_BROWSER=1 and no Chromium"):
        chromium_executable()
