/* The signs the singular factors of the system must keep (mpvi.model.singular), set from the
   call's ``signs`` argument: gon = 0 (None: no check) or 1 (a tuple of NG ints).  Needs
   NG (the number of factors) and NGR (max(NG, 1)). */
#ifndef MPVI_SIGNS_H
#define MPVI_SIGNS_H
#include "mpvi_runtime.h"

static int gsign[NGR], gon = 0;

static int sg_read(PyObject *signs) {
    gon = 0;
    if (signs == Py_None) return 1;
    if (!PyTuple_Check(signs) || PyTuple_GET_SIZE(signs) != NG) return 0;
    for (int j = 0; j < NG; j++) {
        long s = PyLong_AsLong(PyTuple_GET_ITEM(signs, j));
        if (s == -1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
        gsign[j] = s > 0 ? 1 : (s < 0 ? -1 : 0);
    }
    gon = 1;
    return 1;
}

/* a singular factor x_j keeps the sign the caller gave (a 0 sign or a nan: the caller's
   Python path decides) */
MPVI_UNUSED static int sg_ok(mpfr_srcptr x, int j) {
    if (mpfr_nan_p(x)) return 0;
    return gsign[j] > 0 ? mpfr_sgn(x) > 0 : (gsign[j] < 0 ? mpfr_sgn(x) < 0 : 0);
}
#endif
