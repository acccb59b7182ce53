"""The sum of products of the Taylor recurrences, rounded once (mpvi.numbers.series.series_dot):
the compiled C (mpvi_dot.h, written by hand), the gmp context's Python and the mp
context's Python each give the exact sum rounded to nearest (an exact rational, rounded by
MPFR), on sums built to be hard: operands of mixed precisions, wide and narrow exponent
spreads (the C's fast and slow paths), cancellation to zero and to a few bits, ties, zeros,
nans and infinities, a folded square."""
import random
from fractions import Fraction

import gmpy2
import mpmath
from mpmath.libmp import from_man_exp
import pytest
from charness import module_tail

from mpvi.compiled import cbackend
from mpvi.compiled.croutine import NATIVE_ROUTINES, routines_c
from mpvi.numbers import series
from mpvi.numbers.series import series_dot, series_mul, series_sqr

needs_toolchain = pytest.mark.skipif(
    "error" in cbackend.toolchain(),
    reason=f"no toolchain for compiled kernels: {cbackend.toolchain().get('error')}")

# A test harness (not library code): the C of series_dot behind one Python function.
HARNESS = r"""
#define PREC 64
#define MPVI_MODULE {name}
#include "mpvi_runtime.h"
{routines}
#define NMAX 64
static mpfr_t A[NMAX], B[NMAX], OUT[1], START;

static int hx_read(PyObject *seq, mpfr_t *out, Py_ssize_t *count) {{
    PyObject *s = PySequence_Fast(seq, "a sequence");
    if (s == NULL) return 0;
    *count = PySequence_Fast_GET_SIZE(s);
    if (*count > NMAX) {{ Py_DECREF(s); PyErr_SetString(PyExc_ValueError, "size"); return 0; }}
    for (Py_ssize_t i = 0; i < *count; i++) {{
        PyObject *x = PySequence_Fast_GET_ITEM(s, i);
        if (!MPFR_Check(x)) {{ Py_DECREF(s); PyErr_SetString(PyExc_TypeError, "mpfr"); return 0; }}
        mpfr_set_prec(out[i], mpfr_get_prec(MPFR(x)));
        mpfr_set(out[i], MPFR(x), MPFR_RNDN);
    }}
    Py_DECREF(s);
    return 1;
}}

/* dot(prec, start, s, a, b or None (b is a), lo, hi, k): series_dot's C into a number of prec bits */
static PyObject *dot(PyObject *self, PyObject *args) {{
    (void)self;
    long prec, s, lo, hi, k; PyObject *start, *a, *b;
    Py_ssize_t na, nb;
    if (!PyArg_ParseTuple(args, "lOlOOlll", &prec, &start, &s, &a, &b, &lo, &hi, &k)) return NULL;
    if (!MPFR_Check(start)) {{ PyErr_SetString(PyExc_TypeError, "start"); return NULL; }}
    if (!hx_read(a, A, &na)) return NULL;
    if (b != Py_None && !hx_read(b, B, &nb)) return NULL;
    mpfr_set_prec(START, mpfr_get_prec(MPFR(start)));
    mpfr_set(START, MPFR(start), MPFR_RNDN);
    mpfr_set_prec(OUT[0], prec);
    mpvi_series_dot(OUT, 0, START, A, b == Py_None ? A : B, lo, hi, k, s);
    PyObject *o = (PyObject *)GMPy_MPFR_New(prec, NULL);
    mpfr_set(MPFR(o), OUT[0], MPFR_RNDN);
    return o;
}}

"""


@pytest.fixture(scope="module")
def compiled():
    if "error" in cbackend.toolchain():
        pytest.skip("no toolchain for compiled kernels")
    routines = "\n".join(routines_c([series_dot]))
    source = HARNESS.format(name="mpvi_xseriesdot", routines=routines) + module_tail(
        [("dot", "dot", "series_dot's C")],
        "    for (int i = 0; i < NMAX; i++) { mpfr_init2(A[i], 64); mpfr_init2(B[i], 64); }\n"
        "    mpfr_init2(OUT[0], 64); mpfr_init2(START, 64);")
    return cbackend._load_or_build("mpvi_xseriesdot", source, cbackend.toolchain())


def exact(start, s, a, b, lo, hi, k):
    """The sum as a Fraction (None where a number is not finite)."""
    values = ([start] if s else []) + [x for j in range(lo, hi + 1) for x in (a[j], b[k - j])]
    if not all(gmpy2.is_finite(x) for x in values):
        return None
    total = sum((Fraction(*a[j].as_integer_ratio()) * Fraction(*b[k - j].as_integer_ratio())
                 for j in range(lo, hi + 1)), Fraction(0))
    if s:
        total = Fraction(*start.as_integer_ratio()) + s * total
    return total


def rounded(q, prec):
    """The Fraction q rounded to nearest at prec bits (MPFR's mpfr_set_q), +0 for 0."""
    with gmpy2.context(precision=prec):
        return gmpy2.mpfr(gmpy2.mpq(q.numerator, q.denominator)) if q else gmpy2.mpfr(0)


def number(rng, prec, spread):
    """A random mpfr of prec bits, sign and exponent within +-spread."""
    with gmpy2.context(precision=prec):
        x = gmpy2.mpfr(rng.getrandbits(prec) | 1) / 2 ** prec
        x = gmpy2.mul_2exp(x, rng.randint(-spread, spread))
        return -x if rng.random() < 0.5 else x


def cases(seed=7):
    """(name, prec of the result, start, s, a, b, lo, hi, k): random sums over the paths."""
    rng = random.Random(seed)
    out = []
    for n in (1, 2, 5, 17, 40):
        for prec in (53, 63, 64, 127, 216, 429, 1100):
            for spread in (0, 40, 3000, 10000):
                for s in (0, 1, -1):
                    a = [number(rng, rng.choice((prec, prec, 63, 191, 216)), spread)
                         for _ in range(n)]
                    b = [number(rng, rng.choice((prec, prec, 127, 216)), spread)
                         for _ in range(n)]
                    start = number(rng, prec, spread)
                    lo = rng.randint(0, n - 1)
                    out.append((f"n{n} p{prec} spread{spread} s{s}", prec, start, s, a, b,
                                lo, n - 1, n - 1 + lo if rng.random() < 0.5 else n - 1))
    return [c for c in out if all(0 <= c[8] - j < len(c[5]) for j in range(c[6], c[7] + 1))]


def adversarial():
    """Cancellation to zero and to a few bits, exact ties, zeros, nans and infinities."""
    with gmpy2.context(precision=216):
        one, tiny = gmpy2.mpfr(1), gmpy2.mpfr(2) ** -300
        x, y = gmpy2.mpfr(1) / 3, gmpy2.mpfr(2) / 7
        third = gmpy2.mpfr(1) / 3
    tie = gmpy2.mpfr(1) + gmpy2.mpfr(2) ** -53              # 53 bits: 1 + half an ulp
    return [
        ("cancels to zero", 216, one, 0, [x, -x], [y, y], 0, 1, 1),
        ("cancels to the start", 216, x * y, -1, [x], [y], 0, 0, 0),
        ("cancels to a few bits", 64, one, -1, [one, tiny], [one, one], 0, 1, 1),
        ("a tie, to even", 53, one, 1, [tie - 1], [one], 0, 0, 0),
        ("above a tie", 53, one, 1, [tie - 1, tiny], [one, one], 0, 1, 1),
        ("zeros", 216, gmpy2.mpfr(0), 1, [gmpy2.mpfr(0), x], [y, gmpy2.mpfr(0)], 0, 1, 1),
        ("an empty sum", 100, third, -1, [x], [y], 1, 0, 1),
        ("a nan", 216, one, 1, [x, gmpy2.nan()], [y, y], 0, 1, 1),
        ("an infinity", 216, one, 1, [x, gmpy2.inf()], [y, y], 0, 1, 1),
        ("infinities that cancel", 216, gmpy2.inf(), -1, [one], [gmpy2.inf()], 0, 0, 0),
        ("zero times infinity", 216, one, 0, [gmpy2.mpfr(0), x], [y, gmpy2.inf()], 0, 1, 1),
    ]


def python_dot(prec, start, s, a, b, lo, hi, k):
    out = [None]
    with gmpy2.context(precision=prec):
        series_dot(out, 0, start, a, b, lo, hi, k, s)
    return out[0]


def same(x, y):
    return (x != x and y != y) or (x == y and (x != 0 or str(x) == str(y)))


def test_the_python_sum_is_the_exact_sum_rounded_once():
    """The gmp context's series_dot: the exact rational sum, rounded once, on every case."""
    for name, prec, start, s, a, b, lo, hi, k in cases() + adversarial():
        got = python_dot(prec, start, s, a, b, lo, hi, k)
        want = exact(start, s, a, b, lo, hi, k)
        if want is None:
            continue
        assert same(got, rounded(want, prec)), name


@needs_toolchain
def test_the_compiled_sum_gives_the_python_bits(compiled):
    """The C (fast path, slow path, specials) gives series_dot's bits on every case, and a
    folded square (a is b, lo + hi = k) the unfolded sum's."""
    for name, prec, start, s, a, b, lo, hi, k in cases() + adversarial():
        want = python_dot(prec, start, s, a, b, lo, hi, k)
        assert same(compiled.dot(prec, start, s, a, b, lo, hi, k), want), name
    rng = random.Random(3)
    for n in (1, 2, 3, 8, 33):
        for prec in (63, 216, 1100):
            a = [number(rng, prec, 20) for _ in range(n)]
            for lo in range(0, (n + 1) // 2):
                for s in (0, -1):
                    k = n - 1
                    hi = k - lo
                    folded = compiled.dot(prec, a[0], s, a, None, lo, hi, k)
                    assert same(folded, python_dot(prec, a[0], s, a, a, lo, hi, k)), (n, lo)
                    want = exact(a[0], s, a, a, lo, hi, k)
                    assert same(folded, rounded(want, prec)), (n, prec, lo, s)


def test_the_mp_context_rounds_the_exact_sum_as_the_gmp_context_does():
    """mpmath numbers: the same exact sum, rounded at mpmath's precision, as MPFR rounds it."""
    ctx = mpmath.MPContext()
    for name, prec, start, s, a, b, lo, hi, k in cases(11) + adversarial():
        if exact(start, s, a, b, lo, hi, k) is None:
            continue
        ctx.prec = prec
        A, B, S = [mp_exact(ctx, x) for x in a], [mp_exact(ctx, x) for x in b], \
            mp_exact(ctx, start)
        out = [None]
        series_dot(out, 0, S, A, B, lo, hi, k, s)
        want = python_dot(prec, start, s, a, b, lo, hi, k)
        assert out[0]._mpf_ == mp_exact(ctx, want)._mpf_, name


def mp_exact(ctx, x):
    """The mpfr x as an mpmath number, exactly (any precision)."""
    m, e = x.as_mantissa_exp()
    return ctx.make_mpf(from_man_exp(int(m), int(e)))


def test_floats_are_summed_in_order():
    """Numbers with no exact sum here (floats) keep the sum in order, as before."""
    a, b = [0.1, 0.2, 0.3], [0.7, 0.11, 0.13]
    d = [None] * 3
    series_mul(d, a, b, 2)
    assert d[2] == (0.1 * 0.13 + 0.2 * 0.11) + 0.3 * 0.7
    series_sqr(d, a, 2)
    assert d[2] == (0.1 * 0.3 + 0.2 * 0.2) + 0.3 * 0.1


def test_the_c_of_series_dot_is_the_hand_written_header():
    """series_dot is the one routine written in C by hand: its C is the header's include,
    and the translated recurrences call it."""
    assert NATIVE_ROUTINES == {("mpvi.numbers.series", "series_dot"): "mpvi_dot.h"}
    text = "\n".join(routines_c([series_mul]))
    assert '#include "mpvi_dot.h"' in text
    assert "mpvi_series_dot(v_d, v_k, v_a[0L], v_a, v_b, 0L, v_k, v_k, 0L);" in text
    assert series.series_dot.__module__ == "mpvi.numbers.series"
