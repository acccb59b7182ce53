"""The exact ring of the derivations on FLINT (mpvi/analysis/jets.py, issue 36): the FLINT backend
gives the sympy backend's results term by term -- ring operations, modified equations and
modified Hamiltonians on several systems and methods --, a derivation kept by the process
resumes to a higher order with what a derivation from scratch gives, a Hamiltonian check
decides in the compact ring, and a position-dependent mass matrix M(q) = 1/(1 + q^2) gets
its potentials in the ring."""
import random

import pytest
import sympy as sp

import mpvi
import mpvi.analysis.modified as modified
from mpvi.analysis.jets import Algebra, ring_backend
from mpvi.analysis.modified import forget_derivations, modified_equation, modified_hamiltonian

G30 = mpvi.GMPContext(30)
q, q1, q2 = sp.symbols("q q1 q2")


def pendulum():
    return mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, G30)


def double_pendulum():
    c = sp.cos(q1 - q2)
    return mpvi.LagrangianSystem("double pendulum", [q1, q2], sp.Matrix([[2, c], [c, 1]]),
                                 -2 * sp.cos(q1) - sp.cos(q2), {}, G30)


def henon_heiles():
    return mpvi.LagrangianSystem("Henon-Heiles", [q1, q2], sp.eye(2),
                                 (q1 ** 2 + q2 ** 2) / 2 + q1 ** 2 * q2 - q2 ** 3 / 3, {}, G30)


def position_mass():
    """One degree of freedom with M(q) = 1/(1 + q^2), V = q^2/2."""
    return mpvi.LagrangianSystem("M(q)", [q], sp.Matrix([[1 / (1 + q ** 2)]]), q ** 2 / 2, {},
                                 G30)


def on_both(fn):
    """fn() computed on each backend from scratch: {backend: result}."""
    out = {}
    for backend in ("sympy", "flint"):
        forget_derivations()
        with ring_backend(backend):
            out[backend] = fn()
    forget_derivations()
    return out


# ----- the ring ---------------------------------------------------------------------------

def _random_element(rng, exprs, terms=6):
    """A random polynomial in ``exprs`` (sympy) with small rational coefficients."""
    out = sp.Integer(0)
    for _ in range(terms):
        mono = sp.Rational(rng.randint(-9, 9), rng.randint(1, 5))
        for e in rng.sample(exprs, 4):
            mono *= e ** rng.randint(0, 3)
        out += mono
    return out


def test_the_ring_operations_agree_term_by_term():
    """Products, reduce (sin^2 -> 1 - cos^2, sqrt(3)^2 -> 3), derivatives, coefficients,
    substitution, conversion to the canonical algebra, clearing reciprocals and the
    quadrature moments give the same sympy expression on both backends."""
    from mpvi.analysis.modified import quadrature_moments
    from mpvi.methods.quadrature import gauss_legendre
    tau, p = sp.symbols("tau p")
    D = 2 - sp.cos(q1 - q2) ** 2
    atoms = [sp.sin(q1), sp.cos(q1), sp.sin(q1 - q2), sp.cos(q1 - q2), 1 / D, sp.sqrt(3), p, q1, tau]
    rng = random.Random(36)
    exprs = [_random_element(rng, atoms) for _ in range(4)]
    moments = quadrature_moments(gauss_legendre(3))     # nodes irrational: roots of P_3

    def run():
        A = Algebra(exprs, [q1, q2, p], [tau])
        a, b, c, d = (A.coerce(e) for e in exprs)
        prod = A.reduce(a * b - c * d)
        C = A.canonical()
        conv = C.reduce(C.convert(prod, A))
        out = [prod, A.reduce(a ** 3), A.diff(prod, q1), A.diff(prod, p),
               A.coefficient(prod, p), A.drop(prod, [p, tau]),
               A.reduce(A.substitute(prod, p, a)), A.integrate(prod, p),
               A.integrate_moments(prod, tau, moments), A.at(prod, {q1: 0, q2: 0, p: 0})]
        out = [A.to_expr(x) for x in out]
        cleared = C.reduce(C.clear_reciprocals(conv, C.reciprocal_degrees([conv])))
        return out + [C.to_expr(conv), C.to_expr(cleared), A.is_zero(prod), A.is_zero(prod - prod)]
    got = on_both(run)
    assert got["flint"] == got["sympy"]
    assert got["flint"][0] != 0 and got["flint"][-1] is True


def test_the_moments_are_the_quadrature_rule():
    """The FLINT backend takes the moments through the node polynomial (the integral of the
    remainder on division by it): on tau^m for m beyond the rule's degree it gives
    sum_k w_k tau_k^m, as the sympy backend's moments(m)."""
    from mpvi.analysis.modified import quadrature_moments
    from mpvi.methods.quadrature import gauss_legendre, gauss_lobatto
    tau = sp.Symbol("tau")
    for quad in (gauss_legendre(2), gauss_legendre(4), gauss_lobatto(4)):
        moments = quadrature_moments(quad)
        with ring_backend("flint"):
            A = Algebra([tau], [q], [tau])
            for m in range(0, 14):
                got = A.number(A.integrate_moments(A.coerce(tau ** m), tau, moments))
                exact = sum(w * x ** m for w, x in zip(quad.weights, quad.nodes))
                assert sp.nsimplify(sp.N(exact, 60) - got, tolerance=1e-50) == 0, (quad.name, m)
                assert got == sp.Rational(moments(m).numerator, moments(m).denominator)


def test_an_element_of_another_algebra_is_refused():
    with ring_backend("flint"):
        A, B = Algebra([sp.sin(q)], [q]), Algebra([sp.sin(q)], [q])
        with pytest.raises(ValueError, match="another derivation"):
            A.coerce(B.coerce(sp.sin(q)))


def test_a_vanishing_combination_is_decided_without_the_canonical_algebra():
    """(1/D) D - 1 with D = 2 - cos(q1 - q2)^2: zero modulo the algebra's own relations,
    decided without expanding the angles (the canonical algebra is not built)."""
    for backend in ("flint", "sympy"):
        with ring_backend(backend):
            A = Algebra([1 / (2 - sp.cos(q1 - q2) ** 2), sp.sin(q1 - q2)], [q1, q2])
            e = (A.coerce(sp.cos(q1 - q2) ** 2 / (2 - sp.cos(q1 - q2) ** 2))
                 - A.coerce(2 / (2 - sp.cos(q1 - q2) ** 2)) + 1)
            assert e and A.is_zero(e) is True
            assert A._canonical is None
            # sin(q1 - q2) against sin q1 cos q2 - cos q1 sin q2 needs the canonical form
            B = Algebra([sp.sin(q1 - q2), sp.sin(q1), sp.cos(q2), sp.cos(q1), sp.sin(q2)],
                        [q1, q2])
            f = B.coerce(sp.sin(q1 - q2) - sp.sin(q1) * sp.cos(q2) + sp.cos(q1) * sp.sin(q2))
            assert B.is_zero(f) is True and B._canonical is not None


# ----- derivations on both backends -------------------------------------------------------

@pytest.mark.parametrize("method, params, order", [
    ("midpoint", {}, 6), ("simpson", {}, 6), ("lobatto", {"points": 4}, 6), ("rk4", {}, 5),
    ("mutze", {"g": "1/3"}, 4), ("mutze_variation", {"nodes": 3}, 3), ("newmark_family", {}, 3),
    ("hermite_galerkin", {"nodes": 3}, 5), ("taylor", {"degree": 3}, 4),
    ("implicit_midpoint", {}, 4), ("gbs", {"levels": 2}, 5)])
def test_the_pendulums_modified_equation_is_the_same_on_both_backends(method, params, order):
    got = on_both(lambda: list(modified_equation(method, pendulum(), order, **params).terms))
    assert got["flint"] == got["sympy"]


@pytest.mark.parametrize("system, method, order", [
    (pendulum, "simpson", 6), (pendulum, "lobatto", 6), (henon_heiles, "midpoint", 4),
    (henon_heiles, "simpson", 4), (position_mass, "midpoint", 4), (double_pendulum, "midpoint", 2)])
def test_the_modified_hamiltonian_is_the_same_on_both_backends(system, method, order):
    """H~ and its modified equation, term by term (the same sympy expressions)."""
    params = {"points": 4} if method == "lobatto" else {}

    def run():
        mh = modified_hamiltonian(method, system(), order, **params)
        return list(mh.terms), list(mh.equation.terms)
    got = on_both(run)
    assert got["flint"] == got["sympy"]
    assert got["flint"][0][-1] != 0 or order % 2


@pytest.mark.slow
def test_simpsons_double_pendulum_hamiltonian_is_the_same_on_both_backends():
    """Simpson's H~ through h^2 on the double pendulum (16 s on sympy's ring, 0.7 on FLINT)."""
    got = on_both(lambda: list(modified_hamiltonian("simpson", double_pendulum(), 2).terms))
    assert got["flint"] == got["sympy"]


# ----- derivations kept between calls -----------------------------------------------------

@pytest.mark.parametrize("system, method, params, orders", [
    (pendulum, "simpson", {}, (3, 8, 5)), (pendulum, "lobatto", {"points": 4}, (2, 9, 6)),
    (pendulum, "mutze", {}, (2, 6, 4)), (pendulum, "rk4", {}, (2, 6)),
    (position_mass, "midpoint", {}, (2, 4, 3)), (double_pendulum, "midpoint", {}, (1, 3, 2))])
def test_a_derivation_resumed_to_another_order_is_the_one_from_scratch(system, method, params,
                                                                       orders):
    """The derivation kept by the process is resumed to a higher order (and read to a
    lower one): each result equals, term by term, a derivation from scratch."""
    fresh = {}
    for o in orders:
        forget_derivations()
        fresh[o] = list(modified_equation(method, system(), o, **params).terms)
    forget_derivations()
    for o in orders:
        assert list(modified_equation(method, system(), o, **params).terms) == fresh[o], o
    forget_derivations()


def test_a_higher_order_after_a_lower_one_costs_the_difference(monkeypatch):
    """Through h^16 after h^12, Simpson's chord iteration resumes from the sweep h^12
    stopped at: fewer residual evaluations than from scratch, and the h^12 solution itself
    is never redone."""
    calls = []
    rows = modified._Chord._rows
    monkeypatch.setattr(modified._Chord, "_rows", lambda self, *a: calls.append(1) or rows(self, *a))
    forget_derivations()
    modified_equation("simpson", pendulum(), 16)
    scratch = len(calls)
    forget_derivations()
    del calls[:]
    modified_equation("simpson", pendulum(), 12)
    low = len(calls)
    del calls[:]
    modified_equation("simpson", pendulum(), 16)
    more = len(calls)
    del calls[:]
    modified_equation("simpson", pendulum(), 12)
    assert calls == [] and 0 < more < scratch - low // 2, (scratch, low, more)
    forget_derivations()


def test_a_modified_hamiltonian_makes_no_expression_of_its_equation():
    """The field's terms stay in the ring (made sympy on access only); H~'s are made once."""
    forget_derivations()
    mh = modified_hamiltonian("midpoint", double_pendulum(), 2)
    der = mh.equation.derivation
    assert not any(kind == "f" for kind, _ in der.exprs)
    first = mh.terms[2]
    assert mh.terms[2] is first and ("H", 2) in der.exprs
    assert len(mh.equation.terms[1]) == 4 and ("f", 1) in der.exprs
    forget_derivations()


def test_equal_systems_share_a_derivation_and_different_ones_do_not():
    forget_derivations()
    a = modified_equation("midpoint", pendulum(), 2)
    b = modified_equation("midpoint", pendulum(), 4)
    other = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -2 * sp.cos(q), {}, G30)
    c = modified_equation("midpoint", other, 2)
    assert a.derivation is b.derivation and c.derivation is not a.derivation
    assert list(c.terms) != list(a.terms)
    with ring_backend("sympy"):
        assert modified_equation("midpoint", pendulum(), 2).derivation is not a.derivation
    forget_derivations()


# ----- M(q) = 1/(1 + q^2): the potentials in the ring -----------------------------------

def test_a_potential_of_higher_degree_than_h_is_found_in_the_ring():
    """The midpoint VI's h^2 term on M(q) = 1/(1 + q^2): its q-part at p = 0 has a
    numerator of degree 13 in q, beyond the ansatz bounded by H's degree (2 + 1); the
    bound from the numerators finds it."""
    forget_derivations()
    me = modified_equation("midpoint", position_mass(), 2)
    alg, (p,) = me.algebra, me.model.p
    C = alg.canonical()
    term = [C.reduce(C.convert(e, alg)) for e in modified._qp_ring_terms(me)[2]]
    g = [-C.drop(term[1], [p])]
    assert modified._gradient_potential(g, [q], C, {q: 2}) is None
    c = modified._gradient_potential(g, [q], C, None)
    assert c is not None and C.is_zero(C.diff(c, q) - g[0]) is True
    forget_derivations()


def test_the_modified_hamiltonian_of_a_position_dependent_mass():
    """M(q) = 1/(1 + q^2): the midpoint VI's H~ through h^4 (which sympy's integrate did not
    reach in 9.5 minutes) is rational in q and generates its modified field at 40 digits."""
    forget_derivations()
    mh = modified_hamiltonian("midpoint", position_mass(), 4)
    me, (p,) = mh.equation, mh.p
    assert mh.terms[4] != 0 and not any(t.has(sp.Integral, sp.atan, sp.log) for t in mh.terms)
    fields = [[me.algebra.to_expr(e) for e in row] for row in modified._qp_ring_terms(me)]
    for Hk, f in zip(mh.terms, fields):
        for point in [(sp.Rational(1, 3), sp.Rational(-2, 7)), (sp.Rational(3, 2), sp.Rational(1, 5))]:
            sub = dict(zip((q, p), point))
            for a, b in zip([sp.diff(Hk, p), -sp.diff(Hk, q)], f):
                assert abs(sp.N((a - b).xreplace(sub), 40)) < sp.Float(10) ** -35
    forget_derivations()


def test_the_cost_benchmark_prints_the_ratio_of_each_derivation():
    """benchmarks/modified_cost.py times every derivation on both rings in one run and
    reports sympy's seconds over FLINT's beside FLINT's."""
    import json
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "modified_cost.py"
    out = subprocess.run([sys.executable, str(script), "--json", "--orders", "4", "6",
                          "--methods", "midpoint", "--dof", "1", "--mq-order", "1"],
                         capture_output=True, text=True, timeout=600, check=True).stdout
    report = json.loads(out)
    rows = report["order"] + report["dof"]
    assert report["backends"] == ["flint", "sympy"] and len(rows) == 5
    for r in rows:
        assert r["equation_s"] > 0 and r["equation_s_sympy"] > 0
        assert r["ratio_sympy"] == pytest.approx(r["equation_s_sympy"] / r["equation_s"])
    text = subprocess.run([sys.executable, str(script), "--orders", "4", "--methods",
                           "midpoint", "--dof", "1", "--mq-order", "0"], capture_output=True,
                          text=True, timeout=600, check=True).stdout
    assert "sympy's / FLINT's in brackets" in text and "x)" in text


def test_the_leading_jacobians_determinant_and_adjugate_are_computed_in_the_ring():
    """The chord iteration's det(A) and adj(A) (A: 2 to 5 square, entries polynomials in
    sines, cosines and p) are sympy's Berkowitz results, expanded, term by term."""
    p = sp.Symbol("p")
    rng = random.Random(7)
    atoms = [sp.sin(q1), sp.cos(q1), sp.cos(q1 - q2), p]
    for n in (2, 3, 5):
        entries = [[_random_element(rng, atoms, terms=2) if rng.random() < 0.8 else 0
                    for _ in range(n)] for _ in range(n)]
        A = Algebra([e for row in entries for e in row], [q1, q2, p])
        det, adj = modified._det_adjugate([[A.coerce(e) for e in row] for row in entries], A)
        S = sp.Matrix(entries)
        assert sp.expand(A.to_expr(det)) == sp.expand(S.det(method="berkowitz")) != 0
        assert sp.Matrix([[sp.expand(A.to_expr(e)) for e in row] for row in adj]) == \
            S.adjugate(method="berkowitz").applyfunc(sp.expand)
