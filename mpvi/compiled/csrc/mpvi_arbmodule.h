/* The module of a compiled ball kernel (mpvi.compiled.carb): setup, f, probe and its
   PyInit, included last by the generated part, after it has defined the hooks
   ma_evaluate and ma_init (mpvi_arb.h says what they do) and, for a dual kernel
   (MPVI_DUAL), included mpvi_dual.h. */
#ifndef MPVI_ARBMODULE_H
#define MPVI_ARBMODULE_H
#include "mpvi_arb.h"
#ifdef MPVI_DUAL
#include "mpvi_dual.h"
#endif

/* setup(flint.arb, constants[, _Dual]): the type of the balls, the constant table
   (balls, copied) and, for a module on duals (MPVI_DUAL), the type of the duals */
static PyObject *setup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *type, *constants, *duals = NULL;
    if (!PyArg_ParseTuple(args, "OO|O", &type, &constants, &duals)) return NULL;
#ifdef MPVI_DUAL
    if (!da_setup(duals)) return NULL;
#else
    if (duals != NULL) {
        PyErr_SetString(PyExc_TypeError, "setup: a ball module takes no type of duals");
        return NULL;
    }
#endif
    if (!PyType_Check(type) ||
        ((PyTypeObject *)type)->tp_basicsize != (Py_ssize_t)(ARB_OFFSET + sizeof(arb_struct))) {
        PyErr_SetString(PyExc_TypeError, "setup: the first argument must be flint.arb, of "
                        "the size this module was built for");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(constants, "setup: the constants must be a sequence");
    if (seq == NULL) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != NCONST_REAL) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "setup: wrong number of constants");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < NCONST_REAL; i++)
        if (Py_TYPE(PySequence_Fast_GET_ITEM(seq, i)) != (PyTypeObject *)type) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "setup: the constants must be flint.arb");
            return NULL;
        }
    Py_INCREF(type);
    Py_XDECREF((PyObject *)arb_type);
    arb_type = (PyTypeObject *)type;
    for (Py_ssize_t i = 0; i < NCONST_REAL; i++)
        arb_set(k[i], BALL(PySequence_Fast_GET_ITEM(seq, i)));
    Py_DECREF(seq);
    ready = 1;
    Py_RETURN_NONE;
}

static int ma_prec(PyObject *x, slong *prec) {
    long p = PyLong_AsLong(x);
    if (p == -1 && PyErr_Occurred()) return 0;
    if (p < 2) {
        PyErr_SetString(PyExc_ValueError, "a compiled ball kernel's precision must be >= 2");
        return 0;
    }
    *prec = p;
    return 1;
}

/* f(prec, *groups) -> list of flint.arb (of duals), or None where an argument is not
   one, or during another call */
static PyObject *f(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    slong prec;
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "compiled ball kernel used before setup");
        return NULL;
    }
    if (nargs != NGROUPS + 1) {
        PyErr_Format(PyExc_TypeError, "compiled ball kernel takes %d arguments, got %zd",
                     NGROUPS + 1, nargs);
        return NULL;
    }
    if (!ma_prec(args[0], &prec)) return NULL;
    /* the temporaries are the module's: a call made while one runs (another thread, or a
       finalizer run by the allocation of a result) leaves them alone -- Python computes */
    if (busy) Py_RETURN_NONE;
    PyObject *result = PyList_New(NRESULTS);
    if (result == NULL) return NULL;
    busy = 1;
    int rc = ma_evaluate(args + 1, result, prec);
    busy = 0;
    if (rc == 1) return result;
    Py_DECREF(result);
    if (rc == 0) return NULL;
    Py_RETURN_NONE;
}

/* probe(a, b, prec) -> (a + b as a new ball, arb_equal_si(a, 3), arb_equal_si(b, 3), the
   double of a's midpoint rounded down): what mpvi.compiled.carb compares with python-flint's own
   answers before it uses the module, reading and writing balls through the layout above */
static PyObject *probe(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *a, *b, *p;
    slong prec;
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "probe before setup");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOO", &a, &b, &p)) return NULL;
    if (Py_TYPE(a) != arb_type || Py_TYPE(b) != arb_type) {
        PyErr_SetString(PyExc_TypeError, "probe takes two flint.arb");
        return NULL;
    }
    if (!ma_prec(p, &prec)) return NULL;
    arb_t s;
    arb_init(s);
    arb_add(s, BALL(a), BALL(b), prec);
    PyObject *sum = ma_new(s);
    arb_clear(s);
    if (sum == NULL) return NULL;
    return Py_BuildValue("(Niid)", sum, arb_equal_si(BALL(a), 3), arb_equal_si(BALL(b), 3),
                         arf_get_d(&BALL(a)->mid, 0));
}

static PyMethodDef methods[] = {
    {"f", (PyCFunction)(void (*)(void))f, METH_FASTCALL, "the compiled ball kernel"},
    {"setup", (PyCFunction)setup, METH_VARARGS, "(flint.arb, the constant table)"},
    {"probe", (PyCFunction)probe, METH_VARARGS, "the layout check of mpvi.compiled.carb"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module_def = {
    .m_base = PyModuleDef_HEAD_INIT, .m_name = MPVI_STR(MPVI_MODULE), .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC MPVI_CAT(PyInit_, MPVI_MODULE)(void);
PyMODINIT_FUNC MPVI_CAT(PyInit_, MPVI_MODULE)(void) {
    no_args = PyTuple_New(0);
    if (no_args == NULL) return NULL;
    for (int i = 0; i < NTEMPS; i++) arb_init(t[i]);
    for (int i = 0; i < NCONST; i++) arb_init(k[i]);
    for (int i = 0; i < NZ; i++) arb_init(z[i]);
    arb_init(limit);
    arb_one(limit);
    arb_mul_2exp_si(limit, limit, LIMIT_BITS);
    ma_init();
#ifdef MPVI_DUAL
    if (!da_module_init()) return NULL;
#endif
    return PyModule_Create(&module_def);
}
#endif
