/* The RK4 and GBS steps of mpvi.engines.ode on a Hamiltonian field y = (q, p) of mpvi.engines.kernels, in
   MPFR: the same operations in the same order as the Python steps, so the same bits.

   The generated part defines, before this header: PREC, MPVI_MODULE, N (degrees of
   freedom), NPAR (parameters; NPARA: at least 1), NG (singular factors; NGR: at least 1)
   and NTABLES; and, after it, the hooks:
     ex_tables(tables): the constant tables into the field's k arrays (0: error set);
     ex_init(): the field's storage and its operations on literals (module load);
     ex_fixed(): binds the parameters (parp) and runs the operations on them alone;
     ex_evaluate(eps): fo = f(ft_[0], fy) through mp (and the dense solve M v = p when M
       is not inverted symbolically); 0 where the Python field takes its other path;
     ex_guards(): with signs given (gon), every singular factor kept its sign (sg_ok). */
#ifndef MPVI_EXPLICIT_H
#define MPVI_EXPLICIT_H
#include "mpvi_runtime.h"
#include "mpvi_module.h"
#include "mpvi_powers.h"
#include "mpvi_number.h"
#include "mpvi_solve.h"

#define NY (2 * N)
#define NA (NG > 0)                 /* one more argument: the signs of the singular factors */
#include "mpvi_signs.h"

static mpfr_ptr ft_[1], fy[NY], parp[NPARA], mp[N * N], vxp[N], yin[NY];
static mpfr_t fo[NY], vx[N], W, BOUND, SUM, T1, T2, H0, H1, H2;
static mpfr_t tslot, yslot[NY], hslot, eslot, parslot[NPARA];
/* the dense solve of M v = p (a field whose M is not inverted symbolically) */
MPVI_UNUSED static mpfr_ptr bp[N];

static int ex_tables(PyObject *tables);
static void ex_init(void);
static void ex_fixed(void);
static int ex_evaluate(mpfr_srcptr eps);
static int ex_guards(void);

static PyObject *setup(PyObject *self, PyObject *tables) {
    (void)self;
    return mpvi_setup(tables, NTABLES, ex_tables);
}

/* |det M| > n eps prod_i sum_j |M_ij| (Hadamard's bound), as mpvi.engines.kernels.hamiltonian_field
   checks it: sums from Python's 0, one rounded product per row; false for a nan */
MPVI_UNUSED static int ex_regular(mpfr_srcptr det, mpfr_srcptr eps) {
    mpfr_mul_si(BOUND, eps, N, MPFR_RNDN);
    for (int i = 0; i < N; i++) {
        mpfr_abs(SUM, mp[i * N], MPFR_RNDN);
        for (int j = 1; j < N; j++) {
            mpfr_abs(W, mp[i * N + j], MPFR_RNDN);
            mpfr_add(SUM, SUM, W, MPFR_RNDN);
        }
        mpfr_mul(BOUND, BOUND, SUM, MPFR_RNDN);
    }
    mpfr_abs(W, det, MPFR_RNDN);
    return mpfr_greater_p(W, BOUND);
}

/* fo = f(ft_[0], fy): 0 where the Python field takes its other path, or (signs given) a
   singular factor at (ft_[0], fy, v = fo) has left its sign */
static int ex_field(mpfr_srcptr eps) {
    if (!ex_evaluate(eps)) return 0;
    for (int i = 0; i < NY; i++) if (!mpfr_number_p(fo[i])) return 0;
    return ex_guards();
}

/* the common arguments: t, y, params, eps; 0 (fallback) if one is not a number we take */
static int ex_read(PyObject *t, PyObject *y, PyObject *params, PyObject *eps, mpfr_ptr *e) {
    if (!ready) { PyErr_SetString(PyExc_RuntimeError, "compiled field used before setup"); return 0; }
    if (!(ft_[0] = nw_number(t, tslot)) || !(*e = nw_number(eps, eslot))) return 0;
    if (!nw_read(y, NY, yin, yslot) || !nw_read(params, NPAR, parp, parslot)) return 0;
    ex_fixed();
    return 1;
}

static PyObject *field(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr eps;
    if (nargs != 4 + NA) { PyErr_Format(PyExc_TypeError, "field takes %d arguments, got %zd", 4 + NA, nargs); return NULL; }
    if (!ex_read(args[0], args[1], args[2], args[3], &eps) || (NA && !sg_read(args[4]))) goto fallback;
    for (int i = 0; i < NY; i++) fy[i] = yin[i];
    if (!ex_field(eps)) goto fallback;
    mpfr_ptr out[NY];
    for (int i = 0; i < NY; i++) out[i] = fo[i];
    return nw_result(out, NY);
fallback:
    return mpvi_fallback();
}

/* z_i = a_i + b_i * h, as Python's [a + b * h for a, b in zip(y, k)] */
static void ex_axpy(mpfr_t *z, mpfr_ptr *a, mpfr_t *b, mpfr_srcptr h) {
    for (int i = 0; i < NY; i++) {
        mpfr_mul(W, b[i], h, MPFR_RNDN);
        mpfr_add(z[i], a[i], W, MPFR_RNDN);
    }
}

static mpfr_t K[4][NY], Z[3][NY];
static mpfr_ptr zp[3][NY];

/* rk4(t, y, h, params, eps): mpvi.engines.ode.rk4_step */
static PyObject *rk4(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr eps, h;
    if (nargs != 5 + NA) { PyErr_Format(PyExc_TypeError, "rk4 takes %d arguments, got %zd", 5 + NA, nargs); return NULL; }
    if (!ex_read(args[0], args[1], args[3], args[4], &eps) || !(h = nw_number(args[2], hslot))
        || (NA && !sg_read(args[5]))) goto fallback;
    mpfr_ptr t = ft_[0];
    mpfr_div_si(H0, h, 2, MPFR_RNDN);                       /* half = h / 2 */
    mpfr_add(T1, t, H0, MPFR_RNDN);                         /* t + half */
    mpfr_add(T2, t, h, MPFR_RNDN);                          /* t + h */
    mpfr_ptr tk[4] = {t, T1, T1, T2}, hk[3] = {H0, H0, h};
    for (int s = 0; s < 4; s++) {
        if (s == 0) for (int i = 0; i < NY; i++) fy[i] = yin[i];
        else {
            ex_axpy(Z[0], yin, K[s - 1], hk[s - 1]);
            for (int i = 0; i < NY; i++) fy[i] = Z[0][i];
        }
        ft_[0] = tk[s];
        if (!ex_field(eps)) goto fallback;
        for (int i = 0; i < NY; i++) mpfr_set(K[s][i], fo[i], MPFR_RNDN);
    }
    mpfr_div_si(H1, h, 6, MPFR_RNDN);                       /* h6 = h / 6 */
    mpfr_ptr out[NY];
    for (int i = 0; i < NY; i++) {   /* a + (b1 + 2 * (b2 + b3) + b4) * h6 */
        mpfr_add(W, K[1][i], K[2][i], MPFR_RNDN);
        mpfr_mul_si(W, W, 2, MPFR_RNDN);
        mpfr_add(W, K[0][i], W, MPFR_RNDN);
        mpfr_add(W, W, K[3][i], MPFR_RNDN);
        mpfr_mul(W, W, H1, MPFR_RNDN);
        mpfr_add(Z[1][i], yin[i], W, MPFR_RNDN);
        out[i] = Z[1][i];
    }
    return nw_result(out, NY);
fallback:
    return mpvi_fallback();
}

static mpfr_t *rows[2];         /* two rows of the extrapolation tableau: levels x NY each */
static long capacity = 0;

static int ex_reserve(long levels) {
    if (levels <= capacity) return 1;
    for (int r = 0; r < 2; r++) {
        mpfr_t *grown = (mpfr_t *)realloc(rows[r], sizeof(mpfr_t) * levels * NY);
        if (grown == NULL) { PyErr_NoMemory(); return 0; }
        rows[r] = grown;
        for (long i = capacity * NY; i < levels * NY; i++) mpfr_init2(rows[r][i], PREC);
    }
    capacity = levels;
    return 1;
}

/* gbs(t, y, H, levels, params, eps): mpvi.engines.ode.gbs_step, the explicit midpoint rule with
   n_i = 2, 4, ..., 2 levels substeps and the Aitken-Neville tableau in h^2 */
static PyObject *gbs(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    mpfr_ptr eps, H;
    if (nargs != 6 + NA) { PyErr_Format(PyExc_TypeError, "gbs takes %d arguments, got %zd", 6 + NA, nargs); return NULL; }
    long levels = PyLong_AsLong(args[3]);
    if (PyErr_Occurred()) return NULL;
    if (levels < 1 || levels > 4096) {
        PyErr_Format(PyExc_ValueError, "gbs: levels must be 1 to 4096, got %ld", levels);
        return NULL;
    }
    if (!ex_read(args[0], args[1], args[4], args[5], &eps) || !(H = nw_number(args[2], hslot))
        || (NA && !sg_read(args[6]))) goto fallback;
    if (!ex_reserve(levels)) return NULL;
    mpfr_ptr t = ft_[0];
    for (int i = 0; i < NY; i++) fy[i] = yin[i];
    if (!ex_field(eps)) goto fallback;                       /* f0 = f(t, y) */
    for (int i = 0; i < NY; i++) mpfr_set(K[0][i], fo[i], MPFR_RNDN);
    mpfr_t *prev = rows[0], *cur = rows[1];
    for (long i = 0; i < levels; i++) {
        long ni = 2 * (i + 1);
        mpfr_div_si(H0, H, ni, MPFR_RNDN);                  /* h = H / n_i */
        ex_axpy(Z[0], yin, K[0], H0);                       /* z = y + h f0 */
        mpfr_mul_si(H1, H0, 2, MPFR_RNDN);                  /* two_h = 2 h */
        int a = -1, b = 0;                                  /* z_prev = y (-1), z = Z[0] */
        for (long m = 1; m < ni; m++) {
            mpfr_mul_si(W, H0, m, MPFR_RNDN);               /* t + m h */
            mpfr_add(T1, t, W, MPFR_RNDN);
            ft_[0] = T1;
            for (int k = 0; k < NY; k++) fy[k] = Z[b][k];
            if (!ex_field(eps)) goto fallback;
            int c = (a != 0 && b != 0) ? 0 : (a != 1 && b != 1) ? 1 : 2;
            ex_axpy(Z[c], a < 0 ? yin : zp[a], fo, H1);     /* z_prev + f(t + m h, z) 2h */
            a = b; b = c;
        }
        ft_[0] = t;
        for (int k = 0; k < NY; k++) mpfr_set(cur[k], Z[b][k], MPFR_RNDN);   /* row = [z] */
        for (long j = 0; j < i; j++) {
            long d = 2 * (i - j);                           /* seq[i - j - 1] */
            mpfr_set_si(H2, ni * ni, MPFR_RNDN);            /* ctx.num(n_i^2) / d^2 - 1 */
            mpfr_div_si(H2, H2, d * d, MPFR_RNDN);
            mpfr_sub_si(H2, H2, 1, MPFR_RNDN);
            for (int k = 0; k < NY; k++) {                 /* a + (a - b) / ratio */
                mpfr_ptr x = cur[j * NY + k];
                mpfr_sub(W, x, prev[j * NY + k], MPFR_RNDN);
                mpfr_div(W, W, H2, MPFR_RNDN);
                mpfr_add(cur[(j + 1) * NY + k], x, W, MPFR_RNDN);
            }
        }
        mpfr_t *swap = prev; prev = cur; cur = swap;
    }
    mpfr_ptr out[NY];
    for (int k = 0; k < NY; k++) out[k] = prev[(levels - 1) * NY + k];
    return nw_result(out, NY);
fallback:
    return mpvi_fallback();
}

/* the numbers of the module (at its init) */
static void ex_module_numbers(void) {
    ex_init();
    for (int i = 0; i < NY; i++) {
        mpfr_init2(fo[i], PREC); mpfr_init2(yslot[i], 64);
        for (int s = 0; s < 4; s++) mpfr_init2(K[s][i], PREC);
        for (int s = 0; s < 3; s++) { mpfr_init2(Z[s][i], PREC); zp[s][i] = Z[s][i]; }
    }
    dense_solve_init(vx);
    mpfr_init2(W, PREC);
    for (int i = 0; i < N; i++) vxp[i] = vx[i];
    mpvi_init_array(parslot, NPARA, 64);
    mpfr_inits2(PREC, BOUND, SUM, T1, T2, H0, H1, H2, (mpfr_ptr)0);
    mpfr_inits2(64, tslot, hslot, eslot, (mpfr_ptr)0);
}

MPVI_DEFINE_MODULE(ex_module_numbers, "the constant tables of the field's functions",
    {"field", (PyCFunction)(void (*)(void))field, METH_FASTCALL, "the Hamiltonian field"},
    {"rk4", (PyCFunction)(void (*)(void))rk4, METH_FASTCALL, "one RK4 step"},
    {"gbs", (PyCFunction)(void (*)(void))gbs, METH_FASTCALL, "one GBS step"})
#endif
