"""Catalogues generated from mpvi's registries at every build (``reference/generated/``).

* ``methods.rst``: every method of :data:`mpvi.METHODS` -- state, order, symplectic,
  implicit, stability bound, parameters, dense output and its order, reference -- with the order (and the other
  declared functions of the parameters) shown as the expression the method's registration
  declares (read from its source with :mod:`ast`, so the page cannot drift from the code),
  and the method's own documentation (its discrete Lagrangian or residual);
* ``systems.rst``: the systems of :mod:`mpvi.systems`, module by module, from their
  docstrings;
* ``cli.rst``: ``mpvi --help`` and the help of every subcommand, from the argument parser;
* ``reproductions.rst``: every reproduction of every installed reproduction package with
  its measured run time (reproductions/<paper>/runtimes.json), the wall time of the committed full
  run (``figures/``), its
  published-value statuses, and a link to its entry in the report;
* ``benchmarks.md``: every script of ``benchmarks/`` with its command and docstring;
* ``reproductions-<paper>.md``: the table of a paper's reproductions (id, item, title, from
  the declarations) that docs/guide/reproductions.md includes.

The report of the committed results (``mpvi report``) is written into the site as
``report/`` when the build finishes, so the catalogue's links resolve and the browser test
crawls it with the rest.
"""
from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import io
import os
import pkgutil
import textwrap
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
OUT = DOCS / "reference" / "generated"
REPORT = "report"          # the report's directory inside the built site


# ----- helpers -------------------------------------------------------------------------------

def _write(name: str, text: str) -> None:
    """Write a generated page only when its text changed (Sphinx then rereads it only
    when needed)."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _heading(text: str, char: str = "=") -> str:
    return f"{text}\n{char * len(text)}\n"


def _indent(text: str, n: int = 3) -> str:
    return textwrap.indent(text, " " * n, lambda line: True)


def _literal(text: str) -> str:
    return "::\n\n" + _indent(text.rstrip() or "(empty)") + "\n"


def _table(header: list[str], rows: list[list[str]], widths: str | None = None) -> str:
    """An rST list-table."""
    out = [".. list-table::", "   :header-rows: 1"]
    if widths:
        out.append(f"   :widths: {widths}")
    out.append("")
    for row in [header] + rows:
        first = True
        for cell in row:
            cell = str(cell).replace("\n", " ")
            out.append(f"   {'* -' if first else '  -'} {cell}")
            first = False
    return "\n".join(out) + "\n"


def _code(text) -> str:
    """An inline literal (rST), safe for any text."""
    text = str(text).replace("`", "'")
    return f"``{text}``" if text.strip() else ""


# ----- methods -------------------------------------------------------------------------------

def _declared(method, keyword: str) -> str | None:
    """The source expression of ``keyword=`` in the ``Method(...)`` call that registers
    ``method`` (a lambda's body, or the return expressions of a named function), or None
    when the value is not a function."""
    value = getattr(method, keyword)
    if not callable(value):
        return None
    module = importlib.import_module(method.prepare.__module__)
    tree = ast.parse(inspect.getsource(module))
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "Method"):
            continue
        kw = {k.arg: k.value for k in call.keywords}
        if not (isinstance(kw.get("name"), ast.Constant) and kw["name"].value == method.name):
            continue
        node = kw.get(keyword)
        if isinstance(node, ast.Lambda):
            return ast.unparse(node.body)
        if isinstance(node, ast.Name) and node.id in functions:
            returns = [ast.unparse(r.value) for r in ast.walk(functions[node.id])
                       if isinstance(r, ast.Return) and r.value is not None]
            return "; ".join(returns) if len(returns) == 1 else \
                f"{node.id}(p): returns " + " or ".join(returns)
        return ast.unparse(node) if node is not None else None
    return _function_source(value)


def _function_source(value) -> str:
    """A function's expression when its registration cannot be found (a method registered
    under another name, e.g. with dataclasses.replace, or in a notebook): a named
    function's return expressions, or the source lines of a lambda."""
    try:
        source = textwrap.dedent(inspect.getsource(value))
    except (OSError, TypeError):
        return f"{getattr(value, '__name__', 'a function')}(p) (source not available)"
    try:
        tree = ast.parse(source)
    except SyntaxError:                    # a lambda inside a call: the lines as written
        return " ".join(source.split())
    lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
    if getattr(value, "__name__", "") == "<lambda>" and len(lambdas) == 1:
        return ast.unparse(lambdas[0].body)
    returns = [ast.unparse(r.value) for r in ast.walk(tree)
               if isinstance(r, ast.Return) and r.value is not None]
    return " or ".join(returns) if returns else " ".join(source.split())


def _value_or_expr(method, keyword: str, value_at_defaults) -> str:
    expr = _declared(method, keyword)
    shown = _code(value_at_defaults)
    return f"{shown} (p: {_code(expr)})" if expr else shown


def _dense_output(method) -> str:
    """The method's dense output (:mod:`mpvi.engines.dense`) at its default parameters, as the
    solver chooses it: read from the method's stepper on a pendulum (on an oscillator for
    the forms of linear systems only)."""
    import sympy as sp

    import mpvi
    from mpvi.engines.dense import StepData
    ctx = mpvi.MPContext(30)
    q = sp.Symbol("q")
    system = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
    params, h = method.parameters(), ctx.num(1) / 10
    try:
        stepper = method.prepare(system, h, ctx, **params)
    except TypeError:                               # the linear forms
        system = mpvi.LinearSystem([[1]], [[1]], ctx)
        stepper = method.prepare(system, h, ctx, **params)
    data = StepData(method, stepper, system, ctx, h, params)
    how = {"hermite": f"Hermite interpolation of degree {2 * data.m + 1} through q and the "
                      f"exact flow's derivatives to order {data.m} at both nodes",
           "trial": "the method's own trial function",
           "substep": "a step of the method from the node",
           "taylor": "the Taylor polynomial of the substep"}[data.dense]
    return f"{how}: order {data.order} in q, p and v (as the nodes)"


def methods_page() -> str:
    import mpvi
    methods = sorted(mpvi.METHODS.values(), key=lambda m: m.name)
    rows = []
    for m in methods:
        # the order at the default parameters; its expression in p is in the method's
        # section below (in the table it made the column too narrow to read at 1280 px)
        rows.append([f":ref:`{m.name} <method-{m.name}>`", m.label, _code(m.state),
                     _code(m.order_for()),
                     "yes" if m.symplectic_for() else "no",
                     "yes" if m.implicit else "no",
                     "yes" if m.first_order else "no", m.reference])
    parts = [
        ".. This page is generated by docs/_ext/mpvi_catalogues.py from mpvi.METHODS.\n",
        _heading("Method catalogue"),
        f"Every method registered in :data:`mpvi.METHODS` ({len(methods)} methods), generated "
        "from the registry when this site is built. ``mpvi.solve(problem, name, h=..., "
        "**params)`` runs any of them; the state is what a step carries (``qp``: positions "
        "and momenta, ``qv``: positions and velocities). Orders and symplecticity are those "
        "the method declares *at its default parameters*; each is measured against its "
        "declaration by the test suite (``tests/test_methods.py``, "
        "``tests/test_schemes.py``). Below the table, each method's declared functions of "
        "its parameters ``p`` (its order among them) are shown as written in its "
        "registration, followed by its documentation.\n",
        _table(["method", "label", "state", "order", "symplectic", "implicit",
                "first-order systems", "reference"], rows, "14 14 6 6 8 8 8 36"),
    ]
    seen_docs = {}
    for m in methods:
        parts.append(f".. _method-{m.name}:\n")
        parts.append(_heading(f"{m.name} — {m.label}", "-"))
        fields = [
            ("registry name", _code(m.name)),
            ("state", f"{_code(m.state)}"),
            ("order", _value_or_expr(m, "order", m.order_for())),
            ("symplectic", _value_or_expr(m, "symplectic", m.symplectic_for())),
            ("implicit (Newton)", "yes" if m.implicit else "no"),
            ("parameters (defaults)",
             ", ".join(f"{_code(k)} = {_code(repr(v))}" for k, v in m.params.items()) or "none"),
            ("stability bound on the oscillator (ωh)",
             _value_or_expr(m, "stability_bound", m.stability_bound_for())
             if m.stability_bound is not None else "none below π known"),
            ("internal data of a step", _code(m.internal) if m.internal else "none"),
            ("dense output ``sol(t)``", _dense_output(m)),
            ("first-order systems", "yes" if m.first_order else "no"),
            ("reference", m.reference),
            ("module", _code(m.prepare.__module__)),
        ]
        parts.append(_table(["", ""], [[a, b] for a, b in fields], "25 75"))
        doc = inspect.cleandoc(m.doc or "")
        if not doc:
            parts.append("(no documentation)\n")
        elif doc in seen_docs:
            parts.append(f"Documented with :ref:`{seen_docs[doc]} <method-{seen_docs[doc]}>` "
                         f"(the same module).\n")
        else:
            seen_docs[doc] = m.name
            parts.append(".. rubric:: Documentation\n")
            parts.append(_literal(doc))
    return "\n".join(parts)


# ----- systems -------------------------------------------------------------------------------

def systems_page() -> str:
    import mpvi.systems as systems
    parts = [
        ".. This page is generated by docs/_ext/mpvi_catalogues.py from mpvi.systems.\n",
        _heading("System catalogue"),
        "The mechanical systems of the papers, one module of :mod:`mpvi.systems` each, "
        "generated from the modules when this site is built. Each factory takes a number "
        "context and returns a system or a :class:`mpvi.Problem` (with its exact solution "
        "where one is known); a system of your own is a :class:`mpvi.LagrangianSystem` "
        "(tutorial 1). Every system works with every second-order method.\n",
    ]
    rows, sections = [], []
    for mod in sorted(pkgutil.iter_modules(systems.__path__), key=lambda m: m.name):
        if mod.name.startswith("_"):
            continue
        name = f"mpvi.systems.{mod.name}"
        module = importlib.import_module(name)
        summary = (inspect.getdoc(module) or "").split("\n\n")[0].replace("\n", " ")
        public = [(n, obj) for n, obj in vars(module).items()
                  if not n.startswith("_") and getattr(obj, "__module__", None) == name
                  and (inspect.isfunction(obj) or inspect.isclass(obj))]
        rows.append([f":mod:`{name}`", summary,
                     ", ".join(_code(n) for n, _ in public)])
        sections.append(f".. _system-{mod.name}:\n")
        sections.append(_heading(name, "-"))
        sections.append(f".. automodule:: {name}\n   :no-members:\n")
        for n, obj in public:
            directive = "autoclass" if inspect.isclass(obj) else "autofunction"
            options = "\n   :members:\n" if inspect.isclass(obj) else "\n"
            sections.append(f".. {directive}:: {name}.{n}{options}")
    parts.append(_table(["module", "system", "public names"], rows, "25 50 25"))
    return "\n".join(parts + sections)


# ----- command line --------------------------------------------------------------------------

def cli_page() -> str:
    from mpvi.repro.cli import build_parser
    os.environ["COLUMNS"] = "100"        # argparse wraps help to the terminal width
    parser = build_parser()
    parts = [
        ".. This page is generated by docs/_ext/mpvi_catalogues.py from the argument parser.\n",
        _heading("Command line"),
        "The ``mpvi`` command (installed with the package; ``python -m mpvi`` is "
        "the same) lists, runs, compares and reports the reproductions. This page is the "
        "parser's own help, generated when the site is built.\n",
        _heading("mpvi", "-"),
        _literal(parser.format_help()),
    ]
    subparsers = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, sub in subparsers.choices.items():
        parts.append(f".. _cli-{name}:\n")
        parts.append(_heading(f"mpvi {name}", "-"))
        parts.append(_literal(sub.format_help()))
    return "\n".join(parts)


# ----- reproductions -------------------------------------------------------------------------

def reproductions_page() -> str:
    from mpvi.repro.published import diff
    from mpvi.repro.report import compute_time, count_statuses
    from mpvi.repro.declare import all_reproductions
    from mpvi.repro.records import read_provenance, OutputError
    from mpvi.repro.runtimes import Runtimes
    reps = all_reproductions()
    runtimes = Runtimes()
    for problem in runtimes.problems:
        logger.warning(f"mpvi_catalogues: {problem}")
    figures = ROOT / "figures"
    parts = [
        ".. This page is generated by docs/_ext/mpvi_catalogues.py from the reproduction "
        "registry.\n",
        _heading("Reproduction catalogue"),
        f"Every reproduction of the installed reproduction packages ({len(reps)} scripts), "
        "generated from the registry when this site is built: ``mpvi run <id>`` computes "
        "one, ``mpvi run --all`` all of them. *Measured* is its run time alone without a "
        "cache, full and quick, as ``python benchmarks/runtimes.py`` last measured it "
        "(``reproductions/<paper>/runtimes.json``); *full run* is the computation recorded in the "
        "committed results "
        "(``figures/<paper>/<id>.json``, at 64 digits: its wall time plus that of the "
        "studies it used, which a parallel run computes beside it; a study shared by two "
        "reproductions counts for both); the "
        "statuses count the published values compared by ``mpvi diff``. Each id links to "
        f"its entry in the `reproduction report <../../{REPORT}/index.html>`_ of the "
        "committed results, which is part of this site.\n",
    ]
    try:
        rows_by_id = {}
        for row in diff(list(reps), figures):
            rows_by_id.setdefault(row.value.id, []).append(row)
    except Exception as exc:            # no results: the table says so instead of failing
        logger.warning(f"mpvi_catalogues: mpvi diff of {figures} failed: {exc}")
        rows_by_id = {}
    papers = {}
    for rep in reps.values():
        papers.setdefault(rep.paper, []).append(rep)
    for paper, items in papers.items():
        parts.append(_heading(paper, "-"))
        rows = []
        for rep in items:
            try:
                record = read_provenance(rep, figures)
            except OutputError as exc:
                record, wall = None, f"invalid: {exc}"
            else:
                wall = f"{compute_time([record]):.2f} s" if record else "not run"
            counts = count_statuses(rows_by_id.get(rep.id, []))
            statuses = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "—"
            link = f"`{rep.id} <../../{REPORT}/{rep.paper}.html#{rep.id}>`__"
            rows.append([link, rep.item, rep.title, runtimes.describe(rep), wall, statuses])
        parts.append(_table(["id", "item", "what it reproduces", "measured", "full run",
                             "published values"], rows, "18 8 44 10 8 12"))
    return "\n".join(parts)


# ----- benchmarks ----------------------------------------------------------------------------

def benchmarks_page() -> str:
    """A MyST page: the scripts' commands and docstrings, then benchmarks/README.md (the
    last measured figures) included with its headings one level down."""
    parts = [
        "% This page is generated by docs/_ext/mpvi_catalogues.py from benchmarks/.\n",
        "# Benchmarks\n",
        "Each benchmark is a command that measures its ratios in one run (this machine is "
        "shared, so absolute times vary; ratios measured side by side are what to compare). "
        "The commands and their descriptions are the scripts' own docstrings; the last "
        "measured figures follow (`benchmarks/README.md`), and {doc}`../../guide/performance` "
        "has the step-speed tables.\n",
    ]
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree) or "(no docstring)"
        parts.append(f"## {path.name}\n")
        parts.append(f"```text\npython benchmarks/{path.name} --help\n```\n")
        parts.append(f"```text\n{doc.rstrip()}\n```\n")
    parts.append("## Last measured\n")
    parts.append("```{include} ../../../benchmarks/README.md\n:heading-offset: 2\n```\n")
    return "\n".join(parts)


def _cell(text: str) -> str:
    """``text`` as a cell of a Markdown table (a ``|`` escaped)."""
    return text.replace("|", "\\|")


def paper_tables() -> dict:
    """``{file name: MyST table}``: for each paper, the table of its reproductions that
    docs/guide/reproductions.md includes (``reproductions-<paper>.md``): id, item and
    title of every declaration the registry finds in the paper's folder, so that a new
    script shows up with nothing else edited."""
    from mpvi.repro.declare import all_reproductions
    papers = {}
    for rep in all_reproductions().values():
        papers.setdefault(rep.paper, []).append(rep)
    tables = {}
    for paper, reps in papers.items():
        lines = [f"% Generated by docs/_ext/mpvi_catalogues.py from the declarations of {paper}.\n",
                 f"| id | paper item | what it produces (`figures/{paper}/<id>.csv/.png/.json`) |",
                 "|---|---|---|"]
        lines += [f"| `{r.id}` | {r.item} | {_cell(r.title)} |"
                  for r in sorted(reps, key=lambda r: r.id)]
        tables[f"reproductions-{paper}.md"] = "\n".join(lines) + "\n"
    return tables


PAGES = {"methods.rst": methods_page, "systems.rst": systems_page, "cli.rst": cli_page,
         "reproductions.rst": reproductions_page, "benchmarks.md": benchmarks_page}


def generate(app) -> None:
    for name, page in PAGES.items():
        _write(name, page())
    for name, table in paper_tables().items():
        _write(name, table)


def write_report(app, exception) -> None:
    """Write the report of the committed results into the site (``report/``)."""
    if exception is not None or app.builder.format != "html":
        return
    from mpvi.repro.report import write_report as write
    out = Path(app.outdir) / REPORT
    with contextlib.redirect_stdout(io.StringIO()):
        write(ROOT / "figures", out)
    logger.info(f"mpvi_catalogues: the report of figures/ written to {out}")


def setup(app):
    app.connect("builder-inited", generate)
    app.connect("build-finished", write_report)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
