"""The compiled MPFR kernels (mpvi/compiled/cbackend.py) are bit-identical to the Python kernels,
fall back to Python when no compiler is found or when switched off, and say so once."""
import importlib

import gmpy2
import pytest
import sympy as sp

import mpvi
from mpvi.compiled import cbackend
from mpvi.compiled import codegen

pytestmark = pytest.mark.skipif(
    "error" in cbackend.toolchain(),
    reason=f"no toolchain for compiled kernels: {cbackend.toolchain().get('error')}")

G64 = mpvi.GMPContext(64)


def bits_equal(a, b):
    return len(a) == len(b) and all(x == y and x.precision == y.precision or
                                    (x != x and y != y) for x, y in zip(a, b))


def test_a_compiled_function_is_bit_identical_to_the_python_one():
    x, y, z = sp.symbols("x y z")
    exprs = [sp.sin(x) * y**2 + sp.Rational(1, 3) * x - 2 * sp.cos(x - y),
             sp.sqrt(x) / y + sp.pi * x**-1 - sp.E, x, 3 - x, x**sp.Rational(3, 2),
             sp.atan2(y, x), sp.exp(-x * y) * sp.tanh(z), sp.log(1 + x**2) / 7,
             sp.Abs(y) * sp.sign(y), 5 * z - sp.Rational(2, 7) * x * y * z]
    python = codegen.generate([[x, y], z], exprs, G64, compiled=False)
    compiled = codegen.generate([[x, y], z], exprs, G64, compiled=True)
    assert compiled is not python and type(compiled).__name__ == "builtin_function_or_method"
    with G64.active():
        for X, Z in ((["0.7", "-1/3"], "2"), (["1e-30", "12345.6789"], "-1/9"),
                     (["3", "0"], "0")):
            args = ([G64.num(v) for v in X], G64.num(Z))
            assert bits_equal(python(*args), compiled(*args))
        # the context's guard: sin/cos/tan are nan beyond 2^prec
        big = [G64.num(2) ** 300, G64.num(1)]
        assert bits_equal(python(big, G64.num(1)), compiled(big, G64.num(1)))
        assert compiled(big, G64.num(1))[0] != compiled(big, G64.num(1))[0]   # nan


def test_inputs_of_more_bits_are_read_as_python_reads_them():
    """Python binds an argument without rounding it; so does the compiled kernel."""
    x, y = sp.symbols("x y")
    exprs = [x, x * y, y + 1]
    python = codegen.generate([[x, y]], exprs, G64, compiled=False)
    compiled = codegen.generate([[x, y]], exprs, G64, compiled=True)
    wide = mpvi.GMPContext(100).num("1/3")
    with G64.active():
        args = [wide, G64.num(3)]
        assert bits_equal(python(args), compiled(args))
        assert compiled(args)[0].precision == wide.precision


def test_two_kernels_differing_only_in_a_rational_are_two_modules():
    x = sp.Symbol("x")
    third = codegen.generate([[x]], [sp.Rational(1, 3) * x], G64, compiled=True)
    fifth = codegen.generate([[x]], [sp.Rational(1, 5) * x], G64, compiled=True)
    with G64.active():
        one = [G64.num(1)]
        assert third(one)[0] == G64.num("1/3") and fifth(one)[0] == G64.num("1/5")


def test_bad_arguments_are_named():
    x, y = sp.symbols("x y")
    f = codegen.generate([[x, y]], [x + y], G64, compiled=True)
    with pytest.raises(ValueError, match="argument 0 must have 2 items, got 3"):
        f([G64.num(1)] * 3)
    with pytest.raises(TypeError, match=r"argument 0\[1\] must be a gmpy2 mpfr"):
        f([G64.num(1), "2"])


@pytest.mark.parametrize("method", sorted(m for m, spec in mpvi.METHODS.items()
                                          if spec.implicit))
def test_every_implicit_method_steps_bit_for_bit(method, monkeypatch):
    """The driver with compiled kernels and with the Python kernels: the same states, bit
    for bit, and the same Newton iterations, on a nonlinear 2-dof system."""
    a, b = sp.symbols("a b")
    M = sp.Matrix([[2, sp.cos(a - b)], [sp.cos(a - b), 1]])
    runs = []
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "1")       # compiled from the first call
    for switch in ("0", "1"):
        monkeypatch.setenv(cbackend.ENV_SWITCH, switch)
        system = mpvi.LagrangianSystem(f"double pendulum {switch}", [a, b], M,
                                       -2 * sp.cos(a) - sp.cos(b), {}, G64)
        problem = mpvi.Problem(system, ["1/2", "1"], v0=["0", "-1/4"])
        try:
            runs.append(mpvi.solve(problem, method, h="1/20", n=12))
        except TypeError as exc:                 # the linear-only forms: a linear chain
            assert "LinearSystem" in str(exc)
            chain = mpvi.LinearSystem([[2, 0], [0, 1]], [[3, -1], [-1, 2]], G64)
            runs.append(mpvi.solve(mpvi.Problem(chain, ["1/2", "1"], p0=["0", "-1/4"]),
                                   method, h="1/20", n=12))
    python, compiled = runs
    for k in ("q", "p", "v"):
        assert bits_equal(list(getattr(python, k).ravel()), list(getattr(compiled, k).ravel())), k
    if mpvi.get_method(method).takes_newton_options:
        newton = python.stats["newton"]
        assert newton["solves"] == 12 and newton == compiled.stats["newton"]


def test_a_kernel_is_compiled_after_its_first_calls_unless_cached(monkeypatch, tmp_path):
    """Not in the disk cache: Python for the first MPVI_COMPILE_AFTER - 1 calls, then the
    compiled module (the same bits either way); in the cache: compiled at once."""
    monkeypatch.setenv(cbackend.ENV_CACHE, str(tmp_path))
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "3")
    monkeypatch.setattr(cbackend, "_MODULES", {})
    x = sp.Symbol("x")
    exprs = [sp.cos(x) / 3 + x**5]
    f = codegen.generate([[x]], exprs, G64)
    assert f.__name__ == "kernel" and not list(tmp_path.glob("mpvi_k*"))
    with G64.active():
        values = [f([G64.num(k)]) for k in range(1, 6)]
        assert list(tmp_path.glob("mpvi_k*")), "compiled at the third call"
        python = codegen.generate([[x]], exprs, G64, compiled=False)
        assert all(bits_equal(v, python([G64.num(k)])) for k, v in zip(range(1, 6), values))
    monkeypatch.setattr(cbackend, "_MODULES", {})
    again = codegen.generate([[x]], exprs, G64)      # a new process would find it cached
    assert type(again).__name__ == "builtin_function_or_method"


class _Clock:
    """A perf_counter that moves only when told."""
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_rental_compiles_when_the_python_time_reaches_the_compile_time(monkeypatch):
    """The default rule (MPVI_COMPILE_AFTER unset): a kernel is compiled once the time spent
    in its Python calls reaches its expected compile time, whatever the number of calls."""
    clock = _Clock()
    monkeypatch.setattr(cbackend.time, "perf_counter", clock)
    monkeypatch.setattr(cbackend, "expected_compile_seconds", lambda csource: 1.0)

    def slow(x):                 # a Python kernel that takes 0.3 s
        clock.now += 0.3
        return x + 1

    rental = cbackend.Rental("source", None)
    assert [rental.call(slow, (k,)) for k in range(4)] == [(False, 1), (False, 2), (False, 3),
                                                         (False, 4)]
    assert rental.call(slow, (9,)) == (True, None)        # 1.2 s spent >= 1.0 s
    cheap = cbackend.Rental("source", None)
    for _ in range(1000):                                  # 1000 calls of 0.5 ms: 0.5 s
        clock.now += 0.0005
        assert cheap.call(lambda: None, ()) == (False, None)


@pytest.mark.parametrize("fallback, answer", [("_not_compiled", None), ("_not_checked", False)])
def test_the_rental_charges_a_kernel_run_by_its_caller_the_shortest_interval(monkeypatch,
                                                                            fallback, answer):
    """Where the caller runs the Python step (the kernel returns None until built) or its
    Python checks (the step check returns False) itself, each call is charged the shortest
    interval seen between two calls: a long pause between two runs is not counted as time
    in the kernel."""
    clock = _Clock()
    monkeypatch.setattr(cbackend.time, "perf_counter", clock)
    monkeypatch.setattr(cbackend, "expected_compile_seconds", lambda csource: 1.0)
    python = getattr(cbackend, fallback)
    rental = cbackend.Rental("source", None)
    for gap in (0.1, 50.0, 0.1, 50.0, 0.1):               # 5 calls; pauses of 50 s between
        assert rental.call(python, ()) == (False, answer)
        clock.now += gap
    assert rental.spent == pytest.approx(0.4)              # 4 intervals charged 0.1 s each
    for _ in range(7):                                     # 0.4 + 0.7 s > 1 s
        rental.call(python, ())
        clock.now += 0.1
    assert rental.call(python, ()) == (True, None)


def test_the_step_check_of_a_long_run_is_compiled_under_the_default_rule(monkeypatch, tmp_path):
    """The checks after a step run in the caller's Python until the step check is compiled;
    that time is charged to it, so a long run compiles it (its own call, which only
    returns False, costs nothing: charged that, it was never compiled)."""
    monkeypatch.setenv(cbackend.ENV_CACHE, str(tmp_path))
    monkeypatch.delenv("MPVI_COMPILE_AFTER", raising=False)
    monkeypatch.setattr(cbackend, "_MODULES", {})
    monkeypatch.setattr(mpvi.engines.kernels, "_KERNELS", {})
    clock = _Clock()
    monkeypatch.setattr(cbackend.time, "perf_counter", clock)
    monkeypatch.setattr(cbackend, "expected_compile_seconds", lambda csource: 0.05)
    q = sp.Symbol("q")
    pend = mpvi.LagrangianSystem("pend", [q], sp.Matrix([[2 + sp.cos(q)]]), -sp.cos(q), {}, G64)
    check = mpvi.engines.kernels.step_check(pend)
    with G64.active():
        point = [G64.num("0.5")], [G64.num("0.25")]
        answers = []
        for _ in range(60):                                # 1 ms of Python checks after each
            answers.append(check(G64.num(1), *point, None, None, None))
            clock.now += 0.001
    assert answers[0] is False and answers[-1] is True     # compiled after about 50 calls
    assert check.compiled() is not None


def test_the_expected_compile_time_learns_from_this_process_builds(monkeypatch):
    monkeypatch.setattr(cbackend, "_built", {"seconds": 0.0, "kb": 0.0, "count": 0})
    prior = cbackend.expected_compile_seconds("x" * 2048)
    assert prior == pytest.approx(cbackend.COMPILE_SECONDS_FIXED
                                  + 2 * cbackend.COMPILE_SECONDS_PER_KB)
    monkeypatch.setattr(cbackend, "_built", {"seconds": 3 * prior, "kb": 2.0, "count": 1})
    assert cbackend.expected_compile_seconds("x" * 2048) == pytest.approx(3 * prior)


def test_a_short_run_with_a_cold_cache_compiles_nothing(monkeypatch, tmp_path):
    """Ten RK4 steps of the pendulum spend far less in Python than a compilation takes: no
    module is built (a long run's kernels are: test_a_kernel_is_compiled_...)."""
    monkeypatch.setenv(cbackend.ENV_CACHE, str(tmp_path))
    monkeypatch.delenv("MPVI_COMPILE_AFTER", raising=False)
    monkeypatch.setattr(cbackend, "_MODULES", {})
    q = sp.Symbol("q")
    pend = mpvi.LagrangianSystem("pend", [q], sp.eye(1), -sp.cos(q), {}, G64)
    sol = mpvi.solve(mpvi.Problem(pend, ["1/2"], v0=[0]), "rk4", h="1/10", n=10)
    assert len(sol.t) == 11 and not list(tmp_path.glob("mpvi_*"))


def test_no_compiler_falls_back_to_python_and_says_so(monkeypatch, capsys):
    monkeypatch.setattr(cbackend, "_status", {})
    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setattr(cbackend.shutil, "which", lambda name: None)
    x = sp.Symbol("x")
    f = codegen.generate([[x]], [x * 2], G64)
    assert f.__name__ == "kernel"                      # the Python function
    g = codegen.generate([[x]], [x * 3], G64)
    assert g.__name__ == "kernel"
    err = capsys.readouterr().err
    assert err.count("compiled kernels unavailable") == 1 and "Python kernels" in err
    with G64.active():
        assert f([G64.num(2)])[0] == 4


def test_the_switch_turns_compiled_kernels_off(monkeypatch):
    monkeypatch.setenv(cbackend.ENV_SWITCH, "0")
    x = sp.Symbol("x")
    assert codegen.generate([[x]], [x + 1], G64).__name__ == "kernel"


def test_an_unknown_construct_stays_in_python(capsys, monkeypatch):
    monkeypatch.setattr(cbackend, "_status", {})
    source = "def kernel(_a0):\n    [_a0_0] = _a0\n    return [_a0_0 if _a0_0 else 1]"
    assert cbackend.compile_function(source, G64.prec, {}) is None
    assert "stays in Python" in capsys.readouterr().err


def test_integer_results_stay_integers_as_in_python():
    """A kernel entry that is an integer (a derivative that vanishes) is a Python int in
    the Python function; the compiled one returns the same int, not an mpfr."""
    x, y = sp.symbols("x y")
    exprs = [sp.Integer(0), x - x + 3, x * y]
    python = codegen.generate([[x, y]], exprs, G64, compiled=False)
    compiled = codegen.generate([[x, y]], exprs, G64, compiled=True)
    with G64.active():
        args = [G64.num(2), G64.num(5)]
        p, c = python(args), compiled(args)
    assert [type(v) for v in p] == [type(v) for v in c] and p[:2] == c[:2] == [0, 3]
    assert bits_equal(p[2:], c[2:])


# ----- Newton's method in C (cbackend.translate_newton) ----------------------------------------

def newton_kernel(monkeypatch, outputs=True):
    """A kernel of 3 nonlinear equations in X with inputs K and parameters P (sin and cos
    of the same operand, of a fixed input, an integer Jacobian entry), Newton compiled
    from its first solve."""
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "1")
    x, y, z, a, b, c = sp.symbols("x y z a b c")
    res = [x**2 + sp.sin(y) * sp.cos(a) - b, x * y - sp.cos(y) * sp.sin(a) + z / 3,
           z + sp.Rational(1, 7) * x**3 - sp.sin(b) * c]
    kernel = mpvi.engines.kernels.Kernel([x, y, z], [a, b], [c], res, G64,
                                 outputs=[x + sp.cos(y), z * sp.sin(y)] if outputs else ())
    assert kernel.newton is not None
    return kernel


def run_both(kernel, X0, K, P, **options):
    """(compiled result, Python result) of the same solve."""
    from mpvi.numbers.newton import RESIDUAL_SLACK, solve_info, tolerance
    with G64.active():
        rtol = G64.num(options["rtol"]) if "rtol" in options else tolerance(G64)
        scale = G64.num(options["scale"]) if "scale" in options else G64.one
        c = kernel.newton(X0, K, P, G64.eps, rtol, scale, options.get("max_iter", 50),
                          RESIDUAL_SLACK)
        opts = {k: (G64.num(v) if k != "max_iter" else v) for k, v in options.items()}
        try:
            python = solve_info(kernel.equations(K, P), X0, G64, start=kernel.start(K, P),
                                **opts)
        except mpvi.NewtonError as exc:
            python = exc
    return c, python


@pytest.mark.parametrize("options", [{}, {"rtol": "1e-40"}, {"scale": "1e3"}])
def test_compiled_newton_is_solve_info_bit_for_bit(monkeypatch, options):
    kernel = newton_kernel(monkeypatch)
    with G64.active():
        K, P = [G64.num("0.3"), G64.num("1.2")], [G64.num("0.8")]
        X0 = [G64.num("1"), G64.num("0.5"), G64.num(0)]
    c, (X, its, residual) = run_both(kernel, X0, K, P, **options)
    assert c is not None, "the compiled iteration fell back"
    assert bits_equal(c[0], X) and c[1] == its and bits_equal([c[2]], [residual])
    with G64.active():
        assert bits_equal(c[3], kernel.outputs(X, K, P))
    assert its >= 2 and residual < 2 ** 10 * G64.eps        # 2 after the start in doubles


def test_compiled_newton_extrapolates_the_first_guess_as_numpy_does(monkeypatch):
    """X0[u n + d] = sum(C_i[d] * E[u][i]): numpy's sum over object arrays, the same bits."""
    import numpy as np
    kernel = newton_kernel(monkeypatch, outputs=False)
    from mpvi.numbers.newton import RESIDUAL_SLACK, tolerance
    with G64.active():
        K, P = [G64.num("0.3"), G64.num("1.2")], [G64.num("0.8")]
        carry = [np.array([G64.num(s) for s in row], dtype=object)
                 for row in (["0.9", "0.4", "0.1"], ["1/3", "-2/7", "5"])]
        E = [[G64.num("1.5"), G64.num("-1/3")]]            # one unknown slot of n = 3
        X0 = list(sum(x * e for e, x in zip(E[0], carry)))
        head = (K, P, G64.eps, tolerance(G64), G64.one, 50, RESIDUAL_SLACK)
        given = kernel.newton(X0, *head)
        extrapolated = kernel.newton(None, *head, [v for c in carry for v in c], E[0], 2)
    assert given is not None and extrapolated is not None
    assert bits_equal(given[0], extrapolated[0]) and given[1] == extrapolated[1]


def test_compiled_newton_falls_back_where_python_raises(monkeypatch):
    """A singular Jacobian, a nan, the iteration limit, an input wider than the context:
    the compiled iteration returns None and Kernel.solve raises the Python error."""
    kernel = newton_kernel(monkeypatch)
    with G64.active():
        K, P = [G64.num("0.3"), G64.num("1.2")], [G64.num("0.8")]
        good = [G64.num("1"), G64.num("0.5"), G64.num(0)]
        cases = {"nan": ([G64.num("nan")] + good[1:], K, {}),
                 "limit": (good, K, {"max_iter": 1}),
                 "wide": ([mpvi.GMPContext(100).num("1/3")] + good[1:], K, {}),
                 "nan input": (good, [G64.num("nan"), K[1]], {})}
    for name, (X0, k, options) in cases.items():
        c, python = run_both(kernel, X0, k, P, **options)
        assert c is None, name
        if isinstance(python, Exception):
            with pytest.raises(mpvi.NewtonError, match=str(python.message)[:30].replace("(", r"\(")):
                with G64.active():
                    kernel.solve(X0, k, P, G64, **options)
        else:                             # the Python iteration succeeds: so does solve
            with G64.active():
                X, its, _ = kernel.solve(X0, k, P, G64, **options)
            assert bits_equal(X, python[0]) and its == python[1]
    # a Jacobian singular at the solution's neighbourhood: x^2 = 0 from 0
    x = sp.Symbol("x")
    flat = mpvi.engines.kernels.Kernel([x], [], [], [x**2], G64)
    with G64.active():
        c = flat.newton([G64.num(0)], [], [], G64.eps, G64.eps * 1024, G64.one, 50, 1024)
        assert c is None
        with pytest.raises(mpvi.NewtonError, match="singular Jacobian"):
            flat.solve([G64.num(0)], [], [], G64)


def test_the_driver_never_falls_back_on_a_regular_run(monkeypatch):
    """Every Newton solve of a Simpson run on the Lagrange top is the compiled one (the
    Python iteration of mpvi.engines.kernels is never called)."""
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "1")
    calls = []
    original = mpvi.engines.kernels.solve_info
    monkeypatch.setattr(mpvi.engines.kernels, "solve_info",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    from mpvi.systems.lagrange_top import table3_top
    sol = mpvi.solve(table3_top(G64), "simpson", h="1/20", n=30)
    assert sol.stats["newton"]["solves"] == 30 and not calls


def _explicit_problems():
    """Systems of every form the compiled explicit steps take: the symbolic inverse of M
    (2 dof, with parameters and a time-dependent force), integer-valued fields (V = 0,
    constant M), and the dense elimination (M(q) of 4 and constant M of 5 dof)."""
    from mpvi.systems import n_link_pendulum, pendulum_chain
    from mpvi.systems.double_pendulum import nonlinear_double_pendulum
    a, b, c, f, w = sp.symbols("a b c f w")
    M = sp.Matrix([[2, sp.cos(a - b)], [sp.cos(a - b), 1]])
    forced = mpvi.LagrangianSystem(
        "forced double pendulum", [a, b], M, -2 * sp.cos(a) - sp.cos(b),
        {c: "1/5", f: "1/2", w: "2/3"}, G64,
        force=lambda t, q, v: sp.Matrix([-c * v[0] + f * sp.cos(w * t), -c * v[1]]))
    free = mpvi.LagrangianSystem("free particle", [a, b], sp.diag(1, 2), 0, {}, G64)
    return {"double pendulum": nonlinear_double_pendulum(G64),
            "forced": mpvi.Problem(forced, ["1/2", "1"], v0=["0", "-1/4"]),
            "free": mpvi.Problem(free, ["1/2", "1"], p0=["1/3", "-1/4"]),
            "4-link": n_link_pendulum(G64, 4),
            "chain of 5": pendulum_chain(G64, 5)}


@pytest.mark.parametrize("name", ["double pendulum", "forced", "free", "4-link", "chain of 5"])
@pytest.mark.parametrize("method, options", [("rk4", {}), ("gbs", {"levels": 3})])
def test_compiled_explicit_steps_are_bit_for_bit(name, method, options, monkeypatch):
    """RK4 and GBS with the compiled field and steps (RK4's in batches after the first),
    and with the Python ones: the same states bit for bit, and no compiled step falls back
    on these regular runs."""
    from mpvi.engines import kernels
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")       # compiled at once
    fallbacks, compiled_steps = [], []
    real = kernels.explicit_steps

    def counting(system):
        steps = real(system)
        if steps is None:
            return None

        def watch(step):
            def run(*args):
                out = step(*args)
                (fallbacks if out is None else compiled_steps).append(args[0])
                return out
            return run
        return tuple(map(watch, steps))
    real_batch = kernels.explicit_batch

    def counting_batch(system):                        # RK4's steps in a batch
        batch = real_batch(system)
        if batch is None:
            return None

        def run(*args):
            got = batch(*args)
            if got is not None:
                compiled_steps.extend(args[0][:got[0]])
            return got
        run.ready = batch.ready
        return run
    rk4 = importlib.import_module("mpvi.methods.rk4")
    monkeypatch.setattr(rk4, "explicit_steps", counting)
    monkeypatch.setattr(rk4, "explicit_batch", counting_batch)
    runs = []
    for switch in ("0", "1"):
        monkeypatch.setenv(cbackend.ENV_SWITCH, switch)
        runs.append(mpvi.solve(_explicit_problems()[name], method, h="1/50", n=15, **options))
    python, compiled = runs
    for k in ("q", "p"):
        assert bits_equal(list(getattr(python, k).ravel()), list(getattr(compiled, k).ravel())), k
    assert len(compiled_steps) == 15 and fallbacks == []


def test_compiled_explicit_steps_fall_back_where_the_python_field_goes_another_way(monkeypatch):
    """A nan, a singular mass matrix, a number wider than the context: None (the Python
    step then runs and raises or computes); bad levels are an error."""
    from mpvi.engines import kernels
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")       # compiled at once
    monkeypatch.setenv(cbackend.ENV_SWITCH, "1")
    a, b = sp.symbols("a b")
    system = mpvi.LagrangianSystem("singular at b = 0", [a, b], sp.diag(1, b ** 2),
                                   -sp.cos(a), {}, G64)
    wider = mpvi.GMPContext(80).num(1)       # before the blocks: a new context sets the precision
    for n_dof, sys_ in ((2, system), (4, _explicit_problems()["4-link"].system)):
        rk4, gbs = kernels.explicit_steps(sys_)
        signs = None if n_dof == 4 else (1,)           # the singular factor b of det M
        with G64.active():
            y = [G64.num(k + 1) / 7 for k in range(2 * n_dof)]
            h = G64.num("1/100")
            assert rk4(0, y, h, signs) is not None and gbs(0, y, h, 2, signs) is not None
            assert rk4(0, [gmpy2.nan()] + y[1:], h, signs) is None
            assert gbs(0, y[:-1] + [wider], h, 2, signs) is None
            with pytest.raises(ValueError, match="levels must be 1 to 4096"):
                gbs(0, y, h, 0, signs)
    rk4, _ = kernels.explicit_steps(system)
    with G64.active():
        assert rk4(0, [G64.num(1), G64.zero, G64.zero, G64.num(1)], G64.num("1/100"), None) is None
        # b leaves its sign within the step: declined when the signs are given, not without
        y = [G64.num(1), G64.num("1/100"), G64.zero, G64.num(-1)]
        assert rk4(0, y, G64.num("1/10"), (1,)) is None
        assert rk4(0, y, G64.num("1/10"), None) is not None
    # the stepper at that point: the compiled step declines, the Python field raises
    stepper = mpvi.get_method("rk4").prepare(system, G64.num("1/100"), G64)
    with G64.active(), pytest.raises(mpvi.SingularMatrixError, match="singular at q"):
        stepper(G64.zero, [G64.num(1), G64.zero], [G64.zero, G64.num(1)])


def test_the_compiled_step_check_decides_as_the_python_checks(monkeypatch):
    """check(t, q, y, bound, signs, qprev) is True exactly where the finite test, the growth
    guard, irregularity() and the signs of the singular factors (b - 3 of V, and det M)
    all pass: on a grid through a mass matrix that stops being positive definite, through
    b = 3, with nan, inf and values beyond the bound."""
    from mpvi.model.singular import singularities
    from mpvi.engines import kernels
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    monkeypatch.setenv(cbackend.ENV_SWITCH, "1")
    a, b, c = sp.symbols("a b c")
    M = sp.Matrix([[2, sp.cos(a - b)], [sp.cos(a - b), c + sp.sin(a)]])
    system = mpvi.LagrangianSystem("PD for |sin a| < c - 1/2", [a, b], M, -sp.cos(a) / (b - 3),
                                   {c: "3/4"}, G64)
    check = kernels.step_check(system)
    sing = singularities(system)
    assert len(sing) == 2                       # b - 3, and det M = 3/2 + 2 sin a - cos(a - b)^2
    with G64.active():
        inside = [G64.num(1), G64.num("1/3")]
        signs = tuple(sing.signs(sing.values(G64.zero, inside, inside)))
        bound = G64.num(10)
        grid = [G64.num(k) / 8 for k in range(-40, 41, 3)] + [G64.num(3)]
        seen = set()
        for x in grid:
            for y in (G64.num("1/3"), G64.num(3), G64.num(-12)):
                q, p = [x, y], [G64.num(1), G64.num(-2)]
                python = (system.irregularity(None, q, q) is None
                          and max(abs(v) for v in q + p) <= bound
                          and sing.crossed(sing.values(G64.zero, q, q), signs) is None)
                assert check(G64.zero, q, p, bound, signs, None) is python, (x, y)
                seen.add(python)
        assert seen == {True, False}
        q = inside
        assert check(G64.zero, q, None, None, signs, None) is True
        assert check(G64.zero, [gmpy2.nan(), q[1]], None, None, signs, None) is False
        assert check(G64.zero, q, [gmpy2.inf(), G64.one], None, signs, None) is False
        assert check(G64.zero, q, [G64.num(11), G64.one], bound, signs, None) is False
        assert check(G64.zero, q, [G64.num(11), G64.one], None, signs, None) is True
        # the chord midpoint: b = 1/3 at the node, b = 7 at the previous one (midpoint 3.67)
        assert check(G64.zero, q, None, None, signs, [G64.num(1), G64.num(7)]) is False
        assert check(G64.zero, q, None, None, signs, [G64.num(1), G64.num(2)]) is True
        assert check(G64.zero, q, None, None, [0, signs[1]], None) is False   # the caller decides


def test_the_driver_reports_the_same_irregularity_with_the_compiled_check(monkeypatch):
    a = sp.Symbol("a")
    messages = []
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    for switch in ("0", "1"):
        monkeypatch.setenv(cbackend.ENV_SWITCH, switch)
        system = mpvi.LagrangianSystem(f"mass 1 + a/2 ({switch})", [a], sp.Matrix([[1 + a / 2]]),
                                       a, {}, G64)
        with pytest.raises(mpvi.IntegrationError, match=r"a \+ 2 \(from the denominator a \+ 2 "
                                                        r"in det M\) changed sign") as err:
            mpvi.solve(mpvi.Problem(system, ["0"], p0=["-1"]), "rk4", h="1/10", n=200)
        messages.append(str(err.value).replace(f"({switch})", ""))
    assert messages[0] == messages[1]


def test_a_stage_no_expression_needs_is_not_computed():
    """A kernel variant that reads only some of its stages computes only those (their MPFR
    operations were done for nothing, and the C compiler warned: set but not used)."""
    x, y, s0, s1, s2 = sp.symbols("x y s0 s1 s2")
    stages = [(s0, x * y), (s1, s0 + 3), (s2, x ** 2 - y)]
    source, _ = codegen.generate_source([[x, y]], [s1 * 2], G64, stages=stages)
    assert "_s1" in source and "_s0" in source and "_s2" not in source
    f = codegen.generate([[x, y]], [s1 * 2, s2 * 0 + 1], G64, stages=stages, compiled=False)
    with G64.active():
        assert f([G64.num(2), G64.num(5)]) == [26, 1]


@pytest.mark.parametrize("case", ["coupled", "hilbert", "tiny"])
def test_compiled_newton_solves_in_doubles_as_python_does(monkeypatch, case):
    """Systems of 6 and more unknowns solve their updates in doubles
    (mpvi.numbers.newton.refined_update, translated with the elimination on doubles): the
    compiled iteration gives Python's bits and iteration counts on a coupled nonlinear
    system of 8 unknowns, on Hilbert's 9 x 9 matrix (condition 5e11: doubles give four
    digits, refined as far as the iteration needs) and on equations scaled by 1e-400 (J
    below a double's range: the context's elimination, in both)."""
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "1")
    n = 9 if case == "hilbert" else 8
    xs, ks = sp.symbols(f"x0:{n}"), sp.symbols("k0:2")
    if case == "hilbert":
        res = [sum(sp.Rational(1, i + j + 1) * xs[j] for j in range(n)) - ks[0]
               + xs[i] ** 3 / 10 ** 6 for i in range(n)]
    else:
        scale = sp.Rational(1, 10 ** 400) if case == "tiny" else 1
        res = [scale * (xs[i] ** 2 + sp.sin(xs[(i + 1) % n]) * ks[0] - ks[1] + xs[i - 1] / 5)
               for i in range(n)]
    kernel = mpvi.engines.kernels.Kernel(list(xs), list(ks), [], res, G64)
    assert kernel.newton is not None
    with G64.active():
        K = [G64.num("0.4"), G64.num("1.3")]
        X0 = [G64.num(1) + G64.num(i) / 10 for i in range(n)]
    c, python = run_both(kernel, X0, K, [])
    assert c is not None and not isinstance(python, Exception)
    assert bits_equal(c[0], python[0]) and c[1] == python[1]
    with G64.active():
        assert max(abs(v) for v in kernel.equations(K, [])(c[0], False)) < G64.num(10) ** -55 * (
            G64.num(10) ** -400 if case == "tiny" else 1)
