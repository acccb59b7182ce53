"""``mpvi report``: a static HTML report of the reproductions' outputs.

The report reads what ``mpvi run`` wrote (``figures/`` by default, ``quick-figures/`` with
``--quick``) and writes a self-contained directory: no server, no network, no script;
``index.html`` opens from disk and the directory can be moved or archived as a whole.

    index.html           one row per paper: figures reproduced, published values matched /
                         known discrepancies / mismatches / missing / skipped, compute time
    <paper>.html         every figure or table of the paper: the PNG, a caption (from the
                         script's docstring) with the parameters, the published values next
                         to the reproduced ones with their status (the rows of ``mpvi diff``,
                         :func:`mpvi.repro.published.diff`), links to the ERRATA entries that
                         explain the differences, the data tables, the proven digits of a
                         run with ``--certify`` (beside the estimated ones of each value
                         and column, the certified block's statement, and a plot of proven
                         digits against time per ``growth`` entry), and the provenance
                         (mpvi version, commit, context, digits, wall time, Newton
                         statistics, studies)
    errata-<package>.html  the package's ERRATA.md, one anchor per [En] tag
    files/<paper>/       copies of the PNG, CSV and JSON files the pages show and link,
                         and the growth plots (``<id>_growth<k>.png``, :func:`growth_png`)

The pages are Jinja2 templates (``mpvi/repro/templates/``); Markdown (ERRATA.md, docstrings) is
rendered by markdown-it-py with raw HTML disabled.  The directory is built next to
``--out`` and renamed into place, so a failed report never leaves half a report; an
existing ``--out`` is replaced only if it is empty or an earlier report.

Outputs are read through their commit records (:func:`mpvi.repro.records.read_records`): an
id shows the files its JSON lists, and if any id's files do not match their JSON (an
interrupted run) or a JSON is malformed or changed (its digest), no report is written
(:class:`mpvi.repro.records.OutputError`, one line per id).  A file is shown and copied only
if it is a regular file inside the results directory: a symbolic link (whose target
could be any file of the user's), a FIFO, a device, or a path leading out of the
directory is skipped, with one line on stderr, whether or not the JSON lists it.
"""
from __future__ import annotations

import csv
import datetime
import importlib
import json
import math
import os
import re
import shutil
import stat
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from io import BytesIO, StringIO
from pathlib import Path

from mpvi import __version__
from mpvi.ground import io
from mpvi.ground.expressions import FUNCTIONS, ExpressionError, parse_expression
from mpvi.repro import digits as _digits
from mpvi.repro.declare import all_reproductions, output_paths
from mpvi.repro.packages import all_folders, folder_of, reproduction_packages
from mpvi.repro.published import (PROOFS, STATUSES, diff, errata_tags, load_all_published,
                                  load_known, read_utf8)
from mpvi.repro.records import MAX_OUTPUT_BYTES, read_records

MARKER = ".mpvi-report"
"""File that marks a directory as a report, which a later report may replace."""
HEAD_ROWS, TAIL_ROWS = 20, 8
"""A data table longer than HEAD_ROWS + TAIL_ROWS shows its first and last rows only (the
whole table is the linked CSV)."""
SHOWN_DIGITS = 12
"""Significant digits shown for long numbers (the full number is the cell's tooltip)."""
_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|obj|ref|math):`")
_PAPER_HEADING = re.compile(r"^## (\S+) — (.+)$", re.M)


class ReportError(OSError):
    """The report cannot be written where asked (e.g. --out is a directory that is not an
    earlier report)."""


@dataclass
class Table:
    """A CSV shown as an HTML table: ``rows`` are the shown rows, ``omitted`` how many
    between the head and the tail were left out (the whole table is ``file``)."""

    name: str
    file: str
    columns: list
    head: list
    tail: list
    omitted: int
    total: int
    digits: dict = field(default_factory=dict)
    """Column -> its agreement with a run with more digits (``mpvi run --check-digits``,
    :func:`mpvi.repro.digits.column_agreement`); empty if not checked."""
    proven: dict = field(default_factory=dict)
    """Column -> ``{"min", "median"}`` of its proven digits (``mpvi run --certify``, the
    record's ``certified.columns``); empty if the run was not certified."""
    not_proven: dict = field(default_factory=dict)
    """Column -> why its digits are not proven, for a certified run."""

    def correct_digits(self, column):
        """The header cell of ``column``'s correct digits: the smallest over its rows,
        'exact' if the two runs agree on every row, '' if not checked or not numbers."""
        c = self.digits.get(column)
        if c is None:
            return ""
        return "exact" if c["identical"] else str(c["min"])

    def proven_digits(self, column):
        """(header cell, tooltip) of ``column``'s proven digits: the fewest over its rows,
        the median in the tooltip; '-' and why for a column that is not certified."""
        c = self.proven.get(column)
        if c is None:
            return "-", f"not proven: {self.not_proven.get(column, 'no enclosure recorded')}"
        return str(c["min"]), f"proven digits: at least {c['min']}, median {c['median']}"


@dataclass
class Growth:
    """One plot of proven digits against time of a certified run (the ``growth`` entry
    of its ``certified`` block: ``label`` -> ``t``, ``digits``, ``dps``, ``note``), drawn
    into the report file ``file`` (:func:`growth_png`)."""

    label: str
    file: str
    t: list
    digits: list
    dps: int
    note: str


@dataclass
class Item:
    """One reproduction on a paper page."""

    rep: object
    record: dict | None
    rows: list
    errata_page: str
    errata_anchors: set = field(default_factory=set)
    caption: str = ""
    details: str = ""
    png: str | None = None
    files: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    other_values: list = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    growth: list = field(default_factory=list)
    """The :class:`Growth` plots of its certified run."""

    @property
    def certified(self):
        """The run's ``certified`` block (``mpvi run --certify``,
        :func:`mpvi.repro.run.certified_block`), or None."""
        return None if self.record is None else self.record.get("certified")

    @property
    def proofs(self):
        """``{proof: n}`` over its compared values: how many their enclosures prove
        matched or misprinted (:func:`mpvi.repro.published.proof`); None if its run was
        not certified or its certified run proves no digit of any of its published values
        (nothing was compared: the page says nothing about proofs rather than "0 proven
        match")."""
        if self.certified is None or all(r.proven is None for r in self.rows):
            return None
        return {p: sum(r.proof == p for r in self.rows) for p in PROOFS}

    @property
    def certified_summary(self):
        """What its certified run proved, in words: the compared values enclosed, the
        columns with proven digits, what was not certified; a count only where it is not
        zero (the block's statement, above it, says what its enclosures prove)."""
        cert = self.certified
        n_values = len(cert["values"])
        n_columns = sum(len(c) for c in cert["columns"].values())
        proven = [f"{n} {what}" for n, what in ((n_values, "compared value(s)"),
                                                (n_columns, "column(s) with proven digits"))
                  if n]
        text = " and ".join(proven) or \
            "no published value or data column among its enclosures"
        n_not = len(cert["not_certified"])
        return f"{text}, {n_not} not certified" if n_not else text

    @property
    def anchor(self):
        return self.rep.id

    @property
    def compute_time(self):
        """The reproduction's wall time plus that of its studies computed outside it
        (:func:`compute_time`); None if it has not run."""
        return None if self.record is None else compute_time([self.record])

    @property
    def digits(self):
        """The run's ``digits_check`` record (:mod:`mpvi.repro.digits`), or None (also if
        it is stale: :attr:`stale_digits`)."""
        check = None if self.record is None else self.record.get("digits_check")
        return None if check is None or check.get("stale") else check

    @property
    def stale_digits(self):
        """Why the run's ``digits_check`` is stale (kept from an earlier run whose outputs
        differ, :func:`mpvi.repro.records.carry_digits_check`), or None."""
        check = None if self.record is None else self.record.get("digits_check")
        return check["reason"] if check is not None and check.get("stale") else None

    @property
    def studies_time(self):
        """The part of :attr:`compute_time` spent on studies computed outside it."""
        return self.compute_time - float(self.record.get("wall_time_s") or 0)


@dataclass
class Paper:
    name: str
    citation: str
    page: str
    errata_page: str
    items: list = field(default_factory=list)
    compute_time_s: float = 0.0

    @property
    def counts(self):
        return count_statuses(r for item in self.items for r in item.rows)

    @property
    def fewest_digits(self):
        """The smallest number of correct digits measured in any output of this paper's
        items (``mpvi run --check-digits``) and the item's id, or None if no item that
        changes with the precision was checked."""
        found = [(i.digits["smallest"], i.rep.id) for i in self.items
                 if i.digits is not None and i.digits["smallest"] is not None]
        return min(found) if found else None

    @property
    def median_digits(self):
        """The median over the checked columns of this paper's items (that the two runs do
        not agree on in every row) of their median correct digits; None if none."""
        found = [c["median"] for i in self.items if i.digits is not None
                 for cols in i.digits["tables"].values() for c in cols.values()
                 if not c["identical"]]
        return statistics.median_low(found) if found else None

    @property
    def proofs(self):
        """``{proof: n}`` over its items' compared values (:attr:`Item.proofs`), or None if
        no certified item (``mpvi run --certify``) compares a published value."""
        proven = [i.proofs for i in self.items if i.proofs is not None]
        if not proven:
            return None
        return {p: sum(counts[p] for counts in proven) for p in PROOFS}

    @property
    def certified(self):
        """How many of its items were run with ``--certify``."""
        return sum(i.certified is not None for i in self.items)

    @property
    def checked(self):
        """How many items were run with ``--check-digits``."""
        return sum(i.digits is not None for i in self.items)

    @property
    def reproduced(self):
        return sum(item.record is not None for item in self.items)

    @property
    def kinds(self):
        kinds = {("quick" if item.record.get("quick") else "full")
                 for item in self.items if item.record is not None}
        return " + ".join(sorted(kinds)) or "-"


def count_statuses(rows):
    """``{status: n}`` over :data:`mpvi.repro.published.STATUSES`, zeros included."""
    counts = dict.fromkeys(STATUSES, 0)
    for r in rows:
        counts[r.status] += 1
    return counts


def short_number(text, digits=SHOWN_DIGITS):
    """A number string shortened to ``digits`` significant digits (other text unchanged)."""
    try:
        d = Decimal(str(text))
    except (InvalidOperation, ValueError):
        return str(text)
    if not d.is_finite() or len(d.as_tuple().digits) <= digits:
        return str(text)
    mantissa, e, exponent = f"{d:.{digits}g}".partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return mantissa + e + exponent


FORMULA_MAX_CHARS = 2000
"""A formula longer than this is shown as text (shortened to LONG_TEXT characters, the
whole in the tooltip and the linked file): no reader reads 11,000 characters of mathematics."""
LONG_TEXT = 240
"""A table cell's text longer than this is cut (the whole text is the cell's tooltip)."""
SPLIT_TERMS = 60
"""A sum whose source is longer than this is shown as one ``<math>`` element per term, so
that the line can break between the terms (Chromium breaks no line inside a ``<math>``)."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HYPHENATED = re.compile(r"[A-Za-z]-[A-Za-z]")
_OPERATOR = re.compile(r"[-+*/^(]")
_GREEK = {"alpha", "beta", "gamma", "Gamma", "delta", "Delta", "epsilon", "zeta", "eta",
          "theta", "Theta", "kappa", "lambda", "Lambda", "mu", "nu", "xi", "Xi", "pi", "Pi",
          "rho", "sigma", "Sigma", "tau", "phi", "Phi", "chi", "psi", "Psi", "omega", "Omega"}
_MATHML_TAGS = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msup", "msub",
                "msubsup", "mfrac", "msqrt", "mroot", "munder", "mover", "munderover",
                "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom"}
_MATHML_ATTRIBUTES = {"linethickness", "mathvariant", "columnalign", "rowalign",
                      "stretchy", "fence", "separator", "lspace", "rspace", "display"}


def _formula_functions():
    """The functions a formula string may call: those of the closed grammar
    (:data:`mpvi.ground.expressions.FUNCTIONS`) and ``Matrix``."""
    # sympy loaded lazily: heavy (0.5 s), and only formulas need it
    import sympy as sp
    return {**FUNCTIONS, "Matrix": sp.Matrix}


def parse_formula(text, symbolic=False):
    """``text`` as a sympy expression, as written (``evaluate=False``), or None if it is
    not a formula: a number (``1.5``, ``-2e-3``) or anything else that is not an
    expression of symbols, e.g. a method name (``gauss-legendre``, ``mutze_iter1``) or a
    sentence.  With ``symbolic`` (the printed or reproduced side of a ``symbolic``
    comparison) a formula of numbers alone also counts (``3/5``, ``oo``); otherwise a
    formula must contain an operator and a symbol or a function (``2*sqrt(15)``, not
    ``-2/3``), and a hyphen between two letters (``tanh-sinh``) makes a name, not a
    difference.

    Safe for any string: it is read by the closed grammar of
    :func:`mpvi.ground.expressions.parse_expression` (nothing in it runs as code): numbers,
    arithmetic, the functions of :func:`_formula_functions`, the constants ``oo`` and
    ``pi``, a tuple of formulas (an interval); every other name is a :class:`sympy.Symbol`."""
    text = str(text).strip()
    if not text or len(text) > FORMULA_MAX_CHARS:
        return None
    try:
        Decimal(text)
        return None                                    # a number stays a number
    except (InvalidOperation, ValueError):
        pass
    if not symbolic and (not _OPERATOR.search(text) or _HYPHENATED.search(text)):
        return None
    # sympy loaded lazily: heavy (0.5 s), and only formulas need it
    import sympy as sp
    functions = _formula_functions()
    try:
        expr = parse_expression(text, what="formula", free_symbols=True, functions=functions,
                                constants={"oo": sp.oo, "pi": sp.pi}, evaluate=False,
                                tuples=True, max_length=FORMULA_MAX_CHARS)
    except ExpressionError:
        return None
    names = set(_NAME.findall(text))
    symbols = names - functions.keys() - {"oo", "pi"}
    if not symbolic and not symbols and not names & functions.keys():
        return None                                    # arithmetic of numbers: 2/3
    return expr


def _mathml_printer():
    # sympy loaded lazily: heavy (0.5 s), and only formulas need it
    from sympy.printing.mathml import MathMLPresentationPrinter

    class Printer(MathMLPresentationPrinter):
        """Sympy's presentation MathML, terms in the order written; a symbol is a name
        with a subscript only if it reads as one (``Delta_t``, ``L_xx``, ``K11``):
        transliterated words (``Dt_vDx_L``) stay whole."""

        def _print_Symbol(self, sym, style="plain"):
            base, _, sub = sym.name.partition("_")
            if sub and ("_" in sub or (len(base) > 1 and base not in _GREEK)):
                x = self.dom.createElement("mi")
                x.appendChild(self.dom.createTextNode(sym.name))
                return x
            return super()._print_Symbol(sym, style)

    return Printer({"order": "none"})


def _is_safe_mathml(xml):
    """Only MathML elements and attributes (the printer writes its text unescaped; the
    characters of a parsed formula cannot make markup, and this checks it once more)."""
    for m in re.finditer(r"<(/?)([A-Za-z][\w-]*)([^<>]*)>", xml):
        if m.group(2) not in _MATHML_TAGS:
            return False
        attrs = re.findall(r'\s([\w-]+)="[^"<>&]*"', m.group(3))
        if re.sub(r'\s[\w-]+="[^"<>&]*"', "", m.group(3)).strip() not in ("", "/") or \
                not set(attrs) <= _MATHML_ATTRIBUTES:
            return False
    return "<" not in re.sub(r"<[^<>]*>", "", xml)


def formula_html(text, symbolic=False):
    """``text`` as inline MathML (a :class:`markupsafe.Markup`), or None if it is not a
    formula (:func:`parse_formula`).  The raw string is the tooltip; a long sum is one
    ``<math>`` per term so that the line can break between terms."""
    # markupsafe loaded lazily with jinja2: only the report needs it
    from markupsafe import Markup, escape
    expr = parse_formula(text, symbolic)
    if expr is None:
        return None
    printer = _mathml_printer()
    try:
        node = printer._print(expr)
    except Exception:                                  # noqa: BLE001 -- print as text
        return None
    chunks = [[node]]
    if node.nodeName == "mrow" and len(str(text)) > SPLIT_TERMS:
        chunks = [[]]
        for child in node.childNodes:
            if child.nodeName == "mo" and child.firstChild is not None and \
                    child.firstChild.data in ("+", "-") and chunks[-1]:
                chunks.append([])
            chunks[-1].append(child)
    parts = []
    for chunk in chunks:
        inner = "".join(c.toxml() for c in chunk)
        parts.append(f'<math display="inline">{inner if len(chunk) == 1 else f"<mrow>{inner}</mrow>"}</math>')
    if not all(_is_safe_mathml(p) for p in parts):
        return None
    if len(parts) > 1:                                 # whole terms, each as tall as it is
        parts = [f'<span class="term">{p}</span>' for p in parts]
    html = " ".join(parts).replace("<mo>-</mo>", "<mo>\u2212</mo>")
    return Markup(f'<span class="formula" title="{escape(str(text).strip())}">{html}</span>')


@dataclass
class Cell:
    """How a table shows one value: ``kind`` (``num``, ``formula``, ``text``) is the
    cell's class, ``html`` its content (:func:`cell`)."""

    kind: str
    html: object


def cell(value, digits=SHOWN_DIGITS, symbolic=False):
    """A table cell for ``value`` (a CSV field or a computed value): a number shortened
    to ``digits`` significant digits (None: as it is), a formula as MathML
    (:func:`formula_html`; ``symbolic``: see :func:`parse_formula`), other text escaped
    and cut at :data:`LONG_TEXT` characters."""
    # markupsafe loaded lazily with jinja2: only the report needs it
    from markupsafe import Markup, escape
    if value is None:
        return Cell("text", "-")
    if not isinstance(value, str):
        return Cell("num", _compact(value)) if isinstance(value, (int, float)) else \
            Cell("text", _compact(value))
    try:
        Decimal(value)
        return Cell("num", value if digits is None else short_number(value, digits))
    except (InvalidOperation, ValueError):
        pass
    html = formula_html(value, symbolic)
    if html is not None:
        return Cell("formula", html)
    if len(value) > LONG_TEXT:
        return Cell("text", Markup(f"{escape(value[:LONG_TEXT])}… "
                                   f'<span class="meta">({len(value)} characters)</span>'))
    return Cell("text", value)


def breakable(name):
    """A column name that may break after its underscores (``predicted_<wbr>norm_<wbr>dev``)."""
    # markupsafe loaded lazily with jinja2: only the report needs it
    from markupsafe import Markup, escape
    return Markup(str(escape(name)).replace("_", "_<wbr>"))


def _markdown():
    # markdown-it loaded lazily: only the report's errata pages need it
    from markdown_it import MarkdownIt
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def docstring_html(doc):
    """(caption, rest) of a script docstring as HTML: its first paragraph and the others,
    with Sphinx roles (``:func:`x```) reduced to code spans."""
    doc = _ROLE.sub("`", (doc or "").strip())
    paragraphs = re.split(r"\n\s*\n", doc, maxsplit=1)
    md = _markdown()
    first = md.render(paragraphs[0]) if paragraphs[0] else ""
    rest = md.render(paragraphs[1]) if len(paragraphs) > 1 else ""
    return first, rest


def errata_html(text):
    """ERRATA.md as HTML: each heading gets the id of its first [En] tag (or, for a paper
    heading ``## <paper> — ...``, the paper name), and every [En] in the text links to its
    heading.  Returns (html, anchors)."""
    md = _markdown()
    tokens = md.parse(text)
    anchors = set()
    for i, tok in enumerate(tokens):
        if tok.type != "heading_open":
            continue
        content = tokens[i + 1].content
        tags = errata_tags(content)
        paper = _PAPER_HEADING.match(f"{tok.markup} {content}")
        anchor = tags[0] if tags else (paper.group(1) if paper else None)
        if anchor and anchor not in anchors:
            tok.attrSet("id", anchor)
            anchors.add(anchor)
    html = md.renderer.render(tokens, md.options, {})
    html = re.sub(r"\[(E\d+)\]", lambda m: f'<a href="#{m.group(1)}">[{m.group(1)}]</a>'
                  if m.group(1) in anchors else m.group(0), html)
    return html, anchors


def paper_citations(errata_text):
    """``{paper: citation}`` from the ERRATA.md headings ``## <paper> — <citation>`` (the
    first heading of a paper; later ones name parts of it)."""
    found = {}
    for m in _PAPER_HEADING.finditer(errata_text):
        found.setdefault(m.group(1), m.group(2).strip())
    return found


def read_table(path, name, file):
    try:
        text = io.read_regular(path, MAX_OUTPUT_BYTES, follow_symlinks=False).decode("utf-8")
        rows = list(csv.reader(StringIO(text, newline="")))
    except (ValueError, csv.Error) as exc:  # not a regular file, not UTF-8, not CSV
        raise ReportError(f"{path}: not a readable CSV table ({exc})") from None
    if not rows:
        return Table(name, file, [], [], [], 0, 0)
    columns, body = rows[0], rows[1:]
    if len(body) <= HEAD_ROWS + TAIL_ROWS:
        return Table(name, file, columns, body, [], 0, len(body))
    return Table(name, file, columns, body[:HEAD_ROWS], body[-TAIL_ROWS:],
                 len(body) - HEAD_ROWS - TAIL_ROWS, len(body))


def compute_time(records):
    """Seconds of computation behind ``records`` (JSON provenance): each reproduction's
    wall time plus each study computed outside it (in a parallel run, or earlier, from
    the cache) once, even when several reproductions share it."""
    total, seen = 0.0, set()
    for rec in records:
        total += float(rec.get("wall_time_s") or 0)
        parallel = "executor" in rec
        for s in rec.get("studies", []):
            ident = (s.get("study"), s.get("computed_utc"), s.get("computed_at_commit"),
                     s.get("wall_time_s"))
            if (parallel or s.get("from_cache")) and ident not in seen:
                seen.add(ident)
                total += float(s.get("wall_time_s") or 0)
    return total


def _errata_text(folder):
    return read_utf8(folder.errata) if folder.errata.exists() else ""


def errata_page(folder):
    """The report's page of a folder's ERRATA.md: ``errata-<package>[-<paper>].html``."""
    return f"errata-{folder.name.replace('/', '-')}.html"


def package_errata(packages):
    """``{folder name: (html, anchors)}``: the ERRATA.md of every folder of ``packages``
    (:func:`mpvi.repro.packages.all_folders`; a paper folder's own, :func:`errata_html`)."""
    return {f.name: errata_html(_errata_text(f)) for f in all_folders(packages)}


def collect(results, reps=None, packages=None, published=None, known=None, errata=None):
    """The papers of the report: a list of :class:`Paper`, each with its :class:`Item`\\ s,
    from the outputs in ``results``.  Also returns the files to copy: a dict
    report-relative name -> source path.  ``errata``: folder name -> (html, anchors) of
    its ERRATA.md (:func:`package_errata`).  Raises :class:`mpvi.repro.records.OutputError`
    if the outputs of any id cannot be used (:func:`mpvi.repro.records.read_provenance`: the
    report shows no old values beside new files)."""
    reps = all_reproductions() if reps is None else reps
    packages = reproduction_packages() if packages is None else packages
    published = load_all_published() if published is None else published
    known = load_known() if known is None else known
    records = read_records(reps.values(), results)
    rows = diff(list(reps), results, published, known, records)
    by_id = {}
    for r in rows:
        by_id.setdefault(r.value.id, []).append(r)
    errata = package_errata(packages) if errata is None else errata
    citations = {}
    for folder in all_folders(packages):
        citations.update(paper_citations(_errata_text(folder)))
    papers, copies = {}, {}
    others = set(reps)
    for rep in reps.values():
        folder = folder_of(rep, packages)
        page = errata_page(folder)
        paper = papers.setdefault(rep.paper, Paper(rep.paper, citations.get(rep.paper, ""),
                                                   f"{rep.paper}.html", page))
        paths = output_paths(rep, results)
        record = records[rep.id]
        item = Item(rep, record, by_id.get(rep.id, []), page, errata[folder.name][1])
        item.counts = count_statuses(item.rows)
        module = importlib.import_module(rep.module) if rep.module else None
        item.caption, item.details = docstring_html(getattr(module, "__doc__", ""))
        folder = f"files/{rep.paper}"
        files = _output_files(rep, record, paths, others, results)
        if paths["png"] in files:
            item.png = f"{folder}/{rep.id}.png"
        csvs = [p for p in files if p.suffix == ".csv"]
        for path in csvs:
            name = "" if path == paths["csv"] else path.stem[len(rep.id) + 1:]
            table = read_table(path, name, f"{folder}/{path.name}")
            if item.digits is not None:
                table.digits = item.digits["tables"].get(path.name, {})
            if item.certified is not None:
                _proven_columns(table, item.certified)
            item.tables.append(table)
        # the growth plots are drawn from the record: only from one inside the results
        # (a paper directory linked from outside gives nothing of its own to the report)
        if item.certified is not None and \
                Path(paths["json"]).resolve().is_relative_to(Path(results).resolve()):
            item.growth = [Growth(label, f"{folder}/{rep.id}_growth{k}.png", g["t"],
                                  g["digits"], g["dps"], g["note"])
                           for k, (label, g) in enumerate(
                               item.certified.get("growth", {}).items(), 1)]
        if record is not None:
            for path in [*files, *_inside([paths["json"]], results)]:
                copies[f"{folder}/{path.name}"] = path
                item.files.append(f"{folder}/{path.name}")
            compared = {r.value.key for r in item.rows}
            item.other_values = [(k, v) for k, v in record["values"].items()
                                 if k not in compared]
        paper.items.append(item)
    for paper in papers.values():
        paper.compute_time_s = compute_time(i.record for i in paper.items if i.record)
    return list(papers.values()), copies


def _proven_columns(table, certified):
    """Put the proven digits of the ``certified`` block's columns on ``table``, and why
    the others are not proven (a column of a further table is named ``<table>.<column>``
    in ``not_certified``; ``*``: the reproduction has no certified computation)."""
    table.proven = certified["columns"].get(table.name, {})
    why = certified["not_certified"]
    for column in table.columns:
        name = column if table.name == "" else f"{table.name}.{column}"
        if column not in table.proven:
            table.not_proven[column] = why.get(name, why.get("*", "no enclosure recorded"))


def growth_png(growth):
    """The plot of a :class:`Growth` as PNG bytes (matplotlib, no pyplot state): proven
    digits against t, with the run's digits as a dotted line.  A growth whose ``t`` and
    ``digits`` differ in length is a :class:`ReportError` naming it."""

    # matplotlib loaded lazily: heavy (0.3 s), and only a figure needs it
    from matplotlib.figure import Figure
    if len(growth.t) != len(growth.digits) or not growth.t:
        raise ReportError(f"the growth {growth.label!r} of a certified block has "
                          f"{len(growth.t)} times and {len(growth.digits)} digits: it "
                          f"cannot be plotted")
    fig = Figure(figsize=(6.4, 3.4))
    ax = fig.add_subplot()
    ax.plot(growth.t, growth.digits, ".-" if len(growth.t) <= 50 else "-", color="C0",
            label="proven digits")
    ax.axhline(growth.dps, color="gray", lw=0.8, ls=":", label=f"digits of the run "
                                                              f"({growth.dps})")
    ax.set_xlabel("t")
    ax.set_ylabel("proven digits")
    finite = [d for d in growth.digits if math.isfinite(d)]   # inf: an exact point
    ax.set_ylim(0, max([growth.dps, *finite]) + 5)
    ax.set_title(growth.label, fontsize="medium")
    ax.legend(fontsize="small", loc="lower left")
    fig.tight_layout()
    png = BytesIO()
    fig.savefig(png, dpi=100, format="png")
    return png.getvalue()


def _output_files(rep, record, paths, others, results):
    """The PNG and CSV files of ``rep``'s outputs (main CSV first): those its ``record``
    lists (the commit record, :mod:`mpvi.repro.run`), none if it has not run, and for a
    record without ``files`` those found beside it (not of the ids ``others``); only the
    regular files inside ``results`` (:func:`_inside`)."""
    if record is None:
        return []
    if "files" in record:
        names = sorted(record["files"], key=lambda n: (n != f"{rep.id}.png",
                                                       n != f"{rep.id}.csv", n))
        return _inside([paths["dir"] / name for name in names], results)
    found = [p for p in (paths["png"], paths["csv"]) if os.path.lexists(p)]
    return _inside(found + sorted(p for p in paths["dir"].glob(f"{rep.id}_*.csv")
                                  if p.stem not in others), results)


def _inside(paths, results):
    """The ``paths`` that are regular files inside the directory ``results`` (``lstat``:
    not a symbolic link, FIFO, device or directory; no ``..`` or link leading out of it);
    each other one is skipped with one line on stderr."""
    root = Path(results).resolve()
    kept = []
    for path in paths:
        try:
            mode = os.lstat(path).st_mode
            inside = Path(path).resolve().is_relative_to(root)
        except OSError as exc:
            why = f"cannot be read ({exc.strerror or exc})"
        else:
            why = (None if stat.S_ISREG(mode) and inside else
                   f"is {io.file_kind(mode)}, not a regular file" if not stat.S_ISREG(mode)
                   else f"is outside the results directory {results}")
        if why is None:
            kept.append(Path(path))
        else:
            print(f"mpvi: report: {path} {why}: not shown or copied", file=sys.stderr)
    return kept


def _environment():
    # jinja2 loaded lazily: heavy, and only the report needs it
    import jinja2
    # markupsafe loaded lazily with jinja2: only the report needs it
    from markupsafe import Markup
    env = jinja2.Environment(loader=jinja2.PackageLoader("mpvi.repro", "templates"),
                             autoescape=jinja2.select_autoescape(["html"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    env.filters["num"] = short_number
    env.filters["errata_links"] = _errata_links
    env.filters["compact"] = _compact
    env.filters["seconds"] = _seconds
    env.filters["digits_summary"] = _digits.summary
    env.filters["inline_md"] = lambda text: Markup(_markdown().renderInline(text))
    env.filters["sci"] = lambda x: "-" if x is None else f"{float(x):.1e}"
    env.filters["cell"] = cell
    env.filters["breakable"] = breakable
    return env


def _errata_links(text, page, anchors):
    """``text`` escaped, with each [En] that has an anchor a link to ``page#En``."""
    # markupsafe loaded lazily with jinja2: only the report needs it
    from markupsafe import Markup, escape

    def link(m):
        tag = m.group(1)
        return f'<a class="errata" href="{page}#{tag}">[{tag}]</a>' if tag in anchors else m.group(0)
    return Markup(re.sub(r"\[(E\d+)\]", link, str(escape(text))))


def _compact(value):
    if isinstance(value, (list, tuple)):
        return ", ".join(_compact(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return short_number(value, 16)


def _seconds(x):
    if x is None:
        return "-"
    x = float(x)
    return f"{x:.2f} s" if x < 10 else (f"{x:.0f} s" if x < 120 else f"{x / 60:.1f} min")


def _check_out(out):
    """Refuse an --out that exists and is neither empty nor an earlier report."""
    if out.exists():
        if not out.is_dir():
            raise ReportError(f"--out {out} exists and is not a directory")
        if any(out.iterdir()) and not (out / MARKER).exists():
            raise ReportError(f"--out {out} is a directory that is not an mpvi report (no "
                              f"{MARKER} in it); choose a new or empty directory")


def write_report(results, out, reps=None, stream=None):
    """Write the report of the outputs in ``results`` into the directory ``out``; returns
    (path of index.html, the papers)."""
    t0 = time.perf_counter()
    results, out = Path(results), Path(out).resolve()
    _check_out(out)
    if not results.is_dir():
        raise ReportError(f"no results in {results}: run `mpvi run --all` first "
                          f"(or `mpvi run --all --quick` and `mpvi report --quick`)")
    packages = reproduction_packages()
    errata = package_errata(packages)
    papers, copies = collect(results, reps, packages, errata=errata)
    env = _environment()
    common = {"version": __version__, "commit": io.git_commit(), "results": str(results),
              "generated": datetime.datetime.now(datetime.timezone.utc)
                           .strftime("%Y-%m-%d %H:%M UTC"),
              "papers": papers, "statuses": STATUSES, "proofs": PROOFS}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(io.create_directory(out.parent, f".{out.name}.tmp-"))   # 0777 less the umask
    try:
        pages = {"index.html": env.get_template("index.html").render(
            **common, title="mpvi reproduction report",
            total=count_statuses(r for p in papers for i in p.items for r in i.rows),
            total_time=sum(p.compute_time_s for p in papers))}
        for paper in papers:
            pages[paper.page] = env.get_template("paper.html").render(
                **common, paper=paper, title=f"{paper.name}: mpvi reproduction report")
        used = {folder_of(i.rep, packages) for p in papers for i in p.items}
        for folder in sorted(used, key=lambda f: f.name):
            pages[errata_page(folder)] = env.get_template("errata.html").render(
                **common, package=folder.name, body=errata[folder.name][0],
                title=f"Errata ({folder.name})")
        for name, text in pages.items():
            (tmp / name).write_text(text, encoding="utf-8")
        for growth in (g for p in papers for i in p.items for g in i.growth):
            (tmp / growth.file).parent.mkdir(parents=True, exist_ok=True)
            (tmp / growth.file).write_bytes(growth_png(growth))
        for name, source in copies.items():
            try:                               # no symbolic link followed, even one made now
                data = io.read_regular(source, MAX_OUTPUT_BYTES, follow_symlinks=False)
            except (OSError, ValueError) as exc:
                print(f"mpvi: report: {source} {exc}: not copied", file=sys.stderr)
                continue
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(data)
        (tmp / MARKER).write_text(f"mpvi {__version__} report of {results}\n", encoding="utf-8")
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if stream is not None:
        n = sum(len(p.items) for p in papers)
        print(f"report: {len(papers)} papers, {n} figures and tables, {len(pages)} pages in "
              f"{time.perf_counter() - t0:.1f} s -> {out / 'index.html'}", file=stream)
    return out / "index.html", papers


def _replace_dir(new, out):
    """Put the directory ``new`` at ``out`` (an earlier report there is removed)."""
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
        os.replace(out, old / "report")
    os.replace(new, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
