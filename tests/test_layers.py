"""The layer order of the library's modules (mpvi/ outside mpvi/repro/).

Every module stands in one layer of :data:`LAYERS`, from the ground up; a module imports
only modules of its own layer or of the layers below it -- module-level imports and the
ones inside functions alike, a package's ``__init__`` (``mpvi.schemes``, the registry)
counted as the module it is -- and the imports form no circle.  An import that runs back
up fails with the two file names; a new module fails until it is given a layer here.
(The library never imports the reproduction framework: tests/test_layering.py.)
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LAYERS = (
    ("ground", "no numerics: the version, the precision boundary, files, the parser of text",
     ("mpvi._version", "mpvi.precision", "mpvi.io", "mpvi.expressions")),
    ("numbers", "number contexts, the dense linear algebra, Newton's method, special functions",
     ("mpvi.linalg", "mpvi.context", "mpvi.newton", "mpvi.elliptic")),
    ("code", "the one code generator and the compiled MPFR backend",
     ("mpvi.cbackend", "mpvi.codegen")),
    ("model", "the mechanical system, user callables, the problem, singular factors",
     ("mpvi.mechanics", "mpvi.callables", "mpvi.problem", "mpvi.singular")),
    ("declarations", "methods as data: trial bases and quadrature rules, the declaration types",
     ("mpvi.quadrature", "mpvi.declarations")),
    ("executors", "what steps: generated kernels, Taylor, jets, dense output, first-order fields",
     ("mpvi.dense", "mpvi.jets", "mpvi.taylor", "mpvi.kernels", "mpvi.ode")),
    ("methods", "the registry, one module per method; the papers' systems",
     ("mpvi.schemes", "mpvi.schemes.*", "mpvi.systems", "mpvi.systems.*")),
    ("drive", "the driver and its result",
     ("mpvi.solution", "mpvi.solve")),
    ("analysis", "measures, stability, exact linear maps, backward error analysis",
     ("mpvi.analysis", "mpvi.symbolic", "mpvi.modified")),
    ("face", "the package: the public names",
     ("mpvi",)),
)


def library_files(root=ROOT):
    """Dotted module name -> path, for every module of mpvi/ outside mpvi/repro/."""
    out = {}
    for p in sorted((root / "mpvi").rglob("*.py")):
        rel = p.relative_to(root).with_suffix("")
        if rel.parts[:2] == ("mpvi", "repro"):
            continue
        name = ".".join(rel.parts)
        out[name[:-len(".__init__")] if name.endswith(".__init__") else name] = p
    return out


def import_graph(files):
    """Module -> the library modules it imports anywhere in its file (inside functions
    too); ``from .schemes import get_method`` is an import of the package ``mpvi.schemes``,
    ``from . import kernels`` one of the module ``mpvi.kernels``."""
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                target = node.module
                if node.level:
                    base = package
                    for _ in range(node.level - 1):
                        base = base.rpartition(".")[0]
                    target = f"{base}.{node.module}" if node.module else base
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    found.add(full if full in files else target)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        graph[name] = {m for m in found if m in files and m != name}
    return graph


def layer_of(module):
    """The index of ``module``'s layer in :data:`LAYERS`, or None."""
    for i, (_, _, patterns) in enumerate(LAYERS):
        for pattern in patterns:
            if module == pattern or (pattern.endswith(".*")
                                     and module.startswith(pattern[:-1])):
                return i
    return None


def arrows_back_up(graph, files):
    """Every import from a module to a module of a higher layer, as one line naming the
    two files and the two layers."""
    out = []
    for source in sorted(graph):
        for target in sorted(graph[source]):
            low, high = layer_of(source), layer_of(target)
            if low is not None and high is not None and high > low:
                out.append(f"{files[source].relative_to(ROOT)} imports "
                           f"{files[target].relative_to(ROOT)}: layer {LAYERS[low][0]!r} "
                           f"below layer {LAYERS[high][0]!r}")
    return out


def circle(graph):
    """One circle of imports (a list of modules, the first repeated at its end), or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None
    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


FILES = library_files()
GRAPH = import_graph(FILES)


def test_the_scan_resolves_the_imports_that_tie_the_layers():
    """The scan sees function-level imports, a package's __init__ and relative imports."""
    assert "mpvi.schemes" in GRAPH["mpvi.modified"]          # from .schemes import get_method
    assert "mpvi.kernels" in GRAPH["mpvi.schemes.mutze"]     # from .. import kernels
    assert "mpvi.declarations" in GRAPH["mpvi.schemes.rk4"]
    assert "mpvi.schemes.gbs" in GRAPH["mpvi.schemes"]        # the registry imports its methods
    assert "mpvi.newton" in GRAPH["mpvi.mechanics"]           # inside a function
    assert not any(m.startswith("mpvi.repro") for m in FILES)


def test_every_library_module_has_a_layer():
    missing = [str(p.relative_to(ROOT)) for m, p in FILES.items() if layer_of(m) is None]
    assert not missing, f"modules without a layer in tests/test_layers.py LAYERS: {missing}"


def test_no_import_runs_back_up():
    bad = arrows_back_up(GRAPH, FILES)
    assert not bad, "imports that run back up:\n" + "\n".join(bad)


def test_the_imports_form_no_circle():
    found = circle(GRAPH)
    assert found is None, "a circle of imports: " + " -> ".join(
        str(FILES[m].relative_to(ROOT)) for m in found)


@pytest.mark.parametrize("source, target, words", [
    ("mpvi.io", "mpvi", "mpvi/io.py imports mpvi/__init__.py: layer 'ground' below layer 'face'"),
    ("mpvi.schemes.rk4", "mpvi.modified",
     "mpvi/schemes/rk4.py imports mpvi/modified.py: layer 'methods' below layer 'analysis'"),
])
def test_an_arrow_back_up_is_named_with_its_two_files(source, target, words):
    graph = {m: set(d) for m, d in GRAPH.items()}
    graph[source].add(target)
    assert arrows_back_up(graph, FILES) == [words]


def test_a_circle_through_a_package_init_is_found():
    """The registry mpvi.schemes imports every method; a method that imports an analysis
    which imports the registry closes a circle (the one the declarations module broke)."""
    graph = {m: set(d) for m, d in GRAPH.items()}
    graph["mpvi.schemes.rk4"].add("mpvi.modified")
    found = circle(graph)
    assert found is not None and found[0] == found[-1]
    assert {"mpvi.schemes", "mpvi.schemes.rk4", "mpvi.modified"} <= set(found)
