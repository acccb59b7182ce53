/* The operation-counting build (MPVI_COUNT defined: MPVI_COUNT_OPERATIONS=1): the
   generated part defines, after mpvi_runtime.h, the counters mpvi_counts[], their names
   mpvi_counted[] and one macro per counted MPFR function (mpvi.compiled.cbackend.COUNTED_OPERATIONS)
   that counts the call; this header adds the module's operation_counts(reset).  In a
   normal build it adds nothing. */
#ifndef MPVI_COUNT_H
#define MPVI_COUNT_H
#ifdef MPVI_COUNT
/* operation_counts(reset): {function: calls} since the last reset */
static PyObject *operation_counts(PyObject *self, PyObject *reset) {
    (void)self;
    PyObject *d = PyDict_New();
    for (int i = 0; d != NULL && i < (int)(sizeof mpvi_counts / sizeof mpvi_counts[0]); i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(mpvi_counts[i]);
        if (v == NULL || PyDict_SetItemString(d, mpvi_counted[i], v) < 0) { Py_XDECREF(v); Py_CLEAR(d); break; }
        Py_DECREF(v);
    }
    if (d != NULL && PyObject_IsTrue(reset))
        for (int i = 0; i < (int)(sizeof mpvi_counts / sizeof mpvi_counts[0]); i++) mpvi_counts[i] = 0;
    return d;
}
#define MPVI_COUNT_METHOD {"operation_counts", (PyCFunction)operation_counts, METH_O, "MPFR calls"},
#else
#define MPVI_COUNT_METHOD
#endif
#endif
