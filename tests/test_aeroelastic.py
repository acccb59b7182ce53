"""The aeroelastic section of hermite Sec. 5.3 (mpvi.systems.aeroelastic).

* eqs. (42)-(46): the equations of motion derived from the corrected Lagrangian (42) and
  the corrected forces (43)-(44) are the corrected (45)-(46); the printed ones are not
  (ERRATA [E50]: factors 1/2 and b; [E51]: aerodynamic signs), with exactly the
  differences the errata describe;
* the compiled LagrangianSystem obeys those equations at a random state;
* the linear flutter speed: the largest real part vanishes at U_f to 1e-40, is negative
  just below and positive just above, and U_f, omega_f satisfy the Routh-Hurwitz
  condition of the characteristic polynomial (an independent check); with the printed
  signs of (45)-(46) the section diverges statically, which it physically cannot;
* the limit cycle (float64, RK4, a few seconds of motion): at 0.9 U_f the paper's initial
  state grows onto an LCO while a small perturbation decays (subcritical);
* both Hermite methods take a few 64-digit steps on the section with converged Newton
  iterations and stay close to the GBS benchmark;
* the turning points of the benchmark (the events of reproductions/hermite/_hermite_aeroelastic.py)
  alternate between maxima and minima, bound the neighbouring nodes, and agree between two
  GBS orders to the smaller order's accuracy.
"""
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from mpvi import MPContext, fp, solve
from mpvi.numbers.context import PrecisionError
from mpvi.compiled.codegen import compile_exprs
from mpvi.systems.aeroelastic import (DEFAULT_PARAMETERS, NoFlutterError, aeroelastic_section,
                                      flutter_speed, linear_eigenvalues, linear_matrix, max_real_part,
                                      section_parameters, symbolic_model)

CTX = MPContext(64)


@pytest.fixture(scope="module")
def flutter():
    return flutter_speed(None, CTX)


# ----- eqs. (42)-(46) ---------------------------------------------------------------------------

def test_corrected_lagrangian_and_forces_give_the_corrected_equations_of_motion():
    m = symbolic_model()
    derived = m.euler_lagrange(m.lagrangian, m.forces)
    assert [sp.simplify(d - e) for d, e in zip(derived, m.eom)] == [0, 0]


def test_printed_equations_differ_exactly_as_the_errata_say():
    m = symbolic_model()
    s = m.sym
    coupling_defect = s["m_W"] * s["x_alpha"] * (1 - s["b"])
    moment = s["rho"] * s["U"] ** 2 * s["b"] ** 2 * s["C_Malpha"] * m.alpha_eff
    # printed (42) with printed (43)-(44) against printed (45)-(46): twice the inertia
    # terms of the kinetic energy, x_alpha for x_alpha b in the coupling, and the moment sign
    diff = [sp.expand(d - e) for d, e in zip(m.euler_lagrange(m.lagrangian_printed, m.forces_printed),
                                             m.eom_printed)]
    assert sp.simplify(diff[0] - (s["m_T"] * m.hdd + coupling_defect * m.add)) == 0
    assert sp.simplify(diff[1] - (s["I_alpha"] * m.add + coupling_defect * m.hdd - 2 * moment)) == 0
    # corrected (42) with printed (43)-(44): (43) agrees with (45), (44) not with (46)
    diff = [sp.expand(d - e) for d, e in zip(m.euler_lagrange(m.lagrangian, m.forces_printed),
                                             m.eom_printed)]
    assert diff[0] == 0
    assert sp.simplify(diff[1] + 2 * moment) == 0
    # the corrected equations reverse both aerodynamic terms of the printed (45)-(46)
    lift = s["rho"] * s["U"] ** 2 * s["b"] * s["C_Lalpha"] * m.alpha_eff
    assert sp.simplify(m.eom[0] - m.eom_printed[0] - 2 * lift) == 0
    assert sp.simplify(m.eom[1] - m.eom_printed[1] + 2 * moment) == 0


def test_system_obeys_the_corrected_equations_at_a_random_state():
    U = CTX.num("8.5")
    sec = aeroelastic_section(CTX, U)
    S = sec.system
    q, v = CTX.vector(["0.013", "-0.21"]), CTX.vector(["-0.17", "1.3"])
    a = S.acceleration(CTX.zero, q, v)
    m = symbolic_model()
    s = m.sym
    p = sec.params
    values = {s[k]: p[k] for k in ("m_T", "m_W", "x_alpha", "b", "a", "I_alpha", "k_h", "c_h",
                                   "c_alpha", "rho", "C_Lalpha", "C_Malpha")}
    values.update({s[f"k_alpha{i}"]: k for i, k in enumerate(p["k_alpha"])})
    values[s["U"]] = sp.Rational(17, 2)
    state = {m.h: sp.Rational(13, 1000), m.alpha: sp.Rational(-21, 100), m.hd: sp.Rational(-17, 100),
             m.ad: sp.Rational(13, 10)}
    for eq in m.eom:
        f = compile_exprs([m.hdd, m.add], [eq.subs(values).subs(state)], CTX)
        assert abs(f(a[0], a[1])[0]) < 1e-55
    # the energy is kinetic + potential of the corrected Lagrangian (42)
    T = (p["m_T"] * v[0] ** 2 + p["I_alpha"] * v[1] ** 2) / 2 + p["m_W"] * p["x_alpha"] * p["b"] * v[0] * v[1]
    V = p["k_h"] * q[0] ** 2 / 2 + sum(k * q[1] ** (i + 2) / (i + 2) for i, k in enumerate(p["k_alpha"]))
    assert abs(sec.energy(q, v) - (CTX.num(T) + V)) < 1e-60


def test_derived_parameters_are_exact():
    p = section_parameters()
    b, a = Fraction("0.135"), Fraction("-0.6847")
    x_alpha = (Fraction("0.0873") - (b + a * b)) / b
    assert p["x_alpha"] == x_alpha
    assert p["I_alpha"] == Fraction("0.0517") + Fraction("2.049") * x_alpha ** 2 * b ** 2
    assert p["C_Malpha"] == (Fraction(1, 2) + a) * Fraction("6.28")
    assert abs(float(p["x_alpha"]) - 0.3314) < 1e-4 and abs(float(p["I_alpha"]) - 0.0558) < 1e-4


def test_bad_parameters_are_refused_with_a_message():
    with pytest.raises(TypeError, match="'rho'.*exact value"):
        section_parameters(dict(DEFAULT_PARAMETERS, rho=1.225))
    with pytest.raises(ValueError, match="unknown key.*'rh0'"):
        section_parameters({**{k: v for k, v in DEFAULT_PARAMETERS.items() if k != "rho"}, "rh0": "1"})
    with pytest.raises(ValueError, match="k_alpha"):
        section_parameters(dict(DEFAULT_PARAMETERS, k_alpha="6.833"))
    with pytest.raises(ValueError, match="U must be positive"):
        aeroelastic_section(CTX, 0)
    with pytest.raises(PrecisionError):
        aeroelastic_section(CTX, 8.5)


# ----- flutter speed -----------------------------------------------------------------------------

def test_flutter_speed_is_where_the_largest_real_part_crosses_zero(flutter):
    U_f, omega_f = flutter
    assert abs(max_real_part(U_f, CTX)) < 1e-40
    delta = U_f * CTX.num("1e-6")
    assert max_real_part(U_f - delta, CTX) < 0 < max_real_part(U_f + delta, CTX)
    # the origin is stable on the whole range below U_f (sampled)
    assert all(max_real_part(U_f * k / 20, CTX) < 0 for k in range(1, 20))
    assert abs(float(U_f) - 9.1241233394536) < 1e-12 and abs(float(omega_f) - 13.612265968961) < 1e-11


def test_flutter_speed_satisfies_routh_hurwitz(flutter):
    """x' = A x with A = [[0, I], [-Q, -N]]: det(lam^2 + N lam + Q) = sum a_k lam^k; at a
    Hopf point the Hurwitz determinant a3 a2 a1 - a4 a1^2 - a0 a3^2 vanishes and the
    crossing eigenvalues are +-i sqrt(a1/a3)."""
    U_f, omega_f = flutter
    A = linear_matrix(U_f, CTX)
    Q, N = -A[2:, :2], -A[2:, 2:]
    a4 = CTX.one
    a3 = N[0, 0] + N[1, 1]
    a2 = Q[0, 0] + Q[1, 1] + N[0, 0] * N[1, 1] - N[0, 1] * N[1, 0]
    a1 = N[0, 0] * Q[1, 1] + Q[0, 0] * N[1, 1] - N[0, 1] * Q[1, 0] - Q[0, 1] * N[1, 0]
    a0 = Q[0, 0] * Q[1, 1] - Q[0, 1] * Q[1, 0]
    hurwitz = a3 * a2 * a1 - a4 * a1 ** 2 - a0 * a3 ** 2
    assert abs(hurwitz) / (a3 * a2 * a1) < 1e-40
    assert abs(omega_f ** 2 - a1 / a3) / omega_f ** 2 < 1e-40


def test_printed_signs_lose_the_claimed_behaviour():
    """With the aerodynamic signs of the printed (45)-(46) (ERRATA [E51]) the section has a
    lower 'flutter speed' and a static divergence (a real positive eigenvalue), which an
    elastic axis ahead of the aerodynamic centre (a < -1/2) cannot have; the corrected
    equations have only oscillatory modes at the same speed (20 m/s)."""
    U_p, omega_p = flutter_speed(None, CTX, equations="printed")
    assert abs(float(U_p) - 6.720844449863) < 1e-9 and abs(float(omega_p) - 9.807794568) < 1e-8
    printed = linear_eigenvalues(20, CTX, equations="printed")
    assert any(abs(z.imag) < 1e-50 and z.real > 1 for z in printed)
    corrected = linear_eigenvalues(20, CTX)
    assert all(abs(z.imag) > 10 for z in corrected)
    with pytest.raises(ValueError, match="'corrected' or 'printed'"):
        flutter_speed(None, CTX, equations="as printed")


def test_no_flutter_below_the_scanned_speed_is_reported():
    with pytest.raises(NoFlutterError, match="no linear flutter below"):
        flutter_speed(None, CTX, U_max="8", samples=8)


# ----- the limit cycle (float64: a cheap physical check; the figures use 64 digits) -----------

def _rk4_pitch_amplitude(q0, U, T=12, h=Fraction(1, 200)):
    sec = aeroelastic_section(fp, U, q0=q0)
    sol = solve(sec, "rk4", h=fp.num(h), n=int(T / h))
    last = sol.q[sol.t >= T - 1, 1]
    return float(np.max(np.abs(last)))


def test_subcritical_limit_cycle_at_nine_tenths_of_the_flutter_speed(flutter):
    U = Fraction(str(flutter[0])) * Fraction(9, 10)
    big = _rk4_pitch_amplitude(["0.01", "0.1"], U)
    small = _rk4_pitch_amplitude(["0.001", "0.01"], U)
    assert 0.12 < big < 0.14          # the paper's initial state settles on the LCO
    assert small < 0.01 * 0.5        # a small perturbation decays: the origin is stable


# ----- the Hermite methods on the section ---------------------------------------------------------

@pytest.mark.parametrize("method, tol", [("hermite_variational", 1e-4), ("hermite_galerkin", 1e-6)])
def test_hermite_methods_take_converged_64_digit_steps(flutter, method, tol):
    sec = aeroelastic_section(CTX, flutter[0] * CTX.num("0.9"))
    dt, n = CTX.num("0.01"), 5
    sol = solve(sec, method, h=dt, n=n)
    nw = sol.stats["newton"]
    assert nw["solves"] == n and nw["max_iterations"] <= 6
    assert nw["max_residual"] < 1e-55
    ref = solve(sec, "gbs", h=dt, n=n, levels=8)
    assert CTX.norm_inf(sol.q - ref.q) < tol
    assert CTX.norm_inf(sol.v - ref.v) < 100 * tol


def test_more_gauss_legendre_nodes_change_nothing_on_the_section(flutter):
    """The section's integrands are polynomials of degree <= 12 in tau for the cubic (the
    quartic potential, forces linear in (h, alpha, v)): the default 8-node rule is exact,
    and 12 nodes give the same steps to a few eps."""
    sec = aeroelastic_section(CTX, flutter[0] * CTX.num("0.9"))
    dt, n = CTX.num("0.01"), 10
    for method in ("hermite_variational", "hermite_galerkin"):
        a = solve(sec, method, h=dt, n=n)
        b = solve(sec, method, h=dt, n=n, nodes=12)
        scale = CTX.norm_inf(a.v)
        assert CTX.norm_inf(a.q - b.q) <= 20 * CTX.eps and CTX.norm_inf(a.v - b.v) <= 20 * CTX.eps * scale


# ----- the turning points of the benchmark (hermite_fig09 .. hermite_fig12) -----------------------

def test_turning_points_of_the_benchmark_are_located_by_events(flutter):
    from mpvi_papers.hermite._hermite_aeroelastic import turning_point_events, turning_points
    sec = aeroelastic_section(CTX, flutter[0] * CTX.num("0.9"))
    dt = CTX.num("0.02")
    events = turning_point_events(1) + turning_point_events(0)
    runs = [solve(sec, "gbs", h=dt, n=30, levels=lv, events=events) for lv in (6, 8)]
    alpha = [turning_points(sol, 1) for sol in runs]
    kinds = [k for k, _, _ in alpha[0]]
    assert kinds == ["min", "max"]
    assert [k for k, _, _ in turning_points(runs[0], 0)] == ["min", "max", "min"]
    sol = runs[0]
    for (kind, t, x), (kind8, t8, x8) in zip(*alpha):
        # GBS of order 12 against order 16 at dt = 0.02: both well below 1e-12
        assert kind == kind8 and abs(t - t8) < 1e-12 and abs(x - x8) < 1e-12
        j = int(t / dt)
        assert sol.t[j] < t < sol.t[j + 1]
        for y in sol.q[j:j + 2, 1]:
            assert (x > y) if kind == "max" else (x < y)
        # located to 64 digits on the run's dense output (a GBS substep from node j)
        assert abs(sol(t).v[1]) < 1e-58 and abs(sol(t).q[1] - x) < 1e-60
    # a window keeps the points inside it
    t0, t1 = alpha[0][0][1], alpha[0][1][1]
    assert [k for k, _, _ in turning_points(sol, 0, (t0, t1))] == ["max"]
