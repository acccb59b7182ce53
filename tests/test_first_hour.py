"""Issue 48, items 2 and 3: a system in one line (mpvi.Lagrangian), the order of a method
family chosen by ``order=``, drift and energy drift of a solution, steps chosen from a
tolerance, and the newcomer's script of docs/guide/library.md run as printed."""
import re
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp

import mpvi
from mpvi.ground.expressions import ExpressionError

ROOT = Path(__file__).resolve().parent.parent

x, y, vx, vy, k = sp.symbols("x y vx vy k")
HH = (vx**2 + vy**2) / 2 - (x**2 + y**2) / 2 - x**2 * y + y**3 / 3     # Henon-Heiles


# ----- 1. mpvi.Lagrangian ------------------------------------------------------------------

def test_lagrangian_in_one_line_is_from_lagrangian_at_64_digits():
    S = mpvi.Lagrangian(HH, [x, y], [vx, vy])
    assert isinstance(S, mpvi.LagrangianSystem)
    assert S.ctx.dps == 64 and isinstance(S.ctx, mpvi.GMPContext)
    assert S.name == "L(x, y)" and S.coord_names == ["x", "y"]
    ref = mpvi.LagrangianSystem.from_lagrangian("HH", [x, y], [vx, vy], HH, {}, S.ctx)
    assert S.signature == ref.signature
    q, v = S.ctx.vector(["1/10", "0"]), S.ctx.vector(["0", "1/5"])
    assert list(S.acceleration(None, q, v)) == list(ref.acceleration(None, q, v))


def test_lagrangian_params_ctx_name_and_time():
    t = mpvi.TIME
    ctx = mpvi.MPContext(30)
    S = mpvi.Lagrangian(vx**2 / 2 - k * x**2 / 2 + x * sp.cos(t), x, vx, params={k: "3/2"},
                        ctx=ctx, name="driven")
    assert S.ctx is ctx and S.name == "driven" and S.time_dependent
    assert S.param_values == (ctx.num("3/2"),)


@pytest.mark.parametrize("args, error, words", [
    (([x], [vx], ), ExpressionError, "not an expression"),
    ((sp.Matrix([vx**2]), [x], [vx]), TypeError, "one sympy expression"),
    ((sp.Eq(vx, 1), [x], [vx]), TypeError, "one sympy expression"),
    ((lambda t: t, [x], [vx]), ExpressionError, "not an expression"),
    ((vx**2 / 2, [x], ["vx"]), ValueError, "not a sympy Symbol"),
    ((vx**2 / 2, [x], [vx + 1]), ValueError, "not a sympy Symbol"),
    ((vx**2 / 2, [x], vx + 1), TypeError, "list of sympy Symbols"),
    ((vx**2 / 2, [x], [vx, vy]), ValueError, "2 velocity symbols for 1 coordinates"),
    ((vx**2 / 2, [x, y], [vx]), ValueError, "1 velocity symbols for 2 coordinates"),
    ((sp.Float("0.1") * vx**2, [x], [vx]), mpvi.PrecisionError, "float literal"),
    ((vx**2 / 2 - y, [x], [vx]), ValueError, "'y'"),
])
def test_lagrangian_bad_input_is_a_named_error(args, error, words):
    if args[0] == [x]:
        args = ([x], [x], [vx])
    with pytest.raises(error, match=re.escape(words)):
        mpvi.Lagrangian(*args)


def test_lagrangian_params_must_be_a_mapping():
    with pytest.raises(TypeError, match="params must be a mapping"):
        mpvi.Lagrangian(vx**2 / 2 - k * x**2, [x], [vx], params=[(k, 1)])


# ----- 3. drift and energy drift ------------------------------------------------------------

def _hh_problem(ctx=None):
    S = mpvi.Lagrangian(HH, [x, y], [vx, vy], ctx=ctx)
    return S, mpvi.Problem(S, ["1/10", "0"], v0=["0", "1/5"], t1=2)


def test_drift_is_the_largest_change_from_t0():
    S, P = _hh_problem()
    sol = mpvi.solve(P, "simpson", h="1/10")
    ctx = sol.ctx
    r2 = sol.observable(x**2 + y**2)
    ctx.activate()
    assert sol.drift(x**2 + y**2) == max(abs(r - r2[0]) for r in r2)
    assert sol.drift(x**2 + y**2) > ctx.num("1e-4")                 # not conserved
    both = sol.drift([x, "x**2 + y**2"])
    assert both[1] == sol.drift(x**2 + y**2) and both[0] == max(abs(a - sol.q[0][0]) for a in sol.q[:, 0])


def test_drift_takes_t0_from_the_problem_when_t0_is_not_saved():
    S, P = _hh_problem()
    sol = mpvi.solve(P, "simpson", h="1/10", saveat=["1", "2"])
    assert len(sol.t) == 2 and sol.t[0] != P.t0
    sol.ctx.activate()
    start = P.q0[0]
    assert sol.drift(x) == max(abs(sol.q[0][0] - start), abs(sol.q[1][0] - start))


def test_energy_drift_is_the_energy_functions_and_small_for_a_symplectic_method():
    S, P = _hh_problem()
    sol = mpvi.solve(P, "lobatto", h="1/10")
    H = mpvi.energy(S, sol)
    sol.ctx.activate()
    assert sol.energy_drift() == max(abs(e - H[0]) for e in H)
    expr = vx * sp.diff(HH, vx) + vy * sp.diff(HH, vy) - HH
    assert abs(sol.energy_drift() - sol.drift(expr)) < sol.ctx.num("1e-55")
    assert sol.energy_drift() < sol.ctx.num("1e-12")


@pytest.mark.parametrize("what, build", [
    ("force", lambda ctx: mpvi.LagrangianSystem.from_lagrangian(
        "damped", [x], [vx], vx**2 / 2 - x**2 / 2, {}, ctx, force=[-vx])),
    ("depends on the time", lambda ctx: mpvi.Lagrangian(
        vx**2 / 2 - x**2 / 2 + x * sp.cos(mpvi.TIME), [x], [vx], ctx=ctx, name="driven")),
])
def test_energy_drift_of_a_system_without_energy_says_why(what, build):
    S = build(mpvi.GMPContext(30))
    sol = mpvi.solve(mpvi.Problem(S, ["1"], v0=["0"]), "simpson", h="1/10", n=5)
    with pytest.raises(ValueError, match=what):
        sol.energy_drift()


def test_energy_drift_of_a_first_order_system_says_why():
    ctx = mpvi.GMPContext(30)
    F = mpvi.FirstOrderSystem.from_expressions("osc", ["a", "b"], ["b", "-a"], ctx)
    sol = mpvi.solve(mpvi.Problem(F, ["1", "0"]), "rk4", h="1/10", n=5)
    with pytest.raises(ValueError, match="first-order system"):
        sol.energy_drift()
