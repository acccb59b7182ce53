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


# ----- 2. order= chooses the family member ------------------------------------------------

def _pendulum(dps=30):
    ctx = mpvi.GMPContext(dps)
    S = mpvi.Lagrangian(vx**2 / 2 + sp.cos(x), [x], [vx], ctx=ctx, name="pendulum")
    return mpvi.Problem(S, ["1/2"], v0=["0"], t1=1)


@pytest.mark.parametrize("method, order, member", [
    ("lobatto", 6, {"points": 4}), ("lobatto", 10, {"points": 6}), ("gauss", 6, {"points": 3}),
    ("hermite_variational", 4, {"hermite_n": 3}), ("hermite_galerkin", 8, {"hermite_n": 3}),
    ("gbs", 12, {"levels": 6}), ("taylor", 20, {"degree": 20}),
])
def test_order_chooses_the_family_member(method, order, member):
    m = mpvi.get_method(method)
    params = m.parameters_for_order(order)
    assert {k: params[k] for k in member} == member and m.order_for(**params) == order
    extra = {"tol": None} if method == "taylor" else {}
    sol = mpvi.solve(_pendulum(), method, h="1/4", order=order, **extra)
    assert {k: sol.params[k] for k in member} == member


def test_order_a_family_cannot_give_lists_the_orders_it_can():
    with pytest.raises(ValueError, match=r"no order 5: its orders are 2, 4, \.\.\., 46 \(points "
                                         r"from 2 to 24\)"):
        mpvi.solve(_pendulum(), "lobatto", h="1/4", order=5)
    with pytest.raises(ValueError, match=r"its orders are 4, 8, \.\.\., 28"):
        mpvi.solve(_pendulum(), "hermite_galerkin", h="1/4", order=6)
    with pytest.raises(ValueError, match="order must be a positive integer"):
        mpvi.solve(_pendulum(), "lobatto", h="1/4", order="6")


def test_order_and_a_contradicting_member_parameter_is_an_error():
    with pytest.raises(ValueError, match=r"points=3 gives order 4, not order=6"):
        mpvi.solve(_pendulum(), "lobatto", h="1/4", order=6, points=3)
    sol = mpvi.solve(_pendulum(), "lobatto", h="1/4", order=6, points=4)     # agrees
    assert sol.params["points"] == 4


def test_a_fixed_method_accepts_its_own_order_only():
    assert mpvi.solve(_pendulum(), "simpson", h="1/4", order=4).method == "simpson"
    with pytest.raises(ValueError, match=r"'simpson' is of order 4, not order=6; methods that "
                                         r"give order 6: .*lobatto"):
        mpvi.solve(_pendulum(), "simpson", h="1/4", order=6)
    with pytest.raises(ValueError, match="'newmark_family' is of order 1, not order=2"):
        mpvi.solve(_pendulum(), "newmark_family", h="1/4", order=2, gamma="3/4")


# ----- 4. the step from a tolerance ---------------------------------------------------------

@pytest.mark.parametrize("method, params, tol", [
    ("lobatto", {"order": 6}, "1e-14"), ("simpson", {}, "1e-10"), ("rk4", {}, "1e-10"),
    ("midpoint", {}, "1e-7"), ("hermite_galerkin", {}, "1e-12"),
])
def test_tol_chooses_a_constant_whole_step_that_meets_it(method, params, tol):
    P = _pendulum()
    ctx = P.ctx
    sol = mpvi.solve(P, method, tol=tol, **params)
    st = sol.stats["tolerance"]
    N = st["steps"]
    assert sol.steps == N and sol.posed["h"] == Fraction(1, N) and st["h"] == sol.h
    assert len(sol.t) == N + 1 and st["error_estimate"] <= ctx.num(tol)
    # the true error, against a run four times finer, is within tol (the scale is ~1)
    ref = mpvi.solve(P, method, h=Fraction(1, 4 * N), saveat=4, **params)
    ctx.activate()
    err = max(abs(a - b) for r, s in zip(ref.q, sol.q) for a, b in zip(r, s))
    assert err <= ctx.num(tol)
    # not wastefully many: half the steps would miss tol by the method's order
    assert err * 2 ** st["order"] > ctx.num(tol) / 8


def test_tol_keeps_a_symplectic_method_symplectic_and_the_users_options():
    P = _pendulum()
    sol = mpvi.solve(P, "lobatto", order=6, tol="1e-16", saveat=["1/3", "1"])
    assert len(sol.t) == 2 and sol.stats["tolerance"]["runs"] >= 3
    assert mpvi.get_method("lobatto").symplectic_for(**sol.params)
    assert sol.t[1] == P.ctx.one


def test_tol_bad_input_names_the_remedy():
    P = _pendulum()
    with pytest.raises(ValueError, match="without h or n"):
        mpvi.solve(P, "simpson", tol="1e-8", h="1/10")
    with pytest.raises(ValueError, match="more digits"):
        mpvi.solve(P, "simpson", tol="1e-40")
    with pytest.raises(ValueError, match="between 0 and 1"):
        mpvi.solve(P, "simpson", tol="2")
    with pytest.raises(ValueError, match="give t1"):
        mpvi.solve(mpvi.Problem(P.system, ["1/2"], v0=["0"]), "simpson", tol="1e-8")


def test_no_step_names_both_remedies_and_n_over_the_span_gives_h():
    P = _pendulum()
    with pytest.raises(TypeError, match=r"step size h, or tol=\.\.\."):
        mpvi.solve(mpvi.Problem(P.system, ["1/2"], v0=["0"]), "lobatto", t1=10, points=4)
    sol = mpvi.solve(P, "simpson", n=8)
    assert sol.posed["h"] == Fraction(1, 8) and sol.steps == 8
    with pytest.raises(TypeError, match="tol is its own"):
        mpvi.solve(P, "taylor", tol=None, t1=1)


def test_taylors_refusal_of_a_fixed_degree_names_tol_none_and_its_tol_is_unchanged():
    P = _pendulum()
    with pytest.raises(ValueError, match=r"tol=None for one fixed step of degree 6"):
        mpvi.solve(P, "taylor", h="1/10", degree=6)
    fixed = mpvi.solve(P, "taylor", h="1/10", degree=6, tol=None)
    assert fixed.stats["substeps"] == 10
    adaptive = mpvi.solve(P, "taylor", h="1/2", tol="1e-20")
    assert adaptive.params["tol"] == "1e-20" and "tolerance" not in adaptive.stats


# ----- 5. the newcomer's script, as printed in docs/guide/library.md -------------------------

def test_the_first_hour_script_runs_as_printed(tmp_path, monkeypatch, capsys):
    text = (ROOT / "docs" / "guide" / "library.md").read_text(encoding="utf-8")
    section = text[text.index("## The first hour"):text.index("## The library in detail")]
    code = re.search(r"^```\{code-block\} python\n(.*?)^```", section, re.S | re.M).group(1)
    printed = re.search(r"^```text\n(.*?)^```", section, re.S | re.M).group(1)
    lines = [line for line in code.splitlines() if line.strip() and not line.startswith("#")]
    assert len(lines) <= 12
    for words in ("mpvi.Lagrangian(", "order=", "tol=\"1e-40\"", "energy_drift()", ".save(",
                  "load_solution(", "certify=True", "min_digits"):
        assert words in code
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "library.md: the first hour", "exec"), {"__name__": "first_hour"})
    assert capsys.readouterr().out == printed
    assert (tmp_path / "henon-heiles.json").exists()


def test_tol_on_a_first_order_system_and_exact_symbolic_times():
    ctx = mpvi.GMPContext(40)
    F = mpvi.FirstOrderSystem.from_expressions("osc", ["a", "b"], ["b", "-a"], ctx)
    sol = mpvi.solve(mpvi.Problem(F, ["1", "0"], t1=3), "rk4", tol="1e-12")
    ctx.activate()
    assert abs(sol.q[-1][0] - ctx.cos(ctx.num(3))) <= ctx.num("1e-12")
    P = _pendulum(40).replace(t0=1, t1=sp.pi)            # h = (pi - 1)/N, exact
    sol = mpvi.solve(P, "gauss", order=4, tol="1e-12")
    N = sol.stats["tolerance"]["steps"]
    assert sp.simplify(sol.posed["h"] - (sp.pi - 1) / N) == 0
    assert sol.t[-1] == ctx.pi
    back = mpvi.solve(P.replace(t0="1/2", t1="-3/2"), "simpson", tol="1e-10")  # backwards
    assert back.h < 0 and back.t[-1] == ctx.num("-1.5")
