"""Modified equations for every Lagrangian (issue 38): velocity-linear (magnetic) terms in
the canonical momenta p = dL/dv, time-dependent Lagrangians and forces (the
non-autonomous series), a Lagrangian not quadratic in v (the (q, v) form), terms in a
canonical simplified form, momenta named like the coordinates, a private step symbol.

Each derivation is checked two ways, neither of which uses mpvi.analysis.modified:

* numerically: one step of the method (:func:`mpvi.solve`) against the flow of the
  modified field truncated after h^r (mpmath's Taylor integrator ``odefun`` at 50
  digits): the gap falls as h^(k + 1), k the first power of h left out, so each added
  term lowers it by the predicted power;
* against a series derivation written here in plain sympy: the midpoint rule's discrete
  Euler-Lagrange (Lagrange-d'Alembert) equations for L_d = h L(t + h/2, (q0 + q1)/2,
  (q1 - q0)/h), solved for q1 by undetermined coefficients in h, and the modified field
  by matching the Lie series sum_k h^k D^k y / k! of D = F~ . grad (+ d/dt) to the step,
  order by order (not HLW's G_k recursion that mpvi uses).
"""
import math

import mpmath
import pytest
import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.rings import ring

import mpvi
from mpvi import LagrangianSystem, modified_equation, modified_hamiltonian, modified_lagrangian

CTX = mpvi.GMPContext(50)
T = sp.Symbol("t")
HS = ["1/8", "1/16", "1/32"]


# ----- the systems ------------------------------------------------------------------------

def charged():
    """A charged particle in the plane in a static magnetic field B (A = B x q / 2) with
    the potential (x^2 + y^2)/2 + k x^4/4."""
    x, y, vx, vy, B, k = sp.symbols("x y v_x v_y B k")
    L = (vx ** 2 + vy ** 2) / 2 + B * (x * vy - y * vx) / 2 - (x ** 2 + y ** 2) / 2 - k * x ** 4 / 4
    return LagrangianSystem.from_lagrangian("charged", [x, y], [vx, vy], L, {B: "1", k: "1/2"},
                                            CTX), {B: 1, k: sp.Rational(1, 2)}


W, EPS, OMEGA = sp.symbols("omega epsilon Omega")
DUFFING = {W: 1, EPS: sp.Rational(1, 2), OMEGA: sp.Rational(3, 2)}


def duffing(as_force):
    """q'' + omega^2 q + q^3 = epsilon cos(Omega t): a force, or a time-dependent potential."""
    q, v = sp.symbols("q v")
    params = {s: str(x) for s, x in DUFFING.items()}
    V = W ** 2 * q ** 2 / 2 + q ** 4 / 4
    if as_force:
        return LagrangianSystem("duffing_force", [q], sp.Matrix([[1]]), V, params, CTX,
                                force=lambda t, x, u: sp.Matrix([EPS * sp.cos(OMEGA * t)]))
    L = v ** 2 / 2 - V + EPS * q * sp.cos(OMEGA * T)
    return LagrangianSystem.from_lagrangian("duffing_potential", [q], [v], L, params, CTX)


def mathews_lakshmanan(mass_form=False):
    """L = (v^2 - lambda q^2) / (2 (1 + lambda q^2)), from L or as M = 1/(1 + lambda q^2),
    V = lambda q^2 / (2 (1 + lambda q^2))."""
    q, v, lam = sp.symbols("q v lambda")
    if mass_form:
        return LagrangianSystem("mathews_lakshmanan", [q], sp.Matrix([[1 / (1 + lam * q ** 2)]]),
                                lam * q ** 2 / (2 * (1 + lam * q ** 2)), {lam: "1/2"}, CTX)
    L = (v ** 2 - lam * q ** 2) / (2 * (1 + lam * q ** 2))
    return LagrangianSystem.from_lagrangian("mathews_lakshmanan", [q], [v], L, {lam: "1/2"}, CTX)


def quartic_velocity():
    """L = v^2/2 + e v^4/4 - q^2/2 - q^4/4: not quadratic in v."""
    q, v, e = sp.symbols("q v e")
    L = v ** 2 / 2 + e * v ** 4 / 4 - q ** 2 / 2 - q ** 4 / 4
    return LagrangianSystem.from_lagrangian("quartic_v", [q], [v], L, {e: "1/10"}, CTX), \
        {e: sp.Rational(1, 10)}


# ----- the numerical check ----------------------------------------------------------------

def _mp(x):
    x = sp.Rational(x)
    return mpmath.mpf(int(x.p)) / int(x.q)


def one_step_gaps(me, system, method, start, values, truncations):
    """{r: [gap at each h of HS]}: max over the state of |one step of ``method`` - the
    time-h flow of sum_(k <= r) h^k f_(k+1)| (the field at the parameters ``values``)."""
    n = system.dof
    gaps = {r: [] for r in truncations}
    with mpmath.workdps(50):
        for h in HS:
            given = {"p0" if me.form == "qp" else "v0": start[n:]}
            sol = mpvi.solve(mpvi.Problem(system, start[:n], **given), method, h=CTX.num(h), n=1)
            end = list(sol.q[-1]) + list((sol.p if me.form == "qp" else sol.v)[-1])
            for r in truncations:
                field = [e.subs(values) for e in me.field(r, h=sp.Rational(h))]
                f = sp.lambdify([T, me.symbols], field, "mpmath", cse=True)
                flow = mpmath.odefun(lambda t, z: f(t, z), 0, [_mp(x) for x in start],
                                     tol=mpmath.mpf(10) ** -46, degree=30)
                z = flow(_mp(h))
                gaps[r].append(max(abs(mpmath.mpf(str(a)) - b) for a, b in zip(end, z)))
    return gaps


def check_gaps(me, gaps):
    """Each truncation's gap falls as h^(k + 1), k the first nonzero term left out (``me``
    is derived beyond the last truncation until one is; fitted over the last halving
    within 0.25), and each added term lowers the gap at the smallest h by more than 10."""
    nonzero = [k for k, t in enumerate(me.terms) if any(e != 0 for e in t)]
    last = None
    for r, g in sorted(gaps.items()):
        k = next(k for k in nonzero if k > r)
        slope = math.log(g[-2] / g[-1]) / math.log(2)
        assert abs(slope - (k + 1)) < 0.25, (me.method, r, slope, k + 1)
        if last is not None:
            assert g[-1] * 10 < last, (me.method, r, g[-1], last)
        last = g[-1]


# ----- the independent derivation ---------------------------------------------------------

C_, S_ = sp.symbols("c_ s_")          # cos(Omega t), sin(Omega t)
STEP = sp.Symbol("h_")


class Series:
    """Polynomials over Q in the step h_, the state, the parameters, cos and sin of
    Omega t (c_, s_) and the unknowns of the step, truncated beyond h_^top (sympy's
    sparse PolyRing: the derivation below is plain polynomial algebra)."""

    def __init__(self, symbols, top):
        self.R, *_ = ring([S_, C_, STEP, *symbols], QQ)
        self.top = top
        self.gens = dict(zip([S_, C_, STEP, *symbols], self.R.gens))

    def of(self, e):
        """A sympy polynomial (cos(Omega t), sin(Omega t) written c_, s_) in the ring."""
        e = sp.expand(e).subs({sp.cos(OMEGA * T): C_, sp.sin(OMEGA * T): S_})
        return self.R.from_expr(e) if e != 0 else self.R.zero

    def cut(self, e):
        return self.R.from_dict({m: c for m, c in e.items() if m[2] <= self.top})

    def at(self, e, values):
        """e with generators replaced by ring elements ({sympy symbol: element})."""
        out = self.R.zero
        index = {self.R.gens.index(self.gens[s]): v for s, v in values.items()}
        for m, c in e.items():
            term = self.R.one * c
            for i, k in enumerate(m):
                if k:
                    g = index.get(i, self.R.gens[i])
                    for _ in range(k):
                        term = self.cut(term * g)
            out += term
        return out

    def coefficient(self, e, k):
        """[h_^k] e."""
        return self.R.from_dict({m[:2] + (0,) + m[3:]: c for m, c in e.items() if m[2] == k})

    def reduced(self, e):
        """e modulo s_^2 + c_^2 - 1."""
        s, c = self.gens[S_], self.gens[C_]
        return e.rem(s ** 2 + c ** 2 - 1)


def midpoint_step_series(L, F, q, v, p, params, top):
    """The midpoint VI's step (q, p) -> (q1, p1) as [h^j] coefficients, j <= top, from
    p0 = -dL_d/dq0 - f^-, p1 = dL_d/dq1 + f^+ with L_d = h L(t + h/2, qm, (q1 - q0)/h) and
    f^+- = h F(t + h/2, qm, vd) / 2, solved by undetermined coefficients q1 = q + sum
    h^k a_k (each order linear in a_k with the constant matrix L_vv; L polynomial, t only
    in cos(Omega t), sin(Omega t), whose shift by h/2 is written with the Taylor
    polynomials of cos(Omega h/2), sin(Omega h/2))."""
    n = len(q)
    A = [sp.Symbol(f"A_{i}") for i in range(n)]
    S = Series([*q, *p, *v, *params, *A], top + 1)
    h = S.gens[STEP]
    shift = {}
    if OMEGA in params:                   # (Omega h / 2)^k / k!
        half = [S.gens[OMEGA] ** k * QQ(1, 2 ** k * math.factorial(k)) for k in range(top + 3)]
        cos_h = sum((h ** k * half[k] * (-1) ** (k // 2) for k in range(0, top + 3, 2)), S.R.zero)
        sin_h = sum((h ** k * half[k] * (-1) ** (k // 2) for k in range(1, top + 3, 2)), S.R.zero)
        c, s = S.gens[C_], S.gens[S_]
        shift = {C_: S.cut(c * cos_h - s * sin_h), S_: S.cut(s * cos_h + c * sin_h)}
    P = [S.of(sp.diff(L, vi)) for vi in v]
    G = [S.of(sp.diff(L, qi) + Fi) for qi, Fi in zip(q, F)]
    known = [S.gens[x] for x in q]                      # q1 through the solved powers
    for k in range(1, top + 2):
        q1 = [x + h ** k * S.gens[a] for x, a in zip(known, A)]
        values = dict(shift)
        values.update({x: (S.gens[x] + y) * QQ(1, 2) for x, y in zip(q, q1)})
        values.update({vi: S.R.from_dict({m[:2] + (m[2] - 1,) + m[3:]: cc
                                          for m, cc in (y - S.gens[x]).items()})
                       for vi, x, y in zip(v, q, q1)})
        Pm, Gm = [S.at(e, values) for e in P], [S.at(e, values) for e in G]
        rows = [S.coefficient(Pm[i] - h * Gm[i] * QQ(1, 2) - S.gens[p[i]], k - 1)
                for i in range(n)]
        zero = {a: S.R.zero for a in A}
        M = [[r.diff(S.gens[a]) for a in A] for r in rows]
        assert all(e.is_ground for row in M for e in row), "L_vv must be constant here"
        M = sp.Matrix([[sp.Rational(e.LC) if e else 0 for e in row] for row in M])
        sol = M.solve(sp.Matrix([-S.at(r, zero).as_expr() for r in rows]))
        known = [x + h ** k * S.of(a) for x, a in zip(known, sol)]
    values = dict(shift)
    values.update({x: (S.gens[x] + y) * QQ(1, 2) for x, y in zip(q, known)})
    values.update({vi: S.R.from_dict({m[:2] + (m[2] - 1,) + m[3:]: cc
                                      for m, cc in (y - S.gens[x]).items()})
                   for vi, x, y in zip(v, q, known)})
    p1 = [S.at(P[i], values) + h * S.at(G[i], values) * QQ(1, 2) for i in range(n)]
    y0 = [S.gens[x] for x in [*q, *p]]
    d = [[S.coefficient(y1 - (y if j == 0 else S.R.zero), j) for y1, y in zip(known + p1, y0)]
         for j in range(top + 1)]
    return S, d


def modified_field_by_lie_series(S, d, y, top, time=False):
    """f_1 .. f_top (ring elements) from the step's coefficients d[j]: the Lie series
    sum_k h^k D^k y / k! of D = F~ . grad (+ d/dt: c_' = -Omega s_, s_' = Omega c_),
    F~ = sum_j h^(j-1) f_j, matched to the step order by order."""
    h, c, s = S.gens[STEP], S.gens[C_], S.gens[S_]
    gens = [S.gens[x] for x in y]
    f = []
    for j in range(1, top + 1):
        F = [sum((h ** i * f[i][k] for i in range(len(f))), S.R.zero) for k in range(len(y))]

        def D(e):
            out = sum((S.cut(e.diff(g) * Fg) for g, Fg in zip(gens, F)), S.R.zero)
            if time:
                out += S.cut((-e.diff(c) * s + e.diff(s) * c) * S.gens[OMEGA])
            return out
        term, flow = list(gens), [S.R.zero] * len(y)
        for k in range(1, j + 1):
            term = [D(e) for e in term]
            flow = [fl + S.cut(h ** k * e) * QQ(1, math.factorial(k)) for fl, e in zip(flow, term)]
        f.append([S.reduced(d[j][k] - S.coefficient(flow[k], j)) for k in range(len(y))])
    return f


def same(S, mine, theirs):
    """mpvi's sympy terms equal the ring's, modulo s_^2 + c_^2 - 1."""
    return all(S.reduced(S.of(a) - b) == 0 for a, b in zip(mine, theirs))


# ----- the charged particle in a magnetic field ------------------------------------------

def test_charged_particle_midpoint_through_h4_numerically():
    """Midpoint VI on the charged particle, in canonical (q, p = v + A): one step against
    the flow of the modified field truncated after h^0, h^2, h^4: gaps O(h^3), O(h^5),
    O(h^7)."""
    system, values = charged()
    me = modified_equation("midpoint", system, 6)
    assert me.form == "qp" and [str(s) for s in me.symbols] == ["x", "y", "p_x", "p_y"]
    check_gaps(me, one_step_gaps(me, system, "midpoint", ["1/2", "1/3", "1/5", "-1/7"],
                                 values, [0, 2, 4]))


def test_charged_particle_midpoint_equals_an_independent_derivation():
    """Term by term through h^4, B and k symbols: mpvi's series equals the discrete
    Euler-Lagrange equations solved by undetermined coefficients and the Lie-series
    matching written here; the modified Hamiltonian's terms generate the terms (J grad
    H_j = f_j); the modified Lagrangian is its Legendre transform with p = dL~/dv."""
    system, _ = charged()
    me = modified_equation("midpoint", system, 4)
    q, p, v = me.symbols[:2], me.symbols[2:], system.velocity_symbols
    S, d = midpoint_step_series(system.lagrangian_expr, [0, 0], q, v, p,
                                system.param_symbols, 5)
    theirs = modified_field_by_lie_series(S, d, list(q) + list(p), 5)
    assert len(me.terms) == len(theirs) == 5
    for mine, ref in zip(me.terms, theirs):
        assert same(S, mine, ref)
    mh = modified_hamiltonian("midpoint", system, 4)
    for k, (Hk, fk) in enumerate(zip(mh.terms, me.terms)):
        grad = [sp.diff(Hk, s) for s in p] + [-sp.diff(Hk, s) for s in q]
        assert all(sp.expand(a - b) == 0 for a, b in zip(grad, fk)), k
    ml = modified_lagrangian("midpoint", system, 4)
    h = ml.h
    Lt = ml.lagrangian()
    Pt = [sp.diff(Lt, vi) for vi in v]
    gap = mh.energy().subs(dict(zip(p, Pt)), simultaneous=True) - (
        sum(a * b for a, b in zip(Pt, v)) - Lt)
    gap = sp.expand(gap)
    assert all(gap.coeff(h, k) == 0 for k in range(5))


# ----- a forced (and time-dependent) oscillator -------------------------------------------

@pytest.mark.parametrize("method, order, truncations", [
    ("midpoint", 6, [0, 2, 4]), ("rk4", 6, [0, 4, 5]), ("simpson", 6, [0, 4])])
def test_forced_duffing_flow_gap_per_term(method, order, truncations):
    """A forced Duffing oscillator (force=...): the non-autonomous modified field f_j(t, y)
    -- one step from t = 0 against its flow (t' = 1) -- each added term lowers the gap by
    the predicted power of h."""
    system = duffing(as_force=True)
    me = modified_equation(method, system, order)
    assert me.time == T
    check_gaps(me, one_step_gaps(me, system, method, ["1/2", "1/3"], DUFFING, truncations))


def test_forced_duffing_midpoint_equals_an_independent_derivation():
    """Midpoint VI on the forced Duffing oscillator through h^4 (Omega, epsilon, omega
    symbols): the discrete Lagrange-d'Alembert equations with the force at t + h/2 solved
    here, the Lie series with d/dt; the same terms for the force written as a
    time-dependent potential epsilon q cos(Omega t)."""
    system = duffing(as_force=True)
    me = modified_equation("midpoint", system, 4)
    q, p = me.symbols[:1], me.symbols[1:]
    v = system.velocity_symbols
    S, d = midpoint_step_series(system.lagrangian_expr, list(system.force_expr), q, v, p,
                                system.param_symbols, 5)
    theirs = modified_field_by_lie_series(S, d, list(q) + list(p), 5, time=True)
    assert len(me.terms) == len(theirs) == 5
    for mine, ref in zip(me.terms, theirs):
        assert same(S, mine, ref)
    other = modified_equation("midpoint", duffing(as_force=False), 4)
    rename = dict(zip(other.symbols, me.symbols))
    for a, b in zip(other.terms, me.terms):
        assert same(S, [e.xreplace(rename) for e in a], [S.of(e) for e in b])


def test_time_dependent_lagrangian_has_a_time_dependent_modified_hamiltonian():
    """epsilon q cos(Omega t) in L: the midpoint VI's terms are Hamiltonian at each t
    (checked exactly), H_j(t, q, p) generates them, and H~ truncated after h^2 generates
    a flow whose one-step gap to the method is O(h^5) (numerically); RK4's h^5 term is
    not Hamiltonian."""
    system = duffing(as_force=False)
    mh = modified_hamiltonian("midpoint", system, 4)
    me = mh.equation
    assert mh.time == T and any(Hk.has(T) for Hk in mh.terms[2:])
    (q,), (p,) = mh.q, mh.p
    for Hk, fk in zip(mh.terms, me.terms):
        assert sp.expand(sp.diff(Hk, p) - fk[0]) == 0
        assert sp.expand(sp.expand_trig(-sp.diff(Hk, q) - fk[1])) == 0
    H2 = mh.energy(2)
    ham = mpvi.ModifiedEquation("H~", "qp", [q, p], [[sp.diff(H2, p).coeff(mh.h, k),
                                                      -sp.diff(H2, q).coeff(mh.h, k)]
                                                     for k in range(3)], h=mh.h)
    gaps = one_step_gaps(ham, system, "midpoint", ["1/2", "1/3"], DUFFING, [2])
    assert abs(math.log(gaps[2][-2] / gaps[2][-1]) / math.log(2) - 5) < 0.25
    assert me.terms[4] != [0, 0]
    bad = mpvi.check_hamiltonian(modified_equation("rk4", system, 5))
    assert [k for k, _ in bad] == [5]


# ----- a Lagrangian not quadratic in v ----------------------------------------------------

@pytest.mark.parametrize("method", ["midpoint", "implicit_midpoint"])
def test_non_quadratic_lagrangian_modified_equation_on_q_v(method):
    """L = v^2/2 + e v^4/4 - q^2/2 - q^4/4: the modified field on (q, v) (the midpoint VI,
    a (q, p) method, taken to (q, v) through p = dL/dv solved as a series) matches the
    method's step term by term (gaps O(h^3), O(h^5), O(h^7)); no modified Hamiltonian
    (v(q, p) has no closed form), said so."""
    system, values = quartic_velocity()
    me = modified_equation(method, system, 6)
    assert me.form == "qv" and me.symbols == [*system.coords, *system.velocity_symbols]
    check_gaps(me, one_step_gaps(me, system, method, ["1/2", "1/3"], values, [0, 2, 4]))
    for f in (modified_hamiltonian, modified_lagrangian):
        with pytest.raises(NotImplementedError, match="not quadratic in the velocities"):
            f(method, system, 2)
    with pytest.raises(NotImplementedError, match="not quadratic in the velocities"):
        mpvi.check_hamiltonian(me)


# ----- the form of the results ------------------------------------------------------------

@pytest.mark.parametrize("mass_form", [True, False])
def test_mathews_lakshmanan_zero_terms_are_zero(mass_form):
    """The midpoint VI's h and h^3 terms on the Mathews-Lakshmanan oscillator are 0 (in
    the M, V form they were expressions of 539 and 3230 operations equal to 0); the
    others are one fraction N / (1 + lambda q^2)^a with N a polynomial, as is each H_j;
    the M, V form and L give the same terms."""
    system = mathews_lakshmanan(mass_form)
    me = modified_equation("midpoint", system, 4)
    assert me.terms[1] == [0, 0] and me.terms[3] == [0, 0]
    other = modified_equation("midpoint", mathews_lakshmanan(not mass_form), 4)
    assert list(other.terms) == list(me.terms)
    lam = system.param_symbols[0]
    q = system.coords[0]
    mh = modified_hamiltonian("midpoint", system, 4)
    for row in [me.terms[2], me.terms[4], [mh.terms[2], mh.terms[4]]]:
        for e in row:
            num, den = sp.fraction(e)
            assert e != 0 and num.is_polynomial(*me.symbols, lam)
            assert den == 1 or den.as_base_exp()[0] == lam * q ** 2 + 1


def test_momenta_are_numbered_like_the_coordinates():
    """q1, q2 -> p1, p2; x, y -> p_x, p_y; a parameter named p1 makes the momenta private
    symbols (printed _p1), never equal to it."""
    q1, q2, p1, c = sp.symbols("q1 q2 p1 c")
    V = q1 ** 2 / 2 + q2 ** 2 / 2 + c * q1 ** 2 * q2
    me = modified_equation("midpoint", LagrangianSystem("two", [q1, q2], sp.eye(2), V,
                                                        {c: "1/3"}, CTX), 2)
    assert me.symbols[2:] == list(sp.symbols("p1 p2"))
    clash = LagrangianSystem("clash", [q1, q2], sp.eye(2), V + p1 * q1, {c: "1/3", p1: "1"}, CTX)
    me = modified_equation("midpoint", clash, 2)
    assert [s.name for s in me.symbols[2:]] == ["p1", "p2"] and p1 not in me.symbols
    assert str(me.symbols[2]) == "_p1"
    assert me.terms[0][2].has(p1) and me.terms[0][0] == me.symbols[2]


def test_a_user_parameter_named_h_is_not_the_step():
    """A system with a parameter h: the step symbol is a private one, printed _h, and
    field(h=...) replaces it, not the parameter."""
    q, h = sp.symbols("q h")
    system = LagrangianSystem("spring_h", [q], sp.Matrix([[1]]), h * q ** 2 / 2 + q ** 4 / 4,
                              {h: "2"}, CTX)
    me = modified_equation("midpoint", system, 2)
    assert me.h != h and me.h != sp.Symbol("h", positive=True) and str(me.h) != "h"
    assert "_h" in str(me.field()) and me.terms[2][1].has(h)
    at = me.field(h=sp.Rational(1, 10))
    assert not any(e.has(me.h) for e in at) and at[1].has(h)
    mh = modified_hamiltonian("midpoint", system, 2)
    assert mh.h == me.h and mh.energy().has(me.h, h)


def test_refusals_name_their_cause():
    """A forced system has no modified Hamiltonian (the message names the force, its
    modified equation is derived); Newmark's family on (q, p) needs p = M v, M constant,
    and says so."""
    forced = duffing(as_force=True)
    with pytest.raises(ValueError, match=r"external force F = epsilon\*cos\(Omega\*t\)"):
        modified_hamiltonian("midpoint", forced, 2)
    with pytest.raises(ValueError, match="external force"):
        modified_lagrangian("midpoint", forced, 2)
    assert modified_equation("midpoint", forced, 2).terms[1] == [0, 0]
    from mpvi.methods.declarations import NewmarkScheme
    from mpvi.analysis.modified import _Model, _series_newmark
    with pytest.raises(NotImplementedError, match="p = M v with a constant M; charged has"):
        _series_newmark(NewmarkScheme(sp.Rational(1, 4), sp.Rational(1, 2), form="qp"),
                        _Model(charged()[0]), 3)


# ----- every method on the most general systems ------------------------------------------

def driven_charged():
    """The charged particle with a time-dependent potential x cos(Omega t) / 2 and a
    velocity-dependent force -c (v_x, v_y): quadratic in v with A.v, time-dependent,
    forced."""
    system, values = charged()
    x, y = system.coords
    vx, vy = system.velocity_symbols
    c = sp.Symbol("c")
    L = system.lagrangian_expr + x * sp.cos(OMEGA * T) / 2
    params = {**{s: str(v) for s, v in values.items()}, OMEGA: "3/2", c: "1/5"}
    driven = LagrangianSystem.from_lagrangian(
        "driven_charged", [x, y], [vx, vy], L, params, CTX,
        force=lambda t, q, v: sp.Matrix([-c * v[0], -c * v[1] * q[0]]))
    return driven, {**values, OMEGA: sp.Rational(3, 2), c: sp.Rational(1, 5)}


def damped_quartic_velocity():
    """L = v^2/2 + e v^4/4 - q^2/2 - q^4/4 + q cos(Omega t) with the force -c v."""
    system, values = quartic_velocity()
    (q,), (v,) = system.coords, system.velocity_symbols
    c = sp.Symbol("c")
    params = {**{s: str(x) for s, x in values.items()}, OMEGA: "3/2", c: "1/5"}
    damped = LagrangianSystem.from_lagrangian(
        "damped_quartic_v", [q], [v], system.lagrangian_expr + q * sp.cos(OMEGA * T), params,
        CTX, force=lambda t, x, u: sp.Matrix([-c * u[0]]))
    return damped, {**values, OMEGA: sp.Rational(3, 2), c: sp.Rational(1, 5)}


EVERY = [("midpoint", {}, 2), ("simpson", {}, 4), ("gauss", {}, 4),
         ("lobatto", {"points": 3}, 4), ("hermite_variational", {}, 2),
         ("hermite_galerkin", {}, 4), ("implicit_midpoint", {}, 2), ("rk2", {}, 2),
         ("rk4", {}, 4), ("gbs", {"levels": 2}, 4), ("mutze", {}, 2),
         ("mutze_variation", {}, 2), ("mutze_parabolic_el", {}, 2), ("newmark_family", {}, 2)]


@pytest.mark.parametrize("method, options, order, make", [
    pytest.param(m, o, p, make, id=f"{m}-{make.__name__}",
                 marks=[pytest.mark.slow] if p > 2 and make is damped_quartic_velocity else [])
    for make in (driven_charged, damped_quartic_velocity) for m, o, p in EVERY])
def test_every_method_on_a_driven_forced_system(method, options, order, make):
    """Every registered one-step method (but the linear-only ones and the adaptive Taylor
    scheme) on a time-dependent forced system, quadratic in v with a magnetic term or not
    quadratic in v: its terms vanish below h^order, and one step of it is the flow of f_1
    to O(h^(order + 1)) and the flow of f_1 + h^order f_(order+1) to at least one more
    power of h, the gap at the smallest step more than 10 times smaller.  (The methods of
    order 4 on the second system take 4 to 11 s each: marked slow.)"""
    system, values = make()
    me = modified_equation(method, system, order, **options)
    nonzero = [k for k, t in enumerate(me.terms) if k and any(e != 0 for e in t)]
    assert nonzero == [order]
    first = order
    assert me.time == T and (me.form == "qv" or system.quadratic_in_velocity)
    n = system.dof
    start = ["1/2", "1/3", "1/5", "-1/7"][:2 * n]
    gaps = {r: [] for r in (0, first)}
    with mpmath.workdps(50):
        for h in HS:
            given = {"p0" if me.form == "qp" else "v0": start[n:]}
            sol = mpvi.solve(mpvi.Problem(system, start[:n], **given), method, h=CTX.num(h), n=1,
                             **options)
            end = list(sol.q[-1]) + list((sol.p if me.form == "qp" else sol.v)[-1])
            for r in gaps:
                field = [e.subs(values) for e in me.field(r, h=sp.Rational(h))]
                f = sp.lambdify([T, me.symbols], field, "mpmath", cse=True)
                flow = mpmath.odefun(lambda t, z: f(t, z), 0, [_mp(x) for x in start],
                                     tol=mpmath.mpf(10) ** -46, degree=30)
                gaps[r].append(max(abs(mpmath.mpf(str(a)) - b)
                                   for a, b in zip(end, flow(_mp(h)))))
    slope = math.log(gaps[0][-2] / gaps[0][-1]) / math.log(2)
    assert abs(slope - (first + 1)) < 0.25, (method, slope, first)
    slope = math.log(gaps[first][-2] / gaps[first][-1]) / math.log(2)
    assert slope > first + 2 - 0.25 and gaps[first][-1] * 10 < gaps[0][-1], (method, slope)
