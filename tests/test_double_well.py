"""The double well (hermite eqs. 38-39), its exact elliptic-function solution, and the
damped Duffing oscillator (eqs. 40-41) with the Hermite one-step methods.

* the exact solution satisfies the ODE (by numerical differentiation at 64 digits, in the
  dn, cn and separatrix cases, for m != 1 and q'(0) != 0 too), its initial data and the
  conservation of energy to ~1e-55; for q'(0) = 0 it is q = A dn(A t, k), k^2 = 2 - 1/A^2;
* the equations of motion mpvi generates are eqs. (39) and (40);
* both Hermite methods: Newton converges at every step, and adding Gauss-Legendre nodes
  (default 8 for the cubic, against 12) changes nothing beyond rounding: the integrands
  are polynomials of degree <= 12 and the 8-point rule is exact to degree 15.
"""
from fractions import Fraction

import numpy as np
import pytest

from mpvi import MPContext, Problem, error_norms, fp, solve
from mpvi.numbers.newton import tolerance
from mpvi.systems.double_well import DoubleWellExact, double_well, double_well_problem, duffing

C = MPContext(64)
TIMES = ["0.37", "1.3", "4.05", "11.7"]


def ode_residual(ex, t, m=1):
    """m q'' - q + 2 q^3 (eq. 39) and q' - v of the exact solution at t, by ctx.diff."""
    def f(s):
        return ex.q(s)[0]
    q = f(t)
    return (C.num(m) * C.diff(f, t, 2) - q + 2 * q ** 3, C.diff(f, t) - ex.v(t)[0])


@pytest.mark.parametrize("q0,v0,m,form", [
    ("0.74", "0", 1, "dn"), ("0.995", "0", 1, "dn"),          # Figs. 3 and 4
    ("0.5", "0", 1, "dn"),                                    # inner turning point
    ("-0.74", "0.1", 1, "dn"), ("0.74", "-0.1", "5/2", "dn"),
    ("1", "0", 1, "dn"), ("1", "1/5", 1, "cn"),               # separatrix E = 0, and above
    ("1.5", "0", 1, "cn"), ("0", "0.3", "3", "cn"), ("0.3", "-0.9", 1, "cn")])
def test_exact_solution_satisfies_the_ode_initial_data_and_energy(q0, v0, m, form):
    ex = DoubleWellExact(C, q0, v0, m)
    assert ex.form == form
    assert abs(ex.q(0)[0] - C.num(q0)) < 1e-60 and abs(ex.v(0)[0] - C.num(v0)) < 1e-60
    assert abs(ex.p(0)[0] - C.num(Fraction(m)) * C.num(v0)) < 1e-60
    S = double_well(C, m)
    E0 = S.energy(ex.q(0), ex.p(0))
    assert abs(ex.energy - E0) < 1e-62
    for t in TIMES:
        r_ode, r_v = ode_residual(ex, C.num(t), Fraction(m))
        assert abs(r_ode) < 1e-55 and abs(r_v) < 1e-55, (t, r_ode, r_v)
        tt = C.num(t)
        assert abs(S.energy(ex.q(tt), ex.p(tt)) - E0) < 1e-60


def test_exact_solution_is_A_dn_A_t_for_zero_initial_velocity():
    """q(t) = A dn(A t, k), k^2 = 2 - 1/A^2, A = q(0) (m = 1), and period 2 K(k^2) / A."""
    for a in ("0.74", "0.995"):
        A = C.num(a)
        k2 = 2 - 1 / A ** 2
        ex = DoubleWellExact(C, a)
        ts = [C.num(t) for t in TIMES]
        direct = [A * C.ellipfun("dn", A * t, m=k2) for t in ts]
        got = ex.q(np.array(ts, dtype=object))[:, 0]
        assert max(abs(x - y) for x, y in zip(got, direct)) < 1e-60
        T = 2 * C.ellipk(k2) / A
        assert abs(ex.period - T) < 1e-60
        assert abs(ex.q(T)[0] - A) < 1e-55 and abs(ex.v(T / 2)[0]) < 1e-55


def test_exact_solution_time_scaling_with_the_mass():
    """m != 1: q_m(t) = q_1(t / sqrt m) and q'_m(t) = q'_1(t / sqrt m) / sqrt m."""
    ex1, ex4 = DoubleWellExact(C, "0.9", "0"), DoubleWellExact(C, "0.9", "0", 4)
    t = C.num("3.3")
    assert abs(ex4.q(t)[0] - ex1.q(t / 2)[0]) < 1e-60
    assert abs(ex4.v(t)[0] - ex1.v(t / 2)[0] / 2) < 1e-60
    assert abs(ex4.period - 2 * ex1.period) < 1e-60


def test_exact_solution_equilibria_and_float64():
    assert DoubleWellExact(C, 0).form == "equilibrium"
    assert DoubleWellExact(C, 0).q(C.num(5))[0] == 0
    ex = DoubleWellExact(fp, 0.74, 0.0)            # computed at 34 digits, rounded
    mp = DoubleWellExact(C, "0.74")
    t = [0.0, 1.5, 7.25]
    assert np.max(np.abs(ex.q(t)[:, 0] - np.array([float(x) for x in mp.q([C.num(s) for s in
                                                   ("0", "1.5", "7.25")])[:, 0]]))) < 4 * fp.eps


@pytest.mark.parametrize("args,match", [((C, "0.7", 0, 0), "mass m must be positive"),
                                        ((C, "nan", 0, 1), "q0 must be finite")])
def test_exact_solution_refuses_bad_data(args, match):
    with pytest.raises(ValueError, match=match):
        DoubleWellExact(*args)


def test_bad_system_parameters_are_refused():
    with pytest.raises(ValueError, match="mass m must be positive"):
        double_well(C, "-1")
    with pytest.raises(ValueError, match="damping delta must be >= 0"):
        duffing(C, -1, 2, "-0.1")


def test_generated_equations_of_motion_are_eqs_39_and_40():
    """acceleration(), and the Galerkin residual R = L_vv a + ... - F, against the printed
    equations at a few points (exact to rounding)."""
    m, al, be, de = C.num("5/2"), C.num(-1), C.num(2), C.num("0.05")
    dw = double_well(C, "5/2")
    du = duffing(C, -1, 2, "0.05")
    for q, v, a in [("0.3", "-1.1", "0.7"), ("-1.4", "0.2", "-2"), ("0.995", "0", "0")]:
        q, v, a = C.num(q), C.num(v), C.num(a)
        x, u, acc = C.vector([q]), C.vector([v]), C.vector([a])
        assert abs(dw.acceleration(0, x, u)[0] - (q - 2 * q ** 3) / m) < 10 * C.eps
        R = dw.residual_derivatives(0, x, u, acc)[0][0]
        assert abs(R - (m * a - q + 2 * q ** 3)) < 10 * C.eps
        assert abs(du.acceleration(0, x, u)[0] - (-de * v - al * q - be * q ** 3)) < 10 * C.eps
        R = du.residual_derivatives(0, x, u, acc)[0][0]
        assert abs(R - (a + de * v + al * q + be * q ** 3)) < 10 * C.eps
        # energy: 1/2 m v^2 + 1/2 (q^4 - q^2) and 1/2 v^2 + 1/2 alpha q^2 + 1/4 beta q^4
        assert abs(dw.energy(x, m * u) - (m * v ** 2 + q ** 4 - q ** 2) / 2) < 10 * C.eps
        assert abs(du.energy(x, u) - (v ** 2 / 2 + al * q ** 2 / 2 + be * q ** 4 / 4)) < 10 * C.eps
    # with delta = 0, alpha = -1, beta = 2 Duffing is the double well with m = 1
    d0, w1 = duffing(C, -1, 2, 0), double_well(C)
    x, u = C.vector(["0.61"]), C.vector(["-0.3"])
    assert d0.acceleration(0, x, u)[0] == w1.acceleration(0, x, u)[0]


METHODS = ["hermite_variational", "hermite_galerkin"]
H = C.num("0.1")


@pytest.mark.parametrize("method", METHODS)
def test_newton_converges_at_every_step_on_the_double_well(method):
    for q0 in ("0.74", "0.995"):
        n = 60
        sol = solve(double_well_problem(C, q0), method, h=H, n=n)
        st = sol.stats["newton"]
        assert st["solves"] == n
        assert st["max_iterations"] <= 6
        assert st["max_residual"] < float(tolerance(C))
        assert error_norms(sol)["q"] < (1e-2 if method == "hermite_variational" else 1e-4)


@pytest.mark.parametrize("system", ["double well", "duffing"])
@pytest.mark.parametrize("method", METHODS)
def test_more_gauss_legendre_nodes_change_nothing(system, method):
    """Default nodes (8 = 4n) against 12 over 20 steps: the runs differ only by rounding,
    at most a few eps per step (bound: one eps of the context per step, 20 eps); a
    5-point rule (exact to degree 9 only) differs visibly, so the check can see a
    quadrature change."""
    S = double_well(C) if system == "double well" else duffing(C, -1, 2, "0.1")
    n = 20
    problem = Problem(S, ["0.995"], v0=["0"])
    runs = {k: solve(problem, method, h=H, n=n, **({"nodes": k} if k else {}))
            for k in (None, 12, 5)}
    a, b, c = runs[None], runs[12], runs[5]

    def diff(x, y):
        return max(max(abs(x.q[:, 0] - y.q[:, 0])), max(abs(x.v[:, 0] - y.v[:, 0])))
    assert diff(a, b) <= n * C.eps, diff(a, b) / C.eps
    assert diff(a, c) > 1e6 * n * C.eps
