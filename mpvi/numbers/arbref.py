"""Ball arithmetic (python-flint's Arb, Johansson 2017) for the exact references.

The helpers behind the ``enclose`` methods of the exact references
(:meth:`mpvi.systems.linear.ModalSolution.enclose`,
:meth:`mpvi.systems.lagrange_top_exact.LagrangeTopNutation.enclose`,
:meth:`mpvi.systems.damped.DampedOscillatorExact.enclose`): exact inputs read as
rationals, flint's global precision set for one computation and restored after, and the
certified eigen-decomposition of a real matrix with simple real eigenvalues.

Every value is a ball (an ``arb`` or ``acb``) from the exact inputs on: nothing passes
through a float or an mpfr midpoint.  Floats enter only in choosing how many guard digits
to carry (a precision decision, never a value of a proof).

flint is imported inside the functions: ``import mpvi`` does not import it.
"""
from __future__ import annotations

import functools
import math
from contextlib import contextmanager
from fractions import Fraction
from typing import TYPE_CHECKING, Iterator, Sequence, cast

if TYPE_CHECKING:
    from flint import acb, acb_mat, arb, fmpq_mat

GUARD_DIGITS = 20
"""Digits carried beyond the requested ones, before those lost to the size of the
argument (``|omega t|``, the number of periods): the rounding of the inputs, the
eigen-decomposition and the special functions spend a few each."""


@contextmanager
def arb_precision(dps: int) -> Iterator[None]:
    """Set flint's global precision to ``dps`` digits inside the block, restore it after.

    Raises ValueError for a ``dps`` that is not a positive int.
    """
    import flint
    if isinstance(dps, bool) or not isinstance(dps, int) or dps < 1:
        raise ValueError(f"dps must be a positive int, got {dps!r}")
    saved = flint.ctx.prec
    flint.ctx.dps = dps
    try:
        yield
    finally:
        flint.ctx.prec = saved


def exact_rational(x: object, what: str) -> Fraction:
    """The exact rational value of an input: an int, a ``Fraction``, a decimal or
    fraction string (``"0.15"``, ``"1/3"``), a sympy Rational, or a number of a context
    (an mpmath ``mpf`` or a gmpy2 ``mpfr``: the binary number it is, exactly).

    Raises TypeError for a Python float (give its decimal string) or another type, and
    ValueError for a string that is not a rational or a non-finite number; ``what`` names
    the input in the message.
    """
    import mpmath
    if isinstance(x, bool):
        raise TypeError(f"{what}: a bool is not a number")
    if isinstance(x, (int, Fraction)):
        return Fraction(x)
    if isinstance(x, float):
        raise TypeError(f"{what}: refusing the Python float {x!r}: give the exact value as a "
                        "string, int or Fraction")
    if isinstance(x, str):
        return _rational_text(x, what)
    if getattr(x, "is_Rational", False):
        return Fraction(int(x.p), int(x.q))  # type: ignore[attr-defined]
    mpf = getattr(x, "_mpf_", None)           # an mpf of any mpmath context
    if isinstance(mpf, tuple):
        if mpf in (mpmath.libmp.finf, mpmath.libmp.fninf, mpmath.libmp.fnan):
            raise ValueError(f"{what}: {x} is not finite")
        p, q = mpmath.libmp.to_rational(mpf)
        return Fraction(int(p), int(q))
    if type(x).__name__ == "mpfr" and hasattr(x, "as_integer_ratio"):
        try:
            p, q = x.as_integer_ratio()
        except (OverflowError, ValueError):
            raise ValueError(f"{what}: {x} is not finite") from None
        return Fraction(int(p), int(q))
    raise TypeError(f"{what}: cannot read {type(x).__name__} {x!r} as an exact number")


MAX_EXACT_EXPONENT = 10 ** 4
"""The largest decimal exponent |e| a text such as ``"1e-30"`` may carry to be made an
exact rational: ``Fraction("1e999999999")`` would build 10^999999999 (hours); beyond it an
exact value is refused and a ball is made from the mantissa and a power of ten
(:meth:`mpvi.ArbContext.num`)."""


def _rational_text(x: str, what: str) -> Fraction:
    """The exact rational of a number text in the grammar every context reads
    (:func:`mpvi.numbers.context._number_text`: a decimal or p/q); ValueError for anything else, a
    non-finite value or a decimal exponent beyond :data:`MAX_EXACT_EXPONENT`."""
    from decimal import Decimal

    from mpvi.numbers.context import _number_text
    try:
        _, value = _number_text(x)
    except ValueError:
        raise ValueError(f"{what}: {x!r} is not an exact rational (an int, a decimal or "
                         "p/q)") from None
    if isinstance(value, Fraction):              # p/q
        return value
    number = Decimal(value)
    exponent = number.as_tuple().exponent
    if not isinstance(exponent, int):            # inf, nan
        raise ValueError(f"{what}: {x!r} is not finite")
    if abs(exponent) > MAX_EXACT_EXPONENT:
        raise ValueError(f"{what}: {x!r} has a decimal exponent beyond "
                         f"{MAX_EXACT_EXPONENT}, too large to read exactly")
    return Fraction(number)


def ball(x: object, what: str) -> arb:
    """An ``arb`` enclosing the exact input ``x`` (:func:`exact_rational`) at flint's
    current precision, or ``x`` itself if it is an ``arb`` already (a ball input)."""
    from flint import arb, fmpq
    if isinstance(x, arb):
        return x
    r = exact_rational(x, what)
    return arb(fmpq(int(r.numerator), int(r.denominator)))


def magnitude(x: object) -> float:
    """A float estimate of ``|x|`` (an exact input, a context number or an arb) for
    choosing guard digits only (never a proven value)."""
    from flint import arb
    if isinstance(x, arb):
        return abs(float(x.mid()))
    return abs(float(exact_rational(x, "t")))


def lost_digits(size: float) -> int:
    """Digits an argument of magnitude ``size`` costs a periodic function: its argument
    reduction loses about log10(1 + size)."""
    return math.ceil(math.log10(1 + size))


def fmpq_matrix(rows: Sequence[Sequence[object]], what: str) -> fmpq_mat:
    """The exact ``fmpq_mat`` of a nested sequence of exact inputs."""
    from flint import fmpq, fmpq_mat
    entries = [[exact_rational(x, f"{what}[{i}, {j}]") for j, x in enumerate(row)]
               for i, row in enumerate(rows)]
    return fmpq_mat([[fmpq(int(x.numerator), int(x.denominator)) for x in row] for row in entries])


def eig_simple_real(a: acb_mat, what: str) -> tuple[list[arb], acb_mat, acb_mat]:
    """Certified eigen-decomposition ``L A R = diag(lam)`` (``L = R^-1``) of a real matrix
    whose eigenvalues are real and simple, eigenvalues ascending.

    ``acb_mat.eig(right=True, algorithm="rump")`` is Arb's ``acb_mat_eig_simple_rump``
    (Rump 2001, Johansson 2017): it proves that the eigenvalues are simple, isolates each
    in a ball and encloses an eigenvector of each (the columns of R, in some scaling); it
    fails when two eigenvalues cannot be isolated at the working precision (a multiple
    eigenvalue, or ones too close: Rump's test needs about twice the digits of the gap).
    L is the ball inverse of R (``acb_mat.inv``, which fails rather than return a wrong
    ball).  Each eigenvalue is returned as the real part of its ball (the true eigenvalue
    is real: the imaginary part must contain 0, or the input was not what the caller
    said), and the order is proven by the balls being disjoint.

    Raises ArithmeticError naming ``what`` when the eigenvalues cannot be isolated, R
    cannot be inverted, a ball does not contain a real number, or two balls overlap on the
    real line.
    """
    try:
        lam, right = a.eig(right=True, algorithm="rump")
    except ValueError as exc:
        raise ArithmeticError(
            f"{what}: the eigenvalues could not be proven simple (isolated) at {prec_digits()} "
            f"digits: a multiple eigenvalue, or eigenvalues closer than the working precision "
            f"resolves (Arb: {exc})") from None
    try:
        left = right.inv()
    except ZeroDivisionError as exc:
        raise ArithmeticError(f"{what}: the enclosed eigenvector matrix could not be inverted "
                              f"at {prec_digits()} digits (Arb: {exc})") from None
    reals = []
    for k, z in enumerate(lam):
        if not z.imag.contains(0):
            raise ArithmeticError(f"{what}: eigenvalue {k} = {z} is not real; the matrix is "
                                  "not similar to a symmetric one")
        reals.append(z.real)

    def by_midpoint(i: int, j: int) -> int:        # exact: midpoints are exact points
        mi, mj = reals[i].mid(), reals[j].mid()
        return -1 if mi < mj else (1 if mj < mi else 0)
    order = sorted(range(len(reals)), key=functools.cmp_to_key(by_midpoint))
    for i, j in zip(order, order[1:]):
        if not reals[i] < reals[j]:
            raise ArithmeticError(f"{what}: eigenvalues {reals[i]} and {reals[j]} overlap on "
                                  "the real line; their order is not proven")
    n = len(reals)
    from flint import acb_mat as _acb_mat
    rs = _acb_mat([[right[i, k] for k in order] for i in range(n)])
    ls = _acb_mat([[left[k, j] for j in range(n)] for k in order])
    return [reals[k] for k in order], ls, rs


def real_roots(coefficients: Sequence[object], what: str) -> list[arb]:
    """The real roots of a polynomial with exact rational coefficients (highest degree
    first), ascending and repeated by multiplicity, each a proven isolating ball.

    Arb's ``arb_fmpz_poly_complex_roots`` (python-flint ``fmpz_poly.complex_roots``, on the
    polynomial times the common denominator of its coefficients) isolates every complex
    root of each square-free factor in a disjoint ball, at flint's current precision or
    better, and proves a root real by returning its imaginary part exactly 0.  The order is
    proven by the balls being disjoint on the real line.

    Raises ValueError for a zero or constant polynomial, ArithmeticError naming ``what``
    where two real balls overlap (the order not proven).
    """
    from flint import fmpz_poly
    exact = [exact_rational(c, f"{what}: coefficient {k}") for k, c in enumerate(coefficients)]
    while exact and exact[0] == 0:
        exact.pop(0)
    if len(exact) < 2:
        raise ValueError(f"{what}: the polynomial {coefficients!r} has no roots to isolate")
    common = math.lcm(*(c.denominator for c in exact))
    poly = fmpz_poly([int(c * common) for c in reversed(exact)])
    found = []
    for z, multiplicity in cast("list[tuple[acb, int]]", poly.complex_roots()):
        if z.imag.is_zero():
            found.extend([z.real] * int(multiplicity))

    def by_midpoint(a: arb, b: arb) -> int:        # exact: midpoints are exact points
        ma, mb = a.mid(), b.mid()
        return -1 if ma < mb else (1 if mb < ma else 0)
    found.sort(key=functools.cmp_to_key(by_midpoint))
    for a, b in zip(found, found[1:]):
        if not (a < b or a.mid() == b.mid() and a.rad() == b.rad()):
            raise ArithmeticError(f"{what}: real roots {a} and {b} overlap; their order is not "
                                  "proven")
    return found


def root_of(coefficients: Sequence[object], index: int, what: str) -> arb:
    """Real root number ``index`` (0 the least, counted with multiplicity: sympy's
    ``CRootOf`` numbering of the real roots) of a polynomial with exact rational
    coefficients (highest degree first), as a proven ball at flint's current precision
    (:func:`real_roots`).

    Raises ValueError naming ``what`` for an index beyond the real roots (a non-real
    root: a real ball cannot hold it).
    """
    roots = real_roots(coefficients, what)
    if not 0 <= index < len(roots):
        raise ValueError(f"{what}: root {index} is not real (the polynomial has "
                         f"{len(roots)} real roots, numbered 0 to {len(roots) - 1}): a real "
                         "ball cannot enclose it")
    return roots[index]


def finite(values: dict[str, arb], what: str) -> dict[str, arb]:
    """``values`` if every ball is finite, else ArithmeticError naming ``what`` and the
    quantity whose ball is not (a step that left its domain, e.g. acos beyond 1)."""
    for name, v in values.items():
        if not v.is_finite():
            raise ArithmeticError(f"{what}: the ball of {name} is not finite at {prec_digits()} "
                                  f"digits ({v})")
    return values


def prec_digits() -> int:
    """flint's current precision in decimal digits."""
    import flint
    return int(flint.ctx.dps)


def real_part(z: acb, what: str) -> arb:
    """The real part of a ball whose exact value is real (checked: the imaginary part
    must contain 0, else ArithmeticError naming ``what``)."""
    if not z.imag.contains(0):
        raise ArithmeticError(f"{what}: {z} should be real; its imaginary part excludes 0")
    return z.real
