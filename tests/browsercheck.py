"""The browser check shared by the browser tests of the report (test_report_browser.py)
and of the documentation site (test_docs_browser.py): headless Chromium (Debian's
``chromium``, which ``.ci/run`` installs; never a downloaded browser) driven by
Playwright loads every page of a static site from disk and lists what is wrong.

A test module imports it as ``from browsercheck import ...`` (pytest puts ``tests/`` on
``sys.path``, as for ``conftest``).

Environment:

* ``MPVI_CHROMIUM``: the Chromium executable (default: ``chromium``,
  ``chromium-browser`` or ``google-chrome`` on the PATH);
* ``MPVI_REQUIRE_BROWSER=1``: a missing Playwright or Chromium fails the test instead of
  skipping it (CI sets it where it installed chromium, so that the check cannot silently
  go away);
* ``MPVI_ARTIFACTS``: where screenshots go (default ``test-artifacts/``).
"""
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import pytest

CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]
"""No sandbox (CI runs as root); no network traffic of the browser's own (the machine's
closed network refuses it)."""

ERROR_OUTPUTS = (".cell_output .output.traceback, .cell_output .output.error, "
                 ".cell_output .highlight-ipythontb")
"""What myst-nb writes for a notebook cell that raised: ``<div class="output traceback
highlight-ipythontb">`` with the traceback (myst-nb 1.x; ``output error`` in older
versions).  A stream on stderr (``output stderr``: a warning) is not an error."""

_PAGE_FACTS = """() => ({
  images: Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0)
                                     .map(i => i.currentSrc || i.src || i.outerHTML.slice(0, 120)),
  ids: Array.from(document.querySelectorAll('[id], a[name]')).map(e => e.id || e.name),
  links: Array.from(document.querySelectorAll('a[href], area[href]')).map(a => a.href),
  errors: Array.from(document.querySelectorAll(%r)).map(e => e.innerText.trim().split('\\n').pop().slice(0, 200)),
})"""

_TABLE_WIDTHS = """() => {
  document.querySelectorAll('details').forEach(d => d.open = true);
  const width = document.documentElement.clientWidth;
  const name = t => {
    const section = t.closest('section[id]'), h = t.previousElementSibling;
    const cls = t.className ? '.' + t.className.split(' ').join('.') : '';
    const n = Array.from(document.querySelectorAll('table')).indexOf(t);
    return `table${cls} #${n}` + (section ? ` in #${section.id}` : '');
  };
  return {
    width, scrollWidth: document.documentElement.scrollWidth,
    tables: Array.from(document.querySelectorAll('table')).map(t => {
      const scroller = t.closest('.scroll');
      return {name: name(t), right: t.getBoundingClientRect().right,
              scroller: scroller ? scroller.getBoundingClientRect().right : null,
              data: t.classList.contains('data')};
    }),
  };
}"""


def chromium_executable():
    """The Chromium to drive; skips the test (fails with ``MPVI_REQUIRE_BROWSER=1``) if
    there is none."""
    found = os.environ.get("MPVI_CHROMIUM") or shutil.which("chromium") or \
        shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not found or not os.access(found, os.X_OK):
        unavailable("no Chromium executable (chromium, chromium-browser, google-chrome or "
                    "$MPVI_CHROMIUM): install Debian's chromium (bash .ci/run does) to run "
                    "the browser tests")
    return found


def unavailable(reason):
    """Skip, or fail if ``MPVI_REQUIRE_BROWSER=1``."""
    if os.environ.get("MPVI_REQUIRE_BROWSER") == "1":
        pytest.fail(f"MPVI_REQUIRE_BROWSER=1 and {reason}")
    pytest.skip(reason)


def launch():
    """A generator for a module fixture: yields a headless Chromium (Playwright Browser)."""
    try:
        from playwright import sync_api
    except ImportError:
        unavailable("Playwright is not installed (pip install -e '.[test]')")
    executable = chromium_executable()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield b
        b.close()


def artifacts():
    """The directory for screenshots (``$MPVI_ARTIFACTS`` or ``test-artifacts/``)."""
    d = Path(os.environ.get("MPVI_ARTIFACTS") or Path(__file__).resolve().parent.parent
             / "test-artifacts")
    d.mkdir(parents=True, exist_ok=True)
    return d


@dataclass
class Crawl:
    """What :func:`crawl` found: ``problems`` (one line each, naming the page and the
    kind: ``image does not display``, ``request failed``, ``broken link``, ``no anchor``,
    ``link outside the site``, ``cell raised``, ``script error``), the pages visited
    (paths relative to the site) and the external links seen (``{url: first page}``)."""

    problems: list = field(default_factory=list)
    visited: set = field(default_factory=set)
    external: dict = field(default_factory=dict)


def crawl(page, site, start="index.html", external_ok=(), visit=None):
    """Load in ``page`` every page of the static site in the directory ``site`` reachable
    by links from ``start`` (a page, relative to ``site``, or a list of them); a
    :class:`Crawl`.

    A problem is: an image that does not display (``complete && naturalWidth > 0``), a
    request that fails (a missing stylesheet, script or font), a link to a missing file, a
    ``#fragment`` that is not an id (or ``a name``) of its target page, a notebook cell
    that raised (:data:`ERROR_OUTPUTS`), an uncaught script error, and a link outside the
    site unless its URL starts with one of ``external_ok`` (nothing outside is loaded:
    the check runs offline; a request the page itself makes to the network is aborted
    and is a problem).  ``visit(rel)``, if given, is called with each page still loaded in
    ``page``, after its facts were read (a test's own checks, without loading it again)."""
    site = Path(site).resolve()
    root = site.as_uri() + "/"
    out = Crawl()
    todo = [start] if isinstance(start, str) else list(start)
    current = [todo[0]]
    page.on("requestfailed", lambda r: out.problems.append(
        f"{current[0]}: request failed: {r.url}: {r.failure}"))
    page.on("pageerror", lambda e: out.problems.append(f"{current[0]}: script error: {e}"))
    page.route(lambda url: not url.startswith(("file:", "data:", "blob:", "about:")),
               lambda route: route.abort("blockedbyclient"))
    anchors, links = {}, []
    todo.reverse()
    while todo:
        rel = todo.pop()
        if rel in out.visited:
            continue
        out.visited.add(rel)
        current[0] = rel
        page.goto(root + rel, wait_until="load")
        facts = page.evaluate(_PAGE_FACTS % ERROR_OUTPUTS)
        for src in facts["images"]:
            out.problems.append(f"{rel}: image does not display: {src}")
        for text in facts["errors"]:
            out.problems.append(f"{rel}: cell raised: {text}")
        anchors[rel] = set(facts["ids"])
        if visit is not None:
            visit(rel)
        for href in facts["links"]:
            target, fragment = urldefrag(href)
            target = urlsplit(target)._replace(query="").geturl()
            if not target.startswith(root):
                if target.startswith(("http:", "https:", "mailto:")):
                    out.external.setdefault(href, rel)
                    if not href.startswith(tuple(external_ok)):
                        out.problems.append(f"{rel}: link outside the site: {href}")
                elif not target.startswith(site.as_uri()):
                    out.problems.append(f"{rel}: link outside the site: {href}")
                continue
            path = unquote(target[len(root):])
            if (site / path).is_dir() and (site / path / "index.html").is_file():
                path = f"{path.rstrip('/')}/index.html".lstrip("/")
            if not (site / path).is_file():
                out.problems.append(f"{rel}: broken link: {href}")
                continue
            if path.endswith(".html"):
                links.append((rel, path, fragment, href))
                todo.append(path)
    for rel, path, fragment, href in links:
        if fragment and fragment not in anchors[path]:
            out.problems.append(f"{rel}: no anchor #{fragment} in {path} ({href})")
    return out


def crawl_all(page, site, start, pages, visit, external_ok=()):
    """:func:`crawl` from ``start`` with ``visit``, then each of ``pages`` (relative to
    ``site``) that no link reached loaded and visited: every page loaded once, each check
    of a test run on that load.  The crawl's :class:`Crawl`."""
    found = crawl(page, site, start, external_ok=external_ok, visit=visit)
    for rel in pages:
        if rel not in found.visited:
            page.goto((Path(site) / rel).resolve().as_uri(), wait_until="load")
            visit(rel)
    return found


def table_widths(page):
    """The tables of the page loaded in ``page`` (every ``<details>`` opened) against its
    width: ``(problems, widest)``.  A table must end inside the viewport
    (``getBoundingClientRect().right <= documentElement.clientWidth``), unless it is a
    data table (class ``data``) inside a deliberately scrolling ``.scroll`` box, which
    must then end inside the viewport itself; the document must not scroll sideways
    (``scrollWidth <= clientWidth``).  ``widest``: the largest right edge of a table
    that must fit, and its name."""
    m = page.evaluate(_TABLE_WIDTHS)
    width, problems, widest = m["width"], [], (0, None)
    if m["scrollWidth"] > width:
        problems.append(f"the page is {m['scrollWidth']} px wide, wider than the "
                        f"{width} px window")
    for t in m["tables"]:
        if t["scroller"] is not None and t["data"]:
            if t["scroller"] > width + 0.5:
                problems.append(f"{t['name']}: its scroll box ends at {t['scroller']:.0f} px, "
                                f"beyond the {width} px window")
            continue
        widest = max(widest, (t["right"], t["name"]), key=lambda w: w[0])
        if t["right"] > width + 0.5:
            problems.append(f"{t['name']} ends at {t['right']:.0f} px, beyond the {width} px "
                            f"window")
    return problems, widest


def math_sizes(page):
    """``(rendered, fractions)``: how many ``<math>`` elements of the loaded page have a
    nonzero size, and the heights (in units of the body font size) of those holding a fraction (a browser that renders
    MathML stacks the numerator over the denominator: taller than a line of text)."""
    return page.evaluate("""() => {
      document.querySelectorAll('details').forEach(d => d.open = true);
      const sized = Array.from(document.querySelectorAll('math')).filter(m => {
        const r = m.getBoundingClientRect(); return r.width > 0 && r.height > 0; });
      const lineHeight = parseFloat(getComputedStyle(document.body).fontSize);
      return [sized.length, sized.filter(m => m.querySelector('mfrac'))
                                   .map(m => m.getBoundingClientRect().height / lineHeight)];
    }""")


_BROKEN_WORDS = r"""(selector) => {
  document.querySelectorAll('details').forEach(d => d.open = true);
  const out = [];
  for (const el of document.querySelectorAll(selector)) {
    if (!el.getClientRects().length) continue;                 // not displayed
    const nodes = [], walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let text = '';
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      nodes.push([n, text.length]); text += n.data; }
    const at = i => { let k = nodes.length - 1;
                      while (k > 0 && nodes[k][1] > i) k--; return [nodes[k][0], i - nodes[k][1]]; };
    const label = text.trim().replace(/\s+/g, ' ').slice(0, 60);
    for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
      const r = document.createRange(), [a, ao] = at(m.index),
            [b, bo] = at(m.index + m[0].length - 1);
      r.setStart(a, ao); r.setEnd(b, bo + 1);
      const lines = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0)
                                 .map(x => Math.round(x.top)));
      if (lines.size > 1) out.push(`"${label}": the word "${m[0]}" breaks over ${lines.size} lines`);
    }
    if (el.scrollWidth > el.clientWidth + 1)
      out.push(`"${label}": its text is ${el.scrollWidth} px wide, its box ${el.clientWidth} px`);
  }
  return out;
}"""


def broken_words(page, selector="th"):
    """The cells ``selector`` of the page loaded in ``page`` (every ``<details>`` opened)
    in which a word -- a run of letters and digits: ``comparison``, not
    ``predicted_norm`` broken after its ``_`` -- is laid out over more than one line
    (measured on the rendered text: the line boxes of the word's range), or whose text
    spills out of its box; one line each."""
    return page.evaluate(_BROKEN_WORDS, selector)


INTERNAL_WORDING = (r"\bissues?\s*#?\d+|(?<![\w&#/=-])#\d+\b|\b(?:the|this|that) issue\b|"
                    r"\bissue'?s? (?:acceptance|increment|item)|\bacceptance \d")
"""What a reader of the docs or the report must not meet (case-insensitive): the project's
internal bookkeeping -- an issue number (``issue 47``, ``#46``), "the issue" a change
came from, an issue's acceptance or increment."""

_READ_TEXT = """() => {
  document.querySelectorAll('details').forEach(d => d.open = true);
  const attrs = Array.from(document.querySelectorAll('[title], img[alt]'))
                     .map(e => (e.getAttribute('title') || '') + ' ' + (e.getAttribute('alt') || ''));
  return document.body.innerText + '\\n' + attrs.join('\\n');
}"""


def internal_wording(page, pattern=INTERNAL_WORDING):
    """The internal wording (:data:`INTERNAL_WORDING`) in what the page loaded in ``page``
    shows a reader: its rendered text with every ``<details>`` opened, and its tooltips
    and image descriptions; each match with 40 characters either side."""
    text = " ".join(page.evaluate(_READ_TEXT).split())
    return [text[max(0, m.start() - 40):m.end() + 40]
            for m in re.finditer(pattern, text, re.IGNORECASE)]


def site_pages(site):
    """Every HTML page of the built site ``site`` a reader can open (not the theme's
    ``_static`` files), relative paths."""
    site = Path(site)
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html")
                  if not {"_static", "_sources", "_images"} & set(p.relative_to(site).parts))


_HIDDEN_OVERFLOW = r"""() => {
  document.querySelectorAll('details').forEach(d => d.open = true);
  const out = [], W = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > W)
    out.push(`the page is ${document.documentElement.scrollWidth} px wide, wider than the ${W} px window`);
  for (const el of document.body.querySelectorAll('*')) {
    const s = getComputedStyle(el);
    if (!['auto', 'scroll', 'hidden', 'clip'].includes(s.overflowX)) continue;
    if (el.clientHeight === 0 || el.scrollWidth <= el.clientWidth + 1) continue;
    const section = el.closest('section[id]');
    const what = (el.querySelector('table, pre') || el).innerText.trim().replace(/\s+/g, ' ').slice(0, 50);
    out.push(`${el.tagName.toLowerCase()}${el.className ? '.' + String(el.className).trim().split(/\s+/).join('.') : ''}`
             + (section ? ` in #${section.id}` : '') + `: ${el.scrollWidth - el.clientWidth} px of `
             + `${el.scrollWidth} hidden sideways (overflow-x ${s.overflowX}): "${what}"`);
  }
  return out;
}"""


def hidden_overflow(page):
    """What the page loaded in ``page`` (every ``<details>`` opened) hides sideways: each
    element whose content is wider than its box and is cut or scrolled
    (``overflow-x`` auto, scroll, hidden or clip: a table in a scrolling wrapper, a code
    or output block), and a page wider than the window; one line each, naming the element,
    its section and the start of its text."""
    return page.evaluate(_HIDDEN_OVERFLOW)
