"""Numerics that must never return nonsense without a word (issue 21, items 7-10).

Newton's final residual against its bound, the divergence guards of the driver (state
growth, energy of a conservative system), periodic functions at absurd arguments (the
rk4 hang), storage that cannot fit, a system stepped in a context it was not built in,
the caller's gmpy2 and mpmath contexts left as they were, and method parameters and
Newton options validated like every other number.
"""
from fractions import Fraction

import gmpy2
import mpmath
import pytest
import sympy as sp

import mpvi
from conftest import time_limit
from mpvi import IntegrationError, LagrangianSystem, NewtonError, PrecisionError, Problem, solve
from mpvi.numbers.newton import solve_info

Q = sp.Symbol("q")


def quartic(ctx):
    """V = q^4/4 - cos q: a trigonometric term, and a force that makes an explicit method
    with a huge step diverge doubly exponentially."""
    return LagrangianSystem("quartic", [Q], sp.Matrix([[1]]), Q ** 4 / 4 - sp.cos(Q), {}, ctx)


# ----- Newton: the final residual is compared with its bound ------------------------------

def test_newton_refuses_a_converged_update_whose_residual_misses_the_bound():
    """F evaluated with and without its Jacobian disagree by 1/2 (an inconsistent
    residual, as a wrong kernel would give): the update converges at once, the residual
    at the returned point is 1/2 -- accepted before, refused now, naming both numbers."""
    ctx = mpvi.GMPContext(64)

    def fun(x, jacobian):
        r = [x[0] - 1]
        return (r, [[ctx.one]]) if jacobian else [r[0] + ctx.one / 2]
    with pytest.raises(NewtonError, match=r"residual 5\.000e-01 exceeds its bound"):
        solve_info(fun, [ctx.num(1)], ctx)
    # the consistent equation converges, with a residual below the bound
    x, it, res = solve_info(lambda x, j: ([x[0] ** 2 - 2], [[2 * x[0]]]) if j else [x[0] ** 2 - 2],
                            [ctx.num(1)], ctx)
    assert res <= 4 * ctx.eps and abs(x[0] - ctx.sqrt(ctx.num(2))) <= 2 * ctx.eps


# ----- the divergence guards -----------------------------------------------------------------

@pytest.mark.parametrize("method", ["rk4", "gbs", "mutze", "simpson", "lobatto"])
def test_a_huge_step_stops_with_an_error_and_never_hangs(method):
    """h = 10^6 on the quartic with cos, past the up-front check: every method stops
    within a few steps with an IntegrationError (diverged, or a non-finite state where cos
    of an argument beyond 2^prec is nan) or a NewtonError (a "converged" update whose
    residual, 1e42, misses its bound) naming the step -- never a trajectory, never a hang
    in cos of a number with 10^k digits (before: rk4 ran for over 10 minutes; simpson and
    lobatto returned steps with residuals of 1e42).  (hermite_galerkin returns a bounded
    but meaningless trajectory here: only the up-front check refuses it, below.)"""
    ctx = mpvi.GMPContext(64)
    with time_limit(60):
        with pytest.raises((IntegrationError, NewtonError), match=r"step [0-9]"):
            solve(Problem(quartic(ctx), [1], v0=[0]), method, h="1e6", n=30,
                  check_stability=False)


@pytest.mark.parametrize("method", sorted(set(mpvi.METHODS) - {"newmark"}))
def test_a_huge_step_is_refused_up_front_by_default(method):
    ctx = mpvi.GMPContext(30)
    with pytest.raises(mpvi.StabilityError, match="Take"):
        solve(Problem(quartic(ctx), [1], v0=[0]), method, h="1e6", n=30)


def test_the_divergence_guard_holds_where_the_stability_check_cannot_see():
    """At q0 = 0 the linearization of V = q^4/4 vanishes (rho = 0): the up-front check
    passes any h, the guard catches the blow-up (float64: no 'math domain error')."""
    for ctx in (mpvi.GMPContext(64), mpvi.fp):
        S = LagrangianSystem("pure quartic", [Q], sp.Matrix([[1]]), Q ** 4 / 4 + (1 - sp.cos(Q)) ** 2,
                             {}, ctx)
        with time_limit(60), pytest.raises(IntegrationError, match="diverged|not finite"):
            solve(Problem(S, [0], v0=[1]), "rk4", h=1000, n=50)


def test_a_growing_solution_is_allowed_with_max_growth_none():
    """y' = y to t = 160 grows by e^160 ~ 3e69 > 1/eps at 64 digits: the guard stops it,
    max_growth=None integrates it, and the result is right to the precision."""
    ctx = mpvi.GMPContext(64)
    S = mpvi.FirstOrderSystem("growth", lambda t, y: y, 1, ctx)
    P = Problem(S, [1])
    with pytest.raises(IntegrationError, match="max_growth"):
        solve(P, "rk4", h="1/4", n=640)
    sol = solve(P, "rk4", h="1/4", n=640, max_growth=None)
    with ctx.active():                        # rk4 on y' = y: y_n = R(h)^n exactly
        h = ctx.num("1/4")
        R = 1 + h + h ** 2 / 2 + h ** 3 / 6 + h ** 4 / 24
        rel = abs(sol.q[-1][0] / R ** 640 - 1)
    assert rel < 1000 * ctx.eps
    with pytest.raises(ValueError, match="max_growth"):
        solve(P, "rk4", h="1/4", n=4, max_growth=1)


def test_the_energy_guard_leaves_a_good_run_alone():
    """A long, accurate run of a conservative system is not touched by the guards."""
    ctx = mpvi.GMPContext(30)
    S = LagrangianSystem("pendulum", [Q], sp.Matrix([[1]]), -sp.cos(Q), {}, ctx)
    sol = solve(Problem(S, [2], v0=[0]), "simpson", h="1/10", n=2000, saveat=500)
    assert sol.steps == 2000


def test_a_run_that_cannot_fit_in_memory_is_refused_up_front():
    ctx = mpvi.GMPContext(64)
    S = LagrangianSystem("pendulum", [Q], sp.Matrix([[1]]), -sp.cos(Q), {}, ctx)
    with time_limit(30), pytest.raises(mpvi.StorageError, match="saveat"):
        solve(Problem(S, [1], v0=[0]), "rk4", h="1/100", n=10 ** 9)


# ----- contexts ---------------------------------------------------------------------------------

def test_a_system_cannot_be_stepped_in_another_context():
    """A system built at 32 digits stepped at 64 would cap the run at 32 digits (before:
    a trajectory labelled 64 digits with relative error 1e-31); a gmp system in an mp
    context could not even be evaluated (before: KeyError 0)."""
    g32, g64, m64 = mpvi.GMPContext(32), mpvi.GMPContext(64), mpvi.MPContext(64)
    S32 = LagrangianSystem("pendulum", [Q], sp.Matrix([[1]]), -sp.cos(Q), {}, g32)
    for ctx in (g64, m64):
        with pytest.raises(PrecisionError, match="built in context gmp32.*stepped in context"):
            mpvi.get_method("simpson").prepare(S32, ctx.num("1/10"), ctx)
        with pytest.raises(PrecisionError, match="gmp32"):
            mpvi.one_step_matrix("rk4", S32, ctx.num("1/10"), ctx)


def _calls(ctx):
    """A tour of the public API in ``ctx``."""
    S = LagrangianSystem("pendulum", [Q], sp.Matrix([[1]]), -sp.cos(Q), {}, ctx)
    P = Problem(S, ["1/2"], v0=[0])
    sol = solve(P, "simpson", h="1/10", n=20)
    sol(ctx.num("1.05"))
    mpvi.relative_energy_error(S, sol)
    mpvi.symplecticity_defect("rk4", mpvi.LinearSystem([[1]], [[1]], ctx), ctx.num("1/10"), ctx)
    ctx.num("1/3"), ctx.sqrt(ctx.num(2)), ctx.pi, ctx.eps
    if ctx.is_mp:
        with ctx.workdps(ctx.dps + 10):
            ctx.num(1)
    sol.to_frame()
    return sol


def test_the_callers_gmpy2_and_mpmath_contexts_are_unchanged():
    """After any mpvi call but the creation of a context the thread's gmpy2 context is the
    caller's, at its precision (before: 53 -> 216 bits after a 64-digit run), and mpmath.mp
    is untouched: the user's own gmpy2.mpfr(1)/3 does not depend on whether mpvi ran.
    (Creating a gmp context sets the bare precision on purpose: test_trust.py.)"""
    contexts = (mpvi.GMPContext(64), mpvi.MPContext(40), mpvi.fp)
    g = mpvi.GMPContext(64)
    mine = gmpy2.context(precision=100)
    gmpy2.set_context(mine)
    try:
        before = gmpy2.mpfr(1) / 3
        mp_before = (mpmath.mp.prec, mpmath.mp.dps)
        for ctx in contexts:
            sol = _calls(ctx)
            assert gmpy2.get_context() is mine and mine.precision == 100
            assert (mpmath.mp.prec, mpmath.mp.dps) == mp_before
        assert gmpy2.mpfr(1) / 3 == before
        # and the results were computed at the run's precision, not the caller's
        s64 = _calls(g)
        assert s64.q[-1][0].precision == g.prec
        # a failing call restores it too
        with pytest.raises(ValueError):
            g.num("not a number")
        assert gmpy2.get_context() is mine
    finally:
        gmpy2.set_context(gmpy2.context())


# ----- parameters and options ----------------------------------------------------------

def test_method_parameters_and_newton_options_are_numbers_like_any_other():
    ctx = mpvi.GMPContext(64)
    S = LagrangianSystem("pendulum", [Q], sp.Matrix([[1]]), -sp.cos(Q), {}, ctx)
    P = Problem(S, ["1/2"], v0=[0])
    with pytest.raises(PrecisionError, match="beta = 0.1 is a float"):
        solve(P, "newmark_family", h="1/10", n=2, beta=0.1)
    solve(P, "newmark_family", h="1/10", n=2, beta="1/10")          # exact: accepted
    with pytest.raises(TypeError, match="newton options must be a dict"):
        solve(P, "simpson", h="1/10", n=2, newton="x")
    sol = solve(P, "simpson", h="1/10", n=2, newton={"scale": "2", "rtol": "1e-50"})
    assert sol.steps == 2
    with pytest.raises(PrecisionError, match="Newton option scale"):
        solve(P, "simpson", h="1/10", n=2, newton={"scale": 0.5})
    with pytest.raises(ValueError, match="Newton option rtol must be a positive number below 1"):
        solve(P, "simpson", h="1/10", n=2, newton={"rtol": "-1"})
    with pytest.raises(ValueError, match="Newton option scale"):
        solve(P, "simpson", h="1/10", n=2, newton={"scale": "abc"})
    assert Fraction(1, 4) == mpvi.get_method("newmark_family").params["beta"]


PUBLIC_MODULES = {          # the documented modules beyond mpvi.__all__ and their names
    "mpvi.analysis.modified": ["quadrature_moments", "forget_derivations"],
    "mpvi.analysis.jets": ["Algebra", "ring_backend", "Jet", "evaluate"],
    "mpvi.analysis.symbolic": ["oscillator_map", "amplification_matrix", "amplification_frequency",
                      "stable_intervals"],
    "mpvi.ground.expressions": ["parse_expression", "as_expression", "as_matrix"],
    "mpvi.model.singular": ["singularities", "Singularities"],
    "mpvi.model.callables": ["returned", "returned_vector", "check_literals", "float_literals",
                       "stop_flag"],
}


def _public_surface():
    """(module, name) of every public entry point: the functions and classes of
    mpvi.__all__ (contexts aside: they guard themselves), the documented names of
    PUBLIC_MODULES, and every public function and class of the mpvi.systems modules."""
    import importlib
    import inspect
    import pkgutil
    import mpvi.systems
    names = set()
    for name in mpvi.__all__:
        obj = getattr(mpvi, name)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ != "mpvi.numbers.context":
            names.add((obj.__module__, obj.__name__))
    names.update((m, n) for m, ns in PUBLIC_MODULES.items() for n in ns)
    for info in pkgutil.iter_modules(mpvi.systems.__path__, "mpvi.systems."):
        module = importlib.import_module(info.name)
        names.update((info.name, n) for n, obj in vars(module).items()
                     if not n.startswith("_") and getattr(obj, "__module__", None) == info.name
                     and (inspect.isfunction(obj) or inspect.isclass(obj)))
    return names


def _is_entry(obj):
    import inspect
    if inspect.isclass(obj):
        return bool(vars(obj).get("_guarded"))
    return getattr(obj, "mpvi_entry", False)


def test_the_public_surface_and_only_it_is_made_of_entry_points():
    """Every public entry point restores the caller's precision (mpvi.ground.precision.entry,
    entry_class), and nothing else is wrapped: code called from an entry point runs inside
    it without a wrapper of its own (no module-wide wrapping at import)."""
    import importlib
    import inspect
    import pkgutil
    surface = _public_surface()
    missing, extra = [], []
    for info in pkgutil.walk_packages(mpvi.__path__, "mpvi."):
        if info.name.startswith("mpvi.repro") or info.name in ("mpvi.ground.precision", "mpvi.numbers.context"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if inspect.isclass(obj) and issubclass(obj, (BaseException, tuple)):
                continue
            public = (info.name, name) in surface
            if public and not _is_entry(obj):
                missing.append(f"{info.name}.{name}")
            elif not public and _is_entry(obj):
                extra.append(f"{info.name}.{name}")
    assert not missing, f"public names that are not entry points: {missing}"
    assert not extra, f"internal names wrapped as entry points: {extra}"
    assert len(surface) > 60
