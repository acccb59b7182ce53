/* mpvi.numbers.linalg.solve_dense(a, b): Gaussian elimination with partial pivoting, the same
   operations in the same order (the rows swapped through perm).  a: n x n pointers, row
   by row, and b: n pointers, both consumed (new values go to ao and bo); x gets the
   solution.  0 where Python raises (a zero or non-finite matrix, a pivot at most
   n eps max|a|) or could go another way (a non-finite multiplier): the caller falls back.
   Shared by the Newton, the explicit and the Taylor modules. */
#ifndef MPVI_SOLVE_H
#define MPVI_SOLVE_H
#include "mpvi_runtime.h"

MPVI_UNUSED static int dense_solve(int n, mpfr_ptr *a, mpfr_t *ao, mpfr_ptr *b, mpfr_t *bo,
                                   mpfr_t *x, mpfr_srcptr eps, int *perm, mpfr_ptr w,
                                   mpfr_ptr f, mpfr_ptr s, mpfr_ptr tiny) {
    for (int i = 0; i < n; i++) perm[i] = i;
    mpfr_ptr big = a[0];
    for (int i = 0; i < n * n; i++) {
        if (!mpfr_number_p(a[i])) return 0;
        if (mpfr_cmpabs(a[i], big) > 0) big = a[i];
    }
    if (mpfr_zero_p(big)) return 0;
    mpfr_abs(w, big, MPFR_RNDN);
    mpfr_set_si(tiny, n, MPFR_RNDN);
    mpfr_mul(tiny, tiny, eps, MPFR_RNDN);                 /* n * eps, then * max|a| */
    mpfr_mul(tiny, tiny, w, MPFR_RNDN);
    for (int k = 0; k < n; k++) {
        int piv = k;
        for (int i = k + 1; i < n; i++)
            if (mpfr_cmpabs(a[perm[i] * n + k], a[perm[piv] * n + k]) > 0) piv = i;
        mpfr_abs(w, a[perm[piv] * n + k], MPFR_RNDN);
        if (!mpfr_number_p(w) || !(mpfr_cmp(w, tiny) > 0)) return 0;
        int tmp = perm[k]; perm[k] = perm[piv]; perm[piv] = tmp;
        int rk = perm[k];
        mpfr_ptr pk = a[rk * n + k];
        for (int i = k + 1; i < n; i++) {
            int ri = perm[i];
            mpfr_div(f, a[ri * n + k], pk, MPFR_RNDN);
            if (!mpfr_number_p(f)) return 0;
            if (mpfr_zero_p(f)) continue;
            for (int j = k + 1; j < n; j++) {
                mpfr_mul(w, f, a[rk * n + j], MPFR_RNDN);
                mpfr_sub(ao[ri * n + j], a[ri * n + j], w, MPFR_RNDN);
                a[ri * n + j] = ao[ri * n + j];
            }
            mpfr_mul(w, f, b[rk], MPFR_RNDN);
            mpfr_sub(bo[ri], b[ri], w, MPFR_RNDN);
            b[ri] = bo[ri];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        int ri = perm[i];
        mpfr_ptr r = b[ri];
        for (int j = i + 1; j < n; j++) {
            mpfr_mul(w, a[ri * n + j], x[j], MPFR_RNDN);
            mpfr_sub(s, r, w, MPFR_RNDN);
            r = s;
        }
        mpfr_div(x[i], r, a[ri * n + i], MPFR_RNDN);
    }
    return 1;
}

/* mpfr_init2 at PREC of what dense_solve writes for n unknowns: ao (n x n), bo, x and
   the scratch numbers w, f, s, tiny (at module init) */
MPVI_UNUSED static void dense_solve_init(int n, mpfr_t *ao, mpfr_t *bo, mpfr_t *x, mpfr_ptr w,
                                         mpfr_ptr f, mpfr_ptr s, mpfr_ptr tiny) {
    mpvi_init_array(ao, n * n, PREC);
    mpvi_init_array(bo, n, PREC);
    mpvi_init_array(x, n, PREC);
    mpfr_inits2(PREC, w, f, s, tiny, (mpfr_ptr)0);
}
#endif
