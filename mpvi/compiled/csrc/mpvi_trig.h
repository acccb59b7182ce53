/* sin and cos of the compiled MPFR modules, correctly rounded to nearest at PREC bits:
   the values of mpfr_sin, mpfr_cos and mpfr_sin_cos (and so of gmpy2's, the Python
   kernels'), bit for bit, faster where Arb decides them.

   With MPVI_ARB_TRIG defined (mpvi.compiled.cbackend links the module to the libflint
   python-flint loaded), sin and cos of
   an argument 2^-MPVI_TRIG_TINY <= |x| < 2^MPVI_TRIG_HUGE are first computed by Arb
   (arb_sin_cos, about 4.6 times faster than mpfr_sin_cos at 216 bits) as balls at
   PREC + MPVI_TRIG_GUARD bits; where a ball certainly rounds to one PREC-bit number
   (mpfr_can_round on its midpoint with the error its radius bounds: Ziv's test, the one
   MPFR's own functions use), that number is the correctly rounded value, the same as
   MPFR's.  Otherwise (a value within the ball's width of a rounding boundary, an
   argument near a multiple of pi/2 whose value Arb gives with too little relative
   accuracy, an argument outside the range) MPFR computes it.  A module checks the two
   paths against each other on a few arguments when it loads (mpvi_trig_init) and keeps
   to MPFR if they differ.

   Without MPVI_ARB_TRIG these are MPFR's functions.  Every module counts the calls Arb
   decided and those MPFR computed (mpvi_trig_arb, mpvi_trig_mpfr: the module's
   trig_counts()). */
#ifndef MPVI_TRIG_H
#define MPVI_TRIG_H
#include <mpfr.h>

#ifndef MPVI_TRIG_GUARD
#define MPVI_TRIG_GUARD 32      /* Arb's extra bits: a ball undecided once in ~2^25 */
#endif
#define MPVI_TRIG_TINY 64       /* below 2^-64 sin x is x to 128 bits: MPFR's own shortcut */
#define MPVI_TRIG_HUGE 24       /* beyond 2^24 the argument reduction is MPFR's */

#if defined(__GNUC__) || defined(__clang__)
#define MPVI_TRIG_UNUSED __attribute__((unused))
#else
#define MPVI_TRIG_UNUSED
#endif

static unsigned long long mpvi_trig_arb = 0, mpvi_trig_mpfr = 0;   /* calls each path decided */

#ifdef MPVI_ARB_TRIG
/* FLINT's functions, declared on untyped balls: a ball is reached only through them (made
   by _arb_vec_init, its midpoint the arf at its start -- arb_struct's first member in
   every FLINT and Arb), so no other layout of FLINT's types is assumed */
void *_arb_vec_init(long n);
void arb_sin_cos(void *s, void *c, const void *x, long prec);
void arb_get_rad_arb(void *z, const void *x);
void arf_set_mpfr(void *x, const __mpfr_struct *y);
int arf_get_mpfr(__mpfr_struct *x, const void *y, mpfr_rnd_t rnd);

static int mpvi_trig_ok = 0;                          /* the load-time check passed */
static void *mpvi_tx, *mpvi_ts, *mpvi_tc, *mpvi_tr;   /* the argument, sin, cos, a radius */
static mpfr_t mpvi_tm[2], mpvi_trad;                  /* the two midpoints, a radius */

/* 1 with the midpoint of b in mpvi_tm[k] if b certainly rounds to nearest at PREC bits to
   the rounding of that midpoint, else 0 */
static int mpvi_trig_decided(const void *b, int k) {
    mpfr_ptr m = mpvi_tm[k];
    if (arf_get_mpfr(m, b, MPFR_RNDN) != 0 || !mpfr_regular_p(m))
        return 0;                                     /* not exact at PREC + GUARD bits, or 0 */
    arb_get_rad_arb(mpvi_tr, b);
    arf_get_mpfr(mpvi_trad, mpvi_tr, MPFR_RNDU);      /* an upper bound of the radius */
    if (mpfr_zero_p(mpvi_trad)) return 1;             /* an exact ball */
    if (!mpfr_regular_p(mpvi_trad)) return 0;
    /* |value - m| <= rad < 2^EXP(rad) = 2^(EXP(m) - err) */
    mpfr_exp_t err = mpfr_get_exp(m) - mpfr_get_exp(mpvi_trad);
    if (!(err > 0 && mpfr_can_round(m, err, MPFR_RNDN, MPFR_RNDZ, PREC + 1))) return 0;
#ifdef MPVI_TRIG_PERTURB
    /* a test build (tests/test_trig.py): Arb's values made wrong by two ulps, which the
       load-time check must catch */
    mpfr_set_si_2exp(mpvi_trad, 1, mpfr_get_exp(m) - PREC + 1, MPFR_RNDN);
    mpfr_add(m, m, mpvi_trad, MPFR_RNDN);
#endif
    return 1;
}

/* Arb's sin and cos of x into mpvi_tm[0], mpvi_tm[1] if both are decided (1), else 0 */
static int mpvi_trig_arb_both(mpfr_srcptr x) {
    if (!mpvi_trig_ok || !mpfr_regular_p(x) || mpfr_get_exp(x) > MPVI_TRIG_HUGE
            || mpfr_get_exp(x) < -MPVI_TRIG_TINY)
        return 0;
    arf_set_mpfr(mpvi_tx, x);                         /* the radius stays 0: x exact */
    arb_sin_cos(mpvi_ts, mpvi_tc, mpvi_tx, PREC + MPVI_TRIG_GUARD);
    return mpvi_trig_decided(mpvi_ts, 0) && mpvi_trig_decided(mpvi_tc, 1);
}
#endif

/* sin x and cos x correctly rounded to nearest (mpfr_sin_cos) */
MPVI_TRIG_UNUSED static void mpvi_sin_cos(mpfr_ptr s, mpfr_ptr c, mpfr_srcptr x, mpfr_rnd_t rnd) {
#ifdef MPVI_ARB_TRIG
    if (rnd == MPFR_RNDN && mpvi_trig_arb_both(x)) {
        mpfr_set(s, mpvi_tm[0], MPFR_RNDN);
        mpfr_set(c, mpvi_tm[1], MPFR_RNDN);
        mpvi_trig_arb++;
        return;
    }
#endif
    mpvi_trig_mpfr++;
    mpfr_sin_cos(s, c, x, rnd);
}

/* sin x (k 0) or cos x (k 1) correctly rounded to nearest (MPFR's `f`) */
MPVI_TRIG_UNUSED static void mpvi_trig_one(mpfr_ptr out, mpfr_srcptr x, mpfr_rnd_t rnd, int k,
                                           int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t)) {
#ifdef MPVI_ARB_TRIG
    if (rnd == MPFR_RNDN && mpvi_trig_arb_both(x)) {
        mpfr_set(out, mpvi_tm[k], MPFR_RNDN);
        mpvi_trig_arb++;
        return;
    }
#else
    (void)k;
#endif
    mpvi_trig_mpfr++;
    f(out, x, rnd);
}

/* sin x correctly rounded to nearest (mpfr_sin) */
MPVI_TRIG_UNUSED static void mpvi_sin(mpfr_ptr s, mpfr_srcptr x, mpfr_rnd_t rnd) {
    mpvi_trig_one(s, x, rnd, 0, mpfr_sin);
}

/* cos x correctly rounded to nearest (mpfr_cos) */
MPVI_TRIG_UNUSED static void mpvi_cos(mpfr_ptr c, mpfr_srcptr x, mpfr_rnd_t rnd) {
    mpvi_trig_one(c, x, rnd, 1, mpfr_cos);
}

/* at module load: the storage, and Arb's path checked against MPFR's on arguments near
   and away from multiples of pi/2 (it is used only if every value agrees bit for bit) */
static void mpvi_trig_init(void) {
#ifdef MPVI_ARB_TRIG
    static const char *const args[] = {"0.5", "-1", "1.5707963267948966192313216916397514",
                                       "3.1415926535897932384626433832795028", "-2.75",
                                       "1e-5", "777.125", "0.7853981633974483096156608458198757"};
    mpfr_t x, s, c;
    mpvi_tx = _arb_vec_init(1); mpvi_ts = _arb_vec_init(1);
    mpvi_tc = _arb_vec_init(1); mpvi_tr = _arb_vec_init(1);
    mpfr_init2(mpvi_tm[0], PREC + MPVI_TRIG_GUARD);
    mpfr_init2(mpvi_tm[1], PREC + MPVI_TRIG_GUARD);
    mpfr_init2(mpvi_trad, 64);
    mpfr_inits2(PREC, x, s, c, (mpfr_ptr)0);
    mpvi_trig_ok = 1;
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        mpfr_set_str(x, args[i], 10, MPFR_RNDN);
        mpfr_sin_cos(s, c, x, MPFR_RNDN);
        if (mpvi_trig_arb_both(x)) {
            mpfr_t rs, rc;
            mpfr_inits2(PREC, rs, rc, (mpfr_ptr)0);
            mpfr_set(rs, mpvi_tm[0], MPFR_RNDN);
            mpfr_set(rc, mpvi_tm[1], MPFR_RNDN);
            int same = mpfr_equal_p(rs, s) && mpfr_equal_p(rc, c);
            mpfr_clears(rs, rc, (mpfr_ptr)0);
            if (!same) { mpvi_trig_ok = 0; break; }
        }
    }
    mpfr_clears(x, s, c, (mpfr_ptr)0);
#endif
}
#endif
