"""docs/guide/layout.md cannot drift from the code.

* Its block of layers lists every module of every layer package of ``mpvi/`` (and no
  module that does not exist), package by package in the order of
  ``tests/test_layers.py``'s LAYERS, top down.
* Every ``path:Name`` of its paths (a Problem to a Solution, a published number to its
  CSV, diff and proof) names a file of the repository that defines ``Name`` at its top
  level (a class, a function or an assignment).
"""
import ast
import re
from pathlib import Path

import pytest

from test_layers import LAYERS

ROOT = Path(__file__).resolve().parent.parent
LAYOUT = ROOT / "docs" / "guide" / "layout.md"


def _blocks(heading):
    """The fenced blocks of the section ``heading`` of layout.md."""
    text = LAYOUT.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end > 0 else None]
    return re.findall(r"```\n(.*?)```", section, flags=re.S)


def layer_rows(block):
    """package name -> the words of its rows, in the order of the block."""
    rows, current = {}, None
    for line in block.splitlines():
        m = re.match(r"([a-z_]+)/\s", line)
        if line.startswith("mpvi/"):      # the face and the version: no package
            current = None
        elif m:
            current = m.group(1)
            rows[current] = []
        if current is not None:
            rows[current].extend(re.findall(r"[\w/.]+", line))
    return rows


def test_the_layer_block_lists_every_module_of_every_package_in_order():
    rows = layer_rows(_blocks("Layers")[0])
    packages = [pkg.split(".")[1] for _, _, pkgs in LAYERS for pkg in pkgs
                if pkg.count(".") == 1 and not pkg.endswith("_version")]
    assert list(rows) == packages[::-1], "the packages of layout.md, top down"
    for pkg, words in rows.items():
        modules = {p.name for p in (ROOT / "mpvi" / pkg).glob("*.py") if p.name != "__init__.py"}
        listed = {w for w in words if w.endswith(".py")} - {"__init__.py"}
        assert listed == modules, (f"layout.md, {pkg}/: missing {sorted(modules - listed)}, "
                                   f"not in the package {sorted(listed - modules)}")


def _defines(path, name):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name == name:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


def references():
    out = []
    for heading in ("From a `Problem` to a `Solution`",
                    "From a published number to its CSV, its diff and its proof"):
        for block in _blocks(heading):
            out += re.findall(r"([\w/]+\.py):(\w+)", block)
    return out


def test_the_paths_name_at_least_the_main_steps():
    assert len(references()) >= 20


@pytest.mark.parametrize("path, name", references())
def test_every_step_of_the_paths_exists(path, name):
    file = ROOT / path
    assert file.is_file(), f"layout.md names {path}, which does not exist"
    assert _defines(file, name), f"layout.md names {path}:{name}, not defined there"


def test_a_module_missing_from_the_block_is_named(tmp_path):
    block = "drive/  x\n  solve.py\n"
    assert layer_rows(block) == {"drive": ["drive/", "x", "solve.py"]}
