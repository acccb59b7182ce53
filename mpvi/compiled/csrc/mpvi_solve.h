/* Glue of the dense solve of the Newton, the explicit and the Taylor modules: N x N a and
   N-vector b (pointers to numbers at PREC) copied (exactly) into the storage of the
   elimination, which is generated before this header from the Python of
   mpvi.numbers.linalg.gauss_eliminate (mpvi.compiled.croutine: the same operations in the
   same order) as mpvi_gauss_eliminate and its storage init mpvi_gauss_eliminate_init.
   0 where Python raises (a zero or non-finite max|a|, a pivot at most n eps max|a|): the
   caller falls back to the Python step, which raises. */
#ifndef MPVI_SOLVE_H
#define MPVI_SOLVE_H
#include "mpvi_runtime.h"

static mpfr_t sv_a[N][N], sv_b[N][1], sv_x[N][1], sv_out[2];
static mpfr_t *sv_ar[N], *sv_br[N], *sv_xr[N];

/* x = a^-1 b by the generated elimination (a: N * N pointers, row by row) */
MPVI_UNUSED static int dense_solve(mpfr_ptr *a, mpfr_ptr *b, mpfr_t *x, mpfr_srcptr eps) {
    for (int i = 0; i < N; i++) {
        sv_ar[i] = sv_a[i];
        sv_br[i] = sv_b[i];
        sv_xr[i] = sv_x[i];
        for (int j = 0; j < N; j++) mpfr_set(sv_a[i][j], a[i * N + j], MPFR_RNDN);
        mpfr_set(sv_b[i][0], b[i], MPFR_RNDN);
    }
    if (mpvi_gauss_eliminate(N, 1, sv_ar, sv_br, sv_xr, eps, sv_out) != N) return 0;
    for (int i = 0; i < N; i++) mpfr_set(x[i], sv_x[i][0], MPFR_RNDN);
    return 1;
}

/* mpfr_init2 at PREC of the storage of the solve and of x (N numbers), at module init */
MPVI_UNUSED static void dense_solve_init(mpfr_t *x) {
    mpvi_gauss_eliminate_init();
    mpvi_init_array(&sv_a[0][0], N * N, PREC);
    mpvi_init_array(&sv_b[0][0], N, PREC);
    mpvi_init_array(&sv_x[0][0], N, PREC);
    mpvi_init_array(sv_out, 2, PREC);
    mpvi_init_array(x, N, PREC);
}

/* the storage of the solve and x (N numbers) at p <= PREC bits (values lost): the solve
   then rounds every operation to p bits (the Taylor tiers, mpvi_taylor.h) */
MPVI_UNUSED static void dense_solve_prec(mpfr_prec_t p, mpfr_t *x) {
    mpvi_gauss_eliminate_prec(p);
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) mpfr_set_prec(sv_a[i][j], p);
        mpfr_set_prec(sv_b[i][0], p);
        mpfr_set_prec(sv_x[i][0], p);
        mpfr_set_prec(x[i], p);
    }
    mpfr_set_prec(sv_out[0], p);
    mpfr_set_prec(sv_out[1], p);
}
#endif
