"""``import mpvi`` is cheap (issue 38): it loads neither sympy, numpy, mpmath, the methods
(mpvi.methods) nor the compiled kernels; each public name is imported from its module on
first use (mpvi/__init__.py, PEP 562).  The checks look at ``sys.modules`` in a fresh
interpreter, not at a wall time (the machine is shared and noisy); the time is printed."""
from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import mpvi

ROOT = Path(__file__).resolve().parent.parent


def _fresh(code):
    """stdout of ``code`` run by a fresh interpreter from the repository's top."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_mpvi_loads_no_numerics():
    out = _fresh("""
        import sys, time
        start = time.perf_counter()
        import mpvi
        took = time.perf_counter() - start
        heavy = ("sympy", "numpy", "mpmath", "gmpy2", "flint")
        print(sorted(m for m in sys.modules if m.split(".")[0] in heavy))
        print(sorted(m for m in sys.modules if m.startswith("mpvi.")))
        print(f"{took:.4f}")
    """).splitlines()
    print(f"import mpvi: {out[2]} s")
    assert out[0] == "[]", f"import mpvi loaded {out[0]}"
    assert out[1] == "['mpvi._version']", f"import mpvi loaded {out[1]}"


def test_a_public_name_loads_its_module_on_first_use():
    out = _fresh("""
        import sys
        import mpvi
        mpvi.Problem
        print("mpvi.model.problem" in sys.modules, "mpvi.methods" in sys.modules)
        from mpvi import modified_equation
        print("mpvi.analysis.modified" in sys.modules, modified_equation is mpvi.modified_equation)
    """).split()
    assert out == ["True", "False", "True", "True"]


def test_solve_is_the_function_whichever_import_came_first():
    """``mpvi.solve`` is the function, defined in the module mpvi/drive/solve.py, before
    the name is first used (the reproduction framework imports the module) and after: the
    module lives in its layer package, so no import binds it over the public name."""
    out = _fresh("""
        import mpvi.repro.run, mpvi.drive.solve
        import mpvi
        print(callable(mpvi.solve), mpvi.solve.__module__)
        from mpvi import solve
        import mpvi.drive.solve
        print(solve is mpvi.solve, type(solve).__name__)
    """).split()
    assert out == ["True", "mpvi.drive.solve", "True", "function"]


def test_import_mpvi_then_solve_a_pendulum():
    """The package's own docstring example, after a bare ``import mpvi``."""
    out = _fresh("""
        import mpvi, sympy as sp
        ctx = mpvi.GMPContext(64)
        q = sp.Symbol("q")
        pendulum = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
        sol = mpvi.solve(mpvi.Problem(pendulum, ["1/2"], v0=[0]), "simpson", h="1/10", n=10)
        drift = max(mpvi.relative_energy_error(pendulum, sol))
        print(len(sol.t), 0 < drift < ctx.number("1/10", "h") ** 4)     # Simpson: order 4
    """).split()
    assert out == ["11", "True"]


def test_every_public_name_resolves_and_dir_lists_it():
    listed = set(dir(mpvi))
    for name in mpvi.__all__:
        assert name in listed
        assert getattr(mpvi, name) is getattr(
            sys.modules[f"mpvi.{mpvi._WHERE[name]}"], name)
    assert len(mpvi.__all__) == len(set(mpvi.__all__))


def test_a_layer_package_is_reachable_as_an_attribute():
    """``mpvi.analysis`` (a layer package) is imported on first use; its modules are
    imported by their path (``import mpvi.analysis.measures``), as any package's."""
    out = _fresh("""
        import mpvi
        print(mpvi.analysis.__name__, mpvi.systems.linear.LinearSystem is mpvi.LinearSystem)
        import mpvi.analysis.measures
        print(mpvi.analysis.measures.error_norms is mpvi.error_norms)
    """).split()
    assert out == ["mpvi.analysis", "True", "True"]


def test_an_unknown_name_is_an_attribute_error_that_names_it():
    with pytest.raises(AttributeError, match="'mpvi' has no attribute 'no_such_name'"):
        mpvi.no_such_name
    assert not hasattr(mpvi, "no_such_name")


def test_the_type_checking_imports_list_the_public_names():
    """Static type checkers read mpvi/__init__.py's ``if TYPE_CHECKING:`` imports; they
    name every public name, from the module the lazy table says, and nothing else."""
    tree = ast.parse((ROOT / "mpvi" / "__init__.py").read_text(encoding="utf-8"))
    guarded = [node for node in tree.body if isinstance(node, ast.If)
               and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"]
    assert len(guarded) == 1
    seen = {}
    for node in guarded[0].body:
        assert isinstance(node, ast.ImportFrom) and node.module.startswith("mpvi.")
        for alias in node.names:
            assert alias.asname is None
            seen[alias.name] = node.module[len("mpvi."):]
    assert seen == mpvi._WHERE
