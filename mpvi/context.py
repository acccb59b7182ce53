"""Number contexts: the one place numbers come from.

Every scheme, system, exact solution and analysis routine in mpvi is written once
against a *context* object ``ctx``.  Two are provided:

``MPContext(dps=64)``
    mpmath numbers at ``dps`` significant decimal digits.  Each instance owns a
    *private* ``mpmath.MPContext``, so the global ``mpmath.mp`` precision is never read
    nor changed: two contexts at 64 and 80 digits can be used side by side.
    Vectors and matrices are numpy arrays of ``dtype=object`` holding that context's
    ``mpf`` numbers, so ``A @ x``, ``x + y``, ``2 * x`` work as for floats.

``GMPContext(dps=64)``
    the same precision on gmpy2 ``mpfr`` numbers (MPFR): about 8 times faster per
    operation than mpmath, and picklable (see its docstring for the one rule it adds:
    gmpy2's precision is per thread).  Special functions (Jacobi theta, elliptic
    integrals, quadrature, ``findroot``) are delegated to a private mpmath context at the
    same precision, with exact conversions both ways.

``FPContext()``
    IEEE float64 with numpy arrays, for quick runs and cross-checks.

The context owns: conversion (:meth:`num` accepts ints, strings, ``Fraction``,
``Decimal`` and its own numbers; a Python ``float`` is refused by the mp context
because it would silently cap the precision at 53 bits), constants, elementary
functions (scalar or element-wise), small dense linear algebra (solve, inverse,
Cholesky, symmetric generalized eigenproblem), norms, ``eps`` and a scoped precision
change (:meth:`MPContext.workdps`).
"""
from __future__ import annotations

import contextlib
import math
from decimal import Decimal
from fractions import Fraction

import mpmath
import numpy as np
from mpmath.ctx_mp_python import _mpf as _any_mpf  # base class of every mpmath context's mpf

from .linalg import cholesky, solve_dense
from .precision import boundary, context_class, sticky

try:                                    # optional: the fast context (extra "fast")
    import gmpy2
    _mpfr_type = type(gmpy2.mpfr(0))
    _mpc_type = type(gmpy2.mpc(0))
    _GMP_REAL = (_mpfr_type,)
except ImportError:                     # pragma: no cover - gmpy2 is in the test extras
    gmpy2 = None
    _mpfr_type = _mpc_type = _GMP_REAL = ()


class PrecisionError(TypeError):
    """A number that would lose precision was handed to mpvi: a float, an mpmath number
    of another context, a gmpy2 number or a sympy Float of fewer bits than the context.
    The message names the quantity where the caller knows it."""


class _PrivateMath(mpmath.MPContext):
    """The private mpmath context of an mpvi context: its numbers are known to carry the
    precision of that context (numbers of any other mpmath context are not)."""


def _bits_of_mpf(x):
    """The precision (bits) an mpmath number is known to carry: its mpvi context's, or
    None for a number of another mpmath context (mpmath.mp or a user's), whose precision
    at creation cannot be told."""
    ctx = getattr(x, "context", None)
    return ctx.prec if isinstance(ctx, _PrivateMath) else None


def _sympy_number(x, prec):
    """A sympy number as an exact Python number (int, Fraction) or as an mpmath mpf tuple
    of at least ``prec`` bits, or None if ``x`` is not a sympy number.  Integers and
    rationals are exact; a Float of fewer bits than ``prec`` raises
    :class:`PrecisionError`; other real constants (pi, sqrt(2), ...) are evaluated with
    guard digits so that rounding to ``prec`` bits is correct."""
    import sympy
    if not isinstance(x, sympy.Basic):
        return None
    if x.is_Integer:
        return int(x)
    if x.is_Rational:
        return Fraction(int(x.p), int(x.q))
    if x.is_Float:
        if x._prec < prec:
            raise PrecisionError(f"sympy Float {x} carries {x._prec} bits, fewer than the "
                                 f"context's {prec}: write it as sympy.Rational or a string")
        return x._mpf_
    if x.is_number and x.is_real is not False and not x.free_symbols:
        value = sympy.Float(x.evalf(mpmath.libmp.prec_to_dps(prec) + 20), prec + 64)
        if value.is_Float:
            return value._mpf_
    raise TypeError(f"cannot convert the sympy expression {x} to a real number")


def _refuse_float(x, dps):
    raise PrecisionError(
        f"refusing float {x!r} in a {dps}-digit context: it carries only 53 bits."
        " Pass a string ('0.1'), an int or a fractions.Fraction instead.")


def _refuse_other_mpf(x, dps, bits=None):
    if bits is None:
        raise PrecisionError(
            f"refusing the mpmath number {mpmath.nstr(x, 15)} of another context in a "
            f"{dps}-digit context: mpvi cannot tell at what precision it was computed (an "
            "mpmath.mpf made at 15 digits carries 53 bits). Pass a string, an int or a "
            "Fraction, a number of this context, or ctx.lift(x) if you vouch for "
            "its precision.")
    raise PrecisionError(f"refusing a number of a {mpmath.libmp.prec_to_dps(bits)}-digit "
                         f"context ({bits} bits) in a {dps}-digit context: it would cap the "
                         "result at its own precision")


@context_class
class Context:
    """Behaviour shared by the mp and fp contexts (see module docstring)."""

    name = "abstract"
    is_mp = False
    kernels = False
    """Whether implicit schemes use generated kernels (:mod:`mpvi.kernels`) in this
    context: True for the gmp context; the mp reference and float64 keep the assembled
    reference path.  Set it on an instance to choose."""

    @sticky
    def activate(self):
        """Make this context's precision current (needed by gmpy2 only); returns it."""
        return self

    @contextlib.contextmanager
    def active(self):
        """``with ctx.active():`` -- bare arithmetic on this context's numbers inside the
        block runs at its precision; the caller's precision is restored on exit (needed
        by gmpy2 only: see :class:`GMPContext`)."""
        yield self

    def to_mpmath(self, x, m):
        """The number ``x`` of this context as an mpf of the mpmath context ``m`` (exact up
        to ``m``'s precision): for code that calls mpmath directly.  (``m.mpf(x)`` cannot
        read a gmpy2 number.)"""
        return _mpfr_to_mpmath(x, m) if isinstance(x, _mpfr_type) else m.mpf(x)

    @property
    def precision_name(self):
        """The precision without the backend: 'mp64' for 64 digits in the mpmath or the
        gmpy2 context, 'fp' for float64.  Labels in outputs use it, so a result does not
        depend on which backend computed it."""
        return f"mp{self.dps}" if self.is_mp else "fp"

    @property
    def key(self):
        """What caches of context numbers and generated code are keyed by: the context
        itself (an mpmath context's numbers and functions are its own); the gmp and fp
        contexts by name, since all instances of one precision share their numbers."""
        return self

    # ----- construction -------------------------------------------------------------
    def number(self, x, what):
        """:meth:`num` of ``x``, with any error naming the quantity ``what`` (e.g. "initial
        momentum p0[1]")."""
        try:
            return self.num(x)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{what}: {exc}") from None

    def vector(self, values):
        return np.array([self.num(v) for v in values], dtype=self.dtype)

    def matrix(self, rows):
        rows = [list(r) for r in rows]
        if not rows or any(len(r) != len(rows[0]) for r in rows):
            raise ValueError(f"matrix rows must be non-empty and of equal length, got {rows!r}")
        return np.array([[self.num(v) for v in r] for r in rows], dtype=self.dtype)

    def zeros(self, shape):
        z = np.empty(shape, dtype=self.dtype)
        z[...] = self.zero
        return z

    def eye(self, n):
        e = self.zeros((n, n))
        for i in range(n):
            e[i, i] = self.one
        return e

    def asarray(self, x):
        """Convert a (nested) sequence or array of numbers into this context's array."""
        a = np.asarray(x, dtype=object)
        out = np.empty(a.shape, dtype=self.dtype)
        for idx in np.ndindex(a.shape):
            out[idx] = self.num(a[idx])
        return out

    # ----- norms --------------------------------------------------------------------
    def norm2(self, v):
        """Euclidean norm of a vector."""
        return self.sqrt(self.fsum(x * x for x in np.ravel(v)))

    def norm_inf(self, v):
        """Max-abs norm of a vector or of all entries of a matrix."""
        return max((abs(x) for x in np.ravel(v)), default=self.zero)

    def norm_fro(self, a):
        """Frobenius norm of a matrix (the Euclidean norm of its entries)."""
        return self.norm2(a)

    # ----- linear algebra -----------------------------------------------------------
    def solve(self, a, b):
        """Solve ``a x = b`` (b a vector or a matrix) by Gaussian elimination with
        partial pivoting (:func:`mpvi.linalg.solve_dense`, the one dense solve of mpvi).
        A pivot below ``n * eps * max|a|`` raises :class:`SingularMatrixError`."""
        a = np.asarray(a)
        b = np.asarray(b)
        n = a.shape[0] if a.ndim else 0
        if a.ndim != 2 or a.shape != (n, n) or b.ndim not in (1, 2) or b.shape[0] != n:
            raise ValueError(f"solve: shapes {a.shape} and {b.shape} do not fit")
        x = solve_dense(a.tolist(), b.tolist(), self)
        return np.array(x, dtype=self.dtype)

    def inv(self, a):
        return self.solve(a, self.eye(np.shape(a)[0]))

    def cholesky(self, a, name="matrix"):
        """Lower-triangular ``L`` with ``a = L L^T`` (:func:`mpvi.linalg.cholesky`); raises
        :class:`NotPositiveDefiniteError` (naming ``name``) otherwise."""
        return np.array(cholesky(np.asarray(a).tolist(), self, name), dtype=self.dtype)

    def check_symmetric(self, a, name="matrix"):
        """Raise ``ValueError`` unless ``a`` is square and symmetric to ``n*eps`` relative."""
        a = np.asarray(a)
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            raise ValueError(f"{name} must be a square matrix, got shape {a.shape}")
        tol = a.shape[0] * self.eps * max(self.norm_inf(a), self.one)
        asym = self.norm_inf(a - a.T)
        if asym > tol:
            raise ValueError(f"{name} is not symmetric: max |a_ij - a_ji| = {self.to_str(asym, 5)}")

    def eigh_generalized(self, k, m):
        """Solve ``k v = lam m v`` for symmetric ``k`` and symmetric positive-definite
        ``m``.  Returns ``(lam, V)`` with eigenvalues ascending and ``V^T m V = I``."""
        low = self.cholesky(m, "mass matrix")
        linv = self.inv(low)
        c = linv @ k @ linv.T
        c = (c + c.T) / 2
        lam, q = self._eigh(c)
        v = linv.T @ q
        return lam, v

    def spectral_radius(self, a):
        return max(abs(z) for z in self.eigvals(a))

    # ----- output -------------------------------------------------------------------
    def to_float(self, x):
        return np.asarray(x, dtype=float) if isinstance(x, np.ndarray) else float(x)

    def dump(self, x):
        """A decimal string that :meth:`num` reads back to exactly the same number (more
        digits than :meth:`to_str`: ``repr_digits``), for caches and checkpoints."""
        return self.to_str(x, self.repr_digits)

    # ----- checks -------------------------------------------------------------------
    def all_finite(self, values):
        """True if every entry of a number or (nested) array is finite (no nan, no inf)."""
        return all(self.isfinite(x) for x in np.ravel(np.asarray(values, dtype=object)))

    # ----- generated code -------------------------------------------------------------
    GENERATED_FUNCTIONS = ("sin", "cos", "tan", "exp", "log", "sqrt", "atan", "atan2", "sinh",
                           "cosh", "tanh", "asin", "acos")

    def namespace(self):
        """Names that code generated from sympy expressions may call (``sin``, ``mpf``,
        ``pi``, ...), bound to this context: evaluated at its precision, never at a
        global one (see :func:`mpvi.mechanics.compile_exprs`)."""
        lib = self._lib
        ns = {name: getattr(lib, name) for name in self.GENERATED_FUNCTIONS}
        for name in self.PARTIAL_FUNCTIONS:
            ns[name] = self._real_valued(ns[name])
        for name in ("sin", "cos", "tan"):
            if name in ns:
                ns[name] = self._periodic(ns[name])
        ns.update(mpf=self._lib_mpf, pi=self.pi, E=self.exp(self.one), fabs=abs, sign=self._sign)
        return ns

    PARTIAL_FUNCTIONS = ()
    """Functions of generated code that must return nan outside their real domain (where
    the library would return a complex number or raise): a non-finite value is then
    caught by Newton or the driver and named, instead of a complex number or a raw
    ``math domain error`` travelling on."""

    def _real_valued(self, f):
        return f

    def _periodic(self, f):
        """``f`` (sin, cos, tan) returning nan for |x| >= 2^prec: there one unit in the last
        place of x exceeds the period, so f(x) is round-off -- and evaluating it would
        need about log2|x| bits of pi (a diverging run would hang in it).  The nan is
        caught by Newton or the driver and named, as a non-finite value."""
        limit = self.lift(2) ** self.prec
        nan = self.num("nan")

        def periodic(x):
            return f(x) if -limit < x < limit else nan
        periodic.__name__ = f.__name__
        return periodic

    def _sign(self, x):
        return self.one if x > 0 else (-self.one if x < 0 else self.zero)


@context_class
class MPContext(Context):
    """mpmath at ``dps`` significant digits, in a private mpmath context: the reference.

    Parameters
    ----------
    dps : int, default 64
        Significant decimal digits (the precision in bits is mpmath's for them).
    """

    is_mp = True
    dtype = object

    def __init__(self, dps: int = 64):
        if not isinstance(dps, int) or dps < 1:
            raise ValueError(f"dps must be a positive integer, got {dps!r}")
        self._m = _PrivateMath()
        self._m.dps = dps
        self.zero = self._m.zero
        self.one = self._m.one
        self._vec = {}
        self._lib = self._m
        self._lib_mpf = self._m.mpf
        for name in self.SPECIAL_FUNCTIONS:
            setattr(self, name, getattr(self._m, name))

    SPECIAL_FUNCTIONS = ("acos", "asin", "atan", "tan", "sinh", "cosh", "tanh", "jtheta",
                         "ellipk", "ellipf", "polyroots", "quad", "diff", "re", "im", "nint",
                         "mpc", "linspace", "isfinite", "findroot", "factorial",
                         "ellipfun")
    """mpmath functions offered at this context's precision (scalar arguments): the
    special functions of the Weierstrass solution (``jtheta``, ``ellipk``, ``ellipf``),
    complex numbers (``mpc``, ``re``, ``im``), ``polyroots``, ``quad``, ``diff`` (for
    derivative checks), ``isfinite``."""

    PARTIAL_FUNCTIONS = ("sqrt", "log", "asin", "acos")

    def _real_valued(self, f):
        m = self._m

        def real(x):
            r = f(x)
            return m.nan if isinstance(r, m.mpc) else r
        real.__name__ = f.__name__
        return real

    @property
    def repr_digits(self):
        return mpmath.libmp.repr_dps(self.prec)

    def is_number(self, x):
        """True if ``x`` is a real number of this very context."""
        return isinstance(x, self._m.mpf)

    def is_complex(self, x):
        return isinstance(x, self._m.mpc)

    # precision ---------------------------------------------------------------------
    @property
    def name(self):
        return f"mp{self.dps}"

    @property
    def dps(self):
        return self._m.dps

    @property
    def prec(self):
        return self._m.prec

    @property
    def eps(self):
        return self._m.eps

    @contextlib.contextmanager
    def workdps(self, dps):
        """Temporarily change this context's precision (restored on exit)."""
        with self._m.workdps(dps):
            yield self

    def with_dps(self, dps):
        """A new independent context at ``dps`` digits."""
        return MPContext(dps)

    def __reduce__(self):                    # picklable: rebuilt at the same precision
        return MPContext, (self.dps,)

    # numbers -----------------------------------------------------------------------
    @property
    def pi(self):
        return +self._m.pi

    def num(self, x):
        """``x`` as a number of this context, exactly or correctly rounded: ints, strings
        (decimal or 'p/q'), ``Fraction``, ``Decimal``, sympy numbers (Integer and Rational
        exactly, other constants evaluated to this precision), and numbers of mpvi
        contexts of at least this precision.  A float, an mpmath number of another
        context or a gmpy2/mpvi/sympy number of fewer bits raises
        :class:`PrecisionError`: it would silently cap the result at its own precision."""
        m = self._m
        if isinstance(x, m.mpf):
            return x
        if isinstance(x, bool):
            raise TypeError("a bool is not a number for mpvi")
        if isinstance(x, (int, np.integer)):
            return m.mpf(int(x))
        if isinstance(x, Fraction):
            return m.mpf(x.numerator) / x.denominator
        if isinstance(x, (str, Decimal)):
            try:
                return m.mpf(str(x).strip())
            except (ValueError, ZeroDivisionError):
                raise ValueError(f"cannot read a number from {x!r}") from None
        if isinstance(x, _any_mpf):
            bits = _bits_of_mpf(x)
            if bits is None or bits < self.prec:
                _refuse_other_mpf(x, self.dps, bits)
            return m.mpf(x._mpf_)                 # its bits, rounded to this precision
        if isinstance(x, _mpfr_type):
            if x.precision < self.prec:
                _refuse_other_mpf(x, self.dps, x.precision)
            return _mpfr_to_mpmath(x, m)
        if isinstance(x, (float, np.floating)):
            _refuse_float(x, self.dps)
        value = _sympy_number(x, self.prec)
        if value is not None:
            return self.num(value) if not isinstance(value, tuple) else m.mpf(value)
        raise TypeError(f"cannot convert {type(x).__name__} {x!r} to a number")

    def lift(self, x):
        """A number of any precision -- a float, an mpmath number of any context, a gmpy2
        number of any precision -- as a number of this context, keeping its bits as they
        are (rounded only if it has more).  :meth:`num` refuses such numbers because they
        may carry fewer correct bits than the context; ``lift`` is for the cases where
        that is known and wanted: comparing results of different precisions, or an
        mpmath value whose precision you vouch for."""
        if isinstance(x, _any_mpf):
            return self._m.mpf(x._mpf_)
        if isinstance(x, _mpfr_type):
            return _mpfr_to_mpmath(x, self._m)
        if isinstance(x, (float, np.floating)):
            return self._m.mpf(float(x))
        return self.num(x)

    def fsum(self, terms):
        return self._m.fsum(terms)

    def _elementwise(self, name):
        f = getattr(self._m, name)
        if name not in self._vec:
            self._vec[name] = np.frompyfunc(f, 1, 1)
        vf = self._vec[name]

        def apply(x):
            return vf(x) if isinstance(x, np.ndarray) else f(x)
        return apply

    def sqrt(self, x):
        return self._elementwise("sqrt")(x)

    def cos(self, x):
        return self._elementwise("cos")(x)

    def sin(self, x):
        return self._elementwise("sin")(x)

    def exp(self, x):
        return self._elementwise("exp")(x)

    def log(self, x):
        return self._elementwise("log")(x)

    def log10(self, x):
        return self._elementwise("log10")(x)

    def atan2(self, y, x):
        return self._m.atan2(y, x)

    def csqrt(self, x):
        """Complex square root (for eigenvalues)."""
        return self._m.sqrt(self._m.mpc(x))

    def to_str(self, x, digits=None):
        """Full-precision decimal string (``digits`` significant digits, default dps)."""
        return self._m.nstr(x, digits or self.dps, min_fixed=1, max_fixed=0, strip_zeros=False)

    # linear algebra ----------------------------------------------------------------
    def _to_mpmatrix(self, a):
        return self._m.matrix([[self.num(v) for v in row] for row in a])

    def _eigh(self, c):
        e, q = self._m.eigsy(self._to_mpmatrix(c))
        n = c.shape[0]
        lam = np.array([e[i] for i in range(n)], dtype=object)
        qa = np.array([[q[i, j] for j in range(n)] for i in range(n)], dtype=object)
        order = sorted(range(n), key=lambda i: lam[i])
        return lam[order], qa[:, order]

    def eigvals(self, a):
        a = np.asarray(a)
        if a.shape == (2, 2):
            tr = a[0, 0] + a[1, 1]
            det = a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
            s = self.csqrt(tr * tr - 4 * det)
            return [(tr + s) / 2, (tr - s) / 2]
        e = self._m.eig(self._to_mpmatrix(a), left=False, right=False)
        return list(e)

def _mpfr_to_mpmath(x, m):
    """The gmpy2 number ``x`` as an mpf of the mpmath context ``m``, exactly when finite
    (rounded only if ``x`` has more bits than ``m``)."""
    if gmpy2.is_finite(x):
        man, exp = x.as_mantissa_exp()
        return m.mpf((int(man), int(exp)))
    return m.mpf(str(x))                         # inf, -inf, nan


@context_class
class GMPContext(MPContext):
    """``dps`` significant digits on gmpy2 ``mpfr`` numbers (MPFR): the fast context.

    The precision in bits is mpmath's for the same ``dps`` (216 bits for 64 digits), eps is
    ``2^(1 - prec)`` as in :class:`MPContext`, and every result is correctly rounded
    (MPFR), so the two contexts agree to a few units of eps per operation.

    **One rule.**  gmpy2 rounds every operation to the precision of the calling thread's
    gmpy2 context, not to that of its operands.  Inside mpvi every method of this context
    first makes its own precision the thread's (a check of about 50 ns), so mpvi's bare
    arithmetic runs at the precision of the context used last.  When a call into mpvi
    (any public function, method or constructor: :func:`mpvi.precision.boundary`) returns, the caller's
    gmpy2 context is restored: ``gmpy2.mpfr(1)/3`` in your own code is not changed by
    mpvi.  Your own bare arithmetic on this context's numbers therefore runs at *your*
    precision (53 bits by default) unless you ask for this one::

        with ctx.active():
            err = sol.q[-1][0] - exact      # at ctx's precision

    (or call ``ctx.activate()`` once, which changes the thread's precision for good, or
    use the context's functions: ``ctx.fsum``, ``ctx.sqrt``, ...).

    Special functions (``jtheta``, ``ellipk``, ``ellipf``, ``ellipfun``, ``quad``,
    ``diff``, ``findroot``, ``polyroots``, eigenvalues) run in a private mpmath context
    at the same precision; arguments, callbacks and results are converted exactly.
    Contexts pickle by precision (``pickle`` rebuilds ``GMPContext(dps)``), and so do
    their numbers.

    Parameters
    ----------
    dps : int, default 64
        Significant decimal digits (216 bits for 64).
    """

    kernels = True
    PARTIAL_FUNCTIONS = ()          # MPFR returns nan outside the real domain
    _DELEGATED = ("jtheta", "ellipk", "ellipf", "ellipfun", "polyroots", "quad", "diff",
                  "nint", "findroot", "factorial", "linspace")

    def __init__(self, dps: int = 64):
        if gmpy2 is None:
            raise ImportError("the gmp context needs gmpy2: pip install gmpy2 (mpvi's extra "
                              "'fast': pip install -e '.[fast]')")
        if not isinstance(dps, int) or dps < 1:
            raise ValueError(f"dps must be a positive integer, got {dps!r}")
        self._m = _PrivateMath()                # the delegate for special functions
        self._m.dps = dps
        self._g = gmpy2.context(precision=self._m.prec)
        self._own_prec = self._m.prec    # the precision of this context's own numbers
        self._vec = {}
        self._lib = gmpy2
        self._lib_mpf = gmpy2.mpfr       # mpf(2) of generated code: ints, at the current precision
        self.activate()
        self.zero = gmpy2.mpfr(0)
        self.one = gmpy2.mpfr(1)
        self._eps = (None, None)
        for name in ("acos", "asin", "atan", "tan", "sinh", "cosh", "tanh"):
            setattr(self, name, self._native(name))
        for name in self._DELEGATED:
            setattr(self, name, self._delegate(getattr(self._m, name)))

    # precision -----------------------------------------------------------------------
    @sticky
    def activate(self):
        """Make this context's precision the calling thread's gmpy2 precision (until
        another context, or the caller, sets it again)."""
        if gmpy2.get_context() is not self._g:
            gmpy2.set_context(self._g)
        return self

    @contextlib.contextmanager
    def active(self):
        """``with ctx.active():`` -- bare arithmetic on gmpy2 numbers inside the block runs
        at this context's precision; the caller's gmpy2 context is restored on exit."""
        caller = gmpy2.get_context()
        self.activate()
        try:
            yield self
        finally:
            gmpy2.set_context(caller)

    @property
    def name(self):
        return f"gmp{self.dps}"

    @property
    def prec(self):
        return self._g.precision

    @property
    @sticky                 # read at every Newton iteration: no entry-point wrapper
    def eps(self):
        prec = self._g.precision
        if self._eps[0] != prec:
            with self.active():
                self._eps = (prec, gmpy2.mul_2exp(self.one, 1 - prec))
        return self._eps[1]

    @contextlib.contextmanager
    def workdps(self, dps):
        """Temporarily change this context's precision (restored on exit, as is the
        thread's gmpy2 context)."""
        old = self._m.prec
        caller = gmpy2.get_context()
        self._m.dps = dps
        self._g.precision = self._m.prec
        try:
            self.activate()
            yield self
        finally:
            self._m.prec = old
            self._g.precision = old
            gmpy2.set_context(caller)

    def with_dps(self, dps):
        return GMPContext(dps)

    @property
    def key(self):
        return self.name

    def __reduce__(self):
        return GMPContext, (self.dps,)

    def is_number(self, x):
        return isinstance(x, _mpfr_type)

    def is_complex(self, x):
        return isinstance(x, _mpc_type)

    # numbers ---------------------------------------------------------------------------
    @property
    def pi(self):
        return gmpy2.const_pi()

    def num(self, x):
        """As :meth:`MPContext.num`, for gmpy2 numbers: an ``mpfr`` of this precision is
        returned as it is, one of more bits is rounded, one of fewer bits raises
        :class:`PrecisionError` -- except one of the context's own precision while it
        works at a raised one (inside ``diff``, ``quad``, ``findroot`` or ``workdps``: a
        parameter captured by the function), which is taken exactly, as
        :meth:`MPContext.num` takes its own numbers."""
        if isinstance(x, _mpfr_type):
            p = x.precision
            if p == self._g.precision:
                return x
            if p < self._g.precision and p < self._own_prec:
                _refuse_other_mpf(x, self.dps, p)
            return gmpy2.mpfr(x)
        if isinstance(x, bool):
            raise TypeError("a bool is not a number for mpvi")
        if isinstance(x, (int, np.integer)):
            return gmpy2.mpfr(int(x))
        if isinstance(x, Fraction):
            return gmpy2.mpfr(gmpy2.mpq(x.numerator, x.denominator))
        if isinstance(x, (str, Decimal)):
            text = str(x).strip()
            try:
                if "/" in text:                  # "p/q", correctly rounded as in mpmath
                    return gmpy2.mpfr(gmpy2.mpq(text))
                return gmpy2.mpfr(text)
            except (ValueError, ZeroDivisionError):
                raise ValueError(f"cannot read a number from {x!r}") from None
        if isinstance(x, _any_mpf):
            bits = _bits_of_mpf(x)
            if bits is None or bits < self.prec:
                _refuse_other_mpf(x, self.dps, bits)
            return self._mpf_tuple(x._mpf_)
        if isinstance(x, (float, np.floating)):
            _refuse_float(x, self.dps)
        value = _sympy_number(x, self.prec)
        if value is not None:
            return self.num(value) if not isinstance(value, tuple) else self._mpf_tuple(value)
        raise TypeError(f"cannot convert {type(x).__name__} {x!r} to a number")

    def _mpf_tuple(self, t):
        """An mpmath raw tuple (sign, man, exp, bc) as an mpfr, rounded to this precision."""
        sign, man, exp, _ = t
        if man or not exp:                       # finite (zero is (0, 0, 0, 0))
            return gmpy2.mpfr(gmpy2.mul_2exp(gmpy2.mpz(-man if sign else man), exp))
        return gmpy2.mpfr(mpmath.libmp.to_str(t, 5))     # inf, -inf, nan

    def lift(self, x):
        """As :meth:`MPContext.lift`."""
        if isinstance(x, _any_mpf):
            return self._mpf_tuple(x._mpf_)
        if isinstance(x, _mpfr_type):
            return gmpy2.mpfr(x)
        if isinstance(x, (float, np.floating)):
            return gmpy2.mpfr(float(x))
        return self.num(x)

    def fsum(self, terms):
        return gmpy2.fsum(list(terms))

    def _native(self, name):
        f = getattr(gmpy2, name)
        vf = np.frompyfunc(f, 1, 1)

        def apply(x):
            self.activate()
            return vf(x) if isinstance(x, np.ndarray) else f(x)
        apply.__name__ = name
        return boundary(apply)

    def _elementwise(self, name):
        if name not in self._vec:
            self._vec[name] = self._native(name)
        return self._vec[name]

    def atan2(self, y, x):
        return gmpy2.atan2(y, x)

    @sticky                 # a predicate, at any precision: called for every number a step makes
    def isfinite(self, x):
        return gmpy2.is_finite(x)

    def mpc(self, re, im=0):
        return gmpy2.mpc(self.num(re), self.num(im))

    def re(self, z):
        return z.real if isinstance(z, _mpc_type) else self.num(z)

    def im(self, z):
        return z.imag if isinstance(z, _mpc_type) else self.zero

    def csqrt(self, x):
        return gmpy2.sqrt(gmpy2.mpc(x))

    def to_str(self, x, digits=None):
        """Full-precision decimal string, formatted exactly as :meth:`MPContext.to_str`."""
        return self._m.nstr(self._to_m(x), digits or self.dps, min_fixed=1, max_fixed=0,
                            strip_zeros=False)

    # the mpmath delegate ---------------------------------------------------------------
    def _to_m(self, x):
        """gmpy2 numbers (and containers of them) as numbers of the private mpmath context."""
        if isinstance(x, _mpfr_type):
            return _mpfr_to_mpmath(x, self._m)
        if isinstance(x, _mpc_type):
            return self._m.mpc(_mpfr_to_mpmath(x.real, self._m), _mpfr_to_mpmath(x.imag, self._m))
        if isinstance(x, (list, tuple)):
            return type(x)(self._to_m(v) for v in x)
        if isinstance(x, np.ndarray):
            return [self._to_m(v) for v in x]
        if callable(x) and not isinstance(x, type):
            return self._callback(x)
        return x

    def _callback(self, f):
        """``f`` (a function of this context's numbers) as a function mpmath can call:
        it runs at mpmath's *current* working precision, which ``diff``, ``quad`` and
        ``findroot`` raise above the context's (a finite difference step would otherwise
        round away)."""
        def call(*args):
            old = self._g.precision
            self._g.precision = self._m.prec
            self.activate()
            try:
                return self._to_m(f(*(self._from_m(a) for a in args)))
            finally:
                self._g.precision = old
        return call

    def _from_m(self, x):
        """Numbers of the private mpmath context (and containers) as gmpy2 numbers."""
        if isinstance(x, self._m.mpf):
            return self.num(x)
        if isinstance(x, self._m.mpc):
            self.activate()
            return gmpy2.mpc(self.num(x.real), self.num(x.imag))
        if isinstance(x, (list, tuple)):
            return type(x)(self._from_m(v) for v in x)
        return x

    def _delegate(self, f):
        def call(*args, **kwargs):
            self.activate()
            args = [self._to_m(a) for a in args]
            kwargs = {k: self._to_m(v) for k, v in kwargs.items()}
            return self._from_m(f(*args, **kwargs))
        call.__name__ = getattr(f, "__name__", "delegated")
        return boundary(call)

    def _to_mpmatrix(self, a):
        return self._m.matrix([[self._to_m(self.num(v)) for v in row] for row in a])

    def _eigh(self, c):
        lam, q = super()._eigh(c)
        return (np.array([self.num(x) for x in lam], dtype=object),
                np.array([[self.num(x) for x in row] for row in q], dtype=object))

    def eigvals(self, a):
        return [self._from_m(z) for z in super().eigvals(a)]


class FPContext(Context):
    """IEEE double precision with numpy: quick runs and cross-checks (the module-level
    instance is ``mpvi.fp``).

    Attributes
    ----------
    eps : float
        2^-52.
    dps : int
        15 (what float64 carries).
    """

    name = "fp"
    is_mp = False
    dtype = float
    dps = 15
    zero = 0.0
    one = 1.0
    eps = float(np.finfo(float).eps)
    pi = math.pi

    @contextlib.contextmanager
    def workdps(self, dps):
        raise PrecisionError(f"the float64 context has a fixed precision (53 bits); a "
                             f"computation asking for {dps} working digits needs an mp context")
        yield self

    def num(self, x):
        if isinstance(x, bool):
            raise TypeError("a bool is not a number for mpvi")
        if isinstance(x, (int, float, np.integer, np.floating, Fraction, Decimal, _any_mpf)
                      + _GMP_REAL):
            return float(x)
        if isinstance(x, str):
            try:
                return float(x)
            except ValueError:
                pass
            try:                        # "p/q", as the mp context reads it (correctly rounded)
                return float(Fraction(x.strip()))
            except (ValueError, ZeroDivisionError):
                raise ValueError(f"cannot read a number from {x!r}") from None
        value = _sympy_number(x, self.prec)
        if value is not None:
            return (mpmath.libmp.to_float(value, rnd=mpmath.libmp.round_nearest)
                    if isinstance(value, tuple) else float(value))
        raise TypeError(f"cannot convert {type(x).__name__} {x!r} to a number")

    def lift(self, x):
        """As :meth:`MPContext.lift` (every number rounds to float64)."""
        return self.num(x)

    prec = 53
    repr_digits = 17
    PARTIAL_FUNCTIONS = ("sqrt", "log", "asin", "acos", "exp", "sinh", "cosh")

    def _real_valued(self, f):
        def real(x):
            try:
                return f(x)
            except (ValueError, OverflowError):
                return math.nan
        real.__name__ = f.__name__
        return real
    key = "fp"
    _lib = math
    _lib_mpf = float

    def fsum(self, terms):
        return math.fsum(terms)

    def isfinite(self, x):
        return math.isfinite(x)

    def is_number(self, x):
        return isinstance(x, float)

    def is_complex(self, x):
        return isinstance(x, complex)

    sqrt = staticmethod(np.sqrt)
    cos = staticmethod(np.cos)
    sin = staticmethod(np.sin)
    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    log10 = staticmethod(np.log10)
    atan2 = staticmethod(np.arctan2)
    acos = staticmethod(np.arccos)
    asin = staticmethod(np.arcsin)
    atan = staticmethod(np.arctan)
    tan = staticmethod(np.tan)

    def csqrt(self, x):
        return np.sqrt(complex(x))

    def to_str(self, x, digits=None):
        return f"{float(x):.{(digits or 17) - 1}e}"

    def _eigh(self, c):
        return np.linalg.eigh(np.asarray(c, dtype=float))

    def eigvals(self, a):
        return list(np.linalg.eigvals(np.asarray(a, dtype=float)))


mp = MPContext(64)
"""The reference context: 64 significant digits."""

fp = FPContext()
"""The float64 context."""


CONTEXTS = ("gmp", "mp", "fp")
"""The names :func:`get_context` knows: gmpy2 (fast), mpmath (the reference), float64."""


@boundary
def get_context(name: str = "mp", dps: int = 64) -> Context:
    """A number context by name: ``get_context('gmp', 64)``, ``get_context('mp', 80)`` or
    ``get_context('fp')``.

    Parameters
    ----------
    name : {"gmp", "mp", "fp"}
    dps : int
        Significant digits (ignored for "fp").

    Returns
    -------
    GMPContext, MPContext or FPContext

    Raises
    ------
    ValueError
        For another name (``ImportError`` for 'gmp' without gmpy2).
    """
    if name == "mp":
        return MPContext(dps)
    if name == "gmp":
        return GMPContext(dps)
    if name == "fp":
        return FPContext()
    raise ValueError(f"unknown number context {name!r}: choose one of {', '.join(CONTEXTS)}")
