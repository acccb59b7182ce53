/* The checks mpvi.solve makes after every step of an M, V system, in MPFR: every number
   of q and y finite, max |x| <= bound (the growth guard), the system regular at q (V and M
   finite, M positive definite by the LDL^T of mpvi.numbers.linalg.ldl_positive, generated from
   its Python before this header) and, with the singular factors, each keeping its sign at
   q and at the chord midpoint.

   The generated part defines, before this header: PREC, MPVI_MODULE, N, NPAR (parameters;
   NPARA: at least 1), NG (singular factors; NGR: at least 1) and NTABLES (1, or 2 with
   the singular factors); and, after it, the hooks:
     ck_tables(tables): the constant tables into the kernels' k arrays (0: error set);
     ck_init(): the kernels' storage and their operations on literals (module load);
     ck_evaluate(): binds t, q, params (tp, yp, parp), computes the regularity kernel
       [V, M] (M into mp) and returns V;
     ck_guards(qmid): with signs given (gon), every singular factor has its sign at q and,
       qmid, at the chord midpoint qm. */
#ifndef MPVI_CHECK_H
#define MPVI_CHECK_H
#include "mpvi_runtime.h"
#include "mpvi_module.h"
#include "mpvi_powers.h"
#include "mpvi_number.h"
#include "mpvi_signs.h"

static mpfr_ptr tp[1], yp[2 * N], parp[NPARA], mp[N * N], qm[N], qprev[N];
static mpfr_t tslot, yslot[2 * N], bslot, parslot[NPARA], D[N], A[N][N], L[N][N], QM[N], pslot[N];
static mpfr_t *Ar[N], *Lr[N];

static int ck_tables(PyObject *tables);
static void ck_init(void);
static mpfr_srcptr ck_evaluate(void);
static int ck_guards(int qmid);

static PyObject *setup(PyObject *self, PyObject *tables) {
    (void)self;
    return mpvi_setup(tables, NTABLES, ck_tables);
}

/* mpvi.numbers.linalg.is_positive_definite on mp: mp copied (exactly: its numbers are at
   PREC) into the storage of mpvi_ldl_positive, generated before this header from the
   Python of mpvi.numbers.linalg.ldl_positive */
static int ck_positive_definite(void) {
    for (int i = 0; i < N; i++) {
        Ar[i] = A[i];
        Lr[i] = L[i];
        for (int j = 0; j < N; j++) mpfr_set(A[i][j], mp[i * N + j], MPFR_RNDN);
    }
    return mpvi_ldl_positive(N, Ar, D, Lr);
}

/* check(t, q, y, params, bound[, signs, qprev]): True if every check after the step passes */
static PyObject *check(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!ready) { PyErr_SetString(PyExc_RuntimeError, "compiled check used before setup"); return NULL; }
    if (nargs != (NG ? 7 : 5)) { PyErr_Format(PyExc_TypeError, "check takes %d arguments, got %zd", NG ? 7 : 5, nargs); return NULL; }
    int qmid = 0;
    if (NG) {
        if (!sg_read(args[5])) Py_RETURN_FALSE;
        if (args[6] != Py_None) {
            if (!nw_read(args[6], N, qprev, pslot)) Py_RETURN_FALSE;
            qmid = 1;
        }
    }
    mpfr_ptr bound = args[4] == Py_None ? NULL : nw_number(args[4], bslot);
    if (!(tp[0] = nw_number(args[0], tslot)) || (args[4] != Py_None && bound == NULL)
        || !nw_read(args[1], N, yp, yslot) || !nw_read(args[3], NPAR, parp, parslot))
        Py_RETURN_FALSE;
    int ny = N;
    if (args[2] != Py_None) {
        if (!nw_read(args[2], N, yp + N, yslot + N)) Py_RETURN_FALSE;
        ny = 2 * N;
    }
    for (int i = 0; i < ny; i++) {
        if (!mpfr_number_p(yp[i])) Py_RETURN_FALSE;
        if (bound != NULL && mpfr_cmpabs(yp[i], bound) > 0) Py_RETURN_FALSE;
    }
    mpfr_srcptr potential = ck_evaluate();
    if (!mpfr_number_p(potential)) Py_RETURN_FALSE;
    for (int i = 0; i < N * N; i++) if (!mpfr_number_p(mp[i])) Py_RETURN_FALSE;
    if (!ck_positive_definite()) Py_RETURN_FALSE;
    if (qmid) for (int i = 0; i < N; i++) {         /* the chord midpoint (q + qprev) / 2 */
        mpfr_add(QM[i], yp[i], qprev[i], MPFR_RNDN);
        mpfr_div_2ui(QM[i], QM[i], 1, MPFR_RNDN);
    }
    if (!ck_guards(qmid)) Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

/* the numbers of the module (at its init) */
static void ck_module_numbers(void) {
    ck_init();
    mpvi_init_array(yslot, 2 * N, 64);
    mpvi_init_array(parslot, NPARA, 64);
    for (int i = 0; i < N; i++) {
        mpfr_init2(D[i], PREC); mpfr_init2(QM[i], PREC); mpfr_init2(pslot[i], 64); qm[i] = QM[i];
    }
    mpvi_ldl_positive_init();
    mpvi_init_array(&A[0][0], N * N, PREC);
    mpvi_init_array(&L[0][0], N * N, PREC);
    mpfr_init2(tslot, 64); mpfr_init2(bslot, 64);
}

MPVI_DEFINE_MODULE(ck_module_numbers, "the constant table of the regularity kernel",
    {"check", (PyCFunction)(void (*)(void))check, METH_FASTCALL, "the checks after a step"})
#endif
