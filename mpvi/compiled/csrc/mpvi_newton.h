/* Newton's method of mpvi.numbers.newton on a kernel of mpvi.engines.kernels, in MPFR.  The
   iteration itself (the update by the elimination of mpvi.numbers.linalg, the stopping
   rule, the residual check) is generated before this header from the Python of
   mpvi.numbers.newton.newton_core (mpvi.compiled.croutine: the same operations in the same
   order, so the same bits and iteration counts); this header is its glue: reading the
   arguments, the kernels as its callbacks, the storage, the Python module.

   The generated part defines, before this header: PREC, MPVI_MODULE, N (the unknowns),
   DOUBLES (1 where the updates are solved in doubles: mpvi.numbers.newton.doubles_for),
   STARTING (1 where the kernel has a twin in doubles for Newton's start,
   mpvi.compiled.cdouble; NDK the size of its constant table), NK
   and NP (the known values and parameters; NKA, NPA: at least 1; NSTEADY: how many of K's
   last entries stay through a run of steps), NOUT (the outputs, at
   least 1), HAS_OUTPUTS (0 or 1) and NTABLES (the constant tables setup() takes); and,
   after it, the hooks:
     nw_tables(tables): the constant tables into the kernels' k arrays (0: error set);
     nw_init(): the kernels' storage and their operations on literals (module load);
     nw_steady(): binds the entries of K that stay through a run of steps (its last ones)
       and P, and runs the operations on them alone (once per solve, once per batch);
     nw_pre(): binds the other entries of K (kp) and runs the operations on K and P alone
       that read them (once per solve);
     nw_both(): binds X (xp), computes the residual rp and the Jacobian Jp;
     nw_residual(): the residual rr at X (xp);
     nw_outputs(): the step's outputs oo at X (xp) (empty without outputs);
     nw_both_d(x): the residual and Jacobian in doubles at x into d_out, from d_kp, d_pp
       and the constants d_k (0 where Python raises; empty without STARTING). */
#ifndef MPVI_NEWTON_H
#define MPVI_NEWTON_H
#include "mpvi_runtime.h"
#include "mpvi_module.h"
#include "mpvi_powers.h"
#include "mpvi_number.h"
#include "mpvi_double.h"

static mpfr_t xo[N], ONE;
static mpfr_ptr xp[N], rp[N], Jp[N][N], rr[N], oo[NOUT];
static mpfr_ptr kp[NKA], pp[NPA], xin[N];
static mpfr_t kslot[NKA], pslot[NPA], xslot[N];
/* the storage of mpvi_newton_core: the iterate, F, J, the elimination's a, b, x, the
   update, the damping's trial point and residual, the results */
static mpfr_t X[N], R[N], JS[N][N], AS[N][N], BS[N][1], DS[N][1], STEP[N], TRIAL[N], FR[N], OUT[3];
static mpfr_t *Jr[N], *Ar[N], *Br[N], *Dr[N];
/* ... and of its updates solved in doubles (mpvi_refined_update): the refined residual, J
   in doubles, the elimination's a, b, x in doubles, its results */
static mpfr_t RES[N];
static double JD[N][N], AD[N][N], BD[N][1], XD[N][1], FO[2];
static double *JDr[N], *ADr[N], *BDr[N], *XDr[N];
/* ... and of its start in doubles (mpvi_double_start): the kernel's constants, inputs,
   parameters and results in doubles, the iterate, residual and Jacobian, and its
   quadratic constant and last update */
MPVI_UNUSED static double d_k[NDK], d_kp[NKA], d_pp[NPA];
static double d_out[N + N * N], XS[N], RS[N], JSD[N][N], DQ[2];
static double *JSDr[N];

static int nw_tables(PyObject *tables);
static void nw_init(void);
static void nw_steady(void);
static void nw_pre(void);
static void nw_both(void);
static void nw_residual(void);
static void nw_outputs(void);
static int nw_both_d(const double *x);


static PyObject *setup(PyObject *self, PyObject *tables) {
    (void)self;
    return mpvi_setup(tables, NTABLES, nw_tables);
}

/* the callbacks of the iteration: both(x, r, jac) and residual(x, r) by the kernels */
static int nw_both_cb(mpfr_t *x, mpfr_t *r, mpfr_t **jac) {
    for (int i = 0; i < N; i++) xp[i] = x[i];
    nw_both();
    for (int i = 0; i < N; i++) {
        mpfr_set(r[i], rp[i], MPFR_RNDN);
        for (int j = 0; j < N; j++) mpfr_set(jac[i][j], Jp[i][j], MPFR_RNDN);
    }
    return 1;
}

static int nw_residual_cb(mpfr_t *x, mpfr_t *r) {
    for (int i = 0; i < N; i++) xp[i] = x[i];
    nw_residual();
    for (int i = 0; i < N; i++) mpfr_set(r[i], rr[i], MPFR_RNDN);
    return 1;
}

/* the callback of the start in doubles: start(x, r, jac) by nw_both_d */
static int nw_start_cb(double *x, double *r, double **jac) {
    if (!nw_both_d(x)) return 0;
    for (int i = 0; i < N; i++) {
        r[i] = d_out[i];
        for (int j = 0; j < N; j++) jac[i][j] = d_out[N + i * N + j];
    }
    return 1;
}

/* the first guess extrapolated from the previous step, xo = X0 of
   mpvi.numbers.linalg.linear_combination (generated before this header) of the m vectors
   of C by the U x m table E: their numbers copied (exactly: at most PREC bits) into EXC
   and EXE, grown as needed; 0 to decline */
static mpfr_t *EXC, *EXE;
static Py_ssize_t exc_size = 0, exe_size = 0;

static int nw_grow(mpfr_t **store, Py_ssize_t *size, Py_ssize_t want) {
    if (want <= *size) return 1;
    mpfr_t *grown = (mpfr_t *)realloc(*store, sizeof(mpfr_t) * want);
    if (grown == NULL) return 0;
    for (Py_ssize_t i = *size; i < want; i++) mpfr_init2(grown[i], PREC);
    *store = grown;
    *size = want;
    return 1;
}

static int nw_copy(PyObject *seq, Py_ssize_t count, mpfr_t *out) {
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        if (!MPFR_Check(x) || mpfr_get_prec(MPFR(x)) > PREC) return 0;
        mpfr_set(out[i], MPFR(x), MPFR_RNDN);
    }
    return 1;
}

static int nw_extrapolate(PyObject *cs, PyObject *es, long m) {
    PyObject *C = PySequence_Fast(cs, "a sequence"), *E = C ? PySequence_Fast(es, "a sequence") : NULL;
    int ok = C && E && m > 0;
    Py_ssize_t lc = ok ? PySequence_Fast_GET_SIZE(C) : 0, le = ok ? PySequence_Fast_GET_SIZE(E) : 0;
    ok = ok && lc % m == 0 && le % m == 0 && (lc / m) * (le / m) == N
         && nw_grow(&EXC, &exc_size, lc) && nw_grow(&EXE, &exe_size, le)
         && nw_copy(C, lc, EXC) && nw_copy(E, le, EXE);
    if (ok) mpvi_linear_combination(le / m, m, lc / m, m, EXE, EXC, xo);
    for (int k = 0; ok && k < N; k++) xp[k] = xo[k];
    Py_XDECREF(C); Py_XDECREF(E);
    if (PyErr_Occurred()) PyErr_Clear();
    return ok;
}

/* mpvi_newton_core from X, with K and P bound (kp, pp) and nw_steady run: its code (the
   iterations, or 0 and below where it declines) */
static long nw_solve(mpfr_ptr eps, mpfr_ptr rtol, mpfr_ptr scale, long max_iter, long slack) {
#if STARTING
    for (int i = 0; i < NK; i++) d_kp[i] = mpfr_get_d(kp[i], MPFR_RNDN);
    for (int i = 0; i < NP; i++) d_pp[i] = mpfr_get_d(pp[i], MPFR_RNDN);
#endif
    nw_pre();
    return mpvi_newton_core(N, nw_both_cb, nw_residual_cb, nw_residual_cb, X, eps, rtol,
                            scale, max_iter, slack, 0, ONE, R, Jr, Ar, Br, Dr, STEP,
                            TRIAL, FR, OUT, DOUBLES, DBL_EPSILON, RES, JDr, ADr, BDr, XDr, FO,
                            nw_start_cb, STARTING, XS, RS, JSDr, DQ);
}

/* (X, iterations, residual[, outputs]) of the converged iterate, or NULL */
static PyObject *nw_converged(long it) {
    PyObject *out = NULL;
    mpfr_ptr xs[N], rn = OUT[0];
    for (int i = 0; i < N; i++) xs[i] = X[i];
    PyObject *x = nw_result(xs, N), *r = x ? nw_result(&rn, 1) : NULL, *o = NULL;
#if HAS_OUTPUTS
    o = r ? nw_result(oo, NOUT) : NULL;
    if (o != NULL) out = Py_BuildValue("(OlOO)", x, it, PyList_GET_ITEM(r, 0), o);
#else
    if (r != NULL) out = Py_BuildValue("(OlO)", x, it, PyList_GET_ITEM(r, 0));
#endif
    Py_XDECREF(x); Py_XDECREF(r); Py_XDECREF(o);
    return out;
}

/* newton(X0, K, P, eps, rtol, scale, max_iter, slack[, C, E, m]): X0 None and the
   extrapolation C, E, m given, the first guess is extrapolated here; None (the caller
   runs the Python iteration, which raises or takes the path the C declines) unless
   mpvi_newton_core converged */
static PyObject *newton(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_t es, rs, ss;
    if (!ready) { PyErr_SetString(PyExc_RuntimeError, "compiled Newton used before setup"); return NULL; }
    if (nargs != 8 && nargs != 11) {
        PyErr_Format(PyExc_TypeError, "newton takes 8 or 11 arguments, got %zd", nargs);
        return NULL;
    }
    long max_iter = PyLong_AsLong(args[6]), slack = PyLong_AsLong(args[7]);
    long m = nargs == 11 ? PyLong_AsLong(args[10]) : 0;
    if (PyErr_Occurred()) return NULL;
    mpfr_init2(es, 64); mpfr_init2(rs, 64); mpfr_init2(ss, 64);
    mpfr_ptr eps = nw_number(args[3], es), rtol = nw_number(args[4], rs), scale = nw_number(args[5], ss);
    int ok = eps && rtol && scale && nw_read(args[1], NK, kp, kslot) && nw_read(args[2], NP, pp, pslot);
    if (ok && args[0] == Py_None)
        ok = nargs == 11 && nw_extrapolate(args[8], args[9], m);
    else if (ok) {
        ok = nw_read(args[0], N, xin, xslot);
        for (int i = 0; ok && i < N; i++) xp[i] = xin[i];
    }
    PyObject *out = NULL;
    if (ok) {
        for (int i = 0; i < N; i++) mpfr_set(X[i], xp[i], MPFR_RNDN);
        nw_steady();
        long code = nw_solve(eps, rtol, scale, max_iter, slack);
        if (code > 0) {
            for (int i = 0; i < N; i++) xp[i] = X[i];
            nw_outputs();
            out = nw_converged(code);
        } else ok = 0;
    }
    mpfr_clear(es); mpfr_clear(rs); mpfr_clear(ss);
    return ok ? out : mpvi_fallback();
}

/* steps(count, K, P, eps, rtol, scale, max_iter, slack, state, E, m, ksrc, fsrc, ysrc, q1,
         times, ntimes, ts, check, head, signs, goff): up to count steps of a trial-function
   stepper (mpvi.methods.variational.TrialStepper.many), each one solve of newton() from
   the previous step's coefficients, with no Python between them.  The state of a step is
   [its coefficients flat (S n: the slots in order), its y (ny)]; the step reads the first
   entries of K from the state before it (K[i] = state[ksrc[i]] for i < len(ksrc)), the next
   ntimes entries from the list times (ntimes per step), the rest from K as given; it
   extrapolates its first guess from the state's coefficients by E (m vectors); its own
   coefficients are fsrc[f] < len(ksrc) ? K[fsrc[f]] : X[fsrc[f] - len(ksrc)], its y
   ysrc[d] into [coefficients, outputs].  After each step the kernel's outputs from goff
   on keep the signs `signs` (a tuple of +1 and -1; None: no such check), and
   check(ts[i], q, y, *head) (None: none) must return True, q its coefficients of slot q1.
   A step that fails, declines (Newton did not converge here: the caller takes it its own
   way) or fails a check ends the batch before it, as do inputs that are not the module's
   numbers.  Returns (done, coefficients, ys, iterations, residuals): new lists of the done
   steps' numbers, one after the other. */
static mpfr_t *SF, *SY, *KD;
static Py_ssize_t sf_size = 0, sy_size = 0, kd_size = 0;

static int st_sources(PyObject *obj, Py_ssize_t count, Py_ssize_t limit, long *out) {
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != count) return 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        long v = PyLong_AsLong(PyTuple_GET_ITEM(obj, i));
        if (v < 0 || v >= limit) { PyErr_Clear(); return 0; }
        out[i] = v;
    }
    return 1;
}

static PyObject *steps(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!ready) { PyErr_SetString(PyExc_RuntimeError, "compiled Newton used before setup"); return NULL; }
    if (nargs != 22) {
        PyErr_Format(PyExc_TypeError, "steps takes 22 arguments, got %zd", nargs);
        return NULL;
    }
    long count = PyLong_AsLong(args[0]), max_iter = PyLong_AsLong(args[6]),
         slack = PyLong_AsLong(args[7]), m = PyLong_AsLong(args[10]), q1 = PyLong_AsLong(args[14]),
         ntimes = PyLong_AsLong(args[16]), goff = PyLong_AsLong(args[21]);
    if (PyErr_Occurred()) return NULL;
    PyObject *state = args[8], *E = args[9], *times = args[15], *ts = args[17], *check = args[18],
             *head = args[19], *signs = args[20];
    if (!PyList_Check(state) || !PyList_Check(E) || !PyList_Check(times) || !PyList_Check(ts)
        || !PyTuple_Check(head) || PyTuple_GET_SIZE(head) > 8 || !PyTuple_Check(args[12])
        || !PyTuple_Check(args[11]) || !PyTuple_Check(args[13]) || count < 0 || m <= 0
        || PyList_GET_SIZE(ts) < count || (signs != Py_None && !PyTuple_Check(signs))) {
        PyErr_SetString(PyExc_TypeError, "steps: malformed arguments");
        return NULL;
    }
    Py_ssize_t nf = PyTuple_GET_SIZE(args[12]), nkd = PyTuple_GET_SIZE(args[11]),
               ny = PyTuple_GET_SIZE(args[13]), le = PyList_GET_SIZE(E),
               nsig = signs == Py_None ? 0 : PyTuple_GET_SIZE(signs);
    Py_ssize_t n = nf / m;
    if (nf % m || le % m || (le / m) * n != N || nf + ny != PyList_GET_SIZE(state)
        || nkd + ntimes > NK - NSTEADY || n < 1 || q1 < 0 || (q1 + 1) * n > nf || ntimes < 0
        || PyList_GET_SIZE(times) < count * ntimes || goff < 0 || goff > NOUT
        || (nsig && (NOUT - goff) % nsig)) {
        PyErr_SetString(PyExc_ValueError, "steps: inconsistent layout");
        return NULL;
    }
    long *src = (long *)malloc(sizeof(long) * (nkd + nf + ny + nsig + 1));
    int *sg = (int *)malloc(sizeof(int) * (nsig + 1));
    if (src == NULL || sg == NULL) { free(src); free(sg); return PyErr_NoMemory(); }
    long *ksrc = src, *fsrc = src + nkd, *ysrc = src + nkd + nf;
    mpfr_t es, rs, ss;
    mpfr_init2(es, 64); mpfr_init2(rs, 64); mpfr_init2(ss, 64);
    mpfr_ptr eps = nw_number(args[3], es), rtol = nw_number(args[4], rs), scale = nw_number(args[5], ss);
    int ok = eps && rtol && scale && st_sources(args[11], nkd, nf + ny, ksrc)
             && st_sources(args[12], nf, nkd + N, fsrc) && st_sources(args[13], ny, nf + NOUT, ysrc)
             && nw_read(args[1], NK, kp, kslot) && nw_read(args[2], NP, pp, pslot)
             && nw_grow(&SF, &sf_size, nf) && nw_grow(&SY, &sy_size, ny)
             && nw_grow(&KD, &kd_size, nkd + 1) && nw_grow(&EXE, &exe_size, le)
             && nw_grow(&EXC, &exc_size, nf)
             && nw_copy(state, nf, SF) && nw_copy(E, le, EXE);
    for (Py_ssize_t i = 0; ok && i < ny; i++) {
        PyObject *x = PyList_GET_ITEM(state, nf + i);
        ok = MPFR_Check(x) && mpfr_get_prec(MPFR(x)) <= PREC;
        if (ok) mpfr_set(SY[i], MPFR(x), MPFR_RNDN);
    }
    for (Py_ssize_t i = 0; ok && i < nsig; i++) {
        long v = PyLong_AsLong(PyTuple_GET_ITEM(signs, i));
        ok = v == 1 || v == -1;
        sg[i] = (int)v;
    }
    PyObject *coeffs = ok ? PyList_New(count * nf) : NULL, *ys = coeffs ? PyList_New(count * ny) : NULL,
             *its = ys ? PyList_New(count) : NULL, *res = its ? PyList_New(count) : NULL;
    PyObject *qprev = NULL;
    Py_ssize_t kept = 0;
    if (PyErr_Occurred()) PyErr_Clear();
    int failed = ok && res == NULL;
    if (res != NULL && check != Py_None) {        /* the previous step's q, for the check */
        qprev = PyList_New(n);
        for (Py_ssize_t d = 0; qprev && d < n; d++) {
            PyObject *x = nw_new_number(SF[q1 * n + d]);
            if (x == NULL) { Py_CLEAR(qprev); break; }
            PyList_SET_ITEM(qprev, d, x);
        }
        failed = qprev == NULL;
    }
    if (res != NULL && !failed) nw_steady();       /* K's last entries and P: the whole batch */
    for (; res != NULL && !failed && kept < count; kept++) {
        for (Py_ssize_t i = 0; i < nkd; i++) {
            long s = ksrc[i];
            mpfr_set(KD[i], s < nf ? SF[s] : SY[s - nf], MPFR_RNDN);
            kp[i] = KD[i];
        }
        int good = 1;
        for (long i = 0; good && i < ntimes; i++) {
            PyObject *x = PyList_GET_ITEM(times, kept * ntimes + i);
            good = MPFR_Check(x) && mpfr_get_prec(MPFR(x)) <= PREC;
            if (good) kp[nkd + i] = MPFR(x);
        }
        if (!good) break;
        for (Py_ssize_t i = 0; i < nf; i++) mpfr_set(EXC[i], SF[i], MPFR_RNDN);
        mpvi_linear_combination(le / m, m, n, m, EXE, EXC, xo);
        for (int i = 0; i < N; i++) mpfr_set(X[i], xo[i], MPFR_RNDN);
        long code = nw_solve(eps, rtol, scale, max_iter, slack);
        if (code <= 0 || PyErr_Occurred()) break;
        for (int i = 0; i < N; i++) xp[i] = X[i];
        nw_outputs();
        for (Py_ssize_t i = 0; good && nsig && i < NOUT - goff; i++) {
            int s = mpfr_sgn(oo[goff + i]);
            good = !mpfr_nan_p(oo[goff + i]) && (sg[i % nsig] > 0 ? s > 0 : s < 0);
        }
        if (!good) break;
        /* this step's coefficients, y, iterations and residual as new numbers (a step
           that is not kept leaves items the lists lose below) */
        Py_ssize_t base = kept * nf;
        for (Py_ssize_t f = 0; !failed && f < nf; f++) {
            long s = fsrc[f];
            PyObject *o = nw_new_number(s < nkd ? (mpfr_srcptr)kp[s] : (mpfr_srcptr)X[s - nkd]);
            if (o == NULL) failed = 1; else PyList_SET_ITEM(coeffs, base + f, o);
        }
        for (Py_ssize_t d = 0; !failed && d < ny; d++) {
            long s = ysrc[d];
            PyObject *o = nw_new_number(s < nf ? MPFR(PyList_GET_ITEM(coeffs, base + s)) : oo[s - nf]);
            if (o == NULL) failed = 1; else PyList_SET_ITEM(ys, kept * ny + d, o);
        }
        PyObject *it = failed ? NULL : PyLong_FromLong(code), *r = it ? nw_new_number(OUT[0]) : NULL;
        if (r == NULL) { Py_XDECREF(it); failed = 1; break; }
        PyList_SET_ITEM(its, kept, it);
        PyList_SET_ITEM(res, kept, r);
        if (check != Py_None) {
            PyObject *q = PyList_GetSlice(coeffs, base + q1 * n, base + (q1 + 1) * n),
                     *y = q ? PyList_GetSlice(ys, kept * ny, (kept + 1) * ny) : NULL;
            if (PyErr_Occurred()) PyErr_Clear();
            good = y != NULL && nw_check(check, PyList_GET_ITEM(ts, kept), q, y, head, qprev);
            Py_XDECREF(y);
            if (good) Py_XSETREF(qprev, q); else Py_XDECREF(q);
            if (!good) break;
        }
        for (Py_ssize_t f = 0; f < nf; f++) mpfr_set(SF[f], MPFR(PyList_GET_ITEM(coeffs, base + f)), MPFR_RNDN);
        for (Py_ssize_t d = 0; d < ny; d++) mpfr_set(SY[d], MPFR(PyList_GET_ITEM(ys, kept * ny + d)), MPFR_RNDN);
    }
    Py_XDECREF(qprev);
    mpfr_clear(es); mpfr_clear(rs); mpfr_clear(ss);
    free(src); free(sg);
    PyObject *out = NULL;
    if (res != NULL && !failed
        && PyList_SetSlice(coeffs, kept * nf, count * nf, NULL) == 0
        && PyList_SetSlice(ys, kept * ny, count * ny, NULL) == 0
        && PyList_SetSlice(its, kept, count, NULL) == 0
        && PyList_SetSlice(res, kept, count, NULL) == 0)
        out = Py_BuildValue("(nOOOO)", kept, coeffs, ys, its, res);
    Py_XDECREF(coeffs); Py_XDECREF(ys); Py_XDECREF(its); Py_XDECREF(res);
    if (!ok && !PyErr_Occurred())                  /* numbers it cannot read: none taken here */
        return Py_BuildValue("(n[][][][])", (Py_ssize_t)0);
    if (out == NULL && !PyErr_Occurred()) PyErr_NoMemory();
    return out;
}

/* the numbers of the module (at its init) */
static void nw_module_numbers(void) {
    nw_init();
    mpvi_gauss_eliminate_init();
    mpvi_gauss_eliminate_d_init();
    mpvi_newton_update_init();
    mpvi_newton_update_d_init();
    mpvi_max_norm_init();
    mpvi_scaled_solve_init();
    mpvi_refined_update_init();
    mpvi_double_start_init();
    mpvi_start_update_init();
    mpvi_newton_core_init();
    mpvi_init_array(xo, N, PREC);
    mpvi_init_array(xslot, N, 64);
    mpfr_init2(ONE, PREC);
    mpvi_linear_combination_init();
    mpfr_set_si(ONE, 1, MPFR_RNDN);
    mpvi_init_array(kslot, NKA, 64);
    mpvi_init_array(pslot, NPA, 64);
    mpvi_init_array(X, N, PREC);
    mpvi_init_array(R, N, PREC);
    mpvi_init_array(STEP, N, PREC);
    mpvi_init_array(TRIAL, N, PREC);
    mpvi_init_array(FR, N, PREC);
    mpvi_init_array(OUT, 3, PREC);
    mpvi_init_array(&JS[0][0], N * N, PREC);
    mpvi_init_array(&AS[0][0], N * N, PREC);
    mpvi_init_array(&BS[0][0], N, PREC);
    mpvi_init_array(&DS[0][0], N, PREC);
    mpvi_init_array(RES, N, PREC);
    for (int i = 0; i < N; i++) { Jr[i] = JS[i]; Ar[i] = AS[i]; Br[i] = BS[i]; Dr[i] = DS[i]; }
    for (int i = 0; i < N; i++) { JDr[i] = JD[i]; ADr[i] = AD[i]; BDr[i] = BD[i]; XDr[i] = XD[i]; }
    for (int i = 0; i < N; i++) JSDr[i] = JSD[i];
}

MPVI_DEFINE_MODULE(nw_module_numbers, "the constant tables of the kernels",
    {"newton", (PyCFunction)(void (*)(void))newton, METH_FASTCALL, "Newton's method in MPFR"},
    {"steps", (PyCFunction)(void (*)(void))steps, METH_FASTCALL, "steps of a trial-function stepper"})
#endif
