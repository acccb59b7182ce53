"""The Gauss-Legendre variational integrators (mpvi/methods/gauss.py), a method family
declared in one file and found by the registry with no other edit (issue 37, acceptance
3): checked here independently of the suite's loops over METHODS -- the order 2 s on a
nonlinear pendulum, the symplecticity defect, the modified equation's first correction at
h^(2 s), one point = the midpoint variational integrator bit for bit."""
import sys
import textwrap

import gmpy2
import numpy as np
import pytest
import sympy as sp

import mpvi
from mpvi import METHODS, GMPContext, LagrangianSystem, MPContext, Problem, fit_order, solve
from mpvi.analysis.measures import central_differences
from mpvi.analysis.modified import check_hamiltonian, modified_equation

C64 = MPContext(64)


def pendulum(ctx):
    th = sp.Symbol("theta")
    return LagrangianSystem("pendulum", [th], sp.Matrix([[1]]), -sp.cos(th), {}, ctx)


def double_pendulum(ctx):
    """Two degrees of freedom with a position-dependent mass matrix."""
    a, b = sp.symbols("a b")
    M = sp.Matrix([[2, sp.cos(a - b)], [sp.cos(a - b), 1]])
    return LagrangianSystem("double pendulum", [a, b], M, -2 * sp.cos(a) - sp.cos(b), {}, ctx)


def test_a_scheme_module_is_discovered_with_no_other_edit(tmp_path, monkeypatch):
    """A file in the package's path that registers a method is imported by the discovery
    and its method is a name of mpvi.methods, with no list to edit."""
    import mpvi.methods as schemes
    (tmp_path / "zz_demo_family.py").write_text(textwrap.dedent('''
        from mpvi.methods.base import Method, register
        from mpvi.methods.midpoint import prepare

        zz_demo = register(Method(name="zz_demo", label="demo", state="qp", order=2,
                                  symplectic=True, implicit=True, reference="test",
                                  prepare=prepare))
    '''))
    monkeypatch.setattr(schemes, "__path__", [*schemes.__path__, str(tmp_path)])
    monkeypatch.delitem(METHODS, "zz_demo", raising=False)
    try:
        found = schemes._discover()
        assert METHODS["zz_demo"] is found["zz_demo"]
        assert set(found) >= {"gauss", "lobatto", "midpoint", "simpson", "zz_demo"}
    finally:
        METHODS.pop("zz_demo", None)
        sys.modules.pop("mpvi.methods.zz_demo_family", None)


def test_the_registry_names_are_derived_from_the_modules():
    import mpvi.methods as schemes
    names = set(schemes.__all__) - {"METHODS", "Method", "StabilityError", "State",
                                    "StepResult", "get_method", "register"}
    assert names == set(METHODS)
    assert all(getattr(schemes, n) is METHODS[n] for n in names)
    assert schemes.gauss is mpvi.get_method("gauss")


@pytest.mark.parametrize("ctx", [MPContext(64), GMPContext(64)], ids=["reference", "kernels"])
def test_one_gauss_point_is_the_midpoint_vi_bit_for_bit(ctx):
    """P_1 through q_j, q_{j+1} with the 1-point Gauss rule is the midpoint discrete
    Lagrangian of top2025 App. B: the same tables, the same Newton, the same bits."""
    problem = Problem(double_pendulum(ctx), ["1/2", "1"], v0=["0", "-1/4"])
    a = solve(problem, "midpoint", h="1/10", n=20)
    b = solve(problem, "gauss", h="1/10", n=20, points=1)
    for k in ("q", "p"):
        x, y = getattr(a, k).ravel(), getattr(b, k).ravel()
        assert all(u == v and str(u) == str(v) for u, v in zip(x, y)), k
    assert a.stats["newton"] == b.stats["newton"]
    assert METHODS["gauss"].order_for(points=1) == 2


def test_the_compiled_kernel_steps_gauss_bit_for_bit_with_python(monkeypatch):
    """s = 3 (two internal points): the compiled and the Python kernels agree to the bit."""
    from mpvi.compiled import cbackend
    G64 = GMPContext(64)
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "1")
    runs = []
    for switch in ("0", "1"):
        monkeypatch.setenv(cbackend.ENV_SWITCH, switch)
        problem = Problem(double_pendulum(G64), ["1/2", "1"], v0=["0", "-1/4"])
        runs.append(solve(problem, "gauss", h="1/20", n=8, points=3))
    for k in ("q", "p"):
        x, y = (list(getattr(r, k).ravel()) for r in runs)
        assert all(isinstance(u, type(gmpy2.mpfr(0))) and u == v for u, v in zip(x, y)), k


@pytest.mark.parametrize("points", [1, 2, 3])
def test_gauss_is_of_order_2s_on_the_nonlinear_pendulum(points):
    """Errors at T = 4 against an order-32 GBS reference (error < 1e-45)."""
    s, T = pendulum(C64), C64.num(4)
    problem = Problem(s, ["1.2"], p0=["0"])
    ref = solve(problem, "gbs", h=T / 80, n=80, levels=16)
    hs, errs = [], []
    for N in (20, 40, 80):
        sol = solve(problem, "gauss", h=T / N, n=N, points=points)
        if points > 1:
            assert sol.internal.shape == (N, points - 1, 1)
        hs.append(T / N)
        errs.append(max(abs(sol.q[-1][0] - ref.q[-1][0]), abs(sol.p[-1][0] - ref.p[-1][0])))
    assert errs[0] > errs[1] > errs[2] > 0
    order = fit_order(C64, hs, errs)
    assert abs(order - 2 * points) < 0.2, order
    assert METHODS["gauss"].order_for(points=points) == 2 * points


@pytest.mark.parametrize("points", [1, 2, 3])
def test_gauss_is_symplectic_on_a_position_dependent_mass(points):
    """Phi^T J Phi - J of the one-step map (q, p) -> (q1, p1), Phi by central differences
    at 100 digits (difference step 1e-40): at round-off, about 1e-60."""
    ctx = MPContext(100)
    th = sp.Symbol("theta")
    system = LagrangianSystem("swing", [th], sp.Matrix([[2 + sp.cos(th)]]), -sp.cos(th), {}, ctx)
    stepper = METHODS["gauss"].prepare(system, ctx.num("0.3"), ctx, points=points)

    def step(z):
        r = stepper(ctx.zero, z[:1], z[1:])
        return np.concatenate([r.q, r.y])
    Phi = central_differences(step, ctx.asarray(["1.1", "0.4"]), ctx, ctx.num(10) ** -40).T
    J = np.array([[ctx.zero, ctx.one], [-ctx.one, ctx.zero]], dtype=object)
    assert ctx.norm_inf(Phi.T @ J @ Phi - J) <= ctx.num(10) ** -55


@pytest.mark.parametrize("points", [1, 2, 3])
def test_the_modified_equations_first_correction_is_at_h_to_the_2s(points):
    """The backward error analysis reads the same declaration: the first nonzero term of
    the modified field on the pendulum is h^(2 s), and it is Hamiltonian."""
    th = sp.Symbol("theta")
    system = LagrangianSystem("pendulum", [th], sp.Matrix([[1]]), -sp.cos(th), {}, C64)
    me = modified_equation("gauss", system, 2 * points + 1, points=points)
    assert me.leading_order() == 2 * points
    assert check_hamiltonian(me) == []


@pytest.mark.parametrize("points, words", [
    (0, "from 1 to 12, got 0"), (13, "got 13: building its step"), ("2", "got '2'"),
    (True, "got True")])
def test_a_bad_number_of_points_is_named(points, words):
    problem = Problem(pendulum(C64), ["1"], p0=["0"])
    with pytest.raises(ValueError, match="a Gauss scheme's number of points") as info:
        solve(problem, "gauss", h="1/10", n=2, points=points)
    assert words in str(info.value)
