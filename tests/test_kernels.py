"""Generated Newton kernels (mpvi.engines.kernels) against the assembled reference path.

Both paths run in the same mpmath context (``ctx.kernels`` chooses), so any difference is
the kernel's: they must take the same Newton iterations and agree to a few units of eps
per step.  The gmp context (kernels on by default) is compared with the mp reference too.
The kernels' start in doubles is off here (``MPVI_NEWTON_START=0``): the reference path
has none, and equal iteration counts are the check (tests/test_cdouble.py tests the
start).
"""
import numpy as np
import pytest

from mpvi import Problem, get_context, solve
from mpvi.engines import kernels as kernel_cache
from mpvi.numbers.context import MPContext
from mpvi.numbers.linalg import SingularMatrixError
from mpvi.numbers.linalg import solve_dense
from mpvi.systems.damped import damped_pendulum
from mpvi.systems.lagrange_top import table3_top

T_BAR = "1.8472389815089258840562322083988766"


@pytest.fixture(autouse=True)
def _no_start_in_doubles(monkeypatch):
    """Kernels bound without Newton's start in doubles, none reused from other tests."""
    monkeypatch.setenv(kernel_cache.ENV_START, "0")
    monkeypatch.setattr(kernel_cache, "_KERNELS", {})
    monkeypatch.setattr(kernel_cache, "_ANY_CONTEXT", {})

# (scheme, params): every implicit scheme that has a kernel
IMPLICIT = [("simpson", {}), ("midpoint", {}), ("lobatto", {"points": 4}),
            ("hermite_variational", {}), ("hermite_variational", {"hermite_n": 3}),
            ("hermite_galerkin", {}), ("hermite_galerkin", {"hermite_n": 3}),
            ("implicit_midpoint", {}), ("mutze", {}), ("mutze", {"g": "3/5"}),
            ("mutze_variation", {}), ("mutze_parabolic_el", {})]
IDS = [f"{s}{''.join(f'-{k}{v}' for k, v in p.items())}" for s, p in IMPLICIT]


def _top_run(ctx, scheme, params, steps):
    top = table3_top(ctx)
    with ctx.active():                  # the test's own arithmetic at the context's precision
        h = ctx.num(T_BAR) / 20
    return solve(top, scheme, h=h, n=steps, **params)


def _pendulum_run(ctx, scheme, params, steps):
    """A forced, time-dependent system: the kernels' node-time inputs are used."""
    problem = Problem(damped_pendulum(ctx), ["1/2"], v0=[0])
    return solve(problem, scheme, h="1/10", n=steps, **params)


def _compare(a, b, ctx, steps):
    for key in ("total_iterations", "max_iterations"):
        assert a.stats["newton"][key] == b.stats["newton"][key]
    scale = max(abs(x) for x in np.ravel(a.q)) + 1
    diff = max(abs(x - y) for x, y in zip(np.ravel(a.q), np.ravel(b.q)))
    # a few eps per step: round-off of two different evaluation orders, nothing more
    assert diff <= 100 * steps * ctx.eps * scale, (float(diff), float(ctx.eps))
    assert diff < ctx.num(10) ** (-55)


@pytest.mark.parametrize("scheme,params", IMPLICIT, ids=IDS)
def test_kernel_equals_reference_path_in_the_same_context(scheme, params):
    ref, fast = MPContext(64), MPContext(64)
    fast.kernels = True
    steps = 8
    if params.get("hermite_n", 2) == 2:   # degree 5 on the 3-dof top: a 40 s kernel build
        _compare(_top_run(ref, scheme, params, steps), _top_run(fast, scheme, params, steps),
                 ref, steps)
    _compare(_pendulum_run(ref, scheme, params, steps), _pendulum_run(fast, scheme, params, steps),
             ref, steps)


@pytest.mark.parametrize("scheme,params", [("simpson", {}), ("hermite_galerkin", {}), ("mutze", {})],
                         ids=["simpson", "hermite_galerkin", "mutze"])
def test_gmp_context_agrees_with_the_mp_reference(scheme, params):
    mp, gmp = get_context("mp", 64), get_context("gmp", 64)
    assert gmp.kernels and not mp.kernels
    a, b = _top_run(mp, scheme, params, 10), _top_run(gmp, scheme, params, 10)
    assert a.stats["newton"]["mean_iterations"] == b.stats["newton"]["mean_iterations"]
    for x, y in zip(np.ravel(a.q), np.ravel(b.q)):
        assert gmp.is_number(y)
        assert abs(x - mp.num(y)) <= 1000 * mp.eps * (abs(x) + 1)


def test_kernels_run_at_the_context_precision():
    """A 30-digit and an 80-digit gmp run differ at 1e-30, not at 1e-64 or 1e-15.  (The
    results of different precisions are compared in a 100-digit context: ``lift`` keeps
    their bits, as wanted here.)"""
    q30 = _top_run(get_context("gmp", 30), "simpson", {}, 5).q[-1]
    q80 = _top_run(get_context("gmp", 80), "simpson", {}, 5).q[-1]
    q64 = _top_run(get_context("gmp", 64), "simpson", {}, 5).q[-1]
    ref = MPContext(100)
    d30 = max(abs(ref.lift(a) - ref.lift(b)) for a, b in zip(q30, q80))
    d64 = max(abs(ref.lift(a) - ref.lift(b)) for a, b in zip(q64, q80))
    assert 1e-33 < d30 < 1e-26
    assert 0 < d64 < 1e-60


@pytest.mark.parametrize("name", ["mp", "gmp", "fp"])
def test_solve_dense(name):
    ctx = get_context(name, 64)
    a = [[ctx.num(x) for x in row] for row in ([2, 1, 1], [1, 3, 2], [1, 0, 0])]
    x = solve_dense([list(r) for r in a], [ctx.num(v) for v in (4, 5, 6)], ctx)
    assert max(abs(u - v) for u, v in zip(x, (6, 15, -23))) < 100 * ctx.eps * 23
    with pytest.raises(SingularMatrixError, match="singular to working precision"):
        solve_dense([[ctx.num(1), ctx.num(2)], [ctx.num(2), ctx.num(4)]], [ctx.one, ctx.one], ctx)
    with pytest.raises(SingularMatrixError, match="zero"):
        solve_dense([[ctx.zero]], [ctx.one], ctx)


@pytest.mark.parametrize("scheme", ["rk4", "gbs"])
def test_generated_hamiltonian_field_equals_the_reference(scheme):
    """RK4 and GBS take the generated field (symbolic M^-1 p) when ctx.kernels."""
    ref, fast = MPContext(64), MPContext(64)
    fast.kernels = True
    steps = 20 if scheme == "rk4" else 2
    a, b = _top_run(ref, scheme, {}, steps), _top_run(fast, scheme, {}, steps)
    diff = max(abs(x - y) for x, y in zip(np.ravel(a.q), np.ravel(b.q)))
    assert 0 <= diff < 1e-58
    assert b.q.shape == a.q.shape


def test_generated_field_names_a_singular_mass_matrix():
    """At theta = 0 the top's mass matrix is singular: the generated field hands over to
    the reference field, whose error names the point."""
    from mpvi.engines.kernels import hamiltonian_field
    ctx = MPContext(30)
    ctx.kernels = True
    top = table3_top(ctx)
    f = hamiltonian_field(top.system)
    with pytest.raises(SingularMatrixError, match="mass matrix is singular at q"):
        f(ctx.zero, [*ctx.vector([0, 0, 0]), *top.p0])


def test_generated_code_does_not_depend_on_the_process_history():
    """The same run in two fresh processes that made different numbers of sympy Dummies
    first gives the same bits (before fixed names, the order of the generated operations
    followed the Dummies' creation counter: a study computed on a worker differed from
    the serial run at 1e-60)."""
    import subprocess
    import sys
    code = (
        "import sys, sympy as sp\n"
        "[sp.Dummy() for _ in range(int(sys.argv[1]))]\n"
        "from mpvi import get_context, solve\n"
        "from mpvi.systems.lagrange_top import table3_top\n"
        "ctx = get_context('gmp', 64); top = table3_top(ctx)\n"
        "for s in ('simpson', 'mutze'):\n"
        "    sol = solve(top, s, h='1/10', n=10)\n"
        "    print(s, [ctx.to_str(x) for x in sol.q[-1]])\n")
    outs = [subprocess.run([sys.executable, "-c", code, str(n)], capture_output=True, text=True,
                           check=True).stdout for n in (0, 777)]
    assert outs[0] and outs[0] == outs[1]


def test_a_sum_of_thousands_of_terms_compiles_and_is_exact():
    """A modified Hamiltonian has thousands of terms: generated code splits wide sums
    (mpvi.compiled.codegen.WIDE) instead of recursing once per term (a RecursionError before), and
    its value equals the sum taken term by term at the context's precision."""
    import sympy as sp
    from mpvi.compiled.codegen import compile_exprs
    from mpvi.numbers.context import GMPContext
    x, y = sp.symbols("x y")
    expr = sp.Add(*[sp.Rational(k + 1, 7) * x ** (k % 13) * sp.cos(y) ** (k // 13)
                    for k in range(3000)])
    ctx = GMPContext(50)
    f = compile_exprs([x, y], [expr], ctx, "wide")
    with ctx.active():
        X, Y = ctx.num("0.9"), ctx.num("0.3")
        ref = ctx.fsum(ctx.num(k + 1) / 7 * X ** (k % 13) * ctx.cos(Y) ** (k // 13)
                       for k in range(3000))
        assert abs(f(X, Y)[0] - ref) <= abs(ref) * ctx.eps * 100
