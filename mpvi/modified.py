"""Backward error analysis: the modified equation and the modified Hamiltonian of a
one-step method, derived with sympy from the method's own declaration.

A one-step method y_(j+1) = Phi_h(y_j) is, to any order, the exact time-h flow of a
*modified* equation y' = f_1(y) + h f_2(y) + h^2 f_3(y) + ... (Hairer, Lubich & Wanner,
*Geometric Numerical Integration*, Sec. IX.1; f_1 = f).  Steps:

1. **The series of the step.**  Phi_h(y) = y + h d_1(y) + h^2 d_2(y) + ..., each d_k a
   sympy expression in the state symbols, from the method's declaration
   (:attr:`mpvi.schemes.Method.declaration`):

   * a trial-function method (:class:`~mpvi.schemes.variational.VariationalMethod`,
     :class:`~mpvi.schemes.variational.GalerkinMethod`: Simpson, the midpoint and Lobatto
     variational integrators, the Hermite methods): its trial basis, quadrature rule and
     equations, written on jets (:mod:`mpvi.jets`: truncated power series in h) and
     solved order by order by a chord iteration with the leading-order Jacobian of the
     step equations (the matrix Newton's iteration is dominated by for small h; each
     iteration fixes one more power of h);
   * a Runge-Kutta tableau (:class:`ButcherTableau`: RK2, the implicit midpoint rule),
     its stages solved by fixed-point iteration on jets (each iteration gains a power of h);
   * Mutze's parabolic path (:class:`ParabolicPath`: the g-family, g = 0 the direct
     midpoint method) and Newmark's family (:class:`NewmarkScheme`), their acceleration
     solved by the same chord iteration;
   * a step function (:class:`StepFunction`: RK4's and GBS's own code,
     :func:`mpvi.ode.rk4_step`, :func:`mpvi.ode.gbs_step`), run on lists of jets;
   * a truncated Taylor series (:class:`TaylorSeries`: the Taylor scheme).

2. **The modified field** (HLW IX.1, eq. (1.4)): f_j = d_j - [h^j] sum_(k >= 2) h^k / k!
   (L^(k-1) f~)(y), L g = g' f~, with f~ = f_1 + ... + h^(j-2) f_(j-1) already known.

3. **The modified Hamiltonian** for (q, p) methods: each f_j must be Hamiltonian,
   f_j = J grad H_j (:func:`hamiltonian_defect` checks the symmetry of J^-1 f_j'); H_j is
   its potential, integrated along p and then q.  H~ = H + h H_2 + h^2 H_3 + ...; for a
   symplectic method of order p the first correction is h^p H_(p+1).

The system must be of the M, V form (L = v^T M(q) v / 2 - V(q)), autonomous, without
external forces; its parameters stay symbols.  The state symbols are the system's
coordinates and p0.. (or its velocity symbols for (q, v) methods).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from math import factorial
from typing import Any, Callable, Sequence

import sympy as sp

from .jets import Jet, evaluate

H = sp.Symbol("h", positive=True)
"""The step symbol of the modified equations' series."""

EXACT_HI = 10 ** 6
"""The order of an exact jet (h itself, 1/h, a constant): never the one that limits."""


class _ExactNumbers:
    """A stand-in for a number context in a method's own step code run on jets:
    ``num`` makes exact sympy rationals."""

    @staticmethod
    def num(x):
        return sp.Rational(x)


EXACT = _ExactNumbers()


class NotHamiltonianError(ArithmeticError):
    """A term of a modified field is not Hamiltonian.

    The method is not symplectic (or not on this system); the message names the power of
    h and the defect.  An ``ArithmeticError``.
    """


@dataclass(frozen=True)
class ButcherTableau:
    """A Runge-Kutta method on y' = f(y) as data: y_new = y + h sum_i b_i k_i,
    k_i = f(y + h sum_j a_ij k_j) (implicit where a_ij != 0 for j >= i)."""

    a: tuple
    b: tuple
    form: str = "qv"            # the first-order form it is applied to: (q, v) or (q, p)


@dataclass(frozen=True)
class StepFunction:
    """A one-step method given by its own code ``step(f, t, y, h)`` on lists of numbers
    (here: jets), on the first-order form ``form``."""

    step: Callable
    form: str = "qp"


@dataclass(frozen=True)
class ParabolicPath:
    """Mutze's g-family on (x, v) (mutze eqs. 72-74): tau = h/2, the acceleration
    parameter a solves a = A(x + v tau + g tau^2 a, v + tau a) (G = 0 at the midpoint data,
    A the system's acceleration), then v_new = v + 2 tau a, x_new = x + tau (v + v_new)."""

    g: Any
    form: str = "qv"


@dataclass(frozen=True)
class NewmarkScheme:
    """Newmark's (beta, gamma) family on (q, v): a_j = A(q_j, v_j) and
    q_new = q + h v + h^2 ((1/2 - beta) a_j + beta a_new),
    v_new = v + h ((1 - gamma) a_j + gamma a_new),  a_new = A(q_new, v_new).
    ``form="qp"`` reports (q, p = M v) (constant M); ``linear_only``: the method refuses
    nonlinear systems, and so does the derivation."""

    beta: Any
    gamma: Any
    form: str = "qv"
    linear_only: bool = False


@dataclass(frozen=True)
class TaylorSeries:
    """The Taylor polynomial of degree ``order`` of the exact flow (the Taylor scheme)."""

    order: int
    form: str = "qp"


# ----- the system as sympy ------------------------------------------------------------------

class _Model:
    """The sympy data of an M, V system for the derivation: coordinates q, momenta p,
    velocities v, M(q), V(q), the fields of the (q, p) and (q, v) forms."""

    def __init__(self, system):
        if getattr(system, "first_order", False):
            raise ValueError(f"modified equations: {system.name} is a first-order system; "
                             "a mechanical system of the M, V form is needed")
        if getattr(system, "mass_expr", None) is None:
            raise ValueError(f"modified equations: {system.name} is not of the M, V form "
                             "(no mass-matrix expression)")
        if system.has_force or system.time_dependent:
            raise NotImplementedError(f"modified equations: {system.name} is forced or "
                                      "time-dependent; only autonomous conservative systems "
                                      "are derived here")
        self.system = system
        n = self.n = system.dof
        self.q = list(system.coords)
        self.v = list(system.velocity_symbols)
        self.p = list(sp.symbols(f"p0:{n}"))
        self.M = sp.Matrix(system.mass_expr)
        self.Minv = self.M.inv()
        V = getattr(system, "potential_expr", None)
        if V is None:
            L = system.lagrangian_expr
            V = -L.subs({vi: 0 for vi in self.v})
        self.V = V
        v_of_p = self.Minv * sp.Matrix(self.p)
        self.v_of_p = [sp.simplify(e) for e in v_of_p]
        self.H = sp.expand((sp.Matrix(self.p).T * self.Minv * sp.Matrix(self.p))[0] / 2 + V)
        self.f_qp = [sp.diff(self.H, pi) for pi in self.p] + [-sp.diff(self.H, qi) for qi in self.q]
        # (q, v): q' = v, v' = M^-1 (dL/dq - (dM/dt) v), the acceleration
        L = system.lagrangian_expr
        P = sp.Matrix([sp.diff(L, vi) for vi in self.v])
        G = sp.Matrix([sp.diff(L, qi) for qi in self.q])
        acc = self.Minv * (G - P.jacobian(self.q) * sp.Matrix(self.v))
        self.f_qv = self.v + [sp.expand(a) for a in acc]
        self.L = system.lagrangian_expr
        self.P = [sp.diff(self.L, vi) for vi in self.v]
        self.G = [sp.diff(self.L, qi) for qi in self.q]

    def state(self, form):
        return self.q + (self.p if form == "qp" else self.v)

    def field(self, form):
        return self.f_qp if form == "qp" else self.f_qv


# ----- step series --------------------------------------------------------------------------

def _jets(values, hi):
    return [Jet.constant(x, hi) for x in values]


def _field_on_jets(exprs, symbols, hi):
    def f(t, y):
        env = {s: (x.truncate(hi) if isinstance(x, Jet) else x) for s, x in zip(symbols, y)}
        return [evaluate(e, env, hi) for e in exprs]
    return f


def _series_step_function(decl, model, hi):
    y = model.state(decl.form)
    f = _field_on_jets(model.field(decl.form), y, hi)
    return decl.form, decl.step(f, 0, _jets(y, hi), Jet.step(EXACT_HI))


def _series_tableau(decl, model, hi):
    y = model.state(decl.form)
    f = _field_on_jets(model.field(decl.form), y, hi)
    h = Jet.step(EXACT_HI)
    s = len(decl.b)
    Y = _jets(y, hi)
    k = [[Jet.constant(0, hi) for _ in y] for _ in range(s)]
    # fixed point: every iteration gains one power of h (the stages are multiplied by h)
    for _ in range(hi + 1):
        k = [f(0, [yi + h * sum((decl.a[i][j] * k[j][c] for j in range(s)), Jet.constant(0, hi))
                   for c, yi in enumerate(Y)]) for i in range(s)]
    return decl.form, [yi + h * sum((decl.b[i] * k[i][c] for i in range(s)), Jet.constant(0, hi))
                       for c, yi in enumerate(Y)]


def _series_parabolic(decl, model, hi):
    n = model.n
    x = _jets(model.q, hi)
    v = _jets(model.v, hi)
    h = Jet.step(EXACT_HI)
    tau = h * sp.Rational(1, 2)
    acc = model.f_qv[n:]

    def residual(U):
        a = U[0]
        env = {model.q[g]: x[g] + v[g] * tau + a[g] * tau * tau * decl.g for g in range(n)}
        env.update({model.v[g]: v[g] + a[g] * tau for g in range(n)})
        return [a[g] - evaluate(acc[g], env, hi) for g in range(n)]
    guess = {0: [e for e in acc]}
    a = _chord_solve(residual, [0], n, guess, {0: 0}, hi, "mutze g-family")[0]
    v1 = [v[g] + h * a[g] for g in range(n)]
    x1 = [x[g] + tau * (v[g] + v1[g]) for g in range(n)]
    return decl.form, x1 + v1


def _series_newmark(decl, model, hi):
    n = model.n
    if decl.linear_only and not getattr(model.system, "is_linear", False):
        raise ValueError(f"modified equations: this Newmark scheme is defined for linear "
                         f"systems only, and {model.system.name} is not one")
    if decl.form == "qp" and any(e.has(*model.q) for e in model.M):
        raise NotImplementedError("Newmark on (q, p) with a mass matrix that depends on q")
    x = _jets(model.q, hi)
    v = _jets(model.v_of_p if decl.form == "qp" else model.v, hi)    # v = M^-1 p
    h = Jet.step(EXACT_HI)
    acc = model.f_qv[n:]
    a0 = [evaluate(e, dict(zip(model.q + model.v, x + v)), hi) for e in acc]
    b, c = sp.nsimplify(decl.beta, rational=True), sp.nsimplify(decl.gamma, rational=True)

    def new_state(a1):
        x1 = [x[g] + h * v[g] + h * h * ((sp.Rational(1, 2) - b) * a0[g] + b * a1[g]) for g in range(n)]
        v1 = [v[g] + h * ((1 - c) * a0[g] + c * a1[g]) for g in range(n)]
        return x1, v1

    def residual(U):
        x1, v1 = new_state(U[0])
        env = dict(zip(model.q + model.v, x1 + v1))
        return [U[0][g] - evaluate(acc[g], env, hi) for g in range(n)]
    a1 = _chord_solve(residual, [0], n, {0: list(acc)}, {0: 0}, hi, "newmark")[0]
    x1, v1 = new_state(a1)
    if decl.form == "qp":                       # p = M v, constant M
        v1 = [sum((v1[d] * model.M[g, d] for d in range(n)), Jet.constant(0, hi))
              for g in range(n)]
    return decl.form, x1 + v1


def _series_taylor(decl, model, hi):
    y = model.state(decl.form)
    f = model.field(decl.form)
    out = [Jet.constant(x, hi) for x in y]
    g = list(y)
    for k in range(1, min(decl.order, hi - 1) + 1):
        g = [sp.expand(sum(sp.diff(gi, yj) * fj for yj, fj in zip(y, f))) for gi in g]
        out = [o + Jet({k: gi / factorial(k)}, hi) for o, gi in zip(out, g)]
    return decl.form, out


def _chord_solve(residual, unknown, n, guess, scale, hi, name):
    """Solve step equations ``residual(U) = 0`` (a list of jets; U: unknown -> n jets) as
    power series in h by a chord iteration with their leading-order Jacobian.

    Unknown i enters the step scaled by h^scale[i] (a slot of derivative d through
    h^d c): with W_i = h^scale[i] U_i, row r's lowest power in dG_r/dW is alpha_r and
    A[r, i] = [h^(alpha_r + scale[i])] dG_r/dU_i at the first guess (the unknowns
    perturbed by constants).  A correction of W at power m is then -A^-1 times the rows'
    residuals at powers alpha_r + m: every sweep fixes one more power of h."""
    s_syms = {i: list(sp.symbols(f"s{i}_0:{n}", cls=sp.Dummy)) for i in unknown}
    U0 = {i: [Jet.constant(guess[i][g] + s_syms[i][g], hi) for g in range(n)] for i in unknown}
    rows = residual(U0)
    cols = [(i, g) for i in unknown for g in range(n)]
    at0 = {s: 0 for ss in s_syms.values() for s in ss}
    alpha, A = [], []
    for r in rows:
        lows = []
        for i, g in cols:
            powers = [k for k, v in r.terms.items() if sp.diff(v, s_syms[i][g]) != 0]
            if powers:
                lows.append(min(powers) - scale[i])
        if not lows:
            raise ArithmeticError(f"{name}: a step equation does not depend on the unknowns")
        a_r = min(lows)
        alpha.append(a_r)
        A.append([sp.simplify(sp.diff(r.terms.get(a_r + scale[i], 0), s_syms[i][g]).subs(at0))
                  for i, g in cols])
    A = sp.Matrix(A)
    if A.det() == 0:
        raise ArithmeticError(f"{name}: the leading-order Jacobian of the step equations is "
                              "singular")
    Ainv = A.inv()
    U = {i: [Jet.constant(guess[i][g], hi) for g in range(n)] for i in unknown}
    top = hi - min(alpha) + max(scale.values(), default=0) + 1
    for m in range(1, top):
        rows = residual(U)
        rho = sp.Matrix([r.coeff(a_r + m) if a_r + m < r.hi else 0 for r, a_r in zip(rows, alpha)])
        if all(x == 0 for x in rho):
            continue
        delta = Ainv * rho
        for pos, (i, g) in enumerate(cols):
            power = m - scale[i]
            if delta[pos] != 0 and power < hi:
                if power < 1:
                    raise ArithmeticError(f"{name}: the first guess of the step is not "
                                          "consistent (a correction at h^0)")
                U[i][g] = U[i][g] - Jet({power: sp.expand(delta[pos])}, hi)
    return U


def _series_trial(spec, model, hi):
    """The step of a trial-function method on jets: (form, [q1, y1] jets)."""
    from .quadrature import _TAU
    from .schemes.variational import GalerkinMethod
    n = model.n
    basis, quad = spec.disc.basis, spec.disc.quadrature
    slots = basis.slots
    galerkin = isinstance(spec, GalerkinMethod)
    form = spec.state
    h = Jet.step(EXACT_HI)
    hinv = Jet({-1: sp.Integer(1)}, EXACT_HI)
    q0 = model.q
    y0 = model.p if form == "qp" else model.v
    v0 = model.v_of_p if form == "qp" else model.v
    known = {i: (q0 if s.derivative == 0 else y0) for i, s in enumerate(slots)
             if s.tau == 0 and s.derivative <= spec.known_derivative}
    unknown = [i for i in range(len(slots)) if i not in known]
    phi = [basis.poly(i) for i in range(len(slots))]
    nodes, weights = quad.nodes, quad.weights
    if any(sp.sympify(x).has(sp.CRootOf) for x in (*nodes, *weights)):
        raise NotImplementedError(
            f"{spec.disc.name}: the quadrature nodes are algebraic numbers given as roots "
            f"({quad.name}); sums over them are not derived exactly yet (choose rational or "
            "quadratic-radical nodes, e.g. the Lobatto methods)")
    val = [[p.subs(_TAU, tk) for tk in nodes] for p in phi]
    dval = [[sp.diff(p, _TAU).subs(_TAU, tk) for tk in nodes] for p in phi]
    ddval = [[sp.diff(p, _TAU, 2).subs(_TAU, tk) for tk in nodes] for p in phi]

    def first_guess(i):
        d = slots[i].derivative
        return q0 if d == 0 else (v0 if d == 1 else [0] * n)

    def residual(U):
        c = {i: _jets(v, hi) for i, v in known.items()}
        c.update(U)
        hd = [h ** s.derivative if s.derivative else None for s in slots]

        def scaled(i, comp):                 # h^d_i c_i
            return c[i][comp] * hd[i] if hd[i] is not None else c[i][comp]
        x, xd, xdd = [], [], []
        for k in range(len(nodes)):
            x.append([sum((val[i][k] * scaled(i, g) for i in range(len(slots))),
                          Jet.constant(0, hi)) for g in range(n)])
            xd.append([sum((dval[i][k] * scaled(i, g) for i in range(len(slots))),
                           Jet.constant(0, hi)) * hinv for g in range(n)])
            if galerkin:
                xdd.append([sum((ddval[i][k] * scaled(i, g) for i in range(len(slots))),
                                Jet.constant(0, hi)) * hinv * hinv for g in range(n)])
        rows = []
        if galerkin:
            a_sym = sp.symbols(f"a0:{n}", cls=sp.Dummy)
            R = [sum(sp.diff(model.P[g], model.v[d]) * a_sym[d] for d in range(n))
                 + sum(sp.diff(model.P[g], model.q[d]) * model.v[d] for d in range(n))
                 - model.G[g] for g in range(n)]
            Rk = []
            for k in range(len(nodes)):
                env = dict(zip(model.q, x[k]))
                env.update(zip(model.v, xd[k]))
                env.update(zip(a_sym, xdd[k]))
                Rk.append([evaluate(e, env, hi) for e in R])
            for psi in spec.tests:
                for g in range(n):
                    rows.append(sum((weights[k] * psi(nodes[k]) * Rk[k][g]
                                     for k in range(len(nodes))), Jet.constant(0, hi)))
            return rows, None, x, xd
        Pk, Gk = [], []
        for k in range(len(nodes)):
            env = dict(zip(model.q, x[k]))
            env.update(zip(model.v, xd[k]))
            Pk.append([evaluate(e, env, hi) for e in model.P])
            Gk.append([evaluate(e, env, hi) for e in model.G])

        def dS(i):                           # dS_d / dc_i times 1/h (a common factor dropped)
            out = []
            for g in range(n):
                acc = Jet.constant(0, hi)
                for k in range(len(nodes)):
                    term = Gk[k][g] * val[i][k] + Pk[k][g] * dval[i][k] * hinv
                    acc = acc + term * weights[k]
                out.append(acc * hd[i] if hd[i] is not None else acc)
            return out
        for e, momentum in spec.equations:
            d = dS(e)
            rows.extend([d[g] + (y0[g] * hinv if momentum else 0) for g in range(n)])
        return rows, dS, x, xd

    guess = {i: first_guess(i) for i in unknown}
    scale = {i: slots[i].derivative for i in unknown}
    U = _chord_solve(lambda U: residual(U)[0], unknown, n, guess, scale, hi, spec.disc.name)
    rows, dS, _, _ = residual(U)
    right = slots.index((1, 0))
    q1 = U[right] if right in U else None
    if form == "qv":
        y1 = U[slots.index((1, 1))]
    else:
        y1 = [x * h for x in dS(right)]      # p1 = dS_d/dq1 (dS above is it times 1/h)
    return form, list(q1) + list(y1)


def step_series(method, system, order: int, **params):
    """The series of one step of ``method`` on ``system``: ``(form, state symbols, d)``
    with d[k] the list of the coefficients of h^k of Phi_h(y) (k = 0..order + 1)."""
    from .schemes import get_method
    m = get_method(method) if isinstance(method, str) else method
    decl_of = getattr(m, "declaration", None)
    if decl_of is None:
        raise NotImplementedError(f"modified equations: method {m.name!r} declares no "
                                  "form the derivation reads (a trial-function method, a "
                                  "Butcher tableau, a step function or a Taylor series)")
    decl = decl_of(m.parameters(**params))
    model = _Model(system)
    hi = order + 2
    if isinstance(decl, ButcherTableau):
        form, out = _series_tableau(decl, model, hi)
    elif isinstance(decl, StepFunction):
        form, out = _series_step_function(decl, model, hi)
    elif isinstance(decl, TaylorSeries):
        form, out = _series_taylor(decl, model, hi)
    elif isinstance(decl, ParabolicPath):
        form, out = _series_parabolic(decl, model, hi)
    elif isinstance(decl, NewmarkScheme):
        form, out = _series_newmark(decl, model, hi)
    else:              # two more orders inside: velocities are differences over h
        form, out = _series_trial(decl, model, hi + 2)
    y = model.state(form)
    for o in out:
        if o.hi < hi:
            raise ArithmeticError(f"{m.name}: the step series is known to O(h^{o.hi}) only, "
                                  f"not O(h^{hi})")
    d = [[sp.expand(o.coeff(k) - (yk if k == 0 else 0)) for o, yk in zip(out, y)]
         for k in range(hi)]
    return form, y, d, model


# ----- the modified equation ---------------------------------------------------------------

@dataclass
class ModifiedEquation:
    """The modified equation y' = f_1(y) + h f_2(y) + ... + h^order f_(order+1)(y).

    Made by :func:`modified_equation`.

    Parameters
    ----------
    method : str
        The method's name.
    form : {"qp", "qv"}
        The state: positions and momenta, or positions and velocities.
    symbols : list of sympy symbols
        The state symbols (q..., p... or v...).
    terms : list of lists of sympy expressions
        The coefficient of h^k is terms[k] = f_(k+1) (terms[0] is the system's field).
    seconds : float
        The derivation's wall time.
    model : object
        The sympy data of the system the derivation used.
    """

    method: str
    form: str
    symbols: list
    terms: list
    seconds: float = 0.0
    model: Any = field(default=None, repr=False)

    @property
    def order(self) -> int:
        """The highest power of h derived."""
        return len(self.terms) - 1

    def field(self, upto: int | None = None, h: Any = H) -> list:
        """Return the truncated modified field sum_(k <= upto) h^k f_(k+1).

        Parameters
        ----------
        upto : int, optional
            The highest power of h kept (default: all derived).
        h : sympy expression, default the symbol h
            What stands for the step.

        Returns
        -------
        list of sympy expressions
            One per state component.
        """
        upto = self.order if upto is None else upto
        return [sp.Add(*[h ** k * self.terms[k][c] for k in range(upto + 1)])
                for c in range(len(self.symbols))]

    def leading_order(self) -> int | None:
        """Return the smallest k >= 1 with f_(k+1) != 0: the method's order.

        Returns
        -------
        int or None
            The power of h of the first correction; None if every derived term vanishes.
        """
        for k in range(1, len(self.terms)):
            if any(sp.simplify(e) != 0 for e in self.terms[k]):
                return k
        return None


def _lie(g: Jet, F: Sequence[Jet], y) -> Jet:
    """L g = g' F on jets (derivatives coefficient by coefficient)."""
    acc = None
    for yi, Fi in zip(y, F):
        d = g.diff(yi)
        if d.terms:
            term = d * Fi
            acc = term if acc is None else acc + term
    return acc if acc is not None else Jet({}, g.hi)


def modified_equation(method: Any, system: Any, order: int, **method_params: Any) -> ModifiedEquation:
    """The modified equation of a one-step method on a system, to h^order.

    Parameters
    ----------
    method : str or Method
        A registered one-step method (its ``declaration`` is what the derivation reads).
    system : LagrangianSystem
        An autonomous M, V system without forces (its parameters stay symbols).
    order : int
        The highest power of h kept.
    **method_params
        The method's parameters (e.g. ``points=4`` for Lobatto).

    Returns
    -------
    ModifiedEquation
        The terms f_1 (the system's field in the method's state) .. f_(order+1).

    Raises
    ------
    ValueError
        A system that is not of the M, V form, a negative order.
    NotImplementedError
        A forced or time-dependent system, or a method without a declaration.
    ArithmeticError
        Step equations whose leading-order Jacobian is singular.
    """
    if isinstance(order, bool) or not isinstance(order, int) or order < 0:
        raise ValueError(f"order must be a non-negative integer, got {order!r}")
    t0 = time.perf_counter()
    form, y, d, model = step_series(method, system, order, **method_params)
    N = order + 1
    f = []                                     # f[k] = f_(k+1), the coefficient of h^k
    for j in range(1, N + 1):
        hi = j + 1
        F = [Jet({k: f[k][c] for k in range(len(f))}, hi - 1) for c in range(len(y))]
        # flow of F~ to h^j: sum_k h^k / k! L^(k-1) F~ (k >= 2; k = 1 is h F~)
        flow = [Jet({}, hi) for _ in y]
        Lg = [Fc for Fc in F]
        for k in range(2, j + 1):
            Lg = [_lie(g, F, y) for g in Lg]
            flow = [fl + Jet({k + p: v / factorial(k) for p, v in g.terms.items()}, hi)
                    for fl, g in zip(flow, Lg)]
        # h F~ contributes f_j itself at h^j (F~ holds f_1 .. f_(j-1) only)
        f.append([sp.expand(d[j][c] - flow[c].coeff(j)) for c in range(len(y))])
    name = method if isinstance(method, str) else method.name
    return ModifiedEquation(name, form, y, f, time.perf_counter() - t0, model)


# ----- Hamiltonian structure ------------------------------------------------------------------

def hamiltonian_defect(term: Sequence, q: Sequence, p: Sequence) -> sp.Matrix:
    """J^-1 f' - (J^-1 f')^T for a field f on (q, p): zero exactly when f is locally
    Hamiltonian (f = J grad H), simplified."""
    n = len(q)
    y = list(q) + list(p)
    Df = sp.Matrix([[sp.diff(fi, yj) for yj in y] for fi in term])
    J = sp.zeros(2 * n)
    J[:n, n:] = sp.eye(n)
    J[n:, :n] = -sp.eye(n)
    S = J.T * Df                                # J^-1 = -J = J^T
    return (S - S.T).applyfunc(lambda e: sp.simplify(sp.expand_trig(e)))


def _qp_terms(me):
    """The terms of a modified equation on (q, p): those of a (q, v) equation after the
    change p = M v (constant M)."""
    if me.form == "qp":
        return me.terms
    q, n = me.model.q, len(me.model.q)
    if any(e.has(*q) for e in me.model.M):
        raise NotImplementedError(f"{me.method}: a (q, v) modified equation is taken to (q, p) "
                                  "only for a constant mass matrix")
    v_of_p = dict(zip(me.model.v, me.model.v_of_p))
    M = me.model.M
    return [[sp.expand(e.subs(v_of_p)) for e in t[:n]] +
            [sp.expand(x) for x in M * sp.Matrix([e.subs(v_of_p) for e in t[n:]])] for t in me.terms]


def check_hamiltonian(me: ModifiedEquation) -> list:
    """Find the terms of a modified equation that are not Hamiltonian.

    A term f is Hamiltonian (f = J grad H) exactly when J^-1 f' is symmetric
    (:func:`hamiltonian_defect`); (q, v) equations are checked after the change
    p = M v (constant M only).

    Parameters
    ----------
    me : ModifiedEquation
        From :func:`modified_equation`.

    Returns
    -------
    list of (int, sympy.Matrix)
        (k, J^-1 f_(k+1)' - its transpose) for every term h^k f_(k+1) that is not
        Hamiltonian; empty when all are.

    Raises
    ------
    NotImplementedError
        A (q, v) equation of a system whose mass matrix depends on q.
    """
    q, p = me.model.q, me.model.p
    terms = _qp_terms(me)
    bad = []
    for k, t in enumerate(terms):
        D = hamiltonian_defect(t, q, p)
        if any(e != 0 for e in D):
            bad.append((k, D))
    return bad


@dataclass
class ModifiedHamiltonian:
    """The modified Hamiltonian H~(q, p) = H + h H_2 + ... + h^order H_(order+1) of a method.

    Made by :func:`modified_hamiltonian`.

    Parameters
    ----------
    method : str
        The method's name.
    q, p : list of sympy symbols
        Coordinates and momenta.
    terms : list of sympy expressions
        The coefficient of h^k is terms[k] (terms[0] = H).
    equation : ModifiedEquation
        The modified equation the terms are the potentials of.
    """

    method: str
    q: list
    p: list
    terms: list
    equation: ModifiedEquation = field(repr=False, default=None)

    def energy(self, upto: int | None = None, h: Any = H) -> Any:
        """Return the truncated modified Hamiltonian sum_(k <= upto) h^k H_(k+1).

        Parameters
        ----------
        upto : int, optional
            The highest power of h kept (default: all derived).
        h : sympy expression, default the symbol h
            What stands for the step.

        Returns
        -------
        sympy expression
            H~ truncated.
        """
        upto = len(self.terms) - 1 if upto is None else upto
        return sp.Add(*[h ** k * self.terms[k] for k in range(upto + 1)])


def _potential(term, q, p):
    """H with (dH/dp, -dH/dq) = term, H(0, 0) = 0: integrated along p at fixed q, then
    along q at p = 0."""
    n = len(q)
    H = sp.Integer(0)
    for i in range(n):                       # along p_i, the later p at 0
        e = term[i].subs({p[j]: 0 for j in range(i + 1, n)})
        s = sp.Dummy("s")
        H += sp.integrate(e.subs(p[i], s), (s, 0, p[i]))
    at0 = {pi: 0 for pi in p}
    for i in range(n):                       # along q_i at p = 0, the later q at 0
        e = (-term[n + i]).subs(at0).subs({q[j]: 0 for j in range(i + 1, n)})
        s = sp.Dummy("s")
        H += sp.integrate(e.subs(q[i], s), (s, 0, q[i]))
    return sp.expand(H)


def modified_hamiltonian(method: Any, system: Any, order: int,
                         **method_params: Any) -> ModifiedHamiltonian:
    """The modified Hamiltonian of a method, to h^order, as a function of (q, p).

    A (q, v) method's modified equation is taken to (q, p) by p = M v first (constant M).

    Parameters
    ----------
    method : str or Method
        A registered one-step method.
    system : LagrangianSystem
        An autonomous M, V system without forces.
    order : int
        The highest power of h kept.
    **method_params
        The method's parameters.

    Returns
    -------
    ModifiedHamiltonian
        H and its corrections H_2 .. H_(order+1), each the potential of its term of the
        modified field (integrated along p, then along q at p = 0).

    Raises
    ------
    NotHamiltonianError
        A term of the modified field is not Hamiltonian (names the power of h).
    NotImplementedError
        A (q, v) method on a system whose mass matrix depends on q.
    """
    me = modified_equation(method, system, order, **method_params)
    bad = check_hamiltonian(me)
    if bad:
        k, D = bad[0]
        entry = next(e for e in D if e != 0)
        raise NotHamiltonianError(f"{me.method}: the h^{k} term of the modified field is not "
                                  f"Hamiltonian (J^-1 f' is not symmetric: {entry} != 0)")
    q, p = me.model.q, me.model.p
    qp = _qp_terms(me)
    terms = [me.model.H] + [_potential(t, q, p) for t in qp[1:]]
    return ModifiedHamiltonian(me.method, q, p, terms, me)


from .precision import boundary_module  # noqa: E402  (last: wraps the names above)

boundary_module(globals())
