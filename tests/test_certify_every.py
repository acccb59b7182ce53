"""Every run certifies (issue 45, item 1): every registered method, every system kind,
every context kind.

Each enclosure is checked against an independent computation at 200 digits: a rerun of
the same problem with the same method and the same h (its exact value) in a 200-digit
context must lie inside the balls :func:`mpvi.certify` proves for the 64-digit run.
"""
from fractions import Fraction

import flint
import pytest
import sympy as sp

import mpvi
from mpvi.arb import ArbContext
from mpvi.arbref import real_roots
from mpvi.certify import certify

REF = 200


def exact(x):
    """A gmpy2, mpmath or exact flint number as the Fraction it is (no rounding)."""
    if isinstance(x, (Fraction, int)):
        return Fraction(x)
    if isinstance(x, flint.arb):
        assert x.is_exact()
        man, exp = x.man_exp()
        return Fraction(int(man)) * Fraction(2) ** int(exp)
    if hasattr(x, "_mpf_"):                           # an mpf of any mpmath context
        sign, man, exp, _ = x._mpf_
        return Fraction(-int(man) if sign else int(man)) * Fraction(2) ** exp
    return Fraction(*x.as_integer_ratio())


def contains(ball, value, error=0):
    """Whether the ball contains the number exactly: |mid - value| <= rad in rationals
    (or, for a value known within ``error``, some number within ``error`` of it)."""
    return abs(exact(ball.mid()) - exact(value)) <= exact(ball.rad()) + error


def pendulum(ctx):
    q = sp.Symbol("q")
    return mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)


def assert_encloses_rerun(sol, cert, rerun):
    """The certificate is complete, proves >= 40 digits everywhere, and every enclosure
    holds the 200-digit rerun's state."""
    assert cert.complete, cert
    assert min(cert.min_digits) >= 40, cert
    ys = None if rerun.y is None else rerun.y
    assert len(rerun.q) == len(cert.q)
    for i in range(len(cert.q)):
        for ball, value in zip(cert.q[i], rerun.q[i]):
            assert contains(ball, value), (sol.method, i, ball, value)
        if ys is not None:
            for ball, value in zip(cert.y[i], ys[i]):
                assert contains(ball, value), (sol.method, i, ball, value)


# ----- algebraic quadrature nodes (CRootOf) -----------------------------------------------

@pytest.mark.parametrize("k", [3, 4, 8])
def test_legendre_roots_enclose_their_200_digit_values(k):
    x = sp.Symbol("x")
    P = sp.legendre(k, x)
    A = ArbContext(64)
    with A.active():
        for i in range(k):
            root = sp.CRootOf(P, i)
            ball = A.num(root)
            assert ball.rad() < flint.arb(2) ** (10 - A.prec)      # at the working precision
            value, error = Fraction(str(sp.N(root, REF))), Fraction(1, 10 ** (REF - 2))
            assert contains(ball, value, error), (k, i)
            # a node and a power of it, through the same enclosure
            assert contains(A.num((root + 1) / 2), (value + 1) / 2, error)
            assert contains(A.num(root ** 3), value ** 3, 3 * error)


def test_real_roots_are_ascending_with_multiplicity_and_a_complex_root_is_refused():
    with ArbContext(30).active():
        # (x - 1/3)^2 (x^2 - 2) (x^2 + 1): -sqrt2, 1/3, 1/3, sqrt2
        x = sp.Symbol("x")
        coeffs = sp.Poly(sp.expand((3 * x - 1) ** 2 * (x ** 2 - 2) * (x ** 2 + 1)), x).all_coeffs()
        roots = real_roots(coeffs, "test")
        assert len(roots) == 4
        assert roots[0].overlaps(-flint.arb(2).sqrt()) and roots[3].overlaps(flint.arb(2).sqrt())
        assert roots[0] < 0 < roots[1] < 1 < roots[3]
        assert contains(roots[1], Fraction(1, 3)) and contains(roots[2], Fraction(1, 3))
        with pytest.raises(TypeError, match="not real"):
            ArbContext(30).num(sp.CRootOf(x ** 3 - 2, 1))


@pytest.mark.parametrize("method", ["hermite_variational", "hermite_galerkin",
                                    "mutze_variation", "mutze_parabolic_el"])
def test_methods_with_algebraic_nodes_certify(method):
    G, R = mpvi.GMPContext(64), mpvi.GMPContext(REF)
    sol = mpvi.solve(mpvi.Problem(pendulum(G), ["1/2"], v0=[0]), method, h="1/10", n=20)
    cert = certify(sol)
    rerun = mpvi.solve(mpvi.Problem(pendulum(R), ["1/2"], v0=[0]), method, h=exact(sol.h),
                       n=20)
    assert_encloses_rerun(sol, cert, rerun)
