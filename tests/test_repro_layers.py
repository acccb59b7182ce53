"""The order of the reproduction framework's modules (mpvi/repro/), bottom up.

Each module of ``mpvi/repro/`` does one thing -- the installed packages and their paper
folders, the declaration of a reproduction and its discovery, the records of its outputs
(written and read), running it, the published comparison, the report, the command line --
and imports only the modules below it in :data:`ORDER`: no circle, no arrow back up.  An
import inside a function is allowed only for a heavy optional dependency loaded lazily,
and then says so in a comment on its line or the line above (``... loaded lazily ...``).
The scan is that of tests/test_layers.py (imported, not copied).
"""
from __future__ import annotations

import ast

from test_layers import ROOT, circle, import_graph

ORDER = (
    ("mpvi.repro", "the package: a docstring"),
    ("mpvi.repro.terminal", "text that fits the terminal: wrapped lines, tables, help"),
    ("mpvi.repro.packages", "the installed reproduction packages and their paper folders"),
    ("mpvi.repro.cache", "the disk cache of the studies"),
    ("mpvi.repro.progress", "the progress bar"),
    ("mpvi.repro.runtimes", "the measured run times, per folder"),
    ("mpvi.repro.digits", "correct and proven digits of the outputs"),
    ("mpvi.repro.studies", "studies: pure, cached functions of their parameters"),
    ("mpvi.repro.certified", "helpers of the scripts' certify hooks"),
    ("mpvi.repro.declare", "the Reproduction declaration and its discovery, output paths"),
    ("mpvi.repro.records", "the records of the outputs: written and read back, verified"),
    ("mpvi.repro.options", "the command-line options of a run"),
    ("mpvi.repro.published", "the published values and the comparison (mpvi diff)"),
    ("mpvi.repro.run", "running a reproduction, proving it again"),
    ("mpvi.repro.parallel", "parallel runs"),
    ("mpvi.repro.report", "the HTML report"),
    ("mpvi.repro.cli", "the mpvi command line"),
)
"""The modules of mpvi/repro/, bottom up, each with what it does."""

NAMES = [name for name, _ in ORDER]


def repro_files(root=ROOT):
    """Dotted module name -> path, for every module of mpvi/repro/."""
    out = {}
    for p in sorted((root / "mpvi" / "repro").glob("*.py")):
        name = "mpvi.repro" if p.name == "__init__.py" else f"mpvi.repro.{p.stem}"
        out[name] = p
    return out


FILES = repro_files()
GRAPH = import_graph(FILES)


def arrows_back_up(graph, order):
    """Every import of a module by one at its level or below it in ``order``."""
    rank = {name: i for i, name in enumerate(order)}
    return [f"{FILES[s].relative_to(ROOT)} imports {FILES[t].relative_to(ROOT)}, which is "
            f"not below it in ORDER" for s in sorted(graph) for t in sorted(graph[s])
            if rank[t] >= rank[s]]


BLOCK = ("import ", "from ", "matplotlib.use(")
"""The lines of a block of lazy imports under one comment."""


def imports_in_functions(path):
    """``(line, module)`` of every import inside a function of the file at ``path`` that
    has no comment saying it is loaded lazily (on its line, or above the block of imports
    it ends)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    bad = []
    for fn in ast.walk(ast.parse(text)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                here = lines[node.lineno - 1]
                said = "#" in here and "lazily" in here.split("#", 1)[1]
                k = node.lineno - 2                # above it, past the imports of its block
                while not said and k >= 0 and lines[k].strip().startswith(BLOCK):
                    k -= 1
                said = said or (k >= 0 and lines[k].strip().startswith("#")
                                and "lazily" in lines[k])
                if not said:
                    module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                    bad.append((node.lineno, module))
    return bad


def test_every_module_of_the_framework_is_in_the_order():
    assert sorted(FILES) == sorted(NAMES), (
        f"give each module of mpvi/repro/ a place in ORDER: new {sorted(set(FILES) - set(NAMES))}, "
        f"gone {sorted(set(NAMES) - set(FILES))}")


def test_the_modules_import_downward_only_and_form_no_circle():
    assert circle(GRAPH) is None, circle(GRAPH)
    bad = arrows_back_up(GRAPH, NAMES)
    assert not bad, "\n".join(bad)


def test_the_framework_imports_nothing_above_it_but_the_library():
    """mpvi/repro/ never imports the papers' package (it finds it through entry points)."""
    for name, path in FILES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        found |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not any(m.split(".")[0] in ("mpvi_papers", "reproductions") for m in found), name


def test_no_import_inside_a_function_but_a_heavy_optional_one_said_to_be_lazy():
    bad = [f"{path.relative_to(ROOT)}:{line} imports {module} inside a function"
           for path in FILES.values() for line, module in imports_in_functions(path)]
    assert not bad, ("import at the top of the module (or, for a heavy optional dependency, "
                     "say in a comment that it is loaded lazily):\n" + "\n".join(bad))


def test_the_checks_fail_on_an_arrow_up_and_on_an_unsaid_lazy_import(tmp_path):
    """The checks can fail: the records importing the command line is an arrow up (and a
    circle), and an import inside a function without its comment is found."""
    graph = {m: set(d) for m, d in GRAPH.items()}
    graph["mpvi.repro.records"].add("mpvi.repro.cli")
    assert arrows_back_up(graph, NAMES) and circle(graph) is not None
    path = tmp_path / "m.py"
    path.write_text("def f():\n    import json\n    # csv loaded lazily: heavy\n"
                    "    import csv\n    import io\n    x = 1\n    import re\n"
                    "    return json, csv, io, re, x\n", encoding="utf-8")
    assert imports_in_functions(path) == [(2, "json"), (7, "re")]
