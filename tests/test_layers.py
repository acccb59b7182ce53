"""The layer order of the library: packages of mpvi/, bottom up.

Every module of ``mpvi/`` (outside the reproduction framework ``mpvi/repro/``) lives in one
layer package of :data:`LAYERS`; the top level holds only ``mpvi/__init__.py`` (the public
face) and ``mpvi/_version.py`` (the ground).  A module imports only modules of its own
package or of the packages below it -- module-level imports, the ones inside functions and
the annotation-only ones under ``if TYPE_CHECKING:`` alike (a name an annotation reads is a
dependency a reader follows) -- and the imports form no circle.  An import that runs back up fails with the two file names; a new package fails
until it is given a layer here, and each package's ``__init__`` says in its docstring what
it holds and what it may import.
(The library never imports the reproduction framework: tests/test_layering.py.)
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LAYERS = (
    ("ground", "no numerics: the version, the precision boundary, files, the parser of text, "
     "the names of the annotations", ("mpvi._version", "mpvi.ground")),
    ("numbers", "number contexts, Arb balls, the dense solve, Newton, special functions",
     ("mpvi.numbers",)),
    ("compiled", "the one code generator, its translation to C, the compiled modules",
     ("mpvi.compiled",)),
    ("model", "the mechanical system, user callables, the problem, singularities",
     ("mpvi.model",)),
    ("engines", "what a step runs on: Newton kernels, Taylor, dense output, first-order fields",
     ("mpvi.engines",)),
    ("methods", "the registry, methods as data, one module per method family",
     ("mpvi.methods",)),
    ("systems", "the papers' systems", ("mpvi.systems",)),
    ("proof", "a run walked again on balls", ("mpvi.proof",)),
    ("drive", "the driver, its result, the check of a saved proof", ("mpvi.drive",)),
    ("analysis", "measures, exact linear maps, backward error analysis", ("mpvi.analysis",)),
    ("face", "the package: the public names", ("mpvi",)),
)

PACKAGES = [pkg for _, _, pkgs in LAYERS for pkg in pkgs if pkg not in ("mpvi", "mpvi._version")]

def library_files(root=ROOT):
    """Dotted module name -> path, for every module of mpvi/ outside mpvi/repro/."""
    out = {}
    for p in sorted((root / "mpvi").rglob("*.py")):
        rel = p.relative_to(root).with_suffix("")
        if rel.parts[:2] == ("mpvi", "repro") or rel.parts == ("mpvi", "__main__"):
            continue                 # the framework, and `python -m mpvi` (the command)
        name = ".".join(rel.parts)
        out[name[:-len(".__init__")] if name.endswith(".__init__") else name] = p
    return out


def import_graph(files):
    """Module -> the library modules it imports anywhere in its file (inside functions and
    under ``if TYPE_CHECKING:`` too); ``from mpvi.methods import get_method`` is an import
    of the package ``mpvi.methods``, ``from mpvi.engines import kernels`` one of the module
    ``mpvi.engines.kernels``; a package ``__init__`` that discovers its modules with
    ``pkgutil`` (the registry) imports each of them."""
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
        if path.name == "__init__.py" and "pkgutil" in found:
            # a package that discovers its modules (pkgutil) imports every one of them
            found.update(m for m in files if m.rpartition(".")[0] == name)
        graph[name] = {m for m in found if m in files and m != name}
    return graph


def layer_of(module):
    """The index of ``module``'s layer in :data:`LAYERS` (the layer of the package that
    holds it), or None."""
    best = None
    for i, (_, _, packages) in enumerate(LAYERS):
        for pkg in packages:
            if module == pkg or (pkg != "mpvi" and module.startswith(pkg + ".")):
                best = i
    return best


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
    assert "mpvi.methods" in GRAPH["mpvi.analysis.modified"]          # from .schemes import get_method
    assert "mpvi.engines.kernels" in GRAPH["mpvi.methods.mutze"]     # from .. import kernels
    assert "mpvi.methods.declarations" in GRAPH["mpvi.methods.rk4"]
    assert "mpvi.methods.gbs" in GRAPH["mpvi.methods"]        # the registry imports its methods
    assert "mpvi.numbers.newton" in GRAPH["mpvi.model.mechanics"]           # inside a function
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


def test_the_top_level_holds_only_the_face_the_version_and_the_layer_packages():
    top = sorted(p.name for p in (ROOT / "mpvi").iterdir()
                 if p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))
    allowed = {"__init__.py", "__main__.py", "_version.py", "repro"} | {
        pkg.split(".")[1] for pkg in PACKAGES}           # __main__: `python -m mpvi`
    assert set(top) <= allowed, f"top-level modules outside a layer package: {set(top) - allowed}"
    assert set(top) == allowed, f"layer packages missing: {allowed - set(top)}"


@pytest.mark.parametrize("package", PACKAGES)
def test_each_layer_package_says_what_it_holds_and_may_import(package):
    init = ROOT / package.replace(".", "/") / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    assert len(doc.split()) >= 25, f"{init.relative_to(ROOT)}: a one-paragraph docstring"
    assert "May import:" in doc, f"{init.relative_to(ROOT)} does not say what it may import"


def test_annotation_only_imports_count():
    """An import under ``if TYPE_CHECKING:`` is an arrow too: the face's annotations name
    the public classes' modules."""
    assert "mpvi.drive.solution" in GRAPH["mpvi"]


@pytest.mark.parametrize("source, target, words", [
    ("mpvi.ground.io", "mpvi", "mpvi/ground/io.py imports mpvi/__init__.py: layer 'ground' below layer 'face'"),
    ("mpvi.methods.rk4", "mpvi.analysis.modified",
     "mpvi/methods/rk4.py imports mpvi/analysis/modified.py: layer 'methods' below layer 'analysis'"),
])
def test_an_arrow_back_up_is_named_with_its_two_files(source, target, words):
    graph = {m: set(d) for m, d in GRAPH.items()}
    graph[source].add(target)
    assert arrows_back_up(graph, FILES) == [words]


def test_a_circle_through_a_package_init_is_found():
    """The registry mpvi.methods imports every method; a method that imports an analysis
    which imports the registry closes a circle (the one the declarations module broke)."""
    graph = {m: set(d) for m, d in GRAPH.items()}
    graph["mpvi.methods.rk4"].add("mpvi.analysis.modified")
    found = circle(graph)
    assert found is not None and found[0] == found[-1]
    assert {"mpvi.methods", "mpvi.methods.rk4", "mpvi.analysis.modified"} <= set(found)


# ----- the declarations below the methods, read by the executors ----------------------------

def _imports_mpvi(node):
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "mpvi"
    return isinstance(node, ast.Import) and any(a.name.split(".")[0] == "mpvi"
                                                 for a in node.names)


def test_no_method_module_imports_the_library_inside_a_function():
    """A scheme module imports the library modules it reads at its top: an import inside
    a function is how the circle schemes -> modified -> schemes was dodged."""
    bad = []
    for name, path in FILES.items():
        if not name.startswith("mpvi.methods."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                bad.extend(f"{path.relative_to(ROOT)}:{inner.lineno} in {node.name}"
                           for inner in ast.walk(node) if _imports_mpvi(inner))
    assert not bad, "library imports inside functions:\n" + "\n".join(bad)


def test_every_declaration_type_has_its_series_executor_and_every_method_uses_one():
    import dataclasses
    import inspect

    import mpvi
    from mpvi.methods import declarations
    from mpvi.analysis.modified import SERIES
    types = {obj for name, obj in vars(declarations).items() if inspect.isclass(obj)
             and obj.__module__ == declarations.__name__ and not name.startswith("_")}
    assert all(dataclasses.is_dataclass(t) and t.__dataclass_params__.frozen for t in types)
    wrappers = {declarations.LinearOnly, declarations.Discretization}
    assert set(SERIES) == types - wrappers
    for name, method in mpvi.METHODS.items():
        if method.declaration is None:
            continue
        decl = method.declaration(method.parameters())
        while isinstance(decl, declarations.LinearOnly):
            decl = decl.declaration
        assert type(decl) in SERIES, name


def _data_only_method(declaration):
    """A method known by its declaration alone (not registered: the suite loops over the
    registry)."""
    import mpvi

    def prepare(system, h, ctx, newton=None, check_stability=True):
        raise NotImplementedError("a method declared as data only")
    return mpvi.Method(name="trapezoidal", label="trapezoidal", state="qv", order=2,
                       symplectic=False, implicit=True, reference="HLW II.1",
                       prepare=prepare, declaration=lambda params: declaration)


def test_a_new_method_of_a_declared_type_is_derived_with_nothing_added():
    """The trapezoidal rule y1 = y + h (f(y) + f(y1)) / 2, a Butcher tableau and nothing
    else, through mpvi.analysis.modified: y1 = y + h f + h^2 f'f / 2 + h^3 (f'f'f + f''(f, f)) / 4
    + O(h^4) against the flow's h^3 (f'f'f + f''(f, f)) / 6, so f_2 = 0 and
    f_3 = (f'f'f + f''(f, f)) / 12 (worked by hand from the two series)."""
    import sympy as sp

    import mpvi
    from mpvi.methods.declarations import ButcherTableau
    from mpvi.analysis.modified import modified_equation
    half = sp.Rational(1, 2)
    method = _data_only_method(ButcherTableau(a=((0, 0), (half, half)), b=(half, half)))
    q = sp.Symbol("q")
    pendulum = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {},
                                     mpvi.GMPContext(30))
    me = modified_equation(method, pendulum, 3)
    f, y = sp.Matrix(me.terms[0]), me.symbols
    J = f.jacobian(y)
    fpp = sp.Matrix([sum(sp.diff(fi, a, b) * f[ia] * f[ib] for ia, a in enumerate(y)
                         for ib, b in enumerate(y)) for fi in f])
    assert all(sp.simplify(t) == 0 for t in me.terms[1])
    assert all(sp.simplify(x - e) == 0 for x, e in zip(me.terms[2], (J * J * f + fpp) / 12))


def test_a_declaration_no_executor_reads_is_refused_by_name():
    """A declaration of a type without a series executor is refused with its name (it
    was taken for a trial-function method, and failed deep inside on a missing ``disc``)."""
    from dataclasses import dataclass

    import sympy as sp

    import mpvi
    from mpvi.analysis.modified import modified_equation

    @dataclass(frozen=True)
    class Splitting:
        weights: tuple
    q = sp.Symbol("q")
    pendulum = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {},
                                     mpvi.GMPContext(30))
    with pytest.raises(NotImplementedError, match="'trapezoidal' declares a Splitting, "
                                                  "which no series executor reads"):
        modified_equation(_data_only_method(Splitting((1,))), pendulum, 2)
