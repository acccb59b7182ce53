"""Systems of N pendulums, for studies of cost against size: a chain of coupled pendulums
(constant mass matrix) and the N-link pendulum (a dense mass matrix depending on q).

Chain of N pendulums of mass m and length l, neighbours coupled by torsion springs of
stiffness k (angles q_i from the downward vertical):

    L = sum_i m l^2 v_i^2 / 2 + sum_i m g l cos q_i - sum_i k (q_(i+1) - q_i)^2 / 2.

N-link pendulum: N rods of length l with point masses m at their ends, hinged one to the
next, q_i the absolute angle of rod i from the downward vertical.  With
mu_jk = m (N - max(j, k)) (the mass beyond the later of the two hinges, 0-based j, k):

    M_jk(q) = mu_jk l^2 cos(q_j - q_k),    V(q) = -g l sum_k mu_kk cos q_k.

Written as printed, a kernel evaluates cos(q_j - q_k) (and, differentiated, sin(q_j -
q_k)) for every pair: N(N - 1)/2 arguments besides the N angles.  With
``angle_addition=True`` (the default) the mass matrix is written with
cos(q_j - q_k) = cos q_j cos q_k + sin q_j sin q_k (:func:`angle_addition`), and every
sine and cosine in the kernels is one of the N angles': the count of special-function
calls grows like N, not N^2.  The two forms differ only in rounding.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import sympy as sp

from mpvi.model.mechanics import LagrangianSystem
from mpvi.model.problem import Problem
from mpvi.ground.precision import entry
from mpvi.ground.checks import check_flag

if TYPE_CHECKING:
    import sympy

    from mpvi.ground.types import ExprLike, NumberLike, VectorLike
    from mpvi.numbers.context import Context


@entry
def trig_arguments(exprs: Sequence[ExprLike]) -> set[sympy.Expr]:
    """The distinct arguments of sin and cos in ``exprs``: the number of ``mpfr_sin_cos``
    calls an evaluation of them needs (sin and cos of one argument are one call)."""
    out = set()
    for e in exprs:
        out |= {f.args[0] for f in sp.sympify(e, strict=True).atoms(sp.sin, sp.cos)}
    return out


@entry
def angle_addition(exprs: Sequence[ExprLike]) -> tuple[list[sympy.Expr], int, int]:
    """``exprs`` with sines and cosines of sums and differences expanded by the addition
    theorems (``sympy.expand_trig``) when that lowers the number of distinct trigonometric
    arguments, else unchanged; returns (expressions, arguments before, arguments after).
    The expanded form rounds differently (sin a cos b - cos a sin b instead of sin(a - b)):
    the same value to working precision, not the same bits."""
    exprs = [sp.sympify(e, strict=True) for e in exprs]
    before = len(trig_arguments(exprs))
    expanded = [sp.expand_trig(e) for e in exprs]
    after = len(trig_arguments(expanded))
    return (expanded, before, after) if after < before else (exprs, before, before)


_expand = angle_addition


def _initial(ctx, n, values, default):
    if values is None:
        return np.array([ctx.num(default(i)) for i in range(n)], dtype=ctx.dtype)
    values = ctx.asarray(values)
    if len(values) != n:
        raise ValueError(f"{n} pendulums need {n} initial values, got {len(values)}")
    return values


def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"the number of pendulums must be a positive integer, got {n!r}")
    return int(n)


@entry
def pendulum_chain(ctx: Context, n: int, m: NumberLike = 1, length: NumberLike = 1,
                   g: NumberLike = "9.81", k: NumberLike = 1, q0: VectorLike | None = None,
                   p0: VectorLike | None = None) -> Problem:
    """A chain of ``n`` pendulums coupled by torsion springs (module doc), as a Problem.

    Parameters
    ----------
    ctx : number context
    n : int
        Number of pendulums.
    m, length, g, k : numbers the context reads exactly (or context numbers)
        Mass, length, gravity, coupling stiffness.
    q0, p0 : sequences of n numbers, optional
        Initial angles (default q0_i = (i + 1) / (2 n)) and momenta (default 0).

    Returns
    -------
    mpvi.Problem
    """
    n = _check_n(n)
    q = list(sp.symbols(f"q0:{n}"))
    M_, L_, G_, K_ = sp.symbols("m l g k", positive=True)
    mass = sp.diag(*([M_ * L_ ** 2] * n))
    V = -sum(M_ * G_ * L_ * sp.cos(x) for x in q) + sum(
        K_ * (q[i + 1] - q[i]) ** 2 / 2 for i in range(n - 1))
    system = LagrangianSystem(f"pendulum chain {n}", q, mass, V,
                              {M_: m, L_: length, G_: g, K_: k}, ctx)
    return Problem(system, _initial(ctx, n, q0, lambda i: f"{i + 1}/{2 * n}"),
                   p0=_initial(ctx, n, p0, lambda i: 0), name=f"pendulum chain {n}")


@entry
def n_link_pendulum(ctx: Context, n: int, m: NumberLike = 1, length: NumberLike = 1,
                    g: NumberLike = "9.81", q0: VectorLike | None = None,
                    p0: VectorLike | None = None, angle_addition: bool = True) -> Problem:
    """The ``n``-link pendulum (module doc), as a Problem.

    Parameters
    ----------
    ctx : number context
    n : int
        Number of links.
    m, length, g : numbers the context reads exactly (or context numbers)
        Mass at the end of each rod, rod length, gravity.
    q0, p0 : sequences of n numbers, optional
        Initial absolute angles (default q0_i = (i + 1) / (2 n)) and momenta (default 0).
    angle_addition : bool, default True
        Write cos(q_j - q_k) by the addition theorem (module doc): N sine-cosine pairs per
        node instead of N(N + 1)/2.

    Returns
    -------
    mpvi.Problem
    """
    n = _check_n(n)
    q = list(sp.symbols(f"q0:{n}"))
    M_, L_, G_ = sp.symbols("m l g", positive=True)
    mass = sp.Matrix(n, n, lambda j, k: M_ * (n - max(j, k)) * L_ ** 2 * sp.cos(q[j] - q[k]))
    V = -sum(G_ * L_ * M_ * (n - i) * sp.cos(q[i]) for i in range(n))
    if check_flag(angle_addition, "n_link_pendulum: angle_addition"):  # counted with V: its cos q_i are shared
        *entries, V = _expand(list(mass) + [V])[0]
        mass = sp.Matrix(n, n, entries)
    name = f"{n}-link pendulum"
    system = LagrangianSystem(name, q, mass, V, {M_: m, L_: length, G_: g}, ctx)
    return Problem(system, _initial(ctx, n, q0, lambda i: f"{i + 1}/{2 * n}"),
                   p0=_initial(ctx, n, p0, lambda i: 0), name=name)


__all__ = ["pendulum_chain", "n_link_pendulum", "angle_addition", "trig_arguments"]
