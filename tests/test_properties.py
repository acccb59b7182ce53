"""Property-based tests of the library's front door (issue 21): random small systems, initial
data, step sizes, methods, method parameters and options through ``mpvi.Problem`` and
``mpvi.solve``, in every number context.

Whatever is drawn, a call may only

* return a :class:`mpvi.Solution` whose every time and state is a finite number of the
  problem's context, or
* raise one of mpvi's named errors (``PrecisionError``, ``NewtonError``,
  ``IntegrationError``, ``StabilityError``, ``SingularMatrixError``,
  ``NotPositiveDefiniteError``, ``StorageError``), or a ``ValueError``/``TypeError`` raised by a ``raise``
  statement of mpvi's own code with a message (not one escaping from numpy, sympy,
  mpmath, gmpy2 or a builtin),

within a time limit per call (a hang fails), and leave the caller's gmpy2 and mpmath
contexts as they were.  Sizes are bounded (1-2 degrees of freedom, at most 12 steps, at
most 32 digits) so that the suite stays short; the time limit is a SIGALRM, which
interrupts Python code between two operations of gmpy2 or mpmath (one operation at
absurd precision would not be interrupted; the sizes keep it from arising).

Profiles: ``ci`` (the default: derandomized, so a CI run is reproducible, 300 examples per
test) and ``explore`` (random, 2000 examples per test): ``MPVI_HYPOTHESIS=explore
python -m pytest tests/test_properties.py``.
"""
import functools
import os
import traceback
from fractions import Fraction
from pathlib import Path

import gmpy2
import mpmath
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mpvi
from conftest import time_limit

settings.register_profile("ci", max_examples=300, derandomize=True, deadline=None,
                          database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", max_examples=2000, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("MPVI_HYPOTHESIS", "ci"))

LIMIT_S = 60
"""Seconds one call may take (a hang fails the test).  The slowest calls drawn take about 2 s
(the first use of a method generates its kernels)."""
NAMED = (mpvi.PrecisionError, mpvi.NewtonError, mpvi.IntegrationError, mpvi.StabilityError,
         mpvi.SingularMatrixError, mpvi.NotPositiveDefiniteError, mpvi.StorageError)
MPVI_DIR = Path(mpvi.__file__).resolve().parent


def raised_by_mpvi(exc):
    """Whether ``exc`` was raised by a ``raise`` statement in mpvi's own code (its last
    traceback frame), as opposed to escaping from a library or a builtin called there."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return False
    last = frames[-1]
    return (Path(last.filename).resolve().is_relative_to(MPVI_DIR)
            and "raise" in (last.line or ""))


def allowed(call):
    """Run ``call`` under the time limit: its result, or None if it raised an allowed
    error; any other exception (or a hang) fails the test with the call's description."""
    before = (gmpy2.get_context().precision, mpmath.mp.prec)
    try:
        with time_limit(LIMIT_S):
            return call()
    except NAMED as exc:
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        return None
    except (ValueError, TypeError) as exc:
        if not raised_by_mpvi(exc):
            raise AssertionError(f"raw {type(exc).__name__} not raised by mpvi: {exc}") from exc
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        return None
    finally:
        assert (gmpy2.get_context().precision, mpmath.mp.prec) == before, \
            "mpvi changed the caller's gmpy2 or mpmath context"


# ----- what is drawn -------------------------------------------------------------------------

CONTEXTS = [("gmp", 16), ("gmp", 32), ("mp", 16), ("fp", 0)]
NUMBERS = ["0", "1", "-1", "1/2", "-1/3", "2", "7/5", "3", "-5/2", "10", "1e3", "1e-12"]
COEFFS = ["0", "1", "-1", "1/2", "-2", "3", "1/7", "10"]
MASS_DIAG = ["1", "2", "1/3", "10"]
MASS_OFF = ["0", "1/2", "1/5"]
BAD_DIAG = ["0", "-1", "1/3"]                        # refused, or (1/3 with 1/2) indefinite
BAD_OFF = ["1", "3", "0"]
STEPS = ["1/10", "1/3", "-1/10", "1/1000", "1", "3", "100", "1e6", "1e-30", "0", "-1/3"]
BAD_NUMBERS = [0.5, "nan", "x", None, [1], float("inf"), "1e100000"]


def rare(draw, k=20):
    """True about once in ``k + 1`` draws (hypothesis favours small integers, so ``==
    0`` on an integer range would be far more frequent)."""
    return draw(st.sampled_from([False] * k + [True]))


def number(draw):
    """A number as a user would write it: a string, an int or a Fraction; rarely a bad
    one (a float, nan, a word, a list, an overflow)."""
    if rare(draw, 30):
        return draw(st.sampled_from(BAD_NUMBERS))
    text = draw(st.sampled_from(NUMBERS))
    form = draw(st.sampled_from(["str", "str", "int", "Fraction"]))
    if form == "int" and "/" not in text and "e" not in text:
        return int(text)
    if form == "Fraction" and "e" not in text:
        return Fraction(text)
    return text


@functools.lru_cache(maxsize=None)
def context_of(context, dps):
    """The drawn context, made once: creating a gmp context sets the thread's bare
    precision on purpose (the precision rule), so it is made before :func:`allowed`
    takes its snapshot (``build`` then finds it here)."""
    return mpvi.get_context(context, dps)                # (fp ignores dps)


@functools.lru_cache(maxsize=None)
def lagrangian_system(context, dps, n, mass, terms, q_dependent):
    """A LagrangianSystem of ``n`` dof (mass: the entries of M as strings, row-major;
    terms: (kind, i, coefficient) of V), built once per drawn combination (kernels are
    generated at first use); raises what the constructor raises."""
    ctx = context_of(context, dps)
    q = sp.symbols(f"q0:{n}")
    M = sp.Matrix(n, n, [sp.Rational(m) for m in mass])
    if q_dependent:
        M = M + sp.diag(*[sp.cos(q[-1]) ** 2 / 2] * n)
    V = sp.Integer(0)
    for kind, i, c in terms:
        c, x = sp.Rational(c), q[i % n]
        V += {"q2": c * x ** 2 / 2, "q4": c * x ** 4 / 4, "cos": -c * sp.cos(x),
              "sin": c * sp.sin(x), "cross": c * q[0] * q[-1],
              "cosdiff": -c * sp.cos(q[0] - q[-1]), "exp": c * sp.exp(x / 4)}[kind]
    return mpvi.LagrangianSystem("drawn", list(q), M, V, {}, ctx)


@functools.lru_cache(maxsize=None)
def linear_system(context, dps, n, mass, stiffness):
    ctx = context_of(context, dps)
    grid = lambda e: [[e[i * n + j] for j in range(n)] for i in range(n)]  # noqa: E731
    return mpvi.LinearSystem(grid(mass), grid(stiffness), ctx)


def symmetric(draw, n, diag, off):
    if rare(draw, 8):
        diag, off = BAD_DIAG, BAD_OFF
    m = [[None] * n for _ in range(n)]
    for i in range(n):
        m[i][i] = draw(st.sampled_from(diag))
        for j in range(i):
            m[i][j] = m[j][i] = draw(st.sampled_from(off))
    return tuple(x for row in m for x in row)


@st.composite
def systems(draw):
    context, dps = draw(st.sampled_from(CONTEXTS))
    n = draw(st.integers(1, 2))
    if rare(draw, 4):
        return ("linear", context, dps, n, symmetric(draw, n, MASS_DIAG, MASS_OFF),
                symmetric(draw, n, ["1", "4", "1/2", "3"], MASS_OFF))
    terms = tuple(draw(st.lists(st.tuples(
        st.sampled_from(["q2", "q4", "cos", "sin", "cross", "cosdiff", "exp"]),
        st.integers(0, 1), st.sampled_from(COEFFS)), min_size=1, max_size=3)))
    return ("lagrangian", context, dps, n, symmetric(draw, n, MASS_DIAG, MASS_OFF), terms,
            draw(st.booleans()))


def build(spec):
    if spec[0] == "linear":
        return linear_system(*spec[1:])
    return lagrangian_system(*spec[1:])


PARAMS = {
    "lobatto": {"points": [2, 3, 5, 1, "x"]},
    "gbs": {"levels": [2, 4, 0]},
    "hermite_variational": {"hermite_n": [2, 3, 1]},
    "hermite_galerkin": {"hermite_n": [2, 3, 0]},
    "mutze": {"g": ["0", "1", "3/5", 0.5], "solver": ["newton", "simple", "x"],
              "iterations": [1, 3, 0], "variant": ["damped", "x"]},
    "mutze_variation": {"nodes": [3, 4, 1]},
    "mutze_parabolic_el": {"nodes": [3, 4, 1]},
    "newmark_family": {"beta": ["1/4", "1/6", "0", 0.25], "gamma": ["1/2", "1", "-1"]},
    "rk2": {"variant": ["midpoint", "heun", "x"]},
}
NEWTON = [None, None, {"max_iter": 1}, {"max_iter": 0}, {"rtol": "1e-5"}, {"scale": "2"},
          {"rtol": 0.1}, {"tol": 1}, "x", {"max_iter": "many"}]


@st.composite
def calls(draw):
    """(system spec, Problem keyword arguments, solve keyword arguments)."""
    spec = draw(systems())
    n = spec[3]
    method = ("no_such_method" if rare(draw, 40)
              else draw(st.sampled_from(sorted(mpvi.METHODS))))
    q0 = [number(draw) for _ in range(n)]
    if rare(draw, 40):
        q0 = q0 + [1]                                   # the wrong length
    second = [number(draw) for _ in range(n)]
    problem = {"q0": q0, draw(st.sampled_from(["p0", "v0"])): second,
               "t0": 0.5 if rare(draw, 40) else draw(st.sampled_from([0, "1/2", "-3"]))}
    params = {k: draw(st.sampled_from(v)) for k, v in PARAMS.get(method, {}).items()
              if draw(st.booleans())}
    if rare(draw, 40):
        params["bogus"] = 1
    options = {"h": draw(st.sampled_from(STEPS)), "check_stability": draw(st.booleans())}
    if rare(draw, 5):
        options["t1"] = draw(st.sampled_from(["1", "1/3", "-1", 2]))
    else:
        options["n"] = 0 if rare(draw, 40) else draw(st.integers(1, 12))
    if rare(draw, 3):
        options["newton"] = draw(st.sampled_from(NEWTON))
    if rare(draw, 3) and not ("t1" in options and options["h"] == "1e-30"):
        options["saveat"] = draw(st.sampled_from([1, 2, 5, 0, -1, "x"]))   # (not 1e30 steps)
    if rare(draw, 5):
        options["max_growth"] = draw(st.sampled_from([None, "10", "1e100", 2.0]))
    return spec, method, problem, {**options, **params}


def check_solution(sol, ctx):
    assert isinstance(sol, mpvi.Solution)
    for t, q, y in zip(sol.t, sol.q, sol.y):
        assert ctx.isfinite(t), f"non-finite time {t} returned"
        for x in [*q, *([] if y is None else y)]:
            assert ctx.isfinite(x), f"non-finite state {x} returned at t = {t}"


@given(calls())
def test_solve_returns_finite_states_or_a_named_error(case):
    spec, method, problem, options = case
    context_of(*spec[1:3])
    system = allowed(lambda: build(spec))
    if system is None:
        return
    prob = allowed(lambda: mpvi.Problem(system, **problem))
    if prob is None:
        return
    sol = allowed(lambda: mpvi.solve(prob, method, **options))
    if sol is not None:
        check_solution(sol, system.ctx)


@given(systems(), st.sampled_from(sorted(mpvi.METHODS)), st.sampled_from(["1/10", "1/50"]))
def test_a_small_step_from_rest_near_equilibrium_integrates(spec, method, h):
    """Well-posed calls must succeed, not only fail politely: from q0 = 1/10, v0 = 0 and a
    small step, on a system whose mass matrix is positive definite everywhere, every
    method integrates 4 steps, or refuses with a named error for a reason that holds: a
    linear-only method on a nonlinear system, a step beyond the stability bound."""
    n = spec[3]
    if not sp.Matrix(n, n, [sp.Rational(m) for m in spec[4]]).is_positive_definite:
        return          # M(q) = M0 + cos(q)^2/2 I may turn singular along the motion
    context_of(*spec[1:3])
    system = allowed(lambda: build(spec))
    if system is None:
        return
    prob = allowed(lambda: mpvi.Problem(system, ["1/10"] * system.dof, v0=[0] * system.dof))
    if prob is None:
        return
    try:
        with time_limit(LIMIT_S):
            sol = mpvi.solve(prob, method, h=h, n=4)
    except mpvi.StabilityError:
        return                                   # a stiff drawn system (M small, V steep)
    except TypeError as exc:
        assert "is the linear (constant M, K) form" in str(exc) or \
            "first-order" in str(exc), exc
        return
    except (mpvi.NewtonError, mpvi.IntegrationError) as exc:
        pytest.fail(f"{method} failed on a small step near equilibrium: {exc}")
    check_solution(sol, system.ctx)
    assert len(sol) == 5
