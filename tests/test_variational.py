"""Tests of the Galerkin-quadrature variational integrators (mpvi.methods.variational):
the discrete Lagrangian and its derivatives, the nonlinear Simpson and midpoint schemes
(conservation, symplecticity, orders, the linear special case) and forced
(Lagrange-d'Alembert) systems."""
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from mpvi import MPContext, Problem, fit_order, get_method, solve
from mpvi.analysis.measures import central_differences, energy
from mpvi.model.mechanics import LagrangianSystem
from mpvi.methods.variational import MIDPOINT, SIMPSON, DiscreteLagrangian
from mpvi.systems.double_pendulum import linearized_double_pendulum, nonlinear_double_pendulum
from mpvi.systems.lagrange_top import table3_top

C64 = MPContext(64)
C32 = MPContext(32)           # for convergence orders (errors >= 1e-12)
HI = MPContext(120)           # finite differences of 64-digit quantities
DELTA = HI.num(10) ** -30
TBAR = "1.84671"              # nutation period of the Table 3 top [s] (top2025 Sec. 4.2)
RULES = {"simpson": SIMPSON, "midpoint": MIDPOINT}


# ----- systems -------------------------------------------------------------------------

def oscillator(ctx, c=0, A=0, w=1, m=1, k=4):
    """m q'' + c q' + k q = A cos(w t) as a LagrangianSystem: M = m, V = k q^2/2,
    F(t, q, v) = -c v + A cos(w t)  (c, A, w enter as parameters)."""
    q = sp.Symbol("q")
    sm, sk, sc, sA, sw = sp.symbols("m k c A w")
    return LagrangianSystem(
        "oscillator", [q], sp.Matrix([[sm]]), sk * q ** 2 / 2,
        {sm: m, sk: k, sc: c, sA: A, sw: w}, ctx,
        force=lambda t, x, v: sp.Matrix([-sc * v[0] + sA * sp.cos(sw * t)]))


SYSTEMS = {
    "double_pendulum": lambda ctx: nonlinear_double_pendulum(ctx).system,
    "top": lambda ctx: table3_top(ctx).system,
    "damped_double_pendulum": lambda ctx: nonlinear_double_pendulum(
        ctx, force=lambda t, q, v: -sp.Rational(3, 10) * v).system,
    "forced_damped_oscillator": lambda ctx: oscillator(ctx, c="0.5", A="0.7", w="1.3"),
    # non-symmetric dF/dq and dF/dv, explicit time dependence
    "forced_double_pendulum": lambda ctx: nonlinear_double_pendulum(
        ctx, force=lambda t, q, v: sp.Matrix([
            -sp.Rational(3, 10) * v[0] + v[1] / 2 + sp.cos(t) * q[1],
            -v[0] * q[0] / 2 - v[1] / 5 + sp.sin(q[0]) * v[0] ** 2])).system,
}
# q_0, q_1 (, q_2): generic points (Simpson uses all three, midpoint the first and last)
POINTS = {
    1: [["0.3"], ["0.41"], ["0.55"]],
    2: [["0.3", "-0.7"], ["0.35", "-0.62"], ["0.42", "-0.58"]],
    3: [["0.2", "1.1", "-0.5"], ["0.25", "1.08", "0.9"], ["0.31", "1.02", "2.2"]],
}
H_STEP = "0.1"
T_START = "0.7"
_cache = {}


def system(name, ctx):
    if (name, ctx.name) not in _cache:
        _cache[name, ctx.name] = SYSTEMS[name](ctx)
    return _cache[name, ctx.name]


def points(name, rule, ctx):
    pts = POINTS[system(name, C64).dof]
    pts = pts if (len(rule.basis) - 2) else [pts[0], pts[-1]]
    return [ctx.asarray(p) for p in pts]


def fd(f, x):
    """Central differences at 120 digits: ``out[g, ...] = d f(x)[...] / d x^g``."""
    return central_differences(f, x, HI, DELTA)


def lifted(a, ctx):
    """``a`` as an array of ``ctx`` numbers keeping their bits (``ctx.lift``): 64-digit
    results are compared with 120-digit finite differences on purpose."""
    a = np.array(a, dtype=object)
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        out[idx] = ctx.lift(a[idx])
    return out


def rel_err(value, reference, ctx=HI):
    v, r = lifted(value, ctx), lifted(reference, ctx)
    assert v.shape == r.shape
    scale = ctx.norm_inf(r)
    diff = ctx.norm_inf(v - r)
    return diff / scale if scale != 0 else diff


def assert_order(ctx, hs, errs, expected, tol, what=""):
    """The least-squares order and every pairwise order log(e_i/e_i+1)/log(h_i/h_i+1) are
    within ``tol`` of ``expected`` (a fit alone can hide a pre-asymptotic zig-zag)."""
    pairwise = [ctx.log(errs[i] / errs[i + 1]) / ctx.log(hs[i] / hs[i + 1])
                for i in range(len(hs) - 1)]
    fitted = fit_order(ctx, hs, errs)
    for o in pairwise + [fitted]:
        assert abs(o - expected) < tol, (what, [ctx.to_str(x, 4) for x in pairwise + [fitted]],
                                         [ctx.to_str(e, 3) for e in errs])


def replace(pts, j, x):
    out = list(pts)
    out[j] = x
    return out


def hand_discrete_force(system, rule, pts, h, t, ctx):
    """f_i = h sum_k w_k a_ki F(t + tau_k h, x_k, g_k), written out per rule (Simpson:
    nodes at the three points with Gear velocities; midpoint: one node at the centre)."""
    F = system.force
    if rule is SIMPSON:
        ql, qm, qr = pts
        gl, gm, gr = (-3 * ql + 4 * qm - qr) / h, (qr - ql) / h, (ql - 4 * qm + 3 * qr) / h
        return [h / 6 * F(t, ql, gl), 2 * h / 3 * F(t + h / 2, qm, gm),
                h / 6 * F(t + h, qr, gr)]
    ql, qr = pts
    f = h / 2 * F(t + h / 2, (ql + qr) / 2, (qr - ql) / h)
    return [f, f]


# ----- the discrete Lagrangian ------------------------------------------------------------

@pytest.mark.parametrize("name", ["double_pendulum", "top"])
def test_value_is_the_quadrature_of_the_paper(name):
    """Simpson: top2025 eq. (6) with Gear's velocities; midpoint: App. B."""
    s = system(name, C64)
    h = C64.num(H_STEP)
    ql, qm, qr = points(name, SIMPSON, C64)
    L = s.lagrangian
    gl, gm, gr = (-3 * ql + 4 * qm - qr) / h, (qr - ql) / h, (ql - 4 * qm + 3 * qr) / h
    expected = h / 6 * L(ql, gl) + 2 * h / 3 * L(qm, gm) + h / 6 * L(qr, gr)
    got = DiscreteLagrangian(s, SIMPSON, h, C64).value([ql, qm, qr])
    assert abs(got - expected) <= 1e-62 * abs(expected)
    expected = h * L((ql + qr) / 2, (qr - ql) / h)
    got = DiscreteLagrangian(s, MIDPOINT, h, C64).value([ql, qr])
    assert abs(got - expected) <= 1e-62 * abs(expected)


@pytest.mark.parametrize("rule", RULES.values(), ids=RULES.keys())
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_gradient_against_finite_differences(name, rule):
    """gradient = dL_d/dq_i + f_i; dL_d/dq_i by differences of ``value`` at 120 digits,
    f_i (forced systems) written out by hand."""
    lo, hi = system(name, C64), system(name, HI)
    Ld_lo = DiscreteLagrangian(lo, rule, C64.num(H_STEP), C64)
    Ld_hi = DiscreteLagrangian(hi, rule, HI.num(H_STEP), HI)
    pts_lo, pts_hi = points(name, rule, C64), points(name, rule, HI)
    t = C64.num(T_START)
    grad = Ld_lo.gradient(pts_lo, t)
    assert len(grad) == (len(rule.basis) - 2) + 2
    force = (hand_discrete_force(lo, rule, pts_lo, C64.num(H_STEP), t, C64) if lo.has_force
             else [C64.zeros(lo.dof)] * len(grad))
    for i, (g, f) in enumerate(zip(grad, force)):
        ref = fd(lambda x: [Ld_hi.value(replace(pts_hi, i, x))], pts_hi[i])[:, 0]
        assert rel_err(g - f, ref) < 1e-50, (name, i)
    if lo.has_force:
        assert max(C64.norm_inf(f) for f in force) > 1e-3      # the force matters here


@pytest.mark.parametrize("rule", RULES.values(), ids=RULES.keys())
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_hessian_blocks_against_finite_differences(name, rule):
    lo, hi = system(name, C64), system(name, HI)
    Ld_lo = DiscreteLagrangian(lo, rule, C64.num(H_STEP), C64)
    Ld_hi = DiscreteLagrangian(hi, rule, HI.num(H_STEP), HI)
    pts_lo, pts_hi = points(name, rule, C64), points(name, rule, HI)
    t_lo, t_hi = C64.num(T_START), HI.num(T_START)
    grad, hess = Ld_lo.gradient(pts_lo, t_lo, full=True)
    npts = (len(rule.basis) - 2) + 2
    assert set(hess) == {(i, j) for i in range(npts) for j in range(npts)}
    plain = Ld_lo.gradient(pts_lo, t_lo)
    for a, b in zip(grad, plain):
        assert rel_err(a, b, C64) < 1e-62
    for j in range(npts):
        # d grad_i / d q_j for all i at once: out[d, i, g] = d grad_i[g] / d q_j^d
        d = fd(lambda x: np.array(Ld_hi.gradient(replace(pts_hi, j, x), t_hi), dtype=object),
               pts_hi[j])
        for i in range(npts):
            assert rel_err(hess[i, j], d[:, i, :].T) < 1e-50, (name, i, j)
    # the Hessian of L_d is symmetric (the force part is not)
    if not lo.has_force:
        for i in range(npts):
            for j in range(npts):
                assert rel_err(hess[i, j], hess[j, i].T, C64) < 1e-60


@pytest.mark.parametrize("rule", RULES.values(), ids=RULES.keys())
@pytest.mark.parametrize("name", ["top", "forced_double_pendulum"])
def test_newton_jacobian_of_the_stepper(name, rule):
    """The stepper's residual r(X) = (dL_d/dq_1..s + f_1..s, p_j + dL_d/dq_0 + f_0) in the
    unknowns X = (q_1..q_s, q_j+1), with the Jacobian assembled from the blocks
    rows = (1..s, 0), cols = (1..s+1) of ``gradient(full=True)`` as prepare_rule does."""
    s = (len(rule.basis) - 2)
    rows, cols = list(range(1, s + 1)) + [0], list(range(1, s + 2))
    lo, hi = system(name, C64), system(name, HI)
    Ld_lo = DiscreteLagrangian(lo, rule, C64.num(H_STEP), C64)
    Ld_hi = DiscreteLagrangian(hi, rule, HI.num(H_STEP), HI)
    pts_lo, pts_hi = points(name, rule, C64), points(name, rule, HI)
    t_lo, t_hi = C64.num(T_START), HI.num(T_START)
    p_hi = HI.asarray(["0.3", "-0.2", "0.1"][:hi.dof])
    n = lo.dof

    def residual(X):
        pts = [pts_hi[0]] + [X[u * n:(u + 1) * n] for u in range(s + 1)]
        g = Ld_hi.gradient(pts, t_hi)
        return np.concatenate(g[1:s + 1] + [p_hi + g[0]])

    grad, hess = Ld_lo.gradient(pts_lo, t_lo, full=True, rows=rows, cols=cols)
    assert set(hess) == {(i, j) for i in rows for j in cols}
    _, full = Ld_lo.gradient(pts_lo, t_lo, full=True)
    for key, block in hess.items():
        assert rel_err(block, full[key], C64) < 1e-62
    J = np.block([[hess[i, j] for j in cols] for i in rows])
    assert J.shape == ((s + 1) * n, (s + 1) * n)
    X = np.concatenate(pts_hi[1:])
    assert rel_err(J, fd(residual, X).T) < 1e-50


@pytest.mark.parametrize("scheme", ["simpson", "midpoint"])
@pytest.mark.parametrize("name", ["top", "double_pendulum", "forced_damped_oscillator"])
def test_a_step_solves_the_discrete_euler_lagrange_equations(name, scheme):
    rule = RULES[scheme]
    s = system(name, C64)
    q0 = points(name, SIMPSON, C64)[0]
    p0 = s.momentum(q0, C64.asarray(["0.4", "-0.3", "2.5"][:s.dof]))
    h, t = C64.num("0.05"), C64.num(T_START)
    r = get_method(scheme).prepare(s, h, C64)(t, q0, p0)
    q1, p1, stage = r.q, r.y, r.internal
    internal = len(rule.basis) - 2
    pts = [q0] + (list(stage) if internal else []) + [q1]
    grad = DiscreteLagrangian(s, rule, h, C64).gradient(pts, t)
    scale = C64.norm_inf(p0)
    for g in grad[1:-1]:                                          # internal points
        assert C64.norm_inf(g) <= 1e-60 * scale
    assert C64.norm_inf(p0 + grad[0]) <= 1e-60 * scale           # eq. (13)
    assert C64.norm_inf(p1 - grad[-1]) <= 1e-62 * scale          # eq. (14)
    assert (stage is None) == (internal == 0)


# ----- the linear special case --------------------------------------------------------------

def test_nonlinear_simpson_on_a_linear_system_is_the_closed_form():
    dp = linearized_double_pendulum(C64)
    h, n = dp.tbar / 10, 20
    closed = solve(dp, "simpson", h=h, n=n)
    newton = solve(dp, "lobatto", h=h, n=n, points=3)   # = Simpson's L_d
    v1 = solve(dp, "simpson_v1", h=h, n=n)
    assert "newton" in newton.stats and "newton" not in closed.stats
    assert C64.norm_inf(closed.q - newton.q) <= 1e-55
    assert C64.norm_inf(closed.p - newton.p) <= 1e-55
    assert C64.norm_inf(v1.internal - newton.internal) <= 1e-55        # the same midpoint
    assert C64.norm_inf(closed.q[-1] - closed.q[0]) > 0.1        # something happened


def test_midpoint_on_a_linear_system_is_newmark():
    dp = linearized_double_pendulum(C64)
    h, n = dp.tbar / 10, 20
    nm = solve(dp, "newmark", h=h, n=n)
    mid = solve(dp, "midpoint", h=h, n=n)
    assert mid.stats["newton"]["solves"] == n
    assert C64.norm_inf(nm.q - mid.q) <= 1e-55
    assert C64.norm_inf(nm.p - mid.p) <= 1e-55
    assert mid.internal is None


# ----- orders ---------------------------------------------------------------------------

def max_energy_error(prob, scheme, T, N):
    sol = solve(prob, scheme, h=T / N, n=N)
    H = energy(prob.system, sol)
    return max(abs(x - H[0]) for x in H) / abs(H[0]), sol


ORDER_CASES = {          # (problem, T, step counts): the asymptotic range, measured
    ("double_pendulum", "simpson"): (20, 40, 80),
    ("double_pendulum", "midpoint"): (40, 80, 160),
    ("top", "simpson"): (20, 40, 80),
    ("top", "midpoint"): (40, 80, 160),
}


@pytest.mark.parametrize("problem,scheme", sorted(ORDER_CASES))
def test_energy_error_order(problem, scheme):
    """max_j |H_j - H_0| / |H_0| over T (double pendulum: 1 s; top: one nutation period)
    has the order of the scheme: Simpson 4 +- 0.2, midpoint 2 +- 0.1."""
    ctx = C32
    prob = nonlinear_double_pendulum(ctx) if problem == "double_pendulum" else table3_top(ctx)
    T = ctx.num(1) if problem == "double_pendulum" else ctx.num(TBAR)
    Ns = ORDER_CASES[problem, scheme]
    errs, hs = [], []
    for N in Ns:
        e, sol = max_energy_error(prob, scheme, T, N)
        errs.append(e)
        hs.append(T / N)
        if scheme == "simpson":
            assert sol.internal.shape == (N, 1, prob.system.dof)
        else:
            assert sol.internal is None
    expected, tol = (4, 0.2) if scheme == "simpson" else (2, 0.1)
    assert_order(ctx, hs, errs, expected, tol, (problem, scheme))
    assert errs[-1] < (1e-6 if scheme == "simpson" else 1e-4)


def test_simpson_keeps_its_internal_midpoint():
    """sol.internal[j, 0] is q_j+1/2: close to the node 2j+1 of a run with h/2, at order 4."""
    ctx = C32
    dp = nonlinear_double_pendulum(ctx)
    diffs = []
    for N in (20, 40):
        h = ctx.num(1) / (2 * N)
        a = solve(dp, "simpson", h=2 * h, n=N)
        b = solve(dp, "simpson", h=h, n=2 * N)
        assert a.internal.shape == (N, 1, 2)
        diffs.append(max(ctx.norm_inf(a.internal[j, 0] - b.q[2 * j + 1]) for j in range(N)))
    assert diffs[1] < 1e-5
    assert 3.5 < ctx.log(diffs[0] / diffs[1]) / ctx.log(2) < 4.5


# ----- exact discrete conservation and symplecticity --------------------------------------

@pytest.mark.parametrize("scheme", ["simpson", "midpoint", "rk4"])
def test_top_conserves_p_phi_and_p_psi(scheme):
    """phi and psi are cyclic, so the discrete Noether theorem keeps p_phi, p_psi for the
    variational schemes (up to the Newton tolerance).  RK4 keeps them too: every
    Runge-Kutta method preserves linear invariants, and here p_phi' = p_psi' = 0
    identically (sympy generates a literal 0), so RK4 keeps them *bit for bit*."""
    top = table3_top(C64)
    h = C64.num(TBAR) / 25
    sol = solve(top, scheme, h=h, n=50)
    for k in (0, 2):
        p0 = top.p0[k]
        drift = max(abs(p[k] - p0) for p in sol.p)
        assert drift <= 1e-58 * abs(p0), (scheme, k, drift)
        if scheme == "rk4":
            assert drift == 0
    # the non-cyclic momentum p_theta does change
    assert max(abs(p[1] - top.p0[1]) for p in sol.p) > 1e-4


def one_step_jacobian(scheme, sysf, q0, p0, h, ctx, delta):
    """Phi = d(q1, p1)/d(q0, p0) by central differences in ``ctx``."""
    s = sysf(ctx)
    stepper = get_method(scheme).prepare(s, ctx.num(h), ctx)
    n = len(q0)
    z0 = np.concatenate([ctx.asarray(q0), ctx.asarray(p0)])
    cols = []
    for i in range(2 * n):
        e = ctx.zeros(2 * n)
        e[i] = delta
        ends = []
        for z in (z0 + e, z0 - e):
            r = stepper(ctx.zero, z[:n].copy(), z[n:].copy())
            q1, p1 = r.q, r.y
            ends.append(np.concatenate([q1, p1]))
        cols.append((ends[0] - ends[1]) / (2 * delta))
    return np.array(cols, dtype=object).T


SYMPLECTIC_CASES = {
    "double_pendulum": (lambda ctx: nonlinear_double_pendulum(ctx).system,
                        ["0.7", "1.0"], ["0.05", "-0.02"], "0.05"),
    "top": (lambda ctx: table3_top(ctx).system,
            ["0.1", "1.0", "0.2"], ["0.03", "0.001", "0.033"], "0.02"),
}


@pytest.mark.parametrize("name", sorted(SYMPLECTIC_CASES))
def test_one_step_map_is_symplectic(name):
    """Phi^T J Phi = J (J = [[0, I], [-I, 0]] on (q, p)) for Simpson and midpoint to
    <= 1e-30 (Phi by central differences at 100 digits, step 1e-40); RK4 misses it by far."""
    ctx = MPContext(100)
    sysf, q0, p0, h = SYMPLECTIC_CASES[name]
    n = len(q0)
    J = np.block([[ctx.zeros((n, n)), ctx.eye(n)], [-ctx.eye(n), ctx.zeros((n, n))]])
    defects = {}
    for scheme in ("simpson", "midpoint", "rk4"):
        Phi = one_step_jacobian(scheme, sysf, q0, p0, h, ctx, ctx.num(10) ** -40)
        assert ctx.norm_inf(Phi - ctx.eye(2 * n)) > 1e-2          # a nontrivial map
        defects[scheme] = ctx.norm_inf(Phi.T @ J @ Phi - J)
    assert defects["simpson"] <= 1e-30, defects
    assert defects["midpoint"] <= 1e-30, defects
    assert defects["rk4"] > 1e-8, defects


# ----- forces: Lagrange-d'Alembert ---------------------------------------------------------

class DampedOscillatorSolution:
    """q'' + c q' + 4 q = 0 (m = 1, k = 4, c = 1/2), q(0) = 1, q'(0) = 0 (underdamped):
    q = e^{-gt} (cos wd t + (g/wd) sin wd t),  g = c/2 = 1/4,  wd = sqrt(k - g^2) = sqrt(63)/4,
    q' = -e^{-gt} (wd + g^2/wd) sin wd t."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.g, self.wd = ctx.num(1) / 4, ctx.sqrt(ctx.num(63)) / 4

    def q(self, t):
        c, g, wd = self.ctx, self.g, self.wd
        return c.exp(-g * t) * (c.cos(wd * t) + g / wd * c.sin(wd * t))

    def p(self, t):
        c, g, wd = self.ctx, self.g, self.wd
        return -c.exp(-g * t) * (wd + g * g / wd) * c.sin(wd * t)

    def ode_residual(self, t):
        d = self.ctx.diff
        return d(self.q, t, 2) + self.ctx.num("0.5") * d(self.q, t) + 4 * self.q(t)


class ForcedOscillatorSolution:
    """q'' + 4 q = A cos(w t) (A = 1/2, w = 1), q(0) = 1, q'(0) = 0:
    q = (1 - B) cos 2t + B cos t,  B = A / (k - w^2) = 1/6."""

    def __init__(self, ctx):
        self.ctx, self.B = ctx, ctx.num(1) / 6

    def q(self, t):
        c = self.ctx
        return (1 - self.B) * c.cos(2 * t) + self.B * c.cos(t)

    def p(self, t):
        c = self.ctx
        return -2 * (1 - self.B) * c.sin(2 * t) - self.B * c.sin(t)

    def ode_residual(self, t):
        d = self.ctx.diff
        return d(self.q, t, 2) + 4 * self.q(t) - self.ctx.cos(t) / 2


FORCED = {
    "damped": (lambda ctx: oscillator(ctx, c=Fraction(1, 2)), DampedOscillatorSolution),
    "driven": (lambda ctx: oscillator(ctx, A=Fraction(1, 2), w=1), ForcedOscillatorSolution),
}


@pytest.mark.parametrize("case", sorted(FORCED))
def test_forced_oscillator_exact_solution_solves_its_ode(case):
    ctx = C64
    sol = FORCED[case][1](ctx)
    for t in ("0", "0.7", "2.3"):
        t = ctx.num(t)
        assert abs(sol.ode_residual(t)) < 1e-55
        assert abs(ctx.diff(sol.q, t) - sol.p(t)) < 1e-55          # p = m q', m = 1
    assert abs(sol.q(ctx.zero) - 1) < 1e-63 and sol.p(ctx.zero) == 0
    # and the system's own vector field agrees with the ODE along the solution
    s = FORCED[case][0](ctx)
    t = ctx.num("0.9")
    dq, dp = s.hamiltonian_rhs(ctx.asarray([sol.q(t)]), ctx.asarray([sol.p(t)]), t)
    assert abs(dq[0] - sol.p(t)) < 1e-60
    assert abs(dp[0] - ctx.diff(sol.p, t)) < 1e-55


FORCED_ORDERS = {"simpson": (4, 0.2, (10, 20, 40)), "midpoint": (2, 0.1, (20, 40, 80)),
                 "rk4": (4, 0.2, (20, 40, 80))}


@pytest.mark.parametrize("scheme", sorted(FORCED_ORDERS))
@pytest.mark.parametrize("case", sorted(FORCED))
def test_forced_oscillator_convergence(case, scheme):
    """Max error in (q, p) over [0, 3] against the exact solution.  The driven case fails
    unless the time t_j reaches the force (at the right quadrature nodes)."""
    ctx = C32
    exact = FORCED[case][1](ctx)
    problem = Problem(FORCED[case][0](ctx), [1], p0=[0])
    T = ctx.num(3)
    order_expected, tol, Ns = FORCED_ORDERS[scheme]
    hs, errs = [], []
    for N in Ns:
        sol = solve(problem, scheme, h=T / N, n=N)
        assert sol.t[-1] == N * (T / N)
        errs.append(max(max(abs(q[0] - exact.q(t)), abs(p[0] - exact.p(t)))
                        for t, q, p in zip(sol.t, sol.q, sol.p)))
        hs.append(T / N)
    assert_order(ctx, hs, errs, order_expected, tol, (case, scheme))
    assert errs[-1] < 1e-2


def test_damped_double_pendulum_power_balance():
    """Lagrange-d'Alembert with F = -c v: the energy decreases at every step and
    H_N - H_0 = -int_0^T c |v|^2 dt up to the scheme's (and the quadrature's) O(h^4) error.
    The dissipated work is computed from the trajectory: v_j = M(q_j)^-1 p_j, composite
    Simpson rule over the nodes."""
    ctx = C32
    c = Fraction(3, 10)
    dp = nonlinear_double_pendulum(ctx, force=lambda t, q, v: -sp.Rational(3, 10) * v)
    s = dp.system
    T = ctx.num(2)
    mismatch = {}
    for scheme in ("simpson", "midpoint"):
        for N in (40, 80):
            h = T / N
            sol = solve(dp, scheme, h=h, n=N)
            H = energy(s, sol)
            assert all(H[j + 1] < H[j] for j in range(N)), scheme
            vs = [s.velocity(q, p) for q, p in zip(sol.q, sol.p)]
            power = [ctx.num(c) * (v @ v) for v in vs]
            work = h / 3 * (power[0] + power[-1] + 4 * ctx.fsum(power[1:-1:2])
                            + 2 * ctx.fsum(power[2:-1:2]))
            mismatch[scheme, N] = abs(H[-1] - H[0] + work)
            assert work > 2      # of the H_0 - min V = 2.64 available, most is dissipated
    assert mismatch["simpson", 40] < 1e-4 * work
    assert mismatch["midpoint", 80] < 1e-2 * work
    assert mismatch["simpson", 80] < 1e-5
    assert mismatch["simpson", 40] / mismatch["simpson", 80] > 12          # order ~4
    assert 3.5 < mismatch["midpoint", 40] / mismatch["midpoint", 80] < 4.5  # order 2
    # the undamped pendulum keeps its energy to the same accuracy: the loss is the force's
    free = nonlinear_double_pendulum(ctx)
    sol = solve(free, "simpson", h=T / 80, n=80)
    H = energy(free.system, sol)
    assert abs(H[-1] - H[0]) < 1e-5


# ----- exact tables at algebraic nodes ---------------------------------------------------

@pytest.mark.parametrize("rule, basis", [
    ("gauss_legendre", "hermite_basis"), ("gauss_lobatto", "lagrange_basis")])
def test_basis_values_at_algebraic_nodes_are_the_exact_values_reduced(rule, basis):
    """Basis.values composes and reduces in Q[r]: each value is the same number as the
    expression tree of Basis.value (to 80 digits), a polynomial in the node's root of
    lower degree than its minimal polynomial, and literally 0 only where it is 0."""
    from mpvi.methods import quadrature as qd
    quad = getattr(qd, rule)(6)
    b = qd.hermite_basis(3) if basis == "hermite_basis" else qd.lagrange_basis(
        (0, Fraction(1, 3), Fraction(1, 2), 1))
    algebraic = [tau for tau in quad.nodes if tau.atoms(sp.CRootOf)]
    assert algebraic
    for tau in algebraic:
        (root,) = tau.atoms(sp.CRootOf)
        for d in range(3):
            for i, fast in enumerate(b.values(tau, d)):
                tree = b.value(i, tau, d)
                assert abs(sp.N(fast - tree, 80)) < sp.Float("1e-75", 80)
                g = sp.Poly(fast.xreplace({root: sp.Dummy("r")}))
                assert fast == 0 or g.degree() < sp.degree(root.poly)


def test_a_polynomial_of_its_root_reduces_to_zero_and_its_digits_come_from_arb():
    from mpvi.methods import quadrature as qd
    x = sp.Symbol("x")
    P = sp.legendre(7, x)
    factor = sp.factor_list(P)[1][-1][0]              # the irreducible factor of degree 6
    r = sp.CRootOf(factor, 2)
    assert qd.reduce_algebraic(factor.subs(x, r) * (r ** 3 + sp.Rational(2, 7))) == 0
    value = (r + 1) ** 9 / 5 - r ** 4
    text = qd._arb_digits(value, 60)
    assert text is not None and abs(sp.Float(text, 60) - sp.N(value, 70)) < sp.Float("1e-57")
    assert qd._digits(value, 60) == text
