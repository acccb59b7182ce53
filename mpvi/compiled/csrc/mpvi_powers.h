/* x**e for the exponent e = p / 2^m that mpvi.compiled.codegen prints as mpf(p)/mpf(2^m): Python
   computes mpfr_pow(x, e), the correctly rounded x^(p/2^m).  The same value by square roots,
   faster: mpfr_sqrt or mpfr_rec_sqrt for p = +-1, m = 1 (correctly rounded themselves); else
   the m roots and the power |p| at PREC + 32 bits (error below 2|p| + 2 units of that
   precision), rounded once when mpfr_can_round proves that rounding is the correctly
   rounded value (never on an exact or half-way case: the RNDZ test at PREC + 1 bits).
   Everything else -- x zero, negative, infinite or nan, e not exactly p/2^m (a precision
   below the bits of p), a result near the ends of the exponent range, a value too close
   to a rounding boundary -- is mpfr_pow itself.  margin: the bits lost (mpvi.compiled.cbackend's
   _pw_margin(p)). */
#ifndef MPVI_POWERS_H
#define MPVI_POWERS_H
#include "mpvi_runtime.h"

static mpfr_t pw_work;
static int pw_ready = 0;

MPVI_UNUSED static void pw_dyadic(mpfr_ptr out, mpfr_srcptr x, mpfr_srcptr e, long p, int m,
                                  int margin) {
    if (mpfr_regular_p(x) && mpfr_sgn(x) > 0 && mpfr_cmp_si_2exp(e, p, -m) == 0) {
        if (m == 1 && p == 1) { mpfr_sqrt(out, x, MPFR_RNDN); return; }
        if (m == 1 && p == -1) { mpfr_rec_sqrt(out, x, MPFR_RNDN); return; }
        if (!pw_ready) { mpfr_init2(pw_work, PREC + 32); pw_ready = 1; }
        mpfr_srcptr a = x;
        for (int i = 1; i < m; i++) { mpfr_sqrt(pw_work, a, MPFR_RNDN); a = pw_work; }
        if (p > 0) mpfr_sqrt(pw_work, a, MPFR_RNDN); else mpfr_rec_sqrt(pw_work, a, MPFR_RNDN);
        if (p > 1 || p < -1) mpfr_pow_ui(pw_work, pw_work, (unsigned long)(p > 0 ? p : -p), MPFR_RNDN);
        if (mpfr_regular_p(pw_work) && mpfr_get_exp(pw_work) < mpfr_get_emax() - 1
            && mpfr_get_exp(pw_work) > mpfr_get_emin() + 1
            && mpfr_can_round(pw_work, PREC + 32 - margin, MPFR_RNDN, MPFR_RNDZ, PREC + 1)) {
            mpfr_set(out, pw_work, MPFR_RNDN);
            return;
        }
    }
    mpfr_pow(out, x, e, MPFR_RNDN);
}
#endif
