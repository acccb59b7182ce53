/* The energies of an M, V system at many points, in MPFR: for each row (q, p),
   v = M(q)^-1 p by the elimination of mpvi.numbers.linalg.solve_dense (generated from its
   Python before this header, mpvi_solve.h), then H = p^T v / 2 + V(q), with p^T v summed
   from the left as numpy's dot of object arrays sums it (p_0 v_0 + p_1 v_1, then + p_2 v_2,
   ...): mpvi.LagrangianSystem.energies's operations in its order, so the same bits.

   The generated part defines, before this header: PREC, MPVI_MODULE, N (degrees of
   freedom), NPAR (parameters; NPARA: at least 1) and NTABLES; and, after it, the hooks:
     en_tables(tables): the constant tables into the kernels' k arrays (0: error set);
     en_init(): the kernels' storage and their operations on literals (module load);
     en_fixed(): binds the parameters (parp) and runs the operations on them alone;
     en_mass(): M at q (qp) into mp;
     en_potential(): V at q (qp). */
#ifndef MPVI_ENERGY_H
#define MPVI_ENERGY_H
#include "mpvi_runtime.h"
#include "mpvi_module.h"
#include "mpvi_powers.h"
#include "mpvi_number.h"
#include "mpvi_solve.h"

static mpfr_ptr qp[N], pp[N], parp[NPARA], mp[N * N];
static mpfr_t qslot[N], pslot[N], parslot[NPARA], eslot, vx[N], H, T;

static int en_tables(PyObject *tables);
static void en_init(void);
static void en_fixed(void);
static void en_mass(void);
static mpfr_srcptr en_potential(void);

static PyObject *setup(PyObject *self, PyObject *tables) {
    (void)self;
    return mpvi_setup(tables, NTABLES, en_tables);
}

/* H at the row (qp, pp) into H; 0 where Python takes another path (M singular to working
   precision or not finite: solve_dense raises) */
static int en_energy(mpfr_srcptr eps) {
    en_mass();
    if (!dense_solve(mp, pp, vx, eps)) return 0;
    mpfr_mul(H, pp[0], vx[0], MPFR_RNDN);
    for (int i = 1; i < N; i++) {
        mpfr_mul(T, pp[i], vx[i], MPFR_RNDN);
        mpfr_add(H, H, T, MPFR_RNDN);
    }
    mpfr_div_si(H, H, 2, MPFR_RNDN);
    mpfr_add(H, H, en_potential(), MPFR_RNDN);
    return 1;
}

/* energies(q, p, params, eps): q and p sequences of rows of N numbers; the list of the
   energies of the rows before the first one the C does not take (a number wider than
   the context or not a number, M singular to working precision): the caller computes
   from there on, where Python raises or reads what the C does not */
static PyObject *energies(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4) { PyErr_Format(PyExc_TypeError, "energies takes 4 arguments, got %zd", nargs); return NULL; }
    if (!ready) { PyErr_SetString(PyExc_RuntimeError, "compiled energies used before setup"); return NULL; }
    PyObject *out = PyList_New(0), *qs = NULL, *ps = NULL;
    mpfr_ptr eps;
    if (out == NULL) return NULL;
    if (!(eps = nw_number(args[3], eslot)) || !nw_read(args[2], NPAR, parp, parslot)) return out;
    qs = PySequence_Fast(args[0], "rows");
    ps = PySequence_Fast(args[1], "rows");
    if (qs == NULL || ps == NULL) { PyErr_Clear(); goto done; }
    Py_ssize_t rows = PySequence_Fast_GET_SIZE(qs);
    if (PySequence_Fast_GET_SIZE(ps) < rows) rows = PySequence_Fast_GET_SIZE(ps);
    en_fixed();
    for (Py_ssize_t j = 0; j < rows; j++) {
        if (!nw_read(PySequence_Fast_GET_ITEM(qs, j), N, qp, qslot)
            || !nw_read(PySequence_Fast_GET_ITEM(ps, j), N, pp, pslot) || !en_energy(eps)) break;
        PyObject *o = (PyObject *)GMPy_MPFR_New(PREC, NULL);
        if (o == NULL) { Py_CLEAR(out); goto done; }
        mpfr_set(MPFR(o), H, MPFR_RNDN);
        int failed = PyList_Append(out, o) < 0;
        Py_DECREF(o);
        if (failed) { Py_CLEAR(out); goto done; }
    }
done:
    Py_XDECREF(qs);
    Py_XDECREF(ps);
    return out;
}

/* the numbers of the module (at its init) */
static void en_module_numbers(void) {
    en_init();
    mpvi_init_array(qslot, N, 64);
    mpvi_init_array(pslot, N, 64);
    mpvi_init_array(parslot, NPARA, 64);
    mpfr_init2(eslot, 64);
    dense_solve_init(vx);
    mpfr_inits2(PREC, H, T, (mpfr_ptr)0);
}

MPVI_DEFINE_MODULE(en_module_numbers, "the constant tables of M and V",
    {"energies", (PyCFunction)(void (*)(void))energies, METH_FASTCALL, "H at every row"})
#endif
