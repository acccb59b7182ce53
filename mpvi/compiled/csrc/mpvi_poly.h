/* A program of multiplications and additions (mpvi.analysis.horner: Horner's rule on the
   trie of a sparse polynomial's exponents) run at many points, in MPFR: each operation the
   one correctly rounded operation at PREC bits that the Python run of the same program
   makes on gmpy2 numbers, so the same bits.  The module is the same for every program
   (the program is an argument): one module per precision.

   The generated part defines, before this header: PREC and MPVI_MODULE.

   run(program, registers, constants, inputs, variables, points, output): the registers
   are the variables of a point (0 .. variables - 1), the constants (next), then the
   program's temporaries; the program is a bytes object of native int32 quadruples
   (operation, destination, left, right), operation 0 a product and 1 a sum, every
   destination a temporary; the inputs are the points' variables, point after point
   (points x variables gmpy2 mpfr); the result is the list of the output register's value at
   each point.  A malformed program or argument is a ValueError or TypeError naming it. */
#ifndef MPVI_POLY_H
#define MPVI_POLY_H
#include <stdint.h>
#include <string.h>
#include "mpvi_runtime.h"
#include "mpvi_module.h"

static int pp_no_tables(PyObject *tables) {
    (void)tables;
    return 1;
}

static PyObject *setup(PyObject *self, PyObject *tables) {
    (void)self;
    return mpvi_setup(tables, 0, pp_no_tables);
}

/* the count mpfr of the sequence obj into out (borrowed pointers; seq keeps them alive);
   0 with an error set otherwise */
static int pp_numbers(PyObject *seq, Py_ssize_t count, mpfr_ptr *out, const char *what) {
    if (PySequence_Fast_GET_SIZE(seq) != count) {
        PyErr_Format(PyExc_ValueError, "run: %zd %s expected, got %zd", count, what,
                     PySequence_Fast_GET_SIZE(seq));
        return 0;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        if (!MPFR_Check(x)) {
            PyErr_Format(PyExc_TypeError, "run: %s must be gmpy2 mpfr, item %zd is %s", what, i,
                         Py_TYPE(x)->tp_name);
            return 0;
        }
        out[i] = MPFR(x);
    }
    return 1;
}

static PyObject *run(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!ready) { PyErr_SetString(PyExc_RuntimeError, "polynomial module used before setup"); return NULL; }
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "run takes 7 arguments, got %zd", nargs);
        return NULL;
    }
    if (!PyBytes_Check(args[0])) { PyErr_SetString(PyExc_TypeError, "run: the program must be bytes"); return NULL; }
    Py_ssize_t regs = PyLong_AsSsize_t(args[1]), nv = PyLong_AsSsize_t(args[4]),
               points = PyLong_AsSsize_t(args[5]), output = PyLong_AsSsize_t(args[6]);
    if (PyErr_Occurred()) return NULL;
    Py_ssize_t size = PyBytes_GET_SIZE(args[0]), quad = 4 * (Py_ssize_t)sizeof(int32_t);
    if (size % quad != 0) { PyErr_SetString(PyExc_ValueError, "run: the program is not whole quadruples"); return NULL; }
    Py_ssize_t ops = size / quad;
    PyObject *cs = PySequence_Fast(args[2], "run: the constants must be a sequence");
    if (cs == NULL) return NULL;
    Py_ssize_t nc = PySequence_Fast_GET_SIZE(cs);
    if (regs < 0 || nv < 0 || points < 0 || nc > regs - nv || output < 0 || output >= regs
        || regs > (Py_ssize_t)INT32_MAX) {
        Py_DECREF(cs);
        PyErr_SetString(PyExc_ValueError, "run: the register counts are inconsistent");
        return NULL;
    }
    PyObject *xs = PySequence_Fast(args[3], "run: the inputs must be a sequence");
    if (xs == NULL) { Py_DECREF(cs); return NULL; }
    Py_ssize_t first = nv + nc;                 /* the first temporary */
    int32_t *program = (int32_t *)malloc(size > 0 ? (size_t)size : 1);
    mpfr_ptr *reg = (mpfr_ptr *)calloc((size_t)(regs > 0 ? regs : 1), sizeof(mpfr_ptr));
    mpfr_t *temp = (mpfr_t *)malloc(sizeof(mpfr_t) * (size_t)(regs - first > 0 ? regs - first : 1));
    PyObject *out = NULL;
    char *written = (char *)calloc((size_t)(regs > 0 ? regs : 1), 1);
    int ok = program != NULL && reg != NULL && temp != NULL && written != NULL;
    if (!ok) PyErr_NoMemory();
    if (ok) {   /* every operation a product or sum of registers set before, into a temporary */
        memcpy(program, PyBytes_AS_STRING(args[0]), (size_t)size);
        for (Py_ssize_t i = 0; i < first; i++) written[i] = 1;
        for (Py_ssize_t i = 0; ok && i < ops; i++) {
            int32_t op = program[4 * i], d = program[4 * i + 1], a = program[4 * i + 2],
                    b = program[4 * i + 3];
            ok = (op == 0 || op == 1) && d >= first && d < regs && a >= 0 && a < regs
                 && b >= 0 && b < regs && written[a] && written[b];
            if (ok) written[d] = 1;
        }
        if (!ok) PyErr_SetString(PyExc_ValueError, "run: an operation of the program is not a "
                                 "product or sum of registers set before it, into a temporary");
        else if (!written[output]) {
            PyErr_SetString(PyExc_ValueError, "run: the output register is never set");
            ok = 0;
        }
    }
    if (ok) ok = pp_numbers(cs, nc, reg + nv, "constants");
    if (ok && PySequence_Fast_GET_SIZE(xs) != points * nv) {
        PyErr_Format(PyExc_ValueError, "run: %zd inputs expected (%zd points x %zd variables), "
                     "got %zd", points * nv, points, nv, PySequence_Fast_GET_SIZE(xs));
        ok = 0;
    }
    Py_ssize_t made = 0;
    if (ok) {
        for (; made < regs - first; made++) {
            mpfr_init2(temp[made], PREC);
            reg[first + made] = temp[made];
        }
        out = PyList_New(points);
        ok = out != NULL;
    }
    for (Py_ssize_t p = 0; ok && p < points; p++) {
        for (Py_ssize_t v = 0; ok && v < nv; v++) {
            PyObject *x = PySequence_Fast_GET_ITEM(xs, p * nv + v);
            if (!MPFR_Check(x)) {
                PyErr_Format(PyExc_TypeError, "run: the inputs must be gmpy2 mpfr, item %zd is %s",
                             p * nv + v, Py_TYPE(x)->tp_name);
                ok = 0;
            } else reg[v] = MPFR(x);
        }
        for (Py_ssize_t i = 0; ok && i < ops; i++) {
            const int32_t *q = program + 4 * i;
            if (q[0] == 0) mpfr_mul(reg[q[1]], reg[q[2]], reg[q[3]], MPFR_RNDN);
            else mpfr_add(reg[q[1]], reg[q[2]], reg[q[3]], MPFR_RNDN);
        }
        if (!ok) break;
        PyObject *o = (PyObject *)GMPy_MPFR_New(mpfr_get_prec(reg[output]), NULL);
        if (o == NULL) { ok = 0; break; }
        mpfr_set(MPFR(o), reg[output], MPFR_RNDN);
        PyList_SET_ITEM(out, p, o);
    }
    for (Py_ssize_t i = 0; i < made; i++) mpfr_clear(temp[i]);
    free(program); free(reg); free(temp); free(written);
    Py_DECREF(cs); Py_DECREF(xs);
    if (!ok) { Py_XDECREF(out); return NULL; }
    return out;
}

static void pp_module_numbers(void) {}

MPVI_DEFINE_MODULE(pp_module_numbers, "no constants: setup(())",
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL,
     "a program of products and sums run at every point"})
#endif
