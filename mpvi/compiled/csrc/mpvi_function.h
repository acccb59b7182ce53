/* A compiled kernel: one generated function of mpvi.compiled.codegen, f(*groups) -> list of mpfr.

   The generated part defines, before this header: PREC, MPVI_MODULE, NTEMPS, NCONST
   (the sizes of the temporaries t and the constant table k, at least 1), NCONST_REAL (the
   constants setup() takes), NZ (the exact integers z), NSLOTS (the exact copies of int
   arguments), NGROUPS (the arguments of f) and NRESULTS; and, after it, the hooks:
     mk_evaluate(args, result): reads the arguments (arg, mk_group), computes, and sets the
       NRESULTS items of result (mk_mpfr, mk_int); 0 with a Python error set on failure;
     mk_init(): the exact integers and the operations on literals alone (module load). */
#ifndef MPVI_FUNCTION_H
#define MPVI_FUNCTION_H
#include "mpvi_runtime.h"
#include "mpvi_module.h"
#include "mpvi_powers.h"

static mpfr_t t[NTEMPS];
static mpfr_t k[NCONST];
MPVI_UNUSED static mpfr_t z[NZ];          /* the exact integers, if any */
static mpfr_t slots[NSLOTS];

static int mk_evaluate(PyObject *const *args, PyObject *result);
static void mk_init(void);

/* an argument: the mpfr_t of a gmpy2 mpfr, or an exact copy of a Python int */
static mpfr_ptr arg(PyObject *x, int group, int index, mpfr_t *slot) {
    if (MPFR_Check(x)) return MPFR(x);
    if (PyLong_Check(x)) {
        int overflow = 0;
        long n = PyLong_AsLongAndOverflow(x, &overflow);
        if (!overflow && !(n == -1 && PyErr_Occurred())) {
            mpfr_set_si(*slot, n, MPFR_RNDN);
            return *slot;
        }
    }
    PyErr_Format(PyExc_TypeError, "compiled kernel: argument %d[%d] must be a gmpy2 mpfr "
                 "(or a small int), got %s", group, index, Py_TYPE(x)->tp_name);
    return NULL;
}

/* the count items of the argument group x, each read by arg() into out[] */
MPVI_UNUSED static int mk_group(PyObject *x, int group, Py_ssize_t count, mpfr_ptr *out,
                                mpfr_t *slot) {
    PyObject *seq = PySequence_Fast(x, "a sequence");
    if (seq == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "argument %d must be a sequence", group);
        }
        return 0;
    }
    if (PySequence_Fast_GET_SIZE(seq) != count) {
        PyErr_Format(PyExc_ValueError, "argument %d must have %zd items, got %zd", group, count,
                     PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return 0;
    }
    for (Py_ssize_t j = 0; j < count; j++)
        if (!(out[j] = arg(PySequence_Fast_GET_ITEM(seq, j), group, (int)j, &slot[j]))) {
            Py_DECREF(seq);
            return 0;
        }
    Py_DECREF(seq);
    return 1;
}

/* result[i] = a new mpfr, a copy of r at its precision */
MPVI_UNUSED static int mk_mpfr(PyObject *result, Py_ssize_t i, mpfr_srcptr r) {
    PyObject *o = (PyObject *)GMPy_MPFR_New(mpfr_get_prec(r), NULL);
    if (o == NULL) return 0;
    mpfr_set(MPFR(o), r, MPFR_RNDN);
    PyList_SET_ITEM(result, i, o);
    return 1;
}

/* result[i] = the Python int of the decimal digits (a result Python keeps an int) */
MPVI_UNUSED static int mk_int(PyObject *result, Py_ssize_t i, const char *digits) {
    PyObject *o = PyLong_FromString(digits, NULL, 10);
    if (o == NULL) return 0;
    PyList_SET_ITEM(result, i, o);
    return 1;
}

static PyObject *setup(PyObject *self, PyObject *constants) {
    (void)self;
    PyObject *seq = PySequence_Fast(constants, "setup needs a sequence of mpfr");
    if (seq == NULL) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != NCONST_REAL) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "setup: wrong number of constants");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < NCONST_REAL; i++) {
        PyObject *c = PySequence_Fast_GET_ITEM(seq, i);
        if (!MPFR_Check(c)) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "setup: constants must be mpfr");
            return NULL;
        }
        mpfr_set_prec(k[i], mpfr_get_prec(MPFR(c)));
        mpfr_set(k[i], MPFR(c), MPFR_RNDN);
    }
    Py_DECREF(seq);
    ready = 1;
    Py_RETURN_NONE;
}

static PyObject *f(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!ready) { PyErr_SetString(PyExc_RuntimeError, "compiled kernel used before setup"); return NULL; }
    if (nargs != NGROUPS) {
        PyErr_Format(PyExc_TypeError, "compiled kernel takes %d arguments, got %zd", NGROUPS, nargs);
        return NULL;
    }
    PyObject *result = PyList_New(NRESULTS);
    if (result == NULL) return NULL;
    if (!mk_evaluate(args, result)) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

/* the numbers of the module (at its init) */
static void mk_module_numbers(void) {
    mpvi_init_array(t, NTEMPS, PREC);
    mpvi_init_array(k, NCONST, PREC);
    mpvi_init_array(slots, NSLOTS, 64);
    mk_init();
}

MPVI_DEFINE_MODULE(mk_module_numbers, "the constant table (hoisted rationals, pi, E)",
    {"f", (PyCFunction)(void (*)(void))f, METH_FASTCALL, "the compiled kernel"})
#endif
