"""The driver's shape (issue 37): ``h`` validated once at each public door, one ``State``,
what a method's ``prepare`` takes declared on its registration (not found by
``inspect.signature``), and ``solve`` a short function over small named steps."""
import ast
import sys
from pathlib import Path

import pytest
import sympy as sp

import mpvi
from mpvi import GMPContext, LagrangianSystem, Method, Problem, get_method, solve
from mpvi.analysis.measures import stability_scan

ROOT = Path(__file__).resolve().parent.parent
C = GMPContext(32)
Q = sp.Symbol("q")


def pendulum():
    return Problem(LagrangianSystem("pendulum", [Q], sp.Matrix([[1]]), -sp.cos(Q), {}, C),
                   ["1/2"], p0=["0"])


def method(prepare, **declared):
    """A method built on rk4's stepper; ``prepare`` as given."""
    options = dict(name="test_rk4", label="test", state="qp", order=4, symplectic=False,
                   implicit=False, reference="test", prepare=prepare)
    return Method(**{**options, **declared})


def rk4(system, h, ctx):
    return get_method("rk4").prepare(system, h, ctx)


# ----- h validated once, where it enters --------------------------------------------------------

def check_step_calls(run):
    """How often :func:`mpvi.methods.base.check_step` runs during ``run()``."""
    calls = []

    def profile(frame, event, arg):
        code = frame.f_code
        if event == "call" and code.co_name == "check_step" and \
                code.co_filename.endswith(str(Path("methods", "base.py"))):
            calls.append(1)
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return len(calls)


@pytest.mark.parametrize("name", ["simpson", "lobatto", "rk4", "mutze", "taylor", "newmark_family"])
def test_solve_validates_h_once(name):
    problem = pendulum()
    assert check_step_calls(lambda: solve(problem, name, h="1/10", n=2)) == 1


def test_a_direct_prepare_validates_h_at_its_door_and_hands_on_a_context_number():
    seen = []

    def recording(system, h, ctx):
        seen.append(h)
        return rk4(system, h, ctx)
    m = method(recording)
    system = pendulum().system
    (q, p, v), _ = m.step(system, (["1/2"], ["0"]), "1/10", C)
    assert seen == [C.num("1/10")] and type(seen[0]) is type(C.one)
    with pytest.raises(ValueError, match="nonzero finite"):
        m.step(system, (["1/2"], ["0"]), 0, C)
    assert len(seen) == 1                      # refused at the door, before the method's code


# ----- one State ------------------------------------------------------------------------------

def test_one_state_type_for_solutions_and_steps():
    assert mpvi.State is mpvi.methods.State
    problem = pendulum()
    sol = solve(problem, "simpson", h="1/10", n=2)
    assert isinstance(sol(C.num("1/20")), mpvi.State)
    state, _ = get_method("simpson").step(problem.system, (problem.q0, problem.p0), "1/10", C)
    assert isinstance(state, mpvi.State) and state.v is None
    assert state.q[0] == sol.q[1][0] and state.p[0] == sol.p[1][0]


def test_a_velocity_method_steps_to_a_state_with_v_not_p():
    problem = pendulum()
    m = get_method("newmark_family")
    state, _ = m.step(problem.system, (problem.q0, problem.v0), "1/10", C)
    sol = solve(problem, m, h="1/10", n=1)
    assert state.p is None and state.v[0] == sol.v[1][0] and state.q[0] == sol.q[1][0]
    # a State goes back in: the method reads the field it carries
    again, _ = m.step(problem.system, state, "1/10", C)
    assert again.q[0] == solve(problem, m, h="1/10", n=2).q[2][0]


# ----- what prepare takes, declared ------------------------------------------------------------

def test_newton_options_reach_a_method_that_declares_it_takes_them():
    got = []

    def prepare(system, h, ctx, **options):    # no "newton" for inspect.signature to find
        got.append(options.get("newton"))
        return rk4(system, h, ctx)
    m = method(prepare, takes_newton_options=True)
    solve(pendulum(), m, h="1/10", n=1, newton={"max_iter": 7})
    assert got == [{"max_iter": 7}]
    with pytest.raises(ValueError, match="solves no Newton equations"):
        solve(pendulum(), method(prepare), h="1/10", n=1, newton={"max_iter": 7})


def test_takes_newton_options_defaults_to_implicit_and_is_declared_for_the_linear_forms():
    assert method(rk4).takes_newton_options is False
    assert method(rk4, implicit=True).takes_newton_options is True
    for name, m in mpvi.METHODS.items():
        assert m.takes_newton_options is (m.implicit and name not in ("newmark", "simpson_v1"))


def test_check_stability_reaches_only_a_method_that_checks_a_bound_of_its_own():
    problem = pendulum()
    plain = method(rk4)                        # a prepare without check_stability
    assert solve(problem, plain, h="1/10", n=2).steps == 2
    assert solve(problem, plain, h="1/10", n=2, check_stability=False).steps == 2
    got = []

    def own(system, h, ctx, check_stability=True):
        got.append(check_stability)
        return rk4(system, h, ctx)
    checking = method(own, checks_stability=True)
    solve(problem, checking, h="1/10", n=1, check_stability=False)
    solve(problem, checking, h="1/10", n=1)
    assert got == [False, True]
    assert [m.name for m in mpvi.METHODS.values() if m.checks_stability] == ["simpson", "simpson_v1"]


def test_stability_scan_of_a_method_without_a_bound_of_its_own():
    rows = stability_scan(method(rk4), ["1", "3"], C)
    assert [r[3] for r in rows] == [True, False]      # RK4: stable below 2 sqrt 2 only


# ----- the driver's shape ----------------------------------------------------------------------

def code_lines(node):
    """Lines of a function after its docstring."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return node.end_lineno - body[0].lineno + 1 if body else 0


@pytest.mark.parametrize("path", ["mpvi/drive/solve.py", "mpvi/drive/solution.py"])
def test_the_driver_is_small_named_steps(path):
    tree = ast.parse((ROOT / path).read_text())
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    long = {f.name: code_lines(f) for f in functions if code_lines(f) > 80}
    assert not long, f"functions over 80 lines of code in {path}: {long}"
    if path.endswith("solve.py"):                # no closure holds the run's state
        run = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "_Run")
        driver = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "solve"]
        nested = [(f.name, getattr(g, "name", "lambda")) for f in driver + run.body
                  for g in ast.walk(f) if g is not f
                  and isinstance(g, (ast.FunctionDef, ast.AsyncFunctionDef))]
        assert not nested, f"closures in the driver: {nested}"
