"""Tests of the number contexts (mpvi.numbers.context)."""
from decimal import Decimal
from fractions import Fraction

import gmpy2
import mpmath
import numpy as np
import pytest

import mpvi
from mpvi import FPContext, MPContext, fp
from mpvi.numbers.context import GMPContext, PrecisionError, _mpfr_to_mpmath
from mpvi.numbers.linalg import NotPositiveDefiniteError, SingularMatrixError
from mpvi.systems.double_pendulum import linearized_double_pendulum

# An independent 120-digit mpmath context, used only to compare numbers that live in
# different mpvi contexts (mpf and mpfr bits are exact, so re-homing them here loses nothing).
REF = mpmath.MPContext()
REF.dps = 120

# The arbitrary-precision contexts: the mpmath reference and the gmpy2 fast context pass
# the same tests.
ARB = [MPContext, GMPContext]
ARB_IDS = ["mp", "gmp"]


def R(x):
    """x at 120 digits, from an mpf of any context, an mpfr, an int or a float."""
    return _mpfr_to_mpmath(x, REF) if isinstance(x, type(gmpy2.mpfr(0))) else REF.mpf(x)


def ref_diff(a, b):
    """max |a_i - b_i| evaluated at 120 digits, for arrays from any two contexts."""
    return max(abs(R(x) - R(y)) for x, y in zip(np.ravel(a), np.ravel(b)))


# A small SPD test problem built from exact rationals.
M3 = [[4, 1, Fraction(1, 2)], [1, 3, Fraction(1, 3)], [Fraction(1, 2), Fraction(1, 3), 2]]
K3 = [[5, -1, 0], [-1, 4, Fraction(1, 7)], [0, Fraction(1, 7), 3]]


# ----- independence of contexts and of the global mpmath precision ----------------------

@pytest.mark.parametrize("C", ARB, ids=ARB_IDS)
def test_contexts_are_independent_and_leave_global_mp_alone(C):
    before = mpmath.mp.dps
    c64, c80 = C(64), C(80)
    with c64.active():    # bare arithmetic on gmpy2 numbers at the context's precision
        assert mpmath.mp.dps == before
        assert (c64.dps, c80.dps) == (64, 80)
        assert c64.name == f"{ARB_IDS[ARB.index(C)]}64" and c80.name == f"{ARB_IDS[ARB.index(C)]}80"
        assert c64.eps > c80.eps > 0
        # eps really is the context's unit roundoff: 2^(1 - prec), mpmath's prec for the dps
        assert R(c64.eps) == mpmath.ldexp(1, 1 - c64.prec)
        assert c64.prec == MPContext(64).prec

        third64 = c64.num(1) / 3
        with c80.active():
            third80 = c80.num(1) / 3
        # each third is correctly rounded at its own precision
        exact = REF.mpf(1) / 3
        assert abs(R(third64) - exact) <= R(c64.eps)
        assert abs(R(third80) - exact) <= R(c80.eps)
        assert abs(R(third64) - exact) > R(c80.eps)      # 64 digits really is coarser
        assert mpmath.mp.dps == before

        with c64.workdps(90):
            assert c64.dps == 90
            assert c80.dps == 80
            assert mpmath.mp.dps == before
            x = c64.num(1) / 3
            assert abs(R(x) - exact) < REF.mpf(10) ** -88
        assert c64.dps == 64
        assert c80.dps == 80
        assert mpmath.mp.dps == before

        # the module-level reference context is 64 digits and also untouched
        assert mpvi.mp.dps == 64
        assert mpmath.mp.dps == before


@pytest.mark.parametrize("C", ARB, ids=ARB_IDS)
def test_workdps_restores_on_exception(C):
    before = mpmath.mp.dps
    c = C(40)
    with pytest.raises(RuntimeError):
        with c.workdps(100):
            raise RuntimeError("boom")
    assert c.dps == 40
    assert mpmath.mp.dps == before


def test_fp_context_has_fixed_precision():
    with pytest.raises(PrecisionError, match="fixed precision .53 bits.*needs an mp context"):
        with fp.workdps(30):
            pass
    assert fp.eps == np.finfo(float).eps


def test_bad_dps_and_get_context():
    for bad in (0, -3, 2.5, "64"):
        with pytest.raises(ValueError):
            MPContext(bad)
    assert isinstance(mpvi.get_context("mp", 80), MPContext)
    assert mpvi.get_context("mp", 80).dps == 80
    assert isinstance(mpvi.get_context("fp"), FPContext)
    assert isinstance(mpvi.get_context("gmp", 80), GMPContext)
    assert mpvi.get_context("gmp", 80).dps == 80
    for bad in (0, 2.5):
        with pytest.raises(ValueError):
            GMPContext(bad)
    with pytest.raises(ValueError, match="gmp, mp, fp"):
        mpvi.get_context("quad")


# ----- precision is real -------------------------------------------------------------

def _final_q(ctx):
    """Simpson, linearized double pendulum, 200 steps of h = tbar/20: final q."""
    dp = linearized_double_pendulum(ctx)
    with ctx.active():
        h = dp.tbar / 20
    sol = mpvi.solve(dp, "simpson", h=h, n=200)
    return sol.q[-1]


@pytest.mark.parametrize("C", ARB, ids=ARB_IDS)
def test_precision_is_real(C):
    before = mpmath.mp.dps
    c64, c80, c30 = C(64), C(80), C(30)
    q64, q30, qfp, q80 = _final_q(c64), _final_q(c30), _final_q(fp), _final_q(c80)
    assert mpmath.mp.dps == before

    d64 = ref_diff(q64, q80)
    assert d64 < 1e-58                   # 64 digits carried through 200 steps
    assert d64 > 0                       # ... and 80 digits really differ from 64
    assert ref_diff(q64, qfp) > 1e-20    # the mp64 result is not a float64 result
    d30 = ref_diff(q30, q80)
    assert 1e-40 < d30 < 1e-26           # 30 digits: ~1e-30, not 64 and not 15
    dfp = ref_diff(qfp, q80)
    assert 1e-17 < dfp < 1e-11           # float64: ~1e-14

    # the numbers themselves are of the right kind
    assert all(c64.is_number(x) for x in q64)
    assert qfp.dtype == float


# ----- num() ---------------------------------------------------------------------------

@pytest.mark.parametrize("C", ARB, ids=ARB_IDS)
@pytest.mark.parametrize("dps", [30, 64])
def test_num_accepts_exact_inputs(dps, C):
    c = C(dps)
    with c.active():    # bare arithmetic on gmpy2 numbers at the context's precision
        tenth = REF.mpf(1) / 10
        for x in ("0.1", " 0.1 ", Fraction(1, 10), Decimal("0.1")):
            v = c.num(x)
            assert c.is_number(v)
            assert abs(R(v) - tenth) <= R(c.eps) * tenth    # correctly rounded 1/10
        assert c.num(7) == 7 and c.is_number(c.num(7))
        assert c.num(np.int64(-3)) == -3
        big = 10 ** 25 + 1
        assert R(c.num(big)) == big          # ints are exact up to the precision
        assert c.num("-7/10") == c.num(-7) / 10
        x = c.num("0.1")
        assert c.num(x) is x                       # own numbers pass through


@pytest.mark.parametrize("C", ARB, ids=ARB_IDS)
def test_num_refuses_float_in_mp(C):
    c = C(64)
    for bad in (0.1, np.float64(0.1), 1.0):
        with pytest.raises(PrecisionError) as info:
            c.num(bad)
        assert isinstance(info.value, TypeError)
    with pytest.raises(TypeError):
        c.num(True)
    with pytest.raises(TypeError):
        c.num([1, 2])
    # the same float is fine in the float context
    assert fp.num(0.1) == 0.1
    assert fp.num("0.1") == 0.1
    assert fp.num(Fraction(1, 10)) == 0.1
    assert fp.num(3) == 3.0
    # rational strings, as the mp context reads them, correctly rounded
    assert fp.num("1/5") == 0.2 and fp.num(" -7/10 ") == -0.7
    assert MPContext(64).num("1/5") == MPContext(64).num(1) / 5


@pytest.mark.parametrize("ctx", [MPContext(64), GMPContext(64), fp], ids=["mp64", "gmp64", "fp"])
def test_num_bad_string(ctx):
    for s in ("abc", "1e", "0.1.2", "1/0", "1/2/3"):
        with pytest.raises(ValueError) as info:
            ctx.num(s)
        assert repr(s) in str(info.value)


@pytest.mark.parametrize("C", ARB, ids=ARB_IDS)
def test_num_rounds_more_bits_and_refuses_fewer(C):
    """num() reads a number of an mpvi context of at least its precision (rounded to its
    own), and refuses what would cap the precision: a number of a context with fewer
    bits, an mpmath number of another context (global mpmath.mp included: its precision
    at creation cannot be told), a gmpy2 number or a sympy Float of fewer bits.  lift()
    takes such a number deliberately and keeps its bits."""
    import gmpy2
    import sympy
    c64, c80 = C(64), C(80)
    with c80.active():    # bare arithmetic on gmpy2 numbers at the context's precision
        x80 = c80.num(1) / 3
        x64 = c64.num(x80)                          # more bits: rounded
        assert c64.is_number(x64)
        assert abs(R(x64) - REF.mpf(1) / 3) <= R(c64.eps)
        with c64.active():
            third64 = c64.num(1) / 3
        assert x64 == third64                       # correctly rounded: the same bits
        # fewer bits: refused, naming both precisions
        with pytest.raises(PrecisionError, match="64-digit context.*in a 80-digit context"):
            c80.num(third64)
        # an mpmath number of another context: refused, pointing to lift
        for other in (mpmath.mpf(3), REF.mpf(1) / 3):
            with pytest.raises(PrecisionError, match="another context.*lift"):
                c64.num(other)
        # a gmpy2 number of fewer bits than the context
        with pytest.raises(PrecisionError, match="in a 64-digit context"):
            c64.num(gmpy2.mpfr("0.1", 53))
        # a sympy Float of fewer bits is refused; sympy Integer and Rational are exact
        with pytest.raises(PrecisionError, match="fewer than the context"):
            c64.num(sympy.Float("0.1", 15))
        assert c64.num(sympy.Rational(1, 3)) == third64
        assert c64.num(sympy.Integer(-7)) == -7
        # lift keeps the bits as they are: a lower precision stays lower
        y = c80.lift(third64)
        assert c80.is_number(y) and R(y) == R(third64) and y != c80.num(1) / 3
        assert c64.lift(mpmath.mpf(3)) == 3 and c64.is_number(c64.lift(mpmath.mpf(3)))
        assert R(c64.lift(0.1)) == REF.mpf(0.1)     # a float, with its 53 bits


def test_numbers_convert_exactly_between_mp_and_gmp():
    """A number of either arbitrary-precision context enters the other with its bits."""
    m, g = MPContext(64), GMPContext(64)
    for s in ("0.1", "-1/3", "1e-300", "123456789.123456789"):
        assert R(g.num(m.num(s))) == R(m.num(s))
        assert R(m.num(g.num(s))) == R(g.num(s))
        assert R(m.num(s)) - R(g.num(s)) == 0       # both correctly rounded: the same bits
    assert fp.num(g.num(1) / 3) == 1 / 3


def test_gmp_context_pickles_and_keeps_its_precision_per_call():
    import pickle
    g64, g80 = GMPContext(64), GMPContext(80)
    assert pickle.loads(pickle.dumps(g64)).dps == 64
    with g64.active():
        x = g64.num(1) / 3
    assert pickle.loads(pickle.dumps(x)) == x
    # each context's methods compute at its own precision, whichever was used last
    a80 = g80.sqrt(g80.num(2))
    a64 = g64.sqrt(g64.num(2))
    assert abs(R(a80) - REF.sqrt(2)) <= R(g80.eps) < R(g64.eps)
    assert (a80.precision, a64.precision) == (g80.prec, g64.prec)
    # and active() scopes bare arithmetic
    with g80.active():
        assert (g80.num(1) / 3).precision == g80.prec
        with g64.active():
            assert (g64.num(1) / 3) == x
        assert (g80.num(1) / 3).precision == g80.prec


@pytest.mark.parametrize("C", ARB, ids=ARB_IDS)
def test_special_functions_agree(C):
    """The mpmath-delegated functions of the gmp context equal the mp context's."""
    c, m = C(64), MPContext(64)
    with c.active():    # bare arithmetic on gmpy2 numbers at the context's precision
        q, z = c.num("0.1"), c.num("0.3")
        # (mpmath may return a few guard bits more than its precision; the gmp context rounds)
        assert ref_diff([c.jtheta(1, z, q)], [m.jtheta(1, m.num("0.3"), m.num("0.1"))]) <= R(c.eps)
        assert ref_diff([c.ellipk(c.num("1/2"))], [m.ellipk(m.num("1/2"))]) <= R(c.eps)
        assert abs(R(c.quad(lambda t: c.sin(t), [0, c.pi])) - 2) < 100 * R(c.eps)
        root = c.findroot(lambda t: c.cos(t) - t, c.num(1))
        assert c.is_number(root) and abs(R(c.cos(root) - root)) < 10 * R(c.eps)
        # callbacks run at mpmath's raised working precision: one-sided finite differences
        # of exp at 0 are 1, not 0 (a step below the context's eps would round away)
        for k in (1, 2, 3):
            for direction in (1, -1):
                d = c.diff(lambda t: c.exp(t), c.zero, k, direction=direction)
                assert abs(R(d) - 1) < REF.mpf(10) ** -40
        w = c.csqrt(c.num(-4))
        assert c.is_complex(w) and c.re(w) == 0 and c.im(w) == 2
        for name in ("sin", "cos", "exp", "log", "sqrt", "atan", "tan", "sinh", "cosh", "tanh"):
            x = c.num("0.7")
            assert abs(R(getattr(c, name)(x)) - getattr(REF, name)(REF.mpf(7) / 10)) <= 2 * R(c.eps)
        assert abs(R(c.atan2(c.num(1), c.num(-1))) - 3 * REF.pi / 4) <= 2 * R(c.eps)
        assert c.to_str(c.num(1) / 3) == m.to_str(m.num(1) / 3)


def test_fp_num_accepts_mp_numbers():
    """FPContext.num lists mpmath.mpf among its accepted inputs; the numbers of an
    MPContext (e.g. mpvi.mp) must convert to the nearest float."""
    c64 = MPContext(64)
    assert abs(fp.num(c64.num(1) / 3) - 1 / 3) <= fp.eps
    assert fp.num(mpvi.mp.pi) == np.pi


# ----- linear algebra --------------------------------------------------------------------

@pytest.mark.parametrize("ctx", [MPContext(64), MPContext(30), GMPContext(64), GMPContext(30), fp],
                         ids=["mp64", "mp30", "gmp64", "gmp30", "fp"])
def test_solve_and_inv_known_results(ctx):
    with ctx.active():    # bare arithmetic on gmpy2 numbers at the context's precision
        A = ctx.matrix([[2, 1, 1], [1, 3, 2], [1, 0, 0]])
        b = ctx.vector([4, 5, 6])
        Ainv_exact = [[0, 0, 1], [-2, 1, 3], [3, -1, -5]]       # det A = -1
        x_exact = [6, 15, -23]
        tol = 100 * ctx.eps * 23
        x = ctx.solve(A, b)
        assert max(abs(xi - ei) for xi, ei in zip(x, x_exact)) < tol
        Ainv = ctx.inv(A)
        assert ctx.norm_inf(Ainv - ctx.asarray(Ainv_exact)) < tol
        assert ctx.norm_inf(A @ Ainv - ctx.eye(3)) < tol
        # a matrix right-hand side
        X = ctx.solve(A, ctx.asarray([[4, 1], [5, 0], [6, 0]]))
        assert ctx.norm_inf(X[:, 0] - ctx.asarray(x_exact)) < tol
        assert ctx.norm_inf(X[:, 1] - ctx.asarray([0, -2, 3])) < tol
        # a pivoting case (zero leading entry) with an exact answer
        P = ctx.matrix([[0, 1], [1, 0]])
        y = ctx.solve(P, ctx.vector([2, 3]))
        assert list(y) == [3, 2]
        # the mp solve is at context precision, not float precision
        if ctx.is_mp:
            H = ctx.matrix([[Fraction(1, i + j + 1) for j in range(3)] for i in range(3)])
            z = ctx.solve(H, ctx.vector([1, 0, 0]))
            assert ctx.norm_inf(z - ctx.asarray([9, -36, 30])) < 1e4 * ctx.eps * 36


@pytest.mark.parametrize("ctx", [MPContext(64), GMPContext(64), fp], ids=["mp64", "gmp64", "fp"])
def test_singular_and_not_pd(ctx):
    with ctx.active():    # bare arithmetic on gmpy2 numbers at the context's precision
        with pytest.raises(SingularMatrixError):
            ctx.solve(ctx.matrix([[1, 2], [2, 4]]), ctx.vector([1, 1]))
        with pytest.raises(SingularMatrixError):
            ctx.inv(ctx.zeros((2, 2)))
        with pytest.raises(SingularMatrixError):
            ctx.inv(ctx.matrix([[1, 2, 3], [4, 5, 6], [7, 8, 9]]))
        # singular in exact arithmetic, but the rounded entries leave a pivot ~eps, not 0
        with pytest.raises(SingularMatrixError, match="working precision"):
            ctx.solve(ctx.matrix([[1, Fraction(1, 3)], [Fraction(1, 3), Fraction(1, 9)]]),
                      ctx.vector([1, 1]))
        with pytest.raises(ValueError):
            ctx.solve(ctx.eye(2), ctx.vector([1, 2, 3]))
        with pytest.raises(NotPositiveDefiniteError, match="my matrix"):
            ctx.cholesky(ctx.matrix([[1, 2], [2, 1]]), "my matrix")
        with pytest.raises(NotPositiveDefiniteError):
            ctx.cholesky(ctx.matrix([[1, 0], [0, 0]]))
        with pytest.raises(NotPositiveDefiniteError):
            ctx.cholesky(ctx.matrix([[-1]]))
        # and a PD one factors correctly
        A = ctx.asarray(M3)
        L = ctx.cholesky(A)
        assert all(L[i, j] == 0 for i in range(3) for j in range(i + 1, 3))
        assert ctx.norm_inf(L @ L.T - A) < 10 * 3 * ctx.eps * ctx.norm_inf(A)


@pytest.mark.parametrize("ctx", [MPContext(64), MPContext(30), GMPContext(64), GMPContext(30), fp],
                         ids=["mp64", "mp30", "gmp64", "gmp30", "fp"])
def test_eigh_generalized(ctx):
    with ctx.active():    # bare arithmetic on gmpy2 numbers at the context's precision
        M = ctx.asarray(M3)
        K = ctx.asarray(K3)
        n = 3
        lam, V = ctx.eigh_generalized(K, M)
        scale = ctx.norm_inf(K) + ctx.norm_inf(M)
        tol = 10 * n * ctx.eps * scale
        assert ctx.norm_inf(V.T @ M @ V - ctx.eye(n)) < tol
        assert ctx.norm_inf(K @ V - (M @ V) * lam) < tol
        assert lam[0] < lam[1] < lam[2]
        # the eigenvalues are the roots of det(K - lam M)
        for l in lam:
            D = K - l * M
            det = (D[0, 0] * (D[1, 1] * D[2, 2] - D[1, 2] * D[2, 1])
                   - D[0, 1] * (D[1, 0] * D[2, 2] - D[1, 2] * D[2, 0])
                   + D[0, 2] * (D[1, 0] * D[2, 1] - D[1, 1] * D[2, 0]))
            assert abs(det) < 100 * ctx.eps * scale ** 3
        # the three contexts agree on the eigenvalues to float precision
        lam_fp, _ = fp.eigh_generalized(fp.asarray(K3), fp.asarray(M3))
        assert max(abs(float(a) - b) for a, b in zip(lam, lam_fp)) < 10 * fp.eps * 3


@pytest.mark.parametrize("C", ARB, ids=ARB_IDS)
def test_check_symmetric(C):
    c = C(64)
    c.check_symmetric(c.asarray(M3), "M")
    with pytest.raises(ValueError, match="not symmetric"):
        c.check_symmetric(c.matrix([[1, 2], [3, 1]]), "Q")
    with pytest.raises(ValueError, match="square"):
        c.check_symmetric(c.matrix([[1, 2, 3], [2, 1, 0]]), "Q")
    # an asymmetry at the 1e-40 level is real at 64 digits ...
    with pytest.raises(ValueError):
        c.check_symmetric(c.matrix([[1, "1e-40"], [0, 1]]), "Q")
    # ... but not in float64
    fp.check_symmetric(fp.matrix([[1, 1e-40], [0, 1]]), "Q")
