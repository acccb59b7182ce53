/* A compiled ball kernel (mpvi.compiled.carb): one generated function of mpvi.compiled.codegen on Arb balls,
   f(prec, *groups) -> list of flint.arb, the same Arb calls in the same order as the Python
   function makes through python-flint, so the same balls (midpoint and radius, bit for bit).

   Self-contained: it includes Python.h and nothing of FLINT, whose headers are not
   installed with python-flint's wheel.  The few types and functions it uses are declared
   here, as FLINT 3 defines them (arb.h, arf.h, mag.h); mpvi.compiled.carb builds a module only
   for the FLINT version this layout was checked against, links it to the libflint that
   python-flint loaded (one library, one allocator), and uses it only after probe() has
   given the values python-flint gives (mpvi.compiled.carb._verified).

   The generated part defines, before this header: MPVI_MODULE, ARB_OFFSET (where the
   arb_struct lies in a flint.arb object), LIMIT_BITS (sin, cos and tan of a ball whose
   absolute value is not certainly below 2^LIMIT_BITS are nan, as ArbContext's), NTEMPS,
   NCONST (at least 1), NCONST_REAL (the constants setup() takes), NZ (the exact
   integers, at least 1), NGROUPS (the arguments of f after prec), NRESULTS; and, after
   it, the hooks:
     ma_evaluate(groups, result, prec): reads the arguments (ma_group), computes, sets the
       NRESULTS items of result (ma_ball, ma_int); 1 done, 0 a Python error set, -1 an
       argument is not a flint.arb (the caller runs the Python function);
     ma_init(): the exact integers z (module load). */
#ifndef MPVI_ARB_H
#define MPVI_ARB_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if defined(__GNUC__) || defined(__clang__)
#define MPVI_UNUSED __attribute__((unused))
#else
#define MPVI_UNUSED
#endif
#define MPVI_CAT_(a, b) a##b
#define MPVI_CAT(a, b) MPVI_CAT_(a, b)
#define MPVI_STR_(a) #a
#define MPVI_STR(a) MPVI_STR_(a)

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
_Static_assert(sizeof(arb_struct) == 48, "FLINT 3's arb_struct is 48 bytes on LP64");

/* ----- the functions of libflint used (exported symbols of FLINT 3) */
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

/* ----- the module */
static PyTypeObject *arb_type = NULL;      /* flint.arb, given to setup() */
MPVI_UNUSED static PyTypeObject *dual_type = NULL;   /* mpvi.numbers.arb._Dual, for a dual module */
static PyObject *no_args = NULL;           /* () for arb_type->tp_new */
static arb_t t[NTEMPS];                    /* the temporaries */
static arb_t k[NCONST];                    /* the constant table (hoisted rationals, pi, E) */
static arb_t z[NZ];                        /* the exact integers of the source */
static arb_t limit;                        /* 2^LIMIT_BITS */
static int ready = 0;
static int busy = 0;                       /* f() is running */

/* the ball inside a flint.arb object */
#define BALL(o) ((arb_ptr)((char *)(o) + ARB_OFFSET))

static int ma_evaluate(PyObject *const *groups, PyObject *result, slong prec);
static void ma_init(void);
#ifdef MPVI_DUAL
static int da_module_init(void);           /* mpvi_dual.h: its storage and names */
#endif

/* sin, cos, tan as ArbContext's: nan unless |x| (rounded as python-flint's abs) is
   certainly below 2^LIMIT_BITS */
MPVI_UNUSED static void ma_periodic(void (*f)(arb_ptr, arb_srcptr, slong), arb_ptr out,
                                    arb_ptr scratch, arb_srcptr x, slong prec) {
    arb_abs(scratch, x);
    arb_set_round(scratch, scratch, prec);
    if (arb_lt(scratch, limit)) f(out, x, prec);
    else arb_indeterminate(out);
}

/* python-flint's abs(x): the absolute value rounded to prec */
MPVI_UNUSED static void ma_abs(arb_ptr out, arb_srcptr x, slong prec) {
    arb_abs(out, x);
    arb_set_round(out, out, prec);
}

/* the count balls of the argument group x into out[]: 1, 0 (an error set) or -1 (an item
   that is not a flint.arb: Python computes) */
MPVI_UNUSED static int ma_group(PyObject *x, Py_ssize_t count, arb_srcptr *out) {
    PyObject *seq = PySequence_Fast(x, "a compiled ball kernel's argument must be a sequence");
    if (seq == NULL) return 0;
    if (PySequence_Fast_GET_SIZE(seq) != count) {
        PyErr_Format(PyExc_ValueError, "a compiled ball kernel's argument must have %zd items, "
                     "got %zd", count, PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return 0;
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, j);
        if (Py_TYPE(item) != arb_type) {
            Py_DECREF(seq);
            return -1;
        }
        out[j] = BALL(item);
    }
    Py_DECREF(seq);
    return 1;
}

/* a new flint.arb holding a copy of r */
static PyObject *ma_new(arb_srcptr r) {
    PyObject *o = arb_type->tp_new(arb_type, no_args, NULL);
    if (o != NULL) arb_set(BALL(o), r);
    return o;
}

/* result[i] = a new flint.arb of r */
MPVI_UNUSED static int ma_ball(PyObject *result, Py_ssize_t i, arb_srcptr r) {
    PyObject *o = ma_new(r);
    if (o == NULL) return 0;
    PyList_SET_ITEM(result, i, o);
    return 1;
}

/* result[i] = the Python int n (a result Python keeps an int) */
MPVI_UNUSED static int ma_int(PyObject *result, Py_ssize_t i, long n) {
    PyObject *o = PyLong_FromLong(n);
    if (o == NULL) return 0;
    PyList_SET_ITEM(result, i, o);
    return 1;
}

/* setup(flint.arb, constants[, _Dual]): the type of the balls, the constant table
   (balls, copied) and, for a module on duals (MPVI_DUAL), the type of the duals */
static PyObject *setup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *type, *constants, *duals = NULL;
    if (!PyArg_ParseTuple(args, "OO|O", &type, &constants, &duals)) return NULL;
#ifdef MPVI_DUAL
    if (duals == NULL || !PyType_Check(duals)) {
        PyErr_SetString(PyExc_TypeError, "setup: a dual module needs the type of the duals");
        return NULL;
    }
    Py_INCREF(duals);
    Py_XDECREF((PyObject *)dual_type);
    dual_type = (PyTypeObject *)duals;
#else
    if (duals != NULL) {
        PyErr_SetString(PyExc_TypeError, "setup: a ball module takes no type of duals");
        return NULL;
    }
#endif
    if (!PyType_Check(type) ||
        ((PyTypeObject *)type)->tp_basicsize != (Py_ssize_t)(ARB_OFFSET + sizeof(arb_struct))) {
        PyErr_SetString(PyExc_TypeError, "setup: the first argument must be flint.arb, of "
                        "the size this module was built for");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(constants, "setup: the constants must be a sequence");
    if (seq == NULL) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != NCONST_REAL) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "setup: wrong number of constants");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < NCONST_REAL; i++)
        if (Py_TYPE(PySequence_Fast_GET_ITEM(seq, i)) != (PyTypeObject *)type) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "setup: the constants must be flint.arb");
            return NULL;
        }
    Py_INCREF(type);
    Py_XDECREF((PyObject *)arb_type);
    arb_type = (PyTypeObject *)type;
    for (Py_ssize_t i = 0; i < NCONST_REAL; i++)
        arb_set(k[i], BALL(PySequence_Fast_GET_ITEM(seq, i)));
    Py_DECREF(seq);
    ready = 1;
    Py_RETURN_NONE;
}

static int ma_prec(PyObject *x, slong *prec) {
    long p = PyLong_AsLong(x);
    if (p == -1 && PyErr_Occurred()) return 0;
    if (p < 2) {
        PyErr_SetString(PyExc_ValueError, "a compiled ball kernel's precision must be >= 2");
        return 0;
    }
    *prec = p;
    return 1;
}

/* f(prec, *groups) -> list of flint.arb (of duals), or None where an argument is not
   one, or during another call */
static PyObject *f(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    slong prec;
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "compiled ball kernel used before setup");
        return NULL;
    }
    if (nargs != NGROUPS + 1) {
        PyErr_Format(PyExc_TypeError, "compiled ball kernel takes %d arguments, got %zd",
                     NGROUPS + 1, nargs);
        return NULL;
    }
    if (!ma_prec(args[0], &prec)) return NULL;
    /* the temporaries are the module's: a call made while one runs (another thread, or a
       finalizer run by the allocation of a result) leaves them alone -- Python computes */
    if (busy) Py_RETURN_NONE;
    PyObject *result = PyList_New(NRESULTS);
    if (result == NULL) return NULL;
    busy = 1;
    int rc = ma_evaluate(args + 1, result, prec);
    busy = 0;
    if (rc == 1) return result;
    Py_DECREF(result);
    if (rc == 0) return NULL;
    Py_RETURN_NONE;
}

/* probe(a, b, prec) -> (a + b as a new ball, arb_equal_si(a, 3), arb_equal_si(b, 3), the
   double of a's midpoint rounded down): what mpvi.compiled.carb compares with python-flint's own
   answers before it uses the module, reading and writing balls through the layout above */
static PyObject *probe(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *a, *b, *p;
    slong prec;
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "probe before setup");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOO", &a, &b, &p)) return NULL;
    if (Py_TYPE(a) != arb_type || Py_TYPE(b) != arb_type) {
        PyErr_SetString(PyExc_TypeError, "probe takes two flint.arb");
        return NULL;
    }
    if (!ma_prec(p, &prec)) return NULL;
    arb_t s;
    arb_init(s);
    arb_add(s, BALL(a), BALL(b), prec);
    PyObject *sum = ma_new(s);
    arb_clear(s);
    if (sum == NULL) return NULL;
    return Py_BuildValue("(Niid)", sum, arb_equal_si(BALL(a), 3), arb_equal_si(BALL(b), 3),
                         arf_get_d(&BALL(a)->mid, 0));
}

static PyMethodDef methods[] = {
    {"f", (PyCFunction)(void (*)(void))f, METH_FASTCALL, "the compiled ball kernel"},
    {"setup", (PyCFunction)setup, METH_VARARGS, "(flint.arb, the constant table)"},
    {"probe", (PyCFunction)probe, METH_VARARGS, "the layout check of mpvi.compiled.carb"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module_def = {
    .m_base = PyModuleDef_HEAD_INIT, .m_name = MPVI_STR(MPVI_MODULE), .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC MPVI_CAT(PyInit_, MPVI_MODULE)(void);
PyMODINIT_FUNC MPVI_CAT(PyInit_, MPVI_MODULE)(void) {
    no_args = PyTuple_New(0);
    if (no_args == NULL) return NULL;
    for (int i = 0; i < NTEMPS; i++) arb_init(t[i]);
    for (int i = 0; i < NCONST; i++) arb_init(k[i]);
    for (int i = 0; i < NZ; i++) arb_init(z[i]);
    arb_init(limit);
    arb_one(limit);
    arb_mul_2exp_si(limit, limit, LIMIT_BITS);
    ma_init();
#ifdef MPVI_DUAL
    if (!da_module_init()) return NULL;
#endif
    return PyModule_Create(&module_def);
}
#endif
