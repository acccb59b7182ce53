"""Every run certifies (issue 45, item 1): every registered method, every system kind,
every context kind.

Each enclosure is checked against an independent computation at 200 digits: a rerun of
the same problem with the same method and the same h (its exact value) in a 200-digit
context must lie inside the balls :func:`mpvi.certify` proves for the 64-digit run.
"""
from fractions import Fraction

import flint
import pytest
import sympy as sp

import mpvi
from mpvi.numbers.arb import ArbContext
from mpvi.numbers.arbref import real_roots
from mpvi.proof.certify import WrongStepError, certify
from mpvi.model.first_order import FirstOrderSystem
from mpvi.systems.linear import LinearSystem
from mpvi.engines.taylor import jorba_zou_order

REF = 200


def exact(x):
    """A gmpy2, mpmath or exact flint number as the Fraction it is (no rounding)."""
    if isinstance(x, (Fraction, int)):
        return Fraction(x)
    if isinstance(x, flint.arb):
        assert x.is_exact()
        man, exp = x.man_exp()
        return Fraction(int(man)) * Fraction(2) ** int(exp)
    if hasattr(x, "_mpf_"):                           # an mpf of any mpmath context
        sign, man, exp, _ = x._mpf_
        return Fraction(-int(man) if sign else int(man)) * Fraction(2) ** exp
    return Fraction(*x.as_integer_ratio())


def contains(ball, value, error=0):
    """Whether the ball contains the number exactly: |mid - value| <= rad in rationals
    (or, for a value known within ``error``, some number within ``error`` of it).  The
    midpoint and radius are read at a precision that holds all their bits."""
    caller = flint.ctx.prec
    flint.ctx.prec = 4096
    try:
        mid, rad = exact(ball.mid()), exact(ball.rad())
    finally:
        flint.ctx.prec = caller
    return abs(mid - exact(value)) <= rad + error


def pendulum(ctx):
    q = sp.Symbol("q")
    return mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)


LINEAR_ONLY = {"newmark", "simpson_v1"}
"""The registered methods that are closed forms for M q'' + K q = 0 only (checked: they
refuse the pendulum)."""

FIRST_ORDER = [m.name for m in mpvi.METHODS.values() if m.first_order]
NONLINEAR = [name for name in mpvi.METHODS if name not in LINEAR_ONLY]


def linear(ctx):
    return LinearSystem([[2, 0], [0, 1]], [[3, -1], [-1, 2]], ctx)


SYSTEMS = {                       # kind -> (the system in a context, q0, v0)
    "pendulum": (pendulum, ["1/2"], [0]),
    "linear": (linear, ["1/2", "-1/3"], [0, "1/5"]),
}


def run_params(method, ctx):
    """The method's parameters that make the 200-digit rerun the same method: adaptive
    Taylor at the run's tolerance and degree (the default tol is the context's eps)."""
    if method != "taylor":
        return {}
    return {"tol": exact(ctx.eps), "degree": jorba_zou_order(ctx.eps, ctx)}


_RERUNS = {}


def posed(given, used):
    """The input the certificate encloses (the problem as posed, issue 45 item 2): the
    exact value the user wrote (a ``p/q`` string, a Fraction, an int) where there is one,
    else the run's rounded number, as an exact Fraction."""
    return exact(used) if given is None else Fraction(str(given))


def initial(sol):
    """The initial data the certificate encloses, as exact Fractions."""
    given = sol.problem.posed
    v0 = sol.problem.v0
    return ([posed(g, x) for g, x in zip(given["q0"] or [None] * len(v0), sol.problem.q0)],
            None if v0 is None else [posed(g, x) for g, x in
                                     zip(given["v0"] or [None] * len(v0), v0)])


def step(sol):
    """The step the certificate encloses, as an exact Fraction."""
    return posed((sol.posed or {}).get("h"), sol.h)


def rerun_of(kind, method, sol, params):
    """The 200-digit rerun of the same problem (the run's h and initial data, exactly),
    method and h (cached: the gmp and the mp run of one problem have the same numbers)."""
    q0, v0 = initial(sol)
    key = (kind, method, step(sol), tuple(q0), tuple(v0))
    if key not in _RERUNS:
        make = SYSTEMS[kind][0]
        _RERUNS[key] = mpvi.solve(mpvi.Problem(make(mpvi.GMPContext(REF)), q0, v0=v0), method,
                                  h=step(sol), n=sol.steps, **params)
    return _RERUNS[key]


def assert_encloses_rerun(sol, cert, rerun):
    """The certificate is complete, proves >= 40 digits everywhere, and every enclosure
    holds the 200-digit rerun's state."""
    assert cert.complete, cert
    assert min(cert.min_digits) >= 40, cert
    ys = None if rerun.y is None else rerun.y
    assert len(rerun.q) == len(cert.q)
    for i in range(len(cert.q)):
        for ball, value in zip(cert.q[i], rerun.q[i]):
            assert contains(ball, value), (sol.method, i, ball, value)
        if ys is not None:
            for ball, value in zip(cert.y[i], ys[i]):
                assert contains(ball, value), (sol.method, i, ball, value)


# ----- algebraic quadrature nodes (CRootOf) -----------------------------------------------

@pytest.mark.parametrize("k", [3, 4, 8])
def test_legendre_roots_enclose_their_200_digit_values(k):
    x = sp.Symbol("x")
    P = sp.legendre(k, x)
    A = ArbContext(64)
    with A.active():
        for i in range(k):
            root = sp.CRootOf(P, i)
            ball = A.num(root)
            assert ball.rad() < flint.arb(2) ** (10 - A.prec)      # at the working precision
            value, error = Fraction(str(sp.N(root, REF))), Fraction(1, 10 ** (REF - 2))
            assert contains(ball, value, error), (k, i)
            # a node and a power of it, through the same enclosure
            assert contains(A.num((root + 1) / 2), (value + 1) / 2, error)
            assert contains(A.num(root ** 3), value ** 3, 3 * error)


def test_real_roots_are_ascending_with_multiplicity_and_a_complex_root_is_refused():
    with ArbContext(30).active():
        # (x - 1/3)^2 (x^2 - 2) (x^2 + 1): -sqrt2, 1/3, 1/3, sqrt2
        x = sp.Symbol("x")
        coeffs = sp.Poly(sp.expand((3 * x - 1) ** 2 * (x ** 2 - 2) * (x ** 2 + 1)), x).all_coeffs()
        roots = real_roots(coeffs, "test")
        assert len(roots) == 4
        assert roots[0].overlaps(-flint.arb(2).sqrt()) and roots[3].overlaps(flint.arb(2).sqrt())
        assert roots[0] < 0 < roots[1] < 1 < roots[3]
        assert contains(roots[1], Fraction(1, 3)) and contains(roots[2], Fraction(1, 3))
        with pytest.raises(TypeError, match="not real"):
            ArbContext(30).num(sp.CRootOf(x ** 3 - 2, 1))


# ----- every registered method, every system kind, every context kind -------------------------

def test_the_linear_only_methods_refuse_the_pendulum():
    G = mpvi.GMPContext(30)
    for method in LINEAR_ONLY:
        with pytest.raises(TypeError, match="LinearSystem"):
            mpvi.solve(mpvi.Problem(pendulum(G), ["1/2"], v0=[0]), method, h="1/10", n=2)


@pytest.mark.parametrize("context", ["gmp", "mp"])
@pytest.mark.parametrize("method, kind", [(m, "pendulum") for m in NONLINEAR] +
                         [(m, "linear") for m in mpvi.METHODS])
def test_every_method_certifies_every_system_kind_in_every_context(method, kind, context):
    """Hermite and Mutze variants among them: quadrature nodes that are algebraic numbers
    (CRootOf), enclosed by root isolation; gbs with its rounding allowance derived; the
    adaptive taylor (default tol in the mp run) along its own substeps."""
    ctx = (mpvi.GMPContext if context == "gmp" else mpvi.MPContext)(64)
    make, q0, v0 = SYSTEMS[kind]
    params = run_params(method, ctx) if context == "gmp" else {}
    sol = mpvi.solve(mpvi.Problem(make(ctx), q0, v0=v0), method, h="1/10", n=20, **params)
    cert = certify(sol)
    assert_encloses_rerun(sol, cert, rerun_of(kind, method, sol, run_params(method, ctx)))


def field_expressions(ctx):
    return FirstOrderSystem.from_expressions(
        "forced van der Pol", ["x", "y"], ["y", "mu*(1 - x**2)*y - x + sin(t)/4"], ctx,
        params={"mu": "1/2"})


def field_callable(ctx):
    def rhs(t, y, ctx):
        return [y[1], ctx.num("1/2") * (1 - y[0] ** 2) * y[1] - y[0] + ctx.sin(t) / 4]
    return FirstOrderSystem("forced van der Pol", rhs, 2, ctx)


@pytest.mark.parametrize("given", [field_expressions, field_callable])
@pytest.mark.parametrize("method", FIRST_ORDER)
def test_a_first_order_system_certifies(method, given):
    sol = mpvi.solve(mpvi.Problem(given(mpvi.GMPContext(64)), ["1/2", "-1/3"]), method,
                     h="1/10", n=20)
    cert = certify(sol)
    assert cert.y[0] is None
    rerun = mpvi.solve(mpvi.Problem(field_expressions(mpvi.GMPContext(REF)), initial(sol)[0]),
                       method, h=step(sol), n=20)
    assert_encloses_rerun(sol, cert, rerun)


def test_a_first_order_system_of_the_runs_numbers_is_refused_with_the_cause():
    G = mpvi.GMPContext(30)
    half = G.num("1/2")

    def rhs(t, y):                  # closes over a number of the run's context
        return [y[1], -half * y[0]]
    sol = mpvi.solve(mpvi.Problem(FirstOrderSystem("oscillator", rhs, 2, G), ["1/2", 0]),
                     "rk4", h="1/10", n=2)
    with pytest.raises(ValueError, match=r"rhs\(t, y, ctx\)|from_expressions"):
        certify(sol)


def test_adaptive_taylor_walks_the_runs_own_substeps():
    G = mpvi.GMPContext(64)
    sol = mpvi.solve(mpvi.Problem(pendulum(G), ["1/2"], v0=[0]), "taylor", h="1/2", n=8)
    assert sol.stats["substeps"] > 8                       # several substeps per step
    cert = certify(sol)
    params = run_params("taylor", G)
    rerun = mpvi.solve(mpvi.Problem(pendulum(mpvi.GMPContext(REF)), ["1/2"], v0=[0]),
                       "taylor", h=step(sol), n=8, **params)
    assert_encloses_rerun(sol, cert, rerun)


def test_a_wrong_gbs_step_is_still_refused():
    # gbs's allowance is its own rounding at the run's precision (about 1e-60 here), not
    # a licence: a state moved by 1e-50 is a wrong step
    G = mpvi.GMPContext(64)
    sol = mpvi.solve(mpvi.Problem(pendulum(G), ["1/2"], v0=[0]), "gbs", h="1/10", n=12)
    with G.active():
        sol.q[7] = sol.q[7] + G.num("1e-50")
    with pytest.raises(WrongStepError, match=r"step 6 \(node 7\)") as info:
        certify(sol)
    assert info.value.step == 6


def test_the_modes_of_a_linear_system_on_balls_enclose_the_200_digit_ones():
    # ArbContext._eigh: Rump's verified eigenpairs (what modes() and omega_max() need)
    A = ArbContext(64)
    with A.active():
        omega, V = linear(A).modes()
        assert all(w.rad() < flint.arb(2) ** (20 - A.prec) for w in omega)
    w_ref, V_ref = linear(mpvi.GMPContext(REF)).modes()
    error = Fraction(1, 10 ** (REF - 5))
    for k in range(2):
        assert contains(omega[k], w_ref[k], error)
        column = [V[i, k] for i in range(2)]
        ref = [exact(V_ref[i, k]) for i in range(2)]
        sign = 1 if contains(column[0], ref[0], error) else -1       # an eigenvector's sign is free
        assert all(contains(b, sign * r, error) for b, r in zip(column, ref)), k


def test_the_reduced_top_of_top2025_certifies_through_its_expressions():
    # reduced_top is given as expressions whose parameters are the run's numbers: certify
    # takes them exactly onto balls, and the rerun at 200 digits lifts them (the same map)
    from mpvi.systems.lagrange_top import table3_top
    G, R = mpvi.GMPContext(64), mpvi.GMPContext(REF)
    with G.active():
        top = table3_top(G)
        system, y0 = top.reduced(), top.reduced_state0()
    sol = mpvi.solve(mpvi.Problem(system, y0), "rk4", h="1/200", n=20)
    cert = certify(sol)
    with R.active():
        lifted = {k: R.lift(v) for k, v in system.parameters.items()}
        twin = mpvi.Problem(system.with_context(R, params=lifted), [R.lift(x) for x in y0])
    rerun = mpvi.solve(twin, "rk4", h=step(sol), n=20)
    assert_encloses_rerun(sol, cert, rerun)


def test_a_first_order_system_from_expressions_refuses_bad_input_naming_it():
    G = mpvi.GMPContext(30)
    with pytest.raises(ValueError, match="from the time t"):
        FirstOrderSystem.from_expressions("s", ["t", "y"], ["y", "-t"], G)
    with pytest.raises(ValueError, match="unknown name 'z'"):
        FirstOrderSystem.from_expressions("s", ["x", "y"], ["y", "-x*z"], G)
    with pytest.raises(ValueError, match="1 components of the field for 2 variables"):
        FirstOrderSystem.from_expressions("s", ["x", "y"], ["y"], G)
    with pytest.raises(ValueError, match="dunder"):
        FirstOrderSystem.from_expressions("s", ["x", "y"], ["y", "__import__(1)"], G)
    with pytest.raises(ValueError, match="not a name"):
        FirstOrderSystem.from_expressions("s", ["x y", "y"], ["y", "-x"], G)
    system = FirstOrderSystem.from_expressions("s", ["x", "y"], ["y", "-k*x"], G,
                                               params={"k": "1/3"})
    with pytest.raises(ValueError, match="not parameters"):
        system.with_context(G, params={sp.Symbol("c"): 1})
