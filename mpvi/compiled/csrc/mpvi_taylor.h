/* The Taylor steps of mpvi.engines.taylor on a tape (mpvi.engines.taylor.Tape) of a Hamiltonian field of
   mpvi.engines.kernels, in MPFR, each bit-identical to its method of
   mpvi.engines.taylor.TaylorEvaluator (the same recurrences, operation by operation).

   The generated part defines, before this header: PREC, MPVI_MODULE, N (degrees of
   freedom), NS (series slots), NF (fixed slots), NC (constants; NCA: at least 1), NPAR
   (parameters; NPARA: at least 1), MAX_SUBSTEPS, MPVI_STATE (the series slot of each of
   the 2N state variables) and MPVI_TIME (the series slot of the time, or -1); and, after
   it, the hooks:
     tp_fixed(): the fixed slots F: parameters, constants and the operations on them alone;
     tp_order(k, eps): the k-th coefficient of every series of the tape (S[slot][k]); 0
       where Python raises;
     tp_outputs(k): the state's coefficients k + 1 from the field's coefficients k. */
#ifndef MPVI_TAYLOR_H
#define MPVI_TAYLOR_H
#include "mpvi_runtime.h"
#include "mpvi_module.h"
#include "mpvi_number.h"
#include "mpvi_solve.h"

#define NY (2 * N)
static mpfr_t ZERO, W, W2, ACC, KS[NCA], RHS[N], vx[N];
static mpfr_t FS[NF], Y[NY], yslot[NY], tslot, hslot, eslot, fslot, parslot[NPARA];
static mpfr_t TAU, TEND, REM, HS, SC, NM, R, X, INV1, INV2;
static mpfr_ptr F[NF], KC[NCA], par[NPARA], yin[NY];
static mpfr_t *S[NS];
static long capacity = 0;
/* the dense solves of a tape with a mass matrix (M(q) v = p, order by order) */
MPVI_UNUSED static mpfr_ptr mp[N * N], rp[N];
static const int state[NY] = {MPVI_STATE};

/* The recurrences of the series operations, mpvi.engines.taylor.TaylorEvaluator's: the k-th
   coefficient d[k] of d = f(a, b) from the coefficients 0 .. k of a and b and 0 .. k - 1 of
   d (a series: an array of mpfr_t).  A fixed operand (a constant of the tape: a_0 = F,
   a_k = 0) is an mpfr_srcptr.  W, W2 and ACC are work space. */

/* d = F + b */
MPVI_UNUSED static void ts_add_fs(mpfr_t *d, mpfr_srcptr a, mpfr_t *b, long k) {
    if (k > 0) mpfr_set(d[k], b[k], MPFR_RNDN);
    else mpfr_add(d[k], a, b[0], MPFR_RNDN);
}

/* d = F - b */
MPVI_UNUSED static void ts_sub_fs(mpfr_t *d, mpfr_srcptr a, mpfr_t *b, long k) {
    if (k > 0) mpfr_neg(d[k], b[k], MPFR_RNDN);
    else mpfr_sub(d[k], a, b[0], MPFR_RNDN);
}

/* d = a + F */
MPVI_UNUSED static void ts_add_sf(mpfr_t *d, mpfr_t *a, mpfr_srcptr b, long k) {
    if (k > 0) mpfr_set(d[k], a[k], MPFR_RNDN);
    else mpfr_add(d[k], a[0], b, MPFR_RNDN);
}

/* d = a - F */
MPVI_UNUSED static void ts_sub_sf(mpfr_t *d, mpfr_t *a, mpfr_srcptr b, long k) {
    if (k > 0) mpfr_set(d[k], a[k], MPFR_RNDN);
    else mpfr_sub(d[k], a[0], b, MPFR_RNDN);
}

/* d = a b: d_k = sum_{j=0..k} a_j b_{k-j} */
MPVI_UNUSED static void ts_mul(mpfr_t *d, mpfr_t *a, mpfr_t *b, long k) {
    mpfr_mul(d[k], a[0], b[k], MPFR_RNDN);
    for (long j = 1; j <= k; j++) {
        mpfr_mul(W, a[j], b[k - j], MPFR_RNDN);
        mpfr_add(d[k], d[k], W, MPFR_RNDN);
    }
}

/* d = a / b (a_k given: a series' or a constant's): d_k = (a_k - sum_{j=1..k} b_j d_{k-j}) / b_0 */
MPVI_UNUSED static void ts_div(mpfr_t *d, mpfr_srcptr ak, mpfr_t *b, long k) {
    mpfr_set(ACC, ak, MPFR_RNDN);
    for (long j = 1; j <= k; j++) {
        mpfr_mul(W, b[j], d[k - j], MPFR_RNDN);
        mpfr_sub(ACC, ACC, W, MPFR_RNDN);
    }
    mpfr_div(d[k], ACC, b[0], MPFR_RNDN);
}

/* d = a^2: twice the products below the middle, plus the middle square */
MPVI_UNUSED static void ts_sqr(mpfr_t *d, mpfr_t *a, long k) {
    if (k == 0) { mpfr_sqr(d[k], a[0], MPFR_RNDN); return; }
    mpfr_mul(ACC, a[0], a[k], MPFR_RNDN);
    for (long j = 1; j < (k + 1) / 2; j++) {
        mpfr_mul(W, a[j], a[k - j], MPFR_RNDN);
        mpfr_add(ACC, ACC, W, MPFR_RNDN);
    }
    mpfr_add(ACC, ACC, ACC, MPFR_RNDN);
    if (k % 2 == 0) { mpfr_sqr(W, a[k / 2], MPFR_RNDN); mpfr_add(ACC, ACC, W, MPFR_RNDN); }
    mpfr_set(d[k], ACC, MPFR_RNDN);
}

/* target_k = sum_{j=1..k} da_j other_{k-j} / div (da_j = j a_j) */
MPVI_UNUSED static void ts_convolve(mpfr_t *target, mpfr_t *da, mpfr_t *other, long k, long div) {
    mpfr_mul(ACC, da[1], other[k - 1], MPFR_RNDN);
    for (long j = 2; j <= k; j++) {
        mpfr_mul(W, da[j], other[k - j], MPFR_RNDN);
        mpfr_add(ACC, ACC, W, MPFR_RNDN);
    }
    mpfr_div_si(target[k], ACC, div, MPFR_RNDN);
}

/* s = sin a, c = cos a (da: the series j a_j): sin from cos, then cos from sin, negated;
   nan beyond 2^PREC, as the context's */
MPVI_UNUSED static void ts_sincos(mpfr_t *s, mpfr_t *c, mpfr_t *a, mpfr_t *da, long k) {
    if (k == 0) {
        if (mpfr_nan_p(a[0]) || mpfr_cmpabs(a[0], limit) >= 0) { mpfr_set_nan(s[0]); mpfr_set_nan(c[0]); }
        else mpfr_sin_cos(s[0], c[0], a[0], MPFR_RNDN);
        return;
    }
    mpfr_mul_si(da[k], a[k], k, MPFR_RNDN);
    ts_convolve(s, da, c, k, k);
    ts_convolve(c, da, s, k, -k);
}

/* d = exp a (da: the series j a_j) */
MPVI_UNUSED static void ts_exp(mpfr_t *d, mpfr_t *a, mpfr_t *da, long k) {
    if (k == 0) { mpfr_exp(d[k], a[0], MPFR_RNDN); return; }
    mpfr_mul_si(da[k], a[k], k, MPFR_RNDN);
    ts_convolve(d, da, d, k, k);
}

/* d = log a: d_k = (a_k - sum_{j=1..k-1} j d_j a_{k-j} / k) / a_0 */
MPVI_UNUSED static void ts_log(mpfr_t *d, mpfr_t *a, long k) {
    if (k == 0) { mpfr_log(d[k], a[0], MPFR_RNDN); return; }
    mpfr_set(ACC, a[k], MPFR_RNDN);
    if (k > 1) {
        mpfr_mul(W2, d[1], a[k - 1], MPFR_RNDN);
        for (long j = 2; j < k; j++) {
            mpfr_mul_si(W, d[j], j, MPFR_RNDN);
            mpfr_mul(W, W, a[k - j], MPFR_RNDN);
            mpfr_add(W2, W2, W, MPFR_RNDN);
        }
        mpfr_div_si(W2, W2, k, MPFR_RNDN);
        mpfr_sub(ACC, ACC, W2, MPFR_RNDN);
    }
    mpfr_div(d[k], ACC, a[0], MPFR_RNDN);
}

/* d = sqrt a: d_k = (a_k - sum_{j=1..k-1} d_j d_{k-j}) / (2 d_0) */
MPVI_UNUSED static void ts_sqrt(mpfr_t *d, mpfr_t *a, long k) {
    if (k == 0) { mpfr_sqrt(d[k], a[0], MPFR_RNDN); return; }
    mpfr_set(ACC, a[k], MPFR_RNDN);
    for (long j = 1; j < k; j++) {
        mpfr_mul(W, d[j], d[k - j], MPFR_RNDN);
        mpfr_sub(ACC, ACC, W, MPFR_RNDN);
    }
    mpfr_mul_si(W, d[0], 2, MPFR_RNDN);
    mpfr_div(d[k], ACC, W, MPFR_RNDN);
}

/* d = a^alpha (alpha a constant): d_k = sum_{j=1..k} (alpha j - (k - j)) a_j d_{k-j} / (k a_0) */
MPVI_UNUSED static void ts_powc(mpfr_t *d, mpfr_t *a, mpfr_srcptr alpha, long k) {
    if (k == 0) { mpfr_pow(d[k], a[0], alpha, MPFR_RNDN); return; }
    for (long j = 1; j <= k; j++) {
        mpfr_mul_si(W, alpha, j, MPFR_RNDN);
        mpfr_sub_si(W, W, k - j, MPFR_RNDN);
        mpfr_mul(W, W, a[j], MPFR_RNDN);
        mpfr_mul(W, W, d[k - j], MPFR_RNDN);
        if (j == 1) mpfr_set(ACC, W, MPFR_RNDN); else mpfr_add(ACC, ACC, W, MPFR_RNDN);
    }
    mpfr_mul_si(W, a[0], k, MPFR_RNDN);
    mpfr_div(d[k], ACC, W, MPFR_RNDN);
}

static void tp_fixed(void);
static int tp_order(long k, mpfr_srcptr eps);
static void tp_outputs(long k);

/* the tape's one constant table */
static int tp_tables(PyObject *tables) {
    return nw_set_table(tables, 0, KS, NC);
}

static PyObject *setup(PyObject *self, PyObject *tables) {
    (void)self;
    return mpvi_setup(tables, 1, tp_tables);
}

static int tp_reserve(long size) {
    if (size <= capacity) return 1;
    for (int i = 0; i < NS; i++) {
        mpfr_t *grown = (mpfr_t *)realloc(S[i], sizeof(mpfr_t) * size);
        if (grown == NULL) { PyErr_NoMemory(); return 0; }
        S[i] = grown;
        for (long k = capacity; k < size; k++) mpfr_init2(S[i][k], PREC);
    }
    capacity = size;
    return 1;
}

/* the coefficients y_0 .. y_order of the solution through (t, y) into S (the fixed slots
   set): mpvi.engines.taylor.TaylorEvaluator.coefficients; 0 where Python raises */
static int tp_coefficients(mpfr_srcptr t, mpfr_ptr *y, long order, mpfr_srcptr eps) {
#if MPVI_TIME >= 0
    mpfr_set(S[MPVI_TIME][0], t, MPFR_RNDN);
    for (long k = 1; k <= order; k++) mpfr_set_si(S[MPVI_TIME][k], k == 1, MPFR_RNDN);
#else
    (void)t;
#endif
    for (int i = 0; i < NY; i++) mpfr_set(S[state[i]][0], y[i], MPFR_RNDN);
    for (long k = 0; k < order; k++) {
        if (!tp_order(k, eps)) return 0;
        tp_outputs(k);
    }
    return 1;
}

/* Horner: out = sum_k y_k h^k (out may be the state the coefficients started from) */
static void tp_horner(mpfr_t *out, long order, mpfr_srcptr h) {
    for (int i = 0; i < NY; i++) {
        mpfr_set(out[i], S[state[i]][order], MPFR_RNDN);
        for (long k = order - 1; k >= 0; k--) {
            mpfr_mul(out[i], out[i], h, MPFR_RNDN);
            mpfr_add(out[i], out[i], S[state[i]][k], MPFR_RNDN);
        }
    }
}

/* the arguments every function reads: t, y, order, params, eps; 0 to decline, -1 error */
static int tp_args(PyObject *const *args, int it, int iy, int io, int ipar, int ieps,
                   mpfr_ptr *t, long *order, mpfr_ptr *eps, long low) {
    if (!ready) { PyErr_SetString(PyExc_RuntimeError, "compiled Taylor step used before setup"); return -1; }
    *order = PyLong_AsLong(args[io]);
    if (PyErr_Occurred()) return -1;
    if (*order < low || *order > 100000) {
        PyErr_Format(PyExc_ValueError, "taylor: order must be %ld to 100000, got %ld", low, *order);
        return -1;
    }
    if (!(*t = nw_number(args[it], tslot)) || !(*eps = nw_number(args[ieps], eslot))
        || !nw_read(args[iy], NY, yin, yslot) || !nw_read(args[ipar], NPAR, par, parslot)) return 0;
    if (!tp_reserve(*order + 1)) return -1;
    tp_fixed();
    return 1;
}

/* step(t, y, h, order, params, eps): mpvi.engines.taylor.TaylorEvaluator.step */
static PyObject *step(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr t, h, eps;
    long order;
    if (nargs != 6) { PyErr_Format(PyExc_TypeError, "step takes 6 arguments, got %zd", nargs); return NULL; }
    int ok = tp_args(args, 0, 1, 3, 4, 5, &t, &order, &eps, 1);
    if (ok < 0) return NULL;
    if (!ok || !(h = nw_number(args[2], hslot))) goto fallback;
    if (!tp_coefficients(t, yin, order, eps)) goto fallback;
    tp_horner(Y, order, h);
    mpfr_ptr out[NY];
    for (int i = 0; i < NY; i++) out[i] = Y[i];
    return nw_result(out, NY);
fallback:
    return mpvi_fallback();
}

/* coefficients(t, y, order, params, eps): mpvi.engines.taylor.TaylorEvaluator.coefficients, flat */
static PyObject *coefficients(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr t, eps;
    long order;
    if (nargs != 5) { PyErr_Format(PyExc_TypeError, "coefficients takes 5 arguments, got %zd", nargs); return NULL; }
    int ok = tp_args(args, 0, 1, 2, 3, 4, &t, &order, &eps, 1);
    if (ok < 0) return NULL;
    if (!ok || !tp_coefficients(t, yin, order, eps)) goto fallback;
    PyObject *list = PyList_New((order + 1) * NY), *o;
    if (list == NULL) return NULL;
    for (long k = 0; k <= order; k++)
        for (int i = 0; i < NY; i++) {
            mpfr_srcptr x = S[state[i]][k];
            o = (PyObject *)GMPy_MPFR_New(mpfr_get_prec(x), NULL);
            if (o == NULL) { Py_DECREF(list); return NULL; }
            mpfr_set(MPFR(o), x, MPFR_RNDN);
            PyList_SET_ITEM(list, k * NY + i, o);
        }
    return list;
fallback:
    return mpvi_fallback();
}

/* Jorba & Zou's radius of convergence from the coefficients in S:
   mpvi.engines.taylor.TaylorEvaluator.radius into R; 0 when nothing bounds the step */
static int tp_radius(long order) {
    int have = 0;
    mpfr_set_si(SC, 1, MPFR_RNDN);
    for (int i = 0; i < NY; i++)
        if (mpfr_cmpabs(S[state[i]][0], SC) > 0) mpfr_abs(SC, S[state[i]][0], MPFR_RNDN);
    for (int which = 0; which < 2; which++) {
        long k = order - 1 + which;
        mpfr_set_zero(NM, 1);
        for (int i = 0; i < NY; i++)
            if (mpfr_cmpabs(S[state[i]][k], NM) > 0) mpfr_abs(NM, S[state[i]][k], MPFR_RNDN);
        if (mpfr_sgn(NM) > 0) {
            mpfr_div(X, SC, NM, MPFR_RNDN);
            mpfr_pow(X, X, which ? INV2 : INV1, MPFR_RNDN);
            if (!have || mpfr_less_p(X, R)) mpfr_set(R, X, MPFR_RNDN);
            have = 1;
        }
    }
    return have;
}

static int tp_append(PyObject *list, mpfr_srcptr x) {
    PyObject *o = (PyObject *)GMPy_MPFR_New(mpfr_get_prec(x), NULL);
    if (o == NULL) return 0;
    mpfr_set(MPFR(o), x, MPFR_RNDN);
    int bad = PyList_Append(list, o);
    Py_DECREF(o);
    return !bad;
}

/* adaptive(t, y, h, order, params, eps, factor, record):
   mpvi.engines.taylor.TaylorEvaluator.adaptive */
static PyObject *adaptive(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr t, h, eps, factor;
    long order, nsub = 0;
    PyObject *bounds = NULL;
    if (nargs != 8) { PyErr_Format(PyExc_TypeError, "adaptive takes 8 arguments, got %zd", nargs); return NULL; }
    int record = PyObject_IsTrue(args[7]);
    if (record < 0) return NULL;
    int ok = tp_args(args, 0, 1, 3, 4, 5, &t, &order, &eps, 2);
    if (ok < 0) return NULL;
    if (!ok || !(h = nw_number(args[2], hslot)) || !(factor = nw_number(args[6], fslot))) goto fallback;
    if (record && (bounds = PyList_New(0)) == NULL) return NULL;
    mpfr_set_si(INV1, 1, MPFR_RNDN);
    mpfr_div_si(INV1, INV1, order - 1, MPFR_RNDN);
    mpfr_set_si(INV2, 1, MPFR_RNDN);
    mpfr_div_si(INV2, INV2, order, MPFR_RNDN);
    mpfr_add(TEND, t, h, MPFR_RNDN);
    mpfr_set(TAU, t, MPFR_RNDN);
    int forward = mpfr_sgn(h) > 0;
    mpfr_ptr cur[NY];
    for (int i = 0; i < NY; i++) { mpfr_set(Y[i], yin[i], MPFR_RNDN); cur[i] = Y[i]; }
    for (;;) {
        if (!tp_coefficients(TAU, cur, order, eps)) goto fallback;
        mpfr_sub(REM, TEND, TAU, MPFR_RNDN);
        int last = !tp_radius(order);
        if (!last) {
            mpfr_mul(HS, R, factor, MPFR_RNDN);
            last = !(mpfr_cmpabs(HS, REM) < 0);
        }
        if (last) mpfr_set(HS, REM, MPFR_RNDN);
        else {
            mpfr_mul_si(X, HS, MAX_SUBSTEPS - nsub, MPFR_RNDN);
            if (mpfr_cmpabs(REM, X) > 0) {                /* Python raises substep_limit */
                Py_XDECREF(bounds);
                mpfr_ptr where[2] = {TAU, HS};
                PyObject *pair = nw_result(where, 2);
                if (pair == NULL) return NULL;
                return Py_BuildValue("(OlN)", Py_None, nsub, pair);
            }
            if (!forward) mpfr_neg(HS, HS, MPFR_RNDN);
            mpfr_add(X, TAU, HS, MPFR_RNDN);
            if (mpfr_equal_p(X, TAU)) goto fallback;      /* Python raises StepSizeCollapse */
        }
        tp_horner(Y, order, HS);
        nsub++;
        if (last) break;
        mpfr_add(TAU, TAU, HS, MPFR_RNDN);
        if (record) {
            if (!tp_append(bounds, TAU)) goto error;
            for (int i = 0; i < NY; i++) if (!tp_append(bounds, Y[i])) goto error;
        }
    }
    PyObject *ys = nw_result(cur, NY);
    if (ys == NULL) goto error;
    if (!record) { Py_INCREF(Py_None); bounds = Py_None; }
    return Py_BuildValue("(NlN)", ys, nsub, bounds);
error:
    Py_XDECREF(bounds);
    return NULL;
fallback:
    Py_XDECREF(bounds);
    return mpvi_fallback();
}

/* the numbers of the module (at its init) */
static void tp_module_numbers(void) {
    for (int i = 0; i < NF; i++) { mpfr_init2(FS[i], PREC); F[i] = FS[i]; }
    for (int i = 0; i < NCA; i++) { mpfr_init2(KS[i], PREC); KC[i] = KS[i]; }
    for (int i = 0; i < NY; i++) { mpfr_init2(Y[i], PREC); mpfr_init2(yslot[i], 64); }
    mpvi_init_array(RHS, N, PREC);
    dense_solve_init(vx);
    mpfr_init2(W, PREC);
    mpvi_init_array(parslot, NPARA, 64);
    mpfr_inits2(PREC, ZERO, W2, ACC, (mpfr_ptr)0);
    mpfr_inits2(PREC, TAU, TEND, REM, HS, SC, NM, R, X, INV1, INV2, (mpfr_ptr)0);
    mpfr_inits2(64, tslot, hslot, eslot, fslot, (mpfr_ptr)0);
    mpfr_set_zero(ZERO, 1);
}

MPVI_DEFINE_MODULE(tp_module_numbers, "the tape's constants",
    {"step", (PyCFunction)(void (*)(void))step, METH_FASTCALL, "one Taylor step"},
    {"adaptive", (PyCFunction)(void (*)(void))adaptive, METH_FASTCALL, "adaptive Taylor substeps"},
    {"coefficients", (PyCFunction)(void (*)(void))coefficients, METH_FASTCALL, "Taylor coefficients"})
#endif
