"""Compiled Arb ball kernels (mpvi.compiled.carb): the generated kernels on flint.arb balls, in C.

Arb is deterministic: the same Arb calls on the same balls at the same precision give the
same balls.  The compiled kernels make the calls python-flint makes for the Python
kernel's operations (and, on the duals of certify's Jacobian walk, those of
mpvi.numbers.arb._Dual's methods), so every ball they return must be bit-identical (midpoint and
radius) to the Python kernel's -- checked here on every call certify makes on real runs
(midpoint, Simpson, RK4 on the pendulum, the paper's double pendulum and the Lagrange
top), on hand-made kernels with every function the translators know, and at a point
against an independent 200-digit mpmath evaluation of the values and derivatives.  Then
the refusals: another FLINT version, another ``flint.arb`` size, a module whose probe
disagrees, arguments that are not balls or duals, MPVI_COMPILED=0.
"""
from __future__ import annotations

import ast

import flint
import mpmath
import pytest
import sympy as sp

import mpvi
from mpvi.compiled import carb
from mpvi.compiled import cbackend
from mpvi.compiled import codegen
from mpvi.engines import kernels
from mpvi.numbers.arb import _Dual, _DualContext
from mpvi.proof.certify import certify
from mpvi.systems.double_pendulum import nonlinear_double_pendulum
from mpvi.systems.lagrange_top import table3_top


def _available():
    tc = carb.toolchain()
    return tc.get("error")


pytestmark = pytest.mark.skipif(_available() is not None,
                                reason=f"compiled ball kernels unavailable: {_available()}")


def pendulum(ctx):
    q = sp.Symbol("q")
    system = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
    return mpvi.Problem(system, ["1/2"], v0=[0]), "1/10"


def double_pendulum(ctx):
    return nonlinear_double_pendulum(ctx), "1/100"


def top(ctx):
    return table3_top(ctx), "1/1000"


def three_body(ctx):
    """Three unit masses in the plane, V = -sum 1/r_ij: powers r^(-3/2) in the field (a
    dual to a constant non-integer power) and six degrees of freedom (a mass matrix of
    numbers, inverted in the generated field on balls)."""
    q = sp.symbols("x1 y1 x2 y2 x3 y3")
    V = -sum(1 / sp.sqrt((q[2 * i] - q[2 * j]) ** 2 + (q[2 * i + 1] - q[2 * j + 1]) ** 2)
             for i in range(3) for j in range(i + 1, 3))
    system = mpvi.LagrangianSystem("three bodies", list(q), sp.eye(6), V, {}, ctx)
    return mpvi.Problem(system, [1, 0, "-1/2", "7/8", "-1/2", "-7/8"],
                        p0=[0, "1/2", "-2/5", "-1/4", "2/5", "-1/4"]), "1/20"


@pytest.fixture
def fresh_kernels(monkeypatch):
    """Kernels bound anew in this test (not taken from the process's caches), compiled
    at their first call, every call run compiled -- never handed over to Python -- and in
    Python, and compared."""
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    monkeypatch.setattr(kernels, "_KERNELS", {})
    monkeypatch.setattr(codegen, "_FUNCTIONS", {})
    calls = {"compiled": 0, "names": set(), "duals": 0, "balls": 0}

    def checked(python, compiled):
        def kernel(*groups):
            got, want = compiled(flint.ctx.prec, *groups), python(*groups)
            assert got is not None, f"{python.__name__} handed over to Python"
            assert len(got) == len(want)
            for i, (a, b) in enumerate(zip(got, want)):
                assert carb.same(a, b), (python.__name__, i, a, b)
            calls["compiled"] += 1
            calls["names"].add(python.__name__)
            calls["duals" if any(isinstance(v, _Dual) for v in got) else "balls"] += 1
            return got
        return kernel
    monkeypatch.setattr(carb, "_bind", checked)
    return calls


@pytest.mark.parametrize("build", [pendulum, double_pendulum, top, three_body])
@pytest.mark.parametrize("method", ["midpoint", "simpson", "rk4"])
def test_certify_gets_the_same_balls_from_the_compiled_kernels(fresh_kernels, build, method):
    problem, h = build(mpvi.GMPContext(30))
    sol = mpvi.solve(problem, method, h=h, n=3)
    cert = certify(sol)
    assert cert.complete, cert
    assert fresh_kernels["compiled"] > 0
    expected = {"hamiltonian_field"} if method == "rk4" else {"residual_and_jacobian",
                                                              "residual"}
    assert expected <= fresh_kernels["names"], fresh_kernels["names"]
    assert fresh_kernels["duals"] > 0 and fresh_kernels["balls"] > 0


def test_the_certificate_is_the_same_with_and_without_compiled_ball_kernels(monkeypatch):
    """A whole certify (point steps on balls, their Krawczyk tests) on the compiled
    kernels and on the Python ones: the same enclosures, bit for bit."""
    problem, h = double_pendulum(mpvi.GMPContext(30))
    sol = mpvi.solve(problem, "simpson", h=h, n=4)
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    monkeypatch.setattr(kernels, "_KERNELS", {})
    fast = certify(sol)
    monkeypatch.setattr(kernels, "_KERNELS", {})
    monkeypatch.setenv("MPVI_COMPILED_BALLS", "0")
    slow = certify(sol)
    assert fast.complete and slow.complete
    for a, b in zip(fast.q + fast.y, slow.q + slow.y):
        assert all(carb.same(x, y) for x, y in zip(a, b))


def _every_function_kernel(ctx):
    x, y = sp.symbols("x y")
    exprs = [sp.sin(x) * y ** 2 + sp.Rational(1, 3) * sp.cos(x - y),
             sp.exp(x) / y - 2 * x + sp.sqrt(y), sp.atan2(y, x), -x * y + sp.pi,
             sp.tanh(x) + sp.asin(x / 4) + sp.acos(x / 5) + sp.log(y) + sp.atan(x)
             + sp.sinh(y) + sp.cosh(x) + sp.tan(y), abs(x - y), y ** -3 + 1 / (x + 2), 0, 3]
    source, table = codegen.generate_source([[x, y]], exprs, ctx, "every")
    python = codegen.function(source, table, ctx, "every", compiled=False)
    compiled = carb.compile_function(python, source, ctx, table)
    assert compiled is not None, carb.status()
    return exprs, (x, y), python, compiled


@pytest.mark.parametrize("args", [
    ("3/10", "17/10"), ("-1/7", "2/3"),
    ("2^200", "17/10"),                     # sin of a huge ball: nan, as ArbContext's
    ("0 +/- 1", "-1"),                      # wide and out of domain: nan or wide balls
])
def test_every_function_gives_the_same_balls(args):
    ctx = mpvi.ArbContext(30)
    _, _, python, compiled = _every_function_kernel(ctx)
    with ctx.active():
        balls = [flint.arb(2) ** 200 if a == "2^200" else
                 flint.arb(a) if "+/-" in a else ctx.num(a) for a in args]
        balls[0] = balls[0] + flint.arb(0, flint.arb(2) ** -90)      # a radius too
        got, want = compiled(balls), python(balls)
    assert [type(v) for v in got] == [type(v) for v in want]
    assert all(carb.same(a, b) for a, b in zip(got, want)), (got, want)


def test_the_compiled_balls_contain_a_200_digit_evaluation():
    ctx = mpvi.ArbContext(30)
    exprs, symbols, _, compiled = _every_function_kernel(ctx)
    point = [sp.Rational(3, 10), sp.Rational(17, 10)]
    with ctx.active():
        got = compiled([ctx.num(f"{v.p}/{v.q}") for v in point])
    caller = flint.ctx.prec
    try:
        with mpmath.workdps(200):
            for ball, e in zip(got, exprs):
                exact = sp.lambdify(symbols, e, "mpmath")(*[mpmath.mpf(v.p) / v.q for v in point])
                if isinstance(ball, int):
                    assert ball == exact
                    continue
                flint.ctx.prec = 700
                assert ball.rad() < flint.arb(10) ** -25 and ball.contains(
                    flint.arb(mpmath.nstr(exact, 200))), (e, ball, exact)
                flint.ctx.prec = caller
    finally:
        flint.ctx.prec = caller


def _every_function_on_duals(ctx):
    x, y = sp.symbols("x y")
    exprs = [sp.sin(x) * y ** 2 + sp.Rational(1, 3) * sp.cos(x - y),
             sp.exp(x) / y - 2 * x + sp.sqrt(y), sp.atan2(y, x), -x * y + sp.pi,
             sp.tanh(x) + sp.asin(x / 4) + sp.acos(x / 5) + sp.log(y) + sp.atan(x)
             + sp.sinh(y) + sp.cosh(x) + sp.tan(y), 1 - x, 2 / y, x - 3, y ** -3 + x ** 3,
             (x ** 2 + y ** 2) ** sp.Rational(-3, 2), y ** x,      # a constant exponent, a dual one
             0, 3]
    source, table = codegen.generate_source([[x, y]], exprs, ctx, "every_dual")
    python = codegen.function(source, table, ctx, "every_dual", compiled=False)
    compiled = carb.compile_function(python, source, ctx, table)
    assert compiled is not None, carb.status()
    return exprs, (x, y), python, compiled


def _seeded(value, seeds):
    one, zero = flint.arb(1), flint.arb(0)
    return _Dual(value, tuple(one if s else zero for s in seeds) if seeds else ())


@pytest.mark.parametrize("seeds", [((1, 0), (0, 1)), ((), (0, 1)), ((1, 0), ()), ((), ()),
                                   ((1, 1, 0), (0, 1, 1))])
@pytest.mark.parametrize("huge", [False, True])
def test_every_function_on_duals_gives_the_same_balls(seeds, huge):
    """The compiled dual kernel against _Dual's own methods: derivatives on both, one or
    no operand, and sin of a huge ball (nan, a constant)."""
    ctx = _DualContext(30)
    _, _, python, compiled = _every_function_on_duals(ctx)
    with ctx.active():
        x = flint.arb(2) ** 200 if huge else ctx.balls.num("3/10") + flint.arb(0, flint.arb(2) ** -90)
        args = [_seeded(x, seeds[0]), _seeded(ctx.balls.num("17/10"), seeds[1])]
        got, want = compiled(args), python(args)
    assert [type(v) for v in got] == [type(v) for v in want]
    assert all(carb.same(a, b) for a, b in zip(got, want)), (got, want)


def test_the_compiled_derivatives_contain_200_digit_derivatives():
    ctx = _DualContext(30)
    exprs, symbols, _, compiled = _every_function_on_duals(ctx)
    point = [sp.Rational(3, 10), sp.Rational(17, 10)]
    with ctx.active():
        got = compiled([_seeded(ctx.balls.num(f"{v.p}/{v.q}"), s)
                        for v, s in zip(point, ((1, 0), (0, 1)))])
    caller = flint.ctx.prec
    try:
        with mpmath.workdps(200):
            at = [mpmath.mpf(v.p) / v.q for v in point]
            for dual, e in zip(got, exprs):
                if isinstance(dual, int):
                    assert dual == e
                    continue
                wanted = [e] + [sp.diff(e, s) for s in symbols]
                for ball, w in zip([dual.v, *dual.d], wanted):
                    exact = sp.lambdify(symbols, w, "mpmath")(*at)
                    flint.ctx.prec = 700
                    assert ball.rad() < flint.arb(10) ** -25 and ball.contains(
                        flint.arb(mpmath.nstr(exact, 200))), (w, ball, exact)
                    flint.ctx.prec = caller
    finally:
        flint.ctx.prec = caller


def test_arguments_that_are_not_balls_run_the_python_kernel():
    ctx = mpvi.ArbContext(30)
    x, y = sp.symbols("x y")
    source, table = codegen.generate_source([[x, y]], [x * y + 1], ctx, "mixed")
    python = codegen.function(source, table, ctx, "mixed", compiled=False)
    module = carb._module(carb._plan(source, ctx, table))
    compiled = carb.compile_function(python, source, ctx, table)
    with ctx.active():
        mixed = [2, 3]                          # Python computes 2 * 3 + 1 with ints
        assert module.f(ctx.prec, mixed) is None
        assert compiled(mixed) == [7] and type(compiled(mixed)[0]) is int
        balls = [ctx.num(2), ctx.num(3)]
        assert module.f(ctx.prec, balls)[0].repr() == python(balls)[0].repr()


def test_duals_the_module_cannot_read_run_the_python_kernel():
    """A plain ball among the duals, or derivative tuples of two lengths (which Python's
    zip would cut): the compiled dual kernel hands over to the Python one."""
    ctx = _DualContext(30)
    x, y = sp.symbols("x y")
    source, table = codegen.generate_source([[x, y]], [x * y + 1], ctx, "mixed_dual")
    python = codegen.function(source, table, ctx, "mixed_dual", compiled=False)
    module = carb._module(carb._plan(source, ctx, table))
    with ctx.active():
        a, b = ctx.balls.num(2), ctx.balls.num(3)
        for args in ([_seeded(a, (1, 0)), b], [_seeded(a, (1, 0)), _seeded(b, (0, 1, 0))]):
            assert module.f(ctx.prec, args) is None
        good = [_seeded(a, (1, 0)), _seeded(b, (0, 1))]
        assert all(carb.same(u, v) for u, v in zip(module.f(ctx.prec, good), python(good)))


def test_a_call_made_during_a_call_runs_the_python_kernel(monkeypatch):
    """The module's temporaries serve one call at a time: a call made while one runs (here
    from _Dual.__init__, which the module runs to make its results) gets None -- Python
    computes it -- and the outer call's results are untouched."""
    ctx = _DualContext(30)
    x, y = sp.symbols("x y")
    source, table = codegen.generate_source([[x, y]], [x * y + 1, x - y], ctx, "nested")
    python = codegen.function(source, table, ctx, "nested", compiled=False)
    module = carb._module(carb._plan(source, ctx, table))
    with ctx.active():
        args = [_seeded(ctx.balls.num(2), (1, 0)), _seeded(ctx.balls.num(3), (0, 1))]
        want = python(args)
        inner, init = [], _Dual.__init__
        other = [_seeded(ctx.balls.num(5), (1, 0)), _seeded(ctx.balls.num(7), (0, 1))]

        def nested(self, v, d):
            init(self, v, d)
            if not inner:
                inner.append("calling")
                inner[0] = module.f(ctx.prec, other)
        monkeypatch.setattr(_Dual, "__init__", nested)
        got = module.f(ctx.prec, args)
        monkeypatch.undo()
    assert inner == [None]
    assert all(carb.same(u, v) for u, v in zip(got, want))


def test_another_flint_or_another_ball_size_is_refused(monkeypatch):
    ctx = mpvi.ArbContext(30)
    for name, value, why in (("VERIFIED_FLINT", "9.9.9", "verified for FLINT 9.9.9 only"),
                             ("ARB_BASICSIZE", 80, "not the 80 whose layout")):
        monkeypatch.setattr(carb, name, value)
        monkeypatch.setattr(carb, "_status", {})
        x = sp.Symbol("x")
        source, table = codegen.generate_source([[x]], [x * x + 1], ctx, "square")
        python = codegen.function(source, table, ctx, "square", compiled=False)
        assert carb.compile_function(python, source, ctx, table) is None
        assert carb.accelerated(python, source, ctx, table) is python
        assert why in carb.status()["toolchain"]["error"]
        monkeypatch.undo()


def test_a_loaded_libflint_of_another_version_is_refused(monkeypatch):
    monkeypatch.setattr(carb, "_status", {})
    assert carb._library_version(carb._libflint()) == carb.VERIFIED_FLINT
    monkeypatch.setattr(carb, "_library_version", lambda lib: "3.7.0")
    assert "is FLINT 3.7.0" in carb.toolchain()["error"]


@pytest.mark.parametrize("switch", ["MPVI_COMPILED", "MPVI_COMPILED_BALLS"])
def test_the_switches_turn_them_off(monkeypatch, switch):
    ctx = mpvi.ArbContext(30)
    x = sp.Symbol("x")
    source, table = codegen.generate_source([[x]], [x * x + 1], ctx, "square")
    python = codegen.function(source, table, ctx, "square", compiled=False)
    assert carb.accelerated(python, source, ctx, table) is not python
    monkeypatch.setenv(switch, "0")
    assert carb.accelerated(python, source, ctx, table) is python
    assert not cbackend.balls_active(ctx)


def test_a_module_that_reads_balls_wrongly_is_refused(monkeypatch):
    """The probe compares the module's reading and writing of balls with python-flint's:
    a module whose answers differ is not used (here its probe is made to lie)."""
    ctx = mpvi.ArbContext(30)
    x = sp.Symbol("x")
    source, table = codegen.generate_source([[x]], [x * x + 7], ctx, "lying")
    python = codegen.function(source, table, ctx, "lying", compiled=False)
    plan = carb._plan(source, ctx, table)
    module = carb._module(plan)
    assert module is not None and carb._verified(module) is None

    class Lying:
        f = module.f

        @staticmethod
        def probe(a, b, prec):
            total, a3, b3, mid = module.probe(a, b, prec)
            return total + 1, a3, b3, mid
    assert "its sum of" in carb._verified(Lying)
    monkeypatch.setattr(carb, "_MODULES", {})
    monkeypatch.setattr(carb, "_status", dict(carb._status))
    monkeypatch.setattr(carb.cbackend, "_load_or_build", lambda *a: Lying)
    monkeypatch.setattr(Lying, "setup", lambda *a: None, raising=False)
    assert carb.compile_function(python, source, ctx, table) is None
    assert "does not read balls as python-flint does" in carb.status()["refused"]


@pytest.mark.parametrize("context", [mpvi.ArbContext, _DualContext])
def test_the_modules_compile_without_a_warning(tmp_path, context):
    """Both kinds (balls: mpvi_arb.h; duals: mpvi_dual.h too) under -Wall -Wextra -Werror,
    with a scalar argument, a parameterless group and an int result."""
    import subprocess
    from pathlib import Path
    ctx = context(30)
    x, y, t = sp.symbols("x y t")
    source, table = codegen.generate_source([[x, y], t, []], [sp.sin(x) * y ** 2 - t / 3, 0],
                                            ctx, "warnings")
    name, csource, tc = carb._plan(source, ctx, table)[:3]
    c = tmp_path / "module.c"
    c.write_text(csource)
    cmd = [tc["cc"], *cbackend._CFLAGS, "-Werror", str(c), "-o", str(tmp_path / "module.so"),
           f"-I{Path(mpvi.__file__).parent / 'compiled' / 'csrc'}", *[f"-isystem{d}" for d in tc["includes"]],
           *tc["link"]]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_the_layout_probe_passes_here_and_refuses_a_wrong_layout():
    """The arb_struct of mpvi_flint.h is checked against the loaded libflint by a probe
    compiled here (mpvi_flintprobe.h): FLINT's own vectors read back at the assumed
    stride, FLINT's radius at the assumed offset; a wrong size or offset is refused."""
    tc = carb.toolchain()
    assert carb.layout_problem(tc) is None
    for size, offset, why in ((40, 24, "stride"), (56, 32, "stride"), (64, 32, "stride"),
                              (48, 24, "offset"), (48, 16, "stride"),
                              (48, 40, "impossible")):
        problem = carb.layout_problem(tc, size, offset)
        assert problem is not None and why in problem, (size, offset, problem)


def test_a_wrong_layout_refuses_the_ball_kernels_once(monkeypatch, capsys):
    ctx = mpvi.ArbContext(30)
    probe = carb.layout_problem
    monkeypatch.setattr(carb, "layout_problem", lambda tc: probe(tc, 56, 32))
    monkeypatch.setattr(carb, "_status", {})
    x = sp.Symbol("x")
    source, table = codegen.generate_source([[x]], [x * x + 1], ctx, "square")
    python = codegen.function(source, table, ctx, "square", compiled=False)
    for _ in range(2):
        assert carb.compile_function(python, source, ctx, table) is None
        assert carb.accelerated(python, source, ctx, table) is python
    assert "stride" in carb.status()["toolchain"]["error"]
    assert capsys.readouterr().err.count("not that of the libflint") == 1
    ball = python([mpvi.ArbContext(30).num(3)])
    assert carb.same(ball[0], ctx.num(10))


def test_flint_headers_are_used_only_of_the_loaded_version(monkeypatch, tmp_path):
    (tmp_path / "flint").mkdir()
    (tmp_path / "flint" / "flint.h").write_text('#define FLINT_VERSION "9.9.9"\n')
    (tmp_path / "flint" / "arb.h").write_text("/* arb */\n")
    monkeypatch.setenv("CPATH", str(tmp_path))
    assert carb._flint_headers("9.9.9") == str(tmp_path)
    assert carb._flint_headers(carb.VERIFIED_FLINT) != str(tmp_path)


def test_every_dual_rule_is_translated_from_its_one_definition():
    """DUAL_RULES is the one definition of the functions on duals: every function the ball
    kernels know has a rule, the Python functions are those rules, and each rule's C is
    translated from the rule's own lambdas (a construct without an Arb call is refused)."""
    from mpvi.numbers import arb as arb_module
    rules = carb._dual_rules()
    assert set(rules) == set(arb_module.DUAL_RULES) == {*carb._UNARY, *carb._PERIODIC, "atan2"}
    for name, (value, derivative) in rules.items():
        tr = carb._RuleTranslator(lambda n: f"z{n}")
        c = "\n".join(tr.function(name, value, derivative))
        assert f"da_rule_{name}(" in c and ("da_chain(" in c or "da_combine(" in c)
        assert f"arb_{name}(tv[i], " in c                # the value, into the temporary
    bad = ast.parse("(lambda x: x.gamma(), lambda x, v: v)").body[0].value.elts
    with pytest.raises(carb.Unsupported):
        carb._RuleTranslator(str).function("gamma", *bad)
    x = _Dual(flint.arb(1) / 3, (flint.arb(1), flint.arb(2)))
    for name, (value, slope) in arb_module.DUAL_RULES.items():
        if name != "atan2":
            got = arb_module._DUAL_FUNCTIONS[name](x)
            v = value(x.v)
            s = slope(x.v, v)
            assert carb.same(got.v, v) and all(carb.same(a, s * b) for a, b in zip(got.d, x.d))


def test_every_dual_operation_is_translated_from_its_one_definition():
    """DUAL_ARITHMETIC, DUAL_NEGATION, DUAL_POWER and DUAL_CHAIN are the one definition of
    the arithmetic on duals:
    the C of each operation is translated from the table's lambdas (a rule edited in a
    copy of the table changes the generated C), the _Dual methods compute what the
    lambdas compute (an operand's tuple shared where the table says SHARE)."""
    from mpvi.numbers import arb as arb_module
    table = dict(carb._dual_arithmetic())            # a copy: the cached table stays whole
    assert set(table) == {*arb_module.DUAL_ARITHMETIC, "neg", "pow", "chain"}
    chain = table.pop("chain")
    c = "\n".join(carb._ArithmeticTranslator(str).chain(chain))
    assert "static void da_chain(" in c and "static void da_combine(" in c
    edited = (ast.parse("lambda fa, fb, x, y: fa * x - fb * y").body[0].value, *chain[1:])
    assert "arb_sub(td[i] + j, s1, s2, prec);" in "\n".join(
        carb._ArithmeticTranslator(str).chain(edited))
    calls = {"add": "arb_add", "sub": "arb_sub", "rsub": "arb_add", "mul": "arb_mul",
             "div": "arb_div", "neg": "arb_neg_round", "pow": "arb_pow"}
    for name, entry in table.items():
        c = "\n".join(carb._ArithmeticTranslator(lambda n: f"z{n}").operation(name, entry))
        assert f"static void da_{name}(int i, dual a" in c
        assert f"{calls[name]}(tv[i], " in c           # the value, into the temporary
    mul = list(table["mul"])
    before = "\n".join(carb._ArithmeticTranslator(str).operation("mul", tuple(mul)))
    mul[3] = ast.parse("lambda fa, fb, x, y: fa * x - fb * y").body[0].value
    after = "\n".join(carb._ArithmeticTranslator(str).operation("mul", tuple(mul)))
    assert before != after and "arb_sub(td[i] + j" in after and "arb_sub(" not in before
    sub = list(table["sub"])
    sub[4] = ast.parse("lambda x: -x").body[0].value       # no longer shared: computed
    assert "T[i].d = a.d;" not in "\n".join(carb._ArithmeticTranslator(str).operation(
        "sub", tuple(sub)))
    bad = list(table["add"])
    bad[3] = ast.parse("lambda x, y: x.gamma()").body[0].value
    with pytest.raises(carb.Unsupported):
        carb._ArithmeticTranslator(str).operation("add", tuple(bad))
    one = flint.arb(1)
    a = _Dual(one / 3, (one / 7, one * 2))
    b = _Dual(one * 5 / 11, (one / 13, -one))
    c = _Dual(one / 9, ())
    methods = {"add": "__add__", "sub": "__sub__", "mul": "__mul__", "div": "__truediv__"}
    for name, method in methods.items():
        value, fa, fb, both, left, right = arb_module.DUAL_ARITHMETIC[name]
        for p, q in ((a, b), (a, c), (c, b)):
            got = getattr(p, method)(q)
            v = value(p.v, q.v)
            assert carb.same(got.v, v)
            factors = () if fa is None else (fa(p.v, q.v, v), fb(p.v, q.v, v))
            if p.d and q.d:
                want = [both(*factors, x, y) for x, y in zip(p.d, q.d)]
            elif p.d:
                want = p.d if left is arb_module.SHARE else [left(*factors[:1], x) for x in p.d]
                assert (got.d is p.d) == (left is arb_module.SHARE)
            else:
                want = q.d if right is arb_module.SHARE else [right(*factors[1:], y) for y in q.d]
                assert (got.d is q.d) == (right is arb_module.SHARE)
            assert len(got.d) == len(want) and all(carb.same(s, t) for s, t in zip(got.d, want))
    value, slope = arb_module.DUAL_POWER
    for k in (2, -3, one / 3):
        got = a ** k
        v = value(a.v, k)
        s = slope(a.v, k, v)
        assert carb.same(got.v, v) and all(carb.same(g, s * x) for g, x in zip(got.d, a.d))
    assert a ** 1 is a and carb.same(a ** 0, _Dual(one, ()))


def _arithmetic_expressions(count, seed):
    """Random expressions of +, -, *, /, unary minus, int operands on either side and
    integer powers over x, y, z (seeded: the same expressions every run)."""
    import random
    rnd = random.Random(seed)
    symbols = sp.symbols("x y z")

    def expr(depth):
        if depth == 0 or rnd.random() < 0.2:
            return rnd.choice(symbols) if rnd.random() < 0.8 else sp.Integer(rnd.randint(1, 9))
        a, b = expr(depth - 1), expr(depth - 1)
        op = rnd.choice("+-*/n^")
        if op == "n":
            return -a
        if op == "^":
            return a ** rnd.choice([2, 3, -1, -2])
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / (b + sp.Rational(7, 3))}[op]
    exprs = [expr(4) for _ in range(count)]
    return symbols, [e for e in exprs if e.free_symbols]


@pytest.mark.parametrize("dps", [8, 15, 30, 64, 130])
def test_the_compiled_arithmetic_gives_the_python_balls_at_every_precision(dps):
    """The generated C of DUAL_ARITHMETIC against the _Dual methods made of the same lambdas,
    bit for bit (value and derivative balls, midpoint and radius), on many random
    expressions, at several precisions, with derivatives on every, some or no argument
    (wide balls: radii that differ with the precision)."""
    ctx = _DualContext(dps)
    symbols, exprs = _arithmetic_expressions(40, seed=dps)
    source, table = codegen.generate_source([list(symbols)], exprs, ctx, f"arith{dps}")
    python = codegen.function(source, table, ctx, f"arith{dps}", compiled=False)
    compiled = carb.compile_function(python, source, ctx, table)
    assert compiled is not None, carb.status()
    with ctx.active():
        points = [ctx.balls.num(t) + flint.arb(0, flint.arb(2) ** -(2 * dps))
                  for t in ("3/10", "17/10", "-5/7")]
        for seeds in (((1, 0, 0), (0, 1, 0), (0, 0, 1)), ((1, 1), (), (0, 1)), ((), (), ())):
            args = [_seeded(p, s) for p, s in zip(points, seeds)]
            got, want = compiled(args), python(args)
            assert [type(v) for v in got] == [type(v) for v in want]
            assert all(carb.same(g, w) for g, w in zip(got, want)), (seeds, got, want)
