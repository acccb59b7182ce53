/* A compiled dual kernel (mpvi.compiled.carb): a generated function of mpvi.compiled.codegen on the balls
   with first derivatives of mpvi.numbers.arb._Dual, the Python class's operations done in C with
   the same Arb calls in the same order, so the same value and derivative balls.

   Included after mpvi_arb.h (MPVI_DUAL defined) by the generated part, which also
   defines NARGS (the duals read from the arguments, at least 1) and, after it, the
   functions of mpvi.numbers.arb.DUAL_RULES the kernel calls (da_rule_sin, ...,
   translated from the rules' Python by mpvi.compiled.carb._RuleTranslator: written once)
   on top of da_chain and da_combine, and the arithmetic it calls (da_add, da_sub,
   da_rsub, da_mul, da_div, da_neg, da_pow): mpvi.numbers.arb.DUAL_CHAIN, DUAL_ARITHMETIC,
   DUAL_NEGATION and DUAL_POWER translated by mpvi.compiled.carb._ArithmeticTranslator,
   the _Dual methods made of the same lambdas.  Here only the glue: storage, reading the
   arguments, writing the results.  A dual is a value ball
   v and either no derivatives (d NULL: a constant, _Dual's empty tuple) or m derivative
   balls d[0..m-1], m the same for every dual of a call (fixed by the arguments).  Every
   operation writes temporary i: its value into tv[i], its derivatives into td[i] (or
   d points to an operand's, as the Python class shares the tuple): each temporary is
   written once per call, so such a pointer stays valid.  Each function below says which
   Python method of _Dual (mpvi/numbers/arb.py) it is; "x * y" of balls there is arb_mul(x, y),
   an int operand an exact ball (python-flint's conversion). */
#ifndef MPVI_DUAL_H
#define MPVI_DUAL_H
#include "mpvi_arb.h"

typedef struct { arb_srcptr v; arb_ptr d; } dual;

static arb_t tv[NTEMPS];                   /* values of the temporaries */
static arb_ptr td[NTEMPS];                 /* derivative storage of the temporaries */
static dual T[NTEMPS];
static arb_ptr ad[NARGS];                  /* derivative storage of the arguments */
static dual A[NARGS];                      /* the arguments (values read in place) */
static dual K[NCONST];                     /* the constant table as constant duals */
static slong m;                            /* derivatives per dual in this call */
static slong cap = 0;                      /* the length of every td[i] and ad[i] */
static arb_t s1, s2;                      /* scratch (the range check, da_combine) */
static PyObject *name_v, *name_d;       /* the attributes of a _Dual */
static PyTypeObject *dual_type = NULL;     /* mpvi.numbers.arb._Dual, given to setup() */

/* a constant dual of the ball v (the Python _Dual(v, ())) */
static inline dual dc(arb_srcptr v) {
    dual r = {v, NULL};
    return r;
}

static arb_ptr da_alloc(slong n) {
    arb_ptr p = (arb_ptr)PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(arb_struct));
    if (p != NULL)
        for (slong j = 0; j < n; j++) arb_init(p + j);
    return p;
}

static void da_free(arb_ptr p, slong n) {
    if (p == NULL) return;
    for (slong j = 0; j < n; j++) arb_clear(p + j);
    PyMem_Free(p);
}

/* every derivative storage at least n long; 0 (MemoryError) on failure */
static int da_reserve(slong n) {
    if (n <= cap) return 1;
    for (int i = 0; i < NTEMPS; i++) {
        arb_ptr p = da_alloc(n);
        if (p == NULL) { PyErr_NoMemory(); return 0; }
        da_free(td[i], cap);
        td[i] = p;
    }
    for (int i = 0; i < NARGS; i++) {
        arb_ptr p = da_alloc(n);
        if (p == NULL) { PyErr_NoMemory(); return 0; }
        da_free(ad[i], cap);
        ad[i] = p;
    }
    cap = n;
    return 1;
}

/* setup()'s third argument: the type of the duals; 0 (an error set) if it is none */
static int da_setup(PyObject *duals) {
    if (duals == NULL || !PyType_Check(duals)) {
        PyErr_SetString(PyExc_TypeError, "setup: a dual module needs the type of the duals");
        return 0;
    }
    Py_INCREF(duals);
    Py_XDECREF((PyObject *)dual_type);
    dual_type = (PyTypeObject *)duals;
    return 1;
}

static int da_module_init(void) {
    for (int i = 0; i < NTEMPS; i++) { arb_init(tv[i]); T[i].v = tv[i]; }
    for (int i = 0; i < NCONST; i++) K[i] = dc(k[i]);
    arb_init(s1); arb_init(s2);
    name_v = PyUnicode_InternFromString("v");
    name_d = PyUnicode_InternFromString("d");
    return name_v != NULL && name_d != NULL && da_reserve(1);
}

/* one argument dual into A[j] (its derivatives copied into ad[j]): 1, 0 (an error set)
   or -1 (not a _Dual of a flint.arb and a tuple of 0 or m flint.arb: Python computes) */
static int da_read(PyObject *x, int j) {
    if (Py_TYPE(x) != dual_type) return -1;
    PyObject *v = PyObject_GetAttr(x, name_v);
    if (v == NULL) return 0;
    PyObject *d = PyObject_GetAttr(x, name_d);
    if (d == NULL) { Py_DECREF(v); return 0; }
    int rc = -1;
    if (Py_TYPE(v) == arb_type && PyTuple_Check(d)) {
        Py_ssize_t n = PyTuple_GET_SIZE(d);
        A[j].v = BALL(v);               /* the _Dual keeps v alive during the call */
        A[j].d = NULL;
        rc = 1;
        if (n > 0) {
            if (m < 0) {
                m = n;
                if (!da_reserve(m)) rc = 0;
            }
            if (rc == 1 && n != m) rc = -1;
            for (Py_ssize_t i = 0; rc == 1 && i < n; i++) {
                PyObject *e = PyTuple_GET_ITEM(d, i);
                if (Py_TYPE(e) != arb_type) rc = -1;
                else arb_set(ad[j] + i, BALL(e));
            }
            if (rc == 1) A[j].d = ad[j];
        }
    }
    Py_DECREF(v);
    Py_DECREF(d);
    return rc;
}

/* the count duals of the argument group x into A[first..] */
MPVI_UNUSED static int da_group(PyObject *x, Py_ssize_t count, int first) {
    PyObject *seq = PySequence_Fast(x, "a compiled dual kernel's argument must be a sequence");
    if (seq == NULL) return 0;
    if (PySequence_Fast_GET_SIZE(seq) != count) {
        PyErr_Format(PyExc_ValueError, "a compiled dual kernel's argument must have %zd items, "
                     "got %zd", count, PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return 0;
    }
    int rc = 1;
    for (Py_ssize_t j = 0; rc == 1 && j < count; j++)
        rc = da_read(PySequence_Fast_GET_ITEM(seq, j), first + (int)j);
    Py_DECREF(seq);
    return rc;
}

/* before the arguments are read: no derivatives yet */
MPVI_UNUSED static void da_start(void) { m = -1; }

/* after: m = 0 when no argument carries derivatives */
MPVI_UNUSED static void da_started(void) { if (m < 0) m = 0; }

/* result[i] = _Dual(a new ball of a.v, a tuple of new balls of a.d, or ()) */
MPVI_UNUSED static int da_out(PyObject *result, Py_ssize_t i, dual a) {
    PyObject *v = ma_new(a.v);
    if (v == NULL) return 0;
    PyObject *d = PyTuple_New(a.d != NULL ? m : 0);
    if (d == NULL) { Py_DECREF(v); return 0; }
    for (slong j = 0; a.d != NULL && j < m; j++) {
        PyObject *e = ma_new(a.d + j);
        if (e == NULL) { Py_DECREF(v); Py_DECREF(d); return 0; }
        PyTuple_SET_ITEM(d, j, e);
    }
    PyObject *o = PyObject_CallFunctionObjArgs((PyObject *)dual_type, v, d, NULL);
    Py_DECREF(v);
    Py_DECREF(d);
    if (o == NULL) return 0;
    PyList_SET_ITEM(result, i, o);
    return 1;
}

#endif
