/* A compiled ball kernel (mpvi.compiled.carb): one generated function of mpvi.compiled.codegen on Arb balls,
   f(prec, *groups) -> list of flint.arb, the same Arb calls in the same order as the Python
   function makes through python-flint, so the same balls (midpoint and radius, bit for bit).

   The storage and the helpers of the ball kernels; FLINT is declared by mpvi_flint.h
   (its own headers, or a layout probed on this machine), the module (setup, f, probe,
   PyInit) defined by mpvi_arbmodule.h, included by the generated part last.
   mpvi.compiled.carb links the module to the libflint that python-flint loaded (one
   library, one allocator), and uses it only after probe() has given the values
   python-flint gives (mpvi.compiled.carb._verified).

   The generated part defines, before this header: MPVI_MODULE, ARB_OFFSET (where the
   arb_struct lies in a flint.arb object), LIMIT_BITS (sin, cos and tan of a ball whose
   absolute value is not certainly below 2^LIMIT_BITS are nan, as ArbContext's), NTEMPS,
   NCONST (at least 1), NCONST_REAL (the constants setup() takes), NZ (the exact
   integers, at least 1), NGROUPS (the arguments of f after prec), NRESULTS; and, after
   it, the hooks:
     ma_evaluate(groups, result, prec): reads the arguments (ma_group), computes, sets the
       NRESULTS items of result (ma_ball, ma_int); 1 done, 0 a Python error set, -1 an
       argument is not a flint.arb (the caller runs the Python function);
     ma_init(): the exact integers z and, for a dual kernel, the scratch balls of its
       dual rules (module load). */
#ifndef MPVI_ARB_H
#define MPVI_ARB_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "mpvi_flint.h"

#if defined(__GNUC__) || defined(__clang__)
#define MPVI_UNUSED __attribute__((unused))
#else
#define MPVI_UNUSED
#endif
#define MPVI_CAT_(a, b) a##b
#define MPVI_CAT(a, b) MPVI_CAT_(a, b)
#define MPVI_STR_(a) #a
#define MPVI_STR(a) MPVI_STR_(a)

/* ----- the storage of the module */
static PyTypeObject *arb_type = NULL;      /* flint.arb, given to setup() */
static PyObject *no_args = NULL;           /* () for arb_type->tp_new */
static arb_t t[NTEMPS];                    /* the temporaries */
static arb_t k[NCONST];                    /* the constant table (hoisted rationals, pi, E) */
static arb_t z[NZ];                        /* the exact integers of the source */
static arb_t limit;                        /* 2^LIMIT_BITS */
static int ready = 0;
static int busy = 0;                       /* f() is running */

/* the ball inside a flint.arb object */
#define BALL(o) ((arb_ptr)((char *)(o) + ARB_OFFSET))

/* ArbContext._periodic's test: |x| (rounded as python-flint's abs) certainly below
   2^LIMIT_BITS, scratch written */
MPVI_UNUSED static int ma_below_limit(arb_ptr scratch, arb_srcptr x, slong prec) {
    arb_abs(scratch, x);
    arb_set_round(scratch, scratch, prec);
    return arb_lt(scratch, limit);
}

/* sin, cos, tan as ArbContext's: nan unless ma_below_limit */
MPVI_UNUSED static void ma_periodic(void (*f)(arb_ptr, arb_srcptr, slong), arb_ptr out,
                                    arb_ptr scratch, arb_srcptr x, slong prec) {
    if (ma_below_limit(scratch, x, prec)) f(out, x, prec);
    else arb_indeterminate(out);
}

/* python-flint's abs(x): the absolute value rounded to prec */
MPVI_UNUSED static void ma_abs(arb_ptr out, arb_srcptr x, slong prec) {
    arb_abs(out, x);
    arb_set_round(out, out, prec);
}

/* the count balls of the argument group x into out[]: 1, 0 (an error set) or -1 (an item
   that is not a flint.arb: Python computes) */
MPVI_UNUSED static int ma_group(PyObject *x, Py_ssize_t count, arb_srcptr *out) {
    PyObject *seq = PySequence_Fast(x, "a compiled ball kernel's argument must be a sequence");
    if (seq == NULL) return 0;
    if (PySequence_Fast_GET_SIZE(seq) != count) {
        PyErr_Format(PyExc_ValueError, "a compiled ball kernel's argument must have %zd items, "
                     "got %zd", count, PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return 0;
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, j);
        if (Py_TYPE(item) != arb_type) {
            Py_DECREF(seq);
            return -1;
        }
        out[j] = BALL(item);
    }
    Py_DECREF(seq);
    return 1;
}

/* a new flint.arb holding a copy of r */
static PyObject *ma_new(arb_srcptr r) {
    PyObject *o = arb_type->tp_new(arb_type, no_args, NULL);
    if (o != NULL) arb_set(BALL(o), r);
    return o;
}

/* result[i] = a new flint.arb of r */
MPVI_UNUSED static int ma_ball(PyObject *result, Py_ssize_t i, arb_srcptr r) {
    PyObject *o = ma_new(r);
    if (o == NULL) return 0;
    PyList_SET_ITEM(result, i, o);
    return 1;
}

/* result[i] = the Python int n (a result Python keeps an int) */
MPVI_UNUSED static int ma_int(PyObject *result, Py_ssize_t i, long n) {
    PyObject *o = PyLong_FromLong(n);
    if (o == NULL) return 0;
    PyList_SET_ITEM(result, i, o);
    return 1;
}
#endif
