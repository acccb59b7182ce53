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
import functools
import math
import re
from typing import TYPE_CHECKING, Any, Iterable, Iterator
from decimal import Decimal
from fractions import Fraction

import mpmath
import numpy as np
from mpmath.ctx_mp_python import _mpf as _any_mpf  # base class of every mpmath context's mpf

from mpvi.numbers.linalg import cholesky, solve_dense
from mpvi.ground.precision import boundary, context_class, request_handoff, sticky

if TYPE_CHECKING:
    from collections.abc import Hashable

    from numpy.typing import NDArray

    from mpvi.ground.types import Array, Matrix, Number, NumberLike, Real, Vector

try:                                    # the fast context: a dependency of mpvi
    import gmpy2
    _mpfr_type = type(gmpy2.mpfr(0))
    _mpc_type = type(gmpy2.mpc(0))
    _GMP_REAL = (_mpfr_type,)
except ImportError:                     # pragma: no cover - gmpy2 is a dependency
    gmpy2 = None
    _mpfr_type = _mpc_type = _GMP_REAL = ()


MAX_DPS = 1_000_000
"""The largest precision (decimal digits) a context accepts: a number then takes 415 kB."""


def check_dps(dps: object, what: str = "dps") -> int:
    """``dps`` as an int if it is a whole number of digits from 1 to :data:`MAX_DPS`.

    Checked before any work: MPFR aborts the process on a precision it cannot allocate,
    so ``GMPContext(10**12)`` must never reach it.

    Parameters
    ----------
    dps : int
        The number of significant decimal digits asked for.
    what : str, default "dps"
        The name of the quantity, for the message.

    Returns
    -------
    int
        ``dps``.

    Raises
    ------
    ValueError
        Not an int (a bool, a string, a float) or outside 1 .. :data:`MAX_DPS`; the message
        gives the memory one number would take.
    """
    if isinstance(dps, bool) or not isinstance(dps, (int, np.integer)):
        raise ValueError(f"{what} must be a positive integer number of digits, got {dps!r}")
    dps = int(dps)
    if dps < 1:
        raise ValueError(f"{what} must be a positive integer number of digits, got {dps}")
    if dps > MAX_DPS:
        size = dps * math.log2(10) / 8
        raise ValueError(f"{what} = {dps} digits is beyond what mpvi accepts ({MAX_DPS} digits): "
                         f"one number would take {_bytes(size)} and one multiplication about "
                         f"{_seconds(dps)}")
    return dps


def _bytes(n):
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000:
            return f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} EB"


def _seconds(dps):
    """A rough time of one multiplication at ``dps`` digits (GMP's FFT, about 1e-9 s per
    digit times its logarithm): for the message of :func:`check_dps` only."""
    t = 1e-9 * dps * max(1.0, math.log2(dps))
    return f"{t:.2g} s" if t < 3600 else f"{t / 3600:.2g} hours"


_NUMBER_TEXT = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|(?:inf|infinity|nan))",
                          re.IGNORECASE | re.ASCII)
_RATIO_TEXT = re.compile(r"([+-]?\d+)\s*/\s*(\d+)", re.ASCII)


def _number_text(x: object) -> tuple[str, str | Fraction]:
    """The stripped text of a number string in the one grammar every context reads -- a
    decimal (``-1.5e-3``), ``p/q`` of integers, or inf / nan -- as ``("decimal", text)`` or
    ``("ratio", Fraction)``; ValueError naming ``x`` for anything else (an empty string,
    ``0x10``, ``1_000``, digits of other scripts), which some libraries would read."""
    text = str(x).strip()
    if _NUMBER_TEXT.fullmatch(text):
        return "decimal", text
    m = _RATIO_TEXT.fullmatch(text)
    if m and int(m.group(2)) != 0:
        return "ratio", Fraction(int(m.group(1)), int(m.group(2)))
    raise ValueError(f"cannot read a number from {x!r}: write a decimal such as '0.1' or "
                     "'-2.5e-3', or a ratio of integers such as '1/3'")


class PrecisionError(TypeError):
    """A number that would lose precision was handed to mpvi.

    A float, an mpmath number of another context (whose precision cannot be told), a
    gmpy2 number or a sympy Float of fewer bits than the context, a float literal in a
    system's expressions, or a system stepped in a context of another precision.  The
    message names the quantity where the caller knows it.  A ``TypeError``.

    See Also
    --------
    MPContext.num : What a context converts, and what it refuses.
    MPContext.lift : Take a number's bits when you know what they are worth.
    """


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


def _mpmath_real(m, f):
    """``f``, a function of the mpmath context ``m``, as a real function of generated code:
    nan where its value is complex, at a pole (mpmath raises ValueError or
    ZeroDivisionError) and for a non-finite argument."""
    def real(*args):
        if any(isinstance(a, m.mpf) and not m.isfinite(a) for a in args):
            return m.nan
        try:
            r = f(*args)
        except (ValueError, ZeroDivisionError):
            return m.nan
        return m.nan if isinstance(r, m.mpc) else r
    real.__name__ = getattr(f, "__name__", "real")
    return real


def _mpmath_specials(m):
    """The special functions of generated code that mpmath evaluates, in the mpmath
    context ``m`` (see ``Context.SPECIAL_FUNCTIONS_OF_CODE``)."""
    nan = m.nan
    return {
        "gamma": _mpmath_real(m, m.gamma),
        "loggamma": _mpmath_real(m, lambda x: m.loggamma(x) if x > 0 else nan),
        "zeta": _mpmath_real(m, lambda s, a=1: m.zeta(s, a)),
        "zetaderiv": _mpmath_real(m, lambda k, s: m.zeta(s, 1, k)),
        "besselj": _mpmath_real(m, m.besselj),
        "bessely": _mpmath_real(m, lambda n, x: m.bessely(n, x) if x > 0 else nan),
        "polygamma": _mpmath_real(m, m.psi),
        "lambertw": _mpmath_real(m, lambda x, k=0: m.lambertw(x, k)),
        "atanh": _mpmath_real(m, m.atanh),
        "acosh": _mpmath_real(m, m.acosh),
        **{name: _mpmath_real(m, f) for name, f in (
            ("erfi", m.erfi), ("ei", m.ei), ("expint", m.expint), ("li", m.li), ("si", m.si),
            ("ci", m.ci), ("shi", m.shi), ("chi", m.chi), ("fresnels", m.fresnels),
            ("fresnelc", m.fresnelc), ("besseli", m.besseli), ("besselk", m.besselk),
            ("ellipk", m.ellipk), ("ellipe", m.ellipe), ("ellipf", m.ellipf),
            ("factorial", m.factorial), ("beta", m.beta),
            ("airyai", lambda x, k=0: m.airyai(x, derivative=k)),
            ("airybi", lambda x, k=0: m.airybi(x, derivative=k)))},
    }


@context_class
class Context:
    """The interface every number context offers (the base of the three contexts).

    Schemes, systems and analysis routines are written once against it: conversion
    (:meth:`num`, :meth:`lift`, :meth:`vector`, :meth:`matrix`), constants (``zero``,
    ``one``, ``pi``, ``eps``), elementary functions (scalar or element-wise), small dense
    linear algebra, norms, output (:meth:`to_str`, :meth:`dump`, :meth:`to_float`) and a
    scoped precision change (``workdps``).  It is not instantiated itself: use
    :class:`GMPContext`, :class:`MPContext`, :class:`FPContext` or :func:`get_context`.
    """

    name = "abstract"
    is_mp = False
    kernels = False
    """Whether implicit schemes use generated kernels (:mod:`mpvi.engines.kernels`) in this
    context: True for the gmp context; the mp reference and float64 keep the assembled
    reference path.  Set it on an instance to choose."""

    if TYPE_CHECKING:
        # What every concrete context defines (as attributes, properties or methods),
        # declared for the type checker only: the base class stays as it was at run time.
        dtype: type
        zero: Real
        one: Real

        @property
        def dps(self) -> int: ...
        @property
        def prec(self) -> int: ...
        @property
        def repr_digits(self) -> int: ...
        @property
        def eps(self) -> Real: ...
        @property
        def pi(self) -> Real: ...

        def num(self, x: NumberLike) -> Real: ...
        def lift(self, x: NumberLike) -> Real: ...
        def fsum(self, terms: Iterable[Number]) -> Number: ...
        def is_number(self, x: object) -> bool: ...
        def is_complex(self, x: object) -> bool: ...
        def isfinite(self, x: Number) -> bool: ...
        def sqrt(self, x: Number | Array) -> Number | Array: ...
        def cos(self, x: Number | Array) -> Number | Array: ...
        def sin(self, x: Number | Array) -> Number | Array: ...
        def exp(self, x: Number | Array) -> Number | Array: ...
        def log(self, x: Number | Array) -> Number | Array: ...
        def atan2(self, y: Real | Array, x: Real | Array) -> Real | Array: ...
        def csqrt(self, x: Number | Array) -> Number | Array: ...
        def to_str(self, x: Number, digits: int | None = None) -> str: ...
        def eigvals(self, a: Matrix) -> list[Number]: ...
        def with_dps(self, dps: int) -> Context: ...
        def workdps(self, dps: int) -> contextlib.AbstractContextManager[Context]: ...

        def __getattr__(self, name: str) -> Any:
            """The mpmath functions an instance sets (``SPECIAL_FUNCTIONS``)."""

    @sticky
    def activate(self) -> Context:
        """Make this context's precision current (needed by gmpy2 only).

        Returns
        -------
        Context
            The context itself.
        """
        return self

    @contextlib.contextmanager
    def active(self) -> Iterator[Context]:
        """Run bare arithmetic on this context's numbers at its precision inside a block.

        ``with ctx.active():`` -- the caller's precision is restored on exit (needed by
        gmpy2 only: see :class:`GMPContext`).

        Yields
        ------
        Context
            The context itself.
        """
        yield self

    def to_mpmath(self, x: Number, m: mpmath.MPContext) -> mpmath.mpf | mpmath.mpc:
        """Convert a number of this context into an mpf of the mpmath context ``m``.

        For code that calls mpmath directly (``m.mpf(x)`` cannot read a gmpy2 number).

        Parameters
        ----------
        x : number
            A number of this context.
        m : mpmath.MPContext
            The mpmath context of the result.

        Returns
        -------
        mpmath.mpf
            ``x`` as a number of ``m``, exact up to ``m``'s precision.
        """
        return _mpfr_to_mpmath(x, m) if isinstance(x, _mpfr_type) else m.mpf(x)

    @property
    def precision_name(self) -> str:
        """The precision without the backend: 'mp64' for 64 digits (mp or gmp), 'fp'.

        Labels in outputs use it, so a result does not depend on which backend
        computed it.
        """
        return f"mp{self.dps}" if self.is_mp else "fp"

    @property
    def key(self) -> Hashable:
        """What caches of context numbers and generated code are keyed by.

        The context itself (an mpmath context's numbers and functions are its own); the
        gmp and fp contexts by name, since all instances of one precision share their
        numbers.
        """
        return self

    # ----- construction -------------------------------------------------------------
    def number(self, x: NumberLike, what: str) -> Real:
        """Convert ``x`` with :meth:`num`, any error naming the quantity ``what``.

        Parameters
        ----------
        x : int, str, Fraction, Decimal, sympy number or context number
            What to convert.
        what : str
            The quantity, for the error message (e.g. "initial momentum p0[1]").

        Returns
        -------
        number
            ``x`` as a number of this context.

        Raises
        ------
        PrecisionError
            As :meth:`num`, the message prefixed by ``what``.
        TypeError, ValueError
            As :meth:`num`, the message prefixed by ``what``.
        """
        try:
            return self.num(x)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{what}: {exc}") from None

    def vector(self, values: Iterable[NumberLike]) -> Vector:
        """Convert a sequence of numbers into a vector of this context (each by :meth:`num`).

        Parameters
        ----------
        values : iterable of numbers
            Anything :meth:`num` reads.

        Returns
        -------
        numpy.ndarray
            A 1-D array of this context's numbers (``dtype`` object, float64 for fp).
        """
        return np.array([self.num(v) for v in values], dtype=self.dtype)

    def matrix(self, rows: Iterable[Iterable[NumberLike]]) -> Matrix:
        """Convert rows of numbers into a matrix of this context (each entry by :meth:`num`).

        Parameters
        ----------
        rows : iterable of sequences of numbers
            Non-empty rows of equal length.

        Returns
        -------
        numpy.ndarray
            A 2-D array of this context's numbers.

        Raises
        ------
        ValueError
            No rows, or rows of unequal length.
        """
        rows = [list(r) for r in rows]
        if not rows or any(len(r) != len(rows[0]) for r in rows):
            raise ValueError(f"matrix rows must be non-empty and of equal length, got {rows!r}")
        return np.array([[self.num(v) for v in r] for r in rows], dtype=self.dtype)

    def zeros(self, shape: int | tuple[int, ...]) -> Array:
        """Return an array of this context's zeros.

        Parameters
        ----------
        shape : int or tuple of int
            The shape, as for :func:`numpy.empty`.

        Returns
        -------
        numpy.ndarray
            Every entry ``self.zero``.
        """
        z = np.empty(shape, dtype=self.dtype)
        z[...] = self.zero
        return z

    def eye(self, n: int) -> Matrix:
        """Return the ``n`` x ``n`` identity matrix of this context.

        Parameters
        ----------
        n : int
            The size.

        Returns
        -------
        numpy.ndarray
            ``self.one`` on the diagonal, ``self.zero`` elsewhere.
        """
        e = self.zeros((n, n))
        for i in range(n):
            e[i, i] = self.one
        return e

    def asarray(self, x: NumberLike | Iterable[Any]) -> Array:
        """Convert a (nested) sequence or array of numbers into this context's array.

        Parameters
        ----------
        x : array_like
            Numbers :meth:`num` reads, in any nesting.

        Returns
        -------
        numpy.ndarray
            An array of the same shape, every entry converted by :meth:`num`.
        """
        a = np.asarray(x, dtype=object)
        out = np.empty(a.shape, dtype=self.dtype)
        for idx in np.ndindex(a.shape):
            out[idx] = self.num(a[idx])
        return out

    # ----- norms --------------------------------------------------------------------
    def norm2(self, v: Vector) -> Real:
        """Compute the Euclidean norm of a vector (of all entries of an array).

        Parameters
        ----------
        v : array_like
            Numbers of this context.

        Returns
        -------
        number
            ``sqrt(fsum(x * x))`` over the entries.
        """
        return self.sqrt(self.fsum(x * x for x in np.ravel(v)))

    def norm_inf(self, v: Vector) -> Real:
        """Compute the max-abs norm of a vector or of all entries of a matrix.

        Parameters
        ----------
        v : array_like
            Numbers of this context.

        Returns
        -------
        number
            The largest absolute value (``zero`` for an empty array).
        """
        return max((abs(x) for x in np.ravel(v)), default=self.zero)

    def norm_fro(self, a: Matrix) -> Real:
        """Compute the Frobenius norm of a matrix (the Euclidean norm of its entries).

        Parameters
        ----------
        a : array_like
            A matrix of numbers of this context.

        Returns
        -------
        number
            The Frobenius norm.
        """
        return self.norm2(a)

    # ----- linear algebra -----------------------------------------------------------
    def solve(self, a: Matrix, b: Vector | Matrix) -> Vector | Matrix:
        """Solve ``a x = b`` (``b`` a vector or a matrix) by Gaussian elimination.

        Partial pivoting, :func:`mpvi.numbers.linalg.solve_dense` (the one dense solve of mpvi).

        Parameters
        ----------
        a : array_like
            An n x n matrix.
        b : array_like
            A vector of length n or an n x k matrix.

        Returns
        -------
        numpy.ndarray
            ``x``, of the shape of ``b``.

        Raises
        ------
        ValueError
            Shapes that do not fit.
        SingularMatrixError
            A pivot below ``n * eps * max|a|``.
        """
        a = np.asarray(a)
        b = np.asarray(b)
        n = a.shape[0] if a.ndim else 0
        if a.ndim != 2 or a.shape != (n, n) or b.ndim not in (1, 2) or b.shape[0] != n:
            raise ValueError(f"solve: shapes {a.shape} and {b.shape} do not fit")
        x = solve_dense(a.tolist(), b.tolist(), self)
        return np.array(x, dtype=self.dtype)

    def inv(self, a: Matrix) -> Matrix:
        """Invert a square matrix (:meth:`solve` against the identity).

        Parameters
        ----------
        a : array_like
            An n x n matrix.

        Returns
        -------
        numpy.ndarray
            The inverse.

        Raises
        ------
        SingularMatrixError
            A matrix singular to working precision.
        """
        return self.solve(a, self.eye(np.shape(a)[0]))

    def cholesky(self, a: Matrix, name: str = "matrix") -> Matrix:
        """Factor a symmetric positive-definite matrix as ``a = L L^T``.

        :func:`mpvi.numbers.linalg.cholesky`.

        Parameters
        ----------
        a : array_like
            A symmetric n x n matrix.
        name : str, default "matrix"
            What the matrix is, for the error message.

        Returns
        -------
        numpy.ndarray
            The lower-triangular ``L``.

        Raises
        ------
        NotPositiveDefiniteError
            A matrix that is not positive definite (naming ``name``).
        """
        return np.array(cholesky(np.asarray(a).tolist(), self, name), dtype=self.dtype)

    def check_symmetric(self, a: Matrix, name: str = "matrix") -> None:
        """Check that ``a`` is square and symmetric to ``n * eps`` relative.

        Parameters
        ----------
        a : array_like
            The matrix.
        name : str, default "matrix"
            What the matrix is, for the error message.

        Raises
        ------
        ValueError
            A matrix that is not square, or not symmetric (naming ``name`` and the
            largest asymmetry).
        """
        a = np.asarray(a)
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            raise ValueError(f"{name} must be a square matrix, got shape {a.shape}")
        tol = a.shape[0] * self.eps * max(self.norm_inf(a), self.one)
        asym = self.norm_inf(a - a.T)
        if asym > tol:
            raise ValueError(f"{name} is not symmetric: max |a_ij - a_ji| = {self.to_str(asym, 5)}")

    def eigh_generalized(self, k: Matrix, m: Matrix) -> tuple[Vector, Matrix]:
        """Solve the symmetric generalized eigenproblem ``k v = lam m v``.

        Parameters
        ----------
        k : array_like
            A symmetric n x n matrix.
        m : array_like
            A symmetric positive-definite n x n matrix.

        Returns
        -------
        lam : numpy.ndarray
            The eigenvalues, ascending.
        V : numpy.ndarray
            The eigenvectors as columns, normalized so that ``V^T m V = I``.

        Raises
        ------
        NotPositiveDefiniteError
            An ``m`` that is not positive definite.
        """
        low = self.cholesky(m, "mass matrix")
        linv = self.inv(low)
        c = linv @ k @ linv.T
        c = (c + c.T) / 2
        lam, q = self._eigh(c)
        v = linv.T @ q
        return lam, v

    def spectral_radius(self, a: Matrix) -> Real:
        """Compute the spectral radius (the largest eigenvalue modulus) of a square matrix.

        Parameters
        ----------
        a : array_like
            An n x n matrix.

        Returns
        -------
        number
            ``max |lambda|`` over the eigenvalues (``eigvals``).
        """
        return max(abs(z) for z in self.eigvals(a))

    # ----- output -------------------------------------------------------------------
    def to_float(self, x: Number | Array) -> float | NDArray[np.float64]:
        """Round a number or an array to float64 (for plotting and quick looks).

        Parameters
        ----------
        x : number or numpy.ndarray
            Numbers of this context.

        Returns
        -------
        float or numpy.ndarray
            A float, or a float64 array of the same shape.
        """
        return np.asarray(x, dtype=float) if isinstance(x, np.ndarray) else float(x)

    def dump(self, x: Number) -> str:
        """Write a number as a decimal string that :meth:`num` reads back to the same bits.

        More digits than :meth:`to_str` (``repr_digits``): for caches, checkpoints and
        :meth:`mpvi.Solution.save`.

        Parameters
        ----------
        x : number
            A number of this context.

        Returns
        -------
        str
            The lossless decimal string.
        """
        return self.to_str(x, self.repr_digits)

    # ----- checks -------------------------------------------------------------------
    def all_finite(self, values: Number | Array | Iterable[Any]) -> bool:
        """Tell whether every entry of a number or (nested) array is finite.

        Parameters
        ----------
        values : number or array_like
            Numbers of this context.

        Returns
        -------
        bool
            True if no entry is nan or infinite.
        """
        return all(self.isfinite(x) for x in np.ravel(np.asarray(values, dtype=object)))

    # ----- generated code -------------------------------------------------------------
    GENERATED_FUNCTIONS = ("sin", "cos", "tan", "exp", "log", "sqrt", "atan", "atan2", "sinh",
                           "cosh", "tanh", "asin", "acos")

    def namespace(self) -> dict[str, Any]:
        """Return the names that code generated from sympy expressions may call.

        ``sin``, ``mpf``, ``pi``, ... and the special functions of
        ``SPECIAL_FUNCTIONS_OF_CODE`` (``erf``, ``gamma``, ``besselj``, ``heaviside``,
        ...) bound to this context: evaluated at its precision, never at a global one (see
        :func:`mpvi.compiled.codegen.compile_exprs`).  sin, cos and tan return nan for arguments
        beyond 2^prec, and the functions of ``PARTIAL_FUNCTIONS`` and the special
        functions return nan outside their real domain, so that a diverging run is caught
        as a non-finite value.

        Returns
        -------
        dict
            Name to function (or constant).
        """
        lib = self._lib
        ns = {name: getattr(lib, name) for name in self.GENERATED_FUNCTIONS}
        for name in self.PARTIAL_FUNCTIONS:
            ns[name] = self._real_valued(ns[name])
        for name in ("sin", "cos", "tan"):
            if name in ns:
                ns[name] = self._periodic(ns[name])
        e = self.exp(self.one)             # sympy's E prints as ``e`` (mpmath's name)
        ns.update(mpf=self._lib_mpf, pi=self.pi, E=e, e=e, fabs=abs)
        ns.update(self._special_functions())
        ns.update(self._step_functions(ns["floor"]))
        return ns

    SPECIAL_FUNCTIONS_OF_CODE = ("erf", "erfc", "gamma", "loggamma", "zeta", "zetaderiv",
                                 "besselj", "bessely", "polygamma", "lambertw", "atanh",
                                 "asinh", "acosh", "floor", "ceil", "sign", "heaviside",
                                 "diracdelta", "diraccomb", "erfi", "ei", "expint", "li",
                                 "si", "ci", "shi", "chi", "fresnels", "fresnelc", "besseli",
                                 "besselk", "ellipk", "ellipe", "ellipf", "factorial", "beta",
                                 "airyai", "airybi")
    """The special functions :mod:`mpvi.compiled.codegen` prints (sympy's erf, erfc, gamma, loggamma,
    zeta, besselj, bessely, polygamma, LambertW, atanh, asinh, acosh, floor, ceiling, sign,
    Heaviside, DiracDelta, erfi, Ei, expint, li, Si, Ci, Shi, Chi, fresnels, fresnelc,
    besseli, besselk, elliptic_k, elliptic_e, elliptic_f, factorial, beta, airyai, airybi
    and their derivatives, the derivatives of zeta and the Dirac comb of floor's
    derivatives), real-valued in every context: nan outside the real domain, at a pole or
    for a non-finite argument of a function evaluated by mpmath, never a complex number
    nor an exception.  ``loggamma(x)`` is nan for x <= 0 (sympy's and mpmath's loggamma is
    complex there) and ``bessely(n, x)`` for x <= 0."""

    def _special_functions(self):
        raise NotImplementedError

    def _step_functions(self, floor):
        """sign, Heaviside, DiracDelta and the Dirac comb (floor's derivatives): exact off
        the points where they jump, nan at nan; DiracDelta (any order) is 0 off 0 and nan at
        0, the comb 0 off the integers and nan on them (and at an infinity)."""
        zero, one, nan, num = self.zero, self.one, self.num("nan"), self.num

        def sign(x):
            return one if x > 0 else -one if x < 0 else zero if x == 0 else nan

        def heaviside(x, h0):
            if x < 0:
                return zero
            if x > 0:
                return one
            if x == 0:                   # sympy's Heaviside(0) is its second argument (1/2)
                return num(h0) if isinstance(h0, int) else h0
            return nan

        def diracdelta(x):
            return zero if x < 0 or x > 0 else nan

        def diraccomb(x):
            return zero if x == x and floor(x) != x else nan
        return dict(sign=sign, heaviside=heaviside, diracdelta=diracdelta, diraccomb=diraccomb)

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


@context_class
class MPContext(Context):
    """Compute with mpmath at ``dps`` significant digits, in a private mpmath context.

    The reference context.  Each instance owns a private ``mpmath.MPContext``, so the
    global ``mpmath.mp`` precision is never read nor changed: two contexts at 64 and 80
    digits can be used side by side.  Vectors and matrices are numpy arrays of
    ``dtype=object`` holding this context's ``mpf`` numbers.  The special functions of
    ``SPECIAL_FUNCTIONS`` (``jtheta``, ``ellipk``, ``ellipf``, ``ellipfun``, ``quad``,
    ``diff``, ``findroot``, ``polyroots``, ``mpc``, ...) are the private context's own,
    set as attributes of the instance.  Contexts pickle by precision.

    Parameters
    ----------
    dps : int, default 64
        Significant decimal digits (the precision in bits is mpmath's for them).

    Raises
    ------
    ValueError
        A ``dps`` that is not a positive integer.

    See Also
    --------
    GMPContext : The same precision on gmpy2 (MPFR) numbers, about 8 times faster.
    FPContext : IEEE float64.
    get_context : A context by name.
    """

    is_mp = True
    dtype = object

    def __init__(self, dps: int = 64):
        dps = check_dps(dps)
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

    def _special_functions(self):
        m = self._m
        return dict(_mpmath_specials(m), erf=m.erf, erfc=m.erfc, asinh=m.asinh, floor=m.floor,
                    ceil=m.ceil)

    def _real_valued(self, f):
        m = self._m

        def real(x):
            r = f(x)
            return m.nan if isinstance(r, m.mpc) else r
        real.__name__ = f.__name__
        return real

    @property
    def repr_digits(self) -> int:
        """The number of digits :meth:`dump` writes: enough to read back the same bits."""
        return mpmath.libmp.repr_dps(self.prec)

    def is_number(self, x: object) -> bool:
        """Tell whether ``x`` is a real number of this very context.

        Parameters
        ----------
        x : object
            Anything.

        Returns
        -------
        bool
            True for an ``mpf`` of this context's private mpmath context.
        """
        return isinstance(x, self._m.mpf)

    def is_complex(self, x: object) -> bool:
        """Tell whether ``x`` is a complex number of this very context.

        Parameters
        ----------
        x : object
            Anything.

        Returns
        -------
        bool
            True for an ``mpc`` of this context's private mpmath context.
        """
        return isinstance(x, self._m.mpc)

    # precision ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The context's name, ``'mp64'`` for 64 digits."""
        return f"mp{self.dps}"

    @property
    def dps(self) -> int:
        """Significant decimal digits."""
        return self._m.dps

    @property
    def prec(self) -> int:
        """The precision in bits (216 for 64 digits)."""
        return self._m.prec

    @property
    def eps(self) -> Real:
        """The machine epsilon of this precision, ``2^(1 - prec)``."""
        return self._m.eps

    @contextlib.contextmanager
    def workdps(self, dps: int) -> Iterator[MPContext]:
        """Change this context's precision temporarily (restored on exit).

        Parameters
        ----------
        dps : int
            The working digits inside the ``with`` block.

        Yields
        ------
        MPContext
            The context itself, at ``dps`` digits.
        """
        with self._m.workdps(check_dps(dps)):
            yield self

    def with_dps(self, dps: int) -> MPContext:
        """Make a new independent context of the same kind at ``dps`` digits.

        Parameters
        ----------
        dps : int
            Significant decimal digits.

        Returns
        -------
        MPContext
            The new context.
        """
        return MPContext(dps)

    def __reduce__(self):                    # picklable: rebuilt at the same precision
        return MPContext, (self.dps,)

    # numbers -----------------------------------------------------------------------
    @property
    def pi(self) -> Real:
        """Pi at this context's precision."""
        return +self._m.pi

    def num(self, x: NumberLike) -> Real:
        """Convert ``x`` to a number of this context, exactly or correctly rounded.

        Reads ints, strings (decimal or ``'p/q'``, e.g. ``"0.1"``, ``"1/3"``),
        ``Fraction``, ``Decimal``, sympy numbers (Integer and Rational exactly, a Float of
        at least this precision, other real constants such as ``pi`` or ``sqrt(2)``
        evaluated to this precision), and numbers of mpvi contexts of at least this
        precision.  Anything that would silently cap the result at a lower precision is
        refused; :meth:`lift` takes such a number when you vouch for its bits.

        Parameters
        ----------
        x : int, str, Fraction, Decimal, sympy number or context number
            The value.

        Returns
        -------
        mpmath.mpf
            ``x`` as a number of this context (its own numbers are returned as they are).

        Raises
        ------
        PrecisionError
            A float, an mpmath number of another context (its precision cannot be told),
            or a gmpy2, mpvi or sympy number of fewer bits than this context.
        ValueError
            A string that is not a number.
        TypeError
            A bool, a non-real sympy expression, or any other type.
        """
        m = self._m
        if isinstance(x, m.mpf):
            return x
        if isinstance(x, bool):
            raise TypeError("a bool is not a number for mpvi")
        if isinstance(x, (int, np.integer)):
            return m.mpf(int(x))
        if isinstance(x, Fraction):
            return m.mpf(x.numerator) / x.denominator
        if isinstance(x, str):
            kind, value = _number_text(x)
            return m.mpf(value) if kind == "decimal" else self.num(value)
        if isinstance(x, Decimal):
            return m.mpf(str(x))
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

    def lift(self, x: NumberLike) -> Real:
        """Convert a number of any precision, keeping its bits as they are.

        A float, an mpmath number of any context or a gmpy2 number of any precision
        becomes a number of this context (rounded only if it has more bits).
        :meth:`num` refuses such numbers because they may carry fewer correct bits than
        the context; ``lift`` is for the cases where that is known and wanted: comparing
        results of different precisions, or an mpmath value whose precision you vouch
        for.  Anything else is converted by :meth:`num`.

        Parameters
        ----------
        x : float, mpmath.mpf, gmpy2.mpfr or anything :meth:`num` reads
            The value.

        Returns
        -------
        mpmath.mpf
            ``x`` as a number of this context.

        Raises
        ------
        PrecisionError, TypeError, ValueError
            As :meth:`num`, for the values it converts.
        """
        if isinstance(x, _any_mpf):
            return self._m.mpf(x._mpf_)
        if isinstance(x, _mpfr_type):
            return _mpfr_to_mpmath(x, self._m)
        if isinstance(x, (float, np.floating)):
            return self._m.mpf(float(x))
        return self.num(x)

    def fsum(self, terms: Iterable[Number]) -> Number:
        """Sum numbers of this context with a single rounding (mpmath's ``fsum``).

        Parameters
        ----------
        terms : iterable of numbers
            The terms.

        Returns
        -------
        number
            Their sum.
        """
        return self._m.fsum(terms)

    def _elementwise(self, name):
        f = getattr(self._m, name)
        if name not in self._vec:
            self._vec[name] = np.frompyfunc(f, 1, 1)
        vf = self._vec[name]

        def apply(x):
            return vf(x) if isinstance(x, np.ndarray) else f(x)
        return apply

    def sqrt(self, x: Number | Array) -> Number | Array:
        """Compute the square root of a number or, element-wise, of an array.

        Parameters
        ----------
        x : number or numpy.ndarray
            The argument.

        Returns
        -------
        number or numpy.ndarray
            ``sqrt(x)`` (for a negative number: complex in the mp context, nan in the gmp
            context).
        """
        return self._elementwise("sqrt")(x)

    def cos(self, x: Number | Array) -> Number | Array:
        """Compute the cosine of a number or, element-wise, of an array.

        Parameters
        ----------
        x : number or numpy.ndarray
            The argument.

        Returns
        -------
        number or numpy.ndarray
            ``cos(x)``.
        """
        return self._elementwise("cos")(x)

    def sin(self, x: Number | Array) -> Number | Array:
        """Compute the sine of a number or, element-wise, of an array.

        Parameters
        ----------
        x : number or numpy.ndarray
            The argument.

        Returns
        -------
        number or numpy.ndarray
            ``sin(x)``.
        """
        return self._elementwise("sin")(x)

    def exp(self, x: Number | Array) -> Number | Array:
        """Compute the exponential of a number or, element-wise, of an array.

        Parameters
        ----------
        x : number or numpy.ndarray
            The argument.

        Returns
        -------
        number or numpy.ndarray
            ``exp(x)``.
        """
        return self._elementwise("exp")(x)

    def log(self, x: Number | Array) -> Number | Array:
        """Compute the natural logarithm of a number or, element-wise, of an array.

        Parameters
        ----------
        x : number or numpy.ndarray
            The argument.

        Returns
        -------
        number or numpy.ndarray
            ``log(x)`` (for a negative number: complex in the mp context, nan in the gmp
            context).
        """
        return self._elementwise("log")(x)

    def log10(self, x: Number | Array) -> Number | Array:
        """Compute the decimal logarithm of a number or, element-wise, of an array.

        Parameters
        ----------
        x : number or numpy.ndarray
            The argument.

        Returns
        -------
        number or numpy.ndarray
            ``log10(x)``.
        """
        return self._elementwise("log10")(x)

    def atan2(self, y: Real | Array, x: Real | Array) -> Real | Array:
        """Compute the angle of the point (x, y), in (-pi, pi].

        Parameters
        ----------
        y : number
            The ordinate.
        x : number
            The abscissa.

        Returns
        -------
        number
            ``atan2(y, x)``.
        """
        return self._m.atan2(y, x)

    def csqrt(self, x: Number | Array) -> Number | Array:
        """Compute the complex square root (for eigenvalues).

        Parameters
        ----------
        x : number
            A real or complex number.

        Returns
        -------
        complex number
            The principal square root of ``x`` as a complex number of this context.
        """
        return self._m.sqrt(self._m.mpc(x))

    def to_str(self, x: Number, digits: int | None = None) -> str:
        """Write a number as a full-precision decimal string.

        Parameters
        ----------
        x : number
            A number of this context.
        digits : int, optional
            Significant digits (default: ``dps``).

        Returns
        -------
        str
            Scientific notation beyond the units, trailing zeros kept
            (``'1.50000000000000e+1'``).
        """
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

    def eigvals(self, a: Matrix) -> list[Number]:
        """Compute the eigenvalues of a square matrix.

        A 2 x 2 matrix by the closed formula, a larger one by mpmath's ``eig``.

        Parameters
        ----------
        a : array_like
            An n x n matrix.

        Returns
        -------
        list
            The n eigenvalues (complex numbers of this context where they are complex).
        """
        a = np.asarray(a)
        if a.shape == (2, 2):
            tr = a[0, 0] + a[1, 1]
            det = a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
            s = self.csqrt(tr * tr - 4 * det)
            return [(tr + s) / 2, (tr - s) / 2]
        e = self._m.eig(self._to_mpmatrix(a), left=False, right=False)
        return list(e)


def _bessel_order_first(f):
    """gmpy2's jn or yn as f(n, x): gmpy2 2.2 changed their order of arguments from (x, n)."""
    try:
        f(0, gmpy2.mpfr(1))
        return f
    except TypeError:                            # pragma: no cover - gmpy2 < 2.2
        return lambda n, x: f(x, n)


def _mpfr_to_mpmath(x, m):
    """The gmpy2 number ``x`` as an mpf of the mpmath context ``m``, exactly when finite
    (rounded only if ``x`` has more bits than ``m``)."""
    if gmpy2.is_finite(x):
        man, exp = x.as_mantissa_exp()
        return m.mpf((int(man), int(exp)))
    return m.mpf(str(x))                         # inf, -inf, nan


@context_class
class GMPContext(MPContext):
    """Compute with gmpy2 ``mpfr`` numbers (MPFR) at ``dps`` significant digits.

    The precision in bits is mpmath's for the same ``dps`` (216 bits for 64 digits), eps is
    ``2^(1 - prec)`` as in :class:`MPContext`, and every result is correctly rounded
    (MPFR), so the two contexts agree to a few units of eps per operation.

    **The precision rule.**  gmpy2 rounds every operation to the precision of the calling
    thread's gmpy2 context, not to that of its operands.  Creating a context raises the
    thread's precision to its own if it is lower: right after ``ctx = GMPContext(64)``,
    bare arithmetic such as ``ctx.num(2) * ctx.pi / 96`` or an error computed by hand from
    ``sol.q`` carries (at least) 64 digits, and a context of fewer digits created later
    does not lower it, so bare arithmetic never drops below the precision of the contexts
    made so far.  ``with ctx.active():`` runs a block at exactly one context's precision
    (lower or higher) and restores the caller's on exit.  Every other call into mpvi (any public
    function or method: :func:`mpvi.ground.precision.boundary`) computes at its own context's
    precision and leaves the caller's gmpy2 context as it found it; a context created
    inside such a call changes nothing for the caller.

    Special functions (``jtheta``, ``ellipk``, ``ellipf``, ``ellipfun``, ``quad``,
    ``diff``, ``findroot``, ``polyroots``, eigenvalues) run in a private mpmath context
    at the same precision; arguments, callbacks and results are converted exactly.
    Contexts pickle by precision (``pickle`` rebuilds ``GMPContext(dps)``), and so do
    their numbers.

    Parameters
    ----------
    dps : int, default 64
        Significant decimal digits (216 bits for 64).

    Raises
    ------
    ValueError
        A ``dps`` that is not a positive integer.
    ImportError
        Without gmpy2 (a dependency of mpvi).

    See Also
    --------
    MPContext : The mpmath reference at the same precision.
    """

    kernels = True
    compiles_kernels = True
    """Generated kernels are compiled to C against MPFR (:mod:`mpvi.compiled.cbackend`), bit-identical
    to the Python ones, when a compiler is available and ``MPVI_COMPILED`` is not ``0``."""
    PARTIAL_FUNCTIONS = ()          # MPFR returns nan outside the real domain
    _DELEGATED = ("jtheta", "ellipk", "ellipf", "ellipfun", "polyroots", "quad", "diff",
                  "nint", "findroot", "factorial", "linspace")

    def __init__(self, dps: int = 64):
        if gmpy2 is None:
            raise ImportError("the gmp context needs gmpy2, a dependency of mpvi: "
                              "pip install gmpy2 (or reinstall mpvi)")
        dps = check_dps(dps)
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
        request_handoff(self._g.copy())          # bare arithmetic at this precision (class doc)

    # precision -----------------------------------------------------------------------
    @sticky
    def activate(self) -> GMPContext:
        """Make this context's precision the calling thread's gmpy2 precision.

        Until another context, or the caller, sets it again: unlike :meth:`active`,
        nothing restores the caller's precision.

        Returns
        -------
        GMPContext
            The context itself.
        """
        if gmpy2.get_context() is not self._g:
            gmpy2.set_context(self._g)
        return self

    @contextlib.contextmanager
    def active(self) -> Iterator[GMPContext]:
        """Run bare arithmetic on gmpy2 numbers at this context's precision inside a block.

        ``with ctx.active():`` -- the caller's gmpy2 context is restored on exit.

        Yields
        ------
        GMPContext
            The context itself.
        """
        caller = gmpy2.get_context()
        self.activate()
        try:
            yield self
        finally:
            gmpy2.set_context(caller)

    @property
    def name(self) -> str:
        """The context's name, ``'gmp64'`` for 64 digits."""
        return f"gmp{self.dps}"

    @property
    def prec(self) -> int:
        """The precision in bits (216 for 64 digits)."""
        return self._g.precision

    @property
    @sticky                 # read at every Newton iteration: no entry-point wrapper
    def eps(self) -> Real:
        """The machine epsilon of this precision, ``2^(1 - prec)``."""
        prec = self._g.precision
        if self._eps[0] != prec:
            with self.active():
                self._eps = (prec, gmpy2.mul_2exp(self.one, 1 - prec))
        return self._eps[1]

    @contextlib.contextmanager
    def workdps(self, dps: int) -> Iterator[GMPContext]:
        """Change this context's precision temporarily.

        The precision and the thread's gmpy2 context are restored on exit.

        Parameters
        ----------
        dps : int
            The working digits inside the ``with`` block.

        Yields
        ------
        GMPContext
            The context itself, at ``dps`` digits.
        """
        dps = check_dps(dps)
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

    tiers = True
    """Arithmetic may be rounded to fewer bits than the context's for a block
    (:meth:`rounding_at`, :meth:`rounded`): the tiers of the adaptive Taylor steps
    (:func:`mpvi.engines.taylor.precision_schedule`), compiled bit for bit alike."""

    @contextlib.contextmanager
    def rounding_at(self, bits: int) -> Iterator[GMPContext]:
        """Round bare arithmetic on gmpy2 numbers to ``bits`` bits inside a block.

        Each operation is rounded as MPFR rounds into a variable of ``bits`` bits; the
        caller's gmpy2 context is restored on exit, and the context's own precision is
        unchanged.

        Parameters
        ----------
        bits : int
            The working precision in bits, 2 to the context's.

        Yields
        ------
        GMPContext
            The context itself.

        Raises
        ------
        ValueError
            ``bits`` outside 2 .. the context's precision.
        """
        if not 2 <= bits <= self._g.precision:
            raise ValueError(f"rounding_at: {bits} bits is not in 2 .. {self._g.precision}")
        caller = gmpy2.get_context()
        gmpy2.set_context(gmpy2.context(self._g, precision=bits))
        try:
            yield self
        finally:
            gmpy2.set_context(caller)

    def rounded(self, x: Real, bits: int) -> Real:
        """Round ``x`` to nearest (ties to even) to ``bits`` bits.

        As ``mpfr_set`` into a variable of ``bits`` bits.

        Parameters
        ----------
        x : number
            A number of this context.
        bits : int
            The precision in bits.

        Returns
        -------
        number
            ``x`` rounded, a number of ``bits`` bits.
        """
        return gmpy2.mpfr(x, bits)

    def two_power(self, e: int) -> Real:
        """Return 2^e exactly.

        Parameters
        ----------
        e : int
            The exponent.

        Returns
        -------
        number
            2^e, a number of this context.
        """
        return gmpy2.mul_2exp(self.one, e)

    def with_dps(self, dps: int) -> GMPContext:
        """Make a new independent context of the same kind at ``dps`` digits.

        Parameters
        ----------
        dps : int
            Significant decimal digits.

        Returns
        -------
        GMPContext
            The new context.
        """
        return GMPContext(dps)

    @property
    def key(self) -> str:
        """What caches are keyed by: the name (all instances of one precision share)."""
        return self.name

    def __reduce__(self):
        return GMPContext, (self.dps,)

    def is_number(self, x: object) -> bool:
        """Tell whether ``x`` is a real number of this context's kind.

        Parameters
        ----------
        x : object
            Anything.

        Returns
        -------
        bool
            True for a gmpy2 ``mpfr`` (of any precision).
        """
        return isinstance(x, _mpfr_type)

    def is_complex(self, x: object) -> bool:
        """Tell whether ``x`` is a gmpy2 complex number.

        Parameters
        ----------
        x : object
            Anything.

        Returns
        -------
        bool
            True for a gmpy2 ``mpc``.
        """
        return isinstance(x, _mpc_type)

    # numbers ---------------------------------------------------------------------------
    @property
    def pi(self) -> Real:
        """Pi at this context's precision."""
        return gmpy2.const_pi()

    def num(self, x: NumberLike) -> Real:
        """Convert ``x`` to a number of this context, exactly or correctly rounded.

        As :meth:`MPContext.num`, for gmpy2 numbers: an ``mpfr`` of this precision is
        returned as it is, one of more bits is rounded, one of fewer bits is refused --
        except one of the context's own precision while it works at a raised one
        (inside ``diff``, ``quad``, ``findroot`` or ``workdps``: a parameter captured by
        the function), which is taken exactly, as :meth:`MPContext.num` takes its own
        numbers.

        Parameters
        ----------
        x : int, str, Fraction, Decimal, sympy number or context number
            The value.

        Returns
        -------
        gmpy2.mpfr
            ``x`` as a number of this context.

        Raises
        ------
        PrecisionError
            A float, an mpmath number of another context, or a gmpy2, mpvi or sympy
            number of fewer bits than this context.
        ValueError
            A string that is not a number.
        TypeError
            A bool, a non-real sympy expression, or any other type.
        """
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
        if isinstance(x, str):
            kind, value = _number_text(x)
            return gmpy2.mpfr(value) if kind == "decimal" else self.num(value)
        if isinstance(x, Decimal):
            return gmpy2.mpfr(str(x))
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

    def lift(self, x: NumberLike) -> Real:
        """Convert a number of any precision, keeping its bits as they are.

        As :meth:`MPContext.lift`: a float, an mpmath number of any context or a gmpy2
        number of any precision, rounded only if it has more bits; anything else by
        :meth:`num`.

        Parameters
        ----------
        x : float, mpmath.mpf, gmpy2.mpfr or anything :meth:`num` reads
            The value.

        Returns
        -------
        gmpy2.mpfr
            ``x`` as a number of this context.

        Raises
        ------
        PrecisionError, TypeError, ValueError
            As :meth:`num`, for the values it converts.
        """
        if isinstance(x, _any_mpf):
            return self._mpf_tuple(x._mpf_)
        if isinstance(x, _mpfr_type):
            return gmpy2.mpfr(x)
        if isinstance(x, (float, np.floating)):
            return gmpy2.mpfr(float(x))
        return self.num(x)

    def fsum(self, terms: Iterable[Number]) -> Number:
        """Sum numbers of this context with a single rounding (gmpy2's ``fsum``).

        Parameters
        ----------
        terms : iterable of numbers
            The terms.

        Returns
        -------
        gmpy2.mpfr
            Their sum.
        """
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

    def atan2(self, y: Real | Array, x: Real | Array) -> Real | Array:
        """Compute the angle of the point (x, y), in (-pi, pi].

        Parameters
        ----------
        y : number
            The ordinate.
        x : number
            The abscissa.

        Returns
        -------
        gmpy2.mpfr
            ``atan2(y, x)``.
        """
        return gmpy2.atan2(y, x)

    @sticky                 # a predicate, at any precision: called for every number a step makes
    def isfinite(self, x: Number) -> bool:
        """Tell whether a number is finite (neither nan nor infinite).

        Parameters
        ----------
        x : number
            A gmpy2 number.

        Returns
        -------
        bool
            True if ``x`` is finite.
        """
        return gmpy2.is_finite(x)

    def mpc(self, re: NumberLike, im: NumberLike = 0) -> gmpy2.mpc:
        """Make a complex number of this context.

        Parameters
        ----------
        re : number
            The real part (anything :meth:`num` reads).
        im : number, default 0
            The imaginary part.

        Returns
        -------
        gmpy2.mpc
            ``re + i im``.
        """
        return gmpy2.mpc(self.num(re), self.num(im))

    def re(self, z: Number) -> Real:
        """Return the real part of a number.

        Parameters
        ----------
        z : number
            A complex or real number.

        Returns
        -------
        gmpy2.mpfr
            The real part (a real number converted by :meth:`num`).
        """
        return z.real if isinstance(z, _mpc_type) else self.num(z)

    def im(self, z: Number) -> Real:
        """Return the imaginary part of a number.

        Parameters
        ----------
        z : number
            A complex or real number.

        Returns
        -------
        gmpy2.mpfr
            The imaginary part (``zero`` for a real number).
        """
        return z.imag if isinstance(z, _mpc_type) else self.zero

    def csqrt(self, x: Number | Array) -> Number | Array:
        """Compute the complex square root (for eigenvalues).

        Parameters
        ----------
        x : number
            A real or complex number.

        Returns
        -------
        gmpy2.mpc
            The principal square root of ``x``.
        """
        return gmpy2.sqrt(gmpy2.mpc(x))

    def to_str(self, x: Number, digits: int | None = None) -> str:
        """Write a number as a full-precision decimal string.

        Formatted exactly as :meth:`MPContext.to_str`.

        Parameters
        ----------
        x : number
            A number of this context.
        digits : int, optional
            Significant digits (default: ``dps``).

        Returns
        -------
        str
            The decimal string.
        """
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

    def _special_functions(self):
        g, nan = gmpy2, gmpy2.mpfr("nan")
        special = {name: self._delegate(f) for name, f in _mpmath_specials(self._m).items()}
        jn, yn = _bessel_order_first(g.jn), _bessel_order_first(g.yn)
        besselj, bessely, psi, zeta, airyai = (special[k] for k in (
            "besselj", "bessely", "polygamma", "zeta", "airyai"))

        # the same MPFR functions, in the same cases, as the compiled kernels
        # (mpvi.compiled.cbackend); the other cases go through the private mpmath
        def loggamma(x):
            return g.lngamma(x) if x > 0 else nan

        def zeta_(s, *a):
            return zeta(s, *a) if a else g.zeta(s)

        def besselj_(n, x):
            return jn(n, x) if type(n) is int else besselj(n, x)

        def bessely_(n, x):
            if type(n) is not int:
                return bessely(n, x)
            return yn(n, x) if x > 0 else nan

        def polygamma(n, x):
            return g.digamma(x) if type(n) is int and n == 0 else psi(n, x)

        def airyai_(x, *k):
            return airyai(x, *k) if k else g.ai(x)
        return dict(special, erf=g.erf, erfc=g.erfc, gamma=g.gamma, loggamma=loggamma,
                    zeta=zeta_, besselj=besselj_, bessely=bessely_, polygamma=polygamma,
                    atanh=g.atanh, asinh=g.asinh, acosh=g.acosh, floor=g.rint_floor,
                    ceil=g.rint_ceil, ei=g.eint, airyai=airyai_)

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

    def eigvals(self, a: Matrix) -> list[Number]:
        """Compute the eigenvalues of a square matrix (in the private mpmath context).

        Parameters
        ----------
        a : array_like
            An n x n matrix.

        Returns
        -------
        list
            The n eigenvalues as gmpy2 numbers (``mpc`` where they are complex).
        """
        return [self._from_m(z) for z in super().eigvals(a)]


def require_context(ctx: object, what: str) -> Context:
    """``ctx`` if it is an mpvi number context, else a TypeError naming ``what``, what was
    given and how to make one (a name such as ``'gmp'`` is not a context).

    Parameters
    ----------
    ctx : object
        What was given as a context.
    what : str
        Who asks (a system's name), for the message.

    Returns
    -------
    Context
        ``ctx``.

    Raises
    ------
    TypeError
        Anything but a :class:`Context` (a str, a number, an mpmath context).
    """
    if isinstance(ctx, Context):
        return ctx
    shown = repr(ctx)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    hint = (f" (for a name, mpvi.get_context({ctx!r}, dps))" if isinstance(ctx, str) else "")
    raise TypeError(f"{what}: ctx must be an mpvi number context such as mpvi.GMPContext(64), "
                    f"mpvi.MPContext(64) or mpvi.fp, got {type(ctx).__name__} {shown}{hint}")


class FPContext(Context):
    """Compute in IEEE double precision with numpy: quick runs and cross-checks.

    The module-level instance is :data:`mpvi.fp`.  :meth:`num` reads everything the mp
    contexts read, floats included, and rounds it to float64; its elementary functions
    are numpy's (element-wise on arrays).

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
    def workdps(self, dps: int) -> Iterator[FPContext]:
        """Refuse a change of precision: float64 has 53 bits.

        Parameters
        ----------
        dps : int
            The working digits asked for.

        Yields
        ------
        FPContext
            Never: the context manager raises on entry.

        Raises
        ------
        PrecisionError
            Always (a computation that needs more digits needs an mp context).
        """
        raise PrecisionError(f"the float64 context has a fixed precision (53 bits); a "
                             f"computation asking for {dps} working digits needs an mp context")
        yield self

    def num(self, x: NumberLike) -> float:
        """Convert ``x`` to a float64, correctly rounded.

        Reads ints, floats, strings (decimal or ``'p/q'``), ``Fraction``, ``Decimal``,
        sympy numbers and the numbers of any mpvi context.

        Parameters
        ----------
        x : int, float, str, Fraction, Decimal, sympy number or context number
            The value.

        Returns
        -------
        float
            ``x`` rounded to float64.

        Raises
        ------
        ValueError
            A string that is not a number.
        TypeError
            A bool, a non-real sympy expression, or any other type.
        """
        if isinstance(x, bool):
            raise TypeError("a bool is not a number for mpvi")
        if isinstance(x, (int, float, np.integer, np.floating, Fraction, Decimal, _any_mpf)
                      + _GMP_REAL):
            return float(x)
        if isinstance(x, str):
            kind, value = _number_text(x)
            return float(value)             # a ratio as the mp context reads it (correctly rounded)
        value = _sympy_number(x, self.prec)
        if value is not None:
            return (mpmath.libmp.to_float(value, rnd=mpmath.libmp.round_nearest)
                    if isinstance(value, tuple) else float(value))
        raise TypeError(f"cannot convert {type(x).__name__} {x!r} to a number")

    def lift(self, x: NumberLike) -> float:
        """Convert a number of any precision (as :meth:`num`: every number rounds to float64).

        Parameters
        ----------
        x : number
            Anything :meth:`num` reads.

        Returns
        -------
        float
            ``x`` rounded to float64.

        Raises
        ------
        TypeError, ValueError
            As :meth:`num`.
        """
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

    def _special_functions(self):
        m = _PrivateMath()             # float64 results of mpmath at twice the digits
        m.dps = 2 * self.dps

        def rounded(f):
            def call(*args):
                return float(f(*(m.mpf(a) if isinstance(a, float) else a for a in args)))
            call.__name__ = f.__name__
            return call
        special = {name: rounded(f) for name, f in _mpmath_specials(m).items()}

        def loggamma(x):
            return math.lgamma(x) if x > 0 else math.nan

        def floor(x):
            return float(math.floor(x)) if math.isfinite(x) else x

        def ceil(x):
            return float(math.ceil(x)) if math.isfinite(x) else x
        return dict(special, erf=math.erf, erfc=math.erfc, gamma=self._real_valued(math.gamma),
                    loggamma=loggamma, atanh=self._real_valued(math.atanh), asinh=math.asinh,
                    acosh=self._real_valued(math.acosh), floor=floor, ceil=ceil)
    key = "fp"
    _lib = math

    @staticmethod
    def _lib_mpf(x: Any) -> float:
        """``mpf(...)`` of generated code as a float: an int, or the ``(sign, mantissa,
        exponent, bits)`` a sympy Float prints as (a float literal in L, M, V or F, allowed
        in float64: one rounding of its value)."""
        if isinstance(x, tuple):
            sign, mantissa, exponent = x[0], x[1], x[2]
            value = Fraction(-mantissa if sign else mantissa) * Fraction(2) ** exponent
            return float(value)                     # correctly rounded, once
        return float(x)

    def fsum(self, terms: Iterable[Number]) -> float:
        """Sum floats with a single rounding (:func:`math.fsum`).

        Parameters
        ----------
        terms : iterable of float
            The terms.

        Returns
        -------
        float
            Their correctly rounded sum.
        """
        return math.fsum(terms)

    def isfinite(self, x: Number) -> bool:
        """Tell whether a number is finite (neither nan nor infinite).

        Parameters
        ----------
        x : float
            The number.

        Returns
        -------
        bool
            True if ``x`` is finite.
        """
        return math.isfinite(x)

    def is_number(self, x: object) -> bool:
        """Tell whether ``x`` is a number of this context (a Python float).

        Parameters
        ----------
        x : object
            Anything.

        Returns
        -------
        bool
            True for a float.
        """
        return isinstance(x, float)

    def is_complex(self, x: object) -> bool:
        """Tell whether ``x`` is a Python complex number.

        Parameters
        ----------
        x : object
            Anything.

        Returns
        -------
        bool
            True for a complex.
        """
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

    def csqrt(self, x: Number) -> complex:
        """Compute the complex square root (for eigenvalues).

        Parameters
        ----------
        x : float or complex
            The argument.

        Returns
        -------
        complex
            The principal square root.
        """
        return np.sqrt(complex(x))

    def to_str(self, x: Number, digits: int | None = None) -> str:
        """Write a number in scientific notation.

        Parameters
        ----------
        x : float
            The number.
        digits : int, optional
            Significant digits (default 17, enough to read back the same float).

        Returns
        -------
        str
            E.g. ``'1.0000000000000001e-01'``.
        """
        return f"{float(x):.{(digits or 17) - 1}e}"

    def _eigh(self, c):
        return np.linalg.eigh(np.asarray(c, dtype=float))

    def eigvals(self, a: Matrix) -> list[complex]:
        """Compute the eigenvalues of a square matrix (:func:`numpy.linalg.eigvals`).

        Parameters
        ----------
        a : array_like
            An n x n matrix.

        Returns
        -------
        list
            The n eigenvalues.
        """
        return list(np.linalg.eigvals(np.asarray(a, dtype=float)))


mp = MPContext(64)
"""The reference context: 64 significant digits."""

fp = FPContext()
"""The float64 context."""


def floor(x) -> int:
    """The largest integer <= x for a number of any context (``int()`` of a gmpy2 number
    rounds to nearest, of an mpmath number truncates)."""
    k = int(x)
    while k > x:
        k -= 1
    while k + 1 <= x:
        k += 1
    return k


CONTEXTS = ("gmp", "mp", "fp")
"""The names :func:`get_context` knows: gmpy2 (fast), mpmath (the reference), float64."""


@functools.partial(boundary, handoff=True)       # a new gmp context sets the bare precision
def get_context(name: str = "mp", dps: int = 64) -> Context:
    """Make a number context by name.

    ``get_context('gmp', 64)``, ``get_context('mp', 80)`` or ``get_context('fp')``.

    Parameters
    ----------
    name : {"mp", "gmp", "fp"}, default "mp"
        gmpy2 (fast), mpmath (the reference) or float64 (:data:`CONTEXTS`).
    dps : int, default 64
        Significant digits (ignored for "fp").

    Returns
    -------
    GMPContext, MPContext or FPContext
        A new context (a new :class:`FPContext` for "fp").

    Raises
    ------
    ValueError
        Another name, or a ``dps`` that is not a positive integer.
    ImportError
        'gmp' without gmpy2.
    """
    if name == "mp":
        return MPContext(dps)
    if name == "gmp":
        return GMPContext(dps)
    if name == "fp":
        return FPContext()
    raise ValueError(f"unknown number context {name!r}: choose one of {', '.join(CONTEXTS)}")
