"""Tests of the Weierstrass ℘ function (mpvi.numbers.elliptic) and of the exact Lagrange-top
nutation (mpvi.systems.lagrange_top_exact; top2025 eqs. 16-18s, 18aa, Table 3).

Every check is at 64 digits unless stated; "≤ 1e-55" leaves room for the ~1e-63 rounding
of the evaluations, so a wrong formula, constant or half-period fails by many orders.
"""
import math
from fractions import Fraction

import numpy as np
import pytest

from mpvi import GMPContext, MPContext
from mpvi.numbers.context import PrecisionError
from mpvi.numbers.elliptic import Weierstrass
from mpvi.systems.lagrange_top import table3_top as table3_system
from mpvi.systems.lagrange_top_exact import LagrangeTopNutation


def table3_top(ctx, **kw):
    """The exact nutation of the Table 3 top (the integrators' initial data)."""
    return table3_system(ctx, **kw).nutation()

TOL = "1e-55"


@pytest.fixture(scope="module")
def ctx():
    return MPContext(64)


@pytest.fixture(scope="module")
def tol(ctx):
    return ctx.num(TOL)


@pytest.fixture(scope="module")
def top(ctx):
    return table3_top(ctx)


@pytest.fixture(scope="module")
def wp(ctx):
    """A lattice unrelated to the top (rounder numbers, k² not close to 1)."""
    return Weierstrass(ctx, g2=7, g3="1.5")


def sample_times(ctx, top, n=20):
    """n times spread over two periods, away from the grid of turning points."""
    return [2 * top.period * (k + ctx.num(Fraction(1, 3))) / n for k in range(n)]


def complex_points(ctx):
    c = ctx.mpc
    return [c("0.3", "0.2"), c("1.7", "-2.3"), c("-0.05", "0.9"), c("-3.1", "0.45")]


# ----- ℘ ------------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["wp", "top"])
def test_wp_differential_equation(ctx, tol, wp, top, which):
    w = wp if which == "wp" else top.wp
    for z in complex_points(ctx):
        p, dp = w.p(z), w.dp(z)
        assert abs(dp ** 2 - (4 * p ** 3 - w.g2 * p - w.g3)) <= tol * max(abs(4 * p ** 3), abs(w.g3))


def test_wp_roots_and_half_period_values(ctx, tol, wp):
    e = (wp.e1, wp.e2, wp.e3)
    assert wp.e1 > wp.e2 > wp.e3
    assert abs(sum(e)) <= tol
    for x in e:
        assert abs(4 * x ** 3 - wp.g2 * x - wp.g3) <= tol * wp.g2
    assert abs(wp.p(wp.omega1) - wp.e1) <= tol
    assert abs(wp.p(wp.omega1 + wp.omega3) - wp.e2) <= tol
    assert abs(wp.p(wp.omega3) - wp.e3) <= tol
    assert ctx.re(wp.omega3) == 0 and ctx.im(wp.omega3) > 0 and wp.omega1 > 0


def test_wp_laurent_series_at_the_pole(ctx, tol, wp):
    """℘(z) = 1/z² + g2 z²/20 + g3 z⁴/28 + O(z⁶), ℘'(z) = −2/z³ + g2 z/10 + g3 z³/7 + ...;
    at |z| ~ 2e-9 the z⁴ terms are ~1e-35 and the remainder ~1e-70."""
    z = ctx.mpc("1e-9", "2e-9")
    assert abs(z ** 2 * wp.p(z) - (1 + wp.g2 * z ** 4 / 20 + wp.g3 * z ** 6 / 28)) <= tol
    assert abs(z ** 3 * wp.dp(z) - (-2 + wp.g2 * z ** 4 / 10 + wp.g3 * z ** 6 / 7)) <= tol
    with pytest.raises(ZeroDivisionError, match="pole"):
        wp.p(0)


def test_wp_periods(ctx, tol, wp):
    for z in complex_points(ctx):
        p = wp.p(z)
        for shift in (2 * wp.omega1, 2 * wp.omega3, -2 * wp.omega1 + 4 * wp.omega3):
            assert abs(wp.p(z + shift) - p) <= tol * abs(p)
        # ℘ is even, ℘' is odd
        assert abs(wp.p(-z) - p) <= tol * abs(p)
        assert abs(wp.dp(-z) + wp.dp(z)) <= tol * abs(wp.dp(z))


@pytest.mark.parametrize("which", ["wp", "top"])
def test_wp_on_the_shifted_real_line(ctx, tol, wp, top, which):
    """℘(t + ω3) from the real theta form equals the complex evaluation, the claimed
    closed form e3 + (e2 − e3) sn²(√(e1 − e3) t, k²) (mpmath's own ellipfun, nome from
    qfrom), and its derivative is ℘'(t + ω3)."""
    w = wp if which == "wp" else top.wp
    lam = ctx.sqrt(w.e1 - w.e3)
    scale = w.e1 - w.e3
    for k in range(7):
        t = w.period * (k + ctx.num(Fraction(2, 7))) / 3
        p, dp = w.p_dp_shifted(t)
        assert w.p_shifted(t) == p
        assert w.e3 <= p <= w.e2
        assert abs(w.p(t + w.omega3) - p) <= tol * scale
        assert abs(w.dp(t + w.omega3) - dp) <= tol * scale * lam
        sn = ctx.ellipfun("sn", lam * t, m=w.k2)
        assert abs(w.e3 + (w.e2 - w.e3) * sn ** 2 - p) <= tol * scale
    assert w.p_shifted(0) == +w.e3            # +x: rounded to the context precision
    assert abs(w.p_shifted(w.omega1) - w.e2) <= tol * scale


def test_wp_matches_arb(ctx, wp, top):
    """Arb's acb_elliptic_p(z, τ) uses the lattice Z + τZ (periods 1 and τ), so
    ℘(z; 2ω1, 2ω3) = ℘(z/(2ω1); τ = ω3/ω1) / (2ω1)²."""
    flint = pytest.importorskip("flint")
    flint.ctx.dps = 70

    def arb_wp(w, z):
        zz = ctx.mpc(z) / (2 * w.omega1)
        tau = w.omega3 / w.omega1
        r = flint.acb(flint.arb(ctx.to_str(ctx.re(zz), 70)),
                      flint.arb(ctx.to_str(ctx.im(zz), 70))).elliptic_p(
            flint.acb(0, flint.arb(ctx.to_str(ctx.im(tau), 70))))
        value = ctx.mpc(r.real.mid().str(70, radius=False), r.imag.mid().str(70, radius=False))
        return value / (2 * w.omega1) ** 2

    # the nome of (1, τ) is exp(iπτ): Arb's convention and ours agree only if ω1 is right
    for w in (wp, top.wp):
        for z in complex_points(ctx) + [ctx.mpc(w.period * 3, 0) + w.omega3 / 3]:
            ours = w.p(z)
            assert abs(ours - arb_wp(w, z)) <= ctx.num(TOL) * abs(ours)


def test_wp_rejects_bad_invariants(ctx):
    with pytest.raises(ValueError, match="discriminant.*repeated root"):
        Weierstrass(ctx, g2=3, g3=1)                     # 27 - 27 = 0: e = 1/2, 1/2, -1
    with pytest.raises(ValueError, match="discriminant.*complex-conjugate"):
        Weierstrass(ctx, g2=1, g3=1)
    with pytest.raises(ValueError, match="sum to zero"):
        Weierstrass(ctx, roots=[3, 1, -2])
    with pytest.raises(ValueError, match="distinct"):
        Weierstrass(ctx, roots=[2, -1, -1])
    with pytest.raises(ValueError, match="either"):
        Weierstrass(ctx, g2=7, g3=1, roots=[2, 1, -3])
    with pytest.raises(PrecisionError):
        Weierstrass(ctx, g2=7.0, g3="1.5")
    with pytest.raises(PrecisionError):
        Weierstrass(ctx, g2=7, g3="1.5").p(0.3 + 0.2j)


def test_wp_from_roots_equals_wp_from_invariants(ctx, tol, wp):
    w2 = Weierstrass(ctx, roots=[wp.e3, wp.e1, wp.e2])
    assert abs(w2.g2 - wp.g2) <= tol * wp.g2 and abs(w2.g3 - wp.g3) <= tol * wp.g2
    assert abs(w2.omega1 - wp.omega1) <= tol and abs(w2.omega3 - wp.omega3) <= tol


# ----- the top: constants and eq. (18aa) -----------------------------------------------

def test_initial_data(ctx, tol, top):
    assert abs(top.theta(0) - ctx.pi / 3) <= tol
    assert abs(top.cos_theta(0) - ctx.num(Fraction(1, 2))) <= tol
    assert abs(top.theta_dot(0)) <= tol
    assert abs(top.phi_dot(0) - ctx.num("9.2")) <= tol * 10
    assert abs(top.psi_dot(0) - 252) <= tol * 1000


def test_constants_of_eq_18aa(ctx, tol, top):
    """c is E − p_ψ²/(2 I3), i.e. the printed c with sin²θ0; the shift of (18aa) is
    (2Ic + p_ψ²)/(6 I² m): the printed (2Ic + p_ψ²)/(6Im) gives cosθ(0) = −0.332."""
    I, u0, s0 = top.I, ctx.num(Fraction(1, 2)), ctx.sin(ctx.pi / 3)
    printed_c = (I * top.theta_dot0 ** 2 / 2 + (top.p_phi - top.p_psi * u0) ** 2 / (2 * I * s0 ** 2)
                 + I * top.m * u0)
    assert abs(top.c - printed_c) <= tol * top.c
    assert abs(top.c - (top.energy - top.p_psi ** 2 / (2 * top.I3))) <= tol * top.energy
    assert abs(top.b - (2 * I * top.c + top.p_psi ** 2) / (6 * I ** 2 * top.m)) <= tol
    printed_b = (2 * I * top.c + top.p_psi ** 2) / (6 * I * top.m)
    assert abs(2 * top.wp.e3 / top.m + printed_b - ctx.num("-0.3323631583619747894")) <= ctx.num("1e-18")
    # Table 3 momenta, exactly: p_ψ = I3 (252 + 9.2/2), p_φ = p_ψ/2 + I·9.2·3/4
    assert abs(top.p_psi - ctx.num("0.032075")) <= tol
    assert abs(top.p_phi - (ctx.num("0.0160375") + ctx.num("0.002329969592394382") * ctx.num("6.9"))) <= tol


def test_roots_of_f(ctx, tol, top):
    u_min, u_max, u3 = top.roots
    scale = sum(abs(a) for a in top.coefficients)
    assert -1 < u_min < u_max < 1 < u3
    for u in top.roots:
        assert abs(top.f(u)) <= tol * scale
    # f as defined from the conserved quantities, independently of the expanded coefficients
    I, m, c, pp, ps = top.I, top.m, top.c, top.p_phi, top.p_psi
    for u in (ctx.num("0.3"), ctx.num("0.77"), ctx.num("-0.5")):
        direct = 2 * (c - I * m * u) * (1 - u * u) / I - (pp - ps * u) ** 2 / I ** 2
        assert abs(top.f(u) - direct) <= tol * scale


def test_first_integral_with_wp_prime(ctx, tol, top):
    scale = sum(abs(a) for a in top.coefficients)
    for t in sample_times(ctx, top):
        u = top.cos_theta(t)
        assert top.roots[0] <= u <= top.roots[1]
        assert abs(top.cos_theta_dot(t) ** 2 - top.f(u)) <= tol * scale


def test_first_integral_with_finite_differences(ctx, tol, top):
    """d cosθ/dt by mpmath's diff, which evaluates cos_theta at ~2x the working precision."""
    scale = sum(abs(a) for a in top.coefficients)
    for t in sample_times(ctx, top):
        du = ctx.diff(top.cos_theta, t)
        assert abs(du - top.cos_theta_dot(t)) <= tol * ctx.sqrt(scale)
        assert abs(du ** 2 - top.f(top.cos_theta(t))) <= tol * scale


def test_euler_lagrange_equation_for_theta(ctx, tol, top):
    """θ̈ = (m + φ̇² cosθ − (p_ψ/I) φ̇) sinθ (eq. 18ac), from ∂L/∂θ with ψ̇ + φ̇ cosθ = p_ψ/I3:
    I θ̈ = I φ̇² sinθ cosθ − I3 (p_ψ/I3) φ̇ sinθ + m_top g ℓ sinθ.  θ̈ and θ̇ are numerical
    derivatives of θ(t); φ̇ from eq. (18af)."""
    scale = top.m + top.phi_dot0 ** 2 + top.p_psi / top.I * top.phi_dot0
    for t in sample_times(ctx, top, 10):
        th = top.theta(t)
        phid = top.phi_dot(t)
        rhs = (top.m + phid ** 2 * ctx.cos(th) - top.p_psi / top.I * phid) * ctx.sin(th)
        assert abs(ctx.diff(top.theta, t, 2) - rhs) <= tol * scale
        assert abs(ctx.diff(top.theta, t) - top.theta_dot(t)) <= tol * ctx.sqrt(scale)


def test_conserved_energy_along_the_solution(ctx, tol, top):
    for t in sample_times(ctx, top, 8):
        th, thd, phid, psid = top.theta(t), top.theta_dot(t), top.phi_dot(t), top.psi_dot(t)
        cos, sin = ctx.cos(th), ctx.sin(th)
        spin = psid + phid * cos
        energy = (top.I3 * spin ** 2 + top.I * (phid ** 2 * sin ** 2 + thd ** 2)) / 2 + top.I * top.m * cos
        assert abs(energy - top.energy) <= tol * top.energy
        assert abs(top.I3 * spin * cos + top.I * phid * sin ** 2 - top.p_phi) <= tol * top.p_phi


def test_period(ctx, tol, top):
    assert abs(top.period - top.period_quadrature()) <= tol * top.period
    for t in sample_times(ctx, top, 5):
        assert abs(top.cos_theta(t + top.period) - top.cos_theta(t)) <= tol
        assert abs(top.cos_theta(t + 7 * top.period) - top.cos_theta(t)) <= tol
    half = top.period / 2
    assert abs(top.cos_theta(half) - top.roots[1]) <= tol
    assert abs(top.theta_dot(half)) <= tol
    # the other turning point is the largest cosθ: θ is smallest there
    assert top.theta(half) < top.theta(half - top.period / 100)


def test_table3_period_and_the_printed_value(ctx):
    """g = 9.81 is the closer of the two standard values; neither gives the printed
    t̄ = 1.84671 s, which I rounded to 0.00233 reproduces (see the module docstring)."""
    period_981 = table3_top(ctx).period
    period_980665 = table3_top(ctx, g="9.80665").period
    assert ctx.to_str(period_981, 40) == "1.847238981508925884056232208398876635488"
    assert ctx.to_str(period_980665, 40) == "1.827537611090097805648472355157705134436"
    printed = ctx.num("1.84671")
    assert abs(period_981 - printed) < abs(period_980665 - printed)
    assert ctx.to_str(table3_top(ctx, I="0.00233").period, 6) == "1.84671"


def test_the_gmp_context_gives_the_same_nutation(ctx):
    """A top of the gmp context (the reproductions' default) hands its own 64-digit numbers
    to the nutation, whose setup runs with guard digits: they are taken as they are (not
    refused as numbers of fewer bits than the raised precision), and the nutation is the
    mpmath context's to the 64-digit rounding.  Numbers of fewer bits than the context are
    still refused."""
    gmp = GMPContext(64)
    top_gmp = table3_system(gmp)
    nut_gmp, nut_mp = top_gmp.nutation(), table3_top(ctx)
    assert abs(ctx.num(nut_gmp.period) - nut_mp.period) <= ctx.num("1e-62") * nut_mp.period
    for t in ("0.7", "2.3"):
        assert abs(ctx.num(nut_gmp.theta(t)) - nut_mp.theta(t)) <= ctx.num("1e-62")
    P = top_gmp.params
    base = dict(m_top=P["m_top"], I=P["I"], I3=P["I3"], ell=P["ell"], g=P["g"],
                phi_dot0=top_gmp.qdot0[0], theta_dot0=top_gmp.qdot0[1], psi_dot0=top_gmp.qdot0[2])
    with pytest.raises(PrecisionError):
        LagrangeTopNutation(gmp, theta0=GMPContext(30).num("1"), **base)
    with pytest.raises(PrecisionError):
        LagrangeTopNutation(gmp, theta0=1.0, **base)


def test_general_initial_data(ctx, tol):
    """θ̇0 ≠ 0 of either sign, θ0 near either turning point: the phase t0 is right."""
    base = dict(m_top="0.1", I="0.002329969592394382", I3="0.000125", ell="0.15", g="9.81",
                phi_dot0="9.2", psi_dot0=252)
    for theta0, theta_dot0 in (("0.8", "-3.1"), ("0.8", "3.1"), ("0.1", "0.01"),
                               ("0.1", "-0.01"), ("1.047", "1e-30")):
        top = LagrangeTopNutation(ctx, theta0=theta0, theta_dot0=theta_dot0, **base)
        assert abs(top.theta(0) - ctx.num(theta0)) <= tol
        assert abs(top.theta_dot(0) - ctx.num(theta_dot0)) <= tol
        scale = sum(abs(a) for a in top.coefficients)
        t = top.period * ctx.num(Fraction(5, 17))
        assert abs(top.cos_theta_dot(t) ** 2 - top.f(top.cos_theta(t))) <= tol * scale


def test_rejects_bad_parameters(ctx):
    base = dict(m_top="0.1", I="0.002329969592394382", I3="0.000125", ell="0.15", g="9.81",
                phi_dot0="9.2", theta_dot0=0, psi_dot0=252)
    with pytest.raises(ValueError, match="theta0"):
        LagrangeTopNutation(ctx, theta0=0, **base)
    with pytest.raises(ValueError, match="I3 must be positive"):
        LagrangeTopNutation(ctx, theta0="1", **{**base, "I3": 0})
    with pytest.raises(PrecisionError):
        LagrangeTopNutation(ctx, theta0=1.0, **base)
    # steady precession at θ0 = π/2: θ̇0 = 0 and θ̈(0) = m − (p_ψ/I) φ̇0 = 0 with p_ψ = I3 ψ̇0,
    # so f has a double root at u = 0
    phi_dot0 = ctx.num("0.1") * ctx.num("9.81") * ctx.num("0.15") / (ctx.num("0.000125") * 252)
    with pytest.raises(ValueError, match="degenerate"):
        LagrangeTopNutation(ctx, theta0=ctx.pi / 2, **{**base, "phi_dot0": phi_dot0})


# ----- precision ----------------------------------------------------------------------

def test_evaluation_carries_the_context_precision(ctx):
    """64 and 80 digits agree to the 64-digit rounding.  float64 differs by ~1e-11: its
    eps times the ~1e5 condition number of the period of this near-separatrix (looping)
    motion."""
    top64, top80 = table3_top(ctx), table3_top(MPContext(80))
    t = "0.7"                                          # read by each at its own precision
    p64, p80 = +top64.period, ctx.num(top80.period)   # +x: rounded to 64 digits
    assert abs(p64 - p80) <= ctx.num("1e-62") * p80
    assert abs(top64.cos_theta(t) - ctx.num(top80.cos_theta(t))) <= ctx.num("1e-62")
    assert abs(top64.theta(t) - ctx.num(top80.theta(t))) <= ctx.num("1e-62")

    # the same period in float64: numpy roots of f and K(k²) = π / (2 AGM(1, k'))
    coeffs = [float(ctx.to_str(a, 17)) for a in top64.coefficients]
    u_min, u_max, u3 = sorted(np.roots(coeffs).real)
    k2 = (u_max - u_min) / (u3 - u_min)
    a, b = 1.0, math.sqrt(1.0 - k2)
    for _ in range(8):
        a, b = (a + b) / 2, math.sqrt(a * b)
    m = float(ctx.to_str(top64.m, 17))
    period_fp = 2 * (math.pi / (2 * a)) / math.sqrt(m * (u3 - u_min) / 2)
    rel = abs(ctx.num(repr(period_fp)) - p80) / p80
    assert ctx.num("1e-18") < rel < ctx.num("1e-10")
