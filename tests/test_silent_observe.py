"""Issue 47, part 2: observables, analysis entry points, user callables and the run certify
reads return the right number or mpvi's own named error, never a silent one or a raw
traceback.  Each test failed on main before the issue (its reproducer is in it).

1. floats in an observable follow V's rule in every context; 2. what an observable accepts
(a real, finite sympy expression in t, q, v and the parameters); 3. relative_energy_error and
error_norms; 4. one_step_matrix, modified_equation and its siblings; 5. user callables get
copies; 6. boolean options and integer parameters; 7. certify checks the run it reads.
"""
import gmpy2
import numpy as np
import pytest
import sympy as sp

import mpvi
from mpvi import LagrangianSystem, PrecisionError, Problem, TIME, solve
from mpvi.proof.certify import RunMismatchError

q = sp.Symbol("q")
CONTEXTS = [mpvi.GMPContext(32), mpvi.MPContext(32), mpvi.FPContext()]


def pendulum(ctx):
    return LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)


def run(ctx, method="rk4", n=5):
    return solve(Problem(pendulum(ctx), ["1/2"], v0=[0]), method, h="1/10", n=n)


# ----- 1. floats in an observable: V's rule ------------------------------------------------------

@pytest.mark.parametrize("ctx", CONTEXTS[:2], ids=lambda c: c.name)
@pytest.mark.parametrize("make", [lambda v: sp.Float(0.1) * v, lambda v: sp.Float(1.0),
                                  lambda v: sp.Float(0.5) * v ** 2 - sp.cos(q)],
                         ids=["0.1*v", "1.0", "energy"])
def test_a_float_in_an_observable_is_refused_like_in_V(ctx, make):
    """mp: 0.1*v was off by 2.2e-18 with no word; gmp: TypeError from mpfr().  The same
    float in V is a PrecisionError: so is it in an observable."""
    sol = run(ctx)
    v = sol.system.velocity_symbols[0]
    with pytest.raises(PrecisionError, match="observable: float literal"):
        sol.observable(make(v))
    with pytest.raises(PrecisionError, match="float literal"):    # the rule of V
        LagrangianSystem("p", [q], sp.eye(1), sp.Float(1.0) * q ** 2, {}, ctx).with_context(ctx)
    assert sol.observable("0.1*_v0")[3] == sol.observable(v / 10)[3]  # text reads 0.1 exactly


def test_a_float_in_a_float64_observable_is_its_number():
    """float64: any sympy Float in an observable raised TypeError (float() of mpf's tuple)."""
    sol = run(mpvi.FPContext())
    v = sol.system.velocity_symbols[0]
    assert list(sol.observable(sp.Float(0.1) * v)) == list(sol.observable(v / 10))
    assert list(sol.observable(sp.Float(0.5) * v ** 2 - sp.cos(q))) == \
        list(sol.observable(v ** 2 / 2 - sp.cos(q)))
    assert list(sol.observable(sp.Float(1.0))) == [1.0] * len(sol.t)


# ----- 2. what an observable accepts -------------------------------------------------------------

BAD = {
    "Derivative(q, t)": (lambda: sp.Derivative(q, TIME), "partial derivative by t"),
    "Derivative(q**2, t)": (lambda: sp.Derivative(q ** 2 + TIME, TIME), "partial derivative"),
    "dict": (lambda: {q: 1}, "Dict, not an expression"),
    "set": (lambda: {q}, "not an expression"),
    "relation": (lambda: sp.Eq(q, 1), "not an expression"),
    "nan": (lambda: sp.nan, "nan is not a finite"),
    "nan*q": (lambda: sp.nan * q, "nan is not a finite"),
    "oo": (lambda: sp.oo * q, "oo is not a finite"),
    "-oo": (lambda: -sp.oo, "oo is not a finite"),
    "zoo": (lambda: sp.zoo, "zoo is not a finite"),
    "log(0)": (lambda: sp.log(0) + q, "zoo is not a finite"),
    "Sum": (lambda: sp.Sum(q ** sp.Symbol("k"), (sp.Symbol("k"), 0, 3)), "Sum"),
    "Integral": (lambda: sp.Integral(q * TIME, (TIME, 0, 1)), "Integral"),
    "sqrt(-1-q**2)": (lambda: sp.sqrt(-1 - q ** 2), "at t = "),
    "log(q-1)": (lambda: sp.log(q - 1), "at t = "),
    "pole at q0": (lambda: 1 / (q - sp.Rational(1, 2)), "at t = "),
    "gamma pole": (lambda: sp.gamma(q - sp.Rational(1, 2)), "at t = "),
    "complex": (lambda: sp.I * q, "complex"),
    "EulerGamma": (lambda: q + sp.EulerGamma, "cannot evaluate"),
}


@pytest.mark.parametrize("ctx", CONTEXTS, ids=lambda c: c.name)
@pytest.mark.parametrize("case", sorted(BAD))
def test_an_observable_that_is_not_real_and_finite_is_refused(ctx, case):
    """Derivative(q, t) returned zeros, {q: 1} and {q} arrays of dicts and sets,
    sqrt(-1 - q**2) nan; nan, oo, zoo, Sum, log(0) raised NameError or KeyError."""
    make, message = BAD[case]
    sol = run(ctx)
    with pytest.raises(ValueError, match=message):
        sol.observable(make())
    with pytest.raises(ValueError, match=message):            # in a list as alone
        sol.observable([q, make()])


@pytest.mark.parametrize("ctx", CONTEXTS, ids=lambda c: c.name)
def test_a_real_finite_observable_still_evaluates(ctx):
    sol = run(ctx)
    v = sol.system.velocity_symbols[0]
    assert list(sol.observable(sp.Derivative(sp.cos(q), q))) == list(sol.observable(-sp.sin(q)))
    assert list(sol.observable(sp.Derivative(TIME ** 2, TIME))) == list(2 * sol.t)
    assert sol.observable([q, v, sp.Piecewise((q, q > 0), (-q, True))]).shape == (6, 3)


# ----- 3. relative_energy_error, error_norms ------------------------------------------------------

@pytest.mark.parametrize("ctx", CONTEXTS, ids=lambda c: c.name)
def test_relative_energy_error_with_zero_initial_energy_is_refused(ctx):
    """E0 = 0 returned nan (0/0) then inf at every point without a word."""
    S = LagrangianSystem("well", [q], sp.eye(1), q ** 2 / 2, {}, ctx)
    sol = solve(Problem(S, [0], v0=[0]), "rk4", h="1/10", n=5)       # H = 0 exactly
    with pytest.raises(ValueError, match="initial energy H_0 is 0"):
        mpvi.relative_energy_error(S, sol)
    moving = solve(Problem(S, ["1/2"], v0=[0]), "rk4", h="1/10", n=5)
    assert mpvi.relative_energy_error(S, moving)[0] == 0


@pytest.mark.parametrize("ctx", CONTEXTS, ids=lambda c: c.name)
def test_error_norms_against_an_exact_solution_that_turns_nan_is_refused(ctx):
    """error_norms returned nan without a word when the exact solution turned nan."""
    S = pendulum(ctx)
    half = ctx.num("1/2")

    def exact(t):                                       # a closed form that leaves its domain
        return [half if t < ctx.num("3/10") else ctx.num("nan")], [ctx.zero]
    sol = solve(Problem(S, ["1/2"], v0=[0], exact=exact), "rk4", h="1/10", n=5)
    with pytest.raises(ValueError, match=r"exact solution is not finite at t = .*saved point 3"):
        mpvi.error_norms(sol)
    with pytest.raises(ValueError, match="saved point 3"):
        sol.error()


@pytest.mark.parametrize("ctx", CONTEXTS, ids=lambda c: c.name)
def test_sup_errors_against_a_nan_reference_is_refused(ctx):
    sol = run(ctx)
    ref_q = [list(x) for x in sol.q]
    ref_q[2] = [ctx.num("nan")]
    with pytest.raises(ValueError, match="saved point 2 is nan"):
        mpvi.sup_errors(sol, ref_q, sol.p)


# ----- 4. one_step_matrix, modified_equation and its siblings ------------------------------------

@pytest.mark.parametrize("V", [-sp.cos(q), q ** 2 / 2 + q, q ** 4],
                         ids=["pendulum", "affine", "quartic"])
@pytest.mark.parametrize("method", ["simpson", "rk4", "midpoint"])
def test_one_step_matrix_refuses_a_nonlinear_system(V, method):
    """one_step_matrix('simpson', pend, ...) returned a matrix for a nonlinear system."""
    ctx = mpvi.GMPContext(32)
    S = LagrangianSystem("nonlinear", [q], sp.eye(1), V, {}, ctx)
    with pytest.raises(ValueError, match="nonlinear is not linear.*one_step_jacobian"):
        mpvi.one_step_matrix(method, S, ctx.num("1/10"), ctx)
    with pytest.raises(ValueError, match="not linear"):
        mpvi.symplecticity_defect(method, S, ctx.num("1/10"), ctx)


def test_one_step_matrix_of_a_linear_lagrangian_system_is_the_linear_systems():
    ctx = mpvi.GMPContext(32)
    k = sp.Symbol("k")
    S = LagrangianSystem("spring", [q], sp.eye(1), k * q ** 2 / 2 + 7, {k: 1}, ctx)
    phi = mpvi.one_step_matrix("simpson", S, ctx.num("1/10"), ctx)
    ref = mpvi.one_step_matrix("simpson", mpvi.LinearSystem([[1]], [[1]], ctx), ctx.num("1/10"), ctx)
    assert ctx.norm_fro(phi - ref) < ctx.sqrt(ctx.eps)          # Newton converged vs closed form


@pytest.mark.parametrize("V", [sp.I * q ** 2, q ** 2 + sp.I * sp.cos(q)], ids=["I*q**2", "I*cos"])
def test_modified_equation_refuses_a_complex_potential(V):
    """modified_equation of V = I*q**2 returned complex terms."""
    S = LagrangianSystem("complex", [q], sp.eye(1), V, {}, mpvi.FPContext())
    with pytest.raises(ValueError, match="imaginary unit I"):
        mpvi.modified_equation("midpoint", S, 2)
    with pytest.raises(ValueError, match="imaginary unit I"):
        mpvi.modified_hamiltonian("midpoint", S, 2)


def test_modified_equation_of_a_piecewise_potential_is_a_named_error():
    """Piecewise in modified_equation: sympy AttributeError ('ExprCondPair' ... 'expand')."""
    S = LagrangianSystem("piecewise", [q], sp.eye(1),
                         sp.Piecewise((q ** 2, q > 0), (q ** 4, True)), {}, mpvi.GMPContext(32))
    with pytest.raises(mpvi.analysis.jets.UnsupportedExpression, match="Piecewise.*smooth"):
        mpvi.modified_equation("midpoint", S, 2)


@pytest.mark.parametrize("call, argument", [
    (lambda: mpvi.modified_equation("midpoint", 3, 2), "system must be"),
    (lambda: mpvi.modified_equation("midpoint", "pendulum", 2), "system must be"),
    (lambda: mpvi.modified_hamiltonian("midpoint", None, 2), "system must be"),
    (lambda: mpvi.modified_lagrangian("midpoint", 3, 2), "system must be"),
    (lambda: mpvi.check_hamiltonian(3), "check_hamiltonian: me must be a ModifiedEquation"),
    (lambda: mpvi.modified_frequency(3), "modified_frequency: me must be a ModifiedEquation"),
    (lambda: mpvi.modified_frequency(None), "me must be"),
], ids=["me-3", "me-str", "mh-None", "ml-3", "ch-3", "mf-3", "mf-None"])
def test_analysis_entry_points_name_a_wrong_argument(call, argument):
    """modified_equation(..., 3, 2), check_hamiltonian(3), modified_frequency(3):
    AttributeError."""
    with pytest.raises(TypeError, match=argument):
        call()


# ----- 6. boolean options, integer parameters ------------------------------------------------------

@pytest.mark.parametrize("option", ["certify", "check_stability"])
@pytest.mark.parametrize("value", ["no", "False", 0, 1, None, [], sp.true], ids=repr)
def test_a_boolean_option_takes_only_a_bool(option, value):
    """certify='no' certified (a truthy string taken as True)."""
    P = Problem(pendulum(mpvi.GMPContext(20)), ["1/2"], v0=[0])
    with pytest.raises(TypeError, match=f"{option} must be True or False, got"):
        solve(P, "rk4", h="1/10", n=3, **{option: value})


def test_numpy_bools_are_bools():
    P = Problem(pendulum(mpvi.GMPContext(20)), ["1/2"], v0=[0])
    sol = solve(P, "rk4", h="1/10", n=3, certify=np.bool_(False), check_stability=np.bool_(True))
    assert sol.certificate is None
    with pytest.raises(TypeError, match="angle_addition must be True or False, got 'no'"):
        mpvi.systems.pendulums.n_link_pendulum(mpvi.GMPContext(20), 2, angle_addition="no")
    with pytest.raises(TypeError, match="reuse must be True or False, got 1"):
        mpvi.certify(sol, reuse=1)


INTEGERS = [sp.Integer(2), gmpy2.mpz(2)]          # 2 and np.int64(2) were already integers


@pytest.mark.parametrize("two", INTEGERS, ids=lambda x: type(x).__name__)
def test_integers_of_every_integer_type_are_integers(two):
    """Gauss refused sp.Integer(2) and gmpy2.mpz(2) points while accepting 2."""
    P = Problem(pendulum(mpvi.GMPContext(20)), ["1/2"], v0=[0])
    ref = solve(P, "gauss", h="1/10", n=4, points=2)
    sol = solve(P, "gauss", h="1/10", n=two + 2, points=two, saveat=two)
    assert list(sol.q[-1]) == list(ref.q[-1]) and len(sol.t) == 3
    assert list(solve(P, "lobatto", h="1/10", n=2, points=two + 1).q[-1]) == \
        list(solve(P, "lobatto", h="1/10", n=2, points=3).q[-1])


@pytest.mark.parametrize("bad", [True, np.bool_(True), 2.0, sp.Float(2), "2", sp.Rational(3, 2)],
                         ids=repr)
def test_bools_and_non_integers_are_not_integers(bad):
    P = Problem(pendulum(mpvi.GMPContext(20)), ["1/2"], v0=[0])
    with pytest.raises(ValueError, match="must be an integer"):
        solve(P, "gauss", h="1/10", n=2, points=bad)


# ----- 7. certify checks the run it reads -----------------------------------------------------------

def _edit_t10(s):
    s.t[10] = s.t[10] + s.ctx.num("1/1000")


def _steps_29_stopped(s):
    s.steps, s.stopped = 29, "a callback"
    s.stats.pop("steps")


EDITS = {
    "t[10] moved": (_edit_t10, "t\\[10\\] = .* is not node 10"),
    "steps = 29": (lambda s: setattr(s, "steps", 29), "29 steps of 30 planned"),
    "steps = 29, stopped": (_steps_29_stopped, "t\\[30\\] = .* is outside the run"),
    "h changed": (lambda s: setattr(s, "h", s.ctx.num("1/5")), "is not the step it was posed"),
    "steps = '30'": (lambda s: setattr(s, "steps", "30"), "are not integers"),
    "steps = 30.0": (lambda s: setattr(s, "steps", 30.0), "are not integers"),
    "steps = -1": (lambda s: setattr(s, "steps", -1), "are not integers"),
    "q nan": (lambda s: s.q.__setitem__(5, [s.ctx.num("nan")]), "saved q\\[5\\] is not finite"),
    "saveat = 'x'": (lambda s: setattr(s, "saveat", "x"), "saveat = 'x' is neither"),
    "saveat = 0": (lambda s: setattr(s, "saveat", 0), "saveat = 0 is neither"),
    "stats '29'": (lambda s: s.stats.__setitem__("steps", "29"), "statistics count 29"),
}


@pytest.mark.parametrize("case", sorted(EDITS))
def test_certify_refuses_a_run_that_is_not_its_own(case):
    """certify(sol) after sol.t[10] was changed certified it; with sol.steps = 29 on 31
    points it reported "30/30"; a non-integer steps, a nan state: raw TypeError, IndexError,
    ValueError from FLINT."""
    edit, message = EDITS[case]
    sol = solve(Problem(pendulum(mpvi.GMPContext(20)), ["1/2"], v0=[0]), "rk4", h="1/10", n=30)
    edit(sol)
    with pytest.raises(RunMismatchError, match=message):
        mpvi.certify(sol)


# ----- 5. user callables get copies -------------------------------------------------------------------

@pytest.mark.parametrize("ctx", CONTEXTS[::2], ids=lambda c: c.name)
@pytest.mark.parametrize("method", ["rk4", "simpson", "midpoint"])
@pytest.mark.parametrize("saveat", [None, 2])
def test_a_callable_that_writes_into_its_state_changes_no_saved_state(ctx, method, saveat):
    """An event function writing q_.__setitem__(0, ctx.num(5)) changed every saved q, t0
    included; a callback likewise."""
    P = Problem(pendulum(ctx), ["1/2"], v0=[0])
    ref = solve(P, method, h="1/10", n=6, saveat=saveat)

    def event(t, q_, v_):
        q_.__setitem__(0, ctx.num(5))
        v_[0] = ctx.num(7)
        return ctx.one

    def callback(t, q_, y_):
        q_[0], y_[0] = ctx.num(5), ctx.num(9)
    for kwargs in ({"events": [event]}, {"callback": callback},
                   {"events": [mpvi.Event(event)], "callback": callback}):
        sol = solve(P, method, h="1/10", n=6, saveat=saveat, **kwargs)
        assert [list(x) for x in sol.q] == [list(x) for x in ref.q]
        assert [list(x) for x in sol.y] == [list(x) for x in ref.y]
        assert list(P.q0) == [ctx.num("1/2")]


@pytest.fixture(scope="module")
def pendulum_run():
    ctx = mpvi.GMPContext(20)
    S = pendulum(ctx)
    return ctx, S, solve(Problem(S, ["1/2"], v0=[0]), "rk4", h="1/10", n=3)


@pytest.mark.parametrize("call, message", [
    (lambda ctx, S, sol: mpvi.energy(3, sol), "energy: system must be"),
    (lambda ctx, S, sol: mpvi.energy(S, 3), "energy: sol must be an mpvi.Solution"),
    (lambda ctx, S, sol: mpvi.relative_energy_error(S, None), "sol must be an mpvi.Solution"),
    (lambda ctx, S, sol: mpvi.error_norms(3), "error_norms: sol must be"),
    (lambda ctx, S, sol: mpvi.sup_errors(3, [], []), "sup_errors: sol must be"),
    (lambda ctx, S, sol: mpvi.node_errors(3, sol.q, sol.q), "node_errors: ctx must be"),
    (lambda ctx, S, sol: mpvi.fit_order(3, [1, 2], [1, 2]), "fit_order: ctx must be"),
    (lambda ctx, S, sol: mpvi.one_step_matrix("rk4", mpvi.LinearSystem([[1]], [[1]], ctx),
                                              "1/10", 3), "one_step_matrix: ctx must be"),
    (lambda ctx, S, sol: mpvi.one_step_matrix("rk4", 3, "1/10", ctx), "system must be"),
    (lambda ctx, S, sol: mpvi.stability_scan("rk4", 3, ctx), "omega_h must be a sequence"),
], ids=["energy-system", "energy-sol", "ree-sol", "error_norms", "sup_errors", "node_errors",
        "fit_order", "osm-ctx", "osm-system", "stability_scan"])
def test_measures_name_a_wrong_argument(pendulum_run, call, message):
    """Each raised AttributeError ('int' object has no attribute 'energy', 'q', 'error',
    'ctx', 'norm2', 'name') or a bare 'int' object is not iterable."""
    with pytest.raises(TypeError, match=message):
        call(*pendulum_run)


def test_a_modified_hamiltonian_truncated_beyond_its_order_is_a_named_error():
    """mh.energy(3) of an order-2 derivation raised IndexError."""
    mh = mpvi.modified_hamiltonian("midpoint", pendulum(mpvi.GMPContext(20)), 2)
    with pytest.raises(ValueError, match="upto must be an integer from 0 to 2"):
        mh.energy(3)
    assert mh.energy(sp.Integer(2)) == mh.energy(2) == mh.energy()


@pytest.mark.parametrize("method", ["rk4", "gbs"])
def test_a_first_order_event_that_writes_into_its_state_changes_no_saved_state(method):
    ctx = mpvi.GMPContext(20)
    S = mpvi.FirstOrderSystem.from_expressions("osc", ["x", "y"], ["y", "-x"], ctx)
    P = Problem(S, [1, 0])
    ref = solve(P, method, h="1/10", n=5)

    def event(t, y, dy):
        y[0], dy[1] = ctx.num(5), ctx.num(6)
        return ctx.one

    def callback(t, y, _):
        y[1] = ctx.num(8)
    sol = solve(P, method, h="1/10", n=5, events=[event], callback=callback)
    assert [list(x) for x in sol.q] == [list(x) for x in ref.q]


def test_a_float_in_a_float64_potential_is_its_number():
    """In the float64 context a float literal in V is its value (the generated code's
    ``mpf`` of a sympy Float): the same run as with the exact ratio, not a TypeError."""
    import sympy as sp
    x = sp.Symbol("x")
    runs = []
    for half in (sp.Float(0.5), sp.Rational(1, 2)):
        system = mpvi.LagrangianSystem("osc", [x], sp.eye(1), half * x ** 2 + sp.Float("0.1") * x,
                                       {}, mpvi.fp)
        runs.append(mpvi.solve(mpvi.Problem(system, ["1"], v0=["0"]), "rk4", h="1/10", n=5).q)
    assert (runs[0] == runs[1]).all()


@pytest.mark.parametrize("option, value", [("free_symbols", "no"), ("evaluate", 1),
                                           ("tuples", None), ("max_depth", "3"),
                                           ("max_length", -1), ("max_digits", 2.0)])
def test_parse_expression_options_take_their_types(option, value):
    """free_symbols='no' read free symbols (a truthy string taken as True)."""
    with pytest.raises(TypeError, match=f"parse_expression: {option} must be"):
        mpvi.ground.expressions.parse_expression("q + 1", **{"free_symbols": True, option: value})
