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
   the 2N state variables), MPVI_COPIES (the NCOPIES slots the tiers round into the levels
   below: mpvi.engines.taylor.Tape.copies) and MPVI_TIME (the series slot of the time, or
   -1); and, after
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
#define NTMAX 64
static mpfr_t ZERO, KS[NCA], RHS[N], vx[N];
static mpfr_t FS[NF], Y[NY], yslot[NY], tslot, hslot, eslot, fslot, aslot, parslot[NPARA];
static mpfr_t INV1, INV2, ONE, OUT[3];
static mpfr_ptr KC[NCA], par[NPARA], yin[NY];
/* The levels of the tiered coefficients (mpvi.engines.taylor.TaylorEvaluator._tiered):
   level 0 at PREC, the series of every step and substep; the others, each at a
   precision below PREC, the coefficients the orders computed at that precision read.
   S and F point at the level of the order being computed. */
static mpfr_t *SL[NTMAX][NS];
static long lcap[NTMAX];
static mpfr_prec_t lprec[NTMAX];
static mpfr_t FL[NTMAX][NF];
static int finit[NTMAX];
static mpfr_ptr FP[NTMAX][NF];
static mpfr_t **S = SL[0];
static mpfr_ptr *F = FP[0];
static int is_state[NS];
/* the schedule of the current adaptive call: levels, each order's level and precision,
   2^-p of each order computed below PREC (0 at PREC) */
static int tp_nlevels = 1;
static int *tp_level;
static mpfr_prec_t *tp_prec;
static mpfr_t *LOST;
static long tp_sched_cap = 0;
/* the dense solves of a tape with a mass matrix (M(q) v = p, order by order) */
MPVI_UNUSED static mpfr_ptr mp[N * N], rp[N];
static const int state[NY] = {MPVI_STATE};
static const int copies[NCOPIES] = {MPVI_COPIES};

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

MPVI_UNUSED static void ts_powc(mpfr_t *d, mpfr_t *a, mpfr_t *da, mpfr_srcptr alpha, long k) {
    if (k > 0) mpvi_series_powc(d, a, da, alpha, k);
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

/* orders 0 .. size - 1 in the series of level l (at its precision lprec[l]) */
static int tp_reserve_level(int l, long size) {
    if (size <= lcap[l]) return 1;
    for (int i = 0; i < NS; i++) {
        mpfr_t *grown = (mpfr_t *)realloc(SL[l][i], sizeof(mpfr_t) * size);
        if (grown == NULL) { PyErr_NoMemory(); return 0; }
        SL[l][i] = grown;
        for (long k = lcap[l]; k < size; k++) mpfr_init2(SL[l][i][k], lprec[l]);
    }
    lcap[l] = size;
    return 1;
}

static int tp_reserve(long size) {
    return tp_reserve_level(0, size);
}

/* the storage of level l > 0 at p bits (values lost) */
static void tp_level_prec(int l, mpfr_prec_t p) {
    if (lprec[l] == p) return;
    for (int i = 0; i < NS; i++)
        for (long k = 0; k < lcap[l]; k++) mpfr_set_prec(SL[l][i][k], p);
    if (finit[l]) for (int j = 0; j < NF; j++) mpfr_set_prec(FL[l][j], p);
    lprec[l] = p;
}

/* every operation of the recurrences (and of the solves of a mass matrix) rounded to p
   bits: the storage of the generated routines and of the solve at p */
static mpfr_prec_t tp_working_prec = PREC;
static void tp_working(mpfr_prec_t p) {
    if (p == tp_working_prec) return;
    mpvi_series_mul_prec(p); mpvi_series_div_prec(p); mpvi_series_sqr_prec(p);
    mpvi_series_convolve_prec(p); mpvi_series_sincos_prec(p); mpvi_series_exp_prec(p);
    mpvi_series_log_prec(p); mpvi_series_sqrt_prec(p); mpvi_series_powc_prec(p);
    mpvi_series_solve_row_prec(p);
    dense_solve_prec(p, vx);
    for (int i = 0; i < N; i++) mpfr_set_prec(RHS[i], p);
    tp_working_prec = p;
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

/* the coefficients through (t, y) with order k at tp_prec[k] bits on the series of its
   level tp_level[k]: mpvi.engines.taylor.TaylorEvaluator._tiered; 0 where Python raises */
static int tp_tiered(mpfr_srcptr t, mpfr_ptr *y, long order, mpfr_srcptr eps) {
    int ok = 1;
    for (int l = 0; l < tp_nlevels; l++) {
#if MPVI_TIME >= 0
        mpfr_set(SL[l][MPVI_TIME][0], t, MPFR_RNDN);
        for (long k = 1; k <= order; k++) mpfr_set_si(SL[l][MPVI_TIME][k], k == 1, MPFR_RNDN);
#else
        (void)t;
#endif
        for (int i = 0; i < NY; i++) mpfr_set(SL[l][state[i]][0], y[i], MPFR_RNDN);
    }
    for (long k = 0; ok && k < order; k++) {
        int l = tp_level[k];
        S = SL[l];
        F = FP[l];
        tp_working(tp_prec[k]);
        if (!tp_order(k, eps)) { ok = 0; break; }
        tp_outputs(k);
        for (int c = 0; c < NCOPIES; c++) {
            int i = copies[c];
            if (i == MPVI_TIME) continue;
            long kk = is_state[i] ? k + 1 : k;
            mpfr_srcptr x = SL[l][i][kk];
            if (l > 0 && is_state[i]) mpfr_set(SL[0][i][kk], x, MPFR_RNDN);
            for (int lo = l + 1; lo < tp_nlevels; lo++) mpfr_set(SL[lo][i][kk], x, MPFR_RNDN);
        }
    }
    S = SL[0];
    F = FP[0];
    tp_working(PREC);
    return ok;
}

/* the schedule of an adaptive call from the list of the precisions of its orders
   (mpvi.engines.taylor.precision_schedule: PREC first, none above the one before, at
   least 2 bits), its levels' storage and fixed numbers made ready; 0 to decline, -1 error */
static int tp_schedule(PyObject *list, long order) {
    PyObject *seq = PySequence_Fast(list, "a sequence");
    if (seq == NULL) { PyErr_Clear(); return 0; }
    int ok = PySequence_Fast_GET_SIZE(seq) == order + 1;
    if (ok && order + 1 > tp_sched_cap) {
        int *lv = (int *)realloc(tp_level, sizeof(int) * (order + 1));
        if (lv != NULL) tp_level = lv;
        mpfr_prec_t *pr = lv ? (mpfr_prec_t *)realloc(tp_prec, sizeof(mpfr_prec_t) * (order + 1)) : NULL;
        if (pr != NULL) tp_prec = pr;
        mpfr_t *lo = pr ? (mpfr_t *)realloc(LOST, sizeof(mpfr_t) * (order + 1)) : NULL;
        if (lo == NULL) { Py_DECREF(seq); PyErr_NoMemory(); return -1; }
        LOST = lo;
        for (long k = tp_sched_cap; k <= order; k++) mpfr_init2(LOST[k], PREC);
        tp_sched_cap = order + 1;
    }
    int nl = 0;
    mpfr_prec_t last = PREC;
    for (long k = 0; ok && k <= order; k++) {
        long p = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, k));
        if (PyErr_Occurred()) { PyErr_Clear(); ok = 0; break; }
        if (p < 2 || p > last || (k == 0 && p != PREC)) { ok = 0; break; }
        if (k == 0 || p < last) {
            if (nl == NTMAX) { ok = 0; break; }
            if (nl > 0) tp_level_prec(nl, (mpfr_prec_t)p);
            nl++;
        }
        last = (mpfr_prec_t)p;
        tp_level[k] = nl - 1;
        tp_prec[k] = last;
        if (last < PREC) mpfr_set_ui_2exp(LOST[k], 1, -(long)last, MPFR_RNDN);
        else mpfr_set_zero(LOST[k], 1);
    }
    Py_DECREF(seq);
    if (!ok) return 0;
    tp_nlevels = nl;
    for (int l = 1; l < nl; l++) {
        if (!tp_reserve_level(l, order + 1)) return -1;
        if (!finit[l]) {
            for (int j = 0; j < NF; j++) mpfr_init2(FL[l][j], lprec[l]);
            finit[l] = 1;
        }
        for (int j = 0; j < NF; j++) {
            mpfr_set(FL[l][j], FP[0][j], MPFR_RNDN);
            FP[l][j] = FL[l][j];
        }
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

static int tp_tiered_cb(mpfr_srcptr tau, mpfr_t *y) {
    mpfr_ptr ys[NY];
    for (int i = 0; i < NY; i++) ys[i] = y[i];
    return tp_tiered(tau, ys, tp_order_now, tp_eps_now);
}

static int tp_record_cb(mpfr_srcptr tau, mpfr_t *y) {
    if (tp_bounds == NULL) return 1;
    if (!tp_append(tp_bounds, tau)) return 0;
    for (int i = 0; i < NY; i++) if (!tp_append(tp_bounds, y[i])) return 0;
    return 1;
}

/* adaptive(t, y, h, order, params, eps, factor, record, precisions, allowed) -> (the new
   y, substeps, the interior substep ends or None, whether the tiers held):
   mpvi.engines.taylor.TaylorEvaluator.adaptive by mpvi.numbers.series.series_adaptive;
   precisions None (every order at PREC) or the list of the orders' precisions
   (TaylorEvaluator.schedule), allowed the tiers' error allowed relative to s */
static PyObject *adaptive(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr t, h, eps, factor, allowed;
    long order;
    if (nargs != 10) { PyErr_Format(PyExc_TypeError, "adaptive takes 10 arguments, got %zd", nargs); return NULL; }
    int record = PyObject_IsTrue(args[7]);
    if (record < 0) return NULL;
    int ok = tp_args(args, 0, 1, 3, 4, 5, &t, &order, &eps, 2);
    if (ok < 0) return NULL;
    if (!ok || !(h = nw_number(args[2], hslot)) || !(factor = nw_number(args[6], fslot))
        || !(allowed = nw_number(args[9], aslot)))
        return mpvi_fallback();
    long tiered = args[8] != Py_None;
    if (tiered) {
        int sched = tp_schedule(args[8], order);
        if (sched < 0) return NULL;
        if (sched == 0) return mpvi_fallback();
    } else tp_nlevels = 1;
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
    long nsub = mpvi_series_adaptive(NY, order, tp_tiered_cb, tp_coefficients_cb, tiered, LOST,
                                     allowed, rows, tp_record_cb, t, Y, h, factor, MAX_SUBSTEPS,
                                     ONE, ZERO, INV1, INV2, OUT);
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
    return Py_BuildValue("(NlNO)", ys, nsub, bounds, mpfr_zero_p(OUT[2]) ? Py_True : Py_False);
}

/* the numbers of the module (at its init) */
static void tp_module_numbers(void) {
    lprec[0] = PREC;
    for (int i = 0; i < NY; i++) is_state[state[i]] = 1;
    for (int i = 0; i < NF; i++) { mpfr_init2(FS[i], PREC); F[i] = FS[i]; }
    for (int i = 0; i < NCA; i++) { mpfr_init2(KS[i], PREC); KC[i] = KS[i]; }
    for (int i = 0; i < NY; i++) { mpfr_init2(Y[i], PREC); mpfr_init2(yslot[i], 64); }
    mpvi_init_array(RHS, N, PREC);
    dense_solve_init(vx);
    mpvi_init_array(parslot, NPARA, 64);
    mpfr_init2(ZERO, PREC);
    mpfr_inits2(PREC, INV1, INV2, ONE, (mpfr_ptr)0);
    mpvi_init_array(OUT, 3, PREC);
    mpfr_set_si(ONE, 1, MPFR_RNDN);
    mpvi_series_mul_init(); mpvi_series_div_init(); mpvi_series_sqr_init();
    mpvi_series_convolve_init(); mpvi_series_sincos_init(); mpvi_series_exp_init();
    mpvi_series_log_init(); mpvi_series_sqrt_init(); mpvi_series_powc_init();
    mpvi_series_solve_row_init();
    mpvi_series_horner_init(); mpvi_series_radius_init(); mpvi_series_tiers_hold_init();
    mpvi_series_adaptive_init();
    mpfr_inits2(64, tslot, hslot, eslot, fslot, aslot, (mpfr_ptr)0);
    mpfr_set_zero(ZERO, 1);
}

MPVI_DEFINE_MODULE(tp_module_numbers, "the tape's constants",
    {"step", (PyCFunction)(void (*)(void))step, METH_FASTCALL, "one Taylor step"},
    {"adaptive", (PyCFunction)(void (*)(void))adaptive, METH_FASTCALL, "adaptive Taylor substeps"},
    {"coefficients", (PyCFunction)(void (*)(void))coefficients, METH_FASTCALL, "Taylor coefficients"})
#endif
