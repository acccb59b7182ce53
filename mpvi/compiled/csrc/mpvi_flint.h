/* The part of FLINT 3 a compiled ball kernel uses (mpvi.compiled.carb): declarations only.

   With FLINT's own headers on the include path, of the version of the libflint
   python-flint loaded (mpvi.compiled.carb defines MPVI_FLINT_HEADERS then), they declare
   it.  Otherwise (python-flint's wheel ships no headers) the types are declared here as
   FLINT 3 lays them out in memory (flint.h, arf_types.h, mag.h, arb_types.h), and that
   layout is not trusted for being written here: mpvi.compiled.carb compiles probes with
   this very file, runs them against the libflint python-flint loaded
   (mpvi_flintprobe.h: sizeof(arb_struct) by the stride of FLINT's own vectors, the
   offset of the radius by arb_get_rad_arb) and refuses the compiled ball kernels on a
   mismatch. */
#ifndef MPVI_FLINT_H
#define MPVI_FLINT_H

#ifdef MPVI_FLINT_HEADERS
#include <flint/flint.h>
#include <flint/arb.h>
#else
/* ----- FLINT 3's types (flint.h, arf_types.h, mag.h, arb_types.h), as laid out in memory */
typedef long slong;
typedef unsigned long ulong;
typedef slong fmpz;
typedef struct { ulong d[2]; } mpvi_mantissa_noptr;
typedef struct { slong alloc; ulong *d; } mpvi_mantissa_ptr;
typedef union { mpvi_mantissa_noptr noptr; mpvi_mantissa_ptr ptr; } mpvi_mantissa;
typedef struct { fmpz exp; slong size; mpvi_mantissa d; } arf_struct;
typedef struct { fmpz exp; ulong man; } mag_struct;
typedef struct { arf_struct mid; mag_struct rad; } arb_struct;
typedef arb_struct arb_t[1];
typedef arb_struct *arb_ptr;
typedef const arb_struct *arb_srcptr;

/* ----- the functions of libflint used (exported symbols of FLINT 3) */
void _arb_vec_set_powers(arb_ptr xs, arb_srcptr x, slong len, slong prec);
void _arb_vec_set(arb_ptr res, arb_srcptr vec, slong len);
void _arb_vec_add(arb_ptr res, arb_srcptr vec1, arb_srcptr vec2, slong n, slong prec);
void arb_add_error_2exp_si(arb_ptr x, slong err);
void arb_get_rad_arb(arb_ptr z, arb_srcptr x);
int arb_equal(arb_srcptr x, arb_srcptr y);
void arb_init(arb_ptr x);
void arb_clear(arb_ptr x);
void arb_set(arb_ptr y, arb_srcptr x);
void arb_set_si(arb_ptr y, slong n);
void arb_one(arb_ptr x);
void arb_indeterminate(arb_ptr x);
void arb_mul_2exp_si(arb_ptr y, arb_srcptr x, slong e);
void arb_add(arb_ptr z, arb_srcptr x, arb_srcptr y, slong prec);
void arb_sub(arb_ptr z, arb_srcptr x, arb_srcptr y, slong prec);
void arb_mul(arb_ptr z, arb_srcptr x, arb_srcptr y, slong prec);
void arb_div(arb_ptr z, arb_srcptr x, arb_srcptr y, slong prec);
void arb_pow(arb_ptr z, arb_srcptr x, arb_srcptr y, slong prec);
void arb_neg_round(arb_ptr y, arb_srcptr x, slong prec);
void arb_set_round(arb_ptr y, arb_srcptr x, slong prec);
void arb_abs(arb_ptr y, arb_srcptr x);
int arb_lt(arb_srcptr x, arb_srcptr y);
int arb_equal_si(arb_srcptr x, slong n);
double arf_get_d(const arf_struct *x, int rnd);
void arb_sin(arb_ptr y, arb_srcptr x, slong prec);
void arb_cos(arb_ptr y, arb_srcptr x, slong prec);
void arb_tan(arb_ptr y, arb_srcptr x, slong prec);
void arb_exp(arb_ptr y, arb_srcptr x, slong prec);
void arb_log(arb_ptr y, arb_srcptr x, slong prec);
void arb_sqrt(arb_ptr y, arb_srcptr x, slong prec);
void arb_atan(arb_ptr y, arb_srcptr x, slong prec);
void arb_sinh(arb_ptr y, arb_srcptr x, slong prec);
void arb_cosh(arb_ptr y, arb_srcptr x, slong prec);
void arb_tanh(arb_ptr y, arb_srcptr x, slong prec);
void arb_asin(arb_ptr y, arb_srcptr x, slong prec);
void arb_acos(arb_ptr y, arb_srcptr x, slong prec);
void arb_atan2(arb_ptr r, arb_srcptr b, arb_srcptr a, slong prec);
#endif
#endif
