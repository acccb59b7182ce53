"""The public surface is typed: every public parameter and return annotated with a real
type (``Any`` only where pending), ``mypy --strict`` clean on the configured files with the
exceptions pyproject.toml lists, and the names of annotations imported only for the type
checker (never at run time, never a dependency between the library's layers).

docs/guide/layout.md ("Types") describes the configuration; tests/annotation_counts.py
counts the annotations.
"""
from __future__ import annotations

import ast
import inspect
import os
import subprocess
import sys
from pathlib import Path

import annotation_counts
from test_layers import import_graph

ROOT = Path(__file__).resolve().parents[1]

PENDING: tuple[str, ...] = ()
"""Modules whose public signatures are not yet typed (prefixes such as ``"mpvi.x."``): none."""


def test_every_public_parameter_and_return_is_annotated_with_a_real_type():
    counts = annotation_counts.counts()
    assert counts["parameters"] > 600 and counts["returns"] > 250     # the surface is all there
    loose = [item for kind in ("any", "unannotated") for item in counts["lists"][kind]
             if not item.startswith(PENDING)]
    assert not loose, ("public parameters or returns annotated Any or not at all:\n  "
                       + "\n  ".join(loose))


def test_mypy_strict_reports_no_error():
    """``python -m mypy`` with pyproject.toml's [tool.mypy] (strict, the exceptions listed
    there).  About 9 s on a cold cache (.mypy_cache/), under a second warm."""
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "MYPY_FORCE_COLOR": "0"})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout


def test_the_strict_check_covers_the_public_modules():
    """The exceptions do not grow silently into the public modules: those that pyproject
    lists as not checked (ignore_errors) hold no public name."""
    try:
        import tomllib
    except ImportError:                     # Python 3.10: mypy's own TOML reader
        import tomli as tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True and config["files"] == ["mpvi"]
    ignored = {m for o in config["overrides"] if o.get("ignore_errors")
               for m in ([o["module"]] if isinstance(o["module"], str) else o["module"])}
    public = {inspect.unwrap(f).__module__
              for f in annotation_counts.public_callables().values()}
    assert "mpvi.numbers.context" in public and "mpvi.systems.linear" in public
    assert ignored & public == {m.rstrip(".") for m in PENDING}, ignored & public


def test_an_import_for_the_type_checker_is_a_dependency_between_layers(tmp_path):
    """An import under ``if TYPE_CHECKING:`` never runs, but the name an annotation reads
    is a dependency a reader follows: the layer scan counts it like any import."""
    (tmp_path / "mpvi").mkdir()
    a = tmp_path / "mpvi" / "a.py"
    a.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                 "    from .b import B\n    import mpvi.c\n", encoding="utf-8")
    (tmp_path / "mpvi" / "b.py").write_text("B = 1\n", encoding="utf-8")
    (tmp_path / "mpvi" / "c.py").write_text("from .b import B\n", encoding="utf-8")
    files = {"mpvi.a": a, "mpvi.b": tmp_path / "mpvi" / "b.py", "mpvi.c": tmp_path / "mpvi" / "c.py"}
    graph = import_graph(files)
    assert graph["mpvi.a"] == {"mpvi.b", "mpvi.c"}
    assert graph["mpvi.c"] == {"mpvi.b"}
    tree = ast.parse(a.read_text(encoding="utf-8"))       # the fixture does import both
    assert sum(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree)) == 3
