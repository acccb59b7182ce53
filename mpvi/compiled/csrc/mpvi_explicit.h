/* The RK4 and GBS steps of mpvi.engines.ode on a Hamiltonian field y = (q, p) of mpvi.engines.kernels, in
   MPFR.  The steps themselves are generated before this header from the Python of
   mpvi.numbers.explicit (rk4_core, gbs_core: the same operations in the same order, so
   the same bits); this header is their glue: reading the arguments, the field they call
   (ex_write), the storage, the Python module.

   The generated part defines, before this header: PREC, MPVI_MODULE, N (degrees of
   freedom), NPAR (parameters; NPARA: at least 1), NG (singular factors; NGR: at least 1)
   and NTABLES; and, after it, the hooks:
     ex_tables(tables): the constant tables into the field's k arrays (0: error set);
     ex_init(): the field's storage and its operations on literals (module load);
     ex_fixed(): binds the parameters (parp) and runs the operations on them alone;
     ex_evaluate(eps): fo = f(ft_[0], fy) through mp (and the dense solve M v = p when M
       is not inverted symbolically); 0 where the Python field takes its other path;
     ex_guards(): with signs given (gon), every singular factor kept its sign (sg_ok). */
#ifndef MPVI_EXPLICIT_H
#define MPVI_EXPLICIT_H
#include "mpvi_runtime.h"
#include "mpvi_module.h"
#include "mpvi_powers.h"
#include "mpvi_number.h"
#include "mpvi_solve.h"

#define NY (2 * N)
#define NA (NG > 0)                 /* one more argument: the signs of the singular factors */
#include "mpvi_signs.h"

static mpfr_ptr ft_[1], fy[NY], parp[NPARA], mp[N * N], vxp[N], yin[NY];
static mpfr_t fo[NY], vx[N], W, ONE;
static mpfr_t tslot, yslot[NY], hslot, eslot, parslot[NPARA];
/* the dense solve of M v = p (a field whose M is not inverted symbolically) */
MPVI_UNUSED static mpfr_ptr bp[N];

static int ex_tables(PyObject *tables);
static void ex_init(void);
static void ex_fixed(void);
static int ex_evaluate(mpfr_srcptr eps);
static int ex_guards(void);

static PyObject *setup(PyObject *self, PyObject *tables) {
    (void)self;
    return mpvi_setup(tables, NTABLES, ex_tables);
}

/* mpvi.numbers.linalg.hadamard_regular(N, det, M, eps), generated before this header: M
   (mp, pointers) copied (exactly) into its storage */
static mpfr_t MS[N * N];
MPVI_UNUSED static int ex_regular(mpfr_srcptr det, mpfr_srcptr eps) {
    for (int i = 0; i < N * N; i++) mpfr_set(MS[i], mp[i], MPFR_RNDN);
    return mpvi_hadamard_regular(N, det, MS, eps);
}

/* fo = f(ft_[0], fy): 0 where the Python field takes its other path, or (signs given) a
   singular factor at (ft_[0], fy, v = fo) has left its sign */
static int ex_field(mpfr_srcptr eps) {
    if (!ex_evaluate(eps)) return 0;
    for (int i = 0; i < NY; i++) if (!mpfr_number_p(fo[i])) return 0;
    return ex_guards();
}

/* the common arguments: t, y, params, eps; 0 (fallback) if one is not a number we take */
static int ex_read(PyObject *t, PyObject *y, PyObject *params, PyObject *eps, mpfr_ptr *e) {
    if (!ready) { PyErr_SetString(PyExc_RuntimeError, "compiled field used before setup"); return 0; }
    if (!(ft_[0] = nw_number(t, tslot)) || !(*e = nw_number(eps, eslot))) return 0;
    if (!nw_read(y, NY, yin, yslot) || !nw_read(params, NPAR, parp, parslot)) return 0;
    ex_fixed();
    return 1;
}

static PyObject *field(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr eps;
    if (nargs != 4 + NA) { PyErr_Format(PyExc_TypeError, "field takes %d arguments, got %zd", 4 + NA, nargs); return NULL; }
    if (!ex_read(args[0], args[1], args[2], args[3], &eps) || (NA && !sg_read(args[4]))) goto fallback;
    for (int i = 0; i < NY; i++) fy[i] = yin[i];
    if (!ex_field(eps)) goto fallback;
    mpfr_ptr out[NY];
    for (int i = 0; i < NY; i++) out[i] = fo[i];
    return nw_result(out, NY);
fallback:
    return mpvi_fallback();
}

/* the field of the generated steps, f(t, y, out): out = f(t, y) by the module's field at
   the eps of the current call; 0 where the Python field takes another path */
static mpfr_srcptr ex_eps;
static int ex_write(mpfr_srcptr t, mpfr_t *y, mpfr_t *out) {
    ft_[0] = (mpfr_ptr)t;                       /* read only, by the field's kernels */
    for (int i = 0; i < NY; i++) fy[i] = y[i];
    if (!ex_field(ex_eps)) return 0;
    for (int i = 0; i < NY; i++) mpfr_set(out[i], fo[i], MPFR_RNDN);
    return 1;
}

/* the storage of the steps: y (a copy of the caller's, exact), the stages, the result */
static mpfr_t Y[NY], K[4][NY], Z[4][NY], OUT[NY];

/* rk4(t, y, h, params, eps): mpvi.numbers.explicit.rk4_core, generated before this header */
static PyObject *rk4(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr eps, h;
    if (nargs != 5 + NA) { PyErr_Format(PyExc_TypeError, "rk4 takes %d arguments, got %zd", 5 + NA, nargs); return NULL; }
    if (!ex_read(args[0], args[1], args[3], args[4], &eps) || !(h = nw_number(args[2], hslot))
        || (NA && !sg_read(args[5]))) goto fallback;
    ex_eps = eps;
    for (int i = 0; i < NY; i++) mpfr_set(Y[i], yin[i], MPFR_RNDN);
    if (!mpvi_rk4_core(NY, ex_write, ft_[0], Y, h, K[0], K[1], K[2], K[3], Z[0], OUT)) goto fallback;
    mpfr_ptr out[NY];
    for (int i = 0; i < NY; i++) out[i] = OUT[i];
    return nw_result(out, NY);
fallback:
    return mpvi_fallback();
}

/* rk4_steps(starts, ends, y, h, params, eps, check, head[, signs]): up to len(ends) steps
   of rk4() with no Python between them (mpvi.drive.solve: steps in batches), step i from
   (starts[i], the y before), each followed by check(ends[i], q, p, *head) (None: none),
   which must return True (`...` in head: the q before the step).  A step that declines
   (the Python step's other path, a singular factor that left its sign at a stage) or fails
   the check ends the batch before it, as do inputs that are not the module's numbers.
   Returns (done, ys): the done steps' y, NY new numbers per step, one after the other. */
static PyObject *rk4_steps(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr eps, h;
    if (nargs != 8 + NA) {
        PyErr_Format(PyExc_TypeError, "rk4_steps takes %d arguments, got %zd", 8 + NA, nargs);
        return NULL;
    }
    PyObject *starts = args[0], *ends = args[1], *check = args[6], *head = args[7];
    if (!PyList_Check(starts) || !PyList_Check(ends) || !PyTuple_Check(head)
        || PyTuple_GET_SIZE(head) > 8 || PyList_GET_SIZE(starts) < PyList_GET_SIZE(ends)) {
        PyErr_SetString(PyExc_TypeError, "rk4_steps: malformed arguments");
        return NULL;
    }
    Py_ssize_t size = PyList_GET_SIZE(ends), count = size, done = 0;
    PyObject *ys = PyList_New(size * NY), *qprev = NULL;
    if (ys == NULL) return NULL;
    if (!count || !ex_read(PyList_GET_ITEM(starts, 0), args[2], args[4], args[5], &eps)
        || !(h = nw_number(args[3], hslot)) || (NA && !sg_read(args[8]))) {
        if (PyErr_Occurred()) { Py_DECREF(ys); return NULL; }
        count = 0;                                 /* numbers it cannot read: none taken here */
    } else {
        ex_eps = eps;
        for (int i = 0; i < NY; i++) mpfr_set(Y[i], yin[i], MPFR_RNDN);
    }
    int failed = 0;
    if (count && check != Py_None) {               /* the q before the first step */
        mpfr_ptr q0[N];
        for (int i = 0; i < N; i++) q0[i] = Y[i];
        failed = (qprev = nw_result(q0, N)) == NULL;
    }
    for (; !failed && done < count; done++) {
        mpfr_ptr t = nw_number(PyList_GET_ITEM(starts, done), tslot);
        if (t == NULL || !mpvi_rk4_core(NY, ex_write, t, Y, h, K[0], K[1], K[2], K[3], Z[0], OUT))
            break;
        PyObject *q = PyList_New(N), *p = q ? PyList_New(N) : NULL;
        for (int i = 0; p != NULL && i < NY; i++) {
            PyObject *o = nw_new_number(OUT[i]);
            if (o == NULL) { Py_CLEAR(p); break; }
            PyList_SET_ITEM(i < N ? q : p, i % N, o);
        }
        if (p == NULL) { Py_XDECREF(q); failed = 1; break; }
        int good = check == Py_None || nw_check(check, PyList_GET_ITEM(ends, done), q, p, head, qprev);
        if (good)
            for (int i = 0; i < NY; i++) {
                PyObject *o = PyList_GET_ITEM(i < N ? q : p, i % N);
                Py_INCREF(o);
                PyList_SET_ITEM(ys, done * NY + i, o);
                mpfr_set(Y[i], OUT[i], MPFR_RNDN);
            }
        Py_DECREF(p);
        if (good) Py_XSETREF(qprev, q); else Py_DECREF(q);
        if (!good) break;
    }
    Py_XDECREF(qprev);
    if (failed || PyList_SetSlice(ys, done * NY, size * NY, NULL) < 0) {
        Py_DECREF(ys);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return NULL;
    }
    return Py_BuildValue("(nN)", done, ys);
}

static mpfr_t *rows[2];         /* two rows of the extrapolation tableau: levels x NY each */
static mpfr_t **rowp[2];        /* their row pointers */
static long capacity = 0;

static int ex_reserve(long levels) {
    if (levels <= capacity) return 1;
    for (int r = 0; r < 2; r++) {
        mpfr_t *grown = (mpfr_t *)realloc(rows[r], sizeof(mpfr_t) * levels * NY);
        if (grown == NULL) { PyErr_NoMemory(); return 0; }
        rows[r] = grown;
        for (long i = capacity * NY; i < levels * NY; i++) mpfr_init2(rows[r][i], PREC);
        mpfr_t **pointers = (mpfr_t **)realloc(rowp[r], sizeof(mpfr_t *) * levels);
        if (pointers == NULL) { PyErr_NoMemory(); return 0; }
        rowp[r] = pointers;
    }
    capacity = levels;
    return 1;
}

/* gbs(t, y, H, levels, params, eps): mpvi.numbers.explicit.gbs_core, generated before this
   header */
static PyObject *gbs(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr eps, H;
    if (nargs != 6 + NA) { PyErr_Format(PyExc_TypeError, "gbs takes %d arguments, got %zd", 6 + NA, nargs); return NULL; }
    long levels = PyLong_AsLong(args[3]);
    if (PyErr_Occurred()) return NULL;
    if (levels < 1 || levels > 4096) {
        PyErr_Format(PyExc_ValueError, "gbs: levels must be 1 to 4096, got %ld", levels);
        return NULL;
    }
    if (!ex_read(args[0], args[1], args[4], args[5], &eps) || !(H = nw_number(args[2], hslot))
        || (NA && !sg_read(args[6]))) goto fallback;
    if (!ex_reserve(levels)) return NULL;
    ex_eps = eps;
    for (int r = 0; r < 2; r++)                          /* the rows in order (swapped by a step) */
        for (long i = 0; i < levels; i++) rowp[r][i] = rows[r] + i * NY;
    for (int i = 0; i < NY; i++) mpfr_set(Y[i], yin[i], MPFR_RNDN);
    if (!mpvi_gbs_core(NY, ex_write, ft_[0], Y, H, levels, ONE, K[0], Z[0], Z[1], Z[2], Z[3],
                       rowp[0], rowp[1], OUT)) goto fallback;
    mpfr_ptr out[NY];
    for (int i = 0; i < NY; i++) out[i] = OUT[i];
    return nw_result(out, NY);
fallback:
    return mpvi_fallback();
}

/* the numbers of the module (at its init) */
static void ex_module_numbers(void) {
    ex_init();
    for (int i = 0; i < NY; i++) {
        mpfr_init2(fo[i], PREC); mpfr_init2(yslot[i], 64);
        mpfr_init2(Y[i], PREC); mpfr_init2(OUT[i], PREC);
        for (int s = 0; s < 4; s++) { mpfr_init2(K[s][i], PREC); mpfr_init2(Z[s][i], PREC); }
    }
    dense_solve_init(vx);
    mpfr_init2(W, PREC);
    for (int i = 0; i < N; i++) vxp[i] = vx[i];
    mpvi_init_array(parslot, NPARA, 64);
    mpfr_init2(ONE, PREC);
    mpvi_init_array(MS, N * N, PREC);
    mpvi_hadamard_regular_init();
    mpfr_set_si(ONE, 1, MPFR_RNDN);
    mpvi_rk4_core_init();
    mpvi_gbs_core_init();
    mpfr_inits2(64, tslot, hslot, eslot, (mpfr_ptr)0);
}

MPVI_DEFINE_MODULE(ex_module_numbers, "the constant tables of the field's functions",
    {"field", (PyCFunction)(void (*)(void))field, METH_FASTCALL, "the Hamiltonian field"},
    {"rk4", (PyCFunction)(void (*)(void))rk4, METH_FASTCALL, "one RK4 step"},
    {"rk4_steps", (PyCFunction)(void (*)(void))rk4_steps, METH_FASTCALL, "RK4 steps in a batch"},
    {"gbs", (PyCFunction)(void (*)(void))gbs, METH_FASTCALL, "one GBS step"})
#endif
