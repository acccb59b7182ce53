"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``, which
``.ci/run`` installs) driven by Playwright loads every page of the report from disk,
fails on any image that does not display, any request that fails and any link to a
missing file or anchor, and saves a screenshot of the overview for a reviewer:
``test-artifacts/report-overview.png`` (or ``$MPVI_ARTIFACTS/``).

Skipped, with the reason, when Playwright or a Chromium executable is missing (set
``MPVI_CHROMIUM`` to use another Chromium build)."""
import os
import shutil
from pathlib import Path
from urllib.parse import urldefrag

import pytest

from mpvi.repro.run import all_reproductions, default_out_dir, project_path
from mpvi.repro.report import write_report

CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]
"""No sandbox (CI runs as root); no network traffic of the browser's own (the machine's
closed network refuses it)."""


def chromium_executable():
    found = os.environ.get("MPVI_CHROMIUM") or shutil.which("chromium") or \
        shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not found:
        pytest.skip("no Chromium executable (chromium, chromium-browser, google-chrome or "
                    "$MPVI_CHROMIUM): install Debian's chromium (bash .ci/run does) to run "
                    "the browser test of the report")
    return found


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install -e '.[test]')")
    executable = chromium_executable()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield b
        b.close()


def artifacts():
    d = Path(os.environ.get("MPVI_ARTIFACTS") or project_path("test-artifacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def problems(page, out, index):
    """Load every page of the report reachable from ``index`` in ``page``; the list of
    what is wrong (an image that does not display, a failed request, a link outside the
    report or to a missing file or anchor), and the pages visited."""
    found = []
    page.on("requestfailed", lambda r: found.append(f"request failed: {r.url}: {r.failure}"))
    root = out.resolve().as_uri() + "/"
    todo, seen, anchors, links = [index.resolve().as_uri()], set(), {}, []
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        page.goto(url, wait_until="load")
        for src in page.evaluate("Array.from(document.images).filter(i => !i.complete || "
                                 "i.naturalWidth === 0).map(i => i.src)"):
            found.append(f"{url}: image does not display: {src}")
        anchors[url] = set(page.evaluate("Array.from(document.querySelectorAll('[id]'))"
                                         ".map(e => e.id)"))
        for href in page.evaluate("Array.from(document.links).map(a => a.href)"):
            target, fragment = urldefrag(href)
            if not target.startswith(root):
                found.append(f"{url}: link outside the report: {href}")
            elif not Path(out, target[len(root):]).is_file():
                found.append(f"{url}: broken link: {href}")
            else:
                links.append((url, target, fragment))
                if target.endswith(".html"):
                    todo.append(target)
    for url, target, fragment in links:
        if fragment and target.endswith(".html") and fragment not in anchors[target]:
            found.append(f"{url}: no anchor #{fragment} in {target}")
    return found, {Path(u).name for u in seen}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report"
    index, papers = write_report(default_out_dir(False), out)
    return out, index, papers


def test_report_pages_load_with_every_image_and_link(browser, report):
    out, index, papers = report
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    found, visited = problems(page, out, index)
    assert found == []
    assert visited >= {"index.html", "errata-mpvi-papers.html", *(p.page for p in papers)}

    page.goto(index.resolve().as_uri(), wait_until="load")
    overview = page.locator("#overview").inner_text()
    for name in {r.paper for r in all_reproductions().values()}:
        assert name in overview
    shot = artifacts() / "report-overview.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    print(f"screenshot of the report's overview: {shot}")


def test_the_browser_check_catches_broken_images_links_and_anchors(browser, report, tmp_path):
    out, _, _ = report
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    (bad / "files" / "mutze" / "mutze_fig02.png").unlink()
    index = bad / "index.html"
    index.write_text(index.read_text(encoding="utf-8").replace(
        "</main>", '<a href="nowhere.html">x</a> <a href="top2025.html#no-such-item">y</a> '
                   '<a href="https://example.org/">z</a></main>'), encoding="utf-8")
    found, _ = problems(browser.new_page(), bad, index)
    text = "\n".join(found)
    assert "image does not display" in text and "mutze_fig02.png" in text
    assert "broken link" in text and "nowhere.html" in text
    assert "no anchor #no-such-item" in text
    assert "link outside the report: https://example.org/" in text
