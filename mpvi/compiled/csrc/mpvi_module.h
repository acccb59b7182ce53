/* The Python module of a compiled kernel, the same for every kind: each kind's header
   ends with MPVI_DEFINE_MODULE(the function that initialises its numbers, the doc of its
   setup, its methods), and a kind whose constants come as a tuple of tables has its
   setup() read them with mpvi_setup. */
#ifndef MPVI_MODULE_H
#define MPVI_MODULE_H
#include "mpvi_runtime.h"
#include "mpvi_count.h"

/* setup(tables) of a kind whose constants come as a tuple of `count` tables: `read`
   (the kind's reader; 0 with an exception set) of the tuple, then ready */
MPVI_UNUSED static PyObject *mpvi_setup(PyObject *tables, Py_ssize_t count,
                                        int (*read)(PyObject *)) {
    if (!PyTuple_Check(tables) || PyTuple_GET_SIZE(tables) != count) {
        PyErr_Format(PyExc_TypeError, "setup needs a tuple of %zd constant table(s)", count);
        return NULL;
    }
    if (!read(tables)) return NULL;
    ready = 1;
    Py_RETURN_NONE;
}

/* trig_counts(): (sin and cos calls Arb decided, calls MPFR computed) since load
   (mpvi_trig.h) */
static PyObject *trig_counts(PyObject *self, PyObject *unused) {
    (void)self; (void)unused;
    return Py_BuildValue("(KK)", mpvi_trig_arb, mpvi_trig_mpfr);
}

static struct PyModuleDef mpvi_module_def = {
    .m_base = PyModuleDef_HEAD_INIT, .m_name = MPVI_STR(MPVI_MODULE), .m_size = -1,
};

/* the module of `methods`, after gmpy2's C API is imported, limit is set and `init`
   has initialised the kind's numbers; NULL (an exception set) if gmpy2's C API is missing */
static PyObject *mpvi_module_create(PyMethodDef *methods, void (*init)(void)) {
    if (import_gmpy2() < 0) return NULL;
    mpvi_init_limit();
    mpvi_trig_init();
    init();
    mpvi_module_def.m_methods = methods;
    return PyModule_Create(&mpvi_module_def);
}

/* the module: its methods table (the kind's `...`, then setup(constants) with the doc
   `setup_doc`, the operation-counting build's operation_counts, the sentinel) and
   PyInit_<MPVI_MODULE>, which creates it after `init` has initialised the kind's numbers */
#define MPVI_DEFINE_MODULE(init, setup_doc, ...)                                        \
    static PyMethodDef methods[] = {                                                    \
        __VA_ARGS__,                                                                    \
        {"setup", (PyCFunction)setup, METH_O, setup_doc},                               \
        {"trig_counts", (PyCFunction)trig_counts, METH_NOARGS, "sin, cos: Arb's, MPFR's"}, \
        MPVI_COUNT_METHOD                                                               \
        {NULL, NULL, 0, NULL}                                                           \
    };                                                                                  \
    PyMODINIT_FUNC MPVI_INIT(void);                                                     \
    PyMODINIT_FUNC MPVI_INIT(void) { return mpvi_module_create(methods, init); }
#endif
