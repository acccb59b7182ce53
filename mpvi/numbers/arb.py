"""Ball arithmetic: the Arb context and Krawczyk's test for a step's equations.

:class:`ArbContext` is a number context whose numbers are Arb balls (python-flint's
``flint.arb``: a midpoint and a radius, every operation returning a ball that contains
the exact result for every point of its arguments' balls; Johansson 2017).  The steppers
and the generated Python kernels run on it unchanged, so a step evaluated in it encloses
the exact step of the method.  The implicit steps reach :func:`krawczyk` through
:func:`mpvi.numbers.newton.solve_info`: it proves that the step equations F(y_n, X) = 0 have one
and only one solution X in a ball, for every y_n in the ball of the previous state
(Krawczyk 1969, in the form of Rump 1983; Moore 1966 for interval arithmetic).

**Comparisons.**  ``a < b`` on balls (Arb's rule) is True only if it holds for every
pair of points of the two balls; False means "not certain", not "a >= b".  Code that
needs a decision must ask :meth:`ArbContext.less`, which raises
:class:`UndecidedComparison` when the balls overlap, instead of deciding wrongly.

**Precision.**  python-flint's precision (``flint.ctx.prec``) is one global of the
process.  Every method of the context sets it to the context's working precision and
the outermost mpvi call restores the caller's (:func:`mpvi.ground.precision.boundary`); a
lower precision never makes a ball wrong, only wider.
"""
from __future__ import annotations

import contextlib
import functools
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from itertools import repeat
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, cast

import flint
import mpmath
import numpy as np
from flint import arb, arb_mat, fmpq, fmpz
from mpmath.ctx_mp_python import _mpf as _any_mpf

from mpvi.numbers.context import (Context, PrecisionError, _bits_of_mpf, _mpfr_type, _number_text,
                      _refuse_float, _refuse_other_mpf, check_dps)
from mpvi.numbers.arbref import MAX_EXACT_EXPONENT, root_of
from mpvi.numbers.linalg import SingularMatrixError
from mpvi.ground.precision import context_class, sticky

if TYPE_CHECKING:
    from collections.abc import Hashable

    from mpvi.ground.types import Array, Matrix, Number, NumberLike, Real, Vector

GUARD_BITS = 32
"""Bits an :class:`ArbContext` works with beyond those of its ``dps`` (mpmath's 216 bits
for 64 digits): every operation widens a ball by about one unit of the working
precision, so 32 guard bits keep that round-off some 4e9 times below the last digit
asked for; the widths that matter then come from the data and from wrapping."""

KRAWCZYK_INFLATIONS = 8
"""How many times :func:`krawczyk` enlarges the candidate ball before it gives up."""

NEWTON_ITERATIONS = 60
"""The most Newton iterations on midpoints :func:`krawczyk` makes for its centre."""


class UndecidedComparison(ArithmeticError):
    """Two balls overlap: whether one is below the other cannot be decided.

    Raised by :meth:`ArbContext.less` (and by code that needs a decision on balls); an
    ``ArithmeticError``.
    """


class KrawczykError(ArithmeticError):
    """Krawczyk's test did not prove a unique solution of a step's equations.

    The message says which part failed: the midpoint Jacobian is singular (no
    preconditioner C), the Jacobian is not finite or not invertible on the ball, or the
    Krawczyk image K is not inside the candidate ball X after
    :data:`KRAWCZYK_INFLATIONS` enlargements (the ball is too wide: the state's ball or
    the step is too large for the contraction).  :func:`mpvi.certify` reports it with the
    step.  An ``ArithmeticError``.

    Parameters
    ----------
    message : str
        What failed.
    what : str, default ""
        Which equations.
    """

    def __init__(self, message: str, what: str = "") -> None:
        self.message, self.what = message, what
        super().__init__(f"Krawczyk test ({what}): {message}" if what else
                         f"Krawczyk test: {message}")


def _bits(dps: int) -> int:
    return int(mpmath.libmp.dps_to_prec(dps))


_BALL_FUNCTIONS = frozenset({"sin", "cos", "tan", "exp", "log", "atan", "asin", "acos",
                             "sinh", "cosh", "tanh"})
"""The sympy functions :meth:`ArbContext.num` encloses (each an Arb method of the same
name), applied to anything it encloses: sin(1), exp(1/3), log(2) given exactly."""


@functools.lru_cache(maxsize=1024)
def _root_of(coefficients: tuple[Any, ...], index: int, prec: int) -> arb:
    """Real root ``index`` of the polynomial (sympy's ``CRootOf`` numbering), isolated
    at ``prec`` bits (:func:`mpvi.numbers.arbref.root_of`), once per polynomial, root and
    precision (a method's quadrature nodes are enclosed again by every stepper)."""
    caller = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        return root_of(coefficients, index, "CRootOf")
    finally:
        flint.ctx.prec = caller


@context_class
class ArbContext(Context):
    """Compute with Arb balls (python-flint ``arb``) at ``dps`` digits plus guard bits.

    Every number is a ball [m +/- r]; every operation of the context, of the generated
    Python kernels and of the steppers returns a ball that contains the exact result for
    all points of its arguments (Arb: Johansson 2017; interval arithmetic: Moore 1966).
    The working precision is the bits of ``dps`` (mpmath's: 216 for 64 digits) plus
    :data:`GUARD_BITS`.  Exact input (ints, Fractions, decimal or ``p/q`` text,
    Decimals, gmpy2 and mpmath numbers of at least ``dps`` digits, sympy rationals and
    Floats) gives the tightest ball at that precision; a Python float is refused as in
    the mp contexts.  Linear algebra (:meth:`solve`, :meth:`inv`) encloses the exact
    solution for every matrix in the ball matrix, or raises
    :class:`mpvi.numbers.linalg.SingularMatrixError` when the matrix is not provably
    invertible.  The implicit steps run through :func:`krawczyk`, their residual and
    Jacobian evaluated by the generated Python kernels (:mod:`mpvi.engines.kernels`, ``kernels``
    True: the same code as the gmp context's, on balls), compiled against Arb where a
    C compiler is available (:mod:`mpvi.compiled.carb`: the same balls, bit for bit).  Comparisons: see :mod:`mpvi.numbers.arb` (``a < b`` only when certain; :meth:`less`
    decides or raises).  Contexts pickle by ``dps``.

    Parameters
    ----------
    dps : int, default 64
        Significant decimal digits asked for.

    Raises
    ------
    ValueError
        A ``dps`` that is not a positive integer.

    See Also
    --------
    GMPContext : The point arithmetic the runs use.
    certify : Enclose a run's states.
    """

    is_mp = True
    kernels = True
    compiles_kernels = False
    compiles_ball_kernels = True
    """The generated kernels run compiled against Arb when they can (:mod:`mpvi.compiled.carb`:
    the same balls)."""
    dtype = object
    verified = True
    """The implicit solves of this context are proofs (:func:`krawczyk`)."""
    PARTIAL_FUNCTIONS = ()          # Arb returns nan outside the real domain

    def __init__(self, dps: int = 64):
        self._dps = check_dps(dps)
        self._base = _bits(self._dps)
        self._prec = self._base + GUARD_BITS
        self.zero = arb(0)
        self.one = arb(1)
        self._lib: Any = _BallFunctions(self._ball)
        self._lib_mpf = self.num
        self._vec: dict[str, Any] = {}
        # while certify walks a run: a first guess for the next verified_solve (the run's
        # own solution of the step), and a list to which each appends (centre, C)
        self._start: list[Any] | None = None
        self._centres: list[Any] | None = None

    # precision -----------------------------------------------------------------------
    @sticky
    def activate(self) -> ArbContext:
        """Make this context's working precision python-flint's (``flint.ctx.prec``).

        Until the outermost mpvi call returns (it restores the caller's) or another
        context sets it.

        Returns
        -------
        ArbContext
            The context itself.
        """
        if flint.ctx.prec != self._prec:
            flint.ctx.prec = self._prec
        return self

    @contextlib.contextmanager
    def active(self) -> Iterator[ArbContext]:
        """Run bare ball arithmetic at this context's precision inside a block.

        The caller's ``flint.ctx.prec`` is restored on exit.

        Yields
        ------
        ArbContext
            The context itself.
        """
        caller = flint.ctx.prec
        self.activate()
        try:
            yield self
        finally:
            flint.ctx.prec = caller

    @property
    def name(self) -> str:
        """The context's name, ``'arb64'`` for 64 digits."""
        return f"arb{self._dps}"

    @property
    def dps(self) -> int:
        """The significant decimal digits asked for (without the guard bits)."""
        return self._dps

    @property
    def prec(self) -> int:
        """The working precision in bits: those of ``dps`` plus :data:`GUARD_BITS`."""
        return self._prec

    @property
    def repr_digits(self) -> int:
        """The digits :meth:`to_str` shows of a ball's midpoint by default."""
        return int(mpmath.libmp.repr_dps(self._prec))

    @property
    def eps(self) -> Real:
        """``2^(1 - prec)`` of the working precision, an exact ball."""
        return arb((fmpz(1), 1 - self._prec))

    @property
    def pi(self) -> Real:
        """A ball containing pi."""
        return arb.pi()

    @property
    def key(self) -> Hashable:
        """What caches are keyed by: the name (all instances of one ``dps`` share)."""
        return self.name

    @contextlib.contextmanager
    def workdps(self, dps: int) -> Iterator[ArbContext]:
        """Change this context's precision temporarily (restored on exit).

        Parameters
        ----------
        dps : int
            The digits inside the ``with`` block (plus the guard bits).

        Yields
        ------
        ArbContext
            The context itself.
        """
        old = (self._dps, self._base, self._prec)
        caller = flint.ctx.prec
        self._dps = check_dps(dps)
        self._base = _bits(self._dps)
        self._prec = self._base + GUARD_BITS
        try:
            self.activate()
            yield self
        finally:
            self._dps, self._base, self._prec = old
            flint.ctx.prec = caller

    def with_dps(self, dps: int) -> ArbContext:
        """Make a new independent Arb context at ``dps`` digits.

        Parameters
        ----------
        dps : int
            Significant decimal digits.

        Returns
        -------
        ArbContext
            The new context.
        """
        return ArbContext(dps)

    def __reduce__(self):
        return ArbContext, (self._dps,)

    # numbers -------------------------------------------------------------------------
    def is_number(self, x: object) -> bool:
        """Tell whether ``x`` is a ball (``flint.arb``).

        Parameters
        ----------
        x : object
            Anything.

        Returns
        -------
        bool
            True for a ``flint.arb``.
        """
        return isinstance(x, arb)

    def is_complex(self, x: object) -> bool:
        """Tell whether ``x`` is a complex ball (``flint.acb``).

        Parameters
        ----------
        x : object
            Anything.

        Returns
        -------
        bool
            True for a ``flint.acb``.
        """
        return isinstance(x, flint.acb)

    def num(self, x: NumberLike) -> Real:
        """Convert ``x`` to the tightest ball containing it at the working precision.

        Parameters
        ----------
        x : int, str, Fraction, Decimal, sympy number, gmpy2/mpmath number or ball
            The value: ``'0.1'`` and ``'1/3'`` are read exactly and enclosed; a ball is
            returned as it is.

        Returns
        -------
        flint.arb
            A ball containing ``x``.

        Raises
        ------
        PrecisionError
            A float, an mpmath number of another context, or a gmpy2, mpmath or sympy
            number of fewer bits than ``dps`` asks for.
        ValueError
            A string that is not a number, or whose decimal exponent is out of range
            (more than 18 digits).
        TypeError
            A bool, a sympy expression other than rationals, Floats, pi, E, their sums,
            products and rational powers and the elementary functions of
            :data:`_BALL_FUNCTIONS` of them (an algebraic number given as a polynomial's
            root), or any other type.
        """
        if isinstance(x, arb):
            return x
        self.activate()
        if isinstance(x, bool):
            raise TypeError("a bool is not a number for mpvi")
        if isinstance(x, (int, np.integer)):
            return arb(fmpz(int(x)))
        if isinstance(x, Fraction):
            return arb(fmpq(x.numerator, x.denominator))
        if isinstance(x, str):
            kind, value = _number_text(x)
            return self._decimal(value) if kind == "decimal" else self.num(value)
        if isinstance(x, Decimal):
            return self._decimal(str(x))
        if isinstance(x, _mpfr_type):
            if x.precision < self._base:
                _refuse_other_mpf(x, self._dps, x.precision)
            return self._dyadic(x)
        if isinstance(x, _any_mpf):
            bits = _bits_of_mpf(x)
            if bits is None or bits < self._base:
                _refuse_other_mpf(x, self._dps, bits)
            return self._mpf_tuple(x._mpf_)
        if isinstance(x, (float, np.floating)):
            _refuse_float(x, self._dps)
        return self._sympy(x)

    def _ball(self, x: object) -> arb:
        """``x`` as a ball: a ball as it is, anything else by :meth:`num`."""
        return x if isinstance(x, arb) else cast(arb, self.num(cast("NumberLike", x)))

    def _decimal(self, text):
        low = text.lower().lstrip("+")
        if low in ("inf", "infinity"):
            return arb.pos_inf()
        if low in ("-inf", "-infinity"):
            return arb.neg_inf()
        if low.lstrip("-") == "nan":
            return arb.nan()
        try:
            sign, digits, exponent = Decimal(text).as_tuple()
        except InvalidOperation:            # an exponent beyond decimal's (about 10^18)
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise ValueError(f"cannot read a number from {shown!r}: its exponent is out of "
                             f"range (a decimal exponent of at most 18 digits); write the "
                             f"value within that range") from None
        mantissa = int("".join(map(str, digits))) * (-1 if sign else 1)
        if abs(int(exponent)) <= MAX_EXACT_EXPONENT:
            f = Fraction(mantissa) * Fraction(10) ** int(exponent)
            return arb(fmpq(f.numerator, f.denominator))
        # an exact rational would hold 10^|exponent| digits: the mantissa times a ball of
        # the power of ten encloses the value as well (Arb's power is not exact there)
        return arb(fmpz(mantissa)) * arb(10) ** int(exponent)

    def _dyadic(self, x):
        """A gmpy2 mpfr, exactly (rounded into a ball only beyond the working precision)."""
        if not x.is_finite():
            return self._decimal(str(x))
        n, d = x.as_integer_ratio()
        return arb(fmpq(int(n), int(d)))

    def _mpf_tuple(self, t):
        sign, man, exp, _ = t
        if man or not exp:
            # exactly (mpmath's mantissa may be a gmpy2 mpz, which flint does not read)
            return arb((fmpz(-int(man) if sign else int(man)), int(exp)))
        return self._decimal(mpmath.libmp.to_str(t, 5))

    def _sympy(self, x):
        import sympy
        if not isinstance(x, sympy.Basic):
            raise TypeError(f"cannot convert {type(x).__name__} {x!r} to a ball")
        if x.is_Rational:
            return arb(fmpq(int(x.p), int(x.q)))
        if x.is_Float:
            if x._prec < self._base:
                raise PrecisionError(f"sympy Float {x} carries {x._prec} bits, fewer than the "
                                     f"context's {self._base}: write it as sympy.Rational or a "
                                     "string")
            return self._mpf_tuple(x._mpf_)
        if x is sympy.pi:
            return arb.pi()
        if x is sympy.E:
            return arb(1).exp()
        name = type(x).__name__
        if isinstance(x, sympy.Function) and name in _BALL_FUNCTIONS and len(x.args) == 1:
            value = getattr(self._sympy(x.args[0]), name)()
            if not value.is_finite():
                raise TypeError(f"cannot enclose the sympy expression {x}: not a finite real")
            return value
        if x.is_Add or x.is_Mul:
            parts = [self._sympy(a) for a in x.args]
            out = parts[0]
            for v in parts[1:]:
                out = out + v if x.is_Add else out * v
            return out
        if x.is_Pow and x.exp.is_Rational:
            base, p, q = self._sympy(x.base), int(x.exp.p), int(x.exp.q)
            root = base if q == 1 else base.root(q)
            return root ** p if p >= 0 else 1 / root ** (-p)
        if isinstance(x, sympy.CRootOf):
            # an algebraic number (a quadrature node, a weight's polynomial in it): isolated
            # from its polynomial by Arb's root isolation, the root of sympy's index
            try:
                return _root_of(tuple(x.poly.all_coeffs()), int(x.index), int(self.prec))
            except ValueError as exc:
                raise TypeError(f"cannot enclose the sympy expression {x}: {exc}") from None
        raise TypeError(f"cannot enclose the sympy expression {x}: rationals, Floats, pi, E, "
                        "real roots of rational polynomials (CRootOf), their sums, products and "
                        "rational powers and the elementary functions "
                        f"{', '.join(sorted(_BALL_FUNCTIONS))} of them are converted to balls")

    def lift(self, x: NumberLike) -> Real:
        """Convert a number of any precision exactly, keeping its bits.

        A float, an mpmath number or a gmpy2 number of any precision is its exact dyadic
        value (in a ball of the working precision); anything else by :meth:`num`.

        Parameters
        ----------
        x : float, mpmath.mpf, gmpy2.mpfr or anything :meth:`num` reads
            The value.

        Returns
        -------
        flint.arb
            A ball containing ``x``.

        Raises
        ------
        PrecisionError, TypeError, ValueError
            As :meth:`num`, for the values it converts.
        """
        self.activate()
        if isinstance(x, (float, np.floating)):
            f = float(x)
            return arb(fmpq(*f.as_integer_ratio())) if np.isfinite(f) else self._decimal(str(f))
        if isinstance(x, _mpfr_type):
            return self._dyadic(x)
        if isinstance(x, _any_mpf):
            return self._mpf_tuple(x._mpf_)
        return self.num(x)

    def fsum(self, terms: Iterable[Number]) -> Number:
        """Sum balls (every partial sum a ball containing the exact one).

        Parameters
        ----------
        terms : iterable of balls
            The terms.

        Returns
        -------
        flint.arb
            A ball containing the sum.
        """
        total = arb(0)
        for t in terms:
            total = total + self._ball(t)
        return total

    @sticky
    def isfinite(self, x: Number) -> bool:
        """Tell whether a ball is finite (finite midpoint and radius, not nan).

        Parameters
        ----------
        x : flint.arb
            A ball.

        Returns
        -------
        bool
            True if ``x`` is a finite ball.
        """
        return bool(self._ball(x).is_finite())

    def _periodic(self, f):
        """:meth:`mpvi.numbers.context.Context._periodic` (nan for |x| >= 2^prec) deciding on the
        value's ball in one comparison: no derivative is compared (a dual's value is)."""
        limit = arb(2) ** self.prec
        nan = self.num("nan")

        def periodic(x):
            return f(x) if abs(x.v if type(x) is _Dual else x) < limit else nan
        periodic.__name__ = f.__name__
        return periodic

    def less(self, a: Real, b: Real) -> bool:
        """Decide ``a < b`` for balls, or refuse.

        Parameters
        ----------
        a, b : flint.arb
            The balls.

        Returns
        -------
        bool
            True if every point of ``a`` is below every point of ``b``; False if every
            point of ``a`` is at or above every point of ``b``.

        Raises
        ------
        UndecidedComparison
            The balls overlap (or one is nan): neither answer is certain.
        """
        a, b = self.num(a), self.num(b)
        if a < b:
            return True
        if a >= b:
            return False
        raise UndecidedComparison(f"cannot decide {self.to_str(a, 10)} < {self.to_str(b, 10)}: "
                                  "the balls overlap")

    # elementary functions ------------------------------------------------------------
    def _elementwise(self, name):
        if name not in self._vec:
            f = getattr(self._lib, name)
            vf = np.frompyfunc(f, 1, 1)

            def apply(x):
                self.activate()
                return vf(x) if isinstance(x, np.ndarray) else f(x)
            apply.__name__ = name
            self._vec[name] = apply
        return self._vec[name]

    def sqrt(self, x: Number | Array) -> Number | Array:
        """Enclose the square root (nan for a ball reaching below 0).

        Parameters
        ----------
        x : ball or array of balls
            The argument.

        Returns
        -------
        flint.arb or numpy.ndarray
            The enclosure, element-wise.
        """
        return self._elementwise("sqrt")(x)

    def cos(self, x: Number | Array) -> Number | Array:
        """Enclose the cosine.

        Parameters
        ----------
        x : ball or array of balls
            The argument.

        Returns
        -------
        flint.arb or numpy.ndarray
            The enclosure, element-wise.
        """
        return self._elementwise("cos")(x)

    def sin(self, x: Number | Array) -> Number | Array:
        """Enclose the sine.

        Parameters
        ----------
        x : ball or array of balls
            The argument.

        Returns
        -------
        flint.arb or numpy.ndarray
            The enclosure, element-wise.
        """
        return self._elementwise("sin")(x)

    def exp(self, x: Number | Array) -> Number | Array:
        """Enclose the exponential.

        Parameters
        ----------
        x : ball or array of balls
            The argument.

        Returns
        -------
        flint.arb or numpy.ndarray
            The enclosure, element-wise.
        """
        return self._elementwise("exp")(x)

    def log(self, x: Number | Array) -> Number | Array:
        """Enclose the natural logarithm (nan for a ball reaching 0 or below).

        Parameters
        ----------
        x : ball or array of balls
            The argument.

        Returns
        -------
        flint.arb or numpy.ndarray
            The enclosure, element-wise.
        """
        return self._elementwise("log")(x)

    def atan2(self, y: Real | Array, x: Real | Array) -> Real | Array:
        """Enclose the angle of the point (x, y), in (-pi, pi].

        Parameters
        ----------
        y : ball
            The ordinate.
        x : ball
            The abscissa.

        Returns
        -------
        flint.arb
            The enclosure (nan where the ball of (x, y) meets the branch cut x <= 0,
            y = 0).
        """
        return self._lib.atan2(y, x)

    # linear algebra ------------------------------------------------------------------
    def _mat(self, a):
        rows = np.asarray(a, dtype=object)
        if rows.ndim == 1:
            rows = rows.reshape(-1, 1)
        return arb_mat([[self.num(v) for v in row] for row in rows.tolist()])

    def solve(self, a: Matrix, b: Vector | Matrix) -> Vector | Matrix:
        """Enclose the solution of ``a x = b`` for every matrix and right side in the balls.

        Arb's verified solve (``arb_mat_solve``: Gaussian elimination in ball arithmetic,
        or a preconditioned one; Rump's approach).

        Parameters
        ----------
        a : array_like
            An n x n matrix of balls.
        b : array_like
            A vector of length n or an n x k matrix.

        Returns
        -------
        numpy.ndarray
            The enclosure, of the shape of ``b``.

        Raises
        ------
        ValueError
            Shapes that do not fit.
        SingularMatrixError
            A matrix that is not provably invertible (singular, or too wide a ball).
        """
        a_, b_ = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
        n = a_.shape[0] if a_.ndim else 0
        if a_.ndim != 2 or a_.shape != (n, n) or b_.ndim not in (1, 2) or b_.shape[0] != n:
            raise ValueError(f"solve: shapes {a_.shape} and {b_.shape} do not fit")
        self.activate()
        try:
            x = self._mat(a_).solve(self._mat(b_))
        except ZeroDivisionError:
            raise SingularMatrixError(f"the {n} x {n} ball matrix is not provably invertible "
                                      "(singular, or its balls too wide)") from None
        out = np.array(x.tolist(), dtype=object)
        return out[:, 0].copy() if b_.ndim == 1 else out

    def inv(self, a: Matrix) -> Matrix:
        """Enclose the inverse of every matrix in a ball matrix.

        Parameters
        ----------
        a : array_like
            An n x n matrix of balls.

        Returns
        -------
        numpy.ndarray
            The enclosure of the inverse.

        Raises
        ------
        SingularMatrixError
            A matrix that is not provably invertible.
        """
        return self.solve(a, self.eye(np.shape(a)[0]))

    def norm_inf(self, v: Vector) -> Real:
        """Enclose the max-abs norm of a vector or of all entries of a matrix.

        Parameters
        ----------
        v : array_like
            Balls.

        Returns
        -------
        flint.arb
            A ball containing ``max |x|`` over every choice of points in the balls.
        """
        out = arb(0)
        for x in np.ravel(v).tolist():
            out = out.max(abs(self._ball(x)))
        return out

    def eigvals(self, a: Matrix) -> list[Number]:
        """Enclose the eigenvalues of a square matrix (Arb's ``acb_mat_eig_simple``).

        Parameters
        ----------
        a : array_like
            An n x n matrix of balls.

        Returns
        -------
        list of flint.acb
            Disjoint complex balls, one per eigenvalue.

        Raises
        ------
        ValueError
            The eigenvalues could not be isolated (a multiple eigenvalue, or too wide a
            ball).
        """
        self.activate()
        m = flint.acb_mat(self._mat(a))
        try:
            return list(m.eig(algorithm="rump"))
        except (ValueError, ZeroDivisionError) as exc:
            raise ValueError(f"eigenvalues not isolated: {exc}") from None

    def _eigh(self, c):
        """Enclose the eigen-decomposition ``c = Q diag(lam) Q^T`` of a symmetric ball
        matrix with simple eigenvalues (what :meth:`eigh_generalized` needs): Rump's
        verified eigenpairs (:func:`mpvi.numbers.arbref.eig_simple_real`), eigenvalues ascending;
        each eigenvector scaled by its largest entry (then real: its imaginary parts must
        hold 0) and normalized to unit 2-norm, that entry positive.  ArithmeticError where
        the eigenvalues cannot be isolated (a multiple one: its eigenvectors are not
        determined) or an eigenvector is not real."""
        from mpvi.numbers.arbref import eig_simple_real, real_part
        self.activate()
        n = np.shape(c)[0]
        lam, _, right = eig_simple_real(flint.acb_mat(self._mat(c)), "symmetric eigenproblem")
        Q = np.empty((n, n), dtype=object)
        for k in range(n):
            column = [right[i, k] for i in range(n)]
            top = max(range(n), key=lambda i: abs(complex(column[i].mid())))
            v = [real_part(z / column[top], f"eigenvector {k}") for z in column]
            norm = sum((x * x for x in v), arb(0)).sqrt()
            for i in range(n):
                Q[i, k] = v[i] / norm
        return np.array(lam, dtype=object), Q

    def verified_solve(self, fun: Callable[..., Any], x0: Vector | list[Real], what: str = ""
                       ) -> tuple[Any, int, Any]:
        """Solve F(x) = 0 with a proof: :func:`krawczyk`.

        What :func:`mpvi.numbers.newton.solve_info` calls in this context.

        Parameters
        ----------
        fun : callable
            ``fun(x, True)`` -> (F(x), dF/dx), ``fun(x, False)`` -> F(x), on balls.
        x0 : sequence of balls
            The first guess.
        what : str, default ""
            Names the equations in errors.

        Returns
        -------
        tuple
            As :func:`krawczyk`.

        Raises
        ------
        KrawczykError
            As :func:`krawczyk`.
        """
        start, self._start = self._start, None
        if start is not None and len(start) == len(x0):
            x0 = np.array(start, dtype=object) if isinstance(x0, np.ndarray) else start
        # a kernel's equations (mpvi.engines.kernels.Equations) keep nothing of their last
        # evaluation: no last call on K for a stepper's closure to read
        K, it, res, centre, C, _ = _krawczyk(fun, x0, self, what,
                                             finish=getattr(fun, "rebound", None) is None)
        if self._centres is not None:
            self._centres.append((centre, C, list(K)))
        return K, it, res

    # output --------------------------------------------------------------------------
    def to_str(self, x: Number, digits: int | None = None) -> str:
        """Write a ball as ``[midpoint +/- radius]`` (an exact ball as its value).

        Parameters
        ----------
        x : flint.arb
            A ball.
        digits : int, optional
            Significant digits of the midpoint (default: ``dps``).

        Returns
        -------
        str
            Arb's decimal form of the ball, whose interval contains ``x``'s.
        """
        return str(self._ball(x).str(digits or self._dps, radius=True))

    def decimal(self, x: Number, digits: int | None = None) -> str:
        """Write a ball's midpoint as plain decimal text (no radius).

        For code that reads decimals (mpmath's intervals), never for a proven value.

        Parameters
        ----------
        x : flint.arb
            A ball.
        digits : int, optional
            Significant digits (default: ``dps``).

        Returns
        -------
        str
            The midpoint, rounded to ``digits``.
        """
        return str(self._ball(x).mid().str(digits or self._dps, radius=False))

    def to_float(self, x: Number | Array) -> float | Any:
        """Round a ball's midpoint (or an array's) to float64, for plotting only.

        Parameters
        ----------
        x : ball or numpy.ndarray
            Balls.

        Returns
        -------
        float or numpy.ndarray
            The midpoints as floats.
        """
        if isinstance(x, np.ndarray):
            return np.array([float(self._ball(v).mid()) for v in x.ravel().tolist()],
                            dtype=float).reshape(x.shape)
        return float(self._ball(x).mid())

    # generated code ------------------------------------------------------------------
    def _special_functions(self):
        def one(name):
            def f(x):
                return getattr(self.num(x), name)()
            f.__name__ = name
            return f
        return dict(erf=one("erf"), erfc=one("erfc"), gamma=one("gamma"),
                    loggamma=one("lgamma"), atanh=one("atanh"), asinh=one("asinh"),
                    acosh=one("acosh"), floor=one("floor"), ceil=one("ceil"), ei=one("ei"))


class _BallFunctions:
    """The elementary functions of generated code on balls (any number is read by the
    context's ``num`` first)."""

    def __init__(self, num: Callable[[Any], arb]) -> None:
        for name in Context.GENERATED_FUNCTIONS:
            if name != "atan2":
                setattr(self, name, self._method(name, num))
        self.atan2 = lambda y, x: arb.atan2(num(y), num(x))

    @staticmethod
    def _method(name: str, num: Callable[[Any], arb]) -> Callable[[Any], arb]:
        def f(x):
            return getattr(x if type(x) is arb else num(x), name)()
        f.__name__ = name
        return f


# ----- Krawczyk's test -------------------------------------------------------------------------

def _vec(values):
    return arb_mat([[v] for v in values])


def _entries(m):
    return [row[0] for row in m.tolist()]


def _point(x):
    """The midpoint of a ball as an exact ball; an int (a constant entry of a generated
    kernel's Jacobian, such as a 0 of its sparsity) as itself."""
    if isinstance(x, arb):
        return arb(x.mid())
    if isinstance(x, int) and not isinstance(x, bool):
        return arb(x)
    raise TypeError(f"expected a ball (flint.arb) or an int, got {type(x).__name__}")


def _upper(x):
    """An upper bound of |x| as an exact ball."""
    return arb(abs(x).upper())


def krawczyk(fun: Callable[..., Any], x0: Any, ctx: ArbContext, *, what: str = "",
             **ignored: object) -> tuple[Any, int, Any]:
    """Prove that F(X) = 0 has exactly one solution in a ball, and enclose it.

    The parametric Krawczyk test (Krawczyk 1969; Rump 1983; Moore 1966): ``fun`` closes
    over the known state y_n as balls, so F and its Jacobian are evaluated for every y_n
    in its ball.  A centre x~ by Newton on midpoints from ``x0``; a point preconditioner
    C ~ mid(J(x~))^-1; the candidate X = x~ + [-r, r] with r twice ``|C F(x~)|`` (enlarged by
    the image's distance to x~ at each retry); the Krawczyk image

        K = x~ - C F(x~) + (I - C J(X)) (X - x~).

    K inside the interior of X proves, for every y_n in its ball, a unique solution in X,
    and that it lies in K (Krawczyk's theorem).

    Parameters
    ----------
    fun : callable
        ``fun(x, True)`` -> (F(x), dF/dx), ``fun(x, False)`` -> F(x), on balls (the
        interface of :func:`mpvi.numbers.newton.solve_info`).
    x0 : sequence of balls
        The first guess of the centre.
    ctx : ArbContext
        The context.
    what : str, default ""
        Names the equations in errors.
    **ignored
        Newton's options of the point contexts (tolerances, ``diagnose``), not used: the
        test decides.

    Returns
    -------
    tuple
        (K as the type of ``x0``, Newton iterations, an upper bound of ||F(x~)||_inf).
        ``fun`` was called last on K (a stepper's closure reads its last evaluation).

    Raises
    ------
    KrawczykError
        The midpoint Jacobian is singular, the Jacobian is not finite on X, or K is not
        inside X after :data:`KRAWCZYK_INFLATIONS` enlargements.
    """
    K, iterations, residual, _, _, _ = _krawczyk(fun, x0, ctx, what)
    return K, iterations, residual


def _krawczyk(fun, x0, ctx, what, *, centred=False, C=None, finish=True):
    """:func:`krawczyk`, returning also the centre x~, the preconditioner C and the ball
    X of the accepted test (the solution is unique in it).  A caller
    that solved the same equations nearby (certify's Jacobian walk: the point step at the
    box's midpoint) hands over its centre (``centred``: no Newton iteration, it = 0) and
    its C (F alone is then evaluated at the centre, as after a Newton iteration, whose C
    is kept): any centre and any point C are valid,
    K inside the interior of X still decides (and proves C and every J in J(X)
    non-singular: Rump 1983).  ``finish`` False skips the last call ``fun(K, False)``."""
    as_array = isinstance(x0, np.ndarray)

    def call(x, jacobian):
        return fun(np.array(x, dtype=object) if as_array else list(x), jacobian)
    ctx.activate()
    x = [_point(ctx.num(v)) for v in x0]
    n = len(x)
    eye = arb_mat(n, n, [1 if i == j else 0 for i in range(n) for j in range(n)])
    tol = ctx.eps * 16
    previous, it = None, 0
    for it in range(1, 0 if centred else NEWTON_ITERATIONS + 1):
        F, J = call(x, True)
        C = _preconditioner(J, n, what)
        d = _entries(C * _vec([_point(v) for v in F]))
        x = [_point(a - b) for a, b in zip(x, d)]
        size = max((abs(v.mid()) for v in d), default=arb(0))
        scale = max((abs(v.mid()) for v in x), default=arb(0)).max(ctx.one)
        if size <= tol * scale or (previous is not None and not size < previous / 2):
            break
        previous = size
    # C: the caller's, else the last Newton iteration's (mid J at the iterate before x~,
    # as good a preconditioner once Newton has converged); mid J(x~)^-1 only without either
    if C is None:
        F, J = call(x, True)
        C = _preconditioner(J, n, what)
    else:
        F = call(x, False)
    if not all(ctx.isfinite(v) for v in F):
        raise KrawczykError("the residual is not finite at the centre", what)
    xc = _vec(x)
    z = C * _vec(F)                                   # C F(x~), a ball vector
    # twice |C F(x~)|, and never below tol max(|x~|, 1): an exact root (F(x~) = 0 exactly)
    # still needs a ball with an interior
    r = [2 * _upper(v) + tol * _upper(c).max(ctx.one) for v, c in zip(_entries(z), x)]
    for attempt in range(KRAWCZYK_INFLATIONS + 1):
        X = [c + arb(0, ri.upper()) for c, ri in zip(x, r)]
        _, JX = call(X, True)
        JX = arb_mat([[ctx.num(v) for v in row] for row in np.asarray(JX, dtype=object).tolist()])
        if not all(v.is_finite() for row in JX.tolist() for v in row):
            raise KrawczykError(f"the Jacobian is not finite on the ball X (radius up to "
                                f"{_short(max(r, key=_float_mid))})", what)
        K = _entries(xc - z + (eye - C * JX) * (_vec(X) - xc))
        if all(Xi.contains_interior(Ki) for Xi, Ki in zip(X, K)):
            if finish:
                call(K, False)
            out = np.array(K, dtype=object) if as_array else K
            return out, it, max((_upper(v) for v in F), default=arb(0)), x, C, X
        r = [2 * ri.max(_upper(Ki - c)) for ri, Ki, c in zip(r, K, x)]
    widest = max(range(n), key=lambda i: _float_mid(r[i]))
    raise KrawczykError(f"K is not inside X after {KRAWCZYK_INFLATIONS} enlargements (the ball "
                        f"is too wide to contract: radius of component {widest} "
                        f"{_short(r[widest])})", what)


def _watch(balls, start):
    """Before certify's point step: ``start`` (or None) the first guess of its next
    verified_solve, and record (centre, C) of each (:meth:`ArbContext.verified_solve`)."""
    balls._start, balls._centres = start, []


def _hand_over(balls, duals):
    """After the point step: its recorded (centre, C, K) become the starts of the Jacobian
    walk's verified_solves in ``duals`` (None: a failed step, dropped), each of which must
    hold its K in its Krawczyk ball; stop recording."""
    if duals is not None:
        duals._starts = balls._centres or []
    balls._start, balls._centres = None, None


def _preconditioner(J, n, what):
    """C ~ mid(J)^-1 as a point matrix (exact entries)."""
    rows = np.asarray(J, dtype=object).tolist()
    mid = arb_mat([[_point(v) for v in row] for row in rows])
    try:
        inv = mid.inv()
    except ZeroDivisionError:
        raise KrawczykError("the midpoint Jacobian is singular: no preconditioner C = "
                            "mid(J)^-1", what) from None
    return arb_mat([[_point(v) for v in row] for row in inv.tolist()])


def _float_mid(x):
    return float(abs(x.mid()))


def _short(x):
    return x.str(3, radius=False) if isinstance(x, arb) else str(x)


# ----- first derivatives on balls: the mean-value form of certify -------------------------------

SHARE = "share"
"""In :data:`DUAL_ARITHMETIC`: the result's derivatives are the operand's own tuple (the
tuple shared, in C the operand's pointer: no ball computed)."""

DUAL_ARITHMETIC = {
    "add": (lambda u, w: u + w, None, None, lambda x, y: x + y, SHARE, SHARE),
    "sub": (lambda u, w: u - w, None, None, lambda x, y: x - y, SHARE, lambda y: -y),
    "rsub": (lambda u, w: u + -w, None, None, lambda x, y: x + -y, SHARE, lambda y: -y),
    "mul": (lambda u, w: u * w, lambda u, w, v: w, lambda u, w, v: u,
            lambda fa, fb, x, y: fa * x + fb * y, lambda fa, x: fa * x, lambda fb, y: fb * y),
    "div": (lambda u, w: u / w, lambda u, w, v: 1 / w, lambda u, w, v: -v / w,
            lambda fa, fb, x, y: fa * x + fb * y, lambda fa, x: fa * x, lambda fb, y: fb * y),
}
"""The arithmetic of duals, written once: per operation ``a op b`` (``rsub`` is ``n - a``
as Python's ``__rsub__`` does it, ``n + (-a)``) its value from the value balls ``u = a.v``,
``w = b.v``; the factors ``fa``, ``fb`` computed once per operation from ``u, w`` and the
value ``v`` (None: the derivatives need none); the derivative ball of each seed when both
operands carry derivatives (``x`` of a, ``y`` of b, after the factors if there are any),
when only a does, when only b does (:data:`SHARE`: that operand's tuple itself).  The
product rule d(uw) = w du + u dw, the quotient rule d(u/w) = du / w - (u/w) dw / w.  The
``_Dual`` methods are made from these lambdas (:func:`_arithmetic`), and
:mod:`mpvi.compiled.carb` translates the same lambdas' source into the C ``da_<name>`` of a
compiled dual kernel (the grammar of :data:`DUAL_RULES`): the same Arb calls, the same
balls."""

DUAL_NEGATION = (lambda u: -u, lambda x: -x)
"""``-a``: its value and each derivative ball (``__neg__``; C ``da_neg``, translated)."""


def _arithmetic(name, swap=False):
    """The ``_Dual`` method of :data:`DUAL_ARITHMETIC`'s ``name`` (``swap``: the reflected
    method, ``other op self``); an int or ``flint.arb`` operand a constant (exact)."""
    value, fa_of, fb_of, both, left, right = cast(Any, DUAL_ARITHMETIC[name])  # lambdas

    def method(self, other):
        t = type(other)
        if t is _Dual:
            o, od = other.v, other.d
        elif t is arb or t is int:      # a constant: an int is exact in every Arb call
            o, od = other, ()
        else:
            other = self._lift(other)
            if other is NotImplemented:
                return other
            o, od = other.v, other.d
        u, w, x, y = (o, self.v, od, self.d) if swap else (self.v, o, self.d, od)
        v = value(u, w)
        if x and y:
            if fa_of is None:
                d = tuple(map(both, x, y))
            else:
                fa, fb = fa_of(u, w, v), fb_of(u, w, v)
                d = tuple(map(both, repeat(fa), repeat(fb), x, y))
        elif x:
            if left is SHARE:
                d = x
            elif fa_of is None:
                d = tuple(map(left, x))
            else:
                fa = fa_of(u, w if type(w) is not int else arb(w), v)
                d = tuple(map(left, repeat(fa), x))
        elif y:
            if right is SHARE:
                d = y
            elif fb_of is None:
                d = tuple(map(right, y))
            else:
                fb = fb_of(u if type(u) is not int else arb(u), w, v)
                d = tuple(map(right, repeat(fb), y))
        else:
            d = ()
        return _Dual(v, d)
    return method


DUAL_CHAIN = (lambda fa, fb, x, y: fa * x + fb * y, lambda fa, x: fa * x,
              lambda fb, y: fb * y)
"""The chain rule of a function f(a, b) of duals (or f(a)) given its slopes ``fa`` =
df/da, ``fb`` = df/db at the value balls: each derivative ball when both a and b carry
derivatives (``x`` of a, ``y`` of b), when only a does, when only b does.  The functions of
:data:`DUAL_RULES` and the power apply it (:func:`_chain`, :func:`_combine`);
:mod:`mpvi.compiled.carb` translates the same lambdas into the C ``da_chain`` and
``da_combine``."""


def _chain(x, fa):
    """The derivatives of f(a) of slope ``fa``, ``x = a.d`` (:data:`DUAL_CHAIN`)."""
    return tuple(map(DUAL_CHAIN[1], repeat(fa), x))


def _combine(x, y, fa, fb):
    """The derivatives of f(a, b) of slopes ``fa``, ``fb``, ``x = a.d``, ``y = b.d``
    (:data:`DUAL_CHAIN`; () for two constants)."""
    both, left, right = DUAL_CHAIN
    if x and y:
        return tuple(map(both, repeat(fa), repeat(fb), x, y))
    if x:
        return tuple(map(left, repeat(fa), x))
    return tuple(map(right, repeat(fb), y))


DUAL_POWER = (lambda u, k: u ** k, lambda u, k, v: k * u ** (k - 1))
"""``a ** k`` for a constant exponent ``k`` (an int other than 0 and 1, which ``__pow__``
takes as the constant 1 and ``a`` itself, or a constant dual's ball): its value and the
slope of the power rule, d(u^k) = k u^(k-1) du, from the value ball ``u = a.v``, ``k`` and
the value ``v`` (the grammar of :data:`DUAL_RULES`; C ``da_pow``, translated)."""


def _power(a, k):
    """``a ** k`` by :data:`DUAL_POWER` (the chain rule: each derivative times the slope)."""
    value, slope = DUAL_POWER
    v = value(a.v, k)
    return _Dual(v, _chain(a.d, slope(a.v, k, v)))


def _negation(self):
    """``-a`` by :data:`DUAL_NEGATION`."""
    value, each = DUAL_NEGATION
    return _Dual(value(self.v), tuple(map(each, self.d)))


class _Dual:
    """A ball with the balls of its first derivatives by ``m`` seed variables.

    Forward-mode differentiation in ball arithmetic: ``v`` encloses the value and ``d[i]``
    the derivative by seed i, for every point of the seeds' balls.  The numbers of a
    :class:`_DualContext`; comparisons compare the values (Arb's rule: True only if
    certain).
    """

    __slots__ = ("v", "d")

    def __init__(self, v: arb, d: tuple[arb, ...]) -> None:
        self.v, self.d = v, d

    def _lift(self, other):
        if isinstance(other, _Dual):
            return other
        if isinstance(other, (int, arb)):
            return _Dual(arb(other) if isinstance(other, int) else other, ())
        return NotImplemented

    @staticmethod
    def _combine(a, b, fa, fb):
        """fa * a.d + fb * b.d, with () for a constant (:func:`_combine`)."""
        return _combine(a.d, b.d, fa, fb)

    __add__ = __radd__ = _arithmetic("add")    # x + y and y + x the same Arb calls
    __sub__ = _arithmetic("sub")
    __rsub__ = _arithmetic("rsub", swap=True)
    __mul__ = __rmul__ = _arithmetic("mul")
    __truediv__ = _arithmetic("div")
    __rtruediv__ = _arithmetic("div", swap=True)
    __neg__ = _negation

    def __pos__(self):
        return self

    def __pow__(self, k):
        if isinstance(k, int):
            if k == 0:
                return _Dual(arb(1), ())
            if k == 1:
                return self
            return _power(self, k)
        k = self._lift(k)
        if k is NotImplemented:
            return k
        if not k.d:    # a constant exponent (r**(3/2)): the power rule, as for an int
            return _power(self, k.v)
        return _exp(k * _log(self))

    def __abs__(self):
        if not self.d:            # a constant: no derivative to take (M's zero entries)
            return _Dual(abs(self.v), ())
        if self.v > 0:
            return self
        if self.v < 0:
            return -self
        raise UndecidedComparison("|x| is not differentiable on a ball containing 0")

    def __lt__(self, other):
        return self.v < (other.v if isinstance(other, _Dual) else other)

    def __le__(self, other):
        return self.v <= (other.v if isinstance(other, _Dual) else other)

    def __gt__(self, other):
        return self.v > (other.v if isinstance(other, _Dual) else other)

    def __ge__(self, other):
        return self.v >= (other.v if isinstance(other, _Dual) else other)

    def __repr__(self):
        return f"_Dual({self.v}, {self.d})"


DUAL_RULES = {
    "sin": (lambda x: x.sin(), lambda x, v: x.cos()),
    "cos": (lambda x: x.cos(), lambda x, v: -x.sin()),
    "exp": (lambda x: x.exp(), lambda x, v: v),
    "log": (lambda x: x.log(), lambda x, v: 1 / x),
    "sqrt": (lambda x: x.sqrt(), lambda x, v: 1 / (2 * v)),
    "tan": (lambda x: x.tan(), lambda x, v: 1 + v * v),
    "atan": (lambda x: x.atan(), lambda x, v: 1 / (1 + x * x)),
    "sinh": (lambda x: x.sinh(), lambda x, v: x.cosh()),
    "cosh": (lambda x: x.cosh(), lambda x, v: x.sinh()),
    "tanh": (lambda x: x.tanh(), lambda x, v: 1 - v * v),
    "asin": (lambda x: x.asin(), lambda x, v: 1 / (1 - x * x).sqrt()),
    "acos": (lambda x: x.acos(), lambda x, v: -1 / (1 - x * x).sqrt()),
    "atan2": (lambda y, x: arb.atan2(y, x),
              lambda y, x, v: (x / (r2 := x * x + y * y), -y / r2)),
}
"""The elementary functions on duals, written once: per function its value and its
derivative as expressions of the argument balls (``x``; ``y, x`` for atan2) and the value
ball ``v``.  A function of one argument is the chain rule, ``d = slope * x.d`` (the second
entry the slope); atan2's second entry gives the factors ``(fa, fb)`` of ``d = fa * y.d +
fb * x.d`` (:data:`DUAL_CHAIN`), d/dy atan2(y, x) = x / r^2, d/dx = -y / r^2.  The
Python functions below are made from these lambdas; :mod:`mpvi.compiled.carb` translates
the same lambdas' source (its ``ast``, never evaluated) into the C functions of a compiled
dual kernel: one definition, the same Arb calls in the same order, the same balls.  Only
what the translator reads may appear: the names of the lambda's parameters, small int
literals, ``+ - * /``, unary ``-``, the methods of ``flint.arb`` (``x.sin()``),
``arb.atan2`` and a walrus naming a subexpression."""


def _unary_rule(name, value, slope):
    def f(x):
        v = value(x.v)
        s = slope(x.v, v)
        return _Dual(v, _chain(x.d, s))
    f.__name__ = f"_{name}"
    return f


def _binary_rule(name, value, factors):
    def f(y, x):
        v = value(y.v, x.v)
        fa, fb = factors(y.v, x.v, v)
        return _Dual(v, _combine(y.d, x.d, fa, fb))
    f.__name__ = f"_{name}"
    return f


_DUAL_FUNCTIONS = {name: _unary_rule(name, *rule) for name, rule in DUAL_RULES.items()
                   if name != "atan2"}
_exp, _log = _DUAL_FUNCTIONS["exp"], _DUAL_FUNCTIONS["log"]
_atan2 = _binary_rule("atan2", *DUAL_RULES["atan2"])


class _DualContext(ArbContext):
    """Balls with first derivatives (:class:`_Dual`): the steps of a run differentiated by
    the state on balls, for the mean-value form of :func:`mpvi.certify` (Lohner 1987).

    Numbers are :class:`_Dual`; conversions give a constant (no derivative); the
    elementary functions and the generated kernels carry the chain rule (the kernels
    compiled where they can be, :mod:`mpvi.compiled.carb`: the same balls).  An implicit
    step is differentiated by the implicit function theorem on balls
    (:func:`_krawczyk_dual`).  Internal to :mod:`mpvi.proof.certify`.
    """

    compiles_dual_kernels = True
    """Its generated kernels run compiled on duals when they can (:mod:`mpvi.compiled.carb`: the
    same balls as :class:`_Dual`'s operations)."""

    def __init__(self, dps: int = 64):
        super().__init__(dps)
        self.zero = _Dual(arb(0), ())
        self.one = _Dual(arb(1), ())
        self._lib = _DualFunctions(self)
        self._lib_mpf = self.num
        self.balls = ArbContext(dps)
        self._starts: list[Any] = []

    @property
    def name(self) -> str:
        return f"arbdual{self.dps}"

    def __reduce__(self):
        return _DualContext, (self.dps,)

    def num(self, x):
        if isinstance(x, _Dual):
            return x
        v = ArbContext.num(self, x)        # 'p/q' text comes back through self.num
        return v if isinstance(v, _Dual) else _Dual(cast(arb, v), ())

    def lift(self, x):
        return x if isinstance(x, _Dual) else _Dual(cast(arb, ArbContext.lift(self, x)), ())

    def is_number(self, x):
        return isinstance(x, _Dual)

    def plain(self, x):
        """A dual's value ball (a comparison needs no derivative); anything else as it
        is."""
        return x.v if type(x) is _Dual else x

    def isfinite(self, x):
        x = self.num(x)
        return bool(x.v.is_finite()) and all(bool(t.is_finite()) for t in x.d)

    @property
    def pi(self):
        return _Dual(arb.pi(), ())

    def fsum(self, terms):
        total = self.zero
        for t in terms:
            total = total + t
        return total

    def _elementwise(self, name):
        f = getattr(self._lib, name)
        vf = np.frompyfunc(f, 1, 1)

        def apply(x):
            self.activate()
            return vf(x) if isinstance(x, np.ndarray) else f(x)
        return apply

    def atan2(self, y, x):
        return _atan2(self.num(y), self.num(x))

    def solve(self, a, b):
        """Gaussian elimination on duals (pivots chosen by the midpoints' sizes: any
        non-zero pivot is valid; a ball pivot containing 0 gives a non-finite result)."""
        a_ = [[self.num(v) for v in row] for row in np.asarray(a, dtype=object).tolist()]
        b_arr = np.asarray(b, dtype=object)
        cols = b_arr.reshape(len(a_), -1).tolist()
        rows = [[self.num(v) for v in row] for row in cols]
        n = len(a_)
        for k in range(n):
            p = max(range(k, n), key=lambda i: float(abs(a_[i][k].v.mid())))
            a_[k], a_[p], rows[k], rows[p] = a_[p], a_[k], rows[p], rows[k]
            if a_[k][k].v.contains(0):
                raise SingularMatrixError("the ball matrix is not provably invertible "
                                          "(a pivot ball contains 0)")
            for i in range(k + 1, n):
                f = a_[i][k] / a_[k][k]
                a_[i] = [x - f * y for x, y in zip(a_[i], a_[k])]
                rows[i] = [x - f * y for x, y in zip(rows[i], rows[k])]
        x: list[Any] = [None] * n
        for k in reversed(range(n)):
            acc = rows[k]
            for j in range(k + 1, n):
                acc = [u - a_[k][j] * w for u, w in zip(acc, x[j])]
            x[k] = [u / a_[k][k] for u in acc]
        out = np.array(x, dtype=object)
        return out[:, 0].copy() if b_arr.ndim == 1 else out

    def norm_inf(self, v):
        """``max |x|`` of the values (derivatives dropped): a system's checks of its
        matrices (symmetry tolerance) rebuilt in this context."""
        return self.balls.norm_inf(np.array([self.num(x).v for x in np.ravel(v).tolist()],
                                            dtype=object))

    def to_str(self, x, digits=None):
        return ArbContext.to_str(self, self.num(x).v, digits)

    def decimal(self, x, digits=None):
        return ArbContext.decimal(self, self.num(x).v, digits)

    def verified_solve(self, fun, x0, what=""):
        """:func:`_krawczyk_dual`; if a start is waiting in ``_starts`` (the centre, the
        preconditioner and the solution's ball of the same equations at the point step,
        which certify hands over), centred there with that C, without Newton: they only
        save work, the Krawczyk test decides; and the point step's solution must lie in
        its Krawczyk ball (the same root: KrawczykError otherwise)."""
        start = None
        if self._starts and len(self._starts[0][0]) == len(x0):
            start = self._starts.pop(0)
        return _krawczyk_dual(fun, x0, self, what=what, start=start)

    def _special_functions(self):
        def step(name):
            def f(x):
                x = self.num(x)
                if x.v.contains_integer():
                    raise UndecidedComparison(f"{name} is not differentiable on a ball "
                                              "containing an integer")
                return _Dual(getattr(x.v, name)(), ())
            return f
        return dict(floor=step("floor"), ceil=step("ceil"))


class _DualFunctions:
    """The elementary functions of generated code on duals."""

    def __init__(self, ctx: _DualContext) -> None:
        num = ctx.num
        for name, f in _DUAL_FUNCTIONS.items():
            setattr(self, name, self._wrap(f, num))
        self.atan2 = lambda y, x: _atan2(num(y), num(x))

    @staticmethod
    def _wrap(f, num):
        def g(x):
            return f(x if type(x) is _Dual else num(x))
        g.__name__ = f.__name__.lstrip("_")
        return g


def _value(x):
    """A dual's value ball; any other number as it is."""
    return x.v if type(x) is _Dual else x


def _krawczyk_dual(fun, x0, ctx, *, what="", start=None, **ignored):
    """:func:`krawczyk` for a step on duals: the solution's ball by the Krawczyk test on
    the values (for every state in the seeds' balls), its derivatives by the seeds by the
    implicit function theorem on balls, X_y = -F_X^-1 F_y with F_X and F_y evaluated over
    the state's ball and the test's ball X around the solution's (their every value
    enclosed; the evaluation the accepted test made, not one more)."""
    as_array = isinstance(x0, np.ndarray)
    base = ctx.balls

    def const(values):
        return [_Dual(v, ()) for v in values]

    def values(fun_out, jacobian):
        if jacobian:
            r, J = fun_out
            return ([ctx.num(v).v for v in r],
                    [[ctx.num(v).v for v in row] for row in np.asarray(J, dtype=object).tolist()])
        return [ctx.num(v).v for v in fun_out]

    def wrap(x):
        return np.array(x, dtype=object) if as_array else list(x)

    last: list[Any] = [None]
    rebound = getattr(fun, "rebound", None)
    if rebound is not None:
        # a generated kernel's equations: the test runs on the balls of the values (the
        # same equations for every state in the seeds' balls), no derivative carried
        balls = rebound(base, _value)

        def fv(x, jacobian):
            out = balls(wrap(x), jacobian)
            if jacobian:
                last[0] = out
            return out
    else:
        def fv(x, jacobian):
            out = fun(wrap(const(x)), jacobian)
            if jacobian:
                last[0] = out
            return values(out, jacobian)
    if start is None:
        K, it, res, _, _, X = _krawczyk(fv, [ctx.num(v).v for v in x0], base, what,
                                        finish=False)
    else:
        K, it, res, _, _, X = _krawczyk(fv, start[0], base, what, centred=True, C=start[1],
                                        finish=False)
        # the point step's root (in its K) is the one these equations have in X, for the
        # state the point step took: the mean-value form joins the two
        if not all(b.contains(k) for b, k in zip(X, start[2])):
            raise KrawczykError("the point step's root is not proven to be the root of the "
                                "box's equations (its enclosure is not inside their "
                                "Krawczyk ball)", what)
    # F_X as the accepted test evaluated it, over the ball X that holds K (its last
    # evaluation with the Jacobian), and F_y over (Y, K) from one residual on duals: they
    # enclose F_X and F_y at every (y, x(y)), x(y) in K, as the implicit function theorem
    # needs
    J = last[0][1]
    F = fun(wrap(const(K)), False) if rebound is not None else last[0][0]
    F = [ctx.num(v) for v in F]
    m = max((len(f.d) for f in F), default=0)
    n = len(K)
    JX = arb_mat([[_value(ctx.num(v)) for v in row]
                  for row in np.asarray(J, dtype=object).tolist()])
    Fy = arb_mat([[f.d[s] if f.d else arb(0) for s in range(m)] for f in F]) if m else None
    if Fy is None:
        X = const(K)
    else:
        try:
            Xy = JX.solve(-Fy)
        except ZeroDivisionError:
            raise KrawczykError("the Jacobian is not provably invertible on the ball of the "
                                "state and the solution (no derivative of the step)",
                                what) from None
        rows = Xy.tolist()
        X = [_Dual(K[i], tuple(rows[i])) for i in range(n)]
    if rebound is None:           # a stepper's closure reads its last evaluation; a
        fun(wrap(X), False)       # kernel's equations keep nothing (its outputs are apart)
    return wrap(X), it, res
