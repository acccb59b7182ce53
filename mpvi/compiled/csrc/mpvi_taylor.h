/* The Taylor steps of mpvi.engines.taylor on a tape (mpvi.engines.taylor.Tape) of a Hamiltonian
   field of mpvi.engines.kernels, in MPFR, each bit-identical to its method of
   mpvi.engines.taylor.TaylorEvaluator.  The recurrences, Horner's rule and the adaptive
   substeps are generated before this header from the Python of mpvi.numbers.series
   (mpvi.compiled.croutine: the same operations in the same order); this header is their
   glue: the coefficient 0 of an elementary function, the order-by-order driver of the
   generated tape, reading the arguments, the storage, the Python module.

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
static mpfr_t ZERO, KS[NCA], RHS[N], vx[N];
static mpfr_t FS[NF], Y[NY], yslot[NY], tslot, hslot, eslot, fslot, parslot[NPARA];
static mpfr_t INV1, INV2, ONE, OUT[2];
static mpfr_ptr F[NF], KC[NCA], par[NPARA], yin[NY];
static mpfr_t *S[NS];
static long capacity = 0;
/* the dense solves of a tape with a mass matrix (M(q) v = p, order by order) */
MPVI_UNUSED static mpfr_ptr mp[N * N], rp[N];
static const int state[NY] = {MPVI_STATE};

/* The elementary functions of a series: coefficient 0 is the function at a0 (sin and cos
   nan beyond 2^PREC, as the context's), the others the generated recurrence of
   mpvi.numbers.series. */
MPVI_UNUSED static void ts_sincos(mpfr_t *s, mpfr_t *c, mpfr_t *a, mpfr_t *da, long k) {
    if (k > 0) { mpvi_series_sincos(s, c, a, da, k); return; }
    if (mpfr_nan_p(a[0]) || mpfr_cmpabs(a[0], limit) >= 0) { mpfr_set_nan(s[0]); mpfr_set_nan(c[0]); }
    else mpfr_sin_cos(s[0], c[0], a[0], MPFR_RNDN);
}

MPVI_UNUSED static void ts_exp(mpfr_t *d, mpfr_t *a, mpfr_t *da, long k) {
    if (k > 0) mpvi_series_exp(d, a, da, k);
    else mpfr_exp(d[0], a[0], MPFR_RNDN);
}

MPVI_UNUSED static void ts_log(mpfr_t *d, mpfr_t *a, long k) {
    if (k > 0) mpvi_series_log(d, a, k);
    else mpfr_log(d[0], a[0], MPFR_RNDN);
}

MPVI_UNUSED static void ts_sqrt(mpfr_t *d, mpfr_t *a, long k) {
    if (k > 0) mpvi_series_sqrt(d, a, k);
    else mpfr_sqrt(d[0], a[0], MPFR_RNDN);
}

MPVI_UNUSED static void ts_powc(mpfr_t *d, mpfr_t *a, mpfr_srcptr alpha, long k) {
    if (k > 0) mpvi_series_powc(d, a, alpha, k);
    else mpfr_pow(d[0], a[0], alpha, MPFR_RNDN);
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

/* the state's series (S[state[i]]) as the rows of the generated routines */
static mpfr_t *rows[NY];
static void tp_rows(void) {
    for (int i = 0; i < NY; i++) rows[i] = S[state[i]];
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
    tp_rows();
    mpvi_series_horner(NY, order, rows, h, Y);
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

static int tp_append(PyObject *list, mpfr_srcptr x) {
    PyObject *o = (PyObject *)GMPy_MPFR_New(mpfr_get_prec(x), NULL);
    if (o == NULL) return 0;
    mpfr_set(MPFR(o), x, MPFR_RNDN);
    int bad = PyList_Append(list, o);
    Py_DECREF(o);
    return !bad;
}

/* the callbacks of the generated adaptive substeps: the coefficients through (tau, y) at
   the order and eps of the current call, and the record of a substep end (appended to
   the list tp_bounds, if any; 0 on a Python error) */
static long tp_order_now;
static mpfr_srcptr tp_eps_now;
static PyObject *tp_bounds;
static int tp_coefficients_cb(mpfr_srcptr tau, mpfr_t *y) {
    mpfr_ptr ys[NY];
    for (int i = 0; i < NY; i++) ys[i] = y[i];
    return tp_coefficients(tau, ys, tp_order_now, tp_eps_now);
}

static int tp_record_cb(mpfr_srcptr tau, mpfr_t *y) {
    if (tp_bounds == NULL) return 1;
    if (!tp_append(tp_bounds, tau)) return 0;
    for (int i = 0; i < NY; i++) if (!tp_append(tp_bounds, y[i])) return 0;
    return 1;
}

/* adaptive(t, y, h, order, params, eps, factor, record):
   mpvi.engines.taylor.TaylorEvaluator.adaptive by mpvi.numbers.series.series_adaptive */
static PyObject *adaptive(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr t, h, eps, factor;
    long order;
    if (nargs != 8) { PyErr_Format(PyExc_TypeError, "adaptive takes 8 arguments, got %zd", nargs); return NULL; }
    int record = PyObject_IsTrue(args[7]);
    if (record < 0) return NULL;
    int ok = tp_args(args, 0, 1, 3, 4, 5, &t, &order, &eps, 2);
    if (ok < 0) return NULL;
    if (!ok || !(h = nw_number(args[2], hslot)) || !(factor = nw_number(args[6], fslot)))
        return mpvi_fallback();
    tp_bounds = NULL;
    if (record && (tp_bounds = PyList_New(0)) == NULL) return NULL;
    mpfr_set_si(INV1, 1, MPFR_RNDN);
    mpfr_div_si(INV1, INV1, order - 1, MPFR_RNDN);
    mpfr_set_si(INV2, 1, MPFR_RNDN);
    mpfr_div_si(INV2, INV2, order, MPFR_RNDN);
    for (int i = 0; i < NY; i++) mpfr_set(Y[i], yin[i], MPFR_RNDN);
    tp_order_now = order;
    tp_eps_now = eps;
    tp_rows();
    long nsub = mpvi_series_adaptive(NY, order, tp_coefficients_cb, rows, tp_record_cb, t, Y, h,
                                     factor, MAX_SUBSTEPS, ONE, ZERO, INV1, INV2, OUT);
    PyObject *bounds = tp_bounds;
    tp_bounds = NULL;
    if (nsub == -2) {                            /* Python raises substep_limit */
        Py_XDECREF(bounds);
        mpfr_ptr where[2] = {OUT[0], OUT[1]};
        PyObject *pair = nw_result(where, 2);
        if (pair == NULL) return NULL;
        return Py_BuildValue("(OlN)", Py_None, 0L, pair);
    }
    if (nsub < 1) {                              /* a Python error, or Python raises */
        Py_XDECREF(bounds);
        return PyErr_Occurred() ? NULL : mpvi_fallback();
    }
    mpfr_ptr cur[NY];
    for (int i = 0; i < NY; i++) cur[i] = Y[i];
    PyObject *ys = nw_result(cur, NY);
    if (ys == NULL) { Py_XDECREF(bounds); return NULL; }
    if (!record) { Py_INCREF(Py_None); bounds = Py_None; }
    return Py_BuildValue("(NlN)", ys, nsub, bounds);
}

/* the numbers of the module (at its init) */
static void tp_module_numbers(void) {
    for (int i = 0; i < NF; i++) { mpfr_init2(FS[i], PREC); F[i] = FS[i]; }
    for (int i = 0; i < NCA; i++) { mpfr_init2(KS[i], PREC); KC[i] = KS[i]; }
    for (int i = 0; i < NY; i++) { mpfr_init2(Y[i], PREC); mpfr_init2(yslot[i], 64); }
    mpvi_init_array(RHS, N, PREC);
    dense_solve_init(vx);
    mpvi_init_array(parslot, NPARA, 64);
    mpfr_init2(ZERO, PREC);
    mpfr_inits2(PREC, INV1, INV2, ONE, (mpfr_ptr)0);
    mpvi_init_array(OUT, 2, PREC);
    mpfr_set_si(ONE, 1, MPFR_RNDN);
    mpvi_series_mul_init(); mpvi_series_div_init(); mpvi_series_sqr_init();
    mpvi_series_convolve_init(); mpvi_series_sincos_init(); mpvi_series_exp_init();
    mpvi_series_log_init(); mpvi_series_sqrt_init(); mpvi_series_powc_init();
    mpvi_series_solve_row_init();
    mpvi_series_horner_init(); mpvi_series_radius_init(); mpvi_series_adaptive_init();
    mpfr_inits2(64, tslot, hslot, eslot, fslot, (mpfr_ptr)0);
    mpfr_set_zero(ZERO, 1);
}

MPVI_DEFINE_MODULE(tp_module_numbers, "the tape's constants",
    {"step", (PyCFunction)(void (*)(void))step, METH_FASTCALL, "one Taylor step"},
    {"adaptive", (PyCFunction)(void (*)(void))adaptive, METH_FASTCALL, "adaptive Taylor substeps"},
    {"coefficients", (PyCFunction)(void (*)(void))coefficients, METH_FASTCALL, "Taylor coefficients"})
#endif
