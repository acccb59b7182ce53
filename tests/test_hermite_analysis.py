"""The Hermite one-step methods (hermite Sec. 3) and their exact analysis (Sec. 4).

* n = 2 of the general-n methods is the cubic method of the paper: one step agrees with
  an independent solve of eqs. (24)-(25) and of eq. (26) written with N1..N4 of eq. (17)
  (typed here, integrated by sympy, solved by mpmath.findroot at 64 digits);
* measured orders 2n - 2 (variational) and 4n - 4 (Galerkin) for n = 2, 3 against the
  exact solution of a driven damped oscillator;
* the amplification matrices derived by :mod:`mpvi.analysis.symbolic`: det A = 1, A equals the
  64-digit numerical step of the registered method to 1e-55, the map depends on
  omega dt only, and the exact stable intervals agree with a direct spectral-radius scan
  of the numerical method;
* the symbolic comparison of printed formulas used by ``mpvi diff``.
"""
from fractions import Fraction

import mpmath
import pytest
import sympy as sp

from mpvi import METHODS, LagrangianSystem, MPContext, Problem, fit_order, solve
from mpvi.analysis.measures import matrix_defect, one_step_jacobian, one_step_matrix, stability_scan
from mpvi.repro.published import PublishedDataError, formulas_equal, parse_formula
from mpvi.methods.hermite import galerkin_spec, variational_spec
from mpvi.methods.variational import MIDPOINT, SIMPSON, lagrange_variational
from mpvi.analysis.symbolic import DT, OMEGA, Z, amplification_matrix, oscillator_map, stable_intervals

from test_methods import driven_oscillator, exact_driven

C64 = MPContext(64)
SPECS = {("hermite_variational", 2): variational_spec(2), ("hermite_galerkin", 2): galerkin_spec(2),
         ("hermite_variational", 3): variational_spec(3), ("hermite_galerkin", 3): galerkin_spec(3)}
_q = sp.Symbol("q")


def double_well(ctx):
    return LagrangianSystem("double well", [_q], sp.Matrix([[1]]), (_q ** 4 - _q ** 2) / 2, {}, ctx)


def oscillator(ctx):
    return LagrangianSystem("oscillator", [_q], sp.Matrix([[1]]), _q ** 2 / 2, {}, ctx)


# ----- n = 2 is the paper's cubic method ---------------------------------------------------------

def _paper_cubic_step(galerkin, q0, v0, h):
    """One step of eqs. (24)-(25) (variational) or (26) (Galerkin) on the double well,
    built from eq. (17) as printed, by sympy + mpmath.findroot at 64 digits."""
    t, dt, Q0, V0, Q1, V1 = sp.symbols("t dt q0 v0 q1 v1")
    s = t / dt
    N1, N3 = 2 * s ** 3 - 3 * s ** 2 + 1, -2 * s ** 3 + 3 * s ** 2
    N2, N4 = dt * (s ** 3 - 2 * s ** 2 + s), dt * (s ** 3 - s ** 2)
    qd = Q0 * N1 + V0 * N2 + Q1 * N3 + V1 * N4
    if galerkin:
        Meq = sp.diff(qd, t, 2) - qd + 2 * qd ** 3                         # eq. (39)
        eqs = [sp.integrate(sp.expand(Meq * w), (t, 0, dt)) for w in (1, (2 * t - dt) / dt)]
    else:
        L = sp.diff(qd, t) ** 2 / 2 - (qd ** 4 - qd ** 2) / 2               # eq. (38)
        S = sp.integrate(sp.expand(L), (t, 0, dt))
        eqs = [sp.diff(S, V0), sp.diff(S, V1)]
    eqs = [e.subs({dt: h, Q0: q0, V0: v0}) for e in eqs]
    f = sp.lambdify([Q1, V1], eqs, "mpmath")
    with mpmath.workdps(64):
        return mpmath.findroot(lambda a, b: f(a, b), (q0, v0))


@pytest.mark.parametrize("method", ["hermite_variational", "hermite_galerkin"])
def test_n2_is_the_cubic_method_of_eqs_17_and_24_26(method):
    q0, v0, h = sp.Rational(74, 100), sp.Rational(1, 10), sp.Rational(1, 10)
    ref = _paper_cubic_step(method == "hermite_galerkin", q0, v0, h)
    sol = solve(Problem(double_well(C64), ["0.74"], v0=["0.1"]), method, h=C64.num("0.1"), n=1)
    assert abs(sol.q[1][0] - ref[0]) < 1e-60 and abs(sol.v[1][0] - ref[1]) < 1e-60


@pytest.mark.parametrize("method,n,steps", [("hermite_variational", 2, (10, 20, 40)),
                                            ("hermite_galerkin", 2, (10, 20, 40)),
                                            ("hermite_variational", 3, (10, 20)),
                                            ("hermite_galerkin", 3, (10, 20))])
def test_measured_orders_are_2n_minus_2_and_4n_minus_4(method, n, steps):
    s = driven_oscillator(C64)
    t0, q0, v0, T = C64.num("1.5"), C64.num("0.8"), C64.num("-0.4"), C64.num(2)
    q = exact_driven(C64, t0, q0, v0)
    problem = Problem(s, [q0], v0=[v0], t0=t0)
    hs, errs = [], []
    for N in steps:
        sol = solve(problem, method, h=T / N, n=N, hermite_n=n)
        assert sol.stats["newton"]["max_residual"] < 1e-60
        errs.append(max(abs(x[0] - q(t)) for x, t in zip(sol.q, sol.t)))
        hs.append(T / N)
    expected = METHODS[method].order_for(hermite_n=n)
    assert expected == (2 * n - 2 if method == "hermite_variational" else 4 * n - 4)
    assert abs(fit_order(C64, hs, errs) - expected) < 0.15


def test_bad_hermite_parameters_are_refused():
    problem = Problem(oscillator(C64), ["1"], v0=["0"])
    with pytest.raises(ValueError, match=r"n \(degree 2n - 1 >= 3\) must be an integer from 2 to 8, got 1"):
        solve(problem, "hermite_galerkin", h=C64.num("0.1"), n=2, hermite_n=1)
    with pytest.raises(ValueError, match=r"nodes \(Gauss-Legendre points per step, >= n = 2\) must be an integer from 2"):
        solve(problem, "hermite_variational", h=C64.num("0.1"), n=2, nodes=1)


# ----- the derived amplification matrices ---------------------------------------------------------

@pytest.mark.parametrize("key", list(SPECS))
def test_derived_map_has_det_1_and_equals_the_64_digit_step(key):
    A = amplification_matrix(SPECS[key])
    assert sp.cancel(A.det() - 1) == 0
    method, n = key
    for z in ("0.3", "1.7", "3.1", "5"):
        phi = one_step_matrix(method, oscillator(C64), C64.num(z), C64, hermite_n=n)
        Az = A.subs(Z, sp.Rational(z))
        for i in range(2):
            for j in range(2):
                assert abs(phi[i, j] - C64.num(str(sp.N(Az[i, j], 80)))) < 1e-55, (key, z, i, j)


def test_the_map_depends_on_omega_dt_only():
    """Phi(dt, omega) on (v, q) is D^-1 A(omega dt) D with D = diag(1, omega)."""
    spec = SPECS["hermite_galerkin", 2]
    Phi = oscillator_map(spec)
    A = amplification_matrix(spec).subs(Z, OMEGA * DT)
    D = sp.diag(1, OMEGA)
    assert (Phi - D.inv() * A * D).applyfunc(sp.cancel) == sp.zeros(2, 2)


def test_the_other_analysed_methods_have_their_known_maps():
    """Simpson's VI: the exact set (0, 2 sqrt 2) U (2 sqrt 3, 2 sqrt 6) of axioms2024;
    the midpoint VI: stable for every z."""
    simpson = stable_intervals(amplification_matrix(lagrange_variational(SIMPSON)))
    assert [(iv.lo, iv.hi) for iv in simpson] == [(0, 2 * sp.sqrt(2)), (2 * sp.sqrt(3), 2 * sp.sqrt(6))]
    assert [(iv.lo, iv.hi) for iv in stable_intervals(amplification_matrix(lagrange_variational(MIDPOINT)))] \
        == [(0, sp.oo)]


@pytest.mark.parametrize("method,n,zmax,step", [("hermite_variational", 2, 9, Fraction(1, 20)),
                                                ("hermite_galerkin", 2, 9, Fraction(1, 20)),
                                                ("hermite_galerkin", 3, 21, Fraction(1, 4))])
def test_exact_intervals_agree_with_a_spectral_radius_scan_of_the_method(method, n, zmax, step):
    intervals = stable_intervals(amplification_matrix(SPECS[method, n]))
    ends = [float(x) for iv in intervals for x in (iv.lo, iv.hi) if x != sp.oo]
    grid = [step * k for k in range(1, int(zmax / step) + 1)]
    grid = [z for z in grid if min(abs(float(z) - e) for e in ends) > 1e-3]
    rows = stability_scan(method, grid, C64, hermite_n=n)
    for z, (_, rho, _, stable) in zip(grid, rows):
        inside = any(iv.lo < z and (iv.hi == sp.oo or z < iv.hi) for iv in intervals)
        assert stable == inside, (method, n, z, rho)


# ----- symplecticity on the double well ------------------------------------------------------------

def test_double_well_defect_is_zero_for_simpson_and_of_order_p_plus_1_for_hermite():
    d = [matrix_defect(one_step_jacobian("hermite_galerkin", double_well, C64.num(h), ["0.74"], ["0.3"], C64), C64)
         for h in ("0.1", "0.05")]
    assert abs(C64.log(d[0] / d[1]) / C64.log(2) - 5) < 0.1
    simpson = one_step_jacobian("simpson", double_well, C64.num("0.1"), ["0.74"], ["0.3"], C64)
    assert matrix_defect(simpson, C64) < 1e-62


# ----- symbolic comparison of printed formulas ----------------------------------------------------

def test_formulas_equal_is_a_real_comparison():
    assert formulas_equal("(7*z**4-192*z**2+420)/(2*z**4+18*z**2+420)",
                          "(7*z**4 - 192*z**2 + 420)/(2*(z**4 + 9*z**2 + 210))")
    assert not formulas_equal("(3*z**4-104*z**2+240)/(2*z**4+18*z**2+420)",
                              "(7*z**4-192*z**2+420)/(2*z**4+18*z**2+420)")
    assert formulas_equal("sqrt(28/3)", "2*sqrt(21)/3") and not formulas_equal("sqrt(10)", "2*sqrt(3)")
    rad = "z*sqrt(15*(z**2-10)*(3*z**2-28)*(z**2-42))"
    assert formulas_equal(f"(7*z**4+{rad})/z", "(7*z**4+sqrt(15)*z*sqrt((z**2-42)*(z**2-10)*(3*z**2-28)))/z")
    assert not formulas_equal(f"(17*z**4+{rad})/z", f"(7*z**4+{rad})/z")
    with pytest.raises(PublishedDataError, match="not a formula"):
        parse_formula("(z**2", "line 3")
