/* A double's math as CPython's, for the kernels in doubles of mpvi.compiled.cdouble (the
   start of Newton's method in doubles, mpvi_newton.h): where the Python kernel on floats
   raises, the C one returns 0.

   mpvi_dmath_1(r, x): nonzero where CPython's math_1 raises for the result r of a C
   library function at x (math.sin, math.exp, math.sqrt, ...: nan from a number,
   infinite from a finite number, errno set other than by an underflow); errno set to 0
   before the call.
   mpvi_dpow(x, y, &r): 0 where mpvi.compiled.cdouble._power raises (a non-finite
   operand, 0 to a negative power, a negative number to a non-integer power, an
   overflow), else 1 with r = x ** y as CPython's float_pow computes it (pow of |x|,
   negated for a negative x and an odd integer y; 1 and -1 for |x| = 1). */
#ifndef MPVI_DOUBLE_H
#define MPVI_DOUBLE_H
#include <errno.h>
#include <math.h>

#if defined(__GNUC__) || defined(__clang__)
#define MPVI_DOUBLE_UNUSED __attribute__((unused))
#else
#define MPVI_DOUBLE_UNUSED
#endif

MPVI_DOUBLE_UNUSED static int mpvi_dmath_1(double r, double x) {
    return (isnan(r) && !isnan(x)) || (isinf(r) && isfinite(x))
           || (isfinite(r) && errno != 0 && !(errno == ERANGE && fabs(r) < 1.5));
}

MPVI_DOUBLE_UNUSED static int mpvi_dpow(double x, double y, double *r) {
    if (!isfinite(x) || !isfinite(y) || (x == 0.0 && y < 0.0) || (x < 0.0 && y != floor(y)))
        return 0;
    if (y == 0.0) { *r = 1.0; return 1; }
    if (x == 0.0) { *r = fmod(fabs(y), 2.0) == 1.0 ? x : 0.0; return 1; }
    int negate = 0;
    if (x < 0.0) { x = -x; negate = fmod(fabs(y), 2.0) == 1.0; }
    if (x == 1.0) { *r = negate ? -1.0 : 1.0; return 1; }
    errno = 0;
    double v = pow(x, y);
    if (errno == 0) { if (isinf(v)) errno = ERANGE; }
    else if (errno == ERANGE && v == 0.0) errno = 0;
    if (errno != 0) return 0;
    *r = negate ? -v : v;
    return 1;
}
#endif
