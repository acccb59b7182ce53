/* The layout probe of mpvi.compiled.carb: compiled on this machine with the declarations
   of mpvi_flint.h (the very ones the ball kernels are compiled with), linked to the
   libflint python-flint loaded, and run before any compiled ball kernel is built.  The
   layout is checked against what the library itself does, never taken from mpvi_flint.h
   alone:

   - the stride of a vector (sizeof(arb_struct)): the library writes 1, 2, 4, 8 with its
     own stride (_arb_vec_set_powers), copies them (_arb_vec_set) and doubles them
     (_arb_vec_add); each is read back at the assumed stride, through the assumed fields
     (the midpoint's exponent and size word, the radius' mantissa);
   - the radius' offset: the library gives a ball the radius 2^-10 (arb_add_error_2exp_si)
     and it is read at the assumed offset; a radius written at the assumed offset is read
     back by the library (arb_get_rad_arb, compared by arb_equal with 2^-20 made by
     arb_mul_2exp_si).

   The stride and the offsets tried are arguments (the compiled ones by default: a test
   passes wrong ones).  Every ball lives in zeroed memory of MPVI_PROBE_ROOM bytes per
   ball (a zeroed arb_struct is FLINT's 0, whatever the true size up to that room), so a
   wrong guess reads and writes only this memory; the values are small exact numbers and
   radii (no limb or exponent on the heap), so nothing is to be freed by FLINT. */
#ifndef MPVI_FLINTPROBE_H
#define MPVI_FLINTPROBE_H
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "mpvi_flint.h"

#define MPVI_PROBE_ROOM 256
#define MPVI_PROBE_LEN 4

long mpvi_probe_size(void);
long mpvi_probe_rad_offset(void);
int mpvi_probe_check(long size, long rad_offset);

/* sizeof(arb_struct) and offsetof(arb_struct, rad) as compiled */
long mpvi_probe_size(void) { return (long)sizeof(arb_struct); }
long mpvi_probe_rad_offset(void) { return (long)offsetof(arb_struct, rad); }

/* the midpoint of the ball at `at` is the exact 2^e (FLINT: exponent e + 1, one limb,
   positive: size word 2) with a zero radius */
static int mpvi_probe_power(const char *at, long rad_offset, slong e) {
    const arf_struct *mid = (const arf_struct *)at;
    const mag_struct *rad = (const mag_struct *)(at + rad_offset);
    return mid->exp == e + 1 && mid->size == 2 && rad->man == 0;
}

/* 0 when the layout (size, rad_offset) is FLINT's, else the number of the first check
   that failed (mpvi.compiled.carb says which) */
int mpvi_probe_check(long size, long rad_offset) {
    /* a radius inside the ball, after the midpoint's exponent, aligned: else no layout */
    if (size <= 0 || size > MPVI_PROBE_ROOM / 2 || rad_offset < (long)sizeof(slong)
        || rad_offset % (long)sizeof(slong) != 0 || size % (long)sizeof(slong) != 0
        || rad_offset + (long)sizeof(mag_struct) > size)
        return 1;
    /* room for MPVI_PROBE_LEN balls at either stride, and the single balls */
    char *powers = calloc(2 * MPVI_PROBE_LEN, MPVI_PROBE_ROOM);
    char *copy = calloc(2 * MPVI_PROBE_LEN, MPVI_PROBE_ROOM);
    char *twice = calloc(2 * MPVI_PROBE_LEN, MPVI_PROBE_ROOM);
    char *x = calloc(1, MPVI_PROBE_ROOM), *r = calloc(1, MPVI_PROBE_ROOM);
    char *want = calloc(1, MPVI_PROBE_ROOM);
    int failed = 0;
    if (!powers || !copy || !twice || !x || !r || !want) failed = 2;
    if (!failed) {
        arb_set_si((arb_ptr)x, 2);
        _arb_vec_set_powers((arb_ptr)powers, (arb_srcptr)x, MPVI_PROBE_LEN, 64);
        _arb_vec_set((arb_ptr)copy, (arb_srcptr)powers, MPVI_PROBE_LEN);
        _arb_vec_add((arb_ptr)twice, (arb_srcptr)powers, (arb_srcptr)copy, MPVI_PROBE_LEN, 64);
        for (slong i = 0; i < MPVI_PROBE_LEN && !failed; i++) {
            if (!mpvi_probe_power(powers + i * size, rad_offset, i)) failed = 3;
            else if (!mpvi_probe_power(copy + i * size, rad_offset, i)) failed = 4;
            else if (!mpvi_probe_power(twice + i * size, rad_offset, i + 1)) failed = 5;
        }
    }
    if (!failed) {                           /* the library's radius read at the offset */
        const mag_struct *rad = (const mag_struct *)(x + rad_offset);
        arb_add_error_2exp_si((arb_ptr)x, -10);
        if (rad->exp != -9 || rad->man != (1UL << 29)) failed = 6;
    }
    if (!failed) {                           /* a radius written at the offset, read by it */
        mag_struct *rad = (mag_struct *)(x + rad_offset);
        rad->exp = -19;
        rad->man = 1UL << 29;
        arb_get_rad_arb((arb_ptr)r, (arb_srcptr)x);
        arb_one((arb_ptr)want);
        arb_mul_2exp_si((arb_ptr)want, (arb_srcptr)want, -20);
        if (!arb_equal((arb_srcptr)r, (arb_srcptr)want)) failed = 7;
    }
    free(powers); free(copy); free(twice); free(x); free(r); free(want);
    return failed;
}
#endif
