"""The names of the public annotations: a context's numbers, vectors and matrices, the
numbers a user may write, sympy's expressions.

Written once here and imported by the library's modules under ``if TYPE_CHECKING:``
only: nothing is imported at run time (every alias is a string the type checker reads),
so that annotating a signature never makes ``import mpvi`` load numpy, gmpy2, mpmath or
sympy.  The third-party packages without type information (gmpy2, mpmath, sympy) are
``Any`` to mypy (pyproject.toml, ``[tool.mypy]``), so their names below document the
value more than they check it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias, TypedDict

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from decimal import Decimal
    from fractions import Fraction

    import flint
    import gmpy2
    import mpmath
    import numpy as np
    import sympy
    import sympy.polys.rings
    from numpy.typing import NDArray

Real: TypeAlias = "float | gmpy2.mpfr | mpmath.mpf"
"""A real number of a context: ``gmpy2.mpfr`` (:class:`mpvi.GMPContext`), mpmath's
``mpf`` (:class:`mpvi.MPContext`) or ``float`` (:class:`mpvi.FPContext`)."""

Number: TypeAlias = "float | complex | gmpy2.mpfr | gmpy2.mpc | mpmath.mpf | mpmath.mpc"
"""A real or complex number of a context."""

NumberLike: TypeAlias = ("int | float | str | Fraction | Decimal | sympy.Basic"
                         " | gmpy2.mpfr | gmpy2.mpq | gmpy2.mpz | mpmath.mpf")
"""What a context reads as a real number (:meth:`mpvi.numbers.context.Context.num`): an exact
integer, fraction or decimal text, a sympy number, or a number of a context (a float only
in the fp context: the mp contexts refuse it, it would cap their precision)."""

Vector: TypeAlias = "NDArray[np.object_] | NDArray[np.float64]"
"""A 1-D numpy array of a context's numbers (dtype object; float64 for the fp context)."""

VectorLike: TypeAlias = "Vector | Sequence[NumberLike]"
"""What a function reads as a vector: an array, or a sequence of numbers (array_like)."""

Matrix: TypeAlias = "NDArray[np.object_] | NDArray[np.float64]"
"""A 2-D numpy array of a context's numbers."""

Array: TypeAlias = "NDArray[np.object_] | NDArray[np.float64]"
"""A numpy array of a context's numbers, of any shape (a state history: steps x dof)."""

ExprLike: TypeAlias = "sympy.Basic | str | int | float"
"""What :func:`mpvi.ground.expressions.as_expression` reads: a sympy object, a formula's text
(parsed by mpvi's own parser), or a number."""

MatrixLike: TypeAlias = "sympy.MatrixBase | Sequence[Sequence[ExprLike]] | Sequence[ExprLike]"
"""What :func:`mpvi.ground.expressions.as_matrix` reads: a sympy Matrix, or its rows (a flat
sequence is a column)."""

ForceFunction: TypeAlias = ("Callable[[sympy.Symbol, sympy.Matrix, sympy.Matrix],"
                            " sympy.MatrixBase | Sequence[ExprLike]]")
"""A non-conservative force ``force(t, q, v)``: called once with the symbols of time,
coordinates and velocities, it returns the n x 1 column of the force's expressions."""

ExactSolution: TypeAlias = ("Callable[[Real], tuple[VectorLike, VectorLike]]"
                            " | Callable[[Real], VectorLike]")
"""An exact solution: ``t -> (q, p)`` or ``t -> (q, v)`` for a mechanical system,
``t -> y`` for a first-order system (:class:`mpvi.Problem`)."""

EventFunction: TypeAlias = "Callable[[Real, Vector, Vector], Real]"
"""An event function ``g(t, q, v)`` (``g(t, y, y')`` for a first-order system) whose
sign changes :func:`mpvi.solve` locates."""

StepCallback: TypeAlias = "Callable[[Real, Vector, Vector | None], bool | None]"
"""``callback(t, q, y)`` of :func:`mpvi.solve`, after every step; True stops the run."""

ProgressCallback: TypeAlias = "Callable[[int, int], object]"
"""``progress(step, total)`` of :func:`mpvi.solve`."""

FirstOrderField: TypeAlias = "Callable[[Real, Vector], VectorLike]"
"""The right-hand side ``rhs(t, y)`` of a first-order system."""

RingElement: TypeAlias = "flint.fmpq_mpoly | sympy.polys.rings.PolyElement"
"""An element of an :class:`mpvi.analysis.jets.Algebra`: a polynomial over the rationals in its
symbols and atoms (FLINT's ``fmpq_mpoly``, or sympy's ``PolyElement`` on that backend)."""

RingScalar: TypeAlias = "flint.fmpq | gmpy2.mpq"
"""A rational scalar of an algebra's ring (FLINT's ``fmpq`` or sympy's QQ, ``gmpy2.mpq``)."""


class ParseOptions(TypedDict, total=False):
    """The options of :func:`mpvi.ground.expressions.parse_expression` that
    :func:`~mpvi.ground.expressions.as_expression` and :func:`~mpvi.ground.expressions.as_matrix` pass on
    (``**options``)."""

    free_symbols: bool
    functions: Mapping[str, Callable[..., sympy.Basic]] | None
    constants: Mapping[str, sympy.Basic] | None
    evaluate: bool
    tuples: bool
    max_length: int
    max_depth: int
    max_digits: int
    max_exponent: int
    max_bits: int


class ProblemChanges(TypedDict, total=False):
    """What :meth:`mpvi.Problem.replace` may change (``**changes``)."""

    q0: VectorLike
    p0: VectorLike | None
    v0: VectorLike | None
    t0: NumberLike
    t1: NumberLike | None
    exact: ExactSolution | None
    name: str | None
