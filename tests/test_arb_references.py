"""Proven enclosures of the exact references in Arb balls (issue 39, first increment).

Each enclosure (``ModalSolution.enclose``, ``LinearSystem.enclose_modes``,
``LagrangeTopNutation.enclose``/``enclose_period``, ``DoubleWellExact.enclose``,
``DampedOscillatorExact.enclose``) is
checked against a 200-digit rerun of the existing mpmath reference from the same exact
inputs: the rerun must lie inside the ball, the ball must carry at least ``dps - 5``
digits, and the 64-digit reference perturbed in its 40th digit must lie outside.
Multiple eigenvalues, a nutation too close to steady precession and the double well's
separatrix give a clear error.
"""
from fractions import Fraction

import flint
import pytest

from mpvi import MPContext
from mpvi.numbers.arbref import arb_precision, exact_rational
from mpvi.systems import DampedOscillatorExact
from mpvi.systems.double_pendulum import linearized_double_pendulum
from mpvi.systems.lagrange_top import table3_top
from mpvi.systems.lagrange_top_exact import _INPUTS, LagrangeTopNutation
from mpvi.systems.linear import LinearSystem

DPS = 64
REF_DPS = 200
SLACK = 5          # the digits below dps the brief allows a ball to lose


@pytest.fixture(scope="module")
def ctx():
    return MPContext(DPS)


@pytest.fixture(scope="module")
def ref_ctx():
    return MPContext(REF_DPS)


def point(ctx, x):
    """The number ``x`` of ``ctx`` as an exact arb (its binary value, no rounding)."""
    r = exact_rational(x, "reference")
    with arb_precision(2 * REF_DPS):
        return flint.arb(flint.fmpq(r.numerator, r.denominator))


def digits(b):
    """Proven relative digits of a ball: -log10(rad / |mid|), from its exact midpoint and
    radius (radius 0: infinitely many)."""
    with arb_precision(2 * REF_DPS):
        rad, mid = b.rad(), abs(b.mid())
        if rad == 0:
            return float("inf")
        return float(-(rad / mid).log() / flint.arb(10).log())


def check(ball, ref_ctx, reference, wrong):
    """``ball`` contains the 200-digit ``reference``, carries >= DPS - SLACK digits and
    excludes ``wrong`` (a number perturbed in its 40th digit)."""
    assert ball.contains(point(ref_ctx, reference)), (ball, reference)
    assert digits(ball) >= DPS - SLACK, (ball, digits(ball))
    assert not ball.contains(wrong), (ball, wrong)


def perturbed(ctx, x):
    """``x`` changed by 1e-39 relative: a wrong value in the 40th digit, as an arb."""
    return point(ctx, x * (1 + ctx.num("1e-39")))


def fractions(values):
    return [exact_rational(x, "input") for x in values]


# ----- the modal solution (axioms2024 Table 2's reference) --------------------------------
@pytest.fixture(scope="module")
def pendulum(ctx, ref_ctx):
    """axioms2024's linearized double pendulum and the same system (the exact binary M, K,
    q0, p0 of the 64-digit one) at 200 digits."""
    prob = linearized_double_pendulum(ctx)
    M, K = ([fractions(row) for row in m] for m in prob.system._matrices)
    ref = LinearSystem(M, K, ref_ctx).exact(fractions(prob.exact.q0), fractions(prob.exact.p0))
    return prob, ref


@pytest.mark.parametrize("periods", [1, 10, 1000])
def test_the_modal_solution_is_enclosed_with_its_digits(ctx, ref_ctx, pendulum, periods):
    """q(t), p(t) at t = 1, 10, 1000 periods (the 64-digit time, read exactly): the
    200-digit modal solution lies inside, >= 59 digits, the perturbed value outside."""
    prob, ref = pendulum
    t = prob.tbar * periods
    q, p = prob.exact.enclose(t, DPS)
    rq, rp = ref(ref_ctx.num(exact_rational(t, "t")))
    mq, mp_ = prob.exact(t)
    for b, r, m in zip(q + p, list(rq) + list(rp), list(mq) + list(mp_)):
        check(b, ref_ctx, r, perturbed(ctx, m))


def test_the_modal_solution_takes_exact_and_ball_times(ctx, ref_ctx, pendulum):
    """A rational time and a ball of times: the ball's enclosure holds the solution at the
    ball's ends, and is wider than the point's."""
    prob, ref = pendulum
    t = Fraction(7, 3)
    q, _ = prob.exact.enclose(t, DPS)
    rq, _ = ref(ref_ctx.num(t))
    for b, r in zip(q, rq):
        assert b.contains(point(ref_ctx, r))
    with arb_precision(DPS + 20):
        tb = flint.arb(flint.fmpq(7, 3), flint.arb("1e-50"))
    qb, _ = prob.exact.enclose(tb, DPS)
    for end in (t - Fraction(1, 10 ** 50), t + Fraction(1, 10 ** 50)):
        rq, _ = ref(ref_ctx.num(end))
        for b, r in zip(qb, rq):
            assert b.contains(point(ref_ctx, r))
    assert all(wide.rad() > narrow.rad() for wide, narrow in zip(qb, q))


def test_the_modes_are_enclosed(ctx, ref_ctx, pendulum):
    """omega_k and the M-orthonormal modes contain the 200-digit generalized eigenproblem's
    (each mode up to its sign), with >= 59 digits."""
    prob, ref = pendulum
    omega, V = prob.system.enclose_modes(DPS)
    rw, rV = ref.system.modes()
    mw, _ = prob.system.modes()
    for k in range(2):
        check(omega[k], ref_ctx, rw[k], perturbed(ctx, mw[k]))
        j = max(range(2), key=lambda i: abs(rV[i, k]))
        sign = 1 if rV[j, k] > 0 else -1
        for i in range(2):
            assert V[i][k].contains(point(ref_ctx, sign * rV[i, k]))
            assert digits(V[i][k]) >= DPS - SLACK


@pytest.mark.parametrize("M, K, q0, p0", [
    ([[1]], [[1]], ["1/2"], ["1/3"]),                                     # bea's oscillator
    ([[2, 1, 0], [1, 2, 1], [0, 1, 2]], [[3, -1, 0], [-1, 5, "-1/2"], [0, "-1/2", 7]],
     ["0.1", 0, "-0.3"], [0, "1/7", 1])])
def test_rational_systems_are_enclosed(ctx, ref_ctx, M, K, q0, p0):
    """Exact rational (M, K, q0, p0), non-diagonal M: q, p at t = 1000 inside the
    200-digit modal solution, >= 59 digits, the perturbed outside."""
    ex = LinearSystem(M, K, ctx).exact(q0, p0)
    ref = LinearSystem(M, K, ref_ctx).exact(q0, p0)
    q, p = ex.enclose(1000, DPS)
    rq, rp = ref(ref_ctx.num(1000))
    mq, mp_ = ex(ctx.num(1000))
    for b, r, m in zip(q + p, list(rq) + list(rp), list(mq) + list(mp_)):
        check(b, ref_ctx, r, perturbed(ctx, m))


def test_a_multiple_eigenvalue_is_refused_clearly(ctx):
    """M = I, K = 2 I: omega^2 = 2 twice; the eigenvalues cannot be proven simple."""
    system = LinearSystem([[1, 0], [0, 1]], [[2, 0], [0, 2]], ctx)
    with pytest.raises(ArithmeticError, match="could not be proven simple"):
        system.exact([1, 0], [0, 1]).enclose(1, DPS)
    with pytest.raises(ArithmeticError, match="multiple eigenvalue"):
        system.enclose_modes(DPS)


def test_close_eigenvalues_need_the_precision_that_separates_them(ctx):
    """K = I + d r r^T, r = (-4/5, 3/5), d = 1e-30 (omega^2 = 1 and 1 + 1e-30, eigenvectors
    not along the axes): not separable at 25 + 20 digits, proven at 64 + 20 (Rump's test
    needs about twice the digits of the gap)."""
    d = Fraction(1, 10 ** 30)
    K = [[1 + 16 * d / 25, -12 * d / 25], [-12 * d / 25, 1 + 9 * d / 25]]
    system = LinearSystem([[1, 0], [0, 1]], K, ctx)
    with pytest.raises(ArithmeticError, match="could not be proven simple"):
        system.enclose_modes(25)
    omega, _ = system.enclose_modes(DPS)
    assert omega[0] < omega[1]


def test_a_ball_that_is_not_finite_is_named():
    """The check every enclosure's steps pass: a NaN or infinite ball is an error naming
    the quantity, not a result."""
    from mpvi.numbers.arbref import finite
    ok = {"x": flint.arb(1)}
    assert finite(ok, "here") is ok
    with pytest.raises(ArithmeticError, match="here: the ball of y is not finite"):
        finite({"x": flint.arb(1), "y": flint.arb("2").log() / 0}, "here")


def test_inexact_input_and_flint_precision(ctx, pendulum):
    """A float time is refused by name; flint's precision is the caller's after a
    computation and after a failure."""
    prob, _ = pendulum
    saved = flint.ctx.prec
    try:
        flint.ctx.prec = 123
        with pytest.raises(TypeError, match="t: refusing the Python float"):
            prob.exact.enclose(0.5, DPS)
        assert flint.ctx.prec == 123
        prob.exact.enclose(1, DPS)
        assert flint.ctx.prec == 123
        with pytest.raises(ArithmeticError):
            LinearSystem([[1, 0], [0, 1]], [[2, 0], [0, 2]], ctx).enclose_modes(DPS)
        assert flint.ctx.prec == 123
    finally:
        flint.ctx.prec = saved


# ----- the Lagrange top (top2025 Fig. 11, Tables 4-5) --------------------------------------
@pytest.fixture(scope="module")
def top(ctx, ref_ctx):
    """The Table 3 nutation at 64 digits and its 200-digit rerun from the same exact
    (binary) inputs."""
    nut = table3_top(ctx).nutation()
    ref = LagrangeTopNutation(ref_ctx, **{name: exact_rational(nut._inputs[name], name)
                                          for name in _INPUTS})
    return nut, ref


def test_the_period_is_enclosed(ctx, ref_ctx, top):
    nut, ref = top
    check(nut.enclose_period(DPS), ref_ctx, ref.period, perturbed(ctx, nut.period))


@pytest.mark.parametrize("periods", [1, 10, 1000])
def test_the_nutation_is_enclosed_with_its_digits(ctx, ref_ctx, top, periods):
    """theta, cos theta, phi' and psi' at a time after 1, 10, 1000 periods (an exact
    rational): the 200-digit P solution lies inside, >= 59 digits, the perturbed outside."""
    nut, ref = top
    t = Fraction(3, 7) + periods * exact_rational(nut.period, "period")
    balls = nut.enclose(t, DPS)
    tr, tm = ref_ctx.num(t), ctx.num(t)
    for name, rf, mf in (("theta", ref.theta, nut.theta), ("cos_theta", ref.cos_theta, nut.cos_theta),
                         ("phi_dot", ref.phi_dot, nut.phi_dot), ("psi_dot", ref.psi_dot, nut.psi_dot)):
        check(balls[name], ref_ctx, rf(tr), perturbed(ctx, mf(tm)))


def steady_precession_top(ctx, ref_ctx, digits):
    """A top launched at theta0 = 1 rad with theta' = 0 and phi' = 1 (I = m g l = 1,
    I3 = 2): psi' = (1 - cos 1)/2 is steady precession; psi' rounded to ``digits`` digits
    leaves a nutation of amplitude ~10^-digits."""
    psi = ref_ctx.to_str((1 - ref_ctx.cos(ref_ctx.num(1))) / 2, digits)
    return LagrangeTopNutation(ctx, m_top=1, I=1, I3=2, ell=1, g=1, theta0=1, phi_dot0=1,
                               theta_dot0=0, psi_dot0=psi)


def test_a_nearly_degenerate_top_is_refused_clearly(ctx, ref_ctx):
    """Within 1e-25 of steady precession the double root of f is not resolved by 20 + 20
    digits (a clear error naming the discriminant), and is by 64 + 20."""
    nut = steady_precession_top(ctx, ref_ctx, 25)
    with pytest.raises(ArithmeticError, match="discriminant .* not proven positive"):
        nut.enclose(1, 20)
    assert nut.enclose_period(DPS).rad() < nut.enclose_period(DPS).mid() * flint.arb("1e-50")


# ----- mutze's damped oscillator ------------------------------------------------------------
@pytest.mark.parametrize("b", [0, "1/10", "-1/10"])
def test_the_damped_oscillator_flow_is_enclosed(ctx, ref_ctx, b):
    """x(t), v(t) after ~1000 periods (t = 3000, omega ~ 2): damped, undamped and
    anti-damped; the 200-digit flow inside, >= 59 digits, the perturbed outside."""
    ex, ref = (DampedOscillatorExact(c, 1, 4, b) for c in (ctx, ref_ctx))
    x, v = ex.enclose(3000, 1, "1/2", DPS)
    rx, rv = ref.flow(ref_ctx.num(3000), ref_ctx.num(1), ref_ctx.num("1/2"))
    mx, mv = ex.flow(ctx.num(3000), ctx.num(1), ctx.num("1/2"))
    check(x, ref_ctx, rx, perturbed(ctx, mx))
    check(v, ref_ctx, rv, perturbed(ctx, mv))


# ----- hermite's double well (Jacobi dn and cn) ---------------------------------------------
@pytest.mark.parametrize("q0, v0, m", [("0.9", 0, 1), ("-0.6", 0, 1), ("0.5", "0.2", 2),
                                       ("1.1", 0, 1), ("0.2", "-0.3", "3/2"), ("0.2", "0.9", 1)])
@pytest.mark.parametrize("t", ["7/3", 1000])
def test_the_double_well_motion_is_enclosed(ctx, ref_ctx, q0, v0, m, t):
    """Inside a well (dn) from the outer and the inner turning point and from a moving
    start, over both wells (cn) from a turning point and moving either way; t = 7/3 and t = 1000
    (~150-300 periods): the 200-digit elliptic solution inside, >= 59 digits, the perturbed
    outside."""
    from mpvi.systems.double_well import DoubleWellExact
    ex, ref = (DoubleWellExact(c, q0, v0, m) for c in (ctx, ref_ctx))
    q, v = ex.enclose(t, DPS)
    rq, rv = ref(ref_ctx.num(t))
    mq, mv = ex(ctx.num(t))
    check(q, ref_ctx, rq[0], perturbed(ctx, mq[0]))
    check(v, ref_ctx, rv[0], perturbed(ctx, mv[0]))


def test_the_double_well_separatrix_is_refused_clearly(ctx):
    from mpvi.systems.double_well import DoubleWellExact
    with pytest.raises(ArithmeticError, match="separatrix E = 0"):
        DoubleWellExact(ctx, 1, 0).enclose(1, DPS)


def test_an_exact_input_with_a_huge_decimal_exponent_is_refused_at_once():
    """An exact rational of '1e9999999' would hold ten million digits: refused by name,
    in no time; the grammar is the contexts' own (no '1_000')."""
    from conftest import time_limit

    from mpvi.numbers.arbref import exact_rational
    with time_limit(2), pytest.raises(ValueError, match="decimal exponent beyond"):
        exact_rational("1e9999999", "t")
    with pytest.raises(ValueError, match="not an exact rational"):
        exact_rational("1_000", "t")
    assert exact_rational(" 0.15 ", "t") == Fraction(3, 20)
