"""One engine for every trial-function scheme: discrete action (variational) or weighted
residual (Galerkin / Petrov-Galerkin) on one step.

A :class:`Discretization` is a trial basis and a quadrature rule
(:mod:`mpvi.methods.quadrature`): on [t_j, t_j + h] the trajectory is
x(t_j + tau h) = sum_i phi_i(tau) h^(d_i) c_i, and at the quadrature nodes tau_k

    x_k = sum_i a_ki c_i,   g_k = x'(t_k) = sum_i b_ki c_i,   x''(t_k) = sum_i e_ki c_i,

a_ki = phi_i(tau_k) h^(d_i), b_ki = phi_i'(tau_k) h^(d_i - 1), e_ki = phi_i''(tau_k) h^(d_i - 2).

**Variational** (:class:`VariationalMethod`): the discrete action

    S_d(c) = h sum_k w_k L(t_k, x_k, g_k)

with the discrete forces f_i = h sum_k w_k a_ki F(t_k, x_k, g_k) (the virtual work of F
along the trial variation: Lagrange-d'Alembert, Marsden & West 2001 Sec. 3.2; hermite
eqs. (19)-(23)); the equations are dS_d/dc_e + f_e = 0 for the chosen slots e, with the
momentum p_j added on the equation of the left end for (q, p) methods (top2025 eq. (13)),
and p_{j+1} = dS_d/dc_right + f_right (eq. (14)).  Derivatives, with (P, G, L_vv, B, A) the
derivatives of L at node k (:mod:`mpvi.model.mechanics`) and G including F:

    dS_d/dc_i      = sum_k w_k (h a_ki G_k + h b_ki P_k),
    d2S_d/dc_i dc_j = sum_k w_k h (a_ki a_kj A_k + a_ki b_kj B_k + b_ki a_kj B_k^T
                                   + b_ki b_kj L_vv,k),

which is the Newton Jacobian (derived here; the printed one of top2025 App. A has index
typos and a -1/2 for -h/2, and its F_q doubles the h-terms: reproductions/ERRATA.md
[E20]-[E24]).  The tests check both against finite differences.

**Galerkin** (:class:`GalerkinMethod`): with the residual of the equations of motion
R(t, x, x', x'') = d/dt dL/dv - dL/dq - F and test functions psi_m(tau),

    h sum_k w_k psi_m(tau_k) R(t_k, x_k, g_k, x''_k) = 0,     m = 1..(number of unknowns),

(hermite eq. (26)); test functions equal to the trial functions give Bubnov-Galerkin,
others Petrov-Galerkin.

Newton (:mod:`mpvi.numbers.newton`) solves for the unknown slots; its first guess is the previous
step's trial function extrapolated to this step (the ``carry``), or, on a first step,
x(t_j) + v_j (t - t_j).  Instances: ``SIMPSON`` (top2025 Sec. 2: P2 through q_j,
q_{j+1/2}, q_{j+1} with Simpson's rule = 3-point Lobatto), ``MIDPOINT`` (App. B: P1 with
the 1-point Gauss rule), :func:`lobatto` (any number of points; Lobatto IIIA-IIIB).
"""
from __future__ import annotations

from fractions import Fraction as Fr
from functools import cached_property, lru_cache

import numpy as np
import sympy as sp

from mpvi.engines import kernels
from mpvi.methods.declarations import Discretization, GalerkinMethod, VariationalMethod
from mpvi.engines.dense import TrialBasis
from mpvi.numbers.linalg import linear_combination
from mpvi.numbers.newton import check_options, solve_info
from mpvi.model.singular import singularities
from mpvi.methods.quadrature import (gauss_legendre, gauss_lobatto, lagrange_basis,
                                     reduce_algebraic, to_context)
from mpvi.methods.base import StepResult, check_count


def lagrange_discretization(name, points, quadrature):
    return Discretization(name, lagrange_basis(tuple(Fr(p) for p in points)), quadrature)


SIMPSON = lagrange_discretization("simpson", (0, Fr(1, 2), 1), gauss_lobatto(3))
MAX_LOBATTO_POINTS = 24
"""The most Lobatto points mpvi builds a step for (order 46)."""

MIDPOINT = lagrange_discretization("midpoint", (0, 1), gauss_legendre(1))


def lobatto(points):
    """The Lobatto variational integrator with ``points`` points: P_(points-1) trial
    functions through equispaced points, ``points``-point Gauss-Lobatto quadrature; order
    2 (points - 1) (Marsden & West 2001, Sec. 2.6; Hairer-Lubich-Wanner VI.6)."""
    points = check_count(points, "a Lobatto scheme's number of points", 2, MAX_LOBATTO_POINTS,
                         "building its step grows as points^3.4 (16 points: about 25 s for one "
                         "degree of freedom on a 2-core machine; 24: about 90 s)")
    return lagrange_discretization(f"lobatto{points}", [Fr(i, points - 1) for i in range(points)],
                                   gauss_lobatto(points))


@lru_cache(maxsize=None)
def _exact_tables(disc, second_derivatives):
    """The exact (sympy) coefficients of a discretization, independent of h and of the
    context: per node k the values phi_i(tau_k), phi_i'(tau_k), w_k phi_i'(tau_k) (and
    phi_i''(tau_k)), None where exactly zero; the extrapolation values.  Computed once per
    discretization (at Gauss nodes, algebraic numbers make this the costly part)."""
    basis, quad = disc.basis, disc.quadrature
    slots = range(len(basis))

    def nz(x):                                 # x from Basis.values: zero is literally 0
        return None if x == 0 else x
    rows = []
    for w, tau in zip(quad.weights, quad.nodes):
        a = [nz(x) for x in basis.values(tau)]
        b = [nz(x) for x in basis.values(tau, 1)]
        wb = [None if x is None else reduce_algebraic(w * x) for x in b]
        e = [nz(x) for x in basis.values(tau, 2)] if second_derivatives else None
        rows.append((a, b, wb, e))
    ext = [[basis.value(i, 1 + u.tau, u.derivative) for i in slots] for u in basis.slots]
    return tuple(quad.weights), tuple(quad.nodes), rows, ext


_CONTEXT_TABLES = {}


def _context_tables(disc, second_derivatives, ctx):
    """:func:`_exact_tables` as numbers of ``ctx`` (cached per context, see
    :attr:`mpvi.numbers.context.Context.key`)."""
    key = (disc, second_derivatives, ctx.key)
    if key not in _CONTEXT_TABLES:
        w, nodes, rows, ext = _exact_tables(disc, second_derivatives)

        def conv(values):
            return None if values is None else [None if x is None else to_context(x, ctx)
                                                for x in values]
        _CONTEXT_TABLES[key] = ([to_context(x, ctx) for x in w], [to_context(x, ctx) for x in nodes],
                                [tuple(conv(v) for v in row) for row in rows],
                                [conv(r) for r in ext])
    return _CONTEXT_TABLES[key]


class StepTables:
    """The coefficients of a discretization for one step size h, at context precision."""

    def __init__(self, disc, h, ctx, second_derivatives=False):
        basis = disc.basis
        self.h, self.ctx, self.nslots = h, ctx, len(basis)
        d = [s.derivative for s in basis.slots]

        def scaled(x, k):
            """A context coefficient times h^k."""
            if k == 0:
                return x
            if k == -1:
                return x / h
            return x * h ** k if k > 0 else x / h ** (-k)
        w, nodes, rows, ext = _context_tables(disc, second_derivatives, ctx)
        self.hw = [h * x for x in w]
        self.tau_h = [x * h for x in nodes]
        self.x_terms, self.g_terms, self.G_terms, self.P_terms, self.e_terms = [], [], [], [], []
        for k, (a, b, wb, e) in enumerate(rows):
            av = [(i, scaled(x, d[i])) for i, x in enumerate(a) if x is not None]
            self.x_terms.append(av)
            self.g_terms.append([(i, scaled(x, d[i] - 1)) for i, x in enumerate(b) if x is not None])
            self.G_terms.append([(i, self.hw[k] * x) for i, x in av])
            self.P_terms.append([(i, scaled(x, d[i])) for i, x in enumerate(wb) if x is not None])
            if second_derivatives:
                self.e_terms.append([(i, scaled(x, d[i] - 2)) for i, x in enumerate(e)
                                     if x is not None])
        # extrapolation: slot u of the next step from this step's coefficients,
        # c_u = sum_i phi_i^(r_u)(1 + tau_u) h^(d_i - r_u) c_i
        self.extrapolation = [[scaled(x, d[i] - u.derivative) for i, x in enumerate(row)]
                              for u, row in zip(basis.slots, ext)]

    def nodes(self, coeffs):
        xs = [sum(coeffs[i] * a for i, a in terms) for terms in self.x_terms]
        gs = [sum(coeffs[i] * c for i, c in terms) for terms in self.g_terms]
        return xs, gs

    def node_times(self, t):
        return [t + th for th in self.tau_h]


class DiscreteLagrangian:
    """S_d of a discretization for one system and step h, with its gradient and Hessian
    (see the module doc); ``coeffs`` are the slot coefficient vectors."""

    def __init__(self, system, disc, h, ctx):
        self.system, self.disc, self.h, self.ctx = system, disc, h, ctx
        self.tables = StepTables(disc, h, ctx)
        self.npts = self.tables.nslots

    def value(self, coeffs, t=None):
        """S_d(c) (for tests)."""
        tb, sys = self.tables, self.system
        xs, gs = tb.nodes(coeffs)
        ts = tb.node_times(self.ctx.zero if t is None else t)
        return sum(hw * sys.lagrangian(x, g, tk) for hw, x, g, tk in zip(tb.hw, xs, gs, ts))

    def gradient(self, coeffs, t=None, full=False, rows=None, cols=None):
        """[dS_d/dc_i + f_i for each slot i]; with ``full`` also the Hessian blocks
        H[i][j] = d(dS_d/dc_i + f_i)/dc_j for i in ``rows``, j in ``cols`` (default all)."""
        sys, ctx, tb = self.system, self.ctx, self.tables
        xs, gs = tb.nodes(coeffs)
        n = sys.dof
        grad = [ctx.zeros(n) for _ in range(self.npts)]
        if full:
            rows = range(self.npts) if rows is None else rows
            cols = range(self.npts) if cols is None else cols
            hess = {(i, j): ctx.zeros((n, n)) for i in rows for j in cols}
        timed = sys.has_force or sys.time_dependent
        for k, (x, g) in enumerate(zip(xs, gs)):
            tk = (t if t is not None else ctx.zero) + tb.tau_h[k] if timed else None
            if full:
                P, G, Pv, Gv, Gx = sys.node_derivatives(x, g, tk)
                Px = Gv.T                      # dP_g/dx^d = d2L/dv^g dx^d = B[d, g]
            else:
                P, G = sys.node_gradient(x, g, tk)
            if sys.has_force:                  # G + F: the force acts where dL/dq does
                if full:
                    F, Fq, Fv = sys.force_derivatives(tk, x, g)
                    Gx, Gv = Gx + Fq, Gv + Fv
                else:
                    F = sys.force(tk, x, g)
                G = G + F
            for i, coef in tb.G_terms[k]:
                grad[i] = grad[i] + G * coef
            for i, coef in tb.P_terms[k]:
                grad[i] = grad[i] + P * coef
            if not full:
                continue
            # d/dc_j of (G_k, P_k) = (Gx a_kj + Gv b_kj, Px a_kj + Pv b_kj)
            for terms, dx, dv in ((tb.G_terms[k], Gx, Gv), (tb.P_terms[k], Px, Pv)):
                for i, coef in terms:
                    for j, a in tb.x_terms[k]:
                        if (i, j) in hess:
                            hess[i, j] = hess[i, j] + dx * (coef * a)
                    for j, c in tb.g_terms[k]:
                        if (i, j) in hess:
                            hess[i, j] = hess[i, j] + dv * (coef * c)
        return (grad, hess) if full else grad


class _TrialStepper:
    """What the variational and Galerkin steppers share: slots, the first guess, the
    split of the Newton vector, the output."""

    def __init__(self, method, system, h, ctx, newton):
        self.method, self.system, self.ctx = method, system, ctx
        self.h = h
        self.newton = check_options(newton, ctx)
        slots = method.disc.basis.slots
        self.slots = slots
        self.known = [i for i, s in enumerate(slots) if s.tau == 0 and s.derivative <= method.known_derivative]
        self.unknown = [i for i in range(len(slots)) if i not in self.known]
        self.q1 = slots.index((Fr(1), 0))
        self.v1 = slots.index((Fr(1), 1)) if (Fr(1), 1) in slots else None
        self.start = {i: ctx.num(s.tau) * self.h for i, s in enumerate(slots) if s.derivative == 0}
        self.n = system.dof
        self.kernel = None                 # set by the subclass when ctx.kernels
        self._carried = (None, None)       # (the last step's coefficients, flat): kernel_step
        self.trial_basis = TrialBasis.of(method.disc.basis, ctx)
        found = singularities(system)
        self.singular = found if len(found) else None
        self.checks_inside = self.singular is not None
        """Whether a step reports the singular factors at its quadrature nodes (``guards``
        of :class:`~mpvi.methods.base.StepResult`): :func:`mpvi.solve` then skips its own
        check at the chord midpoint."""

    dense = "trial"
    """Dense output: the step's trial function where its degree reaches the method's
    order, else Hermite interpolation of that order (:mod:`mpvi.engines.dense`); the carry of a
    step is its coefficient vectors."""

    def diagnose(self, t, known, X):
        """The likely cause of a Newton failure at the iterate X: what is not finite or
        singular at the first quadrature node where something is (None if nothing is)."""
        try:
            coeffs = self.assemble(known, np.asarray(X))
            xs, gs = self.tables.nodes(coeffs)
            times = self.tables.node_times(t)
        except (ArithmeticError, ValueError, TypeError):
            return None
        for k, (x, g, tk) in enumerate(zip(xs, gs, times)):
            found = self.system.diagnose(tk, np.asarray(x, dtype=object), np.asarray(g, dtype=object))
            if found:
                return f"at quadrature node {k} of the step: {found}"
        return None

    # ----- the generated-kernel path (mpvi.engines.kernels) -------------------------------------------
    def _symbols(self):
        """sympy symbols of one step: the unknowns X (flat), the known slot vectors, and
        the coefficient vectors c_i of every slot (known or unknown) as lists."""
        n = self.n
        X = sp.symbols(f"X0:{len(self.unknown) * n}", cls=sp.Dummy)
        known = [sp.symbols(f"k{i}_0:{n}", cls=sp.Dummy) for i in self.known]
        coeffs = [None] * len(self.slots)
        for i, c in zip(self.known, known):
            coeffs[i] = list(c)
        for k, i in enumerate(self.unknown):
            coeffs[i] = list(X[k * n:(k + 1) * n])
        return X, [s for c in known for s in c], coeffs

    @staticmethod
    def _table_symbols(prefix, table, values):
        """Symbols for the nonzero entries of a (node -> [(slot, number)]) table, with
        their numbers appended to ``values``; returns node -> [(slot, symbol)]."""
        out = []
        for k, terms in enumerate(table):
            row = []
            for i, x in terms:
                sym = sp.Dummy(f"{prefix}{k}_{i}")
                values.append(x)
                row.append((i, sym))
            out.append(row)
        return out

    @staticmethod
    def _structure(*tables):
        return tuple(tuple(tuple(i for i, _ in terms) for terms in table) for table in tables)

    def _node_stages(self, coeffs, k, tables, stages):
        """Node symbols of node k, one vector per (node -> [(slot, coefficient symbol)])
        table (values x_k, derivatives x'_k, ...), defined by stages appended to
        ``stages`` as linear combinations of the slot coefficient vectors."""
        out = []
        for name, table in tables:
            syms = kernels.node_symbols(f"{name}{k}_", self.n)
            for d, sym in enumerate(syms):
                stages.append((sym, sum((coeffs[i][d] * c for i, c in table[k]), sp.Integer(0))))
            out.append(syms)
        return out

    def _jacobian_blocks(self, rows, blocks):
        """The Newton Jacobian as rows of expressions from ``blocks`` {(row slot, unknown
        slot): n x n expressions} in the order of the residual (rows) and X (unknowns)."""
        n, zero = self.n, sp.Integer(0)
        jac = []
        for e in rows:
            for r in range(n):
                jac.append([blocks[e, j][r][c] if (e, j) in blocks else zero
                            for j in self.unknown for c in range(n)])
        return jac

    @staticmethod
    def _add_block(blocks, key, scale, matrix):
        """blocks[key] += scale * matrix (n x n nested lists of expressions)."""
        add = [[scale * x for x in row] for row in matrix]
        if key in blocks:
            blocks[key] = [[a + b for a, b in zip(r1, r2)] for r1, r2 in zip(blocks[key], add)]
        else:
            blocks[key] = add

    def _guard_outputs(self, nodes, times):
        """The system's singular factors at each quadrature node (node symbols ``nodes``
        [(x_k, x'_k)], times ``times``), as kernel outputs: a step reports their values at
        the points where it evaluated the system (:mod:`mpvi.model.singular`)."""
        if self.singular is None:
            return []
        return [e for k, (xk, gk) in enumerate(nodes)
                for e in kernels.at_node(self.system, self.singular.factors, xk, gk, times[k])]

    @property
    def _guard_key(self):
        return () if self.singular is None else tuple(map(str, self.singular.factors))

    def _node_guards(self, t, coeffs, out):
        """The singular factors at the quadrature nodes of the converged step, node after
        node in one list: the kernel's outputs ``out``, or evaluated here (reference path,
        ``out`` None); None without singular factors."""
        if self.singular is None:
            return None
        if out is not None:
            return out
        xs, gs = self.tables.nodes(coeffs)
        return [x for tk, xk, gk in zip(self.tables.node_times(t), xs, gs)
                for x in self.singular.values(tk, xk, gk)]

    def kernel_step(self, t, q, y, carry, known, outputs):
        """One step by the generated kernel: Newton on lists, the coefficients as one array
        (a row per slot: the step's carry), the new y, and the singular factors at the
        quadrature nodes (None without any)."""
        ctx = self.ctx.activate()
        n = self.n

        def X0():
            return [x for g in self.first_guess(t, q, y, carry) for x in g]
        extrapolate = None
        if carry is not None and self.kernel.newton is not None:
            E, m = self._extrapolation
            flat = self._carried[1] if carry is self._carried[0] else None
            if flat is None and m == len(carry) and all(len(c) == n for c in carry):
                flat = [x for c in carry for x in c]
            if flat is not None:
                extrapolate = (flat, E, m)
        known_lists = [kernels._entries(c) for c in known]
        K = self.kernel_inputs(t, q, y, known_lists)
        X, iterations, residual, out = self.kernel.solve(
            X0, K, self.system.param_values, ctx, extrapolate=extrapolate,
            what=self.method.disc.name,
            diagnose=lambda X: self.diagnose(t, known, np.array(X, dtype=object)),
            outputs=True, **self.newton)
        flat = self._flat(known_lists, list(X))
        coeffs = np.array(flat, dtype=object).reshape(len(self.slots), n)
        self._carried = (coeffs, flat)          # the next step's first guess reads flat
        m = n if outputs else 0
        y1 = np.array(out[:m], dtype=object) if outputs else coeffs[self.v1]
        guards = self._node_guards(t, coeffs, out[m:]) if self.singular is not None else None
        return coeffs, iterations, residual, y1, guards

    def _flat(self, known, X):
        """The coefficient vectors of the slots, in slot order, as one list: the known
        slots' ``known`` (lists) and the unknowns X."""
        if self.known == list(range(len(self.known))):      # the known slots first
            return [x for c in known for x in c] + X
        n, flat = self.n, [None] * len(self.slots)
        for i, c in zip(self.known, known):
            flat[i] = c
        for k, i in enumerate(self.unknown):
            flat[i] = X[k * n:(k + 1) * n]
        return [x for c in flat for x in c]

    @cached_property
    def _extrapolation(self):
        """(the rows E[u] of the unknown slots, flat; their common length): the first guess
        extrapolated from the previous step's coefficients."""
        rows = [self.tables.extrapolation[u] for u in self.unknown]
        return [e for row in rows for e in row], len(rows[0]) if rows else 0

    def first_guess(self, t, q, y, carry):
        """Unknown coefficients from the previous step (carry) or from x + v (t - t_j)."""
        if carry is not None:                   # sum_i E[u][i] carry[i], as the compiled
            E, me = self._extrapolation         # Newton's first guess
            nu, nd, m = len(self.unknown), len(carry[0]), min(me, len(carry))
            x: list = [None] * (nu * nd)
            linear_combination(nu, m, nd, me, E, [v for c in carry for v in c], x)
            return [np.array(x[u * nd:(u + 1) * nd], dtype=self.ctx.dtype) for u in range(nu)]
        v = y if self.method.state == "qv" else self.system.velocity(q, y, t)
        guess = []
        for u in self.unknown:
            s = self.slots[u]
            guess.append(q + v * self.start[u] if s.derivative == 0 else
                         (v if s.derivative == 1 else self.ctx.zeros(self.n)))
        return guess

    @cached_property
    def _internal_rows(self):
        """The internal slots (unknown, neither q_{j+1} nor v_{j+1}): rows of kernel_step's
        coefficient array, as a slice (a view) or an index list; None if there are none."""
        rows = [i for i in self.unknown if i != self.q1 and i != self.v1]
        if not rows:
            return None
        if rows == list(range(rows[0], rows[-1] + 1)):
            return slice(rows[0], rows[-1] + 1)
        return rows

    def split(self, X):
        n = self.n
        return [X[k * n:(k + 1) * n] for k in range(len(self.unknown))]

    def assemble(self, known, X):
        coeffs = [None] * len(self.slots)
        for i, c in zip(self.known, known):
            coeffs[i] = c
        for i, c in zip(self.unknown, self.split(X)):
            coeffs[i] = c
        return coeffs

    def known_values(self, q, y):
        return [q] if len(self.known) == 1 else [q, y]

    def __call__(self, t, q, y, carry=None):
        known = self.known_values(q, y)
        if self.kernel is not None:
            coeffs, iterations, residual, y1, guards = self.kernel_step(
                t, q, y, carry, known, self.method.state == "qp")
            internal = self._internal_rows
            return StepResult(coeffs[self.q1], y1, None if internal is None else coeffs[internal],
                              iterations, residual, coeffs, guards)
        else:
            guess = self.first_guess(t, q, y, carry)
            fun, output = self.equations(t, q, y, known)
            X, iterations, residual = solve_info(fun, np.concatenate(guess), self.ctx,
                                                 what=self.method.disc.name,
                                                 diagnose=lambda X: self.diagnose(t, known, X),
                                                 **self.newton)
            coeffs = self.assemble(known, X)
            y1 = output() if self.method.state == "qp" else coeffs[self.v1]
            guards = self._node_guards(t, coeffs, None)
        internal = [coeffs[i] for i in self.unknown if i != self.q1 and i != self.v1]
        return StepResult(coeffs[self.q1], y1, np.array(internal, dtype=object) if internal else None,
                          iterations, residual, coeffs, guards)

    time_inputs = False
    """Whether the kernel's inputs include the step's quadrature node times."""

    @cached_property
    def _batch_layout(self):
        """Where :meth:`many`'s compiled steps read a step's known inputs and write its
        coefficients and y: (ksrc, fsrc, ysrc, outputs offset of the guards) of
        ``mpvi_newton.h``'s ``steps``.  A step's state is [its coefficients flat, its y]."""
        n, nf = self.n, len(self.slots) * self.n
        q = [self.q1 * n + d for d in range(n)]
        y = [nf + d for d in range(n)]
        ksrc = q + (y if len(self.known) == 2 else [])          # known_values: [q] or [q, y]
        if any(getattr(self, "momentum", ())):                   # p_j on the left end's rows
            ksrc += y
        nkd, fsrc = len(ksrc), []
        for i in range(len(self.slots)):
            if i in self.known:
                fsrc += [self.known.index(i) * n + d for d in range(n)]
            else:
                fsrc += [nkd + self.unknown.index(i) * n + d for d in range(n)]
        qp = self.method.state == "qp"
        ysrc = [nf + d for d in range(n)] if qp else [self.v1 * n + d for d in range(n)]
        return tuple(ksrc), tuple(fsrc), tuple(ysrc), n if qp else 0

    def batch_ready(self, carry):
        """Whether :meth:`many` can take steps after ``carry`` now: its module loaded and
        the carry the last step's (the caller then computes the step times)."""
        kernel = self.kernel
        return (kernel is not None and kernel.batch(self.newton) is not None
                and carry is not None and carry is self._carried[0])

    def many(self, starts, ends, q, y, carry, check=None, head=(), signs=None):
        """Steps from (q, y) at ``starts[0]`` by the compiled module with no Python between
        them (:meth:`mpvi.engines.kernels.Kernel.batch`), each the step :meth:`__call__`
        takes after ``carry`` (the same numbers), until ``len(ends)`` steps are done or one
        fails, declines or fails a check -- the compiled ``check(ends[i], q, y, *head)``
        (``...`` in ``head``: the q before) or the signs ``signs`` of its singular factors at
        its nodes --: that step is left to :meth:`__call__`.  Returns None where no step
        can be taken so (not compiled, no carry to extrapolate), else (steps done, their q
        rows, y rows, internal coefficients or None, coefficients (steps x slots x n),
        Newton iterations, final residuals, the last coefficients: the next carry) as object
        arrays and lists (the arrays None where no step was done)."""
        kernel = self.kernel
        E, m = self._extrapolation
        if not self.batch_ready(carry) or m != len(carry):
            return None
        steps = kernel.batch(self.newton)
        ctx, n = self.ctx.activate(), self.n
        ksrc, fsrc, ysrc, goff = self._batch_layout
        times = [x for t in starts for x in self.tables.node_times(t)] if self.time_inputs else []
        known = [kernels._entries(c) for c in self.known_values(q, y)]
        K = self.kernel_inputs(starts[0], q, y, known)
        flat = self._carried[1]
        got = steps(len(ends), K, self.system.param_values,
                    *kernel.iteration_options(ctx, self.newton), flat + kernels._entries(y),
                    E, m, ksrc, fsrc, ysrc, self.q1, times, len(times) // len(starts), ends,
                    check, head, signs, goff)
        done, numbers, ys, iterations, residuals = got
        if not done:
            return 0, None, None, None, None, iterations, residuals, None
        # fromiter: an object array from a list without np.array's test of each item for
        # a sequence (9 times faster)
        F = np.fromiter(numbers, dtype=object, count=len(numbers)).reshape(done, len(self.slots), n)
        last = F[-1]
        self._carried = (last, numbers[-len(fsrc):])
        internal = self._internal_rows
        return (done, F[:, self.q1], np.fromiter(ys, dtype=object, count=len(ys)).reshape(done, n),
                None if internal is None else F[:, internal], F, iterations, residuals, last)


class _VariationalStepper(_TrialStepper):
    def __init__(self, method, system, h, ctx, newton):
        super().__init__(method, system, h, ctx, newton)
        self.Ld = DiscreteLagrangian(system, method.disc, self.h, ctx)
        self.tables = self.Ld.tables
        self.rows = [e for e, _ in method.equations]
        self.momentum = [m for _, m in method.equations]
        if getattr(ctx, "kernels", False):
            self._prepare_kernel()

    def _prepare_kernel(self):
        """The residual of :meth:`equations` as sympy expressions, compiled once per
        (system, structure of the discretization) by :mod:`mpvi.engines.kernels`; the table
        numbers of this h are inputs."""
        tb, sys = self.tables, self.system
        self.timed = sys.has_force or sys.time_dependent
        tables = (tb.x_terms, tb.g_terms, tb.G_terms, tb.P_terms)
        # the table numbers, in the order of the symbols made for the kernel's build
        self._K_tail = [x for table in tables for terms in table for _, x in terms]
        key = ("variational", self._structure(*tables), tuple(self.known), tuple(self.unknown),
               tuple(self.rows), tuple(self.momentum), self.q1, self.method.state, self.timed,
               self._guard_key)
        self.kernel = kernels.cached_kernel(sys, key, lambda: self._build_kernel(
            *[self._table_symbols(p, table, []) for p, table in zip("agGP", tables)]))

    def _build_kernel(self, xt, gt, Gt, Pt):
        """Residual dS_d/dc_e + f_e (+ p_j) and its Jacobian by the chain rule (module doc):
        d(G_k, P_k)/dc_j = (G_q a_kj + G_v b_kj, P_q a_kj + P_v b_kj), with the system's
        symbolic second derivatives at node symbols x_k, g_k defined by stages."""
        sys, n = self.system, self.n
        X, known, coeffs = self._symbols()
        y = list(sp.symbols(f"y0:{n}", cls=sp.Dummy)) if any(self.momentum) else []
        times = (list(sp.symbols(f"t0:{len(xt)}", cls=sp.Dummy)) if self.timed
                 else [None] * len(xt))
        P, G, Gq, Gv, Pq, Pv = sys.symbolic("node")
        rows, unknown = set(self.rows), set(self.unknown)
        stages, grad, blocks, nodes = [], {}, {}, []
        zero = [sp.Integer(0)] * n
        for k in range(len(xt)):
            xk, gk = self._node_stages(coeffs, k, (("x", xt), ("g", gt)), stages)
            nodes.append((xk, gk))
            Pk, Gk, Gqk, Gvk, Pqk, Pvk = kernels.at_node(sys, [P, G, Gq, Gv, Pq, Pv], xk, gk,
                                                         times[k])
            for terms, D, Dq, Dv in ((Gt[k], Gk, Gqk, Gvk), (Pt[k], Pk, Pqk, Pvk)):
                for i, c in terms:
                    grad[i] = [a + c * b for a, b in zip(grad.get(i, zero), D)]
                    if i not in rows:
                        continue
                    for j, a in xt[k]:
                        if j in unknown:
                            self._add_block(blocks, (i, j), c * a, Dq)
                    for j, b in gt[k]:
                        if j in unknown:
                            self._add_block(blocks, (i, j), c * b, Dv)
        res = []
        for e, mom in zip(self.rows, self.momentum):
            res.extend([yi + gi for yi, gi in zip(y, grad[e])] if mom else grad[e])
        out = list(grad[self.q1]) if self.method.state == "qp" else []
        out += self._guard_outputs(nodes, times)
        tail = [sym for table in (xt, gt, Gt, Pt) for terms in table for _, sym in terms]
        K = known + y + (times if self.timed else []) + tail
        return kernels.Kernel(X, K, sys.param_symbols, res, self.ctx, out,
                              jacobian=self._jacobian_blocks(self.rows, blocks), stages=stages,
                              steady=len(tail))

    @property
    def time_inputs(self):
        return self.timed

    def kernel_inputs(self, t, q, y, known):
        K = [x for c in known for x in c]
        if any(self.momentum):
            K.extend(kernels._entries(y))
        if self.timed:
            K.extend(self.tables.node_times(t))
        return K + self._K_tail

    def equations(self, t, q, y, known):
        Ld, rows, cols, s = self.Ld, self.rows, self.unknown, self
        last = {}

        def fun(X, jacobian):
            coeffs = s.assemble(known, X)
            if jacobian:
                grad, hess = Ld.gradient(coeffs, t, full=True, rows=rows, cols=cols)
            else:
                grad = Ld.gradient(coeffs, t)
            last["grad"] = grad
            r = np.concatenate([y + grad[e] if m else grad[e] for e, m in zip(rows, s.momentum)])
            if not jacobian:
                return r
            return r, np.block([[hess[i, j] for j in cols] for i in rows])
        return fun, lambda: last["grad"][s.q1]


class _GalerkinStepper(_TrialStepper):
    def __init__(self, method, system, h, ctx, newton):
        super().__init__(method, system, h, ctx, newton)
        self.tables = tb = StepTables(method.disc, self.h, ctx, second_derivatives=True)
        quad = method.disc.quadrature
        if len(method.tests) != len(self.unknown):
            raise ValueError(f"{method.disc.name}: {len(method.tests)} test functions for "
                             f"{len(self.unknown)} unknown coefficient vectors")
        # h w_k psi_m(tau_k)
        self.weights = [[hw * to_context(psi(tau), ctx) for hw, tau in zip(tb.hw, quad.nodes)]
                        for psi in method.tests]
        if getattr(ctx, "kernels", False):
            self._prepare_kernel()

    def _prepare_kernel(self):
        """The weighted residual of :meth:`equations` as sympy expressions, compiled once
        per (system, structure) by :mod:`mpvi.engines.kernels`; weights and tables are inputs."""
        tb, sys = self.tables, self.system
        tables = (tb.x_terms, tb.g_terms, tb.e_terms)
        weights = [list(enumerate(w)) for w in self.weights]
        self._K_tail = tail = []
        syms = [self._table_symbols(p, table, tail) for p, table in zip("age", tables)]
        wsyms = self._table_symbols("w", weights, tail)
        key = ("galerkin", self._structure(*tables, weights), tuple(self.known),
               tuple(self.unknown), self._guard_key)
        self.kernel = kernels.cached_kernel(sys, key, lambda: self._build_kernel(*syms, wsyms))

    def _build_kernel(self, xt, gt, et, wt):
        """Weighted residual sum_k w_mk R(t_k, x_k, x'_k, x''_k) and its Jacobian by the chain
        rule, dR_k/dc_j = R_q a_kj + R_v b_kj + R_a e_kj, at node symbols defined by stages."""
        sys, n = self.system, self.n
        X, known, coeffs = self._symbols()
        times = list(sp.symbols(f"t0:{len(xt)}", cls=sp.Dummy))
        R, Rq, Rv, Ra = sys.symbolic("residual")
        unknown = set(self.unknown)
        stages, blocks, nodes = [], {}, []
        res = [[sp.Integer(0)] * n for _ in wt]
        for k in range(len(xt)):
            xk, gk, ek = self._node_stages(coeffs, k, (("x", xt), ("g", gt), ("e", et)), stages)
            nodes.append((xk, gk))
            Rk, Rqk, Rvk, Rak = kernels.at_node(sys, [R, Rq, Rv, Ra], xk, gk, times[k], ek)
            for m, w in enumerate(wt):
                wk = w[k][1]
                res[m] = [r + wk * x for r, x in zip(res[m], Rk)]
                for terms, D in ((xt[k], Rqk), (gt[k], Rvk), (et[k], Rak)):
                    for j, c in terms:
                        if j in unknown:
                            self._add_block(blocks, (m, j), wk * c, D)
        tail = [sym for table in (xt, gt, et, wt) for terms in table for _, sym in terms]
        K = known + times + tail
        return kernels.Kernel(X, K, sys.param_symbols, [e for v in res for e in v], self.ctx,
                              self._guard_outputs(nodes, times),
                              jacobian=self._jacobian_blocks(range(len(wt)), blocks),
                              stages=stages, steady=len(tail))

    time_inputs = True

    def kernel_inputs(self, t, q, y, known):
        return [x for c in known for x in c] + self.tables.node_times(t) + self._K_tail

    def equations(self, t, q, y, known):
        sys, ctx, tb, s = self.system, self.ctx, self.tables, self
        n, cols = self.n, self.unknown
        ts = tb.node_times(t)

        def fun(X, jacobian):
            coeffs = s.assemble(known, X)
            xs, gs = tb.nodes(coeffs)
            acc = [sum(coeffs[i] * e for i, e in terms) for terms in tb.e_terms]
            r = [ctx.zeros(n) for _ in s.weights]
            J = [[ctx.zeros((n, n)) for _ in cols] for _ in s.weights] if jacobian else None
            for k, (x, g, a) in enumerate(zip(xs, gs, acc)):
                R, Rx, Rv, Ra = sys.residual_derivatives(ts[k], x, g, a)
                for m, wm in enumerate(s.weights):
                    r[m] = r[m] + R * wm[k]
                if not jacobian:
                    continue
                dR = {}                        # dR_k/dc_j for the unknown slots j
                for terms, D in ((tb.x_terms[k], Rx), (tb.g_terms[k], Rv), (tb.e_terms[k], Ra)):
                    for j, c in terms:
                        if j in cols:
                            dR[j] = dR[j] + D * c if j in dR else D * c
                for m, wm in enumerate(s.weights):
                    for col, j in enumerate(cols):
                        if j in dR:
                            J[m][col] = J[m][col] + dR[j] * wm[k]
            r = np.concatenate(r)
            return (r, np.block(J)) if jacobian else r
        return fun, None


_STEPPERS = {VariationalMethod: _VariationalStepper, GalerkinMethod: _GalerkinStepper}
"""The numeric executor of each trial-function declaration type (:mod:`mpvi.methods.declarations`)."""


def prepare_spec(spec, system, h, ctx, newton=None):
    """Stepper of a trial-function declaration (a :class:`~mpvi.methods.declarations.VariationalMethod`
    or :class:`~mpvi.methods.declarations.GalerkinMethod`) for ``system``, step ``h`` in ``ctx``;
    ``newton`` = options for :func:`mpvi.numbers.newton.solve`."""
    stepper = _STEPPERS.get(type(spec))
    if stepper is None:
        raise TypeError(f"{type(spec).__name__} is not a trial-function declaration "
                        "(a VariationalMethod or a GalerkinMethod)")
    return stepper(spec, system, h, ctx, newton)


def lagrange_variational(disc):
    """The (q, p) variational scheme of a Lagrange discretization: unknowns are the
    internal points and q_{j+1}; equations dS_d/dq_i + f_i = 0 at the internal points and
    p_j + dS_d/dq_j + f_j = 0 (top2025 eqs. (13)-(14))."""
    s = len(disc.basis) - 2
    return VariationalMethod(disc, "qp", tuple((i, False) for i in range(1, s + 1)) + ((0, True),))


def prepare_rule(disc, system, h, ctx, newton=None):
    """Stepper of the Lagrange variational scheme of ``disc`` (see :func:`lagrange_variational`)."""
    return prepare_spec(lagrange_variational(disc), system, h, ctx, newton)
