"""Issue 45 item 3: the certify hooks of top2025 Figs. 4-5, 7-10, 12-14, Table 2 and
axioms2024 Figs. 6-8, checked against independent computations: 200-digit reruns of the
same binary data, closed forms derived by hand, mpmath quadrature.  Seconds: a few
steps each; the full sets are run by ``mpvi run <id> --certify``."""
from fractions import Fraction

import mpmath
import pytest

from mpvi import get_context, solve

C64 = get_context("gmp", 64)
C200 = get_context("gmp", 200)


def _arb(text):
    """A decimal string as a ball, read at 250 digits (flint's default 53 bits would
    round it)."""
    from flint import arb

    from mpvi.numbers.arbref import arb_precision
    with arb_precision(250):
        return arb(text)


def _mp(x):
    """A binary number of a context as an mpmath number, exactly (at 200 digits)."""
    from mpvi.numbers.arbref import exact_rational
    r = exact_rational(x, "x")
    with mpmath.workdps(200):
        return mpmath.mpf(r.numerator) / r.denominator


def _contains(ball, x):
    """``ball`` holds the binary number ``x`` of a context (read exactly)."""
    from flint import arb

    from mpvi.numbers.arbref import arb_precision, exact_rational
    r = exact_rational(x, "x")
    with arb_precision(250):
        return ball.contains(arb(r.numerator) / arb(r.denominator))


def test_double_pendulum_energy_errors_hold_a_200_digit_rerun_of_the_same_data():
    """top2025 Figs. 4-5, Table 2 (certified_energy_errors): e_H of five steps of h = 0.1
    s holds the same runs redone at 200 digits from the 64-digit run's binary g, l and q0."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision, exact_rational
    from mpvi.systems.double_pendulum import nonlinear_double_pendulum
    from mpvi_papers.top2025._top2025_pendulum import certified_energy_errors, double_pendulum
    with C64.active():
        prob = double_pendulum(C64)
        P = {str(k): v for k, v in prob.system._params.items()}
        h64 = C64.num("0.1")
    with C200.active():
        twin = nonlinear_double_pendulum(C200, g=C200.lift(P["g"]), length=C200.lift(P["l1"]),
                                         q0=[C200.lift(x) for x in prob.q0])
        S = twin.system
        for m in ("rk4", "midpoint", "simpson"):
            with arb_precision(64 + GUARD_DIGITS):
                h, balls = certified_energy_errors(C64, m, "0.1", 5, f"test {m}")
            assert h == exact_rational(h64, "h")
            sol = solve(twin, m, h=C200.lift(h64), n=5)
            H = [S.hamiltonian(q, p) for q, p in zip(sol.q, sol.p)]
            for j, (x, ball) in enumerate(zip(H, balls)):
                assert _contains(ball, (x - H[0]) / H[0]), (m, j, ball)
            assert all(b.rad() < abs(b.mid()) / _arb("1e50") for b in balls[1:]), m


def test_linear_pendulum_energy_newmark_exact_and_rk4_against_200_digits():
    """axioms2024 Fig. 6: Newmark's exact discrete trajectory conserves the energy of the
    linear system (its enclosures hold 0, narrower than the published 1e-50); RK4's
    energy errors hold a 200-digit rerun of the same binary M, K and h."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.certified import relative_energy_balls
    from mpvi_papers.axioms2024._axioms2024 import certified_linear_run, problem, step
    with C64.active():
        prob = problem(C64)
        h = step(C64, prob, "1/10")
        with arb_precision(64 + GUARD_DIGITS):
            _, cert = certified_linear_run(prob, "newmark", h, 20, "test newmark")
            e = relative_energy_balls(prob.system, cert, "test")
            assert all(b.contains(0) and b.rad() < _arb("1e-50") for b in e)
            sol, cert = certified_linear_run(prob, "rk4", h, 5, "test rk4")
            e = relative_energy_balls(prob.system, cert, "test")
    with mpmath.workdps(200):
        M = mpmath.matrix([[_mp(x) for x in row] for row in prob.system.M])
        K = mpmath.matrix([[_mp(x) for x in row] for row in prob.system.K])
        Minv = M ** -1
        hh = _mp(h)
        q = mpmath.matrix([_mp(x) for x in sol.q[0]])
        p = mpmath.matrix([_mp(x) for x in sol.p[0]])

        def f(q, p):
            return Minv * p, -(K * q)

        def H(q, p):
            return ((p.T * Minv * p)[0] + (q.T * K * q)[0]) / 2
        H0 = H(q, p)
        for j in range(1, 6):
            k1 = f(q, p)
            k2 = f(q + hh / 2 * k1[0], p + hh / 2 * k1[1])
            k3 = f(q + hh / 2 * k2[0], p + hh / 2 * k2[1])
            k4 = f(q + hh * k3[0], p + hh * k3[1])
            q = q + hh / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            p = p + hh / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
            assert e[j].contains(_arb(mpmath.nstr((H(q, p) - H0) / H0, 190))), j


def test_rounded_drift_holds_what_the_context_computes_and_the_exact_quotient():
    """The recorded drift of a conserved momentum (top2025 Fig. 10, Table 5) is the
    context's (x - x0)/x0: its enclosure holds that number and the exact quotient."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.certified import rounded_drift
    with C64.active():
        x0 = C64.num("10.8827961854053071035644695458529343937043974885564")
        xs = [x0, x0 + C64.eps * 3, x0 * (1 - 7 * C64.eps), x0 + x0 / 1000]
        with arb_precision(64 + GUARD_DIGITS):
            balls = rounded_drift(xs, x0, C64, "test")
        for x, b in zip(xs, balls):
            assert _contains(b, (x - x0) / x0), b
            with mpmath.workdps(200):
                exact = (_mp(x) - _mp(x0)) / _mp(x0)
                assert b.contains(_arb(mpmath.nstr(exact, 190))) or exact == 0
        assert balls[0] == 0


def test_table6_values_are_the_closed_forms():
    """top2025 Fig. 12: p_phi = 2 pi sqrt 3, p_psi = 4 pi, A = 4 pi^2, 2 pi/sqrt(A) = 1
    (eqs. 18ab, 18ae), computed at 200 digits by mpmath, inside the enclosures from the
    exact Table 6 data; the enclosures are narrow (60 digits)."""
    from mpvi.repro.declare import get_reproduction
    rep = get_reproduction("top2025_fig12")
    exact_table6 = rep.compute.__globals__["exact_table6"]
    found = exact_table6(64)
    with mpmath.workdps(200):
        closed = {"p_phi": 2 * mpmath.pi * mpmath.sqrt(3), "p_psi": 4 * mpmath.pi,
                  "A": 4 * mpmath.pi ** 2, "time constant 2pi/sqrt(A)": mpmath.mpf(1)}
        for k, v in closed.items():
            assert found[k].contains(_arb(mpmath.nstr(v, 190))), k
            assert found[k].rad() < _arb("1e-60"), k


def test_cusp_top_nutation_is_enclosed_and_matches_quadrature_and_closed_form():
    """The Table 6 cusp top: its nutation period (LagrangeTopNutation.enclose_period, once
    nan: (p_phi - p_psi u0)^2 of a ball holding 0) against 2 int_{u1}^{u0} du / sqrt(f(u))
    by mpmath quadrature (u = u1 + (u0 - u1) sin^2 a), f(u) = 8 pi^2 (u0 - u)(u - u1)(u2 - u)
    with u0 = cos(pi/6),
    u1,2 = 1 -+ sqrt(2 - 2 u0) (derived by hand for this top: c = I A u0, p_phi = p_psi
    u0); theta_max - theta0 (cusp_amplitude) against acos(1 - sqrt(2 - sqrt 3)) - pi/6.
    The enclosures are of the 64-digit data: equal to the exact problem's to 1e-55."""
    from mpvi_papers.top2025._top2025_reduced import cusp_amplitude, cusp_top
    with C64.active():
        period = cusp_top(C64).nutation().enclose_period(64)
        amplitude = cusp_amplitude(C64)
    with mpmath.workdps(80):
        u0 = mpmath.sqrt(3) / 2
        s = mpmath.sqrt(2 - 2 * u0)
        u1, u2 = 1 - s, 1 + s

        # u = u1 + (u0 - u1) sin^2 a takes the endpoint singularities out:
        # du / sqrt((u0 - u)(u - u1)) = 2 da
        T = 2 * mpmath.quad(lambda a: 2 / mpmath.sqrt(
            8 * mpmath.pi ** 2 * (u2 - u1 - (u0 - u1) * mpmath.sin(a) ** 2)), [0, mpmath.pi / 2])
        amp = mpmath.acos(1 - mpmath.sqrt(2 - mpmath.sqrt(3))) - mpmath.pi / 6
        for ball, x in ((period, T), (amplitude, amp)):
            assert abs(ball - _arb(mpmath.nstr(x, 70))) < _arb("1e-55"), (ball, x)
            assert ball.rad() < _arb("1e-60")


def test_cusp_runs_hold_a_200_digit_rerun_and_the_nutation_mpvis_own():
    """top2025 Figs. 13-14 (certified_cusp_run): Simpson's and RK4's theta on the complete
    Table 6 top, ten steps of 1/10 s, hold the same runs redone at 200 digits from the
    64-digit binary data, and the exact nutation's enclosures hold mpvi's own 200-digit
    Weierstrass P (not Arb's) of those data."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.systems.lagrange_top import make_top
    from mpvi_papers.top2025._top2025_reduced import certified_cusp_run, cusp_top
    with C64.active():
        top = cusp_top(C64)
    P = top.params
    with C200.active():
        twin = make_top(C200, *(C200.lift(P[k]) for k in ("m_top", "I", "I3", "ell", "g")),
                        [C200.lift(x) for x in top.q0], [C200.lift(x) for x in top.v0])
        nutation = twin.nutation()
        for m in ("simpson", "rk4"):
            with arb_precision(64 + GUARD_DIGITS):
                h, cert, exact = certified_cusp_run(C64, m, Fraction(1, 10), 10)
            sol = solve(twin, m, h=C200.num(h), n=10)
            for j, (q, ball) in enumerate(zip(sol.q, cert.q)):
                assert _contains(ball[1], q[1]), (m, j)
                assert _contains(exact[j], nutation.theta(C200.num(j * h))), (m, j)


@pytest.mark.parametrize("printed, compare, tolerance, inside, outside", [
    ("10.8827961854053071035644695459", "digit", None,
     "10.88279618540530710356446954585293", "10.8827961854053071035644695460001"),
    ("1", "abs", "1e-60", "0.9999999999999999999999999999999999999999999999999999999999995",
     "0.999999999999999999999999999999999999999999999999999999999998"),
])
def test_allowed_bounds_are_exact_beyond_28_digits(printed, compare, tolerance, inside, outside):
    """published.allowed: printed +- half computed exactly (Decimal's default 28 digits
    rounded them: exact enclosures of Fig. 12's 30-digit values were called misprints)."""
    from types import SimpleNamespace

    from mpvi.numbers.arbref import arb_precision
    from mpvi.repro.published import allowed
    with arb_precision(100):
        bound = allowed(SimpleNamespace(printed=printed, compare=compare, tolerance=tolerance))
        assert bound.contains(_arb(inside))
        assert not bound.contains(_arb(outside))
