"""Every registered method on systems of 1 to 6 degrees of freedom (and 8 under ``-m
slow``) in the gmp context, the fast path (generated kernels, generated Hamiltonian field)
against the reference path (assembled Newton systems, the reference field) in the same
context.

The nonlinear methods run on an N-link pendulum -- a q-dependent dense mass matrix
M_ij = (N - max(i, j)) cos(q_i - q_j), V = -sum (N - i) cos q_i (unit masses and lengths)
-- beyond the 3 degrees of freedom where the Hamiltonian field stops inverting M
symbolically.  The linear-only forms (axioms2024's Newmark and Simpson variants) run on a
chain of N coupled oscillators.  Both paths must take the same Newton iterations and agree
to a few units of eps per step: the kernels' start in doubles is off here
(``MPVI_NEWTON_START=0``), the reference path having none (tests/test_cdouble.py tests the
start).
"""
import numpy as np
import pytest
import sympy as sp

import mpvi
from mpvi import LagrangianSystem, LinearSystem, Problem, solve

from mpvi.engines.kernels import SYMBOLIC_INVERSE_DOF
from mpvi.model.singular import DETERMINANT_DOF

DOF = sorted({1, 2, SYMBOLIC_INVERSE_DOF, SYMBOLIC_INVERSE_DOF + 1, DETERMINANT_DOF,
              DETERMINANT_DOF + 1})
"""Both sides of each size where the code changes its way (the field's symbolic inverse of M
up to 3 dof, the singular factors' determinants up to 5): 1 to 6 degrees of freedom."""
LARGEST = 8
"""The largest size, where nothing changes any more (``-m slow``: it is 40 % of the time of
all sizes, the generated kernels of an 8-link pendulum; 7 is left out altogether)."""


@pytest.fixture(autouse=True)
def _no_start_in_doubles(monkeypatch):
    """Kernels bound without Newton's start in doubles, none reused from other tests."""
    from mpvi.engines import kernels
    monkeypatch.setenv(kernels.ENV_START, "0")
    monkeypatch.setattr(kernels, "_KERNELS", {})
    monkeypatch.setattr(kernels, "_ANY_CONTEXT", {})
STEPS = 2
LINEAR_ONLY = {"newmark", "simpson_v1"}
# method parameters of the runs (a cheaper quadrature where a method has one to choose)
PARAMS = {"lobatto": {"points": 3}, "gbs": {"levels": 4}}


def n_link(ctx, n):
    q = sp.symbols(f"q0:{n}")
    M = sp.Matrix(n, n, lambda i, j: (n - max(i, j)) * sp.cos(q[i] - q[j]))
    V = -sum((n - i) * sp.cos(q[i]) for i in range(n))
    return LagrangianSystem(f"{n}-link pendulum", q, M, V, {}, ctx)


def chain(ctx, n):
    K = [[2 if i == j else (-1 if abs(i - j) == 1 else 0) for j in range(n)] for i in range(n)]
    M = [[2 if i == j else (1 if abs(i - j) == 1 else 0) for j in range(n)] for i in range(n)]
    return LinearSystem(M, K, ctx, name=f"chain of {n}")


def run(method, n, fast):
    ctx = mpvi.GMPContext(30)
    ctx.kernels = fast
    linear = method in LINEAR_ONLY
    system = chain(ctx, n) if linear else n_link(ctx, n)
    q0 = [f"{(-1) ** i}/{10 + i}" for i in range(n)]
    m = mpvi.get_method(method)
    given = {"p0" if m.state == "qp" else "v0": [f"1/{20 + i}" for i in range(n)]}
    return solve(Problem(system, q0, **given), method, h="1/40", n=STEPS, **PARAMS.get(method, {}))


def check_sizes(method, sizes):
    for n in sizes:
        fast, ref = run(method, n, True), run(method, n, False)
        ctx = fast.ctx
        assert fast.q.shape == (STEPS + 1, n) and ctx.is_number(fast.q[-1][0])
        assert fast.stats.get("newton", {}).get("total_iterations") == \
            ref.stats.get("newton", {}).get("total_iterations"), n
        scale = max(abs(x) for x in np.ravel(ref.y)) + 1
        diff = max(abs(a - b) for a, b in zip(np.ravel(np.hstack([fast.q, fast.y])),
                                              np.ravel(np.hstack([ref.q, ref.y]))))
        assert diff <= 200 * STEPS * ctx.eps * scale, (n, float(diff))
        # and the run is not trivial: the state moved
        assert ctx.norm_inf(fast.q[-1] - fast.q[0]) > ctx.num("1e-4")


@pytest.mark.parametrize("method", sorted(mpvi.METHODS))
def test_every_method_runs_on_1_to_6_dof_and_the_fast_path_equals_the_reference(method):
    check_sizes(method, DOF)


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(mpvi.METHODS))
def test_every_method_runs_on_8_dof_and_the_fast_path_equals_the_reference(method):
    check_sizes(method, [LARGEST])


@pytest.mark.parametrize("kind", ["variation", "parabolic_el"])
def test_mutze_chain_rule_integrand_equals_the_path_substituted_one(kind):
    """The kernels of Mutze's action methods take derivatives of L and F at the path's
    (X, V) (chain rule); written out on the parabolic path they must equal eqs. (44)/(54)
    differentiated after substitution (mpvi.methods.mutze.action_integrand), integrand and
    a-Jacobian, on a 2-dof system with a q-dependent mass, a time- and velocity-dependent
    force."""
    from mpvi.compiled.codegen import TIME
    from mpvi.methods.mutze import S, _action_symbolic, action_integrand
    x, y, c, w = sp.symbols("x y c w")
    system = LagrangianSystem("test", [x, y], sp.Matrix([[1 + sp.sin(y) ** 2, 0], [0, 2]]),
                              sp.cos(x) * y ** 2, {c: "1/3", w: 2}, mpvi.MPContext(20),
                              force=lambda t, q, v: sp.Matrix([-c * v[0] * q[1] + sp.cos(w * t),
                                                               -c * v[1] ** 2]))
    X, V, R, J = _action_symbolic(system, kind)
    a, xs, vs = system.acceleration_symbols, system.coords, system.velocity_symbols
    path = {X[i]: xs[i] + vs[i] * S + a[i] * S ** 2 / 2 for i in range(2)}
    path.update({V[i]: vs[i] + a[i] * S for i in range(2)})
    old = action_integrand(system.lagrangian_expr, list(system.force_expr), xs, vs, a, TIME, kind)
    for i in range(2):
        assert sp.simplify(sp.expand(old[i] - R[i].xreplace(path))) == 0
        for j in range(2):
            assert sp.simplify(sp.expand(sp.diff(old[i], a[j]) - J[i][j].xreplace(path))) == 0
