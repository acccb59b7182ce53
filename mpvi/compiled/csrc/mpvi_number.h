/* Reading and returning numbers, and the check after a step of a batch: shared by the
   Newton, explicit, check and Taylor modules. */
#ifndef MPVI_NUMBER_H
#define MPVI_NUMBER_H
#include "mpvi_runtime.h"

/* a number of an argument: the mpfr_t of a gmpy2 mpfr of at most PREC bits, or an exact
   copy of a small Python int; NULL (no error set) for anything else */
MPVI_UNUSED static mpfr_ptr nw_number(PyObject *x, mpfr_t slot) {
    if (MPFR_Check(x)) return mpfr_get_prec(MPFR(x)) <= PREC ? MPFR(x) : NULL;
    if (PyLong_Check(x)) {
        int overflow = 0;
        long v = PyLong_AsLongAndOverflow(x, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) { PyErr_Clear(); return NULL; }
        mpfr_set_si(slot, v, MPFR_RNDN);
        return slot;
    }
    return NULL;
}

/* out[i] = the numbers of the sequence obj of count items; 0 (no error set) otherwise */
MPVI_UNUSED static int nw_read(PyObject *obj, Py_ssize_t count, mpfr_ptr *out, mpfr_t *slots) {
    PyObject *seq = PySequence_Fast(obj, "a sequence");
    if (seq == NULL) { PyErr_Clear(); return 0; }
    int ok = PySequence_Fast_GET_SIZE(seq) == count;
    for (Py_ssize_t i = 0; ok && i < count; i++)
        ok = (out[i] = nw_number(PySequence_Fast_GET_ITEM(seq, i), slots[i])) != NULL;
    Py_DECREF(seq);
    return ok;
}

/* k[0 .. count) = the constant table tables[which] (mpfr each, at its own precision) */
MPVI_UNUSED static int nw_set_table(PyObject *tables, int which, mpfr_t *k, Py_ssize_t count) {
    PyObject *seq = PySequence_Fast(PyTuple_GET_ITEM(tables, which), "setup: a sequence");
    if (seq == NULL) return 0;
    if (PySequence_Fast_GET_SIZE(seq) != count) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "setup: wrong number of constants");
        return 0;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *c = PySequence_Fast_GET_ITEM(seq, i);
        if (!MPFR_Check(c)) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "setup: constants must be mpfr");
            return 0;
        }
        mpfr_set_prec(k[i], mpfr_get_prec(MPFR(c)));
        mpfr_set(k[i], MPFR(c), MPFR_RNDN);
    }
    Py_DECREF(seq);
    return 1;
}

/* a new list of count new mpfr: copies of v[i] at their precisions */
MPVI_UNUSED static PyObject *nw_result(mpfr_ptr *v, int count) {
    PyObject *list = PyList_New(count), *o;
    if (list == NULL) return NULL;
    for (int i = 0; i < count; i++) {
        o = (PyObject *)GMPy_MPFR_New(mpfr_get_prec(v[i]), NULL);
        if (o == NULL) { Py_DECREF(list); return NULL; }
        mpfr_set(MPFR(o), v[i], MPFR_RNDN);
        PyList_SET_ITEM(list, i, o);
    }
    return list;
}

/* a new mpfr equal to x, at its precision */
MPVI_UNUSED static PyObject *nw_new_number(mpfr_srcptr x) {
    PyObject *o = (PyObject *)GMPy_MPFR_New(mpfr_get_prec(x), NULL);
    if (o != NULL) mpfr_set(MPFR(o), x, MPFR_RNDN);
    return o;
}

/* check(t, q, y, *head) is True, with qprev for each `...` of head (at most 8 items): the
   check after a step of a batch (mpvi.drive.solve: the compiled step check).  0 for any
   other answer or an error (cleared: the caller's own step meets it again). */
MPVI_UNUSED static int nw_check(PyObject *check, PyObject *t, PyObject *q, PyObject *y,
                                PyObject *head, PyObject *qprev) {
    PyObject *call[11];
    Py_ssize_t k = 0, nh = PyTuple_GET_SIZE(head);
    if (nh > 8) return 0;
    call[k++] = t; call[k++] = q; call[k++] = y;
    for (Py_ssize_t i = 0; i < nh; i++) {
        PyObject *h = PyTuple_GET_ITEM(head, i);
        call[k++] = h == Py_Ellipsis ? qprev : h;
    }
    PyObject *verdict = PyObject_Vectorcall(check, call, k, NULL);
    int good = verdict == Py_True;
    Py_XDECREF(verdict);
    if (PyErr_Occurred()) PyErr_Clear();
    return good;
}
#endif
