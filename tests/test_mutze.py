"""Mutze's parabolic-path integrators (mpvi.methods.mutze): the g-family and its solvers,
g = 1 against the independent implicit midpoint rule, eqs. (44) and (54) against eq. (90),
measured orders on a nonlinear forced system, precision, and bad input."""
from fractions import Fraction

import pytest
import sympy as sp

from mpvi import LagrangianSystem, NewtonError, Problem, fit_order, get_method, solve
from mpvi.numbers.context import MPContext, PrecisionError
from mpvi.methods.mutze import TAU, parabolic_acceleration
from mpvi.systems.damped import DampedOscillatorExact, damped_oscillator, damped_pendulum

CTX = MPContext(64)


def coupled_system(ctx):
    """Two degrees of freedom with a position-dependent mass matrix, time dependence and
    a force depending nonlinearly on velocity: a hard case for the step comparisons."""
    x, y, u, w = sp.symbols("x y u w")
    t = sp.Symbol("t")
    L = (2 + sp.cos(y)) * u ** 2 / 2 + u * w * sp.sin(y) / 3 + w ** 2 / 2 - x ** 2 / 2 - y ** 4 / 4 \
        + t * x * w / 7
    return LagrangianSystem.from_lagrangian(
        "coupled", [x, y], [u, w], L, {}, ctx,
        force=lambda tt, q, v: sp.Matrix([-v[0] ** 3 / 5, sp.sin(tt) / 3 - v[1] / 4]))


def oscillator(ctx):
    """The Sec. 7 oscillator: m = 1, period 1 (omega = 2 pi), amplitude x2 in two periods."""
    rho = -ctx.log(ctx.num(2)) / 2
    k = 4 * ctx.pi ** 2 + rho ** 2
    return damped_oscillator(ctx, 1, k, 2 * rho), (1, k, 2 * rho)


def test_g1_is_the_implicit_midpoint_rule_step_for_step():
    problem = Problem(coupled_system(CTX), [1, "1/2"], v0=["1/3", -1])
    h = CTX.num(Fraction(1, 10))
    a = solve(problem, "mutze", h=h, n=25, g=1)
    b = solve(problem, "implicit_midpoint", h=h, n=25)
    dq = max(abs(e) for e in (a.q - b.q).ravel())
    dv = max(abs(e) for e in (a.v - b.v).ravel())
    assert dq < CTX.num(10) ** -58 and dv < CTX.num(10) ** -58
    # and it is not some other second-order method: g = 0 differs at the O(h^3) level
    c = solve(problem, "mutze", h=h, n=25, g=0)
    assert max(abs(e) for e in (a.q - c.q).ravel()) > CTX.num(10) ** -4


def test_explicit_solver_is_eq79_and_eq89():
    system, (m, k, b) = oscillator(CTX)
    h = CTX.num(1) / 32
    tau = h / 2
    x, v = CTX.num("0.7"), CTX.num("-1.3")
    for solver in ("explicit", "newton"):
        r = get_method("mutze").prepare(system, h, CTX, solver=solver)(CTX.zero, CTX.asarray([x]), CTX.asarray([v]))
        a89 = -(b * v + k * (x + v * tau)) / (m + tau * b)                 # eq. (89)
        assert abs(r.internal[0] - a89) < CTX.num(10) ** -60
        assert abs(r.y[0] - (v + 2 * tau * a89)) < CTX.num(10) ** -60
        assert abs(r.q[0] - (x + (v + r.y[0]) * tau)) < CTX.num(10) ** -60   # eq. (74)


def test_explicit_solver_refused_when_eq72_is_not_affine():
    pend = damped_pendulum(CTX)
    get_method("mutze").prepare(pend, CTX.num("0.1"), CTX, solver="explicit")      # g = 0: eq. (79) applies
    with pytest.raises(ValueError, match="affine in a"):
        get_method("mutze").prepare(pend, CTX.num("0.1"), CTX, g="1/2", solver="explicit")


def test_action_methods_give_eq90_symbolically():
    m, k, b, x, v, t = sp.symbols("m k b x v t")
    L = m * v ** 2 / 2 - k * x ** 2 / 2
    F = [-b * v]
    eq90 = -(b * v + k * (x + v * TAU)) / (m + TAU * (b + sp.Rational(3, 5) * k * TAU))
    for kind in ("variation", "parabolic_el"):
        a = parabolic_acceleration(L, F, [x], [v], t, kind)
        assert sp.simplify(a - eq90) == 0, kind


def test_action_methods_step_equals_g_three_fifths_on_the_oscillator():
    system, _ = oscillator(CTX)
    problem = Problem(system, [1], v0=[0])
    h = CTX.num(1) / 32
    ref = solve(problem, "mutze", h=h, n=40, g="3/5")
    for name in ("mutze_variation", "mutze_parabolic_el"):
        sol = solve(problem, name, h=h, n=40)
        assert max(abs(e) for e in (sol.q - ref.q).ravel()) < CTX.num(10) ** -58, name


def test_action_methods_differ_when_the_force_is_nonlinear():
    """(44) and (54) agree for the oscillator only: S_F's variation differs from W_F by
    O(tau^2) (eq. 50), which shows for F = -v^3/5."""
    problem = Problem(coupled_system(CTX), [1, "1/2"], v0=["1/3", -1])
    h = CTX.num(Fraction(1, 10))
    a = solve(problem, "mutze_variation", h=h, n=5)
    b = solve(problem, "mutze_parabolic_el", h=h, n=5)
    assert max(abs(e) for e in (a.q - b.q).ravel()) > CTX.num(10) ** -8


def test_action_quadrature_converges_in_the_node_count():
    """Nonpolynomial integrands: the quadrature error falls fast with the node count."""
    problem = Problem(damped_pendulum(CTX), [1], v0=[0])
    h = CTX.num(Fraction(1, 4))
    runs = {k: solve(problem, "mutze_variation", h=h, n=4, nodes=k) for k in (3, 6, 12)}
    d1 = abs(runs[3].q[-1][0] - runs[12].q[-1][0])
    d2 = abs(runs[6].q[-1][0] - runs[12].q[-1][0])
    assert d2 < d1 * CTX.num(10) ** -6


ORDER_CASES = [
    ("mutze", {}, 2), ("mutze", {"solver": "explicit"}, 2),
    ("mutze", {"solver": "iterate", "iterations": 1}, 2),
    ("mutze", {"solver": "iterate", "iterations": 1, "variant": "simple"}, 2),
    ("mutze", {"solver": "iterate", "iterations": 0}, 1),
    ("mutze", {"g": "0.68"}, 2), ("mutze", {"g": 1}, 2),
    ("mutze_variation", {}, 2), ("mutze_parabolic_el", {}, 2), ("rk2", {}, 2),
]


def test_measured_orders_on_the_damped_driven_pendulum():
    ctx = MPContext(30)
    problem = Problem(damped_pendulum(ctx), [1], v0=[0])
    T = 2
    ref = solve(problem, "gbs", h=ctx.num(1) / 4, n=4 * T, levels=12)
    xr, vr = ref.q[-1][0], ref.v[-1][0]
    hs = [Fraction(1, 2 ** k) for k in range(4, 8)]
    for name, opts, order in ORDER_CASES:
        errs = []
        for h in hs:
            sol = solve(problem, name, h=ctx.num(h), n=int(T / h), **opts)
            errs.append(max(abs(sol.q[-1][0] - xr), abs(sol.v[-1][0] - vr)))
        p = fit_order(ctx, hs, errs)
        assert abs(p - order) < ctx.num("0.15"), (name, opts, p)
        method = get_method(name)
        assert method.order_for(**{k: v for k, v in opts.items() if k in method.params}) == order


def test_64_digits_end_to_end():
    """A 64-digit run agrees with an 80-digit run to about 10^-62: no float leaks in."""
    out = []
    for dps in (64, 80):
        ctx = MPContext(dps)
        sol = solve(Problem(damped_pendulum(ctx), [1], v0=[0]), "mutze", h=ctx.num(Fraction(1, 16)),
                    n=32, g="0.68")
        out.append(sol.q[-1][0])
    assert abs(out[0] - CTX.num(out[1])) < CTX.num(10) ** -61      # the 80-digit value rounded


def test_interaction_picture_of_the_exact_flow_is_constant():
    system, (m, k, b) = oscillator(CTX)
    ex = DampedOscillatorExact(CTX, m, k, b)
    x0, v0 = CTX.num(1), CTX.num(0)
    s0 = ex.amplitude(x0, v0)
    for t in ("0.3", "7.25", "20"):
        x, v = ex.flow(CTX.num(t), x0, v0)
        re, im = ex.interaction(CTX.num(t), x, v)
        assert abs(re - s0[0]) + abs(im - s0[1]) < CTX.num(10) ** -55
    # and the flow solves m x'' + b x' + k x = 0 (central second differences at 100 digits)
    hi = MPContext(100)
    exh = DampedOscillatorExact(hi, m, hi.num(str(k)), hi.num(str(b)))
    d = hi.num(10) ** -30
    t = hi.num("1.7")
    xs = [exh.flow(t + j * d, hi.one, hi.zero)[0] for j in (-1, 0, 1)]
    acc = (xs[0] - 2 * xs[1] + xs[2]) / d ** 2
    vel = (xs[2] - xs[0]) / (2 * d)
    assert abs(acc + exh.rho * 2 * vel + hi.num(str(k)) * xs[1]) < hi.num(10) ** -30
    assert abs(vel - exh.flow(t, hi.one, hi.zero)[1]) < hi.num(10) ** -50


def test_bad_input_is_refused_with_the_cause():
    system, _ = oscillator(CTX)
    prep = get_method("mutze").prepare
    with pytest.raises(ValueError, match="unknown solver"):
        prep(system, CTX.num(1) / 32, CTX, solver="bisection")
    with pytest.raises(ValueError, match="variant"):
        prep(system, CTX.num(1) / 32, CTX, solver="iterate", variant="wild")
    with pytest.raises(ValueError, match="non-negative integer"):
        prep(system, CTX.num(1) / 32, CTX, solver="iterate", iterations=-1)
    with pytest.raises(PrecisionError):
        prep(system, CTX.num(1) / 32, CTX, g=0.68)
    with pytest.raises(ValueError, match="nodes"):
        get_method("mutze_variation").prepare(system, CTX.num(1) / 32, CTX, nodes=0)
    problem = Problem(system, [1], v0=[0])
    with pytest.raises(ValueError, match="'mutze' has no parameter"):
        solve(problem, "mutze", h=CTX.num(1) / 32, n=2, gamma=1)
    with pytest.raises(NewtonError, match="eq. \\(72\\), step 0"):
        solve(problem, "mutze", h=CTX.num(1) / 32, n=2, newton={"max_iter": 1})
    with pytest.raises(ValueError, match="rk2: unknown variant"):
        solve(problem, "rk2", h=CTX.num(1) / 32, n=2, variant="ralston")


def test_direct_midpoint_is_position_verlet_for_separable_systems():
    """For L = v^2/2 - V(x), F = 0 the g = 0 step is drift tau, kick 2 tau, drift tau:
    its one-step Jacobian has determinant 1 (area preserving) at any point."""
    x, u = sp.symbols("x u")
    system = LagrangianSystem.from_lagrangian("anharmonic", [x], [u], u ** 2 / 2 - x ** 4 / 4 - sp.cos(x), {}, CTX)
    h = CTX.num(Fraction(1, 5))
    step = get_method("mutze").prepare(system, h, CTX, g=0)
    hi = CTX.num(10) ** -25
    x0, v0 = CTX.num("0.4"), CTX.num("0.9")
    cols = []
    for dx, dv in ((hi, 0), (0, hi)):
        p = step(CTX.zero, CTX.asarray([x0 + dx]), CTX.asarray([v0 + dv]))
        m = step(CTX.zero, CTX.asarray([x0 - dx]), CTX.asarray([v0 - dv]))
        cols.append(((p.q[0] - m.q[0]) / (2 * hi), (p.y[0] - m.y[0]) / (2 * hi)))
    det = cols[0][0] * cols[1][1] - cols[1][0] * cols[0][1]
    assert abs(det - 1) < CTX.num(10) ** -40
