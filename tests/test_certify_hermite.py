"""The hermite reproductions' certify hooks (issue 45, item 3) against independent
computations: each hook family's enclosures hold a 200-digit mpmath recomputation, exact
values or closed forms, and the exact decisions of printed formulas say match and
misprint where they must.

Families: the exact formulas of Secs. 4.1-4.2 and Fig. 1 (:mod:`mpvi_papers.hermite._hermite_exact`),
the certified runs with energies on balls (:mod:`mpvi_papers.hermite._hermite_certified`, the
double well of Figs. 3-4), the exact dn solution of Fig. 5 on Arb's theta functions, and
the symplecticity defect from the step's Jacobian on dual balls (Sec. 4.2).
"""
import json
from fractions import Fraction
from pathlib import Path

import mpmath
import sympy as sp
from flint import arb, fmpq

from mpvi import MPContext, GMPContext, solve
from mpvi.numbers.arb import ArbContext
from mpvi.numbers.arbref import arb_precision, exact_rational
from mpvi.repro.published import PublishedValue, proof, parse_formula
from mpvi_papers.hermite import _hermite_exact as X

REF = 200
RESULTS = Path(__file__).resolve().parents[1] / "figures" / "hermite"


def reproduced(rid, key):
    """A formula the committed run of ``rid`` recorded (read by mpvi's closed grammar),
    instead of deriving it again with sympy (slow): the checks below test it."""
    values = json.loads((RESULTS / f"{rid}.json").read_text())["values"]
    return parse_formula(values[key], key)


def matrix(name):
    """A(z) of ``name`` as recorded: [[A11, A12], [A21, A22]] (sympy)."""
    return [[reproduced("hermite_stability", f"{name} A{i}{j}") for j in (1, 2)] for i in (1, 2)]


def contains(ball, value):
    """Whether the ball contains the mpmath number ``value`` (given to REF digits): the
    distance of its midpoint is within its radius plus 10^-(REF - 10) max(1, |value|)."""
    mid = mpmath.mpf(ball.mid().str(REF + 20, radius=False))
    rad = mpmath.mpf(ball.rad().str(20, radius=False))
    return abs(mid - value) <= rad + max(1, abs(value)) * mpmath.mpf(10) ** (10 - REF)


# ----- exact formulas ---------------------------------------------------------------------------

def test_stability_limits_are_the_closed_forms():
    """The stable set of the one-step variational method found by root isolation is
    (0, sqrt(28/3)) and (sqrt(10), sqrt(42)) (closed forms, 200 digits), the Galerkin
    method's (0, sqrt(10)), (sqrt(12), sqrt(60)); the printed limits are proven equal."""
    mpmath.mp.dps = REF
    with arb_precision(REF + 20):
        for name, want in (("hermite_variational", ["28/3", "10", "10", "42"]),
                           ("hermite_galerkin", ["10", "12", "12", "60"])):
            A = matrix(name)
            F = [[X.ratfunc(A[i][j], "z") for j in (0, 1)] for i in (0, 1)]
            stable = X.stable_set(X._add(F[0][0], F[1][1]))
            ends = [stable[0][1], stable[1][0], stable[1][1]]
            assert stable[0][0] is None and len(stable) == 2
            for end, w in zip(ends, [want[0], want[1], want[3]]):
                assert contains(end[0], mpmath.sqrt(mpmath.mpf(Fraction(w).numerator)
                                                    / Fraction(w).denominator))
                assert X.decide_endpoint(sp.sqrt(sp.Rational(w)), end, REF) == 0
            # a limit off by one unit in the radicand is proven apart
            assert not X.decide_endpoint(sp.sqrt(sp.Rational(want[0]) + 1), ends[0], REF).contains(0)


def test_amplification_matrix_against_a_200_digit_step():
    """A(z) of both methods (the recorded exact rational functions) at z = 1/2 equals one
    step of the method on the harmonic oscillator (m = omega = 1, h = 1/2) computed at 200
    digits: A acts on (v, omega q) = (p, q), the order of :func:`mpvi.one_step_matrix`."""
    from mpvi import LinearSystem, one_step_matrix
    mpmath.mp.dps = REF
    ctx = MPContext(REF)
    oscillator = LinearSystem([[1]], [[1]], ctx)
    for name in ("hermite_variational", "hermite_galerkin"):
        A = matrix(name)
        M = one_step_matrix(name, oscillator, ctx.num(Fraction(1, 2)), ctx)
        with arb_precision(REF + 20):
            for i in (0, 1):
                for j in (0, 1):
                    num, den = X.ratfunc(A[i][j], "z")
                    value = arb(num(fmpq(1, 2)) / den(fmpq(1, 2)))
                    assert contains(value, mpmath.mpf(str(M[i, j]))), (name, i, j)


def test_printed_formulas_decided_exactly():
    """The printed A11 of the variational method is proven identical to the derived one,
    the printed A22 (the Galerkin numerator, ERRATA [E37]) and the printed lambda (17 z^4
    for 7 z^4) proven different; the Galerkin lambda+ identical though written with
    another radicand; det A = 1."""
    printed = X.printed_formulas("hermite_stability")
    A = matrix("hermite_variational")
    lams = [reproduced("hermite_stability", f"hermite_variational lambda{s}") for s in "+-"]
    with arb_precision(100):
        assert X.decide_rational(printed["hermite_variational A11"], A[0][0]) == 0
        d = X.decide_rational(printed["hermite_variational A22"], A[1][1])
        assert d.is_finite() and not d.contains(0)
        assert not X.decide_radical(printed["hermite_variational lambda+"], lams[0], 80).contains(0)
        lg = [reproduced("hermite_stability", f"hermite_galerkin lambda{s}") for s in "+-"]
        F = [[X.ratfunc(e, "z") for e in row] for row in matrix("hermite_galerkin")]
        tr = X._add(F[0][0], F[1][1])
        det = X._add(X._mul(F[0][0], F[1][1]), X._mul(X._const(-1), X._mul(F[0][1], F[1][0])))
        assert X.rational_difference(det, X._const(1)) == 0
        assert all(X.is_eigenvalue(X.radical_form(lam, "z"), tr, det) for lam in lg)
        assert X.decide_radical(printed["hermite_galerkin lambda+"], lg[0], 80) == 0
        assert X.decide_radical(printed["hermite_galerkin lambda-"], lg[1], 80) == 0
        # the two eigenvalues differ: lambda+ is not lambda-
        assert not X.decide_radical(printed["hermite_galerkin lambda+"], lg[1], 80).contains(0)


def test_symbolic_proof_reads_the_difference():
    """published.proof of a symbolic value: an exact 0 is a match, a ball without 0 a
    misprint, a ball holding 0 decides nothing."""
    v = PublishedValue("hermite_stability", "k", "q", "z", "symbolic", "", "s", "w")
    assert proof(v, "0") == "proven match"
    assert proof(v, "[-0.218 +/- 1e-10]") == "proven misprint"
    assert proof(v, "[0 +/- 1e-30]") is None


def test_hermite_basis_printed_with_sums():
    """Eq. (28) as printed (sums, binomials) is read and decided: H_2,0 left equals N1;
    the right H_2,1 of eq. (27) lacks (-1)^j (ERRATA [E36]): proven different."""
    from mpvi.methods.quadrature import hermite_basis
    printed = X.printed_formulas("hermite_fig01")
    b = hermite_basis(2)
    with arb_precision(80):
        assert X.decide_rational(printed["n=2 left H_2,0"], b.poly(0)) == 0
        assert not X.decide_rational(printed["n=2 right H_2,1"], b.poly(3)).contains(0)


# ----- certified runs ----------------------------------------------------------------------------

def test_double_well_energy_error_holds_a_200_digit_rerun():
    """20 steps of each one-step method on the double well certified
    (:func:`mpvi_papers.hermite._hermite_certified.certified_run`) and the energy error |E_j - E_0|
    at every node enclosed; the same problem (the 64-digit run's q(0) and h as exact
    rationals) solved at 200 digits lies inside every ball."""
    from mpvi.systems.double_well import double_well_problem
    from mpvi_papers.hermite._hermite_certified import certified_run, velocities
    mpmath.mp.dps = REF
    ctx = GMPContext(64)
    problem = double_well_problem(ctx, "0.74", "0", "1")
    h = ctx.num("0.1")
    ref_ctx = MPContext(REF)
    q0, hq = exact_rational(problem.q0[0], "q0"), exact_rational(h, "h")
    ref_problem = double_well_problem(ref_ctx, f"{q0.numerator}/{q0.denominator}", "0", "1")
    for method in ("hermite_variational", "hermite_galerkin"):
        sol = solve(problem, method, h=h, n=20)
        with arb_precision(84):
            _, cert = certified_run(problem, method, h, 20, {"q": sol.q[:, 0], "v": sol.v[:, 0]},
                                    method)
            vs = velocities(sol, cert, arb(1))
            E = [v[0] ** 2 / 2 + (q[0] ** 4 - q[0] ** 2) / 2 for q, v in zip(cert.q, vs)]
            dE = [e - E[0] for e in E]
        ref = solve(ref_problem, method, h=ref_ctx.num(Fraction(hq)), n=20)
        for j in range(21):
            q, v = mpmath.mpf(ref.q[j][0]), mpmath.mpf(ref.v[j][0])
            e = v ** 2 / 2 + (q ** 4 - q ** 2) / 2
            e0 = mpmath.mpf(ref.q[0][0]) ** 4 / 2 - mpmath.mpf(ref.q[0][0]) ** 2 / 2
            assert contains(cert.q[j][0], q) and contains(dE[j], e - e0)
            assert min(cert.digits[j]) >= 40


def test_dn_solution_on_balls_against_mpmath():
    """Fig. 5's exact solution: dn, sn, cn on Arb's theta functions hold mpmath's ellipfun
    at 200 digits (k^2 = 2 - 1/0.74^2, u up to 7.4)."""
    from mpvi_papers.hermite.hermite_fig05 import jacobi_dn_sn_cn
    mpmath.mp.dps = REF
    with arb_precision(REF + 20):
        A = arb("0.74")
        m = 2 - 1 / (A * A)
        f = jacobi_dn_sn_cn(m)
        mm = 2 - 1 / mpmath.mpf("0.74") ** 2
        for u in ("0", "0.37", "3.7", "7.4"):
            dn, sn, cn = f(arb(u))
            for kind, b in (("dn", dn), ("sn", sn), ("cn", cn)):
                assert contains(b, mpmath.ellipfun(kind, mpmath.mpf(u), m=mm)), (kind, u)


def test_symplecticity_defect_against_central_differences():
    """The double-well defect ||Phi^T J Phi - J||_F at (0.74, 0), dt = 0.1, from the step's
    Jacobian on dual balls, holds the defect of central differences at 120 digits (their
    truncation ~1e-130) and is far from 0 (the paper: not symplectic)."""
    from mpvi.analysis.measures import matrix_defect, one_step_jacobian
    from mpvi.repro.certified import ball_norm
    from flint import arb_mat
    from mpvi_papers.hermite._hermite_certified import step_jacobian
    from mpvi_papers.hermite.hermite_symplecticity import double_well
    mpmath.mp.dps = 120
    ctx = MPContext(120)
    actx = ArbContext(84)
    with arb_precision(84):
        Phi = step_jacobian("hermite_galerkin", double_well(ctx), "0.1", ["0.74"], ["0"], actx)
        J = arb_mat([[0, 1], [-1, 0]])
        defect = ball_norm((Phi.transpose() * J * Phi - J).entries())
    fd = matrix_defect(one_step_jacobian("hermite_galerkin", double_well, ctx.num("0.1"),
                                         ["0.74"], ["0"], ctx), ctx)
    mid = mpmath.mpf(defect.mid().str(100, radius=False))
    assert abs(mid - mpmath.mpf(fd)) <= mpmath.mpf(defect.rad().str(10, radius=False)) + mpmath.mpf(10) ** -100
    assert defect > arb("1e-30")


def test_aeroelastic_linearization_eigenvalues_against_200_digits():
    """Fig. 9's "largest real part at U": the linearization A(U) on balls and Arb's
    verified eigenvalues (Rump) at U = 10 m/s hold mpvi's 200-digit eigenvalues."""
    from flint import acb_mat
    from mpvi.systems.aeroelastic import linear_eigenvalues, linear_matrix
    mpmath.mp.dps = REF
    actx = ArbContext(84)
    with arb_precision(84):
        actx.activate()
        A = linear_matrix(actx.num(10), actx)
        lam = acb_mat([[A[i, j] for j in range(4)] for i in range(4)]).eig(algorithm="rump")
    ref = linear_eigenvalues(10, MPContext(REF))
    for z in ref:
        assert sum(contains(l.real, mpmath.mpf(z.real)) and contains(l.imag, mpmath.mpf(z.imag))
                   for l in lam) == 1
