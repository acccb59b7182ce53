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
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from mpvi.ground.types import Real


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
    """Solve ``a x = b`` by Gaussian elimination with partial pivoting
    (:func:`gauss_eliminate`).

    Parameters
    ----------
    a : list of lists
        The n x n matrix as a list of rows; **consumed** (rows are overwritten).
    b : sequence
        The right-hand side: n numbers, or n rows of m numbers (m right-hand sides).
    ctx : number context
        Gives ``eps``, ``zero`` (an int entry v becomes the context's number 0 + v, exact
        and rounded as ``num(v)``, so that no division is an int division) and ``to_str``
        (for the message).

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
    bm = [list(r) for r in b] if rows else [[v] for v in b]
    if any(len(r) != n for r in a) or len(bm) != n:
        raise ValueError(f"solve: a {n}-row matrix with rows of lengths "
                         f"{sorted({len(r) for r in a})} and {len(bm)} right-hand side rows")
    m = len(bm[0]) if n else 0
    if any(len(r) != m for r in bm):
        raise ValueError(f"solve: right-hand side rows of lengths {sorted({len(r) for r in bm})}")
    if n == 0:
        raise SingularMatrixError("solve: the matrix is zero")
    zero = ctx.zero                     # an int entry (int / int would be a float
    for rows_ in (a, bm):               # division) becomes the context's number: 0 + v
        if int in map(type, chain.from_iterable(rows_)):
            for i in range(n):
                rows_[i] = [zero + v if type(v) is int else v for v in rows_[i]]
    x: list = [[None] * m for _ in range(n)]
    out: list = [None, None]
    k = gauss_eliminate(n, m, a, bm, x, ctx.eps, out)
    if k < 0:
        scale = out[0]
        raise SingularMatrixError("solve: the matrix is zero" if scale == 0 else
                                  f"solve: the matrix has a non-finite entry ({scale})")
    if k < n:
        raise SingularMatrixError(
            f"solve: matrix is singular to working precision (pivot "
            f"{ctx.to_str(out[0], 5)} at column {k}, threshold n*eps*max|a| = "
            f"{ctx.to_str(out[1], 5)})")
    return x if rows else [r[0] for r in x]


def gauss_eliminate(n: int, m: int, a: list[list[Real]], b: list[list[Real]],
                    x: list[list[Real]], eps: Real, out: list[Real]) -> int:
    """Gaussian elimination with partial pivoting of ``a x = b``: the one implementation,
    run by :func:`solve_dense` in every context and translated to MPFR C for the compiled
    modules (:mod:`mpvi.compiled.croutine`, the same operations in the same order).

    ``a`` (n x n rows) and ``b`` (n x m rows) are consumed (rows swapped, entries
    overwritten); ``x`` (n x m rows) receives the solution.  The pivot of column k is the
    first largest |a_ik|, i >= k (Python's ``max``: a comparison with a nan is false), and
    it must exceed ``tiny = n eps max|a_ij|``.  Returns n when solved; -1 when
    ``max|a_ij|`` is not positive (zero, or a nan first) with it in ``out[0]``; the
    column k of a pivot at most ``tiny`` with the pivot in ``out[0]`` and ``tiny`` in
    ``out[1]``.
    """
    scale = abs(a[0][0])
    for i in range(n):
        ri = a[i]
        for j in range(n):
            v = abs(ri[j])
            if v > scale:
                scale = v
    if not scale > 0:
        out[0] = scale
        return -1
    tiny = n * eps * scale
    for k in range(n):
        big = abs(a[k][k])
        piv = k
        for i in range(k + 1, n):
            v = abs(a[i][k])
            if v > big:
                big = v
                piv = i
        if not big > tiny:
            out[0] = big
            out[1] = tiny
            return k
        if piv != k:
            a[k], a[piv] = a[piv], a[k]
            b[k], b[piv] = b[piv], b[k]
        rk = a[k]
        bk = b[k]
        pk = rk[k]
        for i in range(k + 1, n):
            ri = a[i]
            f = ri[k] / pk
            if f != 0:
                for j in range(k + 1, n):
                    ri[j] -= f * rk[j]
                bi = b[i]
                for c in range(m):
                    bi[c] -= f * bk[c]
    for i in range(n - 1, -1, -1):
        ri = a[i]
        bi = b[i]
        xi = x[i]
        for c in range(m):
            s = bi[c]
            for j in range(i + 1, n):
                s -= ri[j] * x[j][c]
            xi[c] = s / ri[i]
    return n


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
    """Whether the symmetric matrix ``a`` (rows of numbers) is positive definite: the
    LDL^T test of :func:`ldl_positive`.  The cheap test run after every step of an
    integration."""
    n = len(a)
    d: list = [None] * n
    low: list = [[None] * n for _ in range(n)]
    return ldl_positive(n, a, d, low)


def ldl_positive(n: int, a: list[list[Real]], d: list[Real], low: list[list[Real]]) -> bool:
    """Whether the n x n symmetric ``a`` is positive definite: an LDL^T factorization
    without square roots (n^3/6 multiplications, the lower triangle of ``a`` read), every
    pivot d_j = a_jj - sum_k l_jk l_jk d_k > 0 (a nan pivot fails), l_ij = (a_ij - sum_k
    l_ik l_jk d_k) / d_j; ``d`` (n) and ``low`` (n x n) are its storage.  The one
    implementation, run by :func:`is_positive_definite` in every context and translated
    to MPFR C for the compiled check after a step (:mod:`mpvi.compiled.croutine`)."""
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


def max_norm(n: int, v: list[Real], out: list[Real]) -> bool:
    """``out[0] = max_i |v_i|`` of the n numbers v (the first largest, as Python's
    ``max``); False, ``out`` untouched, when a v_i is not finite (x - x is 0 exactly for a
    finite x only).  The one max norm of Newton's stopping rule
    (:func:`mpvi.numbers.newton.newton_core`), in every context and in its C."""
    best = abs(v[0])
    for i in range(n):
        if not v[i] - v[i] == 0:
            return False
        w = abs(v[i])
        if w > best:
            best = w
    out[0] = best
    return True


def hadamard_regular(n: int, det: Real, m: list[Real], eps: Real) -> bool:
    """Whether the n x n matrix M (``m``, row by row) with determinant ``det`` is regular to
    working precision by Hadamard's bound: |det M| > n eps prod_i sum_j |M_ij| (the row
    sums from 0 up, one rounded product per row; false for a nan).  The one test of the
    symbolic inverse v = adj(M) p / det M (:func:`mpvi.engines.kernels.hamiltonian_field`)
    and of its C in the compiled explicit module."""
    bound = n * eps
    for i in range(n):
        s = abs(m[i * n])
        for j in range(1, n):
            s = s + abs(m[i * n + j])
        bound = bound * s
    return abs(det) > bound


def linear_combination(nu: int, m: int, nd: int, me: int, e: list[Real], c: list[Real],
                       x: list[Real]) -> int:
    """x[u nd + d] = sum_{i < m} c[i nd + d] e[u me + i] for u < nu, d < nd: ``nu``
    combinations of the m vectors of ``nd`` numbers in c (flat), the coefficients of the
    u-th in row u of e (flat, ``me`` per row), summed from i = 0 up.  The first guess of
    a variational step extrapolated from the previous one
    (``first_guess`` of the steppers of :mod:`mpvi.methods.variational`), in every context
    and in the compiled Newton's C."""
    for u in range(nu):
        for d in range(nd):
            acc = c[d] * e[u * me]
            for i in range(1, m):
                acc = acc + c[i * nd + d] * e[u * me + i]
            x[u * nd + d] = acc
    return 0

