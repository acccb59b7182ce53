"""Mutze's one-step integrators on parabolic paths (U. Mutze, "A Simple Variational
Integrator for General Holonomic Mechanical Systems", Secs. 3-6).

One step of length h = 2 tau from the state (x, v) at time t follows the parabolic path
q(t + s) = x + v s + a s^2/2, s in [0, 2 tau] (eq. 18); the methods differ only in the
equation that fixes the acceleration parameter a, after which (eq. 74)

    v_new = v + 2 tau a,        x_new = x + tau (v + v_new).

The system enters through L(t, x, v) and F(t, x, v) (any number of degrees of freedom):
its guiding force G(t, x, v, a) = L_vv a + L_vx v + L_vt - L_x - F (eqs. 10-11) and its
acceleration A(t, x, v), the a with G = 0 (eq. 15), both from
:class:`mpvi.model.mechanics.LagrangianSystem`.

``mutze`` -- the **g-family** (eq. 72, equivalently eq. 76):

    G(t + tau, x + v tau + a tau^2 g, v + a tau, a) = 0,

solved by ``solver``:

* ``"newton"`` (default): Newton's method on eq. (72) at the context's precision, started
  from a_0 = A(t + tau, x + v tau, v);
* ``"explicit"``: one linear solve, exact when eq. (72) is affine in a -- for g = 0 that
  is the paper's eq. (79), A linear in v (eq. 89 for the damped oscillator); the method
  checks the affinity symbolically and refuses otherwise;
* ``"iterate"``: the paper's iteration (80) with ``iterations`` rounds, ``variant``
  ``"damped"`` (a_{n+1} = (a_* + a_**)/2) or ``"simple"`` (a_{n+1} = a_*);
  ``iterations=0`` is a = a_0, first order when A depends on v.

g = 0 is the **direct midpoint method** (eqs. 77-78); g = 1 is the implicit midpoint rule
(eqs. 83, 85) -- checked step for step against :mod:`mpvi.methods.implicit_midpoint`.
For L = v.v/2 - V(x), F = 0, g = 0 is the position Verlet method (drift tau, kick 2 tau,
drift tau), hence symplectic there; for general L it is not, and the registry says
``symplectic=False``.  Solved exactly, every member is symmetric (time-reversible) for
any L and F: the step -h from (t + h, x_new, v_new) meets the same midpoint data
(t + tau, x + v tau + a tau^2 g, v + a tau) and the same a (reproduction mutze_systems
measures the round trip at 1e-65; a finite iteration (80) breaks it).  Order 2 (1 for
zero iterations).

``mutze_variation`` -- the **midpoint variation method** (eqs. 54/57): D_tau S = 0 with
S = S_L + S_F (eqs. 39, 46, 53) and D_tau = 3/(2 tau^3) (tau grad_v - grad_a) (eq. 37).

``mutze_parabolic_el`` -- the **Euler-Lagrange equation for parabolic paths** (eq. 44):
D_tau S_L + W_F = 0 with W_F = int_0^{2 tau} sigma(s) F ds, sigma(s) = 3 s (2 tau - s) /
(4 tau^3) (eqs. 32, 41).

For these two, the integrands over s in [0, 2 tau] and their derivatives in a are derived
symbolically from the system's L and F once (``prepare``) and integrated by ``nodes``-point
Gauss-Legendre quadrature at context precision: exact for polynomial integrands of degree
<= 2 nodes - 1 (a Lagrangian quadratic in (x, v) and F affine in v give degree <= 6, so
the default 4 nodes is exact for the damped oscillator); a is solved by Newton from a_0.
For the damped oscillator both give eq. (90) -- :func:`parabolic_acceleration` derives
this exactly.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from mpvi.engines import kernels
from mpvi.compiled.codegen import compile_exprs
from mpvi.methods.declarations import ParabolicAction, ParabolicPath
from mpvi.ground.expressions import as_expression
from mpvi.model.mechanics import TIME
from mpvi.numbers.newton import check_options, solve_info
from mpvi.methods.quadrature import gauss_legendre, to_context
from mpvi.ground.checks import integer
from mpvi.methods.base import Method, StepResult, check_count, register

SOLVERS = ("newton", "explicit", "iterate")
VARIANTS = ("damped", "simple")
TAU = sp.Symbol("tau", positive=True)
S = sp.Symbol("s", nonnegative=True)


def _number(value, name, ctx):
    try:
        return ctx.num(value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"parameter {name}: {exc}") from None


def _refuse_clash(system):
    """Refuse a system with a symbol equal to the path's time symbols :data:`TAU` or
    :data:`S`, which are written into its Lagrangian (ValueError naming it)."""
    for sym in (TAU, S):
        if sym in (*system.coords, *system.param_symbols, *system.velocity_symbols):
            raise ValueError(f"mutze: {system.name} has a symbol equal to the parabolic path's "
                             f"{sym} ({'positive' if sym is TAU else 'nonnegative'}): rename it")


def _affine_in_a(system, g_is_zero):
    """True when G(t + tau, x + v tau + a tau^2 g, v + a tau, a) is affine in a (exactly,
    by sympy), so that one linear solve gives the exact a: for g = 0 that is eq. (79) (A
    linear in v); for g != 0 it is checked with g a symbol, so it holds for every g.
    Decided once per system."""
    cache = system.__dict__.setdefault("_pieces", {})
    key = ("mutze affine", g_is_zero)
    if key not in cache:
        _refuse_clash(system)
        n = system.dof
        x, v = system.coords, system.velocity_symbols
        a = sp.symbols(f"a0:{n}", cls=sp.Dummy)         # private: never a user's a0 or g
        g = 0 if g_is_zero else sp.Dummy("g")
        Lvv, r = system._motion_exprs()
        shift = {x[i]: x[i] + v[i] * TAU + a[i] * TAU ** 2 * g for i in range(n)}
        shift.update({v[i]: v[i] + a[i] * TAU for i in range(n)})
        G = [(sum(Lvv[row][d] * a[d] for d in range(n)) - r[row]).xreplace(shift) for row in range(n)]
        cache[key] = all(sp.simplify(sp.diff(Gr, a[i], a[j])) == 0
                         for Gr in G for i in range(n) for j in range(i, n))
    return cache[key]


def prepare_g(system, h, ctx, g=0, solver="newton", iterations=1, variant="damped",
              newton=None):
    """Prepare a step of Mutze's g-family (mutze eq. (72); solvers of eqs. (79), (80)).

    Stepper of the g-family (module doc).  ``g`` a number the context reads exactly
    (int, str, Fraction; ``"0.68"``); ``newton``: options of :func:`mpvi.numbers.newton.solve`
    (no a-priori stability bound)."""
    tau = h / 2
    if solver not in SOLVERS:
        raise ValueError(f"mutze: unknown solver {solver!r}; use one of {', '.join(SOLVERS)}")
    if variant not in VARIANTS:
        raise ValueError(f"mutze: unknown iteration variant {variant!r}; use one of {', '.join(VARIANTS)}")
    if integer(iterations) is None or integer(iterations) < 0:
        raise ValueError(f"mutze: iterations must be a non-negative integer, got {iterations!r}")
    iterations = integer(iterations)
    gc = _number(g, "g", ctx)
    newton = check_options(newton, ctx)
    if solver == "explicit" and not _affine_in_a(system, gc == 0):
        raise ValueError(f"mutze: solver='explicit' needs eq. (72) affine in a (for g = 0: A "
                         f"linear in v, eq. 79); {system.name!r} is not -- use solver='newton' "
                         "or 'iterate'")
    tau2g = tau * tau * gc
    n = system.dof

    def A(tm, xm, v, a):
        return system.acceleration(tm, xm + a * tau2g, v + a * tau)

    def diagnose(t, x, v, a):
        if not ctx.all_finite(a):              # a0 = A(t + tau, x + v tau, v) already failed
            return system.diagnose(t + tau, x + v * tau, v)
        return system.diagnose(t + tau, x + v * tau + a * tau2g, v + a * tau)

    if solver == "newton" and ctx.kernels:
        return _g_kernel_stepper(system, h, ctx, tau, tau2g, newton, diagnose)

    def stepper(t, x, v, carry=None):
        tm, xm = t + tau, x + v * tau
        a0 = system.acceleration(tm, xm, v)
        its = res = None
        if solver == "iterate":
            a = a0
            for _ in range(iterations):
                a1 = A(tm, xm, v, a)
                a = a1 if variant == "simple" else (a1 + A(tm, xm, v, a1)) / 2
        elif solver == "explicit":
            G0, Gx, Gv, Ga = system.residual_derivatives(tm, xm, v, ctx.zeros(n))
            a = ctx.solve(Ga + Gv * tau + Gx * tau2g, -G0)
        else:
            def fun(a, jacobian):
                G, Gx, Gv, Ga = system.residual_derivatives(tm, xm + a * tau2g, v + a * tau, a)
                return (G, Ga + Gv * tau + Gx * tau2g) if jacobian else G
            a, its, res = solve_info(fun, a0, ctx, what="mutze: eq. (72)",
                                     diagnose=lambda a: diagnose(t, x, v, a), **newton)
        v1 = v + a * h
        return StepResult(x + (v + v1) * tau, v1, a, its, res)
    return stepper


def _g_kernel_stepper(system, h, ctx, tau, tau2g, newton, diagnose):
    """The Newton solve of eq. (72) with a generated kernel (:mod:`mpvi.engines.kernels`): the
    residual G(t_m, X, V, a) at X = x_m + a tau^2 g, V = v + a tau (stages) and its
    a-Jacobian G_a + tau G_v + tau^2 g G_q by the chain rule; one kernel per system for
    every h and g (tau, tau^2 g are inputs)."""
    n, params = system.dof, system.param_values

    def build():
        a = kernels.node_symbols("a", n)
        tm, tv, tg = sp.symbols("t_m tau tau2g", cls=sp.Dummy)
        xm = kernels.node_symbols("xm", n)
        v = kernels.node_symbols("vv", n)
        X, V = kernels.node_symbols("X", n), kernels.node_symbols("V", n)
        stages = [(X[i], xm[i] + a[i] * tg) for i in range(n)] + \
                 [(V[i], v[i] + a[i] * tv) for i in range(n)]
        R, Rq, Rv, Ra = kernels.at_node(system, list(system.symbolic("residual")), X, V, tm, a)
        jac = [[Ra[r][c] + tv * Rv[r][c] + tg * Rq[r][c] for c in range(n)] for r in range(n)]
        return kernels.Kernel(a, [tm, *xm, *v, tv, tg], system.param_symbols, R, ctx,
                              jacobian=jac, stages=stages)
    kernel = kernels.cached_kernel(system, ("mutze g",), build)

    def stepper(t, x, v, carry=None):
        ctx.activate()
        tm = t + tau
        xm = [xi + vi * tau for xi, vi in zip(x, v)]
        vl = list(v)
        a0 = kernels.acceleration(system, tm, xm, vl)
        a, its, res = kernel.solve(a0, [tm, *xm, *vl, tau, tau2g], params, ctx,
                                   what="mutze: eq. (72)",
                                   diagnose=lambda a: diagnose(t, x, v, np.array(a, dtype=object)),
                                   **newton)
        a = np.array(a, dtype=object)
        v1 = v + a * h
        return StepResult(x + (v + v1) * tau, v1, a, its, res)
    return stepper


def _g_stability_bound(p):
    """On the oscillator the g-family (solved exactly) has the amplification matrix of
    trace 2 (1 - 2 s^2 / (1 + g s^2)) and determinant 1, s = omega tau: stable for
    omega h < 2 / sqrt(1 - g) when g < 1 (2 for the direct midpoint method), for every h
    when g >= 1.  A finite iteration (80) is another method: no bound is claimed."""
    if p["solver"] == "iterate":
        return None
    g = sp.Rational(str(p["g"]))
    return 2 / sp.sqrt(1 - g) if g < 1 else None


def _g_order(p):
    return 1 if p["solver"] == "iterate" and p["iterations"] == 0 else 2


def _g_declaration(params):
    """The g-family solved exactly, for mpvi.analysis.modified (the finite iteration (80) is
    another map, not declared)."""
    if params["solver"] == "iterate":
        raise NotImplementedError("mutze with solver='iterate' (the finite iteration (80)) "
                                  "has no declaration for modified equations; the exact "
                                  "solvers 'newton' and 'explicit' have")
    return ParabolicPath(sp.nsimplify(as_expression(params["g"], what="mutze parameter g"),
                                      rational=True))


mutze = register(Method(
    name="mutze", label="Mutze g-family", state="qv",
    params={"g": 0, "solver": "newton", "iterations": 1, "variant": "damped"},
    order=_g_order, symplectic=False, implicit=True, internal="a",
    reference="mutze eqs. (72)-(80); g = 0: direct midpoint method (77)-(79)",
    prepare=prepare_g, doc=__doc__, stability_bound=_g_stability_bound,
    declaration=_g_declaration))


# ----- action-based methods: eqs. (44) and (54) ----------------------------------------------

KINDS = {"variation": "midpoint variation method, eq. (54)",
         "parabolic_el": "Euler-Lagrange equation for parabolic paths, eq. (44)"}


def action_integrand(L, F, x, v, a, t=TIME, kind="variation"):
    """The integrand over s in [0, 2 tau] of the small step equation of motion ``kind``
    as sympy expressions (one per coordinate), from a Lagrangian ``L`` in the symbols
    t, ``x``, ``v`` and a force column ``F``; ``a`` are the acceleration symbols.

    The parabolic path is X = x + v s + a s^2/2, V = v + a s (eq. 18).  With
    K = L(t + s, X, V) + (s/2)(s - 2 tau) a.F(t + s, X, V) (eqs. 46, 66) the midpoint
    variation method's integrand is 3/(2 tau^3) (tau d/dv - d/da) K (eqs. 37, 54);
    the parabolic Euler-Lagrange integrand is 3/(2 tau^3) (tau d/dv - d/da) L(...) +
    sigma(s) F(...) (eqs. 41, 44)."""
    if kind not in KINDS:
        raise ValueError(f"unknown small step equation {kind!r}; use one of {', '.join(KINDS)}")
    n = len(x)
    path = {x[i]: x[i] + v[i] * S + a[i] * S ** 2 / 2 for i in range(n)}
    path.update({v[i]: v[i] + a[i] * S for i in range(n)})
    path[t] = t + S
    Lp = sp.sympify(L, strict=True).xreplace(path)
    Fp = [sp.sympify(F[i], strict=True).xreplace(path) for i in range(n)]
    sigma = 3 * S * (2 * TAU - S) / (4 * TAU ** 3)
    D = 3 / (2 * TAU ** 3)
    if kind == "variation":
        K = Lp + S * (S - 2 * TAU) / 2 * sum(a[i] * Fp[i] for i in range(n))
        return [D * (TAU * sp.diff(K, v[i]) - sp.diff(K, a[i])) for i in range(n)]
    return [D * (TAU * sp.diff(Lp, v[i]) - sp.diff(Lp, a[i])) + sigma * Fp[i] for i in range(n)]


def parabolic_acceleration(L, F, x, v, t=TIME, kind="variation"):
    """The acceleration a solving eq. (54) (``kind="variation"``) or eq. (44)
    (``"parabolic_el"``) by exact integration over [0, 2 tau] -- for one degree of
    freedom and integrands sympy integrates in closed form (e.g. the damped oscillator,
    eq. 87, where both give eq. 90).  Returns a sympy expression in t, x, v, tau."""
    a = sp.symbols(f"a0:{len(x)}", cls=sp.Dummy)
    eqs = [sp.integrate(sp.expand(e), (S, 0, 2 * TAU)) for e in action_integrand(L, F, x, v, a, t, kind)]
    sol = sp.solve(eqs, a, dict=True)
    if len(sol) != 1:
        raise ValueError(f"eq. {'(54)' if kind == 'variation' else '(44)'}: expected one "
                         f"solution for a, found {len(sol)}")
    return [sp.factor(sol[0][ai]) for ai in a] if len(a) > 1 else sp.factor(sol[0][a[0]])


_ACTION: dict = {}


def _action_symbolic(system, kind):
    """The integrand R of ``kind`` and its a-Jacobian J, by the chain rule on node symbols:
    returns (X, V, R, J) with R, J sympy expressions in the path's position and velocity
    X, V (symbols), the accelerations a, s, tau, t and the parameters.  With K as in
    :func:`action_integrand` written at (t + s, X, V), and X = x + v s + a s^2/2,
    V = v + a s, the total derivatives are dK/dv = s K_X + K_V and
    dK/da = s^2/2 K_X + s K_V + (explicit a-dependence of K), and
    dR/da_j = R_a_j + s^2/2 R_X_j + s R_V_j: only derivatives of the system's own L and F
    are taken, never of the path-substituted integrand (:func:`action_integrand` is the same
    integrand written out; the tests check that the two agree).  Derived once per system
    signature."""
    key = (system.signature, kind)
    if key not in _ACTION:
        _refuse_clash(system)
        n = system.dof
        a = system.acceleration_symbols
        X = [sp.Dummy(f"X{i}") for i in range(n)]
        V = [sp.Dummy(f"V{i}") for i in range(n)]
        node = dict(zip(system.coords, X))
        node.update(zip(system.velocity_symbols, V))
        node[TIME] = TIME + S
        L = system.lagrangian_expr.xreplace(node)
        F = [f.xreplace(node) for f in system.force_expr]
        K = L + S * (S - 2 * TAU) / 2 * sum(ai * Fi for ai, Fi in zip(a, F)) if kind == "variation" else L
        D = 3 / (2 * TAU ** 3)
        sigma = 3 * S * (2 * TAU - S) / (4 * TAU ** 3)
        R = []
        for i in range(n):
            KX, KV = sp.diff(K, X[i]), sp.diff(K, V[i])
            dv = S * KX + KV
            da = S ** 2 / 2 * KX + S * KV + sp.diff(K, a[i])
            R.append(D * (TAU * dv - da) + (sigma * F[i] if kind == "parabolic_el" else 0))
        J = [[sp.diff(Ri, a[j]) + S ** 2 / 2 * sp.diff(Ri, X[j]) + S * sp.diff(Ri, V[j])
              for j in range(n)] for Ri in R]
        _ACTION[key] = (X, V, R, J)
    return _ACTION[key]


def _path_stages(system, X, V, x, v, a, s):
    """Stages X = x + v s + a s^2/2, V = v + a s (the parabolic path at s)."""
    n = system.dof
    return ([(X[i], x[i] + v[i] * s + a[i] * s ** 2 / 2) for i in range(n)]
            + [(V[i], v[i] + a[i] * s) for i in range(n)])


def _compiled_action(system, kind):
    """The integrand of ``kind`` and its a-Jacobian as one compiled function of
    (t, x, v, a, s, tau, parameters)."""
    X, V, R, J = _action_symbolic(system, kind)
    x, v, a = system.coords, system.velocity_symbols, system.acceleration_symbols
    return compile_exprs([TIME, x, v, a, S, TAU, system.param_symbols],
                         R + [e for row in J for e in row], system.ctx, f"mutze_{kind}",
                         stages=_path_stages(system, X, V, x, v, a, S))


def _action_kernel_stepper(system, kind, h, ctx, tau, ss, ws, newton, diagnose):
    """The quadrature of eq. (54) or (44) as one generated kernel (:mod:`mpvi.engines.kernels`):
    sum_k w_k R(t, X_k, V_k, a, s_k, tau) and sum_k w_k J(...), the path values X_k, V_k at
    the nodes s_k as stages, nodes and weights as inputs, so one kernel per (system, kind,
    number of nodes) serves every h."""
    n, params, m = system.dof, system.param_values, len(ss)

    def build():
        a = kernels.node_symbols("a", n)
        x = kernels.node_symbols("x", n)
        v = kernels.node_symbols("vv", n)
        t, tv = sp.symbols("t tau", cls=sp.Dummy)
        s = sp.symbols(f"s0:{m}", cls=sp.Dummy)
        w = sp.symbols(f"w0:{m}", cls=sp.Dummy)
        X, V, R, J = _action_symbolic(system, kind)
        stages, res = [], [sp.Integer(0)] * n
        jac = [[sp.Integer(0)] * n for _ in range(n)]
        for k, (sk, wk) in enumerate(zip(s, w)):
            Xk, Vk = kernels.node_symbols(f"X{k}_", n), kernels.node_symbols(f"V{k}_", n)
            stages += _path_stages(system, Xk, Vk, x, v, a, sk)
            sub = dict(zip(X, Xk))
            sub.update(zip(V, Vk))
            sub.update(zip(system.acceleration_symbols, a))
            sub.update({TIME: t, TAU: tv, S: sk})
            res = [r + wk * Ri.xreplace(sub) for r, Ri in zip(res, R)]
            jac = [[c + wk * Jij.xreplace(sub) for c, Jij in zip(row, Jrow)]
                   for row, Jrow in zip(jac, J)]
        return kernels.Kernel(a, [t, *x, *v, tv, *s, *w], system.param_symbols, res, ctx,
                              jacobian=jac, stages=stages)
    kernel = kernels.cached_kernel(system, ("mutze", kind, m), build)
    tail = [tau, *ss, *ws]

    def stepper(t, x, v, carry=None):
        ctx.activate()
        xl, vl = list(x), list(v)
        a0 = kernels.acceleration(system, t + tau, [xi + vi * tau for xi, vi in zip(xl, vl)], vl)
        a, its, res = kernel.solve(a0, [t, *xl, *vl, *tail], params, ctx,
                                   what=f"mutze: {KINDS[kind]}",
                                   diagnose=lambda a: diagnose(t, x, v, np.array(a, dtype=object)),
                                   **newton)
        a = np.array(a, dtype=object)
        v1 = v + a * h
        return StepResult(x + (v + v1) * tau, v1, a, its, res)
    return stepper


def prepare_action(kind):
    def prepare(system, h, ctx, nodes=4, newton=None):
        """Prepare a step of Mutze's small step equation (mutze eqs. (54)/(57), or eq. (44)).

        Stepper of the small step equation ``kind`` with ``nodes``-point Gauss-Legendre
        quadrature on [0, 2 tau] (module doc)."""
        tau = h / 2
        if getattr(system, "lagrangian_expr", None) is None:
            raise TypeError(f"{KINDS[kind]} needs a system with a symbolic Lagrangian "
                            f"(mpvi.model.mechanics.LagrangianSystem); got {system!r}")
        nodes = check_count(nodes, "nodes", 1, 64, "each node adds the system's derivatives "
                            "to the step's kernel")
        newton = check_options(newton, ctx)
        rule = gauss_legendre(int(nodes))
        ss = [to_context(z, ctx) * h for z in rule.nodes]
        ws = [to_context(w, ctx) * h for w in rule.weights]
        def diagnose(t, x, v, a):
            """The first node of the parabolic path where the system is not regular."""
            for s in ss:
                found = system.diagnose(t + s, x + v * s + a * (s * s / 2), v + a * s)
                if found:
                    return found
            return None

        if ctx.kernels:
            return _action_kernel_stepper(system, kind, h, ctx, tau, ss, ws, newton, diagnose)
        f = _compiled_action(system, kind)
        n = system.dof
        params = system.param_values

        def stepper(t, x, v, carry=None):
            def fun(a, jacobian):
                R, J = ctx.zeros(n), ctx.zeros((n, n))
                for s, w in zip(ss, ws):
                    vals = f(t, x, v, a, s, tau, params)
                    R = R + np.array(vals[:n], dtype=ctx.dtype) * w
                    if jacobian:
                        J = J + np.array(vals[n:], dtype=ctx.dtype).reshape(n, n) * w
                return (R, J) if jacobian else R
            a0 = system.acceleration(t + tau, x + v * tau, v)
            a, its, res = solve_info(fun, a0, ctx, what=f"mutze: {KINDS[kind]}",
                                     diagnose=lambda a: diagnose(t, x, v, a), **newton)
            v1 = v + a * h
            return StepResult(x + (v + v1) * tau, v1, a, its, res)
        return stepper
    return prepare


def _action_declaration(kind):
    def declaration(params):
        """The small step equation with its Gauss-Legendre rule, for mpvi.analysis.modified."""
        nodes = params["nodes"]
        nodes = check_count(nodes, "nodes", 1, 64, "each node adds the system's derivatives "
                            "to the step's kernel")
        return ParabolicAction(kind, gauss_legendre(int(nodes)),
                               integrand=lambda system: _action_pieces(system, kind),
                               label=KINDS[kind])
    return declaration


def _action_pieces(system, kind):
    """The integrand of ``kind`` for mpvi.analysis.modified: R in X, V, a, s, tau
    (:func:`_action_symbolic`)."""
    X, V, R, _ = _action_symbolic(system, kind)
    return {"X": X, "V": V, "R": R, "a": system.acceleration_symbols, "s": S, "tau": TAU}


mutze_variation = register(Method(
    name="mutze_variation", label="Midpoint variation method", state="qv", params={"nodes": 4},
    order=2, symplectic=False, implicit=True, internal="a",
    reference="mutze eqs. (54)/(57) with S = S_L + S_F (39, 46, 53)",
    prepare=prepare_action("variation"), doc=__doc__,
    declaration=_action_declaration("variation")))

mutze_parabolic_el = register(Method(
    name="mutze_parabolic_el", label="Euler-Lagrange eq. for parabolic paths", state="qv",
    params={"nodes": 4}, order=2, symplectic=False, implicit=True, internal="a",
    reference="mutze eq. (44) with S_L, W_F (39, 41)",
    prepare=prepare_action("parabolic_el"), doc=__doc__,
    declaration=_action_declaration("parabolic_el")))
