"""Dense output at the method's order (issue 38, item 2), measured for every method.

For every method of :data:`mpvi.METHODS` (a new method file is covered with nothing
added here), ``sol(t)`` between the nodes -- at t_j + h/3 and t_j + 0.71 h of every step
-- is compared with an independent reference, over three step sizes: the errors of q, p
and v decrease at the method's declared order, the order of its nodes.  The systems are
nonlinear (the methods of linear systems only: an oscillator): a pendulum, against its
closed form in Jacobi's elliptic functions, and a swing with a position-dependent mass
given by a general Lagrangian, against mpmath's Taylor-series ODE solver -- references
computed without mpvi.  Also: the first-order form (y and y'), a field the Taylor
recurrences do not cover (q'' alone), the location of events (Lobatto-4 and Simpson
event times), the nodes kept bit for bit, the Hermite basis against its definition, and
the compiled node derivatives against the Python ones.
"""
import types
from fractions import Fraction
from functools import lru_cache
from math import comb

import mpmath
import pytest
import sympy as sp

import mpvi
from mpvi import METHODS, Event, LagrangianSystem, LinearSystem, MPContext, Problem, fit_order, solve
from mpvi.compiled import cbackend
from mpvi.engines import kernels
from mpvi.engines.dense import hermite_basis

CTX = MPContext(40)
Q, U = sp.symbols("q u")
Q0 = "0.9"                                  # released from rest at q = 0.9
T = 1
STEPS = (12, 24, 48)
THETAS = ("1/3", "0.71")
MARGIN = 0.25          # as the dense-output order test of tests/test_solve.py
# parameters that bring the order of a method into what three step sizes at 40 digits
# can measure (the default order-32 GBS and Taylor reach round-off at once)
LOWER = {"gbs": {"levels": 2}, "taylor": {"degree": 4, "tol": None}}
MAX_ORDER = 8


def pendulum():
    return LagrangianSystem("pendulum", [Q], sp.Matrix([[1]]), -sp.cos(Q), {}, CTX)


def swing():
    """A general Lagrangian L(q, u) = (2 + cos q) u^2 / 2 + cos q (read on (q, v) by the
    Taylor recurrences of mpvi.engines.taylor, not through the M, V form)."""
    return LagrangianSystem.from_lagrangian(
        "swing", [Q], [U], (2 + sp.cos(Q)) * U ** 2 / 2 + sp.cos(Q), {}, CTX)


def _pendulum_exact(mp):
    """q(t) = 2 asin(k sn(K - t, k^2)), v(t) = -2 k cn(K - t, k^2), k = sin(q0/2)."""
    k = mp.sin(mp.mpf(Q0) / 2)
    m = k * k
    K = mp.ellipk(m)

    def exact(t):
        u = K - t
        return 2 * mp.asin(k * mp.ellipfun("sn", u, m=m)), -2 * k * mp.ellipfun("cn", u, m=m)
    return exact


def _swing_exact(mp):
    """mpmath's Taylor-series solver on q' = v, v' = sin q (v^2/2 - 1) / (2 + cos q)."""
    f = mp.odefun(lambda t, y: [y[1], mp.sin(y[0]) * (y[1] ** 2 / 2 - 1) / (2 + mp.cos(y[0]))],
                  0, [mp.mpf(Q0), mp.mpf(0)])
    return lambda t: tuple(f(t))


def oscillator():
    """For the methods of linear systems only: M = 2, K = 3."""
    return LinearSystem([[2]], [[3]], CTX, name="oscillator")


def _oscillator_exact(mp):
    w = mp.sqrt(mp.mpf(3) / 2)
    return lambda t: (mp.mpf(Q0) * mp.cos(w * t), -mp.mpf(Q0) * w * mp.sin(w * t))


SYSTEMS = {"pendulum": (pendulum, _pendulum_exact, lambda q, v: v),
           "swing": (swing, _swing_exact, lambda q, v: (2 + mpmath.cos(q)) * v),
           "oscillator": (oscillator, _oscillator_exact, lambda q, v: 2 * v)}


def _params(name):
    return LOWER.get(name, {})


@lru_cache(maxsize=None)
def reference(system, t_text):
    """(q, p, v) of ``system``'s reference at the time t (its 50 digits), as context numbers;
    kept: every method is measured at the same times."""
    momentum = SYSTEMS[system][2]
    with mpmath.workdps(60):
        qx, vx = _exact(system)(mpmath.mpf(t_text))
        return tuple(CTX.num(mpmath.nstr(x, 55)) for x in (qx, momentum(qx, vx), vx))


@lru_cache(maxsize=None)
def _exact(system):
    with mpmath.workdps(60):
        return SYSTEMS[system][1](mpmath.mp)


def errors_between_nodes(run, errors):
    """For each h of STEPS: ``run(h, N)`` -> a Solution of N steps, and the largest over
    the off-node times t (THETAS in every step) of ``errors(t, sol(t))`` -> {key: error}.
    Returns (hs, {key: [largest error per h]})."""
    hs, errs = [], {}
    for N in STEPS:
        h = CTX.num(T) / N
        sol = run(h, N)
        e = {}
        for tj in sol.t[:-1]:
            for th in THETAS:
                t = tj + CTX.num(th) * h
                for key, err in errors(t, sol(t)).items():
                    e[key] = max(e.get(key, CTX.zero), err)
        hs.append(h)
        for key, err in e.items():
            errs.setdefault(key, []).append(err)
    return hs, errs


def assert_orders(hs, errs, order, label):
    """Every error of ``errs`` falls at ``order`` within MARGIN."""
    for key in errs:
        got = fit_order(CTX, hs, errs[key])
        assert abs(got - order) < MARGIN, (label, key, float(got), [float(e) for e in errs[key]])


def dense_errors(name, system):
    """The largest errors of q, p and v between the nodes, for each h of STEPS."""
    pb = Problem(SYSTEMS[system][0](), [Q0], v0=[0])

    def errors(t, s):
        want = reference(system, CTX.to_str(t, 50))
        return {key: abs(got - w) for key, got, w in zip("qpv", (s.q[0], s.p[0], s.v[0]), want)}
    return errors_between_nodes(lambda h, N: solve(pb, name, h=h, n=N, **_params(name)), errors)


def _nonlinear(name):
    """The methods that integrate a nonlinear system (not only the linear forms)."""
    try:
        METHODS[name].prepare(pendulum(), CTX.num("0.1"), CTX, **_params(name))
    except TypeError:
        return False
    return True


NAMES = sorted(METHODS)


@pytest.mark.parametrize("name", NAMES)
def test_dense_output_of_q_p_and_v_has_the_order_of_the_nodes(name):
    """On the pendulum (a method of linear systems only: on an oscillator)."""
    order = METHODS[name].order_for(**_params(name))
    assert order <= MAX_ORDER, f"{name}: add parameters of a lower order to LOWER"
    hs, errs = dense_errors(name, "pendulum" if _nonlinear(name) else "oscillator")
    assert_orders(hs, errs, order, name)


@pytest.mark.parametrize("name", NAMES)
def test_dense_output_with_a_position_dependent_mass_has_the_order_of_the_nodes(name):
    """p = (2 + cos q) v is not v: both are measured."""
    if not _nonlinear(name):
        pytest.skip(f"{name} integrates linear systems only")
    order = METHODS[name].order_for(**_params(name))
    hs, errs = dense_errors(name, "swing")
    assert_orders(hs, errs, order, name)


@pytest.mark.parametrize("name", NAMES)
def test_the_dense_output_keeps_the_nodes_bit_for_bit(name):
    system = swing() if _nonlinear(name) else oscillator()
    sol = solve(Problem(system, [Q0], v0=[0]), name, h="1/4", n=3, **_params(name))
    for j, t in enumerate(sol.t):
        s = sol(t)
        assert (s.q == sol.q[j]).all() and (s.p == sol.p[j]).all(), (name, j)


@pytest.mark.parametrize("name, order", [("lobatto", 6), ("simpson", 4)])
def test_an_event_time_converges_at_the_method_order(name, order):
    """The pendulum falls through q = 1/2 at t = K - F(asin(sin(1/4) / k) | k^2), k =
    sin(q0/2) (from q = 2 asin(k sn(K - t))): the event time located on the dense output
    errs by O(h^p), as the nodes do (before dense output of the method's order, Lobatto-4
    gave O(h^4), Simpson O(h^3)).  (Not the bottom q = 0: the error of q happens to pass
    near zero there, which leaves the order but not its constant to three step sizes.)"""
    with mpmath.workdps(60):
        k = mpmath.sin(mpmath.mpf(Q0) / 2)
        when = mpmath.ellipk(k * k) - mpmath.ellipf(mpmath.asin(mpmath.sin(mpmath.mpf(1) / 4) / k), k * k)
        when = CTX.num(mpmath.nstr(when, 55))
    level = CTX.num("0.5")
    pb = Problem(pendulum(), [Q0], v0=[0])
    hs, errs = [], []
    for N in STEPS:
        h = CTX.num(1) / N
        sol = solve(pb, name, h=h, n=2 * N, events=Event(lambda t, q, v: q[0] - level))
        (ev,) = sol.events
        hs.append(h)
        errs.append(abs(ev.t - when))
    got = fit_order(CTX, hs, errs)
    assert abs(got - order) < MARGIN, (name, float(got), [float(e) for e in errs])


def _taylor_at(c, x, j):
    """The j-th Taylor coefficient at x of the polynomial c (lowest degree first)."""
    return sum(ci * comb(i, j) * x ** (i - j) for i, ci in enumerate(c) if i >= j)


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_the_hermite_basis_interpolates_m_derivatives_at_both_ends(m):
    """Exactly, by its definition: H0_k has Taylor coefficients delta_jk at 0 and 0 at 1
    (j = 0..m), H1_k the reverse, each of degree 2m + 1."""
    h0, h1 = hermite_basis(m)
    for k in range(m + 1):
        assert len(h0[k]) == len(h1[k]) == 2 * m + 2
        for j in range(m + 1):
            delta = Fraction(int(j == k))
            assert _taylor_at(h0[k], 0, j) == delta and _taylor_at(h0[k], 1, j) == 0
            assert _taylor_at(h1[k], 1, j) == delta and _taylor_at(h1[k], 0, j) == 0


def test_compiled_node_derivatives_give_the_python_dense_output_bit_for_bit(monkeypatch):
    """Between the nodes of a Lobatto-4 run (m = 3: Taylor coefficients of order 3 at each
    node), the compiled Taylor coefficients (mpvi.compiled.cbackend) and the Python recurrences give
    the same bits of q and p, and the compiled ones were used."""
    if "error" in cbackend.toolchain():
        pytest.skip("no toolchain for compiled kernels")
    ctx = mpvi.GMPContext(40)
    system = LagrangianSystem("swing", [Q], sp.Matrix([[2 + sp.cos(Q)]]), -sp.cos(Q), {}, ctx)
    monkeypatch.setenv(cbackend.ENV_COMPILE_AFTER, "0")
    used, declined = [], []
    real = kernels.taylor_steps

    def watching(system):
        steps = real(system)
        used.append(steps.compiled is not None)
        if steps.compiled is None:
            return steps
        watched = types.SimpleNamespace(**vars(steps.compiled))
        watched.coefficients = lambda *args: declined.append(args) if (
            c := steps.compiled.coefficients(*args)) is None else c
        return steps._replace(compiled=watched)
    monkeypatch.setattr(kernels, "taylor_steps", watching)
    out = []
    for switch in ("0", "1"):
        monkeypatch.setenv(cbackend.ENV_SWITCH, switch)
        monkeypatch.setattr(kernels, "_KERNELS", {})
        sol = solve(Problem(system, [Q0], v0=[0]), "lobatto", h="1/8", n=4)
        out.append([x for t in ("1/24", "0.2", "0.47") for s in [sol(t)] for x in (*s.q, *s.p)])
        used.append(switch)
    assert used == [False] * 3 + ["0"] + [True] * 3 + ["1"]      # one StepData per sol(t)
    assert all(a == b for a, b in zip(*out)) and len(out[0]) == 6 and declined == []


@pytest.mark.parametrize("name", sorted(n for n, m in METHODS.items() if m.first_order))
def test_dense_output_of_a_first_order_system_has_the_order_of_the_nodes(name):
    """The pendulum as y' = (y2, -sin y1): y and y' (the State's v) between the nodes at the
    method's order (y' was the cubic's derivative, one order less, before)."""
    order = METHODS[name].order_for(**_params(name))
    system = mpvi.FirstOrderSystem(
        "pendulum", lambda t, y: [y[1], -CTX.sin(y[0])], 2, CTX)
    with mpmath.workdps(60):
        exact = _pendulum_exact(mpmath.mp)

        def errors(t, s):
            qx, vx = (CTX.num(mpmath.nstr(x, 55)) for x in exact(mpmath.mpf(CTX.to_str(t, 50))))
            return {"y": max(abs(s.q[0] - qx), abs(s.q[1] - vx)),
                    "dy": max(abs(s.v[0] - vx), abs(s.v[1] + CTX.sin(qx)))}
        hs, errs = errors_between_nodes(
            lambda h, N: solve(Problem(system, [Q0, 0]), name, h=h, n=N, **_params(name)), errors)
    assert_orders(hs, errs, order, name)


def test_a_field_without_taylor_recurrences_still_gets_order_4():
    """V = cosh q: sinh has no Taylor recurrence in mpvi.engines.taylor, so q'' comes from the
    system's acceleration alone (m = 2, quintic): Simpson's q and v between the nodes at
    its order 4 (against mpmath's Taylor-series solver)."""
    system = LagrangianSystem("cosh well", [Q], sp.Matrix([[1]]), sp.cosh(Q), {}, CTX)
    with mpmath.workdps(60):
        f = mpmath.odefun(lambda t, y: [y[1], -mpmath.sinh(y[0])], 0, [mpmath.mpf(Q0), 0])

        def errors(t, s):
            qx, vx = (CTX.num(mpmath.nstr(x, 55)) for x in f(mpmath.mpf(CTX.to_str(t, 50))))
            return {"q": abs(s.q[0] - qx), "v": abs(s.v[0] - vx)}
        hs, errs = errors_between_nodes(
            lambda h, N: solve(Problem(system, [Q0], v0=[0]), "simpson", h=h, n=N), errors)
    assert_orders(hs, errs, 4, "simpson")


@pytest.mark.parametrize("name, order", [("lobatto", 6), ("simpson", 4)])
def test_dense_output_of_a_forced_system_from_t0_has_the_order_of_the_nodes(name, order):
    """q'' + q = cos 2t from t0 = 1/2 (the node derivatives take the force's time
    derivatives: q''' = -q' - 2 sin 2t, ...): q = A cos t + B sin t - cos(2t) / 3 with
    A, B from q(t0) = 0.9, v(t0) = 0."""
    w = sp.Symbol("w")
    system = LagrangianSystem("forced", [Q], sp.Matrix([[1]]), Q ** 2 / 2, {w: 2}, CTX,
                              force=lambda t, x, v: sp.Matrix([sp.cos(w * t)]))
    t0, q0 = CTX.num("1/2"), CTX.num(Q0)
    c0 = q0 + CTX.cos(2 * t0) / 3                  # the free part's value and slope at t0
    s0 = -2 * CTX.sin(2 * t0) / 3
    A = c0 * CTX.cos(t0) - s0 * CTX.sin(t0)
    B = c0 * CTX.sin(t0) + s0 * CTX.cos(t0)

    def exact(t):
        return (A * CTX.cos(t) + B * CTX.sin(t) - CTX.cos(2 * t) / 3,
                -A * CTX.sin(t) + B * CTX.cos(t) + 2 * CTX.sin(2 * t) / 3)
    assert abs(exact(t0)[0] - q0) < 10 * CTX.eps and abs(exact(t0)[1]) < 10 * CTX.eps

    def errors(t, s):
        qx, vx = exact(t)
        return {"q": abs(s.q[0] - qx), "v": abs(s.v[0] - vx)}
    hs, errs = errors_between_nodes(
        lambda h, N: solve(Problem(system, [q0], v0=[0], t0=t0), name, h=h, n=N), errors)
    assert_orders(hs, errs, order, name)
