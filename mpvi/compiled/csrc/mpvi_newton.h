/* Newton's method of mpvi.numbers.newton.solve_info on a kernel of mpvi.engines.kernels, with the
   elimination of mpvi.numbers.linalg.solve_dense, in MPFR: the same operations in the same order,
   so the same bits and iteration counts.

   The generated part defines, before this header: PREC, MPVI_MODULE, N (the unknowns), NK
   and NP (the known values and parameters; NKA, NPA: at least 1), NOUT (the outputs, at
   least 1), HAS_OUTPUTS (0 or 1) and NTABLES (the constant tables setup() takes); and,
   after it, the hooks:
     nw_tables(tables): the constant tables into the kernels' k arrays (0: error set);
     nw_init(): the kernels' storage and their operations on literals (module load);
     nw_pre(): binds K, P (kp, pp) and runs the operations on them alone (once per solve);
     nw_both(): binds X (xp), computes the residual rp and the Jacobian Jp;
     nw_residual(): the residual rr at the converged X (the residual check);
     nw_outputs(): the step's outputs oo at the converged X (empty without outputs). */
#ifndef MPVI_NEWTON_H
#define MPVI_NEWTON_H
#include "mpvi_runtime.h"
#include "mpvi_module.h"
#include "mpvi_powers.h"
#include "mpvi_solve.h"
#include "mpvi_number.h"

static mpfr_t xo[N], bo[N], dx[N], S, W1, W2, W3, DN1, DN2, XN, JN, RN;
static mpfr_ptr dxp[N], xp[N], bp[N], rp[N], Jp[N][N], rr[N], oo[NOUT];
static mpfr_ptr kp[NKA], pp[NPA], xin[N];
static mpfr_t kslot[NKA], pslot[NPA], xslot[N];

static int nw_tables(PyObject *tables);
static void nw_init(void);
static void nw_pre(void);
static void nw_both(void);
static void nw_residual(void);
static void nw_outputs(void);

static PyObject *setup(PyObject *self, PyObject *tables) {
    (void)self;
    return mpvi_setup(tables, NTABLES, nw_tables);
}

/* max_i |v_i| (the first largest, as Python's max), 0 if a value is not finite */
static int nw_norm(mpfr_ptr *v, int count, mpfr_t out) {
    int best = 0;
    for (int i = 0; i < count; i++) {
        if (!mpfr_number_p(v[i])) return 0;
        if (i > 0 && mpfr_cmpabs(v[i], v[best]) > 0) best = i;
    }
    mpfr_abs(out, v[best], MPFR_RNDN);
    return 1;
}

/* mpvi.numbers.linalg.solve_dense(J, -r) */
static int nw_solve(mpfr_srcptr eps) {
    for (int i = 0; i < N; i++) {
        mpfr_neg(bo[i], rp[i], MPFR_RNDN);
        bp[i] = bo[i];
    }
    return dense_solve(&Jp[0][0], bp, dx, eps);
}

/* the first guess extrapolated from the previous step, as Python's
   x_{u,d} = sum(c_i * e_{u,i} for i), c_i the m vectors of C, e the U x m table E:
   0 + c_0 e_0 is c_0 e_0 exactly, then one rounded product and sum per term */
static int nw_extrapolate(PyObject *cs, PyObject *es, long m) {
    PyObject *C = PySequence_Fast(cs, "a sequence"), *E = C ? PySequence_Fast(es, "a sequence") : NULL;
    int ok = C && E && m > 0;
    Py_ssize_t lc = ok ? PySequence_Fast_GET_SIZE(C) : 0, le = ok ? PySequence_Fast_GET_SIZE(E) : 0;
    ok = ok && lc % m == 0 && le % m == 0 && (lc / m) * (le / m) == N;
    Py_ssize_t nd = ok ? lc / m : 0;
    for (Py_ssize_t k = 0; ok && k < N; k++) {
        Py_ssize_t u = k / nd, d = k % nd;
        for (Py_ssize_t i = 0; ok && i < m; i++) {
            PyObject *x = PySequence_Fast_GET_ITEM(C, i * nd + d), *e = PySequence_Fast_GET_ITEM(E, u * m + i);
            ok = MPFR_Check(x) && MPFR_Check(e) && mpfr_get_prec(MPFR(x)) <= PREC
                 && mpfr_get_prec(MPFR(e)) <= PREC;
            if (!ok) break;
            if (i == 0) mpfr_mul(xo[k], MPFR(x), MPFR(e), MPFR_RNDN);
            else {
                mpfr_mul(W1, MPFR(x), MPFR(e), MPFR_RNDN);
                mpfr_add(xo[k], xo[k], W1, MPFR_RNDN);
            }
        }
        xp[k] = xo[k];
    }
    Py_XDECREF(C); Py_XDECREF(E);
    if (PyErr_Occurred()) PyErr_Clear();
    return ok;
}

/* the residual check of the converged iterate: ||r|| <= n rtol ||J||_inf max(||x||, scale)
   slack (XN holds max(||x||, scale)) */
static int nw_residual_ok(mpfr_srcptr rtol, long slack) {
    if (!nw_norm(rr, N, RN)) return 0;
    for (int i = 0; i < N; i++) {          /* ||J||_inf: row sums, from 0 as Python's sum */
        mpfr_abs(S, Jp[i][0], MPFR_RNDN);
        for (int j = 1; j < N; j++) {
            mpfr_abs(W1, Jp[i][j], MPFR_RNDN);
            mpfr_add(S, S, W1, MPFR_RNDN);
        }
        if (i == 0 || mpfr_greater_p(S, JN)) mpfr_set(JN, S, MPFR_RNDN);
    }
    mpfr_mul_si(W1, rtol, N, MPFR_RNDN);      /* n rtol ||J|| max(||x||, scale) slack */
    mpfr_mul(W1, W1, JN, MPFR_RNDN);
    mpfr_mul(W1, W1, XN, MPFR_RNDN);
    mpfr_mul_si(W1, W1, slack, MPFR_RNDN);
    return mpfr_lessequal_p(RN, W1);
}

/* (X, iterations, residual[, outputs]) of the converged iterate, or NULL */
static PyObject *nw_converged(long it) {
    PyObject *out = NULL;
    mpfr_ptr rn = RN;
    PyObject *x = nw_result(xp, N), *r = x ? nw_result(&rn, 1) : NULL, *o = NULL;
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
   extrapolation C, E, m given, the first guess is extrapolated here */
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
    if (!ok) goto fallback;
    nw_pre();
    mpfr_ptr dn = NULL, previous = NULL;
    for (long it = 1; it <= max_iter; it++) {
        nw_both();
        for (int i = 0; i < N; i++) if (!mpfr_number_p(rp[i])) goto fallback;
        if (!nw_solve(eps)) goto fallback;
        for (int i = 0; i < N; i++) {
            mpfr_add(xo[i], xp[i], dx[i], MPFR_RNDN);
            xp[i] = xo[i];
        }
        mpfr_ptr fresh = (dn == DN1) ? DN2 : DN1;    /* previous, dn = dn, ||dx|| */
        for (int i = 0; i < N; i++) dxp[i] = dx[i];
        if (!nw_norm(dxp, N, fresh)) goto fallback;
        previous = dn;
        dn = fresh;
        if (!nw_norm(xp, N, XN)) goto fallback;
        if (mpfr_greater_p(scale, XN)) mpfr_set(XN, scale, MPFR_RNDN);
        mpfr_mul(W1, rtol, XN, MPFR_RNDN);
        int converged = mpfr_lessequal_p(dn, W1);
        if (!converged && previous != NULL) {
            mpfr_mul_2ui(W1, dn, 1, MPFR_RNDN);
            if (mpfr_lessequal_p(W1, previous)) {
                mpfr_pow_ui(W1, dn, 3, MPFR_RNDN);
                mpfr_mul(W2, eps, XN, MPFR_RNDN);
                mpfr_sqr(W3, previous, MPFR_RNDN);
                mpfr_mul(W2, W2, W3, MPFR_RNDN);
                converged = mpfr_lessequal_p(W1, W2);
            }
        }
        if (!converged) continue;
        nw_residual();
        if (!nw_residual_ok(rtol, slack)) goto fallback;
        nw_outputs();
        PyObject *out = nw_converged(it);
        mpfr_clear(es); mpfr_clear(rs); mpfr_clear(ss);
        return out;
    }
fallback:
    mpfr_clear(es); mpfr_clear(rs); mpfr_clear(ss);
    return mpvi_fallback();
}

/* the numbers of the module (at its init) */
static void nw_module_numbers(void) {
    nw_init();
    mpvi_init_array(xo, N, PREC);
    mpvi_init_array(xslot, N, 64);
    dense_solve_init(dx);
    mpvi_init_array(bo, N, PREC);
    mpfr_inits2(PREC, W1, S, (mpfr_ptr)0);
    mpvi_init_array(kslot, NKA, 64);
    mpvi_init_array(pslot, NPA, 64);
    mpfr_inits2(PREC, W2, W3, DN1, DN2, XN, JN, RN, (mpfr_ptr)0);
}

MPVI_DEFINE_MODULE(nw_module_numbers, "the constant tables of the kernels",
    {"newton", (PyCFunction)(void (*)(void))newton, METH_FASTCALL, "Newton's method in MPFR"})
#endif
