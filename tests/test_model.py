"""Systems as models: one context-free symbolic model (mpvi.model.derivation) bound to any context.

A system built once binds to another context with no sympy derivation and no code printed
(counted by ``mpvi.model.derivation.DERIVATIONS`` and ``mpvi.compiled.codegen.PRINTS``), and gives bit for bit
the numbers of a system built from scratch there (every cache cleared)."""
from __future__ import annotations

import pickle

import pytest
import sympy as sp

import mpvi
from mpvi.compiled import codegen
from mpvi.engines import kernels
from mpvi.model import derivation as model
from mpvi.model import singular
from mpvi.numbers.context import PrecisionError
from mpvi.model.mechanics import LagrangianSystem
from mpvi.systems.double_pendulum import nonlinear_double_pendulum
from mpvi.systems.linear import LinearSystem

CONTEXTS = [lambda: mpvi.GMPContext(64), lambda: mpvi.GMPContext(84),
            lambda: mpvi.MPContext(40), lambda: mpvi.fp]


def _pendulum(ctx):
    """The double pendulum of top2025 with exact parameter values (strings)."""
    q1, q2 = sp.symbols("q1 q2")
    m1, m2, g, l1, l2 = sp.symbols("m1 m2 g l1 l2", positive=True)
    c = m2 * l1 * l2 * sp.cos(q1 - q2)
    M = sp.Matrix([[(m1 + m2) * l1 ** 2, c], [c, m2 * l2 ** 2]])
    V = -m1 * g * l1 * sp.cos(q1) - m2 * g * (l1 * sp.cos(q1) + l2 * sp.cos(q2))
    params = {m1: 1, m2: "1/2", g: "9.81", l1: "0.2485", l2: "3/10"}
    return LagrangianSystem("double pendulum", [q1, q2], M, V, params, ctx)


def _run(system):
    """Numbers of the system: a few steps of an implicit and an explicit method, and the
    derivatives at a node."""
    ctx = system.ctx
    pb = mpvi.Problem(system, ["0.7", "1/3"], p0=["1/5", 0])
    out = []
    for method in ("simpson", "rk4"):
        sol = mpvi.solve(pb, method, h="1/50", n=4)
        out += sol.q[-1].tolist() + sol.p[-1].tolist()
    q, v = ctx.asarray(["0.3", "-0.2"]), ctx.asarray(["1/7", "2"])
    out += [x for a in system.node_derivatives(q, v) for x in a.ravel().tolist()]
    out.append(system.hamiltonian(q, system.momentum(q, v)))
    return out


@pytest.fixture
def from_scratch(monkeypatch):
    """Build as in a fresh process: every model, printed source, generated function and
    kernel cache emptied."""
    def clear():
        for mod, name in ((model, "_MODELS"), (model, "_SYMBOLIC"), (codegen, "_PRINTED"),
                          (codegen, "_FUNCTIONS"), (kernels, "_KERNELS"),
                          (kernels, "_ANY_CONTEXT"), (singular, "_CACHE"),
                          (singular, "_FACTORS")):
            monkeypatch.setattr(mod, name, {})
    return clear


def _same(a, b):
    """Equal, number by number, and of the same kind (each mpmath context has its own
    number class: compared by name)."""
    return len(a) == len(b) and all(type(x).__name__ == type(y).__name__ and x == y
                                    for x, y in zip(a, b))


def test_one_model_bound_to_four_contexts_gives_the_numbers_of_systems_built_there(from_scratch):
    base = _pendulum(mpvi.GMPContext(64))
    _run(base)
    bound = {}
    derivations, prints = model.DERIVATIONS[0], codegen.PRINTS[0]
    for make in CONTEXTS:
        ctx = make()
        bound[ctx.name] = _run(base.with_context(ctx))
        if ctx.name == "gmp84":         # the code printed for 64 digits serves 84
            assert codegen.PRINTS[0] == prints
    assert model.DERIVATIONS[0] == derivations
    prints = codegen.PRINTS[0]          # and what mp and fp printed serves other digits
    for ctx in (mpvi.GMPContext(100), mpvi.MPContext(50)):
        _run(base.with_context(ctx))
    assert (model.DERIVATIONS[0], codegen.PRINTS[0]) == (derivations, prints)
    for make in CONTEXTS:
        from_scratch()
        ctx = make()
        fresh = _pendulum(ctx)
        assert fresh.model is not base.model
        assert _same(bound[ctx.name], _run(fresh)), ctx.name


def test_binding_derives_nothing_and_prints_no_code():
    g64, g84 = mpvi.GMPContext(64), mpvi.GMPContext(84)
    pb = nonlinear_double_pendulum(g64)
    mpvi.solve(pb, "lobatto", h="1/100", n=2)
    mpvi.solve(pb, "rk4", h="1/100", n=2)
    derivations, prints = model.DERIVATIONS[0], codegen.PRINTS[0]
    S = pb.system
    values = {s: g84.dump(x) for s, x in zip(S.param_symbols, S.param_values)}
    bound = S.with_context(g84, params=values)
    assert bound.model is S.model and bound.ctx is g84
    mpvi.solve(mpvi.Problem(bound, ["1/4", "1/3"], p0=[0, 0]), "lobatto", h="1/100", n=2)
    # what --check-digits does: the reproduction builds its systems again in the checking
    # context; the factory finds the model built at 64 digits
    again = nonlinear_double_pendulum(g84)
    assert again.system.model is S.model
    mpvi.solve(again, "lobatto", h="1/100", n=2)
    mpvi.solve(again, "rk4", h="1/100", n=2)
    assert (model.DERIVATIONS[0], codegen.PRINTS[0]) == (derivations, prints)


def test_binding_is_cached_per_context():
    g64, g84 = mpvi.GMPContext(64), mpvi.GMPContext(84)
    s = _pendulum(g64)
    assert s.with_context(g64) is s
    b = s.with_context(mpvi.GMPContext(84))
    assert b is s.with_context(g84) and b.ctx is not s.ctx
    assert b.with_context(g64) is s                  # the family shares one cache
    assert b.param_values == _pendulum(g84).param_values
    other = s.with_context(g84, params={sp.Symbol("g", positive=True): "9.8"})
    assert other is not b and other.model is s.model
    assert other.param_values[2] == g84.num("9.8")


def test_a_number_of_a_less_precise_context_is_refused_not_converted():
    g64, g84 = mpvi.GMPContext(64), mpvi.GMPContext(84)
    S = nonlinear_double_pendulum(g64).system          # parameters are 64-digit numbers
    with pytest.raises(PrecisionError, match=r"parameter m1.*64-digit.*with_context\(ctx, params="):
        S.with_context(g84)
    with pytest.raises(ValueError, match="x in params are not parameters"):
        S.with_context(g84, params={sp.Symbol("x"): 1})
    with pytest.raises(PrecisionError, match=r"system.with_context\(ctx\)"):
        mpvi.get_method("rk4").prepare(S, "1/10", g84)    # the door names the binding


def test_a_pickled_system_finds_its_model_and_binds_again():
    g64, g84 = mpvi.GMPContext(64), mpvi.GMPContext(84)
    s = _pendulum(g64)
    loaded = pickle.loads(pickle.dumps(s))
    assert loaded.model is s.model
    assert loaded.param_values == s.param_values
    assert loaded.with_context(g84).param_values == _pendulum(g84).param_values
    b = pickle.loads(pickle.dumps(s.with_context(g84)))
    assert b.ctx.name == g84.name and b.param_values == _pendulum(g84).param_values
    # parameters given as 64-digit numbers: the pickle's dump is not read at 84 digits
    S = pickle.loads(pickle.dumps(nonlinear_double_pendulum(g64).system))
    with pytest.raises(PrecisionError, match="parameter m1"):
        S.with_context(g84)
    M, K = [[2, "1/3"], ["1/3", 1]], [["3.5", 0], [0, "1/7"]]
    lin = pickle.loads(pickle.dumps(LinearSystem(M, K, g64)))
    assert lin.with_context(g84).Minv.ravel().tolist() == LinearSystem(M, K, g84).Minv.ravel().tolist()
    lin = pickle.loads(pickle.dumps(LinearSystem(g64.asarray(M), K, g64)))
    with pytest.raises(PrecisionError):
        lin.with_context(g84)


def test_a_linear_system_binds_with_its_matrices_read_again():
    M, K = [[2, "1/2"], ["1/2", 1]], [["3.5", 0], [0, "1/3"]]
    s = LinearSystem(M, K, mpvi.GMPContext(64))
    for make in CONTEXTS[1:]:
        ctx = make()
        b, fresh = s.with_context(ctx), LinearSystem(M, K, ctx)
        assert b.model is s.model and type(b) is LinearSystem
        assert _same(b.M.ravel().tolist() + b.K.ravel().tolist() + b.Minv.ravel().tolist(),
                     fresh.M.ravel().tolist() + fresh.K.ravel().tolist()
                     + fresh.Minv.ravel().tolist())
        b2 = s.with_context(ctx, params={sp.Symbol("k0_0"): "7/2"})
        assert b2.K[0, 0] == ctx.num("7/2") and b2.K[1, 1] == fresh.K[1, 1]
