"""The routines written once (mpvi/compiled/croutine.py): the C generated from the Python
of mpvi.numbers.linalg, compiled, gives the Python's bits, statuses and messages' numbers
on the same inputs; the subset's limits are clear errors; and the C follows the Python
source (an edited copy of a routine gives other C)."""
import random
import textwrap
from typing import Callable

import gmpy2
import pytest
from charness import module_tail

import mpvi
from mpvi.compiled import cbackend, cmodules
from mpvi.compiled.croutine import (Unsupported, routine_c, routine_calls, routine_source,
                                    translate_routine)
from mpvi.numbers import linalg
from mpvi.numbers.explicit import gbs_core, rk4_core
from mpvi.numbers.linalg import (SingularMatrixError, gauss_eliminate, is_positive_definite,
                                 ldl_positive, linear_combination, max_norm, solve_dense)
from mpvi.ground.types import Real
from mpvi.numbers.newton import (double_start, newton_core, newton_update, refined_update,
                                 scaled_solve, start_update)

needs_toolchain = pytest.mark.skipif(
    "error" in cbackend.toolchain(),
    reason=f"no toolchain for compiled kernels: {cbackend.toolchain().get('error')}")

NMAX = 8

# A test harness (not library code): the generated routines behind two Python functions.
HARNESS = r"""
#define PREC {prec}
#define MPVI_MODULE {name}
#define NMAX {nmax}
#include "mpvi_runtime.h"
{routines}
static mpfr_t A[NMAX][NMAX], B[NMAX][NMAX], X[NMAX][NMAX], O[2], D[NMAX], L[NMAX][NMAX], EPS;
static mpfr_t *Ar[NMAX], *Br[NMAX], *Xr[NMAX], *Lr[NMAX];

static int hx_read(PyObject *seq, Py_ssize_t count, mpfr_t *out, Py_ssize_t stride, Py_ssize_t width) {{
    PyObject *s = PySequence_Fast(seq, "a sequence");
    if (s == NULL) return 0;
    if (PySequence_Fast_GET_SIZE(s) != count) {{ Py_DECREF(s); PyErr_SetString(PyExc_ValueError, "size"); return 0; }}
    for (Py_ssize_t i = 0; i < count; i++) {{
        PyObject *x = PySequence_Fast_GET_ITEM(s, i);
        if (!MPFR_Check(x) || mpfr_get_prec(MPFR(x)) != PREC) {{
            Py_DECREF(s); PyErr_SetString(PyExc_TypeError, "mpfr at PREC"); return 0;
        }}
        mpfr_set(out[(i / width) * stride + i % width], MPFR(x), MPFR_RNDN);
    }}
    Py_DECREF(s);
    return 1;
}}

static PyObject *hx_numbers(mpfr_t *v, Py_ssize_t count, Py_ssize_t stride, Py_ssize_t width) {{
    PyObject *list = PyList_New(count);
    for (Py_ssize_t i = 0; list && i < count; i++) {{
        PyObject *o = (PyObject *)GMPy_MPFR_New(PREC, NULL);
        mpfr_set(MPFR(o), v[(i / width) * stride + i % width], MPFR_RNDN);
        PyList_SET_ITEM(list, i, o);
    }}
    return list;
}}

/* gauss(n, m, a, b, eps): (status, x, out) of the generated elimination */
static PyObject *gauss(PyObject *self, PyObject *args) {{
    (void)self;
    long n, m; PyObject *a, *b, *eps;
    if (!PyArg_ParseTuple(args, "llOOO", &n, &m, &a, &b, &eps)) return NULL;
    if (n < 1 || n > NMAX || m < 1 || m > NMAX) {{ PyErr_SetString(PyExc_ValueError, "n, m"); return NULL; }}
    if (!hx_read(a, n * n, &A[0][0], NMAX, n) || !hx_read(b, n * m, &B[0][0], NMAX, m)) return NULL;
    if (!MPFR_Check(eps)) {{ PyErr_SetString(PyExc_TypeError, "eps"); return NULL; }}
    mpfr_set(EPS, MPFR(eps), MPFR_RNDN);
    mpfr_set_nan(O[0]); mpfr_set_nan(O[1]);
    for (int i = 0; i < NMAX; i++) {{ Ar[i] = A[i]; Br[i] = B[i]; Xr[i] = X[i]; }}
    long status = mpvi_gauss_eliminate(n, m, Ar, Br, Xr, EPS, O);
    return Py_BuildValue("lNN", status, hx_numbers(&X[0][0], n * m, NMAX, m), hx_numbers(O, 2, 2, 2));
}}

/* gaussd(n, m, a, b, eps): (status, x, out) of the elimination generated on doubles */
static double DA[NMAX][NMAX], DB[NMAX][NMAX], DX[NMAX][NMAX], DO[2];
static double *DAr[NMAX], *DBr[NMAX], *DXr[NMAX];
static int hx_doubles(PyObject *seq, Py_ssize_t count, double *out, Py_ssize_t width) {{
    PyObject *s = PySequence_Fast(seq, "a sequence");
    if (s == NULL) return 0;
    for (Py_ssize_t i = 0; i < count && i < PySequence_Fast_GET_SIZE(s); i++)
        out[(i / width) * NMAX + i % width] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(s, i));
    Py_DECREF(s);
    return !PyErr_Occurred();
}}
static PyObject *hx_floats(double *v, Py_ssize_t count, Py_ssize_t stride, Py_ssize_t width) {{
    PyObject *list = PyList_New(count);
    for (Py_ssize_t i = 0; list && i < count; i++)
        PyList_SET_ITEM(list, i, PyFloat_FromDouble(v[(i / width) * stride + i % width]));
    return list;
}}
static PyObject *gaussd(PyObject *self, PyObject *args) {{
    (void)self;
    long n, m; PyObject *a, *b; double eps;
    if (!PyArg_ParseTuple(args, "llOOd", &n, &m, &a, &b, &eps)) return NULL;
    if (n < 1 || n > NMAX || m < 1 || m > NMAX) {{ PyErr_SetString(PyExc_ValueError, "n, m"); return NULL; }}
    if (!hx_doubles(a, n * n, &DA[0][0], n) || !hx_doubles(b, n * m, &DB[0][0], m)) return NULL;
    DO[0] = DO[1] = NAN;
    for (int i = 0; i < NMAX; i++) {{ DAr[i] = DA[i]; DBr[i] = DB[i]; DXr[i] = DX[i]; }}
    long status = mpvi_gauss_eliminate_d(n, m, DAr, DBr, DXr, eps, DO);
    return Py_BuildValue("lNN", status, hx_floats(&DX[0][0], n * m, NMAX, m), hx_floats(DO, 2, 2, 2));
}}

/* ldl(n, a): the generated LDL^T test and its pivots d */
static PyObject *ldl(PyObject *self, PyObject *args) {{
    (void)self;
    long n; PyObject *a;
    if (!PyArg_ParseTuple(args, "lO", &n, &a)) return NULL;
    if (n < 1 || n > NMAX) {{ PyErr_SetString(PyExc_ValueError, "n"); return NULL; }}
    if (!hx_read(a, n * n, &A[0][0], NMAX, n)) return NULL;
    for (int i = 0; i < NMAX; i++) {{ Ar[i] = A[i]; Lr[i] = L[i]; mpfr_set_nan(D[i]); }}
    int ok = mpvi_ldl_positive(n, Ar, D, Lr);
    return Py_BuildValue("ON", ok ? Py_True : Py_False, hx_numbers(D, n, 1, 1));
}}

/* the test field f(t, y) = (y1, t - y0 y1 / 3), undefined (0) once |y0| > 10 */
static mpfr_t W1, W2, Y[2], K[4][2], Z[4][2], OUT[2], *PR[64], *CR[64], ROWS[2][64][2], ONE, T, H;
static long field_calls = 0, fail_at = -1;
static int field(mpfr_srcptr t, mpfr_t *y, mpfr_t *out) {{
    if (field_calls++ == fail_at || mpfr_cmpabs_ui(y[0], 10) > 0) return 0;
    mpfr_mul(W1, y[0], y[1], MPFR_RNDN);
    mpfr_div_si(W1, W1, 3, MPFR_RNDN);
    mpfr_sub(W2, t, W1, MPFR_RNDN);
    mpfr_set(out[0], y[1], MPFR_RNDN);
    mpfr_set(out[1], W2, MPFR_RNDN);
    return 1;
}}

/* step(kind, t, y, h, levels, fail_at): (ok, y1, field calls) of the generated RK4 (0) or GBS (1) */
static PyObject *step(PyObject *self, PyObject *args) {{
    (void)self;
    long kind, levels; PyObject *t, *y, *h;
    if (!PyArg_ParseTuple(args, "lOOOll", &kind, &t, &y, &h, &levels, &fail_at)) return NULL;
    if (levels < 1 || levels > 64) {{ PyErr_SetString(PyExc_ValueError, "levels"); return NULL; }}
    if (!hx_read(y, 2, Y, 1, 1) || !hx_read(Py_BuildValue("[OO]", t, h), 2, Z[3], 1, 1)) return NULL;
    mpfr_set(T, Z[3][0], MPFR_RNDN); mpfr_set(H, Z[3][1], MPFR_RNDN);
    field_calls = 0;
    for (int i = 0; i < 64; i++) {{ PR[i] = ROWS[0][i]; CR[i] = ROWS[1][i]; }}
    int ok = kind == 0 ? mpvi_rk4_core(2, field, T, Y, H, K[0], K[1], K[2], K[3], Z[0], OUT)
                       : mpvi_gbs_core(2, field, T, Y, H, levels, ONE, K[0], Z[0], Z[1], Z[2], Z[3], PR, CR, OUT);
    return Py_BuildValue("ONl", ok ? Py_True : Py_False, hx_numbers(OUT, 2, 1, 1), field_calls);
}}

"""


HARNESS_INIT = """\
    mpvi_init_limit();
    ready = 1;
    mpvi_gauss_eliminate_init();
    mpvi_gauss_eliminate_d_init();
    mpvi_ldl_positive_init();
    mpvi_init_array(&A[0][0], NMAX * NMAX, PREC); mpvi_init_array(&B[0][0], NMAX * NMAX, PREC);
    mpvi_init_array(&X[0][0], NMAX * NMAX, PREC); mpvi_init_array(&L[0][0], NMAX * NMAX, PREC);
    mpvi_init_array(O, 2, PREC); mpvi_init_array(D, NMAX, PREC); mpfr_init2(EPS, PREC);
    mpvi_rk4_core_init(); mpvi_gbs_core_init();
    mpfr_inits2(PREC, W1, W2, ONE, T, H, (mpfr_ptr)0); mpfr_set_si(ONE, 1, MPFR_RNDN);
    mpvi_init_array(Y, 2, PREC); mpvi_init_array(OUT, 2, PREC);
    mpvi_init_array(&K[0][0], 8, PREC); mpvi_init_array(&Z[0][0], 8, PREC);
    mpvi_init_array(&ROWS[0][0][0], 2 * 64 * 2, PREC);"""


def harness(prec: int):
    """The compiled harness at ``prec`` bits, the routines generated from today's Python."""
    routines = (routine_c(gauss_eliminate) + routine_c(gauss_eliminate, doubles=True)
                + routine_c(ldl_positive) + routine_c(rk4_core) + routine_c(gbs_core))
    name = f"mpvi_xroutines{prec}"
    source = HARNESS.format(prec=prec, name=name, nmax=NMAX, routines=routines) + module_tail(
        [("step", "step", "the generated RK4 and GBS steps"),
         ("gauss", "gauss", "the generated elimination"),
         ("gaussd", "gaussd", "the generated elimination on doubles"),
         ("ldl", "ldl", "the generated LDL^T test")], HARNESS_INIT)
    return cbackend._load_or_build(name, source, cbackend.toolchain())


def same(x, y):
    return len(x) == len(y) and all(
        (a == b and a.precision == b.precision) or (a != a and b != b) for a, b in zip(x, y))


def matrix(rng, ctx, n, kind):
    """An n x n matrix of the context: random, symmetric positive definite, singular (a row
    a multiple of another), with a zero pivot needing a swap, or with a nan."""
    num = lambda: ctx.num(rng.randint(-10 ** 6, 10 ** 6)) / ctx.num(rng.randint(1, 10 ** 6))
    a = [[num() for _ in range(n)] for _ in range(n)]
    if kind == "spd":
        a = [[sum((a[k][i] * a[k][j] for k in range(n)), ctx.num(0)) + (n if i == j else 0)
              for j in range(n)] for i in range(n)]
    elif kind == "singular" and n > 1:
        a[n - 1] = [3 * v for v in a[0]]
    elif kind == "swap":
        a[0][0] = ctx.num(0)
    elif kind == "nan":
        a[n // 2][n - 1] = gmpy2.nan()
    elif kind == "indefinite":
        a = [[a[i][j] + a[j][i] for j in range(n)] for i in range(n)]
    return a


@needs_toolchain
@pytest.mark.parametrize("dps", [15, 30, 64])
def test_generated_elimination_gives_the_python_bits(dps):
    """On random, pivoting, singular, nan and multi-right-hand-side systems of 1 to 6
    unknowns: the same status (solved, the failing column, the zero/non-finite matrix),
    the same x and the same pivot and threshold numbers, bit for bit."""
    ctx = mpvi.GMPContext(dps)
    module = harness(ctx.prec)
    rng = random.Random(dps)
    statuses = set()
    for n in range(1, 7):
        for kind in ("random", "spd", "swap", "singular", "nan", "zero"):
            for m in (1, 2):
                a = matrix(rng, ctx, n, kind) if kind != "zero" else \
                    [[ctx.num(0)] * n for _ in range(n)]
                b = [[matrix(rng, ctx, 1, "random")[0][0] for _ in range(m)] for _ in range(n)]
                flat_a = [v for r in a for v in r]
                flat_b = [v for r in b for v in r]
                x = [[None] * m for _ in range(n)]
                out = [gmpy2.nan(), gmpy2.nan()]
                status = gauss_eliminate(n, m, [list(r) for r in a], [list(r) for r in b], x,
                                         ctx.eps, out)
                c_status, c_x, c_out = module.gauss(n, m, flat_a, flat_b, ctx.eps)
                assert c_status == status, (n, kind, m)
                statuses.add("solved" if status == n else "zero" if status < 0 else "pivot")
                if status == n:
                    assert same(c_x, [v for r in x for v in r]), (n, kind, m)
                elif status < 0:
                    assert same(c_out[:1], out[:1])
                else:
                    assert same(c_out, out)
    assert statuses == {"solved", "zero", "pivot"}


@needs_toolchain
def test_the_elimination_generated_on_doubles_gives_pythons_float_bits():
    """The same Python elimination run on floats and translated to C doubles
    (``routine_c(..., doubles=True)``: one IEEE operation per Python operation, no fused
    multiply-add): the same status, x and pivot numbers, bit for bit, on random,
    pivoting, singular, nan and zero systems."""
    module = harness(53)
    rng = random.Random(7)
    statuses = set()
    for n in range(1, 8):
        for kind in ("random", "spd", "swap", "singular", "nan", "zero"):
            for m in (1, 2):
                ctx = mpvi.GMPContext(15)
                a = [[float(v) for v in row] for row in matrix(rng, ctx, n, kind)] \
                    if kind != "zero" else [[0.0] * n for _ in range(n)]
                b = [[rng.uniform(-1, 1) for _ in range(m)] for _ in range(n)]
                x = [[0.0] * m for _ in range(n)]
                out = [float("nan")] * 2
                eps = 2.0 ** -52
                status = gauss_eliminate(n, m, [list(r) for r in a], [list(r) for r in b], x,
                                         eps, out)
                c_status, c_x, c_out = module.gaussd(n, m, [v for r in a for v in r],
                                                     [v for r in b for v in r], eps)
                assert c_status == status, (n, kind, m)
                statuses.add("solved" if status == n else "zero" if status < 0 else "pivot")
                got = c_x if status == n else c_out[:1 if status < 0 else 2]
                want = [v for r in x for v in r] if status == n else out[:len(got)]
                assert [v.hex() for v in got] == [v.hex() for v in want], (n, kind, m)
    assert statuses == {"solved", "zero", "pivot"}


def test_floats_mix_with_numbers_as_python_mixes_them():
    """float(x) is MPFR's round-to-nearest double, a number with a float one correctly
    rounded MPFR operation on the float converted exactly (as gmpy2 and mpmath do), float
    arithmetic C's doubles; what Python would do otherwise is refused."""
    source = textwrap.dedent("""
        def f(n: int, v: list[Real], d: list[float], x: Real) -> int:
            y = float(v[0] / x)
            if y - y == 0 and abs(y) > 2:
                d[0] = y * n - d[1]
            v[1] = x * d[0] + v[1]
            v[2] = d[1] - x
            v[3] = d[1] / v[2]
            return 0
    """)
    c = translate_routine(source, "f")
    assert "mpfr_get_d(" in c and "fabs(v_y)" in c and "((v_y * ((double)v_n)) - v_d[1L])" in c
    assert "mpfr_mul_d(" in c and "mpfr_d_sub(" in c and "mpfr_d_div(" in c
    for body, message in (("v[0] = d[0]", "a flt stored among nums"),
                          ("d[0] = v[0]", "a num stored among flts"),
                          ("y = d[0] ** 2", "power"),
                          ("y = d[0]\n    if y > n:\n        return 1", "comparison of a flt")):
        with pytest.raises(Unsupported, match=message):
            translate_routine(f"def f(n: int, v: list[Real], d: list[float]) -> int:\n"
                              f"    {body}\n    return 0\n", "f")


@needs_toolchain
@pytest.mark.parametrize("dps", [15, 64])
def test_generated_ldl_gives_the_python_answer_and_pivots(dps):
    """Positive definite, indefinite, random and nan matrices: the same answer and the same
    pivots d_j (bit for bit) as the Python LDL^T."""
    ctx = mpvi.GMPContext(dps)
    module = harness(ctx.prec)
    rng = random.Random(7 * dps)
    answers = set()
    for n in range(1, 7):
        for kind in ("spd", "indefinite", "random", "nan"):
            a = matrix(rng, ctx, n, kind)
            d = [gmpy2.nan()] * n
            ok = ldl_positive(n, a, d, [[None] * n for _ in range(n)])
            c_ok, c_d = module.ldl(n, [v for r in a for v in r])
            assert c_ok is ok and ok is is_positive_definite(a), (n, kind)
            answers.add(ok)
            assert same(c_d, d), (n, kind)     # the pivots before a failure too (nan: unset)
    assert answers == {True, False}


def test_solve_dense_keeps_its_contract_and_messages():
    """Numbers or rows of right-hand sides, int entries, the errors named."""
    ctx = mpvi.GMPContext(20)
    x = solve_dense([[2, 1], [1, 3]], [1, 2], ctx)
    assert all(abs(v - ctx.num(k) / 5) <= 8 * ctx.eps for v, k in zip(x, (1, 3)))
    rows = solve_dense([[2, 1], [1, 3]], [[1, 0], [2, 1]], ctx)
    assert same([r[0] for r in rows], x) and len(rows[0]) == 2
    with pytest.raises(SingularMatrixError, match="singular to working precision.*column 1"):
        solve_dense([[1, 2], [2, 4]], [1, 1], ctx)
    with pytest.raises(SingularMatrixError, match="the matrix is zero"):
        solve_dense([[0, 0], [0, 0]], [1, 1], ctx)
    with pytest.raises(SingularMatrixError, match="non-finite entry"):
        solve_dense([[gmpy2.nan(), 0], [0, 1]], [1, 1], ctx)
    with pytest.raises(ValueError, match="right-hand side"):
        solve_dense([[1, 0], [0, 1]], [1], ctx)


def test_the_generated_c_follows_the_python_source():
    """An edited copy of the Python routine (one operation changed) gives other C, and the
    C the modules include is generated from the module's current function."""
    source = routine_source(ldl_positive)
    c = translate_routine(source, "x")
    edited = source.replace("s -= li[k] * lj[k] * d[k]", "s += li[k] * lj[k] * d[k]")
    assert edited != source
    c2 = translate_routine(edited, "x")
    assert c2 != c and "mpfr_add(x_n_s, x_n_s" in c2 and "mpfr_add(x_n_s, x_n_s" not in c
    module = cmodules._module_source("t", "", "mpvi_check.h", {"PREC": 53}, [])
    assert routine_c(ldl_positive) in module
    assert "static int mpvi_ldl_positive(" in module


def test_the_kinds_include_the_routines_they_run():
    assert cmodules.ROUTINES["mpvi_newton.h"] == (newton_core, linear_combination)
    assert routine_calls(newton_core) == [double_start, start_update, max_norm,
                                          newton_update, refined_update]
    assert routine_calls(refined_update) == [max_norm, scaled_solve]
    assert routine_calls(start_update) == [max_norm, scaled_solve]
    assert routine_calls(scaled_solve) == [gauss_eliminate]
    assert routine_calls(double_start) == [newton_update]
    assert routine_calls(newton_update) == [gauss_eliminate]
    module = cmodules._module_source("t", "", "mpvi_newton.h", {"PREC": 53}, [])
    first = [module.index(f"static int mpvi_{name}(") for name in
             ("gauss_eliminate", "newton_update", "gauss_eliminate_d", "newton_update_d",
              "double_start", "max_norm", "scaled_solve", "start_update", "refined_update",
              "newton_core")]
    assert first == sorted(first) and module.count("static int mpvi_gauss_eliminate(") == 1
    # the elimination also on floats (refined_update's solves), once, in doubles
    assert module.count("static int mpvi_gauss_eliminate_d(long v_n, long v_m, double **v_a") == 1
    assert cmodules.ROUTINES["mpvi_check.h"] == (ldl_positive,)
    assert linalg.gauss_eliminate is gauss_eliminate


@pytest.mark.parametrize("body, message", [
    ("x = 1.5\n    return 0", "constant 1.5"),
    ("while True:\n        pass\n    return 0", "statement 'pass'"),
    ("a[0], a[1] = a[1], a[2]\n    return 0", "other than a swap"),
    ("for v in a:\n        n = 1\n    return 0", "range"),
    ("y = sqrt(a[0])\n    return 0", "sqrt"),
    ("a = a\n    return 0", "rebound"),
    ("n = n // n\n    return n", "FloorDiv other than by a positive literal"),
    ("x = a[0] ** a[1]\n    n = n ** 2\n    return n", "power of an int"),
    ("g(n)\n    return 0", "unknown name 'g'|the call"),
    ("x = a[0]\n    x = n > 1\n    return 0", "bool bound"),
    ("if n < 3 and abs(a[n]) > 0:\n        return 1\n    return 0", "computes a number"),
    ("for i in range(n):\n        i = 2\n    return 0", "assigned in its loop"),
    ("for i in range(n):\n        a[i] = a[0]\n    return i", "read after its loop"),
])
def test_the_subset_refuses_what_it_does_not_translate(body, message):
    source = f"def f(n: int, a: list[Real]) -> int:\n    {body}\n"
    with pytest.raises(Unsupported, match=message):
        translate_routine(source, "f")


def test_arguments_and_returns_must_be_annotated():
    with pytest.raises(Unsupported, match="annotated"):
        translate_routine("def f(n, a: list[Real]) -> int:\n    return 0\n", "f")
    with pytest.raises(Unsupported, match="returns"):
        translate_routine("def f(n: int) -> list:\n    return 0\n", "f")
    with pytest.raises(Unsupported, match="end in a return"):
        translate_routine("def f(n: int) -> int:\n    if n > 0:\n        return 1\n", "f")


def test_the_subset_translates_control_flow_with_pythons_meaning():
    source = textwrap.dedent("""
        def f(n: int, v: list[Real], x: Real) -> int:
            k = 0
            while k < n and not v[k] != x:
                k += 1
            for i in range(n - 1, -1, -2):
                if abs(v[i]) >= 2:
                    v[i] = -v[i] / 3 + x * i
                    continue
                elif v[i] == 0:
                    break
            return k
    """)
    c = translate_routine(source, "f")
    assert "mpfr_si_div" not in c and "mpfr_div_si(" in c and "mpfr_mul_si(" in c
    assert "for (;;) {" in c and "v_i += -2L" in c and "!mpfr_equal_p(" in c
    assert "mpfr_nan_p(" in c                  # a comparison with an int keeps nan false


class _Field:
    """The harness's field in Python: the same operations; fails at call ``fail_at``."""

    def __init__(self, fail_at):
        self.calls, self.fail_at = 0, fail_at

    def __call__(self, t, y, out):
        self.calls += 1
        if self.calls - 1 == self.fail_at or abs(y[0]) > 10:
            return False
        out[0], out[1] = y[1], t - y[0] * y[1] / 3
        return True


@needs_toolchain
@pytest.mark.parametrize("dps", [15, 40, 64])
def test_generated_rk4_and_gbs_give_the_python_bits(dps):
    """The steps generated from mpvi.numbers.explicit on a nonlinear field: the same result
    bits and the same number of field calls, including a field that fails mid-step."""
    ctx = mpvi.GMPContext(dps)
    module = harness(ctx.prec)
    t, h = ctx.num("1/3"), ctx.num("1/7")
    y = [ctx.num("1/2"), ctx.num("-2/3")]
    seen = set()
    for kind, levels in ((0, 1), (1, 1), (1, 4), (1, 9)):
        for fail_at in (-1, 0, 2, 7):
            f = _Field(fail_at)
            out = [None, None]
            if kind == 0:
                ok = rk4_core(2, f, t, list(y), h, *([None, None] for _ in range(5)), out)
            else:
                ok = gbs_core(2, f, t, list(y), h, levels, ctx.num(1),
                              *([None, None] for _ in range(5)),
                              [[None, None] for _ in range(levels)],
                              [[None, None] for _ in range(levels)], out)
            c_ok, c_out, calls = module.step(kind, t, y, h, levels, fail_at)
            assert (c_ok, calls) == (ok, f.calls), (kind, levels, fail_at)
            if ok:
                assert same(c_out, out), (kind, levels)
            seen.add((kind, ok))
    assert seen == {(0, True), (0, False), (1, True), (1, False)}


def test_rk4_and_gbs_steps_wrap_the_cores():
    """The steps of mpvi.engines.ode are the cores with their storage: the same bits."""
    from mpvi.engines.ode import gbs_step, rk4_step
    ctx = mpvi.GMPContext(30)
    field = lambda t, y: [y[1], t - y[0] * y[1] / 3]
    t, h, y = ctx.num(0), ctx.num("1/10"), [ctx.num(1), ctx.num(0)]
    out = [None, None]
    assert rk4_core(2, _Field(-1), t, list(y), h, *([None, None] for _ in range(5)), out)
    assert same(rk4_step(field, t, y, h), out)
    assert gbs_core(2, _Field(-1), t, list(y), h, 3, ctx.num(1), *([None, None] for _ in range(5)),
                    [[None] * 2 for _ in range(3)], [[None] * 2 for _ in range(3)], out)
    assert same(gbs_step(field, t, y, h, 3, ctx), out)


def _floors(n: int) -> int:
    """Python's floor division and remainder by positive literals, of negative ints too."""
    return (n // 3) * 100 + n % 3 * 10 + (n + 7) // 2 % 5


def _powers(x: Real, y: Real, out: list[Real]) -> int:
    """A number to an int literal, to an int expression and to a number."""
    out[0] = x ** 3
    out[1] = x ** y
    out[2] = x ** (0 - 2)
    return 0


def _caller(n: int, x: Real, out: list[Real],
            f: Callable[[Real, list[Real]], bool]) -> int:
    """Routines called as a statement, in an int expression and a callback in a condition."""
    _powers(x, x * 2, out)
    if not f(x, out):
        return -1
    return _floors(n) - _floors(-n)


MAIN = r"""
#include <stdio.h>
#define MPVI_UNUSED __attribute__((unused))
#define PREC 53
#include <mpfr.h>
{routines}
static int twice(mpfr_srcptr x, mpfr_t *out) {{ mpfr_mul_si(out[3], x, 2, MPFR_RNDN); return 1; }}
int main(void) {{
    mpfr_t x, out[4];
    mpfr_init2(x, PREC);
    for (int i = 0; i < 4; i++) mpfr_init2(out[i], PREC);
    mpvi__floors_init(); mpvi__powers_init(); mpvi__caller_init();
    for (long n = -9; n <= 9; n++) {{
        mpfr_set_d(x, 0.25 + 0.375 * n, MPFR_RNDN);
        long r = mpvi__caller(n, x, out, twice);
        printf("%ld %ld", n, r);
        for (int i = 0; i < 4; i++) printf(" %a", mpfr_get_d(out[i], MPFR_RNDN));
        printf("\n");
    }}
    return 0;
}}
"""


@needs_toolchain
def test_calls_powers_and_floors_have_pythons_meaning(tmp_path):
    """Routine calls (callees translated alongside, first), callbacks, x ** k, x ** y and
    Python's // and % by a literal on negative ints: the compiled C prints what Python
    computes, bit for bit at 53 bits."""
    import subprocess
    callees = {f.__name__: routine_source(f) for f in (_floors, _powers)}
    assert routine_calls(_caller) == [_powers, _floors]
    c = [translate_routine(routine_source(f), f"mpvi_{f.__name__}",
                           callees if f is _caller else None)
         for f in (_floors, _powers, _caller)]
    source = tmp_path / "main.c"
    source.write_text(MAIN.format(routines="\n".join(c)))
    exe = tmp_path / "main"
    cbackend.compile_c(cbackend.toolchain(), source, exe, ["-O1"])
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split("\n")
    with gmpy2.context(precision=53):
        for n, line in zip(range(-9, 10), lines):
            x = gmpy2.mpfr(0.25 + 0.375 * n)
            out = [None] * 4

            def twice(x, out):
                out[3] = x * 2
                return True
            r = _caller(n, x, out, twice)
            got = line.split()
            assert got[:2] == [str(n), str(r)], n
            for text, v in zip(got[2:], out):        # the same double, nan for nan
                c_value = float.fromhex(text) if "nan" not in text else float("nan")
                assert repr(c_value) == repr(float(v)), (n, text, v)


def test_a_routine_calls_only_routines():
    with pytest.raises(Unsupported, match="not a routine"):
        routine_calls(lambda_caller)


def lambda_caller(n: int) -> int:
    return len([n])
