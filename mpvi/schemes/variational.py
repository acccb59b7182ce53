"""Galerkin-quadrature variational integrators for nonlinear Lagrangian systems.

One engine for every scheme whose discrete Lagrangian is a quadrature of L over a
polynomial interpolant (top2025 Sec. 2, App. A and B):

    L_d(q_0, ..., q_{s+1}) = h sum_k w_k L(x_k, g_k),
    x_k = sum_i a_ki q_i,   g_k = (1/h) sum_i c_ki q_i,

with q_0 = q_j (left), q_1..q_s internal points, q_{s+1} = q_{j+1} (right).  The forced
discrete Euler-Lagrange equations (Lagrange-d'Alembert; Marsden & West 2001, Sec. 3.2)
with the discrete force  f_i = h sum_k w_k a_ki F(t_j + tau_k h, x_k, g_k)  are

    dL_d/dq_i + f_i = 0              for each internal point i = 1..s,
    p_j + dL_d/dq_0 + f_0 = 0,                                        (top2025 eq. (13))
    p_{j+1} = dL_d/dq_{s+1} + f_{s+1},                                (top2025 eq. (14))

Newton (:mod:`mpvi.newton`) solves the first two groups for (q_1..q_s, q_{j+1}); p_{j+1}
is then explicit.  This is the same solution as the paper's Newton on (q_m, p, q): p
enters its equations linearly, so eliminating it changes nothing but the size.

Derivatives, with (P, G, L_vv, B, A) the derivatives of L at node k (see
:mod:`mpvi.mechanics`):

    dL_d/dq_i      = sum_k w_k (h a_ki G_k + c_ki P_k),
    d2L_d/dq_i dq_j = sum_k w_k (h a_ki a_kj A_k + a_ki c_kj B_k + c_ki a_kj B_k^T
                                  + c_ki c_kj / h L_vv,k),

which is the Newton Jacobian (derived here; the printed one of App. A has index typos and
a -1/2 for -h/2, and its F_q doubles the h-terms: reproductions/ERRATA.md [E20]-[E24]).  The tests check both against finite differences.

Rules
-----
``SIMPSON`` (top2025 eqs. (3)-(6)): P2 interpolation on (q_j, q_{j+1/2}, q_{j+1}),
  Simpson weights (1/6, 2/3, 1/6) at the three points, Gear velocities
  g_l = (-3 q_l + 4 q_m - q)/h,  g_m = (q - q_l)/h,  g = (q_l - 4 q_m + 3 q)/h.
``MIDPOINT`` (App. B): x = (q_l + q)/2, g = (q - q_l)/h, one node of weight 1.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction as Fr

import numpy as np

from ..newton import NewtonStats, solve as newton_solve
from .base import check_step


@dataclass(frozen=True)
class QuadratureRule:
    """Coefficients of a discrete Lagrangian (see module doc); exact rationals."""

    name: str
    internal: int            # s, number of internal points
    point_tau: tuple         # times of q_0..q_{s+1} as fractions of h
    a: tuple                 # a[k][i]
    c: tuple                 # c[k][i]
    w: tuple                 # w[k]
    tau: tuple               # node times as fractions of h

    def extrapolation(self):
        """Weights E[u][i]: unknown point u (= internal..., right) from the previous
        step's points (times point_tau - 1) by Lagrange interpolation."""
        old = [t - 1 for t in self.point_tau]
        new = self.point_tau[1:]
        E = []
        for t in new:
            row = []
            for i, ti in enumerate(old):
                li = Fr(1)
                for m, tm in enumerate(old):
                    if m != i:
                        li *= (t - tm) / (ti - tm)
                row.append(li)
            E.append(tuple(row))
        return tuple(E)


SIMPSON = QuadratureRule(
    name="simpson", internal=1, point_tau=(Fr(0), Fr(1, 2), Fr(1)),
    a=((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    c=((-3, 4, -1), (-1, 0, 1), (1, -4, 3)),
    w=(Fr(1, 6), Fr(2, 3), Fr(1, 6)),
    tau=(Fr(0), Fr(1, 2), Fr(1)))

MIDPOINT = QuadratureRule(
    name="midpoint", internal=0, point_tau=(Fr(0), Fr(1)),
    a=((Fr(1, 2), Fr(1, 2)),), c=((-1, 1),), w=(Fr(1),), tau=(Fr(1, 2),))


class DiscreteLagrangian:
    """L_d of a rule for one system and step h, with its gradient and Hessian."""

    def __init__(self, system, rule, h, ctx):
        self.system, self.rule, self.h, self.ctx = system, rule, h, ctx
        num = ctx.num
        npts = self.npts = rule.internal + 2
        nodes = range(len(rule.w))
        hw = [h * num(x) for x in rule.w]
        self.hw = hw
        a = [[num(x) for x in row] for row in rule.a]
        ch = [[num(x) / h for x in row] for row in rule.c]
        # x_k = sum a_ki q_i,  g_k = sum (c_ki / h) q_i   (nonzero terms only)
        self.x_terms = [[(i, a[k][i]) for i in range(npts) if rule.a[k][i]] for k in nodes]
        self.g_terms = [[(i, ch[k][i]) for i in range(npts) if rule.c[k][i]] for k in nodes]
        # dL_d/dq_i += h w_k a_ki G_k + w_k c_ki P_k
        self.G_terms = [[(i, hw[k] * a[k][i]) for i in range(npts) if rule.a[k][i]] for k in nodes]
        self.P_terms = [[(i, num(rule.w[k] * rule.c[k][i])) for i in range(npts) if rule.c[k][i]]
                        for k in nodes]
        self.tau_h = [num(x) * h for x in rule.tau]

    def _nodes(self, pts):
        xs = [sum(pts[i] * a for i, a in terms) for terms in self.x_terms]
        gs = [sum(pts[i] * c for i, c in terms) for terms in self.g_terms]
        return xs, gs

    def value(self, pts):
        """L_d(q_0, ..., q_{s+1}) (for tests)."""
        xs, gs = self._nodes(pts)
        return sum(hw * self.system.lagrangian(x, g) for hw, x, g in zip(self.hw, xs, gs))

    def gradient(self, pts, t=None, full=False, rows=None, cols=None):
        """[dL_d/dq_i + f_i for each point i]; with ``full`` also the Hessian blocks
        H[i][j] = d(dL_d/dq_i + f_i)/dq_j for i in ``rows``, j in ``cols`` (default all)."""
        sys, ctx = self.system, self.ctx
        xs, gs = self._nodes(pts)
        n = sys.dof
        grad = [ctx.zeros(n) for _ in range(self.npts)]
        if full:
            rows = range(self.npts) if rows is None else rows
            cols = range(self.npts) if cols is None else cols
            hess = {(i, j): ctx.zeros((n, n)) for i in rows for j in cols}
        for k, (x, g) in enumerate(zip(xs, gs)):
            if full:
                P, G, Pv, Gv, Gx = sys.node_derivatives(x, g)
                Px = Gv.T                      # dP_g/dx^d = d2L/dv^g dx^d = B[d, g]
            else:
                P, G = sys.node_gradient(x, g)
            if sys.has_force:                  # G + F: the force acts where dL/dq does
                tk = (t if t is not None else ctx.zero) + self.tau_h[k]
                if full:
                    F, Fq, Fv = sys.force_derivatives(tk, x, g)
                    Gx, Gv = Gx + Fq, Gv + Fv
                else:
                    F = sys.force(tk, x, g)
                G = G + F
            for i, coef in self.G_terms[k]:
                grad[i] = grad[i] + G * coef
            for i, coef in self.P_terms[k]:
                grad[i] = grad[i] + P * coef
            if not full:
                continue
            # d/dq_j of (G_k, P_k) = (Gx a_kj + Gv c_kj/h, Px a_kj + Pv c_kj/h)
            for i, coef in self.G_terms[k]:
                for j, a in self.x_terms[k]:
                    if (i, j) in hess:
                        hess[i, j] = hess[i, j] + Gx * (coef * a)
                for j, c in self.g_terms[k]:
                    if (i, j) in hess:
                        hess[i, j] = hess[i, j] + Gv * (coef * c)
            for i, coef in self.P_terms[k]:
                for j, a in self.x_terms[k]:
                    if (i, j) in hess:
                        hess[i, j] = hess[i, j] + Px * (coef * a)
                for j, c in self.g_terms[k]:
                    if (i, j) in hess:
                        hess[i, j] = hess[i, j] + Pv * (coef * c)
        return (grad, hess) if full else grad


def prepare_rule(rule, system, h, ctx, check_stability=True, newton=None):
    """Stepper ``(q, p, t) -> (q1, p1, internal points or None)`` for a nonlinear system.

    ``check_stability`` is accepted for the uniform interface; a nonlinear system has no
    a-priori step bound (Newton reports a failed step instead).  ``newton`` is a dict of
    options for :func:`mpvi.newton.solve` (``max_iter``, ``rtol``, ``scale``).
    """
    newton = dict(newton or {})
    unknown = set(newton) - {"max_iter", "rtol", "scale"}
    if unknown:
        raise ValueError(f"unknown Newton option(s) {sorted(unknown)}; use max_iter, rtol, scale")
    h = check_step(h, ctx)
    Ld = DiscreteLagrangian(system, rule, h, ctx)
    n, s = system.dof, rule.internal
    E = [[ctx.num(x) for x in row] for row in rule.extrapolation()]
    start = [ctx.num(x) * h for x in rule.point_tau[1:]]
    stats = NewtonStats()
    memo = {}

    rows = list(range(1, s + 1)) + [0]       # equations: internal points, then p_j
    cols = list(range(1, s + 2))             # unknowns: internal points, then q_j+1

    def split(X):
        return [X[u * n:(u + 1) * n] for u in range(s + 1)]

    def stepper(q, p, t=None):
        prev = memo.get("points")
        if prev is not None and prev[-1] is q:
            guess = [sum(x * e for e, x in zip(row, prev)) for row in E]
        else:
            v = system.velocity(q, p)
            guess = [q + v * dt for dt in start]
        last = {}

        def fun(X, jacobian):
            pts = [q] + split(X)
            if jacobian:
                grad, hess = Ld.gradient(pts, t, full=True, rows=rows, cols=cols)
            else:
                grad = Ld.gradient(pts, t)
            last["grad"] = grad
            r = np.concatenate(grad[1:s + 1] + [p + grad[0]])
            if not jacobian:
                return r
            J = np.block([[hess[i, j] for j in cols] for i in rows])
            return r, J

        X = newton_solve(fun, np.concatenate(guess), ctx, stats=stats, what=rule.name, **newton)
        pts = split(X)
        q1 = pts[-1]
        p1 = last["grad"][s + 1]
        memo["points"] = [q] + pts
        stage = np.concatenate(pts[:-1]) if s else None
        return q1, p1, stage

    stepper.newton_stats = stats
    return stepper
