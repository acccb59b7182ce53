/* The sum of products of the Taylor recurrences, rounded once: the C of
   mpvi.numbers.series.series_dot (mpvi.compiled.croutine.NATIVE_ROUTINES: the Python
   function's body is not translated, this is its C).

   out[i] = start + s sum_{j=lo..hi} a_j b_{k-j} (s = 1 or -1; s = 0: the sum alone, start
   not read), the exact value rounded to nearest (ties to even) at the precision of out[i],
   an exact zero +0.  A correctly rounded result is one number, whoever computes it: the
   Python of the gmp and mp contexts computes it with integers, this C with GMP's mpn
   functions, and the two give the same bits.

   The fast path: every product a_j b_{k-j} of two regular numbers of at most
   MPVI_DOT_MAXN limbs is exact in na + nb limbs (mpn_mul of the significands); each is
   shifted to its exponent and added to (or subtracted from) one two's complement integer
   of at most MPVI_DOT_LIMBS limbs that spans every term's bits, with room for the carries;
   the integer is then rounded once (mpfr_set of a number whose significand it is: MPFR's
   custom interface).  Where a = b and the range is symmetric (lo + hi = k: a square, the
   sum of a square root) each pair j, k - j is one product counted twice.  Anything else
   -- a nan or an infinity, a number wider than MPVI_DOT_MAXN limbs, terms whose exponents
   span more than the integer holds, a result beyond the exponent range -- takes the slow
   path: the exact products (mpfr_mul at pa + pb bits) summed by mpfr_sum, correctly
   rounded as well. */
#ifndef MPVI_DOT_H
#define MPVI_DOT_H

#define MPVI_DOT_MAXN 16
#define MPVI_DOT_LIMBS 192

static int mpvi_series_dot_slow(mpfr_t *out, long i, mpfr_srcptr start, mpfr_t *a, mpfr_t *b,
                                long lo, long hi, long k, long s) {
    long cap = (hi >= lo ? hi - lo + 1 : 0) + (s != 0), m = 0;
    if (cap == 0) { mpfr_set_zero(out[i], 1); return 0; }
    mpfr_t *t = (mpfr_t *)malloc(sizeof(mpfr_t) * cap);
    mpfr_ptr *p = (mpfr_ptr *)malloc(sizeof(mpfr_ptr) * cap);
    if (t == NULL || p == NULL) {
        free(t); free(p);
        mpfr_set_nan(out[i]);
        return 0;
    }
    if (s != 0) {
        mpfr_init2(t[m], mpfr_get_prec(start));
        mpfr_set(t[m], start, MPFR_RNDN);
        p[m] = t[m]; m++;
    }
    for (long j = lo; j <= hi; j++) {
        mpfr_init2(t[m], mpfr_get_prec(a[j]) + mpfr_get_prec(b[k - j]));
        mpfr_mul(t[m], a[j], b[k - j], MPFR_RNDN);          /* exact at pa + pb bits */
        if (s < 0) mpfr_neg(t[m], t[m], MPFR_RNDN);
        p[m] = t[m]; m++;
    }
    mpfr_sum(out[i], p, (unsigned long)m, MPFR_RNDN);
    if (mpfr_zero_p(out[i])) mpfr_set_zero(out[i], 1);
    for (long q = 0; q < m; q++) mpfr_clear(t[q]);
    free(t); free(p);
    return 0;
}

/* one term x y 2^w (y NULL: x alone) into the integer acc (L limbs, bit 0 at 2^B) */
static void mpvi_dot_term(mp_limb_t *acc, long L, mpfr_exp_t B, mpfr_srcptr x, mpfr_srcptr y,
                          int w, int negative) {
    mp_limb_t prod[2 * MPVI_DOT_MAXN + 1];
    mp_size_t nx = (mp_size_t)((mpfr_get_prec(x) + GMP_NUMB_BITS - 1) / GMP_NUMB_BITS), m;
    mp_limb_t *xd = (mp_limb_t *)mpfr_custom_get_significand(x);
    mpfr_exp_t e = mpfr_get_exp(x) - (mpfr_exp_t)nx * GMP_NUMB_BITS;
    if (y == NULL) {
        for (mp_size_t q = 0; q < nx; q++) prod[q] = xd[q];
        m = nx;
    } else {
        mp_size_t ny = (mp_size_t)((mpfr_get_prec(y) + GMP_NUMB_BITS - 1) / GMP_NUMB_BITS);
        mp_limb_t *yd = (mp_limb_t *)mpfr_custom_get_significand(y);
        e += mpfr_get_exp(y) - (mpfr_exp_t)ny * GMP_NUMB_BITS;
        if (nx == 1 && ny == 1) {
            unsigned __int128 r = (unsigned __int128)xd[0] * yd[0];
            prod[0] = (mp_limb_t)r;
            prod[1] = (mp_limb_t)(r >> 64);
        } else if (nx >= ny) {
            mpn_mul(prod, xd, nx, yd, ny);
        } else {
            mpn_mul(prod, yd, ny, xd, nx);
        }
        m = nx + ny;
    }
    mpfr_exp_t off = e - B + w;
    long limb = (long)(off / GMP_NUMB_BITS);
    unsigned sh = (unsigned)(off % GMP_NUMB_BITS);
    prod[m] = sh ? mpn_lshift(prod, prod, m, sh) : 0;
    if (negative)
        mpn_sub(acc + limb, acc + limb, L - limb, prod, m + 1);
    else
        mpn_add(acc + limb, acc + limb, L - limb, prod, m + 1);
}

static int mpvi_series_dot(mpfr_t *out, long i, mpfr_srcptr start, mpfr_t *a, mpfr_t *b,
                           long lo, long hi, long k, long s) {
    /* the folded sum of a square: pairs j < k - j once, counted twice */
    int folded = a == b && lo + hi == k && lo <= hi;
    long top_j = folded ? k / 2 : hi;
    mpfr_exp_t emin = 0, emax = 0;
    long terms = 0;
    int any = 0;
    if (s != 0 && !mpfr_zero_p(start)) {
        if (!mpfr_number_p(start) || mpfr_get_prec(start) > MPVI_DOT_MAXN * GMP_NUMB_BITS)
            return mpvi_series_dot_slow(out, i, start, a, b, lo, hi, k, s);
        mpfr_exp_t ex = mpfr_get_exp(start);
        mpfr_exp_t low = ex - (mpfr_exp_t)((mpfr_get_prec(start) + GMP_NUMB_BITS - 1)
                                           / GMP_NUMB_BITS) * GMP_NUMB_BITS;
        emin = low; emax = ex; any = 1; terms++;
    }
    for (long j = lo; j <= top_j; j++) {
        mpfr_srcptr x = a[j], y = b[k - j];
        if (!mpfr_regular_p(x) || !mpfr_regular_p(y)) {
            if (mpfr_zero_p(x) ? mpfr_number_p(y) : mpfr_zero_p(y) && mpfr_number_p(x))
                continue;                                 /* a zero product */
            return mpvi_series_dot_slow(out, i, start, a, b, lo, hi, k, s);
        }
        mpfr_prec_t px = mpfr_get_prec(x), py = mpfr_get_prec(y);
        if (px > MPVI_DOT_MAXN * GMP_NUMB_BITS || py > MPVI_DOT_MAXN * GMP_NUMB_BITS)
            return mpvi_series_dot_slow(out, i, start, a, b, lo, hi, k, s);
        mpfr_exp_t ex = mpfr_get_exp(x) + mpfr_get_exp(y);
        mpfr_exp_t low = ex - (mpfr_exp_t)((px + GMP_NUMB_BITS - 1) / GMP_NUMB_BITS
                                           + (py + GMP_NUMB_BITS - 1) / GMP_NUMB_BITS)
                              * GMP_NUMB_BITS;
        if (!any || low < emin) emin = low;
        if (!any || ex > emax) emax = ex;
        any = 1; terms += 2;
    }
    if (!any) { mpfr_set_zero(out[i], 1); return 0; }
    int room = 2;                                          /* a sign bit and a doubling */
    while (terms >> room) room++;                          /* and the carries of the sum */
    mpfr_exp_t width = emax + room - emin;
    if (width > (mpfr_exp_t)(MPVI_DOT_LIMBS - 1) * GMP_NUMB_BITS)
        return mpvi_series_dot_slow(out, i, start, a, b, lo, hi, k, s);
    long L = (long)((width + GMP_NUMB_BITS - 1) / GMP_NUMB_BITS) + 1;
    mp_limb_t acc[MPVI_DOT_LIMBS + 1];
    for (long q = 0; q < L; q++) acc[q] = 0;
    if (s != 0 && !mpfr_zero_p(start))
        mpvi_dot_term(acc, L, emin, start, NULL, 0, mpfr_signbit(start) != 0);
    for (long j = lo; j <= top_j; j++) {
        mpfr_srcptr x = a[j], y = b[k - j];
        if (mpfr_zero_p(x) || mpfr_zero_p(y)) continue;
        int negative = (mpfr_signbit(x) != 0) != (mpfr_signbit(y) != 0);
        if (s < 0) negative = !negative;
        mpvi_dot_term(acc, L, emin, x, y, (folded && j != k - j) ? 1 : 0, negative);
    }
    int negative = (acc[L - 1] >> (GMP_NUMB_BITS - 1)) != 0;
    if (negative) mpn_neg(acc, acc, L);
    long t = L - 1;
    while (t >= 0 && acc[t] == 0) t--;
    if (t < 0) { mpfr_set_zero(out[i], 1); return 0; }
    int clz = __builtin_clzl(acc[t]);
    if (clz) mpn_lshift(acc, acc, t + 1, (unsigned)clz);
    mpfr_exp_t exp = emin - clz + (mpfr_exp_t)(t + 1) * GMP_NUMB_BITS;
    if (exp < mpfr_get_emin() || exp > mpfr_get_emax())
        return mpvi_series_dot_slow(out, i, start, a, b, lo, hi, k, s);
    mpfr_t sum;
    mpfr_custom_init_set(sum, negative ? -MPFR_REGULAR_KIND : MPFR_REGULAR_KIND, exp,
                         (mpfr_prec_t)(t + 1) * GMP_NUMB_BITS, acc);
    mpfr_set(out[i], sum, MPFR_RNDN);
    return 0;
}

#endif
