"""Backward error analysis: the modified equation, the modified Hamiltonian and the
modified Lagrangian of a one-step method, derived exactly from the method's own
declaration.

A one-step method y_(j+1) = Phi_h(y_j) is, to any order, the exact time-h flow of a
*modified* equation y' = f_1(y) + h f_2(y) + h^2 f_3(y) + ... (Hairer, Lubich & Wanner,
*Geometric Numerical Integration*, 2nd ed., Sec. IX.1; f_1 = f).  Steps:

1. **The series of the step.**  Phi_h(y) = y + h d_1(y) + h^2 d_2(y) + ..., each d_k
   exact, from the method's declaration (:attr:`mpvi.methods.Method.declaration`, one of
   the types of :mod:`mpvi.methods.declarations`), by the series executor of its type
   (:data:`SERIES`):

   * a trial-function method (:class:`~mpvi.methods.declarations.VariationalMethod`,
     :class:`~mpvi.methods.declarations.GalerkinMethod`: Simpson, the midpoint and Lobatto
     variational integrators, the Hermite methods): its trial basis, quadrature rule and
     equations, written on jets (:mod:`mpvi.analysis.jets`: truncated power series in h) at a
     *generic node* tau, the quadrature sum_k w_k F(tau_k) taken exactly through the
     rule's moments sum_k w_k tau_k^m (:func:`quadrature_moments`; rules whose nodes are
     roots of a polynomial, such as 8-point Gauss-Legendre, need no root arithmetic);
   * a Runge-Kutta tableau (:class:`ButcherTableau`: RK2, the implicit midpoint rule),
     its stages solved by fixed-point iteration on jets (each iteration gains a power of h);
   * Mutze's parabolic path: the g-family (:class:`ParabolicPath`, g = 0 the direct
     midpoint method) and the action-based methods (:class:`ParabolicAction`: the midpoint
     variation method, eq. (54), and the Euler-Lagrange equation for parabolic paths,
     eq. (44)); Newmark's family (:class:`NewmarkScheme`);
   * a step function (:class:`StepFunction`: RK4's and GBS's own code,
     :func:`mpvi.engines.ode.rk4_step`, :func:`mpvi.engines.ode.gbs_step`), run on lists of jets;
   * a truncated Taylor series (:class:`TaylorSeries`: the Taylor scheme).

   Implicit step equations are solved by a chord iteration with their exact
   leading-order Jacobian (:func:`_chord_solve`): every sweep fixes one more power of h.

2. **The modified field** (HLW IX.1, eq. (1.4)): with G_1 = F~ = f_1 + h f_2 + ... and
   G_k = G_(k-1)' F~, the flow of F~ is y + sum_k h^k G_k / k!, and
   f_j = d_j - sum_(k=2..j) [h^(j-k)] G_k / k!.  Each [h^m] G_k is computed once (from
   the Jacobians of the earlier ones), so the cost grows as the cube of the order.

3. **The modified Hamiltonian** (:func:`modified_hamiltonian`): every f_j of a symplectic
   method must be Hamiltonian, f_j = J grad H_j (:func:`check_hamiltonian` checks the
   symmetry of J^-1 f_j'); H_j is its potential.  A (q, v) method's equation is taken to
   (q, p) by p = M(q) v first.  H~ = H + h^p H_(p+1) + ... for a method of order p.
   The potential is found exactly in the ring: along p it is a polynomial; H_j(q, 0) is
   the solution of a linear system over Q for the numerator of an ansatz
   N / prod D^(a-1) over the reciprocals 1/D of the field (:func:`_gradient_potential`;
   a q-dependent mass matrix such as the double pendulum's gives 1/(2 - cos^2(q1 - q2))),
   with the bare coordinates to the degree H has them, then to any degree; for a system
   with roots of the coordinates (Kepler's 1/r, N bodies) as a function of distances
   instead (:func:`_invariant_potential`: N in the powers of the reciprocals' bases D and
   the roots D^(1/n), its coefficients in the parameters); sympy's ``integrate`` only where
   no such potential is found.  Roots are exact in the canonical algebra (D^(-1/2) = D^(1/2) (1/D) with
   (D^(1/2))^2 = D, D irreducible: :meth:`mpvi.analysis.jets.Algebra.decidable`).  H_j(0,
   0) = 0 where H_j is finite at the origin; where the origin is a singularity of H_j
   (Kepler's 1/r) its constant is the one the construction gives.  Each H_j is
   returned over a common denominator, its numerator reduced: a zero term is 0.

4. **The modified Lagrangian** (:func:`modified_lagrangian`): the Legendre transform of
   H~, L~(q, v) = p v - H~(q, p) at v = dH~/dp, as a series in h; its Euler-Lagrange
   equations are the modified equation written for q alone (M. Vermeeren, "Modified
   equations for variational integrators", Numer. Math. 137 (2017) 1001-1037; modified
   Lagrangians are unique only up to terms that do not change the Euler-Lagrange
   equations).

**The systems.**  Any Lagrangian mpvi integrates, its parameters kept as symbols:

* L quadratic in the velocities, L = v^T M(t, q) v / 2 + A(t, q).v - V(t, q) (the M, V
  form, magnetic and gyroscopic terms A.v): the (q, v) and the (q, p) forms, with the
  canonical momenta p = dL/dv = M v + A and H = (p - A)^T M^-1 (p - A) / 2 + V;
* a time-dependent L or a force F(t, q, v) (the Lagrange-d'Alembert principle): the
  non-autonomous series, t a variable of the ring, the stage times t + c h jets, the
  modified field f_j(t, y) with t' = 1 exactly (the extended field (f, 1), whose t-terms
  beyond the first vanish).  A time-dependent L without forces has a modified
  Hamiltonian H_j(t, q, p) for a symplectic method (t a parameter: the (q, p) part of
  each f_j is Hamiltonian at each t, which :func:`check_hamiltonian` verifies); a forced
  system has none;
* any other regular L(t, q, v): the modified equation on (q, v) (a method on (q, p)
  starts from p = P(t, q, v), and its new momenta are taken back to velocities as a
  series, :func:`_velocity_from_momentum`); no modified Hamiltonian or Lagrangian, which
  would need v(q, p), without a closed form (refused, saying so).

The momenta are named like the coordinates (q1 -> p1, x -> p_x,
:func:`_momentum_name`); the step symbol is h unless the system has a symbol named h
(:data:`H`).  Every term is returned over a common denominator with a reduced numerator
(:func:`_simplified`): a term equal to zero is 0.  All arithmetic is exact: polynomials with
rational coefficients in the state, the parameters and the system's functions
(:class:`mpvi.analysis.jets.Algebra`, on FLINT); the results are sympy expressions, each term made
from the ring when it is first read.

The process keeps the last :data:`MEMO_SIZE` derivations (a method with its parameters on
a system, equal systems alike): a later call to a higher order resumes the step
equations' chord iteration where it can and continues the field, the checks and the
potentials from the terms found (through h^6 after h^4 costs the difference), a lower
order reads them; either gives what a derivation from scratch gives, term by term
(:func:`forget_derivations` drops them).
"""
from __future__ import annotations

import itertools
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from math import factorial
from typing import TYPE_CHECKING, Any

import sympy as sp
from sympy.polys.domains import QQ

from mpvi.methods.declarations import (ButcherTableau, GalerkinMethod, LinearOnly, NewmarkScheme,
                           ParabolicAction, ParabolicPath, StepFunction, TaylorSeries,
                           VariationalMethod)
from mpvi.methods.declarations import EXACT  # noqa: F401  (mpvi.analysis.modified.EXACT: its public path before)
from mpvi.ground.expressions import as_expression
from mpvi.analysis.jets import (Algebra, Jet, UnsupportedExpression, _rational_parts,
                                current_backend, evaluate, evaluate_all)
from mpvi.ground.precision import entry, entry_class
from mpvi.model.first_order import FirstOrderSystem
from mpvi.model.mechanics import TIME, LagrangianSystem
from mpvi.methods.quadrature import _TAU
from mpvi.methods import get_method
from mpvi.ground.checks import integer

if TYPE_CHECKING:
    from mpvi.methods.quadrature import Quadrature
    from mpvi.methods import Method

H = sp.Symbol("h", positive=True)
"""The step symbol of the modified equations' series: h (positive), unless the system has a
symbol named h; then each derivation on it uses a private symbol of its own (a sympy
Dummy, printed ``_h``), which no symbol of the user's can equal (:func:`_step_symbol`).
The results name theirs (``ModifiedEquation.h``)."""

EXACT_HI = 10 ** 6
"""The order of an exact jet (h itself, 1/h, a constant): never the one that limits."""


class NotHamiltonianError(ArithmeticError):
    """A term of a modified field is not Hamiltonian.

    The method is not symplectic (or not on this system); the message names the power of
    h and the defect.  An ``ArithmeticError``.
    """


# ----- the system as sympy ------------------------------------------------------------------

MAX_ORDER = 40
"""The highest power of h a derivation goes to (about 30 s for Simpson's method on the
pendulum: the cost grows as order^6 there)."""


def _check_order(order):
    if isinstance(order, bool) or not isinstance(order, int) or order < 0:
        raise ValueError(f"order must be a non-negative integer, got {order!r}")
    if order > MAX_ORDER:
        raise ValueError(f"order = {order} is beyond what mpvi derives (h^{MAX_ORDER}): the "
                         "derivation's cost grows as order^6 to order^7 there (the pendulum "
                         "through h^40: 8 s for the midpoint rule, 29 s for Simpson's method; "
                         f"through h^{order} that is about "
                         f"{29 * (order / 40) ** 6.5 / 60:.2g} minutes for Simpson's)")


def _step_symbol(system):
    """The step symbol of a derivation on ``system``: :data:`H`, or a private Dummy printed
    ``_h`` when one of the system's symbols (coordinate, velocity, parameter) is named h."""
    own = [*system.coords, *system.velocity_symbols, *system.param_symbols]
    if any(str(s) == str(H) for s in own):
        return sp.Dummy(str(H), positive=True)
    return H


def _momentum_name(coordinate) -> str:
    """The name of the momentum conjugate to a coordinate: q<suffix> -> p<suffix> (q1 ->
    p1, q_a -> p_a, q -> p), any other name x -> p_x."""
    name = str(coordinate)
    return "p" + name[1:] if name.startswith("q") else f"p_{name}"


def _momentum_symbols(system) -> list:
    """The momenta of a derivation on ``system``, named like its coordinates
    (:func:`_momentum_name`: q1..qn -> p1..pn, x -> p_x): plain symbols with those names,
    or private ones (sympy Dummies with the same names, printed ``_p1``) when a name is
    taken by one of the system's own symbols or two coordinates give the same name, so
    that a coordinate or parameter named ``p1`` is never confused with a momentum."""
    own = [*system.coords, *system.velocity_symbols, *system.param_symbols]
    names = [_momentum_name(x) for x in system.coords]
    if len(set(names)) < len(names) or set(names) & {str(s) for s in own}:
        return [sp.Dummy(name) for name in names]
    return [sp.Symbol(name) for name in names]


def _force_text(system) -> str:
    """The force F(t, q, v) as text, a private velocity symbol of the system written q'."""
    names = {v: sp.Symbol(f"{q}'") for q, v in zip(system.coords, system.velocity_symbols)
             if isinstance(v, sp.Dummy)}
    F = [sp.sympify(f, strict=True).xreplace(names) for f in system.force_expr]
    return str(F[0] if len(F) == 1 else F)


class _Model:
    """The sympy data of a system for the derivation: coordinates q, momenta p = dL/dv,
    velocities v, the time t when L or the force F depends on it, and the fields of the
    (q, v) and (q, p) forms.

    * L quadratic in v, L = v^T M(t, q) v / 2 + A(t, q).v - V(t, q) (the M, V form, and
      magnetic or gyroscopic terms A.v): p = M v + A, H = (p - A)^T M^-1 (p - A) / 2 + V,
      q' = dH/dp, p' = -dH/dq + F(t, q, M^-1 (p - A));
    * any other regular L(t, q, v): the (q, v) form only (v' = L_vv^-1 (dL/dq + F -
      L_vq v - L_vt)); the (q, p) form needs v(q, p), which has no closed form.

    The field of a time-dependent system is f(t, y), t' = 1: t is a variable of the ring."""

    def __init__(self, system):
        name = system.name
        if getattr(system, "first_order", False):
            raise ValueError(f"modified equations: {name} is a first-order system; a "
                             "mechanical system with a Lagrangian is needed")
        L = getattr(system, "lagrangian_expr", None)
        if L is None:
            raise ValueError(f"modified equations: {name} has no Lagrangian expression")
        self.system = system
        n = self.n = system.dof
        self.q = list(system.coords)
        self.v = list(system.velocity_symbols)
        self.p = _momentum_symbols(system)
        self.h = _step_symbol(system)
        model = system.model
        self.forced = bool(system.has_force)
        self.F = list(system.force_expr) if self.forced else [sp.Integer(0)] * n
        self.t = TIME if (L.has(TIME) or any(sp.sympify(e, strict=True).has(TIME)
                                              for e in self.F)) else None
        self.quadratic = bool(system.quadratic_in_velocity)
        self.L = L
        self.P, self.G = list(model._P), list(model._G)
        Lvv, r = model.symbolic("motion")
        zero_v = {vi: 0 for vi in self.v}
        if system.mass_expr is not None:
            self.M, self.Minv = sp.Matrix(system.mass_expr), model.inverse_mass
            self.A, self.V = [sp.Integer(0)] * n, system.potential_expr
            self.f_qv = list(model.field_qv)
        else:
            self.M = sp.Matrix(Lvv)
            self.Minv = self.M.inv().applyfunc(sp.cancel)
            self.f_qv = self.v + [sp.expand(a) for a in self.Minv * sp.Matrix(r)]
            self.A = [sp.expand(e.subs(zero_v)) for e in self.P] if self.quadratic else None
            self.V = sp.expand(-L.subs(zero_v)) if self.quadratic else None
        if self.quadratic:
            pa = sp.Matrix(self.p) - sp.Matrix(self.A)
            self.v_of_p = [sp.simplify(e) for e in self.Minv * pa]
            self.H = sp.expand((pa.T * self.Minv * pa)[0] / 2 + self.V)
            at_p = dict(zip(self.v, self.v_of_p))
            self.f_qp = [sp.diff(self.H, pi) for pi in self.p] + \
                [-sp.diff(self.H, qi) + sp.expand(Fi.subs(at_p)) for qi, Fi in zip(self.q, self.F)]
        else:
            self.v_of_p = self.H = self.f_qp = None
        self._alg = None

    @property
    def variables(self):
        return self.q + self.p + self.v + ([self.t] if self.t is not None else [])

    def need_qp(self, what):
        """Refuse a (q, p) derivation on an L that is not quadratic in v (NotImplementedError
        naming the cause and what works)."""
        if not self.quadratic:
            raise NotImplementedError(
                f"{what}: the Lagrangian of {self.system.name} is not quadratic in the "
                "velocities, so p = dL/dv has no closed-form inverse v(q, p), which the "
                "(q, p) form needs; modified_equation derives the modified field of a method "
                "on (q, v) for such an L")

    def algebra(self, extra=(), more=()) -> Algebra:
        """The exact ring of a derivation on this system (:class:`mpvi.analysis.jets.Algebra`),
        with ``extra`` generators and the atoms of the expressions ``more``."""
        if self._alg is None:
            exprs = [*self.f_qv, *self.P, *self.G, self.L, *self.M, *self.F]
            if self.quadratic:
                exprs += [*self.f_qp, self.H, *self.v_of_p, *self.A, self.V]
            else:                           # L_vv(t, q, v)^-1: _velocity_from_momentum
                exprs += [*self.Minv]
            self._alg = Algebra(exprs, self.variables)
        if not extra and not more:
            return self._alg
        return Algebra(more, self.variables, extra, parent=self._alg)

    def state(self, form):
        """The derivation's state symbols for a method on ``form``: q, p or q, v -- always
        q, v for an L not quadratic in v (a (q, p) method's momenta are then P(t, q, v),
        :func:`_start`, and its new momenta are taken back to velocities,
        :func:`_velocity_from_momentum`)."""
        return self.q + (self.p if form == "qp" and self.quadratic else self.v)

    def time_jet(self, hi, alg, offset=None):
        """The time t (+ ``offset``, a jet) as a jet, or None for an autonomous system."""
        if self.t is None:
            return None
        t = Jet.constant(self.t, hi, alg)
        return t if offset is None else t + offset

    def time_derivative(self, d, form):
        """q^(d) along the exact flow as expressions in the state of ``form``: q, v, the
        acceleration, and Lie derivatives of it along the (q, v) field (and d/dt) for
        d >= 3."""
        D = list(self.q)
        for _ in range(d):
            D = [sp.expand(sum(sp.diff(e, s) * f for s, f in zip(self.q + self.v, self.f_qv))
                           + (sp.diff(e, self.t) if self.t is not None else 0)) for e in D]
        if form == "qp" and self.quadratic:
            D = [sp.expand(e.subs(dict(zip(self.v, self.v_of_p)))) for e in D]
        return D

    def field(self, form):
        return self.f_qp if form == "qp" else self.f_qv


# ----- quadrature as moments ----------------------------------------------------------------

@lru_cache(maxsize=None)
def _node_polynomial(quad):
    """The node polynomial prod_k (x - tau_k) of a rule (rational coefficients, exact:
    the product of the nodes' minimal polynomials, each with all its roots among the
    nodes) and its variable."""
    x = sp.Dummy("x")
    groups: dict = {}
    for t in quad.nodes:
        mp = sp.Poly(sp.minimal_polynomial(sp.sympify(t, strict=True), x), x, domain=QQ).monic()
        groups[mp] = groups.get(mp, 0) + 1
    omega = sp.Poly(1, x, domain=QQ)
    for mp, count in groups.items():
        if count != mp.degree():
            raise NotImplementedError(
                f"{quad.name}: {count} of the {mp.degree()} conjugate roots of "
                f"{mp.as_expr()} are nodes; the moments need all or none")
        omega *= mp
    return omega, x


class _Moments:
    """m -> sum_k w_k tau_k^m of an interpolatory rule on [0, 1], exact rationals: 1/(m+1)
    up to the rule's degree, beyond it the integral of x^m modulo the node polynomial
    (x^m and its remainder agree at every node, and the rule integrates polynomials of
    degree < number of nodes exactly)."""

    def __init__(self, quad):
        if quad.degree < len(quad.nodes) - 1:
            raise NotImplementedError(f"{quad.name} is not interpolatory (degree "
                                      f"{quad.degree} < {len(quad.nodes) - 1})")
        self.quad = quad
        self.omega, self.x = _node_polynomial(quad)
        self.node_coefficients = list(reversed(self.omega.all_coeffs()))
        self.values = []
        self.power = sp.Poly(1, self.x, domain=QQ)       # x^m mod omega

    def __call__(self, m):
        while len(self.values) <= m:
            k = len(self.values)
            if k <= self.quad.degree:
                self.values.append(QQ(1, k + 1))
            else:
                r = self.power
                self.values.append(sum((c * QQ(1, e + 1) for (e,), c in r.terms()), QQ(0)))
            self.power = (self.power * sp.Poly(self.x, self.x, domain=QQ)).rem(self.omega)
        return self.values[m]


@entry
@lru_cache(maxsize=None)
def quadrature_moments(quad: Quadrature) -> _Moments:
    """The moments sum_k w_k tau_k^m of a quadrature rule (:class:`mpvi.methods.quadrature.Quadrature`)
    as a function of m, exact (``QQ`` numbers): with them a rule sum_k w_k F(tau_k) is taken
    exactly on any F polynomial in tau, whatever the nodes are (roots included)."""
    return _Moments(quad)


# ----- step series --------------------------------------------------------------------------

def _jets(values, hi, alg):
    return [Jet.constant(x, hi, alg) for x in values]


def _zero(hi, alg):
    return Jet({}, hi, alg)


def _field_on_jets(exprs, symbols, hi, alg, time=None):
    """f(t, y) on jets: ``exprs`` with the jets y for ``symbols`` and the jet t for the
    time symbol ``time`` (None: an autonomous field, t unused)."""
    def f(t, y):
        env = {s: (x.truncate(hi) if isinstance(x, Jet) else x) for s, x in zip(symbols, y)}
        if time is not None:
            env[time] = t.truncate(hi)
        return evaluate_all(exprs, env, hi, alg)
    return f


def _velocity_from_momentum(model, q1, p1, t1, hi, alg):
    """v1 with P(t1, q1, v1) = p1 (P = dL/dv), as jets to O(h^hi), for q1, p1 jets whose
    h^0 terms are the state's q and P(t, q, v): a chord iteration from v with the constant
    Jacobian L_vv(t, q, v)^-1 (each round gains a power of h)."""
    n = model.n
    Minv = [[alg.coerce(model.Minv[r, c]) for c in range(n)] for r in range(n)]
    V = _jets(model.v, hi, alg)
    q1 = [x.truncate(hi) for x in q1]
    for _ in range(hi + 1):
        env = dict(zip(model.q, q1))
        env.update(zip(model.v, V))
        if t1 is not None:
            env[model.t] = t1
        R = [e - p for e, p in zip(evaluate_all(model.P, env, hi, alg), p1)]
        V = [(V[r] - sum((R[c] * Minv[r][c] for c in range(n)), _zero(hi, alg)))
             .map(lambda c: _normalized(c, alg)) for r in range(n)]
    return V


def _start(model, form, hi, alg):
    """The state a method on ``form`` starts from, as jets: q and v, or q and p (for an L
    not quadratic in v: p = P(t, q, v), expressions in the derivation's state)."""
    if form == "qp" and not model.quadratic:
        return _jets(model.q + model.P, hi, alg)
    return _jets(model.state(form), hi, alg)


def _field_fn(model, form, hi, alg):
    """The field f(t, y) of ``form`` on jets; on (q, p) for an L not quadratic in v,
    q' = v, p' = dL/dq + F at the v with P(t, q, v) = p (:func:`_velocity_from_momentum`)."""
    if form == "qp" and not model.quadratic:
        n = model.n

        def f(t, y):
            t = t if model.t is not None else None
            V = _velocity_from_momentum(model, y[:n], y[n:], t, hi, alg)
            env = dict(zip(model.q, [x.truncate(hi) for x in y[:n]]))
            env.update(zip(model.v, V))
            if t is not None:
                env[model.t] = t
            return V + evaluate_all([g + F for g, F in zip(model.G, model.F)], env, hi, alg)
        return f
    return _field_on_jets(model.field(form), model.state(form), hi, alg, model.t)


def _series_step_function(decl, model, hi, memo=None):
    alg = model.algebra()
    f = _field_fn(model, decl.form, hi, alg)
    t0 = model.time_jet(hi, alg)
    return decl.form, decl.step(f, 0 if t0 is None else t0, _start(model, decl.form, hi, alg),
                                Jet.step(EXACT_HI, alg))


def _series_tableau(decl, model, hi, memo=None):
    alg = model.algebra()
    f = _field_fn(model, decl.form, hi, alg)
    h = Jet.step(EXACT_HI, alg)
    s = len(decl.b)
    # stage i at t + c_i h, c_i = sum_j a_ij
    times = [model.time_jet(hi, alg, h * sum(decl.a[i], 0)) for i in range(s)]
    Y = _start(model, decl.form, hi, alg)
    k = [[_zero(hi, alg) for _ in Y] for _ in range(s)]
    # fixed point: every iteration gains one power of h (the stages are multiplied by h)
    for _ in range(hi + 1):
        k = [f(times[i], [yi + h * sum((k[j][c] * decl.a[i][j] for j in range(s)), _zero(hi, alg))
                          for c, yi in enumerate(Y)]) for i in range(s)]
    return decl.form, [yi + h * sum((k[i][c] * decl.b[i] for i in range(s)), _zero(hi, alg))
                       for c, yi in enumerate(Y)]


def _parabolic_update(x, v, a, h):
    """mutze eq. (74): v_new = v + h a, x_new = x + (h/2)(v + v_new)."""
    v1 = [vg + h * ag for vg, ag in zip(v, a)]
    x1 = [xg + h * (vg + v1g) * QQ(1, 2) for xg, vg, v1g in zip(x, v, v1)]
    return x1 + v1


def _series_parabolic(decl, model, hi, memo=None):
    n = model.n
    acc = model.f_qv[n:]

    def residual(U, alg, hi):
        x, v = _jets(model.q, hi, alg), _jets(model.v, hi, alg)
        tau = Jet.step(EXACT_HI, alg) * QQ(1, 2)
        a = U[0]
        env = {model.q[g]: x[g] + v[g] * tau + a[g] * tau * tau * decl.g for g in range(n)}
        env.update({model.v[g]: v[g] + a[g] * tau for g in range(n)})
        if model.t is not None:                 # the midpoint data at t + tau
            env[model.t] = model.time_jet(hi, alg, tau)
        return [a[g] - evaluate(acc[g], env, hi, alg) for g in range(n)]
    U, alg = _chord_solve(residual, [0], n, {0: acc}, {0: 0}, hi, "mutze g-family", model,
                          memo=memo)
    x, v = _jets(model.q, hi, alg), _jets(model.v, hi, alg)
    return decl.form, _parabolic_update(x, v, U[0], Jet.step(EXACT_HI, alg))


def _series_action(decl, model, hi, memo=None):
    """Mutze's eqs. (54), (44): int_0^h R(s) ds = 0 with s = h tau, the quadrature taken at
    the generic node tau through the rule's moments."""
    n = model.n
    pieces = decl.integrand(model.system)
    X, V, R, a_syms, S, TAU = (pieces[k] for k in ("X", "V", "R", "a", "s", "tau"))
    moments = quadrature_moments(decl.quadrature)
    acc = model.f_qv[n:]

    def residual(U, alg, hi):
        x, v = _jets(model.q, hi, alg), _jets(model.v, hi, alg)
        h = Jet.step(EXACT_HI, alg)
        s = h * alg.coerce(_TAU)
        a = U[0]
        env = {X[g]: x[g] + v[g] * s + a[g] * s * s * QQ(1, 2) for g in range(n)}
        env.update({V[g]: v[g] + a[g] * s for g in range(n)})
        env.update({a_syms[g]: a[g] for g in range(n)})
        env[S] = s
        env[TAU] = h * QQ(1, 2)
        env[TIME] = model.time_jet(hi, alg) or Jet({}, EXACT_HI, alg)   # R is at t + s
        rows = []
        for g in range(n):
            Rg = evaluate(R[g], env, hi + 3, alg)
            rows.append(Rg.map(lambda c: alg.integrate_moments(c, _TAU, moments)) * h)
        return rows
    U, alg = _chord_solve(residual, [0], n, {0: acc}, {0: 0}, hi, decl.label or decl.kind,
                          model, extra=[_TAU], memo=memo)
    x, v = _jets(model.q, hi, alg), _jets(model.v, hi, alg)
    return decl.form, _parabolic_update(x, v, U[0], Jet.step(EXACT_HI, alg))


def _series_newmark(decl, model, hi, memo=None):
    n = model.n
    if decl.form == "qp" and (not model.quadratic or any(e.has(*model.q, TIME) for e in model.M)
                              or any(model.A)):
        raise NotImplementedError("Newmark on (q, p) needs p = M v with a constant M; "
                                  f"{model.system.name} has a mass matrix that depends on the "
                                  "state or time, a term linear in the velocities or an L not "
                                  "quadratic in them")
    acc = model.f_qv[n:]
    b, c = (sp.nsimplify(as_expression(x, what=f"Newmark parameter {name}"), rational=True)
            for name, x in (("beta", decl.beta), ("gamma", decl.gamma)))
    v0 = model.v_of_p if decl.form == "qp" else model.v          # v = M^-1 p

    def at(x, v, alg, hi, dt=None):              # q, v (and t + dt) for the field's symbols
        env = dict(zip(model.q + model.v, x + v))
        if model.t is not None:
            env[model.t] = model.time_jet(hi, alg, dt)
        return env

    def new_state(a1, alg, hi):
        x, v = _jets(model.q, hi, alg), _jets(v0, hi, alg)
        h = Jet.step(EXACT_HI, alg)
        a0 = [evaluate(e, at(x, v, alg, hi), hi, alg) for e in acc]       # at t
        x1 = [x[g] + h * v[g] + h * h * (a0[g] * (sp.Rational(1, 2) - b) + a1[g] * b) for g in range(n)]
        v1 = [v[g] + h * (a0[g] * (1 - c) + a1[g] * c) for g in range(n)]
        return x1, v1

    def residual(U, alg, hi):
        x1, v1 = new_state(U[0], alg, hi)
        env = at(x1, v1, alg, hi, Jet.step(EXACT_HI, alg))                # at t + h
        return [U[0][g] - evaluate(acc[g], env, hi, alg) for g in range(n)]
    guess = [sp.expand(e.subs(dict(zip(model.v, v0)))) for e in acc]
    U, alg = _chord_solve(residual, [0], n, {0: guess}, {0: 0}, hi, "newmark", model,
                          memo=memo)
    x1, v1 = new_state(U[0], alg, hi)
    if decl.form == "qp":                       # p = M v, constant M
        v1 = [sum((v1[d] * model.M[g, d] for d in range(n)), _zero(hi, alg)) for g in range(n)]
    return decl.form, x1 + v1


def _series_taylor(decl, model, hi, memo=None):
    alg = model.algebra()
    y = model.state(decl.form)              # q, v for an L not quadratic in v: the Taylor
    f = [alg.coerce(e) for e in model.field(decl.form if model.quadratic else "qv")]
    out = _start(model, decl.form, hi, alg)  # polynomial of q(t) and P(t, q(t), v(t))
    g = [o.coeff(0) for o in out]
    for k in range(1, min(decl.order, hi - 1) + 1):      # Lie derivative along (f, t' = 1)
        g = [sum((alg.diff(gi, yj) * fj for yj, fj in zip(y, f)),
                 alg.diff(gi, model.t) if model.t is not None else alg.zero) for gi in g]
        out = [o + Jet({k: gi * alg.rational(1, factorial(k))}, hi, alg) for o, gi in zip(out, g)]
    return decl.form, out


def _leading_jacobian(residual, unknown, n, guess, scale, name, model, extra):
    """The leading-order Jacobian of step equations: row r's lowest power alpha_r in the
    unknowns W_i = h^scale[i] U_i and A[r, (i, g)] = [h^(alpha_r + scale[i])] dG_r/dU_ig,
    exact, and by how much each row's order falls short of the evaluation's.  Each
    unknown is perturbed by eps_ig h (eps a generator of the ring): the part of
    [h^(m+1)] G_r linear in eps_ig is [h^m] dG_r/dU_ig -- no function of a perturbed
    constant term is ever needed."""
    cols = [(i, g) for i in unknown for g in range(n)]
    eps = {c: sp.Dummy(f"eps{c[0]}_{c[1]}") for c in cols}
    alg = model.algebra(extra=[*extra, *eps.values()])
    top = max(scale.values(), default=0)

    def linear(c, col):             # the part of c linear in eps[col], at every eps = 0
        return alg.drop(alg.coefficient(c, eps[col]), list(eps.values()))
    for probe in (top + 4, top + 8, top + 16):
        U = {i: [Jet({0: alg.coerce(_guess_terms(guess[i][g])[0]),
                      1: alg.coerce(_guess_terms(guess[i][g])[1]) + alg.coerce(eps[(i, g)])},
                     probe, alg) for g in range(n)] for i in unknown}
        rows = residual(U, alg, probe)
        alpha, A = [], []
        for r in rows:
            first = {}
            for k in sorted(r.terms):
                c = alg.reduce(r.terms[k])
                for col in cols:
                    if col not in first and linear(c, col):
                        first[col] = k - 1 - scale[col[0]]
            if not first:
                break
            a_r = min(first.values())
            alpha.append(a_r)
            A.append([linear(alg.reduce(r.coeff(a_r + scale[i] + 1)), (i, g))
                      if a_r + scale[i] + 1 < r.hi else alg.zero for i, g in cols])
        else:
            return alpha, A, alg, [probe - r.hi for r in rows]
    raise ArithmeticError(f"{name}: a step equation does not depend on the unknowns")


def _guess_terms(g):
    """The coefficients of h^0 and h^1 of a first guess: an expression (its h^0 term) or a
    pair of them."""
    return tuple(g) if isinstance(g, tuple) else (g, 0)


def _det_adjugate(A, alg):
    """det(A) and adj(A) of a square matrix of ring elements, exactly (Laplace expansion
    along the first row of each minor, every minor computed once: O(n 2^n) products, no
    division)."""
    n = len(A)
    minors: dict = {}

    def det(rows, cols):                 # rows: a suffix of range(n) with one row removed
        if not rows:
            return alg.one
        key = (rows, cols)
        if key not in minors:
            out = alg.zero
            for pos, c in enumerate(cols):
                if A[rows[0]][c]:
                    term = A[rows[0]][c] * det(rows[1:], cols[:pos] + cols[pos + 1:])
                    out = out - term if pos % 2 else out + term
            minors[key] = out
        return minors[key]
    everything = tuple(range(n))
    adj = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):              # adj[j][i] = (-1)^(i+j) det(A without row i, column j)
            minor = det(everything[:i] + everything[i + 1:], everything[:j] + everything[j + 1:])
            adj[j][i] = -minor if (i + j) % 2 else minor
    return det(everything, everything), adj


def _chord_solve(residual, unknown, n, guess, scale, hi, name, model, extra=(), memo=None):
    """Solve step equations ``residual(U, alg, hi) = 0`` (a list of jets; U: unknown -> n
    jets) as power series in h by a chord iteration with their leading-order Jacobian
    (:class:`_Chord`).  ``memo`` (a dict of the derivation, :class:`_Derivation`) keeps
    the iteration for a later derivation to another order.  Returns (U, algebra)."""
    chord = memo.get("chord") if memo is not None else None
    if chord is None:
        chord = _Chord(residual, unknown, n, guess, scale, name, model, extra)
        if memo is not None:
            memo["chord"] = chord
    return chord.solve(residual, hi), chord.alg


class _Chord:
    """A chord iteration on step equations, kept between derivations to different orders.

    Unknown i enters the step scaled by h^scale[i] (a slot of derivative d through
    h^d c): with W_i = h^scale[i] U_i, row r's lowest power in dG_r/dW is alpha_r and
    A[r, (i, g)] = [h^(alpha_r + scale[i])] dG_r/dU_ig at the first guess
    (:func:`_leading_jacobian`).  A correction of W at power m is then -A^-1 times the
    rows' residuals at powers alpha_r + m: every sweep fixes one more power of h.  A^-1 =
    adj(A) / det(A); 1/det(A) is an atom of the final algebra when A depends on the state
    (a mass matrix M(q)).

    Sweep m needs row r to O(h^(alpha_r + m + 1)) only: the residual is evaluated to the
    lowest order that gives it (the rows' orders lag the evaluation's by offsets that the
    last evaluation measured), the full order only for the last sweeps.  The
    coefficients of a jet below its order do not depend on the order it is computed to,
    so each rho is the one of an evaluation to the full order.

    A sweep that computed every row's coefficient and dropped no correction (none at a
    power >= the order) is repeated identically by an iteration to a higher order: the
    state after the last sweep of such a prefix is kept (:attr:`resume`) and a higher
    order starts from it -- deriving through h^6 after h^4 costs the difference, and
    gives what a derivation from scratch gives, term by term."""

    def __init__(self, residual, unknown, n, guess, scale, name, model, extra):
        self.alpha, A, jac, self.offsets = _leading_jacobian(residual, unknown, n, guess, scale,
                                                             name, model, extra)
        det, adj = _det_adjugate(A, jac)            # in the ring; as sympy, expanded, the
        det = sp.expand(jac.to_expr(det))           # new algebra's atom 1/det is found
        if det == 0:                                # from (its factors)
            raise ArithmeticError(f"{name}: the leading-order Jacobian of the step equations "
                                  "is singular")
        adj = sp.Matrix([[sp.expand(jac.to_expr(e)) for e in row] for row in adj])
        inv_det = sp.Pow(det, -1)
        alg = self.alg = model.algebra(extra=extra, more=[inv_det])
        self.adj = [[alg.coerce(e) for e in row] for row in adj.tolist()]
        self.inv_det = alg.coerce(inv_det)
        self.cols = [(i, g) for i in unknown for g in range(n)]
        self.scale, self.name = scale, name
        self.start = {i: [[alg.coerce(c) for c in _guess_terms(guess[i][g])] for g in range(n)]
                      for i in unknown}
        self.resume = None              # (sweeps done, U's terms, the order they hold for)
        self.solutions: dict = {}       # order -> U's terms

    def _jets(self, terms, hi):
        return {i: [Jet(t, hi, self.alg) for t in row] for i, row in terms.items()}

    @staticmethod
    def _terms(U):
        return {i: [dict(u.terms) for u in row] for i, row in U.items()}

    def _rows(self, residual, U, hi, m):
        """The residual's rows to the order sweep m needs (class doc)."""
        t = min(hi, max(a + m + 1 + o for a, o in zip(self.alpha, self.offsets)))
        while True:
            Ut = U if t >= hi else {i: [u.truncate(t) for u in row] for i, row in U.items()}
            rows = residual(Ut, self.alg, t)
            self.offsets = [t - r.hi for r in rows]
            if t >= hi or all(a + m < r.hi for r, a in zip(rows, self.alpha)):
                return rows
            wider = min(hi, max(a + m + 1 + o for a, o in zip(self.alpha, self.offsets)))
            t = wider if wider > t else hi

    def solve(self, residual, hi):
        """U to O(h^hi) (``residual``: the step equations, as for :func:`_chord_solve`)."""
        alg = self.alg
        if hi in self.solutions:
            return self._jets(self.solutions[hi], hi)
        first = 1
        if self.resume is not None and self.resume[2] <= hi:
            first = self.resume[0] + 1
            U = self._jets(self.resume[1], hi)
        else:
            U = {i: [Jet(dict(enumerate(c)), hi, alg) for c in row]
                 for i, row in self.start.items()}
        repeatable, resume = True, None
        top = hi - min(self.alpha) + max(self.scale.values(), default=0) + 1
        for m in range(first, top):
            rows = self._rows(residual, U, hi, m)
            repeatable = repeatable and all(a + m < r.hi for r, a in zip(rows, self.alpha))
            rho = [alg.reduce(r.coeff(a_r + m)) if a_r + m < r.hi else alg.zero
                   for r, a_r in zip(rows, self.alpha)]
            if any(rho):
                for pos, (i, g) in enumerate(self.cols):
                    delta = sum((self.adj[pos][k] * rho[k] for k in range(len(rho)) if rho[k]),
                                alg.zero)
                    delta = alg.reduce(delta * self.inv_det)
                    power = m - self.scale[i]
                    if not delta:
                        continue
                    if power >= hi:
                        repeatable = False
                        continue
                    if power < 1:
                        raise ArithmeticError(f"{self.name}: the first guess of the step is "
                                              "not consistent (a correction at h^0)")
                    U[i][g] = U[i][g] - Jet({power: delta}, hi, alg)
            if repeatable:
                resume = (m, self._terms(U), hi)
        if resume is not None and (self.resume is None or self.resume[2] <= hi):
            self.resume = resume
        self.solutions[hi] = self._terms(U)
        return U


class _Trial:
    """A trial-function declaration on jets: its slots, the known ones (the state at the
    left end) and the unknown ones, and the trial function written at a generic node tau
    (polynomials in tau) from the slot coefficients.  The quadrature sum_k w_k F(tau_k) is
    the linear functional of the rule's moments (:func:`quadrature_moments`)."""

    def __init__(self, spec, model):
        self.spec, self.model = spec, model
        basis = spec.disc.basis
        self.moments = quadrature_moments(spec.disc.quadrature)
        self.slots = slots = basis.slots
        self.form = spec.state
        self.y0 = (model.v if self.form == "qv" else model.p if model.quadratic
                   else model.P)            # the momenta P(t, q, v) of the (q, v) state
        self.known = {i: (model.q if s.derivative == 0 else self.y0)
                      for i, s in enumerate(slots)
                      if s.tau == 0 and s.derivative <= spec.known_derivative}
        self.unknown = [i for i in range(len(slots)) if i not in self.known]
        self.phi = [basis.poly(i) for i in range(len(slots))]

    def quadrature(self, jet, alg):
        return jet.map(lambda c: alg.integrate_moments(c, _TAU, self.moments))

    def path(self, U, alg, hi):
        """(hd, val, dval, combine, env): h^d_i per slot (None for d = 0), phi_i and
        phi_i' at tau, ``combine(coeffs, g)`` = sum_i coeffs[i] h^d_i c_ig, and the
        system's q, v at the trial function."""
        model, slots = self.model, self.slots
        h = Jet.step(EXACT_HI, alg)
        hinv = Jet({-1: alg.one}, EXACT_HI, alg)
        c = {i: _jets(v, hi, alg) for i, v in self.known.items()}
        c.update(U)
        hd = [h ** s.derivative if s.derivative else None for s in slots]
        val = [alg.coerce(p) for p in self.phi]
        dval = [alg.coerce(sp.diff(p, _TAU)) for p in self.phi]

        def scaled(i, comp):                 # h^d_i c_i
            return c[i][comp] * hd[i] if hd[i] is not None else c[i][comp]

        def combine(coeffs, g):
            return sum((scaled(i, g) * coeffs[i] for i in range(len(slots))), _zero(hi, alg))
        env = dict(zip(model.q, [combine(val, g) for g in range(model.n)]))
        env.update(zip(model.v, [combine(dval, g) * hinv for g in range(model.n)]))
        if model.t is not None:                # the time at the generic node: t + h tau
            env[model.t] = model.time_jet(hi, alg, h * alg.coerce(_TAU))
        return hd, val, dval, combine, env

    def solve(self, residual, hi, memo):
        """U, the unknown slots as jets to O(h^hi), and the algebra (:func:`_chord_solve`);
        the first guess of slot (tau, d) is x^(d)(t_j) of the exact solution."""
        guess = {i: self.model.time_derivative(self.slots[i].derivative, self.form)
                 for i in self.unknown}
        if not self.model.quadratic:        # L_vv depends on v: the leading Jacobian is
            for i in self.unknown:          # taken where the path's velocity is the state's
                s = self.slots[i]
                nxt = self.model.time_derivative(s.derivative + 1, self.form)
                guess[i] = [(g, s.tau * d) for g, d in zip(guess[i], nxt)]
        scale = {i: self.slots[i].derivative for i in self.unknown}
        return _chord_solve(residual, self.unknown, self.model.n, guess, scale, hi,
                            self.spec.disc.name, self.model, extra=[_TAU], memo=memo)

    def new_state(self, U, alg, y1=None):
        """(form, [q1, y1] jets): the slots at tau = 1 (y1 given for a (q, p) method)."""
        right = self.slots.index((1, 0))
        q1 = U[right] if right in U else None
        if y1 is None:
            y1 = U[self.slots.index((1, 1))]
        return self.form, list(q1) + list(y1)


def _series_variational(spec, model, hi, memo=None):
    """The step of a :class:`~mpvi.methods.declarations.VariationalMethod` on jets: the equations
    dS_d/dc_e (+ p_j) = 0 of its slots e, the quadrature at the generic node (:class:`_Trial`).
    Two more orders inside: the velocities are differences over h."""
    trial, n = _Trial(spec, model), model.n

    def gradient(U, alg, hi):
        """i -> dS_d/dc_i times 1/h (a common factor dropped)."""
        hinv = Jet({-1: alg.one}, EXACT_HI, alg)
        hd, val, dval, _, env = trial.path(U, alg, hi)
        # dL/dv and dL/dq + F (the discrete Lagrange-d'Alembert principle's integrand) in
        # one evaluation: their shared subexpressions once
        both = evaluate_all([*model.P, *(e + f for e, f in zip(model.G, model.F))], env, hi, alg)
        Pt, Gt = both[:n], both[n:]

        def dS(i):
            out = []
            for g in range(n):
                integrand = Gt[g] * val[i] + Pt[g] * dval[i] * hinv
                acc = trial.quadrature(integrand, alg)
                out.append(acc * hd[i] if hd[i] is not None else acc)
            return out
        return dS

    def residual(U, alg, hi):
        hinv = Jet({-1: alg.one}, EXACT_HI, alg)
        dS = gradient(U, alg, hi)
        rows = []
        for e, momentum in spec.equations:
            d = dS(e)
            rows.extend([d[g] + (_jets(trial.y0, hi, alg)[g] * hinv if momentum else 0)
                         for g in range(n)])
        return rows
    U, alg = trial.solve(residual, hi + 2, memo)
    if trial.form == "qv":
        return trial.new_state(U, alg)
    right = trial.slots.index((1, 0))          # p1 = dS_d/dq1 (dS above is it times 1/h)
    return trial.new_state(U, alg, [x * Jet.step(EXACT_HI, alg)
                                    for x in gradient(U, alg, hi + 2)(right)])


def _series_galerkin(spec, model, hi, memo=None):
    """The step of a :class:`~mpvi.methods.declarations.GalerkinMethod` on (q, v) on jets: the
    weighted residuals of the equations of motion against its test functions, the
    quadrature at the generic node (:class:`_Trial`).  Two more orders inside."""
    if spec.state != "qv":
        raise NotImplementedError(f"{spec.disc.name}: a Galerkin method on (q, p)")
    trial, n = _Trial(spec, model), model.n
    tests = [sp.expand(psi(_TAU)) for psi in spec.tests]
    a_sym = sp.symbols(f"a0:{n}", cls=sp.Dummy)
    R = [sum(sp.diff(model.P[g], model.v[d]) * a_sym[d] for d in range(n))
         + sum(sp.diff(model.P[g], model.q[d]) * model.v[d] for d in range(n))
         + sp.diff(model.P[g], TIME) - model.G[g] - model.F[g] for g in range(n)]

    def residual(U, alg, hi):
        hinv = Jet({-1: alg.one}, EXACT_HI, alg)
        _, _, _, combine, env = trial.path(U, alg, hi)
        ddval = [alg.coerce(sp.diff(p, _TAU, 2)) for p in trial.phi]
        env.update(zip(a_sym, [combine(ddval, g) * hinv * hinv for g in range(n)]))
        Rt = evaluate_all(R, env, hi, alg)
        return [trial.quadrature(Rt[g] * alg.coerce(psi), alg) for psi in tests for g in range(n)]
    U, alg = trial.solve(residual, hi + 2, memo)
    return trial.new_state(U, alg)


SERIES = {
    VariationalMethod: _series_variational,
    GalerkinMethod: _series_galerkin,
    ButcherTableau: _series_tableau,
    StepFunction: _series_step_function,
    TaylorSeries: _series_taylor,
    ParabolicPath: _series_parabolic,
    ParabolicAction: _series_action,
    NewmarkScheme: _series_newmark,
}
"""The series executor of each declaration type (:mod:`mpvi.methods.declarations`):
``executor(decl, model, hi, memo) -> (form, jets of the new state to O(h^hi))``.  A method
whose declaration is of one of these types (or of a subclass) needs nothing here."""


def _executor(decl, name):
    """The series executor of ``decl`` (:data:`SERIES`, by its type or a base of it)."""
    for kind in type(decl).__mro__:
        if kind in SERIES:
            return SERIES[kind]
    raise NotImplementedError(f"modified equations: method {name!r} declares a "
                              f"{type(decl).__name__}, which no series executor reads "
                              "(mpvi.analysis.modified.SERIES)")


def _unwrap(decl, model, name):
    if isinstance(decl, LinearOnly):
        if not getattr(model.system, "is_linear", False):
            raise ValueError(f"modified equations: {name} is defined for linear systems "
                             f"only, and {model.system.name} is not one")
        return decl.declaration
    return decl


MEMO_SIZE = 8
"""How many derivations (a method with its parameters on a system, in one ring backend)
the process keeps for a later call to another order (:func:`forget_derivations`)."""

_MEMO: "OrderedDict[tuple, _Derivation]" = OrderedDict()


@entry
def forget_derivations() -> None:
    """Drop the derivations kept for later calls (:data:`MEMO_SIZE`).

    A derivation of a method on a system keeps its step series, its modified field and its
    potentials, so that a later derivation of the same method on an equal system to
    another order costs only the difference (and gives what one from scratch gives, term
    by term); this frees their memory, or makes the next call start from scratch (for a
    benchmark).
    """
    _MEMO.clear()


def _frozen(x):
    """A hashable stand-in for a system's attribute (matrices and lists as tuples)."""
    if isinstance(x, sp.MatrixBase):
        return sp.ImmutableMatrix(x)
    if isinstance(x, (list, tuple)):
        return tuple(_frozen(e) for e in x)
    return x


def _memo_key(m, system, params):
    """The key of a derivation: the method (its identity, name and parameters), then the
    system's equations (equal systems share derivations) and the ring backend; None when
    the system has attributes that cannot be compared (such a derivation is not kept)."""
    attrs = ("name", "dof", "coords", "velocity_symbols", "param_symbols", "mass_expr",
             "lagrangian_expr", "potential_expr", "has_force", "force_expr", "time_dependent",
             "first_order", "is_linear")
    key = (id(m), m.name, tuple(sorted((k, repr(v)) for k, v in params.items())),
           type(system), tuple(_frozen(getattr(system, a, None)) for a in attrs),
           current_backend())
    try:
        hash(key)
    except TypeError:
        return None
    return key


class _Derivation:
    """Everything derived for one method on one system, reused by a later call to another
    order: the model, the step series per order (a chord iteration resumes,
    :class:`_Chord`), the modified field's terms and the intermediate G_k of
    :func:`_modified_field`, the (q, p) terms, their Hamiltonian defects, the potentials
    and the sympy expressions already made."""

    def __init__(self, method, decl, model):
        self.method, self.decl, self.model = method, decl, model
        self.executor = _executor(decl, method.name)    # SERIES: the step on jets
        self.memo: dict = {}            # the chord iteration (_chord_solve)
        self.steps: dict = {}           # order -> (form, state symbols, d, algebra)
        self.f: list = []               # the modified field's terms, f[k] = f_(k+1)
        self.G: dict = {}
        self.jac: dict = {}
        self.qp: list = []              # the terms on (q, p)
        self.defects: dict = {}         # k -> check_hamiltonian's entries
        self.potentials: dict = {}      # k -> H_(k+1) (ring element or sympy expression)
        self.exprs: dict = {}           # ("f", k) or ("H", k) -> sympy

    def step(self, hi):
        """(form, state symbols, d, algebra): d[k] = [h^k] Phi_h(y) - y, k < hi."""
        if hi not in self.steps:
            self.steps[hi] = self._step(hi)
        return self.steps[hi]

    def _step(self, hi):
        decl, model, name = self.decl, self.model, self.method.name
        form, out = self.executor(decl, model, hi, self.memo)
        if form == "qp" and not model.quadratic:      # (q1, p1) -> (q1, v1)
            alg, n = out[0].alg, model.n
            top = min(o.hi for o in out)
            t1 = model.time_jet(top, alg, Jet.step(EXACT_HI, alg))
            out = out[:n] + _velocity_from_momentum(model, out[:n], out[n:], t1, top, alg)
            form = "qv"
        y = model.state(form)
        for o in out:
            if o.hi < hi:
                raise ArithmeticError(f"{name}: the step series is known to O(h^{o.hi}) "
                                      f"only, not O(h^{hi})")
        alg = out[0].alg
        norm = alg.reduce if model.quadratic else (lambda c: _normalized(c, alg))
        d = [[norm(o.coeff(k) - (alg.coerce(yk) if k == 0 else alg.zero))
              for o, yk in zip(out, y)] for k in range(hi)]
        return form, y, d, alg

    def field(self, order):
        """(form, y, algebra, [f_1 .. f_(order+1)]) (HLW IX.1, :func:`_modified_field`):
        the terms found for a higher order, or those continued from the step series to
        O(h^(order + 2))."""
        if len(self.f) > order:
            form, y, _, alg = next(iter(self.steps.values()))
        else:
            form, y, d, alg = self.step(order + 2)
            ys, ds = y, d[:order + 2]
            if self.model.t is not None:     # f_j(t, y) with t' = 1 exactly: the flow of
                ys = y + [self.model.t]      # (y, t) moves t by h, the t-terms are 1, 0, ..
                ds = [row + [alg.one if k == 1 else alg.zero] for k, row in enumerate(ds)]
            _modified_field(ds, ys, alg, self.f, self.G, self.jac,
                            None if self.model.quadratic else lambda c: _normalized(c, alg))
        return form, y, alg, [row[:len(y)] for row in self.f[:order + 1]]

    def expr(self, kind, k, convert):
        """The sympy expression(s) of term k of ``kind``, made once."""
        if (kind, k) not in self.exprs:
            self.exprs[kind, k] = convert()
        return self.exprs[kind, k]


def _check_system(system, what):
    """Refuse what is not a system (by name, a TypeError) and a system with the imaginary
    unit in L or F (its modified equation would have complex terms)."""
    if not isinstance(system, (LagrangianSystem, FirstOrderSystem)):
        raise TypeError(f"{what}: system must be a mpvi.LagrangianSystem, got "
                        f"{type(system).__name__} {_brief(system)}")
    if getattr(system, "first_order", False):
        return                                  # refused by _Model, naming the system
    for e in [system.lagrangian_expr, *system.force_expr]:
        if sp.sympify(e, strict=True).has(sp.I):
            raise ValueError(f"{what}: {system.name}'s Lagrangian or force has the imaginary "
                             f"unit I ({_brief(e)}): a mechanical system is real; write it "
                             "with real functions (cos, sin)")


def _check_equation(me, what):
    """Refuse what is not a :class:`ModifiedEquation`, naming the argument."""
    if not isinstance(me, ModifiedEquation):
        raise TypeError(f"{what}: me must be a ModifiedEquation (from "
                        f"mpvi.modified_equation), got {type(me).__name__} {_brief(me)}")


def _brief(x, width=60):
    text = repr(x)
    return text if len(text) <= width else text[:width - 3] + "..."


def _derivation(method, system, params) -> _Derivation:
    """The :class:`_Derivation` of ``method`` on ``system``: the one kept for an equal
    call, or a new one (kept, the least recently used beyond :data:`MEMO_SIZE` dropped)."""
    m = get_method(method)
    _check_system(system, "modified equations")
    decl_of = getattr(m, "declaration", None)
    if decl_of is None:
        raise NotImplementedError(f"modified equations: method {m.name!r} declares no "
                                  "form the derivation reads (a trial-function method, a "
                                  "Butcher tableau, a step function or a Taylor series)")
    params = m.parameters(**params)
    key = _memo_key(m, system, params)
    der = _MEMO.get(key) if key is not None else None
    if der is not None and der.method is m:
        _MEMO.move_to_end(key)
        return der
    model = next((d.model for k, d in _MEMO.items() if key is not None and k[3:] == key[3:]),
                 None) or _Model(system)       # a system's model, shared by its methods
    der = _Derivation(m, _unwrap(decl_of(params), model, m.name), model)
    if key is not None:
        _MEMO[key] = der
        while len(_MEMO) > MEMO_SIZE:
            _MEMO.popitem(last=False)
    return der


def step_series(method, system, order: int, **params):
    """The series of one step of ``method`` on ``system``: ``(form, state symbols, d,
    model, algebra)`` with d[k] the list of the coefficients of h^k of Phi_h(y) - y
    (k = 0..order + 1), elements of the algebra."""
    _check_order(order)
    der = _derivation(method, system, params)
    form, y, d, alg = der.step(order + 2)
    return form, y, d, der.model, alg


# ----- the modified equation ---------------------------------------------------------------

def _normalized(c, alg):
    """c = N prod (1/D)^a with N reduced and free of the reciprocal atoms 1/D, the factors
    D of N cancelled: a normal form of c in ``alg`` (D (1/D) = 1 applied, which the ring's
    reduction does not), so that coefficients with a reciprocal L_vv(q, v)^-1 do not grow
    through products."""
    K = alg.reciprocal_degrees([c])
    if not K:
        return alg.reduce(c)
    N, K = _cancelled(alg.reduce(alg.clear_reciprocals(c, K)), K, alg)
    for i, a in K.items():
        N *= alg.atom_gen(i) ** a
    return N


def _cancelled(N, K, alg):
    """N / prod D^a ({atom index of 1/D: a}) with the factors D of N cancelled: (N', K')."""
    K = dict(K)
    for i in K:
        D = alg.reciprocal_base(i)
        while K[i] and N:
            quotient, rest = divmod(N, D)
            if rest:
                break
            N, K[i] = alg.reduce(quotient), K[i] - 1
    return N, K


def _simplified(c, alg):
    """The element ``c`` of ``alg`` as a sympy expression in a canonical simplified form:
    N / prod D^a over the reciprocal atoms 1/D of c (a their highest powers, less the
    factors D that divide N), N reduced (:meth:`mpvi.analysis.jets.Algebra.reduce` after
    D (1/D) = 1 is applied); 0 when c is zero (decided in the ring: exactly for
    polynomials in the state, sines and cosines of the coordinates and reciprocals of such
    polynomials, :meth:`mpvi.analysis.jets.Algebra.is_zero`)."""
    if not isinstance(c, alg._element):
        return sp.sympify(c, strict=True)
    K = alg.reciprocal_degrees([c])
    N = alg.reduce(alg.clear_reciprocals(c, K)) if K else alg.reduce(c)
    if not N or (not alg.decidable(N) and alg.is_zero(N) is True):
        return sp.Integer(0)
    N, K = _cancelled(N, K, alg)
    den = sp.Mul(*[alg.to_expr(alg.reciprocal_base(i)) ** a for i, a in K.items()])
    return alg.to_expr(N) / den


class _Terms(Sequence):
    """The terms of a modified equation or Hamiltonian as sympy expressions, term k made by
    ``make(k)`` on its first access (on a large system making every term costs more than
    deriving it, and a modified Hamiltonian needs none of its equation's)."""

    def __init__(self, n, make):
        self._n, self._make = n, make

    def __len__(self):
        return self._n

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self._n))]
        return self._make(range(self._n)[k])

    def __eq__(self, other):
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return repr(list(self))


@entry_class
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
        The state symbols (q..., p... or v...); the momenta p = dL/dv are named like the
        coordinates (q1 -> p1, q -> p, x -> p_x), private symbols of those names (printed
        ``_p1``) when a name is one of the system's own symbols.
    terms : sequence of lists of sympy expressions
        The coefficient of h^k is terms[k] = f_(k+1) (terms[0] is the system's field);
        each made from the ring on its first access, over a common denominator with a
        reduced numerator (a term equal to zero is 0).
    seconds : float
        The call's wall time (a derivation kept from an earlier call to another order
        costs only the difference, :func:`forget_derivations`).
    model : object
        The sympy data of the system the derivation used.
    algebra : mpvi.analysis.jets.Algebra
        The exact ring the terms were derived in.
    ring_terms : list of lists
        The terms as elements of ``algebra``.
    derivation : object, optional
        What the derivation kept for later calls (the (q, p) terms and their checks).
    h : sympy symbol, optional
        The step symbol of the series: :data:`H` (printed h), or a private one (printed
        ``_h``) when the system has a symbol named h.
    time : sympy symbol or None, optional
        The time t when the field depends on it (a time-dependent Lagrangian or force:
        the terms are f_j(t, y), with t' = 1 exactly), else None.
    """

    method: str
    form: str
    symbols: list
    terms: Sequence
    seconds: float = 0.0
    model: _Model | None = field(default=None, repr=False)
    algebra: Algebra | None = field(default=None, repr=False)
    ring_terms: list[list[Any]] | None = field(default=None, repr=False)
    derivation: _Derivation | None = field(default=None, repr=False, compare=False)
    h: sp.Symbol = field(default=H, repr=False)
    time: sp.Symbol | None = field(default=None, repr=False)

    @property
    def order(self) -> int:
        """The highest power of h derived."""
        return len(self.terms) - 1

    def field(self, upto: int | None = None, h: sp.Expr | None = None) -> list[sp.Expr]:
        """Return the truncated modified field sum_(k <= upto) h^k f_(k+1).

        Parameters
        ----------
        upto : int, optional
            The highest power of h kept (default: all derived).
        h : sympy expression, optional
            What stands for the step (default: the step symbol :attr:`h`).

        Returns
        -------
        list of sympy expressions
            One per state component.
        """
        upto = self.order if upto is None else upto
        h = self.h if h is None else h
        return [sp.Add(*[h ** k * self.terms[k][c] for k in range(upto + 1)])
                for c in range(len(self.symbols))]

    def leading_order(self) -> int | None:
        """Return the smallest k >= 1 with f_(k+1) != 0: the method's order.

        Returns
        -------
        int or None
            The power of h of the first correction; None if every derived term vanishes.
        """
        return next((k for k in range(1, len(self.terms)) if not self.vanishes(k)), None)

    def vanishes(self, k: int) -> bool:
        """Return whether the term f_(k+1), the coefficient of h^k, is zero.

        Decided exactly in the derivation's ring
        (:meth:`mpvi.analysis.jets.Algebra.is_zero`); a component the ring cannot decide
        on (atoms other than sines and cosines of the variables, reciprocals and roots
        of polynomials), or an equation made without its ring, by sympy's ``simplify``.

        Parameters
        ----------
        k : int
            The power of h, 0 <= k <= :attr:`order`.

        Returns
        -------
        bool
            True when every component of the term is zero.

        Raises
        ------
        IndexError
            A ``k`` outside 0 .. :attr:`order`.
        """
        if not 0 <= k <= self.order:
            raise IndexError(f"{self.method}: no term h^{k} (derived through h^{self.order})")
        alg, ring = self.algebra, self.ring_terms
        if alg is None or ring is None:
            return all(sp.simplify(e) == 0 for e in self.terms[k])
        for c, e in enumerate(ring[k]):
            zero = alg.is_zero(e)
            if zero is False or (zero is None and sp.simplify(self.terms[k][c]) != 0):
                return False
        return True


def _modified_field(d, y, alg, f, G, jac, norm=None):
    """f_1 .. f_N from the step series d (d[j] = [h^j] Phi_h(y) - y), HLW IX.1 eq. (1.4):
    f_j = d_j - sum_(k=2..j) [h^(j-k)] G_k / k!, G_1 = F~, G_k = G_(k-1)' F~, each
    [h^m] G_k computed once from the Jacobians of the [h^a] G_(k-1), a <= m.  Continues
    the terms ``f`` (f[k] = f_(k+1), the coefficient of h^k) found so far, with their
    ``G`` ((k, m) -> [h^m] G_k, a vector) and ``jac`` ((k, m) -> its Jacobian), in
    place.  ``norm`` writes a ring element in normal form (default: the ring's
    reduction)."""
    N = len(d) - 1
    norm = norm or alg.reduce

    def jacobian(k, m):
        if (k, m) not in jac:
            vec = f[m] if k == 1 else G[(k, m)]
            jac[(k, m)] = [[alg.diff(e, s) for s in y] for e in vec]
        return jac[(k, m)]

    for j in range(len(f) + 1, N + 1):
        for k in range(2, j + 1):
            m = j - k
            acc = [alg.zero] * len(y)
            for a in range(m + 1):
                D, F = jacobian(k - 1, a), f[m - a]
                for c in range(len(y)):
                    for s in range(len(y)):
                        if D[c][s] and F[s]:
                            acc[c] += D[c][s] * F[s]
            G[(k, m)] = [norm(e) for e in acc]
        fj = []
        for c in range(len(y)):
            e = d[j][c]
            for k in range(2, j + 1):
                e = e - G[(k, j - k)][c] * alg.rational(1, factorial(k))
            fj.append(norm(e))
        f.append(fj)


@entry
def modified_equation(method: str | Method, system: LagrangianSystem, order: int,
                      **method_params: object) -> ModifiedEquation:
    """The modified equation of a one-step method on a system, to h^order.

    Parameters
    ----------
    method : str or Method
        A registered one-step method (its ``declaration`` is what the derivation reads).
    system : LagrangianSystem
        A system of any Lagrangian L(t, q, v), with or without a force F(t, q, v) (its
        parameters stay symbols; module doc): an L not quadratic in the velocities with a
        method on (q, v).
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
        A first-order system, a negative order, a linear-only method on a nonlinear system,
        the imaginary unit in L or F.
    TypeError
        ``system`` not a :class:`mpvi.LagrangianSystem`.
    NotImplementedError
        Newmark's family on (q, p) without p = M v (M constant), a method without a
        declaration, a function of the system whose derivatives do not close.
    ArithmeticError
        Step equations whose leading-order Jacobian is singular.
    """
    _check_order(order)
    t0 = time.perf_counter()
    der = _derivation(method, system, method_params)
    form, y, alg, f = der.field(order)
    terms = _Terms(len(f), lambda k: list(der.expr("f", k, lambda: [_simplified(e, alg)
                                                                      for e in f[k]])))
    name = method if isinstance(method, str) else method.name
    return ModifiedEquation(name, form, y, terms, time.perf_counter() - t0, der.model, alg, f,
                            der, der.model.h, der.model.t)


@entry
def modified_frequency(me: ModifiedEquation, values: dict | None = None) -> tuple:
    """The modified frequency and damping of a method on a linear oscillator.

    On a system with one degree of freedom whose field is linear (q'' = -omega^2 q) the
    modified field is linear too, y' = A~(h) y; its eigenvalues a +- i Omega give
    Omega^2 = det A~ - (tr A~)^2 / 4 and a = tr A~ / 2, as series in h through the
    equation's order.

    Parameters
    ----------
    me : ModifiedEquation
        From :func:`modified_equation` on a linear system with one degree of freedom.
    values : dict, optional
        Values for the system's parameters (e.g. omega = 1).

    Returns
    -------
    tuple of sympy expressions
        (Omega, a): polynomials in the step symbol ``me.h`` through h^order.

    Raises
    ------
    ValueError
        A system that is not linear or not of one degree of freedom.
    TypeError
        ``me`` not a :class:`ModifiedEquation`.
    """
    _check_equation(me, "modified_frequency")
    if len(me.symbols) != 2:
        raise ValueError(f"modified_frequency: {me.method}'s equation has {len(me.symbols)} "
                         "state components; a linear oscillator has 2")
    A = sp.zeros(2)
    for k, t in enumerate(me.terms):
        J = sp.Matrix(t).jacobian(me.symbols).subs(values or {})
        if any(e.free_symbols & set(me.symbols) for e in J):
            raise ValueError(f"modified_frequency: the modified field of {me.method} is not "
                             "linear (a linear oscillator is needed)")
        A += me.h ** k * J
    n, h = me.order + 1, me.h
    tr, det = sp.expand(A.trace()), sp.expand(A.det())
    omega2 = sp.series(det - tr ** 2 / 4, h, 0, n).removeO()
    omega = sp.expand(sp.series(sp.sqrt(omega2), h, 0, n).removeO())
    return omega, sp.expand(sp.series(tr / 2, h, 0, n).removeO())


# ----- Hamiltonian structure ------------------------------------------------------------------

def _qp_ring_terms(me):
    """The terms of a modified equation on (q, p), in its algebra: a (q, v) equation is
    taken to (q, p) = (q, P(t, q, v)), P = dL/dv, as a vector field (t' = 1 in the first
    term, 0 in the others), p' = P_v v' + P_q q' (+ P_t), then v = v(t, q, p) (kept by the
    derivation for a later call)."""
    if me.form == "qp":
        return me.ring_terms
    me.model.need_qp("the (q, p) form of a modified equation")
    done = me.derivation.qp if me.derivation is not None else []
    if len(done) < len(me.ring_terms):
        done.extend(_qp_terms(me.ring_terms[len(done):], me.algebra, me.model, len(done)))
    return done[:len(me.ring_terms)]


def _qp_terms(terms, alg, model, first=0):
    """:func:`_qp_ring_terms` of the (q, v) terms ``terms``, the first one the coefficient of
    h^first."""
    n = model.n
    P = [alg.coerce(e) for e in model.P]
    Pv = [[alg.diff(P[r], vc) for vc in model.v] for r in range(n)]
    Pq = [[alg.diff(P[r], qc) for qc in model.q] for r in range(n)]
    v_of_p = [alg.coerce(e) for e in model.v_of_p]
    out = []
    for k, t in enumerate(terms, first):
        tq, tv = t[:n], t[n:]
        tp = [sum((Pv[r][c] * tv[c] + Pq[r][c] * tq[c] for c in range(n)),
                  alg.diff(P[r], model.t) if k == 0 and model.t is not None else alg.zero)
              for r in range(n)]
        row = []
        for e in tq + tp:
            for vs, vp in zip(model.v, v_of_p):
                e = alg.substitute(e, vs, vp)
            row.append(alg.reduce(e))
        out.append(row)
    return out


def _ring_defect(term, q, p, alg):
    """The entries of J^-1 f' - (J^-1 f')^T that are not zero in the ring (reduced)."""
    n = len(q)
    y = list(q) + list(p)
    Df = [[alg.diff(fi, yj) for yj in y] for fi in term]
    # S = J^T Df: rows 0..n-1 are -Df[n+i] (the p-rows), rows n.. are Df[i]
    S = [[-Df[n + i][j] for j in range(2 * n)] for i in range(n)] + \
        [[Df[i][j] for j in range(2 * n)] for i in range(n)]
    bad = []
    for i in range(2 * n):
        for j in range(i + 1, 2 * n):
            e = alg.reduce(S[i][j] - S[j][i])
            if e:
                bad.append(((i, j), e))
    return bad


def _defect_entries(t, q, p, alg):
    """The entries ((i, j), sympy expression) of J^-1 t' - its transpose that are not zero
    (decided in the ring, or by sympy where the ring cannot)."""
    entries = []
    for ij, e in _ring_defect(t, q, p, alg):
        zero = alg.is_zero(e)
        if zero is True:
            continue
        expr = alg.to_expr(e)
        if zero is None:                  # atoms the ring cannot decide on: sympy
            expr = sp.simplify(sp.expand_trig(expr))
            if expr == 0:
                continue
        entries.append((ij, expr))
    return entries


@entry
def check_hamiltonian(me: ModifiedEquation) -> list:
    """Find the terms of a modified equation that are not Hamiltonian.

    A term f is Hamiltonian (f = J grad H) exactly when J^-1 f' is symmetric (locally:
    the phase space of the derivations is simply connected); (q, v) equations are checked after the change
    (q, p) = (q, M(q) v).  The check runs in the derivation's exact ring
    (:meth:`mpvi.analysis.jets.Algebra.is_zero`, exact for polynomials in the state, sines and
    cosines of the coordinates and reciprocals of such polynomials); an entry with other
    functions that is not zero there is simplified by sympy before it counts.

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
        A system whose Lagrangian is not quadratic in the velocities (no closed-form
        (q, p) form).
    TypeError
        ``me`` not a :class:`ModifiedEquation`.
    """
    _check_equation(me, "check_hamiltonian")
    q, p, alg = me.model.q, me.model.p, me.algebra
    me.model.need_qp("check_hamiltonian")
    done = me.derivation.defects if me.derivation is not None else {}
    bad = []
    for k, t in enumerate(_qp_ring_terms(me)):
        if k not in done:
            done[k] = _defect_entries(t, q, p, alg)
        entries = done[k]
        if entries:
            D = sp.zeros(2 * len(q))
            for (i, j), e in entries:
                D[i, j], D[j, i] = e, -e
            bad.append((k, D))
    return bad


def _series_sum(terms, upto, h):
    """sum_(k <= upto) h^k terms[k] (upto None: all); ValueError naming ``upto`` beyond
    the order derived, or not an integer."""
    last = len(terms) - 1 if upto is None else integer(upto)
    if last is None or not 0 <= last < len(terms):
        raise ValueError(f"upto must be an integer from 0 to {len(terms) - 1} (the order "
                         f"derived), got {upto!r}: derive to a higher order for more terms")
    upto = last
    return sp.Add(*[h ** k * terms[k] for k in range(upto + 1)])


@entry_class
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
    terms : sequence of sympy expressions
        The coefficient of h^k is terms[k] (terms[0] = H); each made from the ring on its
        first access.
    equation : ModifiedEquation
        The modified equation the terms are the potentials of.
    h : sympy symbol, optional
        The step symbol (:attr:`ModifiedEquation.h`).
    time : sympy symbol or None, optional
        The time t when the terms depend on it (H_j(t, q, p) of a time-dependent
        Lagrangian), else None.
    """

    method: str
    q: list
    p: list
    terms: Sequence
    equation: ModifiedEquation | None = field(repr=False, default=None)
    h: sp.Symbol = field(default=H, repr=False)
    time: sp.Symbol | None = field(default=None, repr=False)

    def energy(self, upto: int | None = None, h: sp.Expr | None = None) -> sp.Expr:
        """Return the truncated modified Hamiltonian sum_(k <= upto) h^k H_(k+1).

        Parameters
        ----------
        upto : int, optional
            The highest power of h kept (default: all derived).
        h : sympy expression, optional
            What stands for the step (default: the step symbol :attr:`h`).

        Returns
        -------
        sympy expression
            H~ truncated.
        """
        return _series_sum(self.terms, upto, self.h if h is None else h)

    def polynomials(self) -> tuple[list[sp.Expr], list[list[tuple[tuple[int, ...], Fraction]]]]:
        """Return the terms as polynomials of the derivation's ring.

        They have rational coefficients in a few generators (the momenta, sines and
        cosines of the coordinates, reciprocal atoms) and skip the sympy form of
        :attr:`terms`.  Evaluating them needs no code generated from a large expression (the double
        pendulum's H_5 of Simpson's VI has tens of thousands of monomials), and they are
        the same functions as :attr:`terms` (a term of :attr:`terms` is its polynomial
        written over a common denominator).

        Returns
        -------
        generators : list of sympy expressions
            The generators the terms use, in the order of the exponents.
        terms : list of lists of (exponents, Fraction)
            The monomials of the coefficient of h^k (``terms[k]``), sorted.

        Raises
        ------
        ValueError
            The modified Hamiltonian was not made by :func:`modified_hamiltonian`.
        """
        if self.equation is None or self.equation.derivation is None:
            raise ValueError(f"{self.method}: this modified Hamiltonian has no derivation "
                             "to take its ring form from (made by modified_hamiltonian)")
        C = self.equation.algebra.canonical()
        potentials = self.equation.derivation.potentials
        elements = [C.coerce(self.equation.model.H)]
        for k in range(1, len(self.terms)):
            H = potentials[k]
            elements.append(C.coerce(H) if isinstance(H, sp.Basic) else H)
        return ring_polynomials(C, elements)


def ring_polynomials(alg: Algebra, elements: Sequence) -> tuple[list[sp.Expr], list[list]]:
    """The elements of ``alg`` as (generators they use, [sorted [(exponents, Fraction)]]):
    :meth:`ModifiedHamiltonian.polynomials`."""
    monomials = [sorted((tuple(map(int, m)), Fraction(*_rational_parts(v))) for m, v in alg.terms(c))
                 for c in elements]
    used = sorted({i for terms in monomials for m, _ in terms for i, e in enumerate(m) if e})
    generators = alg.generators()
    return ([generators[i] for i in used],
            [[(tuple(m[i] for i in used), v) for m, v in terms] for terms in monomials])


def _qq(v):
    """A rational coefficient of the ring as an element of sympy's QQ (the domain of the
    potential's linear system)."""
    return v if QQ.of_type(v) else QQ(int(v.numerator), int(v.denominator))


def _monomials(bounds, total):
    """Exponent vectors e with e[i] <= bounds[i] and sum(e) <= total."""
    out = [()]
    for b in bounds:
        out = [e + (k,) for e in out for k in range(b + 1) if sum(e) + k <= total]
    return out


def _gradient_potential(g, q, C, bare):
    """c(q) in the canonical algebra C with dc/dq_j = g_j exactly, or None.

    With a the highest power of each reciprocal atom 1/D in g, the ansatz is
    c = R / prod D^(a - 1), R a polynomial in the atoms of g, written in the reduced form
    of C (sines of degree <= 1), of degree at most one more than the numerators of g
    (bare coordinates only up to one more than their degree ``bare`` in H; with ``bare``
    None, up to one more than in the numerators too).  Then
    dR/dq_j prod D - R sum_D (a - 1) dD/dq_j prod_(others) D = g_j prod D^a is a linear
    system over Q for R's coefficients, solved exactly.  None when the atoms of g are not
    independent in C (the zero test could not decide) or the system has no solution (no
    potential of this form: an arctangent, say)."""
    g = [C.reduce(e) for e in g]
    if not all(C.decidable(e) for e in g if e):
        return None
    if not any(g):
        return C.zero
    K = C.reciprocal_degrees(g)
    D = {i: C.reciprocal_base(i) for i in K}
    G = [C.reduce(C.clear_reciprocals(e, K)) for e in g]
    if not any(G):                            # g = 0, written with reciprocals
        return C.zero
    P, Q = _ansatz_factors(q, C, D, K)
    basis = _ansatz_basis(G, q, C, bare)
    cols = []
    for mono in basis:
        b = C.from_terms({mono: 1})
        cols.append([C.reduce(C.diff(b, qj) * P - b * Qj) for qj, Qj in zip(q, Q)])
    sol = _solve_exact(cols, [C.terms(e) for e in G], basis, C)
    if sol is None:
        return None
    for i, a in K.items():
        sol *= C.atom_gen(i) ** (a - 1)
    return sol


ANSATZ_BUDGET = 10 ** 6
"""The largest (ansatz functions) x (terms of a numerator) :func:`_invariant_potential`
takes on: two bodies need 4 x 4, three 1760 x 48402 (tens of GB in the linear system)."""


def _invariant_potential(g, q, C):
    """c(q) with dc/dq_j = g_j exactly in the form of a potential of distances, or None.

    The ansatz is c = R / prod D^(a - 1) as in :func:`_gradient_potential`, but R a
    polynomial in the bases D of the reciprocal atoms and the radicands' roots D^(1/n)
    (not in the bare coordinates), its coefficients polynomials in what does not move with
    the coordinates (the parameters and their reciprocals 1/m): the form of H_j(q, 0) for
    a system of pair potentials (Kepler's 1/r, N bodies), a function of the distances.  The
    unknowns are the coefficients of a few products of D's and roots; one linear system over
    Q, with a right-hand side for each monomial of the fixed generators in g (they are
    constants for d/dq: the columns are the same for all)."""
    ns, qset = len(C.symbols), set(q)
    g = [C.lower_reciprocals(e) for e in g]
    moving = {ns + i for i, (a, _) in enumerate(C._atoms) if a.free_symbols & qset}
    moving |= {C.symbols.index(x) for x in q}
    K = {i: a for i, a in C.reciprocal_degrees(g).items() if ns + i in moving}
    for i in C.root_reciprocals():            # d D^(1/n) = D^(1/n) dD / (n D): 1/D in dR
        K.setdefault(i, 1)
    if not K:
        return None
    # the reciprocals of parameters (1/m) are cleared too: the fixed part of each term is
    # then a monomial of independent parameters
    fixed_K = {i: a for i, a in C.reciprocal_degrees(g).items() if ns + i not in moving}
    D = {i: C.reciprocal_base(i) for i in K}
    G = [C.reduce(C.clear_reciprocals(e, {**K, **fixed_K})) for e in g]
    if not any(G):
        return C.zero
    qidx = [C.symbols.index(x) for x in q]

    def degree(e):                            # the total degree in the coordinates
        return max(sum(m[i] for i in qidx) for m, _ in C.terms(e))
    top = max(degree(e) for e in G if e)
    degrees = [max(1, degree(d)) for d in D.values()]
    size = max(len(C.terms(e)) for e in G)
    roots = [ns + i for i, (_, kind) in enumerate(C._atoms) if ns + i in C._rules
             and isinstance(kind, tuple) and kind[2].is_Rational and kind[2].p == 1]
    elements = []                 # R's degree in the coordinates at most one more than G's
    for powers in itertools.product(*[range(top // d + 2) for d in degrees]):
        if sum(k * d for k, d in zip(powers, degrees)) > top + 1:
            continue
        b = C.one
        for d, k in zip(D.values(), powers):
            b *= d ** k
        for rs in itertools.product(*[range(C._rules[r][0]) for r in roots]):
            t = b
            for r, k in zip(roots, rs):
                t *= C._gens[r] ** k
            elements.append(C.reduce(t))
        if len(elements) * size > ANSATZ_BUDGET:
            return None
    P, Q = _ansatz_factors(q, C, D, K)
    once = dict.fromkeys(K, 1)                # dR/dq_j prod D, its reciprocals cleared
    cols = [[C.reduce(C.clear_reciprocals(C.diff(b, qj), once) - b * Qj)
             for qj, Qj in zip(q, Q)] for b in elements]
    fixed = [i for i in range(ns + len(C._atoms)) if i not in moving]
    sides: dict = {}
    for j, e in enumerate(G):
        for m, v in C.terms(e):
            key = tuple(m[i] for i in fixed)
            rest = tuple(0 if i in fixed else x for i, x in enumerate(m))
            sides.setdefault(key, {})[j, rest] = v
    solved = _solve_sides(cols, sides, C)
    if solved is None:
        return None
    c = C.zero
    for key, xs in solved.items():
        mono = [0] * (ns + len(C._atoms))
        for i, k in zip(fixed, key):
            mono[i] = k
        part = C.zero
        for x, b in zip(xs, elements):
            if x:
                part += b * C.rational(int(x.numerator), int(x.denominator))
        c += C.from_terms({tuple(mono): 1}) * part
    for i, a in K.items():
        c *= C.atom_gen(i) ** (a - 1)
    for i, a in fixed_K.items():
        c *= C.atom_gen(i) ** a
    return C.reduce(c)


def _solve_sides(cols, sides, C):
    """{key: the coefficients x_k with sum_k x_k cols[k] = sides[key]} (each side a dict
    (equation j, monomial) -> rational), one Gauss-Jordan elimination over Q for all the
    sides; None when one has no solution."""
    rows: dict = {}
    A: dict = {}
    for k, col in enumerate(cols):
        for j, e in enumerate(col):
            for m, v in C.terms(e):
                A.setdefault(rows.setdefault((j, m), len(rows)), {})[k] = _qq(v)
    n, keys = len(cols), list(sides)
    for r, key in enumerate(keys):
        for jm, v in sides[key].items():
            A.setdefault(rows.setdefault(jm, len(rows)), {})[n + r] = _qq(v)
    from sympy.polys.matrices import DomainMatrix
    # Gauss-Jordan over Q: the system is sparse (the fraction-free default was 9 times slower)
    R, pivots = DomainMatrix(A, (len(rows), n + len(keys)), QQ).rref(method="GJ")
    if any(p >= n for p in pivots):
        return None
    Rd = R.to_sdm()
    out = {}
    for r, key in enumerate(keys):
        xs = [QQ(0)] * n
        for row, piv in enumerate(pivots):
            xs[piv] = Rd.get(row, {}).get(n + r, QQ(0))
        out[key] = xs
    return out


def _ansatz_factors(q, C, D, K):
    """prod D, and for each q_j sum_D (a - 1) dD/dq_j prod_(others) D (the ansatz of
    :func:`_gradient_potential`)."""
    P = C.one
    for d in D.values():
        P *= d
    Q = []
    for qj in q:
        t = C.zero
        for i, d in D.items():
            rest = C.one
            for l, e in D.items():
                if l != i:
                    rest *= e
            t += (K[i] - 1) * C.diff(d, qj) * rest
        Q.append(t)
    return P, Q


def _ansatz_basis(G, q, C, bare):
    """The monomials R may have (:func:`_gradient_potential`): degree bounds per generator
    from the numerators ``G`` (bare coordinates up to one more than ``bare``)."""
    ns = len(C.symbols)
    qidx = {C.symbols.index(x) for x in q}
    rules = C._rules
    recips = {ns + i for i in range(len(C._atoms)) if isinstance(C._atoms[i][1], tuple)
              and C._atoms[i][1][2] == -1}
    ngens = ns + len(C._atoms)
    top = [0] * ngens
    terms = [C.terms(e) for e in G]
    for e in G:
        if e:
            top = [max(a, b) for a, b in zip(top, C.degrees(e))]
    bounds = []
    for i in range(ngens):
        if i in recips:
            bounds.append(0)
        elif i in qidx:
            b = top[i] if bare is None else bare.get(C.symbols[i], 0)
            bounds.append(b + 1 if b else 0)
        elif i in rules:
            bounds.append(rules[i][0] - 1)
        elif i < ns:
            bounds.append(top[i])
        else:
            bounds.append(top[i] + 1)
    total = 1 + max(sum(m) for t in terms for m, _ in t)
    return _monomials(bounds, total)


def _solve_exact(cols, terms, basis, C):
    """The element sum_k x_k basis[k] of C whose columns ``cols`` (per equation j, the
    image of basis[k]) sum to the right-hand sides ``terms``, solved exactly over Q as a
    sparse system (:func:`_solve_sides`); None if there is none."""
    solved = _solve_sides(cols, {(): {(j, m): v for j, t in enumerate(terms) for m, v in t}}, C)
    if solved is None:
        return None
    return C.from_terms({basis[k]: x for k, x in enumerate(solved[()]) if x})


def _over_common_denominator(c, C):
    """c = N / prod D^a (a the highest power of each reciprocal atom 1/D in c) with N
    reduced: C's canonical form of c (zero exactly when c is)."""
    K = C.reciprocal_degrees([c])
    out = C.reduce(C.clear_reciprocals(c, K))
    for i, a in K.items():
        out *= C.atom_gen(i) ** a
    return out


def _at_origin(c, symbols, C):
    """c at ``symbols`` = 0, in the ring C (its atoms at their values there), or, when a
    value is not in the ring (sqrt(2 + q^2) at q = 0 without sqrt(2)), as a sympy number;
    None where the origin is a singularity of c (an atom 1/D with D(0) = 0: Kepler's
    1/r)."""
    origin = {x: 0 for x in symbols}
    if any(isinstance(kind, tuple) and kind[2] < 0 and kind[1].subs(origin) == 0
           for (_, kind), d in zip(C._atoms, C.degrees(c)[len(C.symbols):]) if d):
        return None
    try:
        return C.at(c, origin)
    except UnsupportedExpression:
        value = C.to_expr(c).subs(origin)
        return value if value.is_finite else None


def _potential(term, q, p, alg, bare):
    """H with (dH/dp, -dH/dq) = term, H(0, 0) = 0 where H is finite at the origin (else the
    constant the construction gives): integrated along p at fixed q (in the
    ring: polynomials in p), then H(q, 0), whose gradient is -term_q at p = 0, by
    :func:`_gradient_potential` in the canonical algebra (H an element of it), or else
    along q at p = 0 by sympy (H a sympy expression)."""
    n = len(q)
    C = alg.canonical()
    term = [C.reduce(C.convert(e, alg)) for e in term]
    Hp = C.zero
    for i in range(n):                       # along p_i, the later p at 0
        e = C.drop(term[i], p[i + 1:]) if i + 1 < n else term[i]
        Hp += C.integrate(e, p[i])
    g = [-C.drop(term[n + i], p) for i in range(n)]
    if C.root_reciprocals():     # roots of the coordinates (1/r: Kepler, N bodies): as a
        # function of distances; the ansatz in the bare coordinates is not tried (its common
        # denominator multiplies every distance's powers: three bodies took 15 GB)
        c = _invariant_potential(g, q, C) if all(C.decidable(e) for e in g if e) else None
    else:
        c = _gradient_potential(g, q, C, bare)
        if c is None:       # a numerator of higher degree in the bare coordinates than H
            c = _gradient_potential(g, q, C, None)     # has (M(q) = 1/(1 + q^2))
    if c is not None:
        H = _over_common_denominator(C.reduce(Hp + c), C)
        H0 = _at_origin(H, q + p, C)
        if H0 is None:                       # singular at the origin: the ansatz's constant
            return H
        return H - H0 if not isinstance(H0, sp.Basic) else C.to_expr(H) - H0
    Hq = sp.Integer(0)
    for i in range(n):                       # along q_i at p = 0, the later q at 0
        e = C.to_expr(g[i]).subs({q[j]: 0 for j in range(i + 1, n)})
        s = sp.Dummy("s")
        F = sp.integrate(sp.expand(e.subs(q[i], s)), s)
        F0 = F.subs(s, 0)                    # from 0 where F is finite there, else F itself
        Hq += F.subs(s, q[i]) - (F0 if F0.is_finite else 0)
    return sp.expand(C.to_expr(C.reduce(Hp)) + Hq)


@entry
def modified_hamiltonian(method: str | Method, system: LagrangianSystem, order: int,
                         **method_params: object) -> ModifiedHamiltonian:
    """The modified Hamiltonian of a method, to h^order, as a function of (q, p).

    The momenta are canonical, p = dL/dv = M v + A (a magnetic or gyroscopic term A.v in
    L), named like the coordinates (q1 -> p1, x -> p_x); a (q, v) method's modified
    equation is taken to (q, p) first.  A time-dependent Lagrangian gives H_j(t, q, p):
    the (q, p) part of each term of the modified field is Hamiltonian at each t (checked,
    :func:`check_hamiltonian`), t a parameter of the potentials.

    Parameters
    ----------
    method : str or Method
        A registered one-step method.
    system : LagrangianSystem
        A system without forces whose Lagrangian is quadratic in the velocities,
        L = v^T M(t, q) v / 2 + A(t, q).v - V(t, q).
    order : int
        The highest power of h kept.
    **method_params
        The method's parameters.

    Returns
    -------
    ModifiedHamiltonian
        H and its corrections H_2 .. H_(order+1), each the potential of its term of the
        modified field with H_j(0, 0) = 0 (along p a polynomial; H_j(q, 0) from its
        gradient, exactly, in the derivation's ring; module doc, step 3), each over a
        common denominator with a reduced numerator.

    Raises
    ------
    NotHamiltonianError
        A term of the modified field is not Hamiltonian (names the power of h).
    ValueError
        A system with an external force (it has no modified Hamiltonian; its modified
        equation has a modified field, :func:`modified_equation`).
    NotImplementedError
        A Lagrangian that is not quadratic in the velocities (v(q, p) has no closed form).
    """
    if getattr(system, "has_force", False):
        raise ValueError(f"modified_hamiltonian: {system.name} has the external force "
                         f"F = {_force_text(system)}, and a forced system has no modified "
                         "Hamiltonian (its field is not Hamiltonian); modified_equation "
                         "derives its modified field")
    if not getattr(system, "quadratic_in_velocity", True):
        raise NotImplementedError(
            f"modified_hamiltonian: the Lagrangian of {system.name} is not quadratic in the "
            "velocities, so p = dL/dv has no closed-form inverse v(q, p) and no H(q, p) is "
            "derived; modified_equation derives its modified field on (q, v)")
    me = modified_equation(method, system, order, **method_params)
    bad = check_hamiltonian(me)
    if bad:
        k, D = bad[0]
        (i, j), entry = next(((i, j), D[i, j]) for i in range(D.rows) for j in range(D.cols)
                             if D[i, j] != 0)
        text = str(entry)
        if len(text) > 200:
            text = f"a sum of {len(sp.Add.make_args(entry))} terms"
        raise NotHamiltonianError(f"{me.method}: the h^{k} term of the modified field is not "
                                  f"Hamiltonian (J^-1 f' is not symmetric: its entry ({i}, {j}) "
                                  f"minus ({j}, {i}) is {text}, not 0)")
    q, p, alg, der = me.model.q, me.model.p, me.algebra, me.derivation
    C = alg.canonical()
    qp = _qp_ring_terms(me)
    bare = {x: C.degrees(C.coerce(me.model.H))[C.symbols.index(x)] for x in q}
    for k in range(1, len(qp)):
        if k not in der.potentials:
            der.potentials[k] = _potential(qp[k], q, p, alg, bare)

    def term(k):
        if k == 0:
            return me.model.H
        H = der.potentials[k]
        return der.expr("H", k, lambda: H if isinstance(H, sp.Basic) else _simplified(H, C))
    return ModifiedHamiltonian(me.method, q, p, _Terms(len(qp), term), me, me.h, me.time)


@entry_class
@dataclass
class ModifiedLagrangian:
    """The modified Lagrangian L~(q, v) = L + h L_2 + ... + h^order L_(order+1) of a method.

    Made by :func:`modified_lagrangian`: the Legendre transform of the modified
    Hamiltonian, whose Euler-Lagrange equations are the modified equation written for q.

    Parameters
    ----------
    method : str
        The method's name.
    q, v : list of sympy symbols
        Coordinates and velocities.
    terms : list of sympy expressions
        The coefficient of h^k is terms[k] (terms[0] = L).
    hamiltonian : ModifiedHamiltonian
        The modified Hamiltonian it is the Legendre transform of.
    h : sympy symbol, optional
        The step symbol (:attr:`ModifiedEquation.h`).
    """

    method: str
    q: list
    v: list
    terms: list
    hamiltonian: ModifiedHamiltonian | None = field(repr=False, default=None)
    h: sp.Symbol = field(default=H, repr=False)

    def lagrangian(self, upto: int | None = None, h: sp.Expr | None = None) -> sp.Expr:
        """Return the truncated modified Lagrangian sum_(k <= upto) h^k L_(k+1).

        Parameters
        ----------
        upto : int, optional
            The highest power of h kept (default: all derived).
        h : sympy expression, optional
            What stands for the step (default: the step symbol :attr:`h`).

        Returns
        -------
        sympy expression
            L~ truncated.
        """
        return _series_sum(self.terms, upto, self.h if h is None else h)


@entry
def modified_lagrangian(method: str | Method, system: LagrangianSystem, order: int,
                        **method_params: object) -> ModifiedLagrangian:
    """The modified Lagrangian of a symplectic method, to h^order.

    The Legendre transform of :func:`modified_hamiltonian`'s H~: L~(q, v) = p v - H~(q, p)
    at the p with v = dH~/dp, solved as a series in h (p = M v + A - M dDH/dp(q, p), DH =
    H~ - H, iterated: each round gains the order of the method).  Its Euler-Lagrange
    equations are the modified equation for q alone, so that L~ is a Lagrangian of the
    modified equation (M. Vermeeren, "Modified equations for variational integrators",
    Numer. Math. 137 (2017) 1001-1037, constructs one from the discrete Lagrangian; modified
    Lagrangians are unique only up to what leaves the Euler-Lagrange equations unchanged).

    Parameters
    ----------
    method : str or Method
        A registered one-step method.
    system : LagrangianSystem
        A system without forces whose Lagrangian is quadratic in the velocities (as for
        :func:`modified_hamiltonian`).
    order : int
        The highest power of h kept.
    **method_params
        The method's parameters.

    Returns
    -------
    ModifiedLagrangian
        L and its corrections, in the system's coordinates and velocity symbols.

    Raises
    ------
    NotHamiltonianError
        The method's modified field is not Hamiltonian (it has no modified Lagrangian of
        this kind).
    ValueError, NotImplementedError
        As :func:`modified_hamiltonian` (a forced system; an L not quadratic in v).
    """
    mh = modified_hamiltonian(method, system, order, **method_params)
    model = mh.equation.model
    n, hi = model.n, order + 1
    alg = model.algebra(more=mh.terms)
    h = Jet.step(EXACT_HI, alg)
    v = _jets(model.v, hi, alg)
    M = [[alg.coerce(model.M[r, c]) for c in range(n)] for r in range(n)]
    A = [alg.coerce(a) for a in model.A]
    dH = [sp.Add(*[mh.h ** k * sp.diff(mh.terms[k], pj) for k in range(1, order + 1)])
          for pj in model.p]
    P = [sum((v[c] * M[r][c] for c in range(n)), _zero(hi, alg)) + A[r] for r in range(n)]
    for _ in range(order + 1):                 # each round fixes at least one more power
        env = dict(zip(model.p, P))
        env[mh.h] = h
        g = [v[c] - evaluate(dH[c], env, hi, alg) for c in range(n)]
        P = [sum((g[c] * M[r][c] for c in range(n)), _zero(hi, alg)) + A[r] for r in range(n)]
    env = dict(zip(model.p, P))
    env[mh.h] = h
    Ht = evaluate(mh.energy(), env, hi, alg)
    L = sum((P[r] * v[r] for r in range(n)), _zero(hi, alg)) - Ht
    terms = [_simplified(alg.reduce(L.coeff(k)), alg) for k in range(hi)]
    return ModifiedLagrangian(mh.method, model.q, model.v, terms, mh, mh.h)
