"""Proven digits (issue 39, first increment): the Arb context, Krawczyk's test, certify().

Every enclosure is checked against an independent computation at 200 digits (gmpy2 /
mpmath point arithmetic): a run of the same method with the same h and initial data in
GMPContext(200) must lie inside the balls certify() proves for the 64-digit run.
"""
import pickle
from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest
import sympy as sp

import mpvi
from mpvi.numbers.arb import ArbContext, KrawczykError, UndecidedComparison, krawczyk
from mpvi.proof.certify import WrongStepError, certify
from mpvi.systems.double_pendulum import nonlinear_double_pendulum

REF = 200


def pendulum(ctx):
    q = sp.Symbol("q")
    return mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)


def double_pendulum(ctx):
    # dyadic g and exact lengths: the 64- and the 200-digit systems are the same system
    return nonlinear_double_pendulum(ctx, g="157/16", length=1, q0=["3/4", "1"]).system


def exact(x):
    """A gmpy2, mpmath or exact flint number as the Fraction it is (no rounding)."""
    if isinstance(x, (Fraction, int)):
        return Fraction(x)
    if isinstance(x, flint.fmpq):
        return Fraction(int(x.p), int(x.q))
    if isinstance(x, flint.arb):
        assert x.is_exact()
        man, exp = x.man_exp()
        return Fraction(int(man)) * Fraction(2) ** int(exp)
    if hasattr(x, "_mpf_"):                           # an mpf of any mpmath context
        sign, man, exp, _ = x._mpf_
        return Fraction(-man if sign else man) * Fraction(2) ** exp
    return Fraction(*x.as_integer_ratio())


def contains(ball, value, A=None):
    """Whether the ball contains the number exactly: |mid - value| <= rad in rationals."""
    return abs(exact(ball.mid()) - exact(value)) <= exact(ball.rad())


# ----- (d) the context ----------------------------------------------------------------------

def test_num_gives_the_tightest_ball_of_exact_input_and_refuses_floats():
    A = ArbContext(30)
    third = A.num("1/3")
    assert contains(third, Fraction(1, 3)) and not third.is_exact()
    assert third.rad() <= flint.arb(2) ** (1 - A.prec)           # one unit at the working precision
    assert contains(A.num("0.1"), Fraction(1, 10))
    assert contains(A.num(Fraction(2, 7)), Fraction(2, 7))
    assert A.num(12345678901234567890123).is_exact()
    assert A.num(sp.Rational(5, 4)).is_exact()
    with pytest.raises(mpvi.PrecisionError, match="float"):
        A.num(0.1)
    with pytest.raises(mpvi.PrecisionError):
        A.num(mpvi.GMPContext(15).num(1))          # fewer bits than the context asks for
    assert "+/-" in A.to_str(third, 10) and A.to_str(A.num("1/4"), 3) == "0.250"
    with pytest.raises(TypeError, match="root 1 is not real"):    # a complex root of a real ball
        A.num(sp.CRootOf(sp.Symbol("x") ** 5 - sp.Symbol("x") - 1, 1))
    with pytest.raises(TypeError, match="cannot enclose"):
        A.num(sp.zeta(3))


def test_the_callers_flint_precision_is_restored():
    old = flint.ctx.prec
    try:
        flint.ctx.prec = 100
        A = ArbContext(64)
        x = A.sin(A.num("1/3"))
        A.solve(A.matrix([[2, 1], [1, 3]]), A.vector([1, 2]))
        assert flint.ctx.prec == 100
        assert x.rad() < flint.arb(2) ** (-200)           # computed at the context's precision
        with A.active():
            assert flint.ctx.prec == A.prec
        assert flint.ctx.prec == 100
    finally:
        flint.ctx.prec = old


def test_functions_enclose_a_200_digit_value():
    A = ArbContext(40)
    m = mpmath.MPContext()
    m.dps = REF
    x = A.num("7/5")
    third = m.mpf(7) / 5
    for name, f in [("sin", m.sin), ("cos", m.cos), ("exp", m.exp), ("log", m.log),
                    ("sqrt", m.sqrt)]:
        assert contains(getattr(A, name)(x), f(third)), name
    assert contains(A.atan2(A.num(1), x), m.atan2(1, third))
    assert contains(A.pi, m.pi)
    assert A.sqrt(A.num(-1)).is_nan()            # outside the real domain: nan, never a wrong ball


def test_linear_algebra_encloses_and_refuses_a_singular_matrix():
    A = ArbContext(30)
    a = A.matrix([["1/3", 1], [1, "1/7"]])
    x = A.solve(a, A.vector([1, 2]))
    exact_x = sp.Matrix([[sp.Rational(1, 3), 1], [1, sp.Rational(1, 7)]]).solve(sp.Matrix([1, 2]))
    assert all(contains(xi, Fraction(int(e.p), int(e.q))) for xi, e in zip(x, exact_x))
    inv = A.inv(a)
    assert inv.shape == (2, 2)
    with pytest.raises(mpvi.SingularMatrixError, match="not provably invertible"):
        A.solve(A.matrix([[1, 2], [2, 4]]), A.vector([1, 1]))


def test_comparisons_decide_or_refuse():
    A = ArbContext(20)
    a, b = A.num("1/3"), A.num("1/2")
    assert A.less(a, b) and not A.less(b, a)
    with pytest.raises(UndecidedComparison, match="overlap"):
        A.less(a, a + A.num(0) * a)           # the same value: undecidable on balls


@pytest.mark.parametrize("build", [pendulum, double_pendulum])
def test_kernels_on_balls_contain_200_digit_values(build):
    G, R = mpvi.GMPContext(64), mpvi.GMPContext(REF)
    A = ArbContext(64)
    system, reference = build(G).with_context(A), build(R)
    n = system.dof
    qs, vs = ["1/3", "-2/7"][:n], ["3/5", "1/9"][:n]
    with A.active():
        q, v = A.vector(qs), A.vector(vs)
        values = [system.mass(q), [system.potential(q)], system.grad_potential(q),
                  system.acceleration(A.zero, q, v)]
    with R.active():
        rq, rv = R.vector(qs), R.vector(vs)
        ref = [reference.mass(rq), [reference.potential(rq)], reference.grad_potential(rq),
               reference.acceleration(R.zero, rq, rv)]
    for got, want in zip(values, ref):
        for b, w in zip(np.ravel(got), np.ravel(want)):
            b = A.num(b)                              # a constant entry comes as an int
            assert contains(b, w) and b.rad() < flint.arb(10) ** -60


# ----- (c) Krawczyk's test ------------------------------------------------------------------

def test_krawczyk_encloses_a_root_for_every_parameter_in_its_ball():
    A = ArbContext(40)
    with A.active():
        y = A.num(2) + flint.arb(0, flint.arb(10) ** -20)          # the known "state": a ball

        def fun(x, jacobian):
            r = [x[0] * x[0] - y]
            return (r, [[2 * x[0]]]) if jacobian else r
        K, _, _ = krawczyk(fun, [A.num(1)], A)
    m = mpmath.MPContext()
    m.dps = REF
    for end in (2 - m.mpf(10) ** -20, 2 + m.mpf(10) ** -20):
        assert contains(K[0], m.sqrt(end))
    assert K[0].rad() < flint.arb(10) ** -20         # about 1e-20 / (2 sqrt 2)


def test_krawczyk_proves_an_exact_root():
    A = ArbContext(30)

    def linear(x, jacobian):                         # F(x) = 2x - 1: the centre is exact
        r = [2 * x[0] - 1]
        return (r, [[2 * A.one]]) if jacobian else r
    with A.active():
        K, _, _ = krawczyk(linear, [A.num(0)], A)
    assert contains(K[0], Fraction(1, 2)) and K[0].rad() < flint.arb(10) ** -30


def test_krawczyk_fails_cleanly_on_a_singular_jacobian():
    A = ArbContext(30)

    def singular(x, jacobian):
        r = [x[0] + x[1] - 1, 2 * x[0] + 2 * x[1] - 2]
        return (r, [[A.one, A.one], [2 * A.one, 2 * A.one]]) if jacobian else r
    with pytest.raises(KrawczykError, match="midpoint Jacobian is singular"):
        krawczyk(singular, [A.num(0), A.num(0)], A, what="hand-made")

    def double_root(x, jacobian):                    # J = 2x vanishes at the root 0
        r = [x[0] * x[0]]
        return (r, [[2 * x[0]]]) if jacobian else r
    with pytest.raises(KrawczykError):
        krawczyk(double_root, [A.num(1)], A)


# ----- (a) certify: enclosures against a 200-digit rerun ------------------------------------

@pytest.mark.parametrize("propagation", ["lohner", "box"])
@pytest.mark.parametrize("method, params", [("midpoint", {}), ("simpson", {}), ("rk4", {}),
                                            ("lobatto", {"points": 4}), ("gauss", {"points": 2})])
def test_each_enclosure_contains_a_200_digit_rerun(method, params, propagation):
    G, R = mpvi.GMPContext(64), mpvi.GMPContext(REF)
    problem = mpvi.Problem(pendulum(G), ["1/2"], v0=[0])
    sol = mpvi.solve(problem, method, h="1/10", n=24, **params)
    cert = certify(sol, propagation=propagation)
    assert cert.complete
    rerun = mpvi.solve(mpvi.Problem(pendulum(R), ["1/2"], v0=[0]), method, h="1/10",
                       n=24, **params)
    A = cert.context
    ys = rerun.p if sol.state == "qp" else rerun.v
    for i in range(len(sol.t)):
        assert contains(cert.q[i][0], rerun.q[i][0], A), (method, i)
        assert contains(cert.y[i][0], ys[i][0], A), (method, i)
    assert min(cert.min_digits) > 40


def test_solve_attaches_a_certificate_of_the_double_pendulum():
    G = mpvi.GMPContext(64)
    sol = mpvi.solve(double_problem(G), "simpson", h="1/20", n=12, certify=True)
    assert sol.certificate.complete and len(sol.certificate.q) == 13
    assert min(sol.certificate.min_digits) > 40
    back = pickle.loads(pickle.dumps(sol))               # balls travel exactly
    with sol.certificate.context.active():               # midpoints read without rounding
        for a, b in zip(back.certificate.q[-1], sol.certificate.q[-1]):
            assert exact(a.mid()) == exact(b.mid())
            # a radius of more than 30 bits is rounded up: the ball still contains the original
            assert exact(b.rad()) <= exact(a.rad()) <= exact(b.rad()) * (1 + Fraction(1, 2**28))


def test_a_system_with_parameters_of_the_run_is_certified():
    # the paper's double pendulum: l = g / (2 pi)^2 is a 64-digit number of the run, taken
    # exactly (the run's system is what is certified)
    sol = mpvi.solve(nonlinear_double_pendulum(mpvi.GMPContext(64)), "simpson", h="1/100", n=5)
    cert = certify(sol)
    assert cert.complete and min(cert.min_digits) > 60


def test_what_certify_cannot_certify_is_refused_with_the_cause():
    G = mpvi.GMPContext(30)
    problem = mpvi.Problem(pendulum(G), ["1/2"], v0=[0])
    between = mpvi.solve(problem, "simpson", h="1/10", n=4, saveat=["1/20"])
    assert certify(between).complete          # between nodes: the interpolant, enclosed
    floats = mpvi.solve(mpvi.Problem(pendulum(mpvi.fp), ["1/2"], v0=[0]), "rk4", h="1/10", n=4)
    with pytest.raises(ValueError, match="float64"):
        certify(floats)
    with pytest.raises(ValueError, match="propagation"):
        certify(mpvi.solve(problem, "rk4", h="1/10", n=2), propagation="taylor")


# ----- (b) a wrong step is refused ------------------------------------------------------------

def test_a_perturbed_state_is_refused_naming_its_step():
    G = mpvi.GMPContext(64)
    sol = mpvi.solve(mpvi.Problem(pendulum(G), ["1/2"], v0=[0]), "simpson", h="1/10", n=20)
    with G.active():
        change = abs(sol.q[12][0] - sol.q[11][0])
        delta = G.num("1e-30")
        assert delta < change / 10 ** 20 and delta > G.eps * 10 ** 30
        sol.q[12] = sol.q[12] + delta
    with pytest.raises(WrongStepError, match=r"step 11 \(node 12\)") as info:
        certify(sol)
    assert info.value.step == 11


def test_lohner_keeps_the_digits_that_box_propagation_wraps_away():
    G, R = mpvi.GMPContext(30), mpvi.GMPContext(REF)
    sol = mpvi.solve(double_problem(G), "midpoint", h="1/20", n=120)
    box, lohner = certify(sol, propagation="box"), certify(sol)
    # measured: the box fails at step 37 (0.1 digits before it); Lohner proves 29 digits
    # there and 21.6 after 120 steps (the chaotic pendulum's own growth, 1e-36 -> 1e-21)
    assert not box.complete and box.failed_step < 60
    assert lohner.complete and min(lohner.min_digits) > 15
    assert lohner.min_digits[box.failed_step] > G.dps - 5
    rerun = mpvi.solve(double_problem(R), "midpoint", h="1/20", n=120)   # the problem as posed
    for i in (40, 80, 120):
        for b, w in zip([*lohner.q[i], *lohner.y[i]], [*rerun.q[i], *rerun.p[i]]):
            assert contains(b, w)


def double_problem(ctx):
    return nonlinear_double_pendulum(ctx, g="157/16", length=1, q0=["3/4", "1"])


def test_a_failed_proof_names_the_step_and_claims_nothing_after_it():
    G = mpvi.GMPContext(20)
    sol = mpvi.solve(mpvi.Problem(pendulum(G), ["1/2"], v0=[0]), "midpoint", h="1/10", n=400)
    cert = certify(sol, propagation="box")
    assert not cert.complete and cert.failed_step is not None and cert.why
    assert len(cert.t) == cert.failed_step + 1        # the nodes before the failing step
    assert f"step {cert.failed_step}" in repr(cert)


@pytest.mark.parametrize("method", ["simpson", "midpoint"])
def test_a_jacobian_with_constant_entries_is_certified(method):
    """Two masses on springs (a constant mass and a quadratic potential): the generated
    kernel's Jacobian holds plain int entries (its constant zeros), which the Krawczyk
    preconditioner takes as exact points; the certificate is complete and its balls
    contain a 200-digit rerun (tutorial 8's example failed on it with an AttributeError)."""
    G, R = mpvi.GMPContext(64), mpvi.GMPContext(REF)
    M = sp.Matrix([[2, 0], [0, 1]])
    K = sp.Matrix([[3, -1], [-1, 1]])
    x = sp.Matrix(sp.symbols("x1 x2"))
    springs = mpvi.LagrangianSystem("two masses", list(x), M, (x.T * K * x)[0] / 2, {}, G)
    q0, p0 = ["1/2", 0], [0, "1/3"]
    sol = mpvi.solve(mpvi.Problem(springs, q0, p0=p0), method, h="1/10", n=12)
    cert = certify(sol)
    assert cert.complete and min(cert.min_digits) > 40
    # the problem as posed: h = 1/10 and p0 = (0, 1/3) exactly
    rerun = mpvi.solve(mpvi.Problem(springs.with_context(R), q0, p0=p0), method, h="1/10", n=12)
    A = cert.context
    ys = rerun.p if sol.state == "qp" else rerun.v
    for i in range(len(sol.t)):
        for k in range(2):
            assert contains(cert.q[i][k], rerun.q[i][k], A), (method, i, k)
            assert contains(cert.y[i][k], ys[i][k], A), (method, i, k)


def test_a_decimal_with_a_huge_exponent_is_enclosed_at_once():
    """'1e9999999' is not made an exact rational (10^9999999: seconds; 1e999999999 would
    take hours): the ball of the mantissa times a power of ten encloses it at once, and a
    moderate exponent is still read exactly."""
    from conftest import time_limit
    A = ArbContext(30)
    with time_limit(2):
        big, tiny = A.num("1e9999999"), A.num("-3e-9999999")
    assert big.is_finite() and big > 0 and (big.log() / flint.arb(10).log()).overlaps(flint.arb(9999999))
    assert tiny < 0 and (-tiny / 3).log().overlaps(-9999999 * flint.arb(10).log())
    assert contains(A.num("2.5e-30"), Fraction(25, 10 ** 31))
