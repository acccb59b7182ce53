"""Errors, convergence orders, invariants, symplecticity and linear stability.

Norm convention (axioms2024 Sec. 6.4, as Table 2 supports it): the error of a trajectory
in q (or p) is  ||e||_inf = max_j |q_j - q_ex(t_j)|_2, the largest *Euclidean* norm of
the error vector over all nodes j = 0..N.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, cast

import numpy as np
import sympy as sp

from mpvi.drive.solution import Solution
from mpvi.model.mechanics import LagrangianSystem
from mpvi.numbers.context import Context, MPContext
from mpvi.methods import get_method
from mpvi.ground.precision import entry
from mpvi.systems.linear import LinearSystem

if TYPE_CHECKING:
    from mpvi.ground.types import Array, ExactSolution, Matrix, NumberLike, Real, Vector, VectorLike
    from mpvi.methods.base import Method


@entry
def node_errors(ctx: Context, values: Sequence[VectorLike], reference: Sequence[VectorLike]
                ) -> Vector:
    """Compute the Euclidean norm of ``values[j] - reference[j]`` for every row j.

    Parameters
    ----------
    ctx : Context
        The number context.
    values : sequence of vectors
        Rows of context numbers.
    reference : sequence of vectors
        Rows of context numbers, one per row of ``values``.

    Returns
    -------
    numpy.ndarray
        The norms ``|values[j] - reference[j]|_2``.

    Raises
    ------
    TypeError
        ``ctx`` not a number context.
    """
    _check_context(ctx, "node_errors")
    return np.array([ctx.norm2(v - r) for v, r in zip(values, reference)], dtype=ctx.dtype)


@entry
def error_norms(sol: Solution, exact: ExactSolution | None = None) -> dict[str, Real]:
    """Compute the largest Euclidean error over the saved points of a solution.

    The norm convention of axioms2024 Sec. 6.4: ``||e||_inf = max_j |q_j - q_ex(t_j)|_2``.

    Parameters
    ----------
    sol : Solution
        The solution (with its problem attached).
    exact : callable, optional
        The exact solution in the protocol of :class:`mpvi.Problem` (t -> (q, p) or
        (q, v), as the problem was given); default: the problem's own.

    Returns
    -------
    dict
        ``{'q': max_j |q_j - q_ex(t_j)|_2, 'p': ..., 'v': ...}`` (first order: ``{'y': ...}``).

    Raises
    ------
    ValueError
        As :meth:`mpvi.Solution.error`: no exact solution, an exact solution that is nan
        or infinite at a saved point (named), or no problem attached; a nan error (never
        dropped by the maximum, never returned).
    TypeError
        ``sol`` not a :class:`mpvi.Solution`.
    """
    _check_solution(sol, "error_norms")
    return {k: _largest(sol.ctx, v) for k, v in sol.error(exact).items()}


def _check_solution(sol, what):
    """Refuse what is not a :class:`mpvi.Solution` (a TypeError naming the argument)."""
    if not isinstance(sol, Solution):
        raise TypeError(f"{what}: sol must be an mpvi.Solution (from mpvi.solve or "
                        f"mpvi.load_solution), got {type(sol).__name__}")


def _check_context(ctx, what):
    """Refuse what is not a number context (a TypeError naming the argument)."""
    if not isinstance(ctx, Context):
        raise TypeError(f"{what}: ctx must be a number context (mpvi.GMPContext, "
                        f"mpvi.MPContext, mpvi.FPContext), got {type(ctx).__name__}")


def _check_mechanical(system, what):
    """Refuse what is not a mechanical system (a TypeError naming the argument)."""
    if not isinstance(system, LagrangianSystem):
        raise TypeError(f"{what}: system must be an mpvi.LagrangianSystem, got "
                        f"{type(system).__name__}")


def _largest(ctx, values):
    """max(values); a nan is refused, naming its point (Python's max keeps or drops a nan
    by its position, and a nan maximum would be a silent answer)."""
    values = list(values)
    for j, x in enumerate(values):
        if x != x:
            raise ValueError(f"the error at saved point {j} is nan (a nan state or reference):"
                             " the largest error is undefined; check the run and the reference")
    return max(values)


@entry
def sup_errors(sol: Solution, q_ref: Sequence[VectorLike], p_ref: Sequence[VectorLike]
               ) -> dict[str, Real]:
    """Compute the largest Euclidean errors against reference values at the saved points.

    For references already sampled on the solution's saved points (e.g. one exact
    evaluation shared by several methods).

    Parameters
    ----------
    sol : Solution
        The solution.
    q_ref : sequence of vectors
        Reference positions, one row per saved point.
    p_ref : sequence of vectors
        Reference momenta, one row per saved point.

    Returns
    -------
    dict
        ``{'q': max_j |q_j - q_ref[j]|_2, 'p': max_j |p_j - p_ref[j]|_2}``.

    Raises
    ------
    TypeError
        ``sol`` not a :class:`mpvi.Solution`.
    ValueError
        A nan error (a nan reference), naming its point.
    """
    _check_solution(sol, "sup_errors")
    ctx = sol.ctx
    return {"q": _largest(ctx, node_errors(ctx, sol.q, q_ref)),
            "p": _largest(ctx, node_errors(ctx, sol.p, p_ref))}


@entry
def fit_order(ctx: Context, hs: Sequence[NumberLike], errors: Sequence[NumberLike]) -> Real:
    """Fit the convergence order: the least-squares slope of log(error) against ``log|h|``.

    Parameters
    ----------
    ctx : Context
        The number context.
    hs : sequence of numbers
        Step sizes (negative steps of a backward integration count by ``|h|``).
    errors : sequence of numbers
        Positive errors, one per step size.

    Returns
    -------
    number
        The order, a number of ``ctx``.

    Raises
    ------
    ValueError
        Fewer than two pairs, unequal lengths, or an error that is not positive.
    TypeError
        ``ctx`` not a number context.
    """
    _check_context(ctx, "fit_order")
    if len(hs) != len(errors) or len(hs) < 2:
        raise ValueError("fit_order needs at least two (h, error) pairs of equal count")
    if any(not e > 0 for e in errors):
        raise ValueError("fit_order needs positive errors (an error of 0 has no logarithm)")
    x = [ctx.log(abs(ctx.num(h))) for h in hs]
    y = [ctx.log(e) for e in errors]
    xm = ctx.fsum(x) / len(x)
    ym = ctx.fsum(y) / len(y)
    return ctx.fsum((a - xm) * (b - ym) for a, b in zip(x, y)) / ctx.fsum((a - xm) ** 2 for a in x)


@entry
def central_differences(f: Callable[[Vector], Any], x: VectorLike, ctx: Context,
                        delta: NumberLike) -> Array:
    """Differentiate an array-valued function by central differences.

    For checking generated derivatives (evaluate ``f`` in a context with more digits
    than the one being checked).

    Parameters
    ----------
    f : callable
        A function of a vector, returning a number or an array.
    x : numpy.ndarray
        The point (a context vector).
    ctx : Context
        The number context.
    delta : number
        The increment.

    Returns
    -------
    numpy.ndarray
        ``out[g, ...] = (f(x + delta e_g) - f(x - delta e_g))[...] / (2 delta)``.
    """
    out = []
    for g in range(len(x)):
        e = ctx.zeros(len(x))
        e[g] = delta
        out.append((np.asarray(f(x + e), dtype=object) - np.asarray(f(x - e), dtype=object))
                   / (2 * delta))
    return np.array(out, dtype=object)


@entry
def energy(system: LagrangianSystem, sol: Solution) -> Vector:
    """Compute the energy H(q_j, p_j) at every saved point.

    Parameters
    ----------
    system : LagrangianSystem
        The mechanical system (its ``energy``).
    sol : Solution
        The solution.

    Returns
    -------
    numpy.ndarray
        The energies, context numbers.

    Raises
    ------
    TypeError
        ``system`` not a :class:`mpvi.LagrangianSystem` or ``sol`` not a
        :class:`mpvi.Solution`.
    """
    _check_mechanical(system, "energy")
    _check_solution(sol, "energy")
    energies = getattr(system, "energies", None)      # a LagrangianSystem's, all points at once
    if energies is not None:
        return cast("Vector", energies(sol.q, sol.p))
    return np.array([system.energy(q, p) for q, p in zip(sol.q, sol.p)], dtype=sol.ctx.dtype)


@entry
def relative_energy_error(system: LagrangianSystem, sol: Solution) -> Vector:
    """Compute the relative energy error ``|H_j - H_0| / |H_0|`` at every saved point.

    Parameters
    ----------
    system : LagrangianSystem
        The mechanical system (its ``energy``).
    sol : Solution
        The solution.

    Returns
    -------
    numpy.ndarray
        The relative errors, context numbers (the first is 0).

    Raises
    ------
    ValueError
        H_0 = 0 (the relative error is undefined: use ``energy(system, sol) - H_0``, the
        absolute error), or an energy that is nan or infinite (naming its point).
    TypeError
        As :func:`energy`.
    """
    H = energy(system, sol)
    ctx = sol.ctx
    for j, x in enumerate(H):
        if not ctx.isfinite(x):
            raise ValueError(f"relative_energy_error: the energy at saved point {j} is {x}: "
                             "the run (or the system given) is not finite there")
    if H[0] == 0:
        raise ValueError("relative_energy_error: the initial energy H_0 is 0, so |H_j - H_0| / "
                         "|H_0| is undefined; use the absolute error energy(system, sol) - H_0 "
                         "or shift V by a constant")
    return np.array([abs(x - H[0]) / abs(H[0]) for x in H], dtype=sol.ctx.dtype)


# ----- symplecticity -------------------------------------------------------------------

@entry
def one_step_matrix(scheme: str | Method, system: LinearSystem, h: NumberLike, ctx: Context,
                    **options: object) -> Matrix:
    """Compute the 2n x 2n matrix Phi of a method's one-step map on a linear system.

    Phi acts on eta = (p, q) (axioms2024 eqs. 12, 32); it is obtained by stepping the unit
    vectors (a (q, v) method is composed with the Legendre map p = M v at both ends).

    Parameters
    ----------
    scheme : str or Method
        A method name or a :class:`mpvi.Method`.
    system : LinearSystem
        A linear system (the map is linear only there), built in ``ctx``.
    h : number
        The step, a number of ``ctx``.
    ctx : Context
        The number context.
    **options
        The method's parameters (and ``check_stability`` for a method that checks a
        bound of its own, :attr:`mpvi.Method.checks_stability`).

    Returns
    -------
    numpy.ndarray
        Phi, 2n x 2n.

    Raises
    ------
    ValueError
        An unknown method; a system whose equations of motion are not linear and
        homogeneous in (q, v, q'') (the one-step map is then no matrix).
    TypeError
        What is not a mechanical system.
    """
    method = get_method(scheme)
    _check_context(ctx, "one_step_matrix")
    if not hasattr(system, "first_order"):
        _check_linear(system, "one_step_matrix")          # not a system: TypeError by name
    stepper = method.prepare(system, h, ctx, **options)
    _check_linear(system, "one_step_matrix")
    n = system.dof
    phi = ctx.zeros((2 * n, 2 * n))
    eye = ctx.eye(2 * n)
    t = ctx.zero
    for k in range(2 * n):
        phi[:n, k], phi[n:, k] = step_pq(method, stepper, system, t, h, eye[k, n:], eye[k, :n])
    return phi


def _check_linear(system, what):
    """Refuse a system whose one-step map is not linear: every component of its residual
    M(q) q'' - r(t, q, v) (with the force) must be a polynomial of degree one, homogeneous, in
    the coordinates, velocities and accelerations (the coefficients may depend on t and the
    parameters); a :class:`mpvi.LinearSystem` is linear by construction."""
    if isinstance(system, LinearSystem):
        return
    model: Any = getattr(system, "model", None)
    if getattr(system, "first_order", True) or not hasattr(model, "symbolic"):
        raise TypeError(f"{what}: system must be a linear mechanical system (mpvi.LinearSystem"
                        f" or a LagrangianSystem with linear equations), got "
                        f"{type(system).__name__}")
    syms = [*system.coords, *system.velocity_symbols, *model.acceleration_symbols]
    for r in model.symbolic("residual")[0]:
        r = sp.expand(r)
        if r == 0:
            continue
        if not (r.is_polynomial(*syms) and sp.Poly(r, *syms).is_homogeneous
                and sp.Poly(r, *syms).total_degree() == 1):
            raise ValueError(f"{what}: {system.name} is not linear (its equation of motion "
                             f"{r} = 0 is not linear and homogeneous in q, v, q''): the one-"
                             "step map is a matrix only on a linear system; use "
                             "one_step_jacobian for its Jacobian at a point")


def step_pq(method, stepper, system, t, h, q, p):
    """One step from (q, p) to (p_1, q_1): a (q, v) method is composed with the Legendre
    map at both ends."""
    if method.state == "qp":
        r = stepper(t, q, p)
        return r.y, r.q
    r = stepper(t, q, system.velocity(q, p, t))
    return system.momentum(r.q, r.y, t + h), r.q


@entry
def one_step_jacobian(scheme: str | Method, make_system: Callable[[Context], LagrangianSystem],
                      h: NumberLike, q: VectorLike, p: VectorLike, ctx: Context,
                      t: NumberLike = 0, **options: object) -> Matrix:
    """Compute the Jacobian d(p_1, q_1)/d(p_0, q_0) of one step of a method.

    On a nonlinear system at the point (q, p), by central differences in a context with
    2 dps + 10 digits and increments 10^-(dps/2 + 5): truncation ~10^-(dps + 10),
    rounding ~10^-(1.5 dps + 5), so the result is correct to the precision of ``ctx``.
    A (q, v) method is composed with the Legendre map at both ends.

    Parameters
    ----------
    scheme : str or Method
        A method name or a :class:`mpvi.Method`.
    make_system : callable
        ``make_system(context)`` builds the system in a given context (the same system at
        two precisions).
    h : number
        The step.
    q : sequence of numbers
        Positions at the point.
    p : sequence of numbers
        Momenta at the point.
    ctx : Context
        An mp context (the precision of the result).
    t : number, default 0
        The time of the step.
    **options
        The method's parameters.

    Returns
    -------
    numpy.ndarray
        The 2n x 2n Jacobian, numbers of ``ctx``.

    Raises
    ------
    ValueError
        For the float64 context (it cannot raise its precision).
    """
    if not ctx.is_mp:
        raise ValueError("one_step_jacobian differentiates at a higher precision: it needs an mp context")
    hi = MPContext(2 * ctx.dps + 10)
    system = make_system(hi)
    method = get_method(scheme)

    def up(x):          # a number of ctx keeps its bits (the step ctx takes); exact input stays exact
        return hi.lift(x) if ctx.is_number(x) else hi.num(x)
    h, t = up(h), up(t)
    stepper = method.prepare(system, h, hi, **options)
    n = system.dof

    def phi(eta):
        return np.concatenate(step_pq(method, stepper, system, t, h, eta[n:], eta[:n]))
    eta = np.concatenate([hi.asarray([up(x) for x in p]), hi.asarray([up(x) for x in q])])
    delta = hi.num(10) ** -(ctx.dps // 2 + 5)
    D = central_differences(phi, eta, hi, delta)          # D[g, i] = d phi_i / d eta_g
    return ctx.asarray([[ctx.num(D[g, i]) for g in range(2 * n)] for i in range(2 * n)])


def canonical_J(n, ctx):
    """J = [[0, -I], [I, 0]] of axioms2024 eq. (33)."""
    eye, zero = ctx.eye(n), ctx.zeros((n, n))
    return np.block([[zero, -eye], [eye, zero]])


@entry
def symplecticity_defect(scheme: str | Method, system: LinearSystem, h: NumberLike, ctx: Context,
                         **options: object) -> Real:
    """Compute the symplecticity defect ``||Phi^T J Phi - J||_F`` of a one-step matrix.

    Of a method's one-step matrix on a linear system (axioms2024 eq. 33); (q, v) methods
    through the Legendre map.

    Parameters
    ----------
    scheme : str or Method
        A method name or a :class:`mpvi.Method`.
    system : LinearSystem
        A linear system built in ``ctx``.
    h : number
        The step.
    ctx : Context
        The number context.
    **options
        The method's parameters, as :func:`one_step_matrix`.

    Returns
    -------
    number
        The defect (about eps for a symplectic method).
    """
    return matrix_defect(one_step_matrix(scheme, system, h, ctx, **options), ctx)


@entry
def matrix_defect(phi: Matrix, ctx: Context) -> Real:
    """Compute ``||Phi^T J Phi - J||_F`` of a 2n x 2n Jacobian on (p, q).

    E.g. of :func:`one_step_jacobian`; J = [[0, -I], [I, 0]] (axioms2024 eq. 33).

    Parameters
    ----------
    phi : numpy.ndarray
        The 2n x 2n matrix.
    ctx : Context
        The number context.

    Returns
    -------
    number
        The Frobenius norm of the defect.
    """
    J = canonical_J(phi.shape[0] // 2, ctx)
    return ctx.norm_fro(phi.T @ J @ phi - J)


# ----- linear stability ---------------------------------------------------------------

@entry
def stability_scan(scheme: str | Method, omega_h: Iterable[NumberLike], ctx: Context,
                   **options: object) -> list[tuple[Real, Real, Real, bool]]:
    """Scan the spectral radius of a method's one-step matrix on the scalar oscillator.

    q'' + q = 0 (M = 1, K = 1, so h = omega h), for each value of omega h.  The steps are
    prepared with ``check_stability=False`` where the method checks a bound of its own:
    Simpson's proven bound is not enforced here.

    Parameters
    ----------
    scheme : str or Method
        A method name or a :class:`mpvi.Method`.
    omega_h : iterable of numbers
        The values of omega h.
    ctx : Context
        The number context.
    **options
        The method's parameters (e.g. ``hermite_n=3``).

    Returns
    -------
    list of rows ``(omega_h, rho, half_trace, stable)``
        ``stable`` means rho <= 1 + sqrt(eps) and distinct eigenvalues (a double
        eigenvalue on the unit circle is a Jordan block: linear growth).

    Raises
    ------
    TypeError
        ``omega_h`` not a sequence, ``ctx`` not a number context.
    """
    _check_context(ctx, "stability_scan")
    if isinstance(omega_h, (str, bytes)) or not isinstance(omega_h, Iterable):
        raise TypeError(f"stability_scan: omega_h must be a sequence of numbers, got "
                        f"{omega_h!r}")
    osc = LinearSystem([[1]], [[1]], ctx, name="scalar oscillator")
    tol = ctx.sqrt(ctx.eps)
    if get_method(scheme).checks_stability:
        options = {**options, "check_stability": False}
    rows = []
    for wh in omega_h:
        wh = ctx.num(wh)
        phi = one_step_matrix(scheme, osc, wh, ctx, **options)
        lam = ctx.eigvals(phi)
        rho = max(abs(z) for z in lam)
        distinct = abs(lam[0] - lam[1]) > tol
        rows.append((wh, rho, (phi[0, 0] + phi[1, 1]) / 2, bool(rho <= 1 + tol and distinct)))
    return rows
