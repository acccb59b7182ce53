"""Modified equations (mpvi/analysis/modified.py, mpvi/analysis/jets.py): derived from each method's
declaration, checked against independent results -- formulas from the literature written
here from the field f, the amplification matrix of the oscillator computed another way,
and the Hamiltonian structure of the symplectic methods."""
from functools import lru_cache

import sympy as sp
import pytest
from sympy.polys.domains import QQ
from sympy.polys.rings import ring

import mpvi
from mpvi.analysis.modified import (NotHamiltonianError, check_hamiltonian, modified_equation,
                           modified_hamiltonian)

G30 = mpvi.GMPContext(30)
q, w = sp.symbols("q omega", positive=True)
Z = sp.Symbol("z", positive=True)


def pendulum():
    return mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, G30)


def oscillator():
    return mpvi.LagrangianSystem("oscillator", [q], sp.Matrix([[1]]), w ** 2 * q ** 2 / 2,
                                 {w: "1"}, G30)


def linear_oscillator():
    """The oscillator as a :class:`mpvi.LinearSystem` (M = K = 1, as parameters), for the
    methods defined on linear systems only."""
    return mpvi.LinearSystem([[1]], [[1]], G30, name="oscillator")


def differentials(f, y):
    """f'f'f and f''(f, f) of a field f(y) (elementary differentials of order 3)."""
    J = sp.Matrix(f).jacobian(y)
    fpfpf = J * (J * sp.Matrix(f))
    fpp = sp.Matrix([sum(sp.diff(fi, a, b) * f[ia] * f[ib] for ia, a in enumerate(y)
                         for ib, b in enumerate(y)) for fi in f])
    return fpfpf, fpp


def same(a, b):
    return all(sp.simplify(sp.expand_trig(x - y)) == 0 for x, y in zip(a, b))


@pytest.mark.parametrize("method", ["implicit_midpoint", "midpoint"])
def test_the_midpoint_rules_leading_term_is_hairer_lubich_wanners(method):
    """HLW IX.1 (the implicit midpoint rule): f_3 = f'f'f / 12 - f''(f, f) / 24, f_2 = f_4 = 0;
    the variational midpoint rule is the same map for a constant mass matrix."""
    me = modified_equation(method, pendulum(), 3)
    y = me.symbols
    fpfpf, fpp = differentials(me.terms[0], y)
    assert same(me.terms[1], [0, 0]) and same(me.terms[3], [0, 0])
    assert same(me.terms[2], fpfpf / 12 - fpp / 24)


def test_the_explicit_midpoint_rules_leading_term():
    """The explicit midpoint rule y + h f(y + h f / 2) = y + h f + h^2 f'f / 2 +
    h^3 f''(f, f) / 8 + O(h^4) against the flow y + h f + h^2 f'f / 2 + h^3 (f''(f, f) +
    f'f'f) / 6: f_3 = -f'f'f / 6 - f''(f, f) / 24 (worked by hand from the two series)."""
    me = modified_equation("rk2", pendulum(), 2)
    fpfpf, fpp = differentials(me.terms[0], me.symbols)
    assert same(me.terms[1], [0, 0])
    assert same(me.terms[2], -fpfpf / 6 - fpp / 24)


@pytest.mark.parametrize("method, params, order", [
    ("rk4", {}, 4), ("rk2", {}, 2), ("rk2", {"variant": "heun"}, 2), ("midpoint", {}, 2),
    ("simpson", {}, 4), ("lobatto", {"points": 3}, 4), ("gbs", {"levels": 2}, 4),
    ("taylor", {"degree": 3}, 3), ("implicit_midpoint", {}, 2), ("mutze", {}, 2),
    ("mutze", {"g": "1/3"}, 2), ("hermite_variational", {"nodes": 3}, 2),
    ("hermite_galerkin", {"nodes": 3}, 4)])
def test_the_first_correction_is_at_the_methods_order(method, params, order):
    me = modified_equation(method, pendulum(), order + 1, **params)
    assert me.leading_order() == order


def test_which_terms_vanish_is_decided_in_the_ring_as_sympy_decides():
    """ModifiedEquation.vanishes (the ring's exact zero test) against sympy's simplify of
    every component, for a symmetric method of order 2 (the odd terms zero) and RK4 (h^1 ..
    h^3 zero); a power not derived is an IndexError."""
    zero = {"midpoint": [1, 3, 5], "rk4": [1, 2, 3]}
    for method, powers in zero.items():
        me = modified_equation(method, pendulum(), 6)
        by_sympy = [all(sp.simplify(e) == 0 for e in me.terms[k]) for k in range(7)]
        assert [me.vanishes(k) for k in range(7)] == by_sympy
        assert [k for k in range(7) if by_sympy[k]] == powers
    with pytest.raises(IndexError, match="h\\^7"):
        me.vanishes(7)


def _amplification(decl):
    """The one-step map of the oscillator q'' = -q on (q, y), computed without jets: the
    trial-function methods by mpvi.analysis.symbolic, the tableaus and Newmark by solving their
    equations, RK4 and GBS by their own code on sympy numbers, Taylor as a matrix series,
    Mutze's g-family by eq. (72) and his action methods by eq. (54) or (44) integrated as
    mpvi.analysis.symbolic integrates (exactly where the rule is exact, else its sum over the exact
    nodes)."""
    from mpvi.analysis.modified import (ButcherTableau, LinearOnly, NewmarkScheme, ParabolicAction,
                               ParabolicPath, StepFunction, TaylorSeries)
    from mpvi.analysis.symbolic import amplification_matrix
    K = sp.Matrix([[0, 1], [-1, 0]])
    if isinstance(decl, LinearOnly):
        return _amplification(decl.declaration)
    if isinstance(decl, ButcherTableau):
        s = len(decl.b)
        y = sp.Matrix(sp.symbols("y0:2"))
        k = [sp.Matrix(sp.symbols(f"k{i}_0:2")) for i in range(s)]
        eqs = []
        for i in range(s):
            eqs += list(k[i] - K * (y + Z * sum((decl.a[i][j] * k[j] for j in range(s)), sp.zeros(2, 1))))
        sol = sp.solve(eqs, [x for ki in k for x in ki], dict=True)[0]
        y1 = y + Z * sum((decl.b[i] * k[i].subs(sol) for i in range(s)), sp.zeros(2, 1))
        return y1.jacobian(y)
    if isinstance(decl, StepFunction):           # the map's columns: polynomials in z
        R, z = ring("z", QQ)
        cols = [decl.step(lambda t, v: [v[1], -v[0]], 0, y, z) for y in ([R(1), R(0)], [R(0), R(1)])]
        return sp.Matrix(2, 2, lambda i, j: cols[j][i].as_expr().subs(sp.Symbol("z"), Z))
    if isinstance(decl, TaylorSeries):
        return sum(((Z * K) ** k / sp.factorial(k) for k in range(decl.order + 1)), sp.zeros(2))
    if isinstance(decl, NewmarkScheme):          # a = -q at both ends
        x, v, a1 = sp.symbols("x v a1")
        b, g = sp.Rational(decl.beta), sp.Rational(decl.gamma)
        x1 = x + Z * v + Z ** 2 * ((sp.Rational(1, 2) - b) * (-x) + b * a1)
        a1 = sp.solve(a1 + x1, a1)[0]
        x1 = x1.subs(sp.Symbol("a1"), a1)
        v1 = v + Z * ((1 - g) * (-x) + g * a1)
        return sp.Matrix([x1, v1]).jacobian([x, v]).applyfunc(sp.cancel)
    x, v, tau = sp.symbols("x v tau")
    if isinstance(decl, ParabolicPath):          # a = -(x + v tau + g tau^2 a), eq. (72)
        a = sp.Symbol("a")
        a_sol = sp.solve(a + x + v * tau + decl.g * tau ** 2 * a, a)[0]
    elif isinstance(decl, ParabolicAction):     # the rule's sum over its exact nodes
        from mpvi.methods.mutze import S, TAU, action_integrand
        a = sp.Symbol("a")
        R = action_integrand(v ** 2 / 2 - x ** 2 / 2, [0], [x], [v], [a], kind=decl.kind)[0]
        from mpvi.methods.quadrature import _TAU
        from mpvi.analysis.symbolic import _integrate           # the exact integral, or node sums
        eq = _integrate(sp.expand(R.subs(S, 2 * TAU * _TAU)), decl.quadrature)
        a_sol = sp.solve(eq, a)[0].subs(TAU, tau)
    else:
        return amplification_matrix(decl)
    v1 = v + 2 * tau * a_sol
    step = sp.Matrix([x + tau * (v + v1), v1]).subs(tau, Z / 2)
    return step.jacobian([x, v])


@lru_cache(maxsize=None)
def _acos_squared(order):
    """arccos(1 - u)^2 = 2 u + u^2/3 + ... through u^order (analytic at u = 0)."""
    u = sp.Symbol("u")
    return sp.Poly(sp.series(sp.acos(1 - u) ** 2, u, 0, order + 1).removeO(), u)


def _series(e, n):
    return sp.expand(sp.series(e, Z, 0, n).removeO())


# every registered method at its defaults (issue 24, acceptance 1), then variants of their
# parameters (under -m slow, to keep the default run short)
VARIANTS = [(name, {}) for name in sorted(mpvi.METHODS)] + [
    pytest.param(name, params, marks=pytest.mark.slow) for name, params in [
        ("lobatto", {"points": 3}), ("lobatto", {"points": 5}), ("rk2", {"variant": "heun"}),
        ("gbs", {"levels": 2}), ("taylor", {"degree": 5}), ("mutze", {"g": "1/2"}),
        ("mutze", {"g": 1}), ("hermite_variational", {"nodes": 3}),
        ("hermite_galerkin", {"nodes": 3}), ("hermite_variational", {"hermite_n": 3}),
        ("hermite_galerkin", {"hermite_n": 3}), ("newmark_family", {"beta": 0}),
        ("newmark_family", {"gamma": "2/3"}), ("mutze_variation", {"nodes": 2})]]


@pytest.mark.parametrize("method, params", VARIANTS)
def test_the_modified_frequency_is_the_amplification_matrix_s(method, params):
    """Acceptance 1 of the backward error analysis, for every registered one-step method:
    on q'' = -q the modified field is linear, y' = A~(h) y, with eigenvalues a +- i Omega;
    the amplification matrix A(z) has eigenvalues e^((a +- i Omega) z), so
    Omega z = arccos(tr A / (2 sqrt(det A))) (= arccos(tr A / 2) when det A = 1) and
    e^(2 a z) = det A.  Omega^2 = det A~ - (tr A~)^2 / 4 and a = tr A~ / 2 from the
    modified equation to h^8 equal these series exactly through z^8."""
    m = mpvi.get_method(method)
    decl = m.declaration(m.parameters(**params))
    from mpvi.analysis.modified import LinearOnly
    system = linear_oscillator() if isinstance(decl, LinearOnly) else oscillator()
    values = dict(zip(system.param_symbols, [1] * len(system.param_symbols)))
    me = modified_equation(method, system, 8, **params)
    y = me.symbols
    At = sp.zeros(2)
    for k, t in enumerate(me.terms):
        At += Z ** k * sp.Matrix(t).subs(values).jacobian(y)
    tr, det = sp.expand(At.trace()), sp.expand(At.det())
    omega_mod = _series(sp.sqrt(_series(det - tr ** 2 / 4, 9)), 9)
    A = _amplification(decl)
    c = _series(A.trace() / (2 * sp.sqrt(A.det())), 11)
    theta2 = _series(_acos_squared(5).as_expr().subs(sp.Symbol("u"), 1 - c), 11)
    omega_amp = _series(sp.sqrt(sp.expand(theta2 / Z ** 2)), 9)
    assert sp.expand(omega_mod - omega_amp) == 0
    assert sp.expand(_series(sp.exp(tr * Z), 10) - _series(A.det(), 10)) == 0


def test_the_hamiltonian_check_passes_for_symplectic_methods_and_fails_for_rk4():
    """Simpson, the midpoint VI and Mutze's direct midpoint method (position Verlet for
    L = v^2/2 - V): every term Hamiltonian through h^6; RK4's h^5 term on the pendulum
    is not (its h^4 term happens to be, in one degree of freedom)."""
    for method in ("simpson", "midpoint", "mutze"):
        assert check_hamiltonian(modified_equation(method, pendulum(), 6)) == []
    bad = check_hamiltonian(modified_equation("rk4", pendulum(), 5))
    assert [k for k, _ in bad] == [5]
    with pytest.raises(NotHamiltonianError, match="h\\^5 term"):
        modified_hamiltonian("rk4", pendulum(), 5)


def test_the_modified_hamiltonian_generates_the_modified_field():
    """H~ of Simpson on the pendulum: (dH_k/dp, -dH_k/dq) = f_(k+1) for every k, and H_5
    (the h^4 term) is the first non-zero correction."""
    mh = modified_hamiltonian("simpson", pendulum(), 6)
    me = mh.equation
    (qs,), (ps,) = mh.q, mh.p
    for k, Hk in enumerate(mh.terms):
        assert same([sp.diff(Hk, ps), -sp.diff(Hk, qs)], me.terms[k])
    assert all(sp.simplify(mh.terms[k]) == 0 for k in (1, 2, 3)) and mh.terms[4] != 0


def test_errors_name_their_cause():
    with pytest.raises(ValueError, match="non-negative integer"):
        modified_equation("rk4", pendulum(), -1)
    first = mpvi.FirstOrderSystem("decay", lambda t, y: [-y[0]], 1, G30)
    with pytest.raises(ValueError, match="first-order system"):
        modified_equation("rk4", first, 2)
    c = sp.Symbol("c")
    forced = mpvi.LagrangianSystem("damped", [q], sp.Matrix([[1]]), q ** 2 / 2, {c: "1/10"}, G30,
                                   force=lambda t, x, v: sp.Matrix([-c * v[0]]))
    me = modified_equation("rk4", forced, 2)         # a forced system has a modified field
    assert me.terms[0][1] == -q - c * me.symbols[1]
    with pytest.raises(ValueError, match=r"external force F = -c\*q', .* no modified Hamiltonian"):
        modified_hamiltonian("midpoint", forced, 2)


def test_mutze_with_g_1_is_the_implicit_midpoint_rule():
    """mutze Sec. 6: g = 1 is the implicit midpoint rule; their modified equations agree
    term by term through h^6 (two declarations: a parabolic path and a Butcher tableau)."""
    a = modified_equation("mutze", pendulum(), 6, g=1)
    b = modified_equation("implicit_midpoint", pendulum(), 6)
    for ta, tb in zip(a.terms, b.terms):
        assert same(ta, tb)
    with pytest.raises(NotImplementedError, match="iterate"):
        modified_equation("mutze", pendulum(), 2, solver="iterate")


def test_each_term_of_the_modified_hamiltonian_lowers_the_energy_error_by_h_squared():
    """The numerical confirmation in small: the midpoint VI on the pendulum at 64 digits,
    T = 10, h = 1/10 and 1/20.  max_j |H~_k(y_j) - H~_k(y_0)| of H~ truncated after h^k
    falls as h^(2 + k) for k = 0, 2, 4 (fitted orders within 0.2), each term lowering
    the error by more than 100 at h = 1/20."""
    import math
    ctx = mpvi.GMPContext(64)
    system = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
    mh = modified_hamiltonian("midpoint", system, 4)
    prob = mpvi.Problem(system, ["1"], p0=["0"])
    errors = {}
    for n in (10, 20):
        sol = mpvi.solve(prob, "midpoint", h=f"1/{n}", n=10 * n)
        with ctx.active():
            h = ctx.num(1) / n
            for k in (0, 2, 4):
                Hk = sp.lambdify((mh.q[0], mh.p[0], sp.Symbol("h", positive=True)),
                                 mh.energy(k), modules=[ctx.namespace()])
                E = [Hk(a[0], b[0], h) for a, b in zip(sol.q, sol.p)]
                errors[n, k] = float(max(abs(e - E[0]) for e in E))
    for k in (0, 2, 4):
        order = math.log2(errors[10, k] / errors[20, k])
        assert abs(order - (2 + k)) < 0.2, (k, order)
    assert errors[20, 0] > 100 * errors[20, 2] > 100 ** 2 * errors[20, 4]


def test_the_hermite_methods_are_not_hamiltonian_on_the_pendulum():
    """hermite Sec. 3: the one-step variational (order 2n - 2) and Galerkin (order 4n - 4)
    methods are not symplectic; their first corrections on the pendulum are not
    Hamiltonian, with the 3-point Gauss rule and with the default 4n-point rule (nodes
    known only as roots of P_8: the quadrature is taken through its exact moments)."""
    for method, k in (("hermite_variational", 2), ("hermite_galerkin", 4)):
        for nodes in (3, None):
            bad = check_hamiltonian(modified_equation(method, pendulum(), k, nodes=nodes))
            assert bad and bad[0][0] == k


def test_newmarks_family():
    """Newmark (beta, gamma): order 2 for gamma = 1/2, 1 otherwise; beta = 0 (Stormer-Verlet)
    Hamiltonian, beta = 1/4 (symplectic only for a non-canonical form, Kane et al. 2000)
    not, on the pendulum; beta = 1/4 and Mutze's g = 1/2 differ at h^2."""
    me = modified_equation("newmark_family", pendulum(), 4)
    assert me.leading_order() == 2 and [k for k, _ in check_hamiltonian(me)][:1] == [2]
    verlet = modified_equation("newmark_family", pendulum(), 4, beta=0)
    assert verlet.leading_order() == 2 and check_hamiltonian(verlet) == []
    assert modified_equation("newmark_family", pendulum(), 2, gamma="2/3").leading_order() == 1
    with pytest.raises(ValueError, match="linear systems only"):
        modified_equation("newmark", pendulum(), 2)


def test_mutze_g0_has_the_position_verlet_modified_hamiltonian():
    """A (q, v) method's H~ is taken to (q, p) by p = M v.  For L = v^2/2 - U(q), mutze's
    g = 0 is the position Verlet method exp(h/2 T) exp(h U) exp(h/2 T) (T = p^2/2), whose
    modified Hamiltonian by the symmetric BCH formula (Hairer, Lubich, Wanner, GNI,
    Sec. III.5.3 and IX.4) is T + U - h^2/24 {T,{T,U}} + h^2/12 {U,{U,T}} + O(h^4)
    = H + h^2 (-U'' p^2 / 24 + U'^2 / 12) + O(h^4) (Poisson bracket {F,G} = F_q G_p - F_p G_q)."""
    mh = modified_hamiltonian("mutze", pendulum(), 3, g=0)
    qs, ps = mh.q[0], mh.p[0]
    T, U = ps ** 2 / 2, 1 - sp.cos(qs)

    def bracket(F, G):
        return sp.diff(F, qs) * sp.diff(G, ps) - sp.diff(F, ps) * sp.diff(G, qs)
    expected = -bracket(T, bracket(T, U)) / 24 + bracket(U, bracket(U, T)) / 12
    assert sp.expand(expected - (-sp.diff(U, qs, 2) * ps ** 2 / 24 + sp.diff(U, qs) ** 2 / 12)) == 0
    diff = mh.terms[2] - expected
    assert sp.simplify(diff - diff.subs({qs: 0, ps: 0})) == 0
    assert sp.simplify(mh.terms[1]) == 0 and sp.simplify(mh.terms[3]) == 0


@pytest.mark.parametrize("rule, k", [("gauss_legendre", k) for k in (1, 2, 3, 5, 8)] +
                         [("gauss_lobatto", k) for k in (2, 3, 4, 6)])
def test_quadrature_moments_are_the_node_sums(rule, k):
    """The exact moments sum_k w_k tau_k^m (through the node polynomial) against the sum
    over the rule's nodes and weights evaluated at 60 digits, for m up to three times the
    number of nodes (beyond the rule's degree, where they are not 1/(m+1))."""
    from mpvi.methods import quadrature
    from mpvi.analysis.modified import quadrature_moments
    quad = getattr(quadrature, rule)(k)
    nu = quadrature_moments(quad)
    nodes = [sp.N(t, 60) for t in quad.nodes]
    weights = [sp.N(w, 60) for w in quad.weights]
    inexact = 0
    for m in range(3 * k + 2):
        numeric = sum(w * t ** m for t, w in zip(nodes, weights))
        exact = sp.Rational(int(nu(m).numerator), int(nu(m).denominator))
        assert abs(numeric - exact) < sp.Float("1e-55"), (m, numeric, exact)
        inexact += exact != sp.Rational(1, m + 1)
    assert inexact > 0


def test_stormer_verlet_frequency_is_vermeerens_basel_series():
    """M. Vermeeren, "Modified equations and the Basel problem" (2017): for Stormer-Verlet
    on x'' = -x, (Omega h)^2 = 4 arcsin(h/2)^2 = 2 sum_k (k-1)!^2 / (2k)! h^(2k).  The
    2-point Lobatto variational integrator is Stormer-Verlet; its modified frequency from
    the modified equation through h^10 is that series."""
    me = modified_equation("lobatto", oscillator(), 10, points=2)
    omega, damping = mpvi.modified_frequency(me, {w: 1})
    h = mpvi.analysis.modified.H
    series = sum(2 * sp.factorial(k - 1) ** 2 / sp.factorial(2 * k) * h ** (2 * k - 2)
                 for k in range(1, 7))
    assert sp.expand(sp.series(omega ** 2, h, 0, 11).removeO() - series) == 0
    assert damping == 0
    with pytest.raises(ValueError, match="not linear"):
        mpvi.modified_frequency(modified_equation("midpoint", pendulum(), 2))


@pytest.mark.parametrize("method", ["midpoint", "mutze", pytest.param("simpson", marks=pytest.mark.slow)])
def test_the_modified_lagrangians_euler_lagrange_equation_is_the_modified_equation(method):
    """L~ = Legendre(H~) on the pendulum: its Euler-Lagrange equation solved for q'' equals
    the modified equation written for q alone (q'' from (q', y') with the method's second
    variable y -- p, or Mutze's v -- eliminated by inverting q' = F_q(q, y) as a series
    in h), through h^4."""
    order = 4
    ml = mpvi.modified_lagrangian(method, pendulum(), order)
    me = ml.hamiltonian.equation
    h = mpvi.analysis.modified.H
    (qs,), (vs,) = ml.q, ml.v
    L = ml.lagrangian()
    a = sp.Symbol("a")
    EL = sp.diff(L, vs, qs) * vs + sp.diff(L, vs, 2) * a - sp.diff(L, qs)
    a_el = sp.series(sp.solve(EL, a)[0], h, 0, order + 1).removeO()
    F = me.field()
    y = me.symbols
    # the method's second variable (p, or its own v, which is not q' of the modified flow)
    # from q' = F_q(q, y2), inverted as a series in h, then q'' = F_q' F
    ys = y[1]
    y_of_v = vs
    for _ in range(order + 1):
        y_of_v = sp.series(vs - (F[0] - ys).subs(ys, y_of_v), h, 0, order + 1).removeO()
    accel = (sp.diff(F[0], qs) * F[0] + sp.diff(F[0], ys) * F[1]).subs(ys, y_of_v)
    accel = sp.series(accel, h, 0, order + 1).removeO()
    assert sp.simplify(sp.expand(sp.expand_trig(a_el - accel))) == 0


def test_a_position_dependent_mass_matrix():
    """The double pendulum, M(q) = [[2, cos(q1 - q2)], [cos(q1 - q2), 1]]: RK4's h and h^2
    terms vanish exactly (its field has 1/(2 - cos^2(q1 - q2))^2, split into the atom
    1/(2 - cos^2) by factoring; the zero test expands cos(q1 - q2))."""
    q1, q2 = sp.symbols("q1 q2")
    c = sp.cos(q1 - q2)
    dp = mpvi.LagrangianSystem("double pendulum", [q1, q2], sp.Matrix([[2, c], [c, 1]]),
                               -2 * sp.cos(q1) - sp.cos(q2), {}, G30)
    me = modified_equation("rk4", dp, 2)
    assert all(me.algebra.is_zero(e) is True for t in me.ring_terms[1:] for e in t)


@pytest.mark.slow
def test_the_midpoint_vi_on_the_double_pendulum_is_hamiltonian_and_mutze_is_not():
    """The double pendulum of the test above: the midpoint VI's h^2 term, taken to (q, p),
    is Hamiltonian (decided in the ring, denominators cleared); Mutze's g = 0, symplectic
    for L = v^2/2 - U, is not here (its h^2 term in (q, M(q) v))."""
    q1, q2 = sp.symbols("q1 q2")
    c = sp.cos(q1 - q2)
    dp = mpvi.LagrangianSystem("double pendulum", [q1, q2], sp.Matrix([[2, c], [c, 1]]),
                               -2 * sp.cos(q1) - sp.cos(q2), {}, G30)
    assert check_hamiltonian(modified_equation("midpoint", dp, 2)) == []
    assert [k for k, _ in check_hamiltonian(modified_equation("mutze", dp, 2))] == [2]


# ----- B-series (Hairer, Lubich & Wanner, GNI, Secs. III.1 and IX.9) ------------------------

def _trees(n):
    """The rooted trees with n nodes, each a sorted tuple of its subtrees."""
    if n == 1:
        return [()]
    out = set()

    def partitions(total, largest):          # multisets of subtrees with `total` nodes
        if total == 0:
            yield ()
            return
        for k in range(min(total, largest), 0, -1):
            for t in _trees(k):
                for rest in partitions(total - k, k):
                    if not rest or _order(rest[0]) < k or (_order(rest[0]) == k and rest[0] <= t):
                        yield (t,) + rest
    for children in partitions(n - 1, n - 1):
        out.add(tuple(sorted(children)))
    return sorted(out)


def _order(t):
    return 1 + sum(_order(c) for c in t)


def _gamma(t):
    g = _order(t)
    for c in t:
        g *= _gamma(c)
    return g


def _sigma(t):
    s = 1
    for c in set(t):
        m = t.count(c)
        s *= _sigma(c) ** m * sp.factorial(m)
    return s


def _weights(t, A):
    """g_i(t) = prod over the children c of sum_j a_ij g_j(c) (g_i = 1 for the leaf)."""
    s = len(A)
    g = [sp.Integer(1)] * s
    for c in t:
        gc = _weights(c, A)
        g = [g[i] * sum(A[i][j] * gc[j] for j in range(s)) for i in range(s)]
    return g


def _differential(t, f, y):
    """F(t)(y) = f^(k)(y)[F(c_1), .., F(c_k)] for the field f (a list) on y."""
    import itertools
    kids = [_differential(c, f, y) for c in t]
    out = []
    for fr in f:
        acc = sp.Integer(0)
        for idx in itertools.product(range(len(y)), repeat=len(kids)):
            term = sp.diff(fr, *[y[j] for j in idx]) if idx else fr
            for k, j in zip(kids, idx):
                term *= k[j]
            acc += term
        out.append(acc)
    return out


TABLEAUS = {   # name, params, Butcher A, b, order p: written here from the literature
    "rk4": ({}, [[0, 0, 0, 0], [sp.Rational(1, 2), 0, 0, 0], [0, sp.Rational(1, 2), 0, 0],
                 [0, 0, 1, 0]], [sp.Rational(1, 6), sp.Rational(1, 3), sp.Rational(1, 3),
                                 sp.Rational(1, 6)], 4),
    "rk2": ({}, [[0, 0], [sp.Rational(1, 2), 0]], [0, 1], 2),
    "rk2 heun": ({"variant": "heun"}, [[0, 0], [1, 0]], [sp.Rational(1, 2), sp.Rational(1, 2)], 2),
    "implicit_midpoint": ({}, [[sp.Rational(1, 2)]], [1], 2),
}


@pytest.mark.parametrize("name", list(TABLEAUS))
def test_the_first_correction_is_the_b_series_one(name):
    """HLW IX.9 (Thm. 9.2 with the B-series of Sec. III.1): for a Runge-Kutta method of
    order p, B(a, y) with a(t) = Phi(t) = sum_i b_i g_i(t), the modified equation's first
    correction is f_(p+1) = sum_(|t| = p+1) (Phi(t) - 1/gamma(t)) / sigma(t) F(t)(y): the
    9 trees of order 5 for classical RK4 (whose modified equation mpvi derives from its
    own step code, not from a tableau), the 2 of order 3 for the explicit midpoint rule,
    Heun's method and the implicit midpoint rule.  On the pendulum in (q, p)."""
    params, A, b, p = TABLEAUS[name]
    method = name.split()[0]
    me = modified_equation(method, pendulum(), p, **params)
    y, f = me.symbols, me.terms[0]
    trees = _trees(p + 1)
    assert len(trees) == {3: 2, 5: 9}[p + 1]
    predicted = [sp.Integer(0)] * len(y)
    for t in trees:
        phi = sum(bi * gi for bi, gi in zip(b, _weights(t, A)))
        coeff = (phi - sp.Rational(1, _gamma(t))) / _sigma(t)
        predicted = [a + coeff * F for a, F in zip(predicted, _differential(t, f, y))]
    assert same(me.terms[p], predicted)
    assert all(same(me.terms[k], [0, 0]) for k in range(1, p))


# ----- potentials in the ring (modified Hamiltonians of M(q) and polynomial systems) --------

def _qp_defects(mh, points, dps=40, values=None):
    """For every term H_k of ``mh``: the largest |(dH_k/dp, -dH_k/dq) - f_(k+1)| at
    ``points`` (values of (q, p)), f in (q, p) form; derivatives by sympy, values at ``dps``
    digits (independent of the ring in which H_k was integrated); the parameters at
    ``values`` (symbol: number), if given."""
    from mpvi.analysis.modified import _qp_ring_terms
    me, y = mh.equation, list(mh.q) + list(mh.p)
    fields = [[me.algebra.to_expr(e) for e in row] for row in _qp_ring_terms(me)]
    out = []
    for Hk, f in zip(mh.terms, fields):
        grad = [sp.diff(Hk, s) for s in mh.p] + [-sp.diff(Hk, s) for s in mh.q]
        worst = 0
        for point in points:
            sub = {**(values or {}), **{s: sp.Rational(v) for s, v in zip(y, point)}}
            for a, b in zip(grad, f):
                worst = max(worst, abs(sp.N((a - b).xreplace(sub), dps)))
        out.append(worst)
    return out


def test_a_potential_in_the_ring_is_found_exactly_and_only_for_gradients():
    """_gradient_potential recovers c from grad c for c with a reciprocal of a trigonometric
    polynomial (the double pendulum's 1/(2 - cos^2(q1 - q2))), up to a constant, and finds
    none for a field that is not a gradient, nor for one whose potential is not in the ring."""
    from mpvi.analysis.jets import Algebra
    from mpvi.analysis.modified import _gradient_potential
    q1, q2 = sp.symbols("q1 q2")
    c0 = sp.sin(q1) * sp.cos(q2) / (2 - sp.cos(q1 - q2) ** 2) ** 2 + sp.cos(q1) ** 3
    C = Algebra([c0, sp.diff(c0, q1), sp.diff(c0, q2)], [q1, q2]).canonical()
    g = [C.coerce(sp.diff(c0, s)) for s in (q1, q2)]
    c = C.to_expr(_gradient_potential(g, [q1, q2], C, {}))
    for point in [(sp.Rational(1, 3), sp.Rational(-2, 7)), (2, 1)]:
        d = (c - c0).subs(dict(zip((q1, q2), point))) - (c - c0).subs({q1: 0, q2: 0})
        assert abs(sp.N(d, 40)) < sp.Float(10) ** -35
    assert _gradient_potential([C.coerce(sp.cos(q2)), C.zero], [q1, q2], C, {}) is None
    # zero written with a reciprocal, (1/D) D - 1: the potential 0
    i = next(iter(C.reciprocal_degrees([g[0]])))
    hidden = C.atom_gen(i) * C.reciprocal_base(i) - 1
    assert hidden and _gradient_potential([hidden, C.zero], [q1, q2], C, {}) == 0
    # a gradient whose potential is an arctangent, not in the ring: None (sympy's turn)
    D1 = Algebra([1 / (2 - sp.cos(q1) ** 2)], [q1]).canonical()
    assert _gradient_potential([D1.coerce(1 / (2 - sp.cos(q1) ** 2))], [q1], D1, {}) is None


def test_the_modified_hamiltonian_of_a_polynomial_system():
    """Henon-Heiles, V = (q1^2 + q2^2)/2 + q1^2 q2 - q2^3/3 (powers of the coordinates, no
    atoms): the midpoint VI's H~ through h^4 generates its modified field at 40 digits."""
    q1, q2 = sp.symbols("q1 q2")
    hh = mpvi.LagrangianSystem("Henon-Heiles", [q1, q2], sp.eye(2),
                               (q1 ** 2 + q2 ** 2) / 2 + q1 ** 2 * q2 - q2 ** 3 / 3, {}, G30)
    mh = modified_hamiltonian("midpoint", hh, 4)
    assert mh.terms[2] != 0
    points = [("1/3", "-1/5", "2/7", "1/2"), ("-1/2", "1/4", "-1", "1/3")]
    assert all(d < sp.Float(10) ** -35 for d in _qp_defects(mh, points))


def test_a_power_of_a_series_by_its_recurrence_is_taylor_s_formula_term_by_term():
    """jets._power (Taylor-mode recurrence, O(N^2) products) against jets.apply (Taylor's
    formula): the same ring elements, coefficient by coefficient, for e = -3/2, -1/2 of a
    series whose constant term is D = x^2 + y^2 (its atom D^(-1/2) in the ring); for e =
    1/2, 3/2, whose a_0^e is the other atom sqrt(D), the recurrence declines (None: Taylor's
    formula writes a_0^(e - 1) with D^(-1/2), the recurrence would write sqrt(D) (1/D))."""
    from mpvi.analysis.jets import Algebra, Jet, _power, apply
    x, y, a, b = sp.symbols("x y a b")
    D = x ** 2 + y ** 2
    alg = Algebra([D ** sp.Rational(-3, 2), sp.sqrt(D)], [x, y], extra=[a, b])
    series = Jet({0: alg.coerce(D), 1: alg.coerce(a * x + b), 2: alg.coerce(a * b * y),
                  4: alg.coerce(b ** 2)}, 6, alg)
    for e in (sp.Rational(-3, 2), sp.Rational(-1, 2)):
        fast, slow = _power(series, e), apply(lambda z: z ** e, series)
        assert fast is not None and fast.hi == slow.hi
        assert all(fast.coeff(k) == slow.coeff(k) for k in range(fast.hi)), e
    assert _power(series, sp.Rational(1, 2)) is None and _power(series, sp.Rational(3, 2)) is None


def test_roots_of_an_irreducible_radicand_are_decided_in_the_canonical_algebra():
    """D^(-1/2) is D^(1/2) (1/D) in the canonical algebra, (D^(1/2))^2 = D applied: a
    combination that vanishes is found zero, one that does not is found non-zero (False,
    not None); a reducible radicand stays undecided."""
    from mpvi.analysis.jets import Algebra
    x, y = sp.symbols("x y")
    r = sp.sqrt(x ** 2 + y ** 2)
    C = Algebra([1 / r], [x, y]).canonical()
    assert C.is_zero(C.coerce(1 / r) ** 2 * C.coerce(x ** 2 + y ** 2) - 1) is True
    assert C.is_zero(C.coerce(1 / r) * C.coerce(r) - 1) is True
    assert C.is_zero(C.coerce(1 / r) - C.coerce(x)) is False
    R = Algebra([1 / sp.sqrt(x ** 2 - y ** 2)], [x, y]).canonical()  # (x - y)(x + y)
    assert R.is_zero(R.coerce(1 / sp.sqrt(x ** 2 - y ** 2)) - R.coerce(x)) is None


def kepler_plane():
    x, y = sp.symbols("x y")
    return mpvi.LagrangianSystem("Kepler", [x, y], sp.eye(2), -1 / sp.sqrt(x ** 2 + y ** 2),
                                 {}, mpvi.GMPContext(64))


def test_the_modified_hamiltonian_of_kepler_is_finite_and_generates_its_field():
    """V = -1/r is singular at the origin, where H_j(0, 0) = 0 fixed the constant: H_3 came
    back with a term zoo (sympy's integral from q = 0 through the singularity, then the
    ring's value at the origin).  Now 1/r is r^(1/2)-free in the canonical algebra
    (sqrt(D) (1/D), D = x^2 + y^2: exact zero tests), the potential is found in the ring,
    and a term singular at the origin keeps the constant the construction gives.  Through
    h^4 every term is finite and generates the modified field at 40 digits."""
    mh = modified_hamiltonian("midpoint", kepler_plane(), 4)
    assert not any(t.has(sp.zoo, sp.oo, sp.nan) for t in mh.terms)
    assert mh.terms[2] != 0 and mh.terms[4] != 0
    points = [("1/3", "-1/5", "2/7", "1/2"), ("-1/2", "1/4", "-1", "1/3")]
    assert all(d < sp.Float(10) ** -35 for d in _qp_defects(mh, points))


def test_each_term_of_kepler_s_modified_hamiltonian_lowers_the_energy_error_by_h_squared():
    """The midpoint VI on Kepler (e = 0.19) at 64 digits, T = 4, h = 1/20 and 1/40:
    max_j |H~_k(y_j) - H~_k(y_0)| falls as h^(2 + k) for k = 0, 2, 4 (fitted within 0.1)."""
    import math
    S = kepler_plane()
    ctx = S.ctx
    mh = modified_hamiltonian("midpoint", S, 4)
    prob = mpvi.Problem(S, ["1", "0"], p0=["0", "9/10"])
    errors = {}
    for n in (20, 40):
        sol = mpvi.solve(prob, "midpoint", h=f"1/{n}", n=4 * n)
        with ctx.active():
            for k in (0, 2, 4):
                Hk = sp.lambdify((*mh.q, *mh.p, sp.Symbol("h", positive=True)), mh.energy(k),
                                 modules=[ctx.namespace()])
                E = [Hk(*a, *b, ctx.num(1) / n) for a, b in zip(sol.q, sol.p)]
                errors[n, k] = float(max(abs(e - E[0]) for e in E))
    for k in (0, 2, 4):
        assert abs(math.log2(errors[20, k] / errors[40, k]) - (2 + k)) < 0.1, (k, errors)


def test_the_modified_hamiltonian_of_two_bodies_is_a_function_of_their_distance():
    """Two bodies in the plane (masses and G symbols): the ansatz in the bare coordinates
    has 106680 monomials (it ran for minutes), the one in the distance's powers and root 14
    (:func:`mpvi.analysis.modified._invariant_potential`): H_3 is found in seconds, depends on
    the positions only through the distance, and generates the modified field."""
    from mpvi.analysis.modified import forget_derivations
    x1, y1, x2, y2 = sp.symbols("x1 y1 x2 y2")
    m1, m2, G = sp.symbols("m1 m2 G", positive=True)
    d = sp.sqrt((x1 - x2) ** 2 + (y1 - y2) ** 2)
    S = mpvi.LagrangianSystem("two bodies", [x1, y1, x2, y2], sp.diag(m1, m1, m2, m2),
                              -G * m1 * m2 / d, {m1: 1, m2: "1/1000", G: 1}, G30)
    forget_derivations()
    mh = modified_hamiltonian("midpoint", S, 2)
    H3 = mh.terms[2]
    at_rest = H3.subs({p: 0 for p in mh.p})
    shifted = at_rest.subs({x1: x1 + 5, x2: x2 + 5, y1: y1 - 3, y2: y2 - 3}, simultaneous=True)
    assert sp.simplify(shifted - at_rest) == 0
    assert not H3.has(sp.zoo, sp.oo, sp.nan)
    points = [("1/3", "-1/5", "2/7", "1/2", "1/5", "-1/3", "1/7", "1/11"),
              ("-1/2", "1/4", "-1", "1/3", "2", "1/9", "-1/4", "3")]
    values = {m1: 1, m2: sp.Rational(1, 1000), G: 1}
    assert all(x < sp.Float(10) ** -35 for x in _qp_defects(mh, points, values=values))


@pytest.mark.slow
def test_the_modified_hamiltonian_of_the_double_pendulum():
    """M(q) = [[2, cos(q1 - q2)], [cos(q1 - q2), 1]]: the midpoint VI's H_3 (the h^2 term)
    is a polynomial in p, the sines and cosines and 1/(2 - cos^2(q1 - q2)) and generates
    the h^2 term of the modified field at 40 digits."""
    q1, q2 = sp.symbols("q1 q2")
    c = sp.cos(q1 - q2)
    dp = mpvi.LagrangianSystem("double pendulum", [q1, q2], sp.Matrix([[2, c], [c, 1]]),
                               -2 * sp.cos(q1) - sp.cos(q2), {}, G30)
    mh = modified_hamiltonian("midpoint", dp, 2)
    assert mh.terms[2] != 0 and not mh.terms[2].has(sp.Integral)
    points = [("1/3", "-1/5", "2/7", "1/2"), ("2", "1", "-1", "1/3")]
    assert all(d < sp.Float(10) ** -35 for d in _qp_defects(mh, points))
