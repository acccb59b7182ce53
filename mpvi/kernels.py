"""Generated Newton kernels: residual and Jacobian of one implicit step in one function.

The reference path of an implicit scheme (:mod:`mpvi.schemes.variational`,
:mod:`mpvi.schemes.mutze`) evaluates the system's derivatives node by node and assembles
the Newton residual and Jacobian with numpy object arrays: clear, checked against finite
differences, and slow at 64 digits (most of the time goes into Python-level array
bookkeeping, not into arithmetic).  A *kernel* is the same computation written out once,
symbolically:

1. the scheme states its residual as sympy expressions in the unknowns ``X``, in the
   step's numeric inputs ``K`` (known state, the coefficients of its tables, node times)
   and in the system's parameters ``P``;
2. sympy differentiates the residual with respect to ``X`` (the Jacobian), eliminates
   common subexpressions of residual and Jacobian together (``cse``) and ``lambdify``
   prints one Python function calling the context's own functions
   (:meth:`mpvi.context.Context.namespace`);
3. Newton (:func:`newton`) runs on plain lists with a small dense solver
   (:func:`solve_dense`) at context precision, with the stopping rule of
   :func:`mpvi.newton.solve_info`, so the iteration counts are those of the reference path.

A kernel depends on the system (its expressions and its context) and on the *structure*
of the scheme (which table entries are nonzero), never on the step size: the numbers
enter through ``K``.  Kernels are built once and cached on the system
(``system._pieces``), so a sweep over step sizes builds each kernel once.

Which path a context takes is its attribute ``kernels``: True for the gmpy2 context
(``get_context("gmp")``), False for the mpmath reference and float64.  Setting it on an
instance (``ctx.kernels = True``) runs the kernels in that context; the tests use this to
check kernel against reference in the same context.
"""
from __future__ import annotations

from fractions import Fraction
from itertools import chain

import numpy as np
import sympy as sp

from .context import SingularMatrixError
from .mechanics import TIME as TIME_SYMBOL, _ContextPrinter, compile_exprs
from .newton import DEFAULT_MAX_ITER, NewtonError, _short, tolerance


def _hoist_rationals(expr, constants):
    """``expr`` with every non-integer rational coefficient replaced by a symbol (recorded
    in ``constants``): the generated code then reads a context number computed once
    instead of dividing two numbers at every call.  Exponents are left alone (x**(1/2)
    stays a square root)."""
    if expr.is_Rational and not expr.is_Integer:
        if expr not in constants:
            constants[expr] = sp.Symbol(f"_r{len(constants)}")
        return constants[expr]
    if expr.is_Pow:
        return sp.Pow(_hoist_rationals(expr.base, constants), expr.exp)
    if expr.is_Atom or not expr.args:
        return expr
    return expr.func(*(_hoist_rationals(a, constants) for a in expr.args))


def generate(arg_groups, exprs, ctx, name="kernel"):
    """One Python function ``name(*groups)`` returning the list ``exprs`` evaluated with
    ``ctx``'s functions: common subexpressions eliminated (``sympy.cse``), rational
    constants precomputed in the context.  Each argument is a list unpacked into the
    symbols of its group.  (``sympy.lambdify`` does the same but spends most of its time
    re-substituting symbols; on a Hermite kernel this takes 0.3 s instead of 8 s.)"""
    # Arguments, constants and subexpressions get fixed names (not Dummies, whose sort
    # keys depend on how many were made before): sympy's canonical order of terms, and so
    # the order of the generated operations and their rounding, is then the same in every
    # process -- a run on a worker gives the bytes of a serial run.
    subs, groups = {}, []
    for g, group in enumerate(arg_groups):
        fixed = [sp.Symbol(f"_a{g}_{i}") for i in range(len(group))]
        subs.update(zip(group, fixed))
        groups.append(fixed)
    exprs = [sp.sympify(e).xreplace(subs) for e in exprs]
    free = set().union(*(e.free_symbols for e in exprs)) - set(subs.values())
    if free:
        raise ValueError(f"generate {name}: symbols {sorted(map(str, free))} are not "
                         "arguments (or collide with the generated names _a*, _c*, _r*)")
    constants = {}
    exprs = [_hoist_rationals(e, constants) for e in exprs]
    replacements, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("_c"), order="none")
    pr = _ContextPrinter()
    lines = [f"def {name}({', '.join(f'_a{i}' for i in range(len(groups)))}):"]
    for i, group in enumerate(groups):
        if group:
            lines.append(f"    [{', '.join(pr.doprint(d) for d in group)}] = _a{i}")
    lines += [f"    {pr.doprint(sym)} = {pr.doprint(e)}" for sym, e in replacements]
    lines.append(f"    return [{', '.join(pr.doprint(e) for e in reduced)}]")
    ns = ctx.namespace()
    ns.update({pr.doprint(d): ctx.num(Fraction(int(r.p), int(r.q))) for r, d in constants.items()})
    exec(compile("\n".join(lines), f"<mpvi generated {name}>", "exec"), ns)
    return ns[name]


class Kernel:
    """``both(X, K, P)`` -> residual followed by the Jacobian's rows (flat list) and
    ``residual(X, K, P)`` -> residual, generated from sympy expressions; ``outputs(X, K, P)``
    -> further expressions of the converged step (e.g. the new momentum), if any."""

    def __init__(self, X, K, P, residual, ctx, outputs=()):
        self.n = len(X)
        if len(residual) != self.n:
            raise ValueError(f"a kernel needs as many equations as unknowns, got "
                             f"{len(residual)} and {self.n}")
        jac = [sp.diff(r, x) for r in residual for x in X]
        args = [list(X), list(K), list(P)]
        self.both = generate(args, list(residual) + jac, ctx, "residual_and_jacobian")
        self.residual = generate(args, list(residual), ctx, "residual")
        self.outputs = generate(args, list(outputs), ctx, "outputs") if outputs else None


_KERNELS = {}
"""Every kernel built in this process, keyed by (context, system expressions, scheme
structure): systems built again with the same expressions (a sweep over a
parameter, a new instance per run) reuse it; parameter values are inputs."""


def _signature(system):
    """What a kernel of ``system`` depends on: its symbolic L, F, symbols and parameters."""
    return (system.lagrangian_expr, tuple(system.force_expr), tuple(system.coords),
            tuple(system.velocity_symbols), tuple(system.param_symbols))


def cached_kernel(system, key, build):
    """The kernel ``key`` of ``system`` in its context (built by ``build()`` on first use,
    then shared by every system with the same expressions in a context of the same name:
    generated code binds the context's functions and constants, e.g. pi, at its precision)."""
    full = (system.ctx.key, _signature(system)) + tuple(key)
    if full not in _KERNELS:
        _KERNELS[full] = build()
    return _KERNELS[full]


def solve_dense(a, b, ctx):
    """Solve ``a x = b`` for lists (``a`` a list of rows, consumed) by Gaussian elimination
    with partial pivoting, at context precision.  The pivot threshold is that of
    :meth:`mpvi.context.Context.solve` (``n eps max|a|``): below it
    :class:`SingularMatrixError` is raised."""
    n = len(b)
    b = list(b)
    scale = max(map(abs, chain.from_iterable(a)))
    if scale == 0:
        raise SingularMatrixError("solve: the matrix is zero")
    tiny = n * ctx.eps * scale
    for k in range(n):
        column = [abs(a[i][k]) for i in range(k, n)]
        big = max(column)
        piv = k + column.index(big)
        if big <= tiny:
            raise SingularMatrixError(
                f"solve: matrix is singular to working precision (pivot "
                f"{ctx.to_str(big, 5)} at column {k}, threshold n*eps*max|a| = "
                f"{ctx.to_str(tiny, 5)})")
        if piv != k:
            a[k], a[piv] = a[piv], a[k]
            b[k], b[piv] = b[piv], b[k]
        rk, pk = a[k], a[k][k]
        for i in range(k + 1, n):
            ri = a[i]
            f = ri[k] / pk
            if f != 0:
                for j in range(k + 1, n):
                    ri[j] -= f * rk[j]
                b[i] -= f * b[k]
    x = [None] * n
    for i in range(n - 1, -1, -1):
        ri = a[i]
        s = b[i]
        for j in range(i + 1, n):
            s -= ri[j] * x[j]
        x[i] = s / ri[i]
    return x


def newton(kernel, X, K, P, ctx, *, scale=None, rtol=None, max_iter=DEFAULT_MAX_ITER, what=""):
    """Newton's method on lists with ``kernel``; returns (X, iterations, final residual
    norm) with the stopping rule of :func:`mpvi.newton.solve_info` (update below
    ``rtol max(|X|, scale)``, or a contracting iteration whose predicted next update is
    below eps), so both paths take the same iterations."""
    rtol = tolerance(ctx) if rtol is None else ctx.num(rtol)
    scale = ctx.one if scale is None else scale
    n, eps = kernel.n, ctx.eps
    dn = None
    for it in range(1, max_iter + 1):
        out = kernel.both(X, K, P)
        jac = [out[n + i * n:n + (i + 1) * n] for i in range(n)]
        try:
            dx = solve_dense(jac, [-r for r in out[:n]], ctx)
        except SingularMatrixError as e:
            raise NewtonError(f"singular Jacobian ({e})", residual=max(abs(r) for r in out[:n]),
                              iterations=it, what=what) from None
        X = [x + d for x, d in zip(X, dx)]
        previous, dn = dn, max(map(abs, dx))
        if not ctx.isfinite(dn):
            raise NewtonError("the iteration produced a non-finite value", iterations=it, what=what)
        xn = max(max(map(abs, X)), scale)
        if dn <= rtol * xn or (previous is not None and 2 * dn <= previous
                               and dn ** 3 <= eps * xn * previous ** 2):
            return X, it, max(map(abs, kernel.residual(X, K, P)))
    raise NewtonError(f"no convergence to the relative tolerance {_short(rtol)} "
                      f"(last update {_short(dn)})",
                      residual=max(abs(r) for r in kernel.residual(X, K, P)),
                      iterations=max_iter, what=what)


# ----- list-based pieces of the explicit parts ------------------------------------------------

def acceleration(system, t, q, v):
    """a = q'' (as :meth:`mpvi.mechanics.LagrangianSystem.acceleration`) on lists: the
    system's compiled L_vv and right-hand side, then :func:`solve_dense`."""
    n, ctx = system.dof, system.ctx
    vals = system._acceleration_parts(t, q, v, system.param_values)
    rows = [vals[i * n:(i + 1) * n] for i in range(n)]
    try:
        return solve_dense(rows, vals[n * n:], ctx)
    except SingularMatrixError:             # the reference path raises, naming the point
        return list(system.acceleration(t, np.array(q, dtype=object), np.array(v, dtype=object)))


SYMBOLIC_INVERSE_DOF = 3
"""Up to this many degrees of freedom the Hamiltonian field solves M v = p symbolically
(adjugate over determinant, CSE'd with the rest); beyond, :func:`solve_dense`."""


def hamiltonian_field(system):
    """f(t, y) = (q', p') for y = (q, p) as plain lists: v = M(q)^-1 p and
    p' = dL/dq(q, v) + F(t, q, v) from one generated function.  Up to
    :data:`SYMBOLIC_INVERSE_DOF` degrees of freedom v = adj(M) p / det M is part of the
    generated code; the step falls back to the reference field (which raises
    :class:`SingularMatrixError` naming q) when |det M| <= n eps prod_i sum_j |M_ij|
    (Hadamard's bound), i.e. when M is singular to working precision.  None when the
    system is not of the M, V form (its velocity needs Newton: the reference field is
    used)."""
    if getattr(system, "mass_expr", None) is None:
        return None
    n, ctx = system.dof, system.ctx
    params = system.param_values
    symbolic = n <= SYMBOLIC_INVERSE_DOF

    def build():
        p = sp.symbols(f"p0:{n}", cls=sp.Dummy)
        G = [g + f for g, f in zip(system._G, system.force_expr)]
        if not symbolic:
            return generate(system._txvp, G, ctx, "force")
        M = sp.Matrix(system.mass_expr)
        det = M.det(method="berkowitz")
        v = list(M.adjugate() * sp.Matrix(p) / det)
        Gv = [g.xreplace(dict(zip(system.velocity_symbols, v))) for g in G]
        return generate([[TIME_SYMBOL], system.coords, p, system.param_symbols],
                        [det] + list(M) + v + Gv, ctx, "hamiltonian_field")
    fun = cached_kernel(system, ("hamiltonian field", symbolic), build)
    mass = system._mass
    eps_n = n * ctx.eps

    def reference(t, y):                     # raises, naming q, when M is singular
        y = np.array(y, dtype=object)
        return list(np.concatenate(system.hamiltonian_rhs(y[:n], y[n:], t)))

    def f_symbolic(t, y):
        try:
            out = fun([t], y[:n], y[n:], params)
        except ZeroDivisionError:                # mpmath raises where MPFR gives inf
            return reference(t, y)
        bound = eps_n
        for i in range(n):
            bound *= sum(map(abs, out[1 + i * n:1 + (i + 1) * n]))
        if not abs(out[0]) > bound:
            return reference(t, y)
        return out[1 + n * n:]

    def f_dense(t, y):
        q, p = y[:n], y[n:]
        m = mass(q, params)
        try:
            v = solve_dense([m[i * n:(i + 1) * n] for i in range(n)], p, ctx)
        except SingularMatrixError:
            return reference(t, y)
        return v + fun([t], q, v, params)
    return f_symbolic if symbolic else f_dense


def rk4_step(f, t, y, h):
    """:func:`mpvi.ode.rk4_step` on lists (the same operations in the same order)."""
    half = h / 2
    k1 = f(t, y)
    k2 = f(t + half, [a + b * half for a, b in zip(y, k1)])
    k3 = f(t + half, [a + b * half for a, b in zip(y, k2)])
    k4 = f(t + h, [a + b * h for a, b in zip(y, k3)])
    h6 = h / 6
    return [a + (b1 + 2 * (b2 + b3) + b4) * h6 for a, b1, b2, b3, b4 in zip(y, k1, k2, k3, k4)]


def gbs_step(f, t, y, H, levels, ctx):
    """:func:`mpvi.ode.gbs_step` on lists (the same operations in the same order)."""
    f0 = f(t, y)
    table = []
    seq = [2 * (i + 1) for i in range(levels)]
    for i, n_i in enumerate(seq):
        h = H / n_i
        z_prev, z = y, [a + b * h for a, b in zip(y, f0)]
        two_h = 2 * h
        for m in range(1, n_i):
            z_prev, z = z, [a + b * two_h for a, b in zip(z_prev, f(t + m * h, z))]
        row = [z]
        for j in range(i):
            ratio = ctx.num(n_i * n_i) / (seq[i - j - 1] * seq[i - j - 1]) - 1
            row.append([a + (a - b) / ratio for a, b in zip(row[j], table[i - 1][j])])
        table.append(row)
    return table[-1][-1]
