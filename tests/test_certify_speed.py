"""What makes certify cheaper (issue 39: the certified run at most 5x the plain run) must
not weaken it: the starts it hands to Newton are only starts, the generated kernels on balls
enclose, the guards of sin/cos/tan still refuse a huge argument, and the dual arithmetic's
fast paths compute the same derivatives.  Enclosures are checked against 200-digit values."""
from fractions import Fraction

import flint
import mpmath
import pytest
import sympy as sp

import mpvi
import mpvi.numbers.arb as arb_module
from mpvi.numbers.arb import ArbContext, _Dual, _DualContext
from mpvi.proof.certify import certify

REF = 200


def pendulum(ctx):
    q = sp.Symbol("q")
    return mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)


def exact(x):
    if isinstance(x, flint.arb):
        man, exp = x.man_exp()
        return Fraction(int(man)) * Fraction(2) ** int(exp)
    sign, man, exp, _ = x._mpf_
    return Fraction(-man if sign else man) * Fraction(2) ** exp


def contains(ball, value):
    return abs(exact(ball.mid()) - exact(value)) <= exact(ball.rad())


@pytest.fixture
def solves(monkeypatch):
    """Every Krawczyk test of a certify: (centred, Newton iterations)."""
    seen = []
    real = arb_module._krawczyk

    def spy(fun, x0, ctx, what, **kw):
        out = real(fun, x0, ctx, what, **kw)
        seen.append((kw.get("centred", False), out[1]))
        return out
    monkeypatch.setattr(arb_module, "_krawczyk", spy)
    return seen


@pytest.mark.parametrize("method", ["midpoint", "simpson", "lobatto"])
def test_the_newton_starts_are_the_runs_solution_and_the_point_steps_centre(method, solves):
    G = mpvi.GMPContext(64)
    sol = mpvi.solve(mpvi.Problem(pendulum(G), ["1/2"], v0=[0]), method, h="1/10", n=6)
    # the steps' own tests only: reuse=False leaves out the one-off attempt of a hull
    # Jacobian (refused here, the pendulum being nonlinear), whose tests start elsewhere
    cert = certify(sol, reuse=False)
    assert cert.complete and min(cert.min_digits) > 60
    point, box = solves[0::2], solves[1::2]
    assert len(point) == len(box) == 6
    # the point step from the run's own solution: at most two Newton iterations (from the
    # extrapolated guess it took five); the box's step centred there, without Newton
    assert all(not centred and its <= 2 for centred, its in point)
    assert all(centred and its == 0 for centred, its in box)


def test_without_the_runs_inner_values_newton_starts_from_the_extrapolation(solves):
    # saved every other node: the run's q_{j+1} is not at hand; the proof is the same
    G = mpvi.GMPContext(64)
    sol = mpvi.solve(mpvi.Problem(pendulum(G), ["1/2"], v0=[0]), "simpson", h="1/10", n=6,
                     saveat=2)
    every = certify(mpvi.solve(mpvi.Problem(pendulum(G), ["1/2"], v0=[0]), "simpson",
                               h="1/10", n=6))
    solves.clear()
    cert = certify(sol)
    assert cert.complete
    assert max(its for centred, its in solves[0::2]) > 2
    with cert.context.active():
        for a, b in zip(cert.q[-1], every.q[-1]):       # the same set, proven both ways
            assert a.overlaps(b)


def test_a_stepper_of_the_ball_context_runs_the_generated_kernel():
    A = ArbContext(64)
    system = pendulum(mpvi.GMPContext(64)).with_context(A)
    method = mpvi.methods.get_method("simpson")
    with A.active():
        stepper = method.prepare(system, A.num("1/10"), A)
        assert stepper.kernel is not None
        r = stepper(A.zero, A.vector(["1/2"]), A.vector(["0"]))
    R = mpvi.GMPContext(REF)
    ref = mpvi.solve(mpvi.Problem(pendulum(R), ["1/2"], p0=[0]), "simpson", h="1/10", n=1)
    assert contains(r.q[0], ref.q[1][0]) and contains(r.y[0], ref.p[1][0])
    assert r.q[0].rad() < flint.arb(10) ** -60


@pytest.mark.parametrize("make", [ArbContext, _DualContext])
def test_sin_cos_tan_on_balls_refuse_a_huge_argument_and_enclose_the_rest(make):
    A = make(64)
    ns = A.namespace()
    mpmath.mp.dps = REF
    try:
        with A.active():
            third, huge = A.num("1/3"), A.num(2 ** (A.prec + 1))
            for name in ("sin", "cos", "tan"):
                inside = A.num(ns[name](third))
                value = inside.v if isinstance(inside, _Dual) else inside
                assert value.rad() < flint.arb(10) ** -60, name
                assert contains(value, getattr(mpmath, name)(mpmath.mpf(1) / 3)), name
                for x in (huge, -huge):
                    assert not A.isfinite(ns[name](x)), name
    finally:
        mpmath.mp.dps = 15


def test_the_fast_dual_operations_give_the_derivatives_of_the_general_path():
    A = _DualContext(64)
    with A.active():
        one, zero = flint.arb(1), flint.arb(0)
        x = _Dual(flint.arb(1) / 3, (one, zero))
        y = _Dual(flint.arb(2) / 7, (zero, one))
        c = _Dual(flint.arb(5), ())
        cases = [(x * y, x.v * y.v, (y.v, x.v)), (x + y, x.v + y.v, (one, one)),
                 (x * c, 5 * x.v, (5, 0)), (c * x, 5 * x.v, (5, 0)), (x + 3, x.v + 3, (1, 0)),
                 (x * 3, 3 * x.v, (3, 0)), (x * flint.arb(3), 3 * x.v, (3, 0)),
                 (c + x, x.v + 5, (1, 0)), (y + flint.arb(2), y.v + 2, (0, 1)),
                 (x - y, x.v - y.v, (1, -1)), (c - y, 5 - y.v, (0, -1)),
                 (x - c, x.v - 5, (1, 0)), (x - 3, x.v - 3, (1, 0)),
                 (y - flint.arb(2), y.v - 2, (0, 1)), (3 - x, 3 - x.v, (-1, 0))]
        for got, value, derivative in cases:
            assert got.v.overlaps(value) and len(got.d) == 2
            for g, w in zip(got.d, derivative):
                assert g.overlaps(flint.arb(w)) and g.rad() < flint.arb(10) ** -60
        # against the general path (_combine), which the fast one bypasses
        assert all(a.overlaps(b) for a, b in zip((x * y).d, _Dual._combine(x, y, y.v, x.v)))
        assert (c * c).d == () and (c + c).d == () and (c * 2).d == () and (c - c).d == ()
