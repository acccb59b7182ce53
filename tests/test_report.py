"""``mpvi report``: the HTML report shows every compared value with its ``mpvi diff`` status,
its links and images resolve, and it is written atomically.  (In a browser:
test_report_browser.py.)"""
import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote, urlsplit

import pytest

import mpvi.repro.report
from mpvi.repro.cli import main
from mpvi.repro.published import STATUSES, diff
from mpvi.repro.declare import all_reproductions, default_out_dir
from mpvi.repro.report import (MARKER, Item, Paper, ReportError, _environment, cell, errata_html,
                               formula_html, parse_formula, short_number, write_report)

FIGURES = default_out_dir(False)


class Page(HTMLParser):
    """What a test needs from a page: value rows, overview cells, links, images, ids."""

    def __init__(self):
        super().__init__()
        self.values, self.overview, self.links, self.images, self.ids = [], [], [], [], set()
        self._paper = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "tr" and "data-status" in a:
            self.values.append((a["data-id"], a["data-key"], a["data-status"]))
        if tag == "tr" and "data-paper" in a:
            self._paper = a["data-paper"]
        if tag == "td" and self._paper and "data-status" in a:
            self._cell = a["data-status"]
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "img":
            self.images.append(a["src"])

    def handle_data(self, data):
        if getattr(self, "_cell", None):
            self.overview.append((self._paper, self._cell, int(data)))
            self._cell = None

    def handle_endtag(self, tag):
        if tag == "tr":
            self._paper = None


def parse(path):
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The report of the committed full results (figures/)."""
    out = tmp_path_factory.mktemp("report") / "report"
    index, papers = write_report(FIGURES, out)
    return out, papers


def test_every_compared_value_appears_with_its_diff_status(report):
    out, papers = report
    reps = all_reproductions()
    rows = diff(list(reps), FIGURES)
    assert rows, "figures/ has no compared values"
    expected = Counter((r.value.id, r.value.key, r.status) for r in rows)
    shown = Counter()
    for paper in papers:
        shown.update(parse(out / paper.page).values)
    assert shown == expected


def test_overview_has_one_row_per_paper_with_the_diff_counts(report):
    out, papers = report
    reps = all_reproductions()
    rows = diff(list(reps), FIGURES)
    page = parse(out / "index.html")
    counts = Counter()
    for r in rows:
        counts[(reps[r.value.id].paper, r.status)] += 1
    assert {p for p, _, _ in page.overview} == {r.paper for r in reps.values()}
    for paper, status, n in page.overview:
        assert n == counts[(paper, status)], (paper, status)
    assert {s for _, s, _ in page.overview} == set(STATUSES)


ERRATA_PAGES = [f"errata-mpvi-papers-{p}.html" for p in ("axioms2024", "bea", "hermite", "mutze",
                                                         "top2025")]
"""The report's errata pages: one per paper folder."""


def test_links_and_images_resolve_inside_the_report(report):
    """Every href and src is a relative path to a file of the report, and every #anchor
    exists on its page (the browser test checks the same by loading the pages)."""
    out, _ = report
    pages = {p.name: parse(p) for p in out.glob("*.html")}
    assert {"index.html", *ERRATA_PAGES} <= set(pages)
    checked = 0
    for name, page in pages.items():
        for ref in page.links + page.images:
            parts = urlsplit(ref)
            assert not parts.scheme and not parts.netloc, f"{name}: external link {ref}"
            target = out / unquote(parts.path) if parts.path else out / name
            assert target.is_file(), f"{name}: broken link {ref}"
            if parts.fragment:
                assert parts.fragment in pages[target.name].ids, f"{name}: no anchor {ref}"
            checked += 1
    assert checked > 500


def test_known_values_link_their_errata_entries(report):
    out, papers = report
    text = "".join((out / p.page).read_text(encoding="utf-8") for p in papers)
    links = set(re.findall(r'href="errata-mpvi-papers-(\w+)\.html#(E\d+)"', text))
    assert {("axioms2024", "E4"), ("top2025", "E14"), ("top2025", "E33"),
            ("mutze", "E78")} <= links                 # each on its paper's errata page


def test_pages_show_figure_caption_parameters_tables_and_provenance(report):
    out, _ = report
    html = (out / "axioms2024.html").read_text(encoding="utf-8")
    start = html.index('id="axioms2024_tab02"')
    section = html[start:html.index("</section>", start)]
    assert '<img src="files/axioms2024/axioms2024_tab02.png"' in section
    assert "meshes_per_tbar" in section                          # parameters
    assert '<table class="data">' in section                    # the CSV as a table
    record = json.loads((FIGURES / "axioms2024" / "axioms2024_tab02.json").read_text())
    assert record["git_commit"] in section and record["context"] in section
    top = (out / "top2025.html").read_text(encoding="utf-8")
    assert '<table class="newton">' in top and "mean iterations per step" in top


def test_a_report_of_nothing_run_shows_every_value_missing(tmp_path):
    (tmp_path / "results").mkdir()
    index, papers = write_report(tmp_path / "results", tmp_path / "r")
    statuses = Counter(s for p in papers for _, _, s in parse(tmp_path / "r" / p.page).values)
    assert set(statuses) == {"MISSING"}
    assert "not run" in (tmp_path / "r" / "axioms2024.html").read_text(encoding="utf-8")


def test_out_must_be_new_empty_or_an_earlier_report(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep me")
    with pytest.raises(ReportError, match="not an mpvi report"):
        write_report(FIGURES, mine)
    assert (mine / "thesis.tex").read_text() == "keep me"
    assert main(["report", "--out", str(mine)]) == 2


def test_a_failed_report_leaves_the_earlier_one_untouched(tmp_path, monkeypatch):
    results = tmp_path / "results"
    (results / "axioms2024").mkdir(parents=True)
    out = tmp_path / "r"
    write_report(results, out)
    before = sorted(p.name for p in out.iterdir())
    assert MARKER in before

    def broken(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(mpvi.repro.report.Path, "write_text", broken)
    with pytest.raises(OSError, match="disk full"):
        write_report(results, out)
    monkeypatch.undo()
    assert sorted(p.name for p in out.iterdir()) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_cli_report_writes_index_and_refuses_missing_results(tmp_path, capsys):
    assert main(["report", "--results", str(tmp_path / "nothing"),
                 "--out", str(tmp_path / "r")]) == 2
    assert "mpvi run --all" in capsys.readouterr().err
    assert main(["report", "--out", str(tmp_path / "r")]) == 0
    assert Path(capsys.readouterr().out.strip()) == tmp_path / "r" / "index.html"


def test_errata_headings_get_anchors_and_tags_link_to_them():
    html, anchors = errata_html("## top2025 — A paper\n\n### [E3] A slip\n\nSee [E3] and "
                                "[E9].\n")
    assert anchors == {"top2025", "E3"}
    assert '<h3 id="E3">' in html and '<h2 id="top2025">' in html
    assert '<a href="#E3">[E3]</a>' in html and "[E9]" in html and 'href="#E9"' not in html


def test_short_numbers_keep_the_full_value_short():
    assert short_number("0.1000000000000000000000000000000000055") == "0.1"
    assert short_number("-0.0894059079073123456") == "-0.0894059079073"
    assert short_number("1.234567890123456789e-30") == "1.23456789012e-30"
    assert short_number("4.11") == "4.11" and short_number("midpoint") == "midpoint"


@pytest.mark.parametrize("text", ["1", "-0.25", "1.5e-30", "2", "0.0", "NaN", "inf", "-2/3",
                                  "gauss-legendre", "tanh-sinh", "mutze_iter1", "lambda+",
                                  "d_t a.grad_v^2 L", "parabolic Euler-Lagrange (44)",
                                  "step failed: NewtonError: no convergence", "", "x"])
def test_numbers_names_and_sentences_are_not_formulas(text):
    assert parse_formula(text) is None and formula_html(text) is None


def test_a_printed_formula_becomes_mathml_as_written():
    html = formula_html("2*tau**3-3*tau**2+1")
    assert html.startswith('<span class="formula" title="2*tau**3-3*tau**2+1">')
    assert html.count('<math display="inline">') == 1
    mathml = html[html.index("<math"):]
    # the paper's order (2 tau^3 first, then - 3 tau^2, then + 1), tau as a Greek letter
    assert re.search(r"<mn>2</mn>.*<mi>τ</mi><mn>3</mn>.*<mo>−</mo>.*<mn>3</mn>.*<mo>\+</mo><mn>1</mn>", mathml)
    assert "<mfrac>" in formula_html("(7*z**4-192*z**2+420)/(2*z**4+18*z**2+420)")
    assert "<msqrt>" in formula_html("sqrt(10)", symbolic=True)
    assert formula_html("sqrt(10)") is not None                 # a function counts as a formula
    assert formula_html("3/5", symbolic=True) is not None and formula_html("3/5") is None
    assert "<msub><mi>Δ</mi><mi>t</mi></msub>" in formula_html("Delta_t*(Delta_t**2-10)")
    assert "<mi>Dt_vDx_L</mi>" in formula_html("2*Dt_vDx_L + aF")  # a word stays whole
    assert formula_html("tau**0/factorial(0)*tau", symbolic=True).count("<mo>!</mo>") == 1


def test_a_long_sum_is_one_math_element_per_term_so_that_it_wraps():
    text = " + ".join(f"{k}/3*Dt_{'vDx_' * k}L" for k in range(1, 9))
    html = formula_html(text)
    assert html.count('<span class="term"><math display="inline">') == 8


@pytest.mark.parametrize("text", ["<script>alert(1)</script>", "x<y", "a + b<img src=x onerror=alert(1)>",
                                  "x.__class__", "(1).__class__", "__import__('os')",
                                  "x + __builtins__", "open(1)*x", "exec(x) + 1",
                                  "x + y\"", "a&b+c", "x + lambda: 1"])
def test_hostile_strings_are_escaped_text_never_markup(text):
    assert formula_html(text) is None
    c = cell(text)
    assert c.kind == "text"
    from jinja2 import Environment
    out = Environment(autoescape=True).from_string("<td>{{ c.html }}</td>").render(c=c)
    assert "<script" not in out and "<img" not in out and "<y" not in out


def test_a_name_that_is_not_a_known_function_is_a_symbol_never_called():
    """The grammar calls only the formula functions: ``open(x)`` is not a formula, nothing
    is opened or executed."""
    import sympy
    for text in ["open(x) + 1", "eval(x) + 1", "getattr(x, y) + 1", "print(x)*2"]:
        expr = parse_formula(text)
        assert expr is None or isinstance(expr, sympy.Basic), text


def test_cells_keep_numbers_shorten_long_text_and_render_formulas():
    assert cell("0.1000000000000000000000000000000000055").kind == "num"
    assert cell("0.1000000000000000000000000000000000055").html == "0.1"
    assert cell("10.8827961854053071035644695459", None).html == "10.8827961854053071035644695459"
    assert cell("3/5 - g").kind == "formula"
    long = cell("word " * 100)
    assert long.kind == "text" and "(500 characters)" in long.html
    assert cell(None).html == "-" and cell(3).kind == "num"


def test_the_report_shows_printed_and_reproduced_formulas_as_mathml(report):
    out, _ = report
    html = (out / "hermite.html").read_text(encoding="utf-8")
    start = html.index('id="hermite_fig01"')
    section = html[start:html.index("</section>", start)]
    row = section[section.index('data-key="N1"'):]
    row = row[:row.index("</tr>")]
    assert row.count("<math") == 2 and "2*tau**3-3*tau**2+1" in row    # raw string kept (title)
    assert "2*tau**3-3*tau**2+1</td>" not in row                        # not shown raw
    mutze = (out / "mutze.html").read_text(encoding="utf-8")
    assert mutze.count('<span class="term">') > 100                    # FORM's long sums wrap


def _certified_paper(rows, values):
    """A paper of one certified item whose certified block encloses ``values`` and
    whose published-value rows are ``rows`` (name-spaces: status, proof, proven, value)."""
    rep = SimpleNamespace(id="p_fig01", item="Fig. 1", title="t", paper="p")
    cert = {"values": values, "columns": {"": {"x": {"min": 60, "median": 62}}},
            "not_certified": {"t": "an input"}}
    item = Item(rep, {"certified": cert, "quick": False, "wall_time_s": 1.0}, rows,
                "errata.html")
    paper = Paper("p", "", "p.html", "errata.html", [item])
    return paper, item


def test_no_proof_count_where_no_published_value_was_proven():
    value = SimpleNamespace(key="k", id="p_fig01")
    unproven = SimpleNamespace(status="known", proof=None, proven=None, value=value)
    proven = SimpleNamespace(status="match", proof="proven match", proven=40, value=value)
    for rows, values in (([], {}), ([unproven], {}), ([unproven], {"k": [0, "x"]})):
        paper, item = _certified_paper(rows, values)
        assert item.proofs is None and paper.proofs is None and paper.certified == 1
        html = _environment().get_template("index.html").render(
            papers=[paper], statuses=STATUSES, proofs=("proven match", "proven misprint"),
            total=paper.counts, total_time=1.0, title="t", version="v", commit="c",
            results="r", generated="g")
        assert "no published values in its certified runs" in html
        assert not re.search(r">\s*0 match, 0 misprint", html), html
    assert item.certified_summary == "1 compared value(s) and 1 column(s) with proven " \
                                     "digits, 1 not certified"
    paper, item = _certified_paper([proven, unproven], {"k": [40, "x"]})
    assert item.proofs == {"proven match": 1, "proven misprint": 0} == paper.proofs
    paper, item = _certified_paper([], {})
    item.certified["columns"] = {}
    assert item.certified_summary == ("no published value or data column among its "
                                      "enclosures, 1 not certified")
