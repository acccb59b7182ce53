/* mpvi's C runtime: what every compiled module of mpvi.compiled.cbackend includes first.

   A compiled module is one C file that mpvi.compiled.cbackend writes: the sizes and the name of
   the module as macros (PREC, N, ..., MPVI_MODULE), then this header, then the header of
   its kind (mpvi_function.h, mpvi_newton.h, mpvi_explicit.h, mpvi_check.h,
   mpvi_energy.h, mpvi_taylor.h; mpvi_poly.h, whose module has no generated part but
   PREC), then the translated expressions of its kernels as a few static
   functions the kind's header declares (the hooks).  The routines Python also runs (the
   dense elimination, the LDL^T test, the RK4 and GBS steps) are generated from their
   Python source before the kind's header (mpvi.compiled.croutine); everything else fixed
   -- their glue, the Newton loop, the checks after a step, the Taylor recurrences and
   driver, reading and returning numbers, the Python module itself (mpvi_module.h) -- is
   here, in these files, and only here. */
#ifndef MPVI_RUNTIME_H
#define MPVI_RUNTIME_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <math.h>
#include <float.h>
#include <errno.h>
#include <gmp.h>
#include <mpfr.h>
#include <mpc.h>
#include "gmpy2.h"

#ifndef PREC
#error "PREC (the precision in bits of every operation) must be defined"
#endif
#include "mpvi_trig.h"

#if defined(__GNUC__) || defined(__clang__)
#define MPVI_UNUSED __attribute__((unused))
#else
#define MPVI_UNUSED
#endif

#define MPVI_CAT_(a, b) a##b
#define MPVI_CAT(a, b) MPVI_CAT_(a, b)
#define MPVI_STR_(a) #a
#define MPVI_STR(a) MPVI_STR_(a)
/* the module's init function, PyInit_<MPVI_MODULE> */
#define MPVI_INIT MPVI_CAT(PyInit_, MPVI_MODULE)

/* 2^PREC: sin, cos and tan of an argument at least this large are nan, as the context's */
static mpfr_t limit;
/* setup() has been given the constant tables */
static int ready = 0;

/* limit = 2^PREC (at module init) */
static void mpvi_init_limit(void) {
    mpfr_init2(limit, 2);
    mpfr_set_ui_2exp(limit, 1, PREC, MPFR_RNDN);
}

/* mpfr_init2 of the `count` numbers of `array` at `prec` bits (at module init: PREC for
   a working number, 64 for a slot that holds a caller's int, a C long, exactly) */
MPVI_UNUSED static void mpvi_init_array(mpfr_t *array, int count, mpfr_prec_t prec) {
    for (int i = 0; i < count; i++) mpfr_init2(array[i], prec);
}

/* what a kernel returns where Python must take over (the Python method raises or the
   kernel cannot follow it): NULL if an exception is set, else None */
MPVI_UNUSED static PyObject *mpvi_fallback(void) {
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

#endif
