"""The method contract on new methods: Lobatto-4 (order 6), (q, v)-state methods and
forced, time-dependent systems started at t0 != 0 against an exact solution, the Galerkin
side of the engine (cubic Hermite trial functions, Legendre test functions), and the
driver's errors for bad input."""
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from mpvi import METHODS, IntegrationError, MPContext, Problem, fit_order, solve
from mpvi.model.mechanics import TIME, LagrangianSystem
from mpvi.methods.quadrature import gauss_legendre, gauss_lobatto, hermite_basis, to_context
from mpvi.methods.base import Method
from mpvi.methods.declarations import Discretization, GalerkinMethod, VariationalMethod
from mpvi.methods.variational import DiscreteLagrangian, prepare_spec

C64 = MPContext(64)


def pendulum(ctx):
    th = sp.Symbol("theta")
    return LagrangianSystem("pendulum", [th], sp.Matrix([[1]]), -sp.cos(th), {}, ctx)


def test_lobatto4_is_order_6_on_the_nonlinear_pendulum_at_64_digits():
    """Errors at T = 4 against an order-32 GBS reference (error < 1e-45 here)."""
    s, T = pendulum(C64), C64.num(4)
    problem = Problem(s, ["1.2"], p0=["0"])
    ref = solve(problem, "gbs", h=T / 80, n=80, levels=16)
    check = solve(problem, "gbs", h=T / 160, n=160, levels=16)
    assert abs(ref.q[-1][0] - check.q[-1][0]) < 1e-45
    hs, errs = [], []
    for N in (20, 40, 80):
        sol = solve(problem, "lobatto", h=T / N, n=N)
        assert sol.internal.shape == (N, 2, 1)                 # two internal points per step
        hs.append(T / N)
        errs.append(max(abs(sol.q[-1][0] - ref.q[-1][0]), abs(sol.p[-1][0] - ref.p[-1][0])))
    order = fit_order(C64, hs, errs)
    assert abs(order - 6) < 0.2, order
    assert METHODS["lobatto"].order_for() == 6 and METHODS["lobatto"].order_for(points=5) == 8


def test_lobatto3_is_simpson():
    """Three Lobatto points give Simpson's discrete Lagrangian: the same run to the last bit."""
    problem = Problem(pendulum(C64), ["1"], p0=["0.5"])
    a = solve(problem, "simpson", h="0.1", n=20)
    b = solve(problem, "lobatto", h="0.1", n=20, points=3)
    assert C64.norm_inf(a.q - b.q) == 0 and C64.norm_inf(a.p - b.p) == 0


def test_quadrature_rules_are_exact_to_their_degree_at_context_precision():
    for rule in [gauss_legendre(k) for k in (1, 3, 5)] + [gauss_lobatto(k) for k in (2, 4, 6)]:
        w = [to_context(x, C64) for x in rule.weights]
        tau = [to_context(x, C64) for x in rule.nodes]
        for d in range(rule.degree + 1):
            got = C64.fsum(wk * tk ** d for wk, tk in zip(w, tau))
            assert abs(got - C64.one / (d + 1)) < 10 * C64.eps, (rule.name, d)
        d = rule.degree + 1
        assert abs(C64.fsum(wk * tk ** d for wk, tk in zip(w, tau)) - C64.one / (d + 1)) > 1e-10


# ----- a forced, time-dependent system from t0 != 0 against its exact solution ----------------

K, C, A, W = 4, Fraction(3, 10), Fraction(7, 10), Fraction(13, 10)


def driven_oscillator(ctx):
    """q'' + c q' + k q = A cos(w t): L = v^2/2 - k q^2/2, F = -c v + A cos(w t)."""
    q = sp.Symbol("q")
    k, c, a, w = sp.symbols("k c A w", positive=True)
    return LagrangianSystem("driven damped oscillator", [q], sp.Matrix([[1]]), k * q ** 2 / 2,
                            {k: K, c: C, a: A, w: W}, ctx,
                            force=lambda t, x, v: sp.Matrix([-c * v[0] + a * sp.cos(w * t)]))


def exact_driven(ctx, t0, q0, v0):
    """q(t) = e^(-c (t - t0)/2) (C1 cos wd (t - t0) + C2 sin wd (t - t0)) + P cos wt + Q sin wt."""
    k, c, a, w = (ctx.num(x) for x in (K, C, A, W))
    det = (k - w * w) ** 2 + (c * w) ** 2
    P, Q = a * (k - w * w) / det, a * c * w / det
    wd = ctx.sqrt(k - c * c / 4)
    qp0 = P * ctx.cos(w * t0) + Q * ctx.sin(w * t0)
    vp0 = w * (Q * ctx.cos(w * t0) - P * ctx.sin(w * t0))
    C1 = q0 - qp0
    C2 = (v0 - vp0 + c / 2 * C1) / wd

    def q(t):
        s = t - t0
        return (ctx.exp(-c * s / 2) * (C1 * ctx.cos(wd * s) + C2 * ctx.sin(wd * s))
                + P * ctx.cos(w * t) + Q * ctx.sin(w * t))
    return q


def test_the_exact_driven_solution_solves_its_ode_and_initial_data():
    t0, q0, v0 = C64.num("1.5"), C64.num("0.8"), C64.num("-0.4")
    q = exact_driven(C64, t0, q0, v0)
    k, c, a, w = (C64.num(x) for x in (K, C, A, W))
    assert abs(q(t0) - q0) < 1e-62 and abs(C64.diff(q, t0) - v0) < 1e-55
    for t in ("1.5", "2.7", "4.0"):
        t = C64.num(t)
        res = C64.diff(q, t, 2) + c * C64.diff(q, t) + k * q(t) - a * C64.cos(w * t)
        assert abs(res) < 1e-50


@pytest.mark.parametrize("method, options, order", [
    ("newmark_family", {}, 2), ("newmark_family", {"beta": "0.3025", "gamma": "0.6"}, 1),
    ("midpoint", {}, 2), ("simpson", {}, 4), ("lobatto", {}, 6), ("rk4", {}, 4)])
def test_forced_system_from_t0_against_the_exact_solution(method, options, order):
    """(q, v) methods get v0, (q, p) methods p0 (= v0 here); every method starts at
    t0 = 3/2, where the drive's phase matters: a driver that started the clock at 0
    would be off by O(1)."""
    s = driven_oscillator(C64)
    t0, q0, v0, T = C64.num("1.5"), C64.num("0.8"), C64.num("-0.4"), C64.num(2)
    q = exact_driven(C64, t0, q0, v0)
    problem = Problem(s, [q0], v0=[v0], t0=t0)
    m = METHODS[method]
    assert m.order_for(**options) == order
    hs, errs = [], []
    for N in (20, 40, 80):
        sol = solve(problem, method, h=T / N, n=N, **options)
        assert sol.state == m.state and abs(sol.t[-1] - (t0 + T)) < 1e-60
        errs.append(max(abs(x[0] - q(t)) for x, t in zip(sol.q, sol.t)))
        hs.append(T / N)
        assert C64.norm_inf(sol.p - sol.v) <= 1e-60        # p = v for this Lagrangian
    assert abs(fit_order(C64, hs, errs) - order) < 0.15


def test_newmark_family_on_a_linear_system_is_axioms2024_newmark():
    from mpvi.systems.double_pendulum import linearized_double_pendulum
    dp = linearized_double_pendulum(C64)
    a = solve(dp, "newmark", h=dp.tbar / 10, n=20)
    b = solve(dp, "newmark_family", h=dp.tbar / 10, n=20)
    assert b.state == "qv"
    assert C64.norm_inf(a.q - b.q) < 1e-60 and C64.norm_inf(a.p - b.p) < 1e-60


# ----- the Galerkin side of the engine ---------------------------------------------------------

HERMITE3 = Discretization("hermite3", hermite_basis(2), gauss_legendre(4))


def as_method(name, spec):
    return Method(name=name, label=name, state="qv", order=4, symplectic=False, implicit=True,
                  reference="engine test",
                  prepare=lambda system, h, ctx, newton=None, check_stability=True:
                  prepare_spec(spec, system, h, ctx, newton))


def test_cubic_hermite_petrov_galerkin_is_order_4_on_the_forced_system():
    """Trial: cubic Hermite through (q0, v0, q1, v1); tests 1 and 2 tau - 1 (hermite eq. 26)."""
    spec = GalerkinMethod(HERMITE3, (lambda x: sp.Integer(1), lambda x: 2 * x - 1))
    s = driven_oscillator(C64)
    t0, q0, v0, T = C64.num("1.5"), C64.num("0.8"), C64.num("-0.4"), C64.num(2)
    q = exact_driven(C64, t0, q0, v0)
    problem = Problem(s, [q0], v0=[v0], t0=t0)
    method = as_method("hermite_galerkin", spec)
    hs, errs = [], []
    for N in (20, 40, 80):
        sol = solve(problem, method, h=T / N, n=N)
        errs.append(max(abs(x[0] - q(t)) for x, t in zip(sol.q, sol.t)))
        hs.append(T / N)
    assert abs(fit_order(C64, hs, errs) - 4) < 0.15


def test_cubic_hermite_variational_step_solves_its_equations():
    """hermite eqs. (24)-(25): dS_d/dv0 + g- = 0 and dS_d/dv1 + g+ = 0 at the computed (q1, v1)."""
    spec = VariationalMethod(HERMITE3, "qv", ((1, False), (3, False)), known_derivative=1)
    s = driven_oscillator(C64)
    t, q0, v0, h = C64.num("1.5"), C64.asarray(["0.8"]), C64.asarray(["-0.4"]), C64.num("0.1")
    r = prepare_spec(spec, s, h, C64)(t, q0, v0)
    grad = DiscreteLagrangian(s, HERMITE3, h, C64).gradient([q0, v0, r.q, r.y], t)
    assert C64.norm_inf(grad[1]) < 1e-60 and C64.norm_inf(grad[3]) < 1e-60
    assert C64.norm_inf(grad[0]) > 1e-3          # the other two are not equations


# ----- bad input --------------------------------------------------------------------------------

def test_nan_or_infinite_initial_state_is_refused():
    s = pendulum(C64)
    for q0, p0, what in ((["nan"], ["0"], "initial position q0"), (["1"], ["inf"], "initial momentum p0")):
        with pytest.raises(ValueError, match=f"pendulum: {what} has a non-finite entry"):
            Problem(s, q0, p0=p0)
    with pytest.raises(ValueError, match="pendulum: initial velocity v0 has a non-finite entry"):
        Problem(s, ["1"], v0=["-inf"])


def test_wrong_length_initial_state_is_refused():
    s = pendulum(C64)
    with pytest.raises(ValueError, match=r"initial position q0 must be a vector of 1 numbers \(theta\), got shape \(2,\)"):
        Problem(s, ["1", "2"], p0=["0"])
    for given in ({}, {"p0": ["0"], "v0": ["0"]}):
        with pytest.raises(ValueError, match="exactly one of the initial momentum p0 and the initial velocity v0"):
            Problem(s, ["1"], **given)


def test_bad_step_options_and_parameters_are_refused():
    problem = Problem(pendulum(C64), ["1"], p0=["0"])
    with pytest.raises(ValueError, match="nonzero finite"):
        solve(problem, "simpson", h=C64.num("inf"), n=3)
    with pytest.raises(ValueError, match=r"method 'simpson' has no parameter\(s\) \['points'\]"):
        solve(problem, "simpson", h="0.1", n=3, points=4)
    with pytest.raises(ValueError, match="number of points must be an integer from 2 to 24, got 1"):
        solve(problem, "lobatto", h="0.1", n=3, points=1)


def test_singular_mass_matrix_mid_run_names_the_step_and_time():
    """L = (1 - t) v^2 / 2: the mass vanishes at t = 1; RK4's last stage of the step from
    t = 0.75 (h = 1/4) meets it."""
    x, v = sp.symbols("x v")
    s = LagrangianSystem.from_lagrangian("fading mass", [x], [v], (1 - TIME) * v ** 2 / 2, {}, C64)
    with pytest.raises(IntegrationError, match=r"rk4: step 3 at t = 0\.75: fading mass: the mass "
                                               r"matrix is singular at q = \(.*\): solve: the matrix is zero"):
        solve(Problem(s, ["0"], p0=["1"]), "rk4", h=Fraction(1, 4), n=6)


def test_a_mass_matrix_that_is_not_positive_definite_at_q0_is_refused():
    x = sp.Symbol("x")
    s = LagrangianSystem("bad mass", [x], sp.Matrix([[x]]), 0, {}, C64)
    with pytest.raises(ValueError, match=r"bad mass: the mass matrix at the initial point q = \(-1\.0+\) "
                                         "is not positive definite"):
        Problem(s, ["-1"], p0=["0"])


# ----- symplecticity (the layers: tests/test_layers.py) -----------------------------------------

@pytest.mark.parametrize("method, options, symplectic", [
    ("lobatto", {}, True), ("newmark_family", {"beta": 0}, True),
    ("newmark_family", {}, False), ("rk4", {}, False)])
def test_declared_symplecticity_is_measured_on_the_pendulum(method, options, symplectic):
    """Phi^T J Phi - J of the one-step map (q, p) -> (q1, p1) of the pendulum (p = v), Phi
    by central differences at 100 digits: <= 1e-30 for a canonically symplectic method;
    Newmark's average acceleration (the trapezoidal rule) is not, nor is RK4."""
    ctx = MPContext(100)
    s, h = pendulum(ctx), ctx.num("0.3")
    stepper = METHODS[method].prepare(s, h, ctx, **options)
    assert METHODS[method].symplectic_for(**options) is symplectic

    def step(z):
        r = stepper(ctx.zero, z[:1], z[1:])
        return np.concatenate([r.q, r.y])
    from mpvi.analysis.measures import central_differences
    Phi = central_differences(step, ctx.asarray(["1.1", "0.4"]), ctx, ctx.num(10) ** -40).T
    J = np.array([[ctx.zero, ctx.one], [-ctx.one, ctx.zero]], dtype=object)
    defect = ctx.norm_inf(Phi.T @ J @ Phi - J)
    assert (defect <= 1e-30) is symplectic, defect
    if not symplectic:
        assert defect > 1e-8           # RK4: 3.4e-7 at h = 0.3
