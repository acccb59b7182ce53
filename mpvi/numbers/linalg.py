"""The one dense linear solve and the one Cholesky test of mpvi, on plain lists.

Every linear solve in mpvi -- the contexts' :meth:`~mpvi.numbers.context.Context.solve` on numpy
arrays, Newton's update on the generated-kernel path and on the assembled reference path,
the Legendre map, the acceleration -- is :func:`solve_dense`; every positive-definiteness
test (the mass matrix at the initial point and after every step) is :func:`cholesky`.
Both work in whatever number type the entries have (mpmath ``mpf``, gmpy2 ``mpfr``,
``float``), at the precision of the context passed for the thresholds.
"""
from __future__ import annotations

from itertools import chain
from typing import Any, Sequence


class SingularMatrixError(ArithmeticError):
    """A linear solve met a matrix that is singular to working precision.

    Raised by the dense solve (a pivot below ``n * eps * max|a|``) and, naming the point,
    by a system's Legendre map and acceleration.  An ``ArithmeticError``.
    """


class NotPositiveDefiniteError(ArithmeticError):
    """A Cholesky factorization met a matrix that is not symmetric positive definite.

    The message names the matrix and the failing pivot.  An ``ArithmeticError``.
    """


def solve_dense(a: list, b: Sequence, ctx: Any) -> list:
    """Solve ``a x = b`` by Gaussian elimination with partial pivoting.

    Parameters
    ----------
    a : list of lists
        The n x n matrix as a list of rows; **consumed** (rows are overwritten).
    b : sequence
        The right-hand side: n numbers, or n rows of m numbers (m right-hand sides).
    ctx : number context
        Gives ``eps`` and ``to_str`` (for the message).

    Returns
    -------
    list
        x as n numbers, or n rows of m numbers when ``b`` has rows.

    Raises
    ------
    SingularMatrixError
        When a pivot is at most ``n eps max|a_ij|`` (singular to working precision), or
        the matrix is zero.
    """
    n = len(a)
    rows = n > 0 and isinstance(b[0], (list, tuple))
    b = [list(r) for r in b] if rows else list(b)
    if any(len(r) != n for r in a) or len(b) != n:
        raise ValueError(f"solve: a {n}-row matrix with rows of lengths "
                         f"{sorted({len(r) for r in a})} and {len(b)} right-hand side rows")
    scale = max(map(abs, chain.from_iterable(a)), default=0)
    if not scale > 0:
        raise SingularMatrixError("solve: the matrix is zero" if scale == 0 else
                                  f"solve: the matrix has a non-finite entry ({scale})")
    tiny = n * ctx.eps * scale
    for k in range(n):
        column = [abs(a[i][k]) for i in range(k, n)]
        big = max(column)
        piv = k + column.index(big)
        if not big > tiny:
            raise SingularMatrixError(
                f"solve: matrix is singular to working precision (pivot "
                f"{ctx.to_str(big, 5)} at column {k}, threshold n*eps*max|a| = "
                f"{ctx.to_str(tiny, 5)})")
        if piv != k:
            a[k], a[piv] = a[piv], a[k]
            b[k], b[piv] = b[piv], b[k]
        rk, pk = a[k], a[k][k]
        if type(pk) is int:             # int / int would be a float division
            pk = rk[k] = ctx.num(pk)
        for i in range(k + 1, n):
            ri = a[i]
            f = ri[k] / pk
            if f != 0:
                for j in range(k + 1, n):
                    ri[j] -= f * rk[j]
                if rows:
                    bi, bk = b[i], b[k]
                    for c in range(len(bi)):
                        bi[c] -= f * bk[c]
                else:
                    b[i] -= f * b[k]
    x = [None] * n
    for i in range(n - 1, -1, -1):
        ri = a[i]
        if rows:
            s = list(b[i])
            for j in range(i + 1, n):
                rij, xj = ri[j], x[j]
                for c in range(len(s)):
                    s[c] -= rij * xj[c]
            x[i] = [v / ri[i] for v in s]
        else:
            s = b[i]
            for j in range(i + 1, n):
                s -= ri[j] * x[j]
            x[i] = s / ri[i]
    return x


def cholesky(a: Sequence[Sequence], ctx: Any, name: str = "matrix") -> list:
    """Lower-triangular L (a list of rows) with ``a = L L^T``.

    Parameters
    ----------
    a : n x n rows of numbers (read only; symmetry is assumed, the lower triangle is used)
    ctx : number context (``sqrt``, ``fsum``, ``to_str``)
    name : what ``a`` is, for the message

    Raises
    ------
    NotPositiveDefiniteError
        Naming ``name`` and the first pivot that is not positive (or not finite).
    """
    n = len(a)
    low = [[ctx.zero] * n for _ in range(n)]
    for j in range(n):
        d = a[j][j] - ctx.fsum(low[j][k] ** 2 for k in range(j))
        if not d > 0 or not ctx.isfinite(d):
            raise NotPositiveDefiniteError(
                f"{name} is not positive definite (Cholesky pivot {j} is "
                f"{ctx.to_str(d, 5)})")
        low[j][j] = ctx.sqrt(d)
        for i in range(j + 1, n):
            low[i][j] = (a[i][j] - ctx.fsum(low[i][k] * low[j][k] for k in range(j))) / low[j][j]
    return low


def is_positive_definite(a: Sequence[Sequence]) -> bool:
    """Whether the symmetric matrix ``a`` (rows of numbers) is positive definite: an
    LDL^T factorization without square roots, n^3/6 multiplications, every pivot > 0
    (a nan pivot fails).  The cheap test run after every step of an integration."""
    n = len(a)
    d = [None] * n
    low = [[None] * n for _ in range(n)]
    for j in range(n):
        lj = low[j]
        s = a[j][j]
        for k in range(j):
            s -= lj[k] * lj[k] * d[k]
        if not s > 0:
            return False
        d[j] = s
        for i in range(j + 1, n):
            li = low[i]
            s = a[i][j]
            for k in range(j):
                s -= li[k] * lj[k] * d[k]
            li[j] = s / d[j]
    return True
