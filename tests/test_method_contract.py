"""The declared symplecticity of every registered method, measured (issue 37, acceptance 3).

The suite loops over :data:`mpvi.METHODS` for the order, the any-size, the compiled and
the modified-equation checks; a method that declares itself symplectic is measured here
the same way, so a new method file is checked with nothing added.  The one-step map in
canonical coordinates (q, p) -- (q, v) methods through the Legendre map p = M(q) v -- on a
swinging pendulum with a position-dependent mass (M = 2 + cos q, so that p is not v), its
Jacobian by central differences at 100 digits: Phi^T J Phi - J is at round-off (about
1e-60) for a symplectic method.  The linear-only forms, which refuse that system, are
measured on a linear chain (:func:`mpvi.symplecticity_defect`).  (A method declared not
symplectic may still be so on one system -- the implicit midpoint rule on (q, v) is, for a
constant mass -- so only the declared True is a claim to check.)
"""
import numpy as np
import pytest
import sympy as sp

import mpvi
from mpvi import METHODS, LagrangianSystem, LinearSystem, MPContext
from mpvi.analysis.measures import central_differences

CTX = MPContext(100)
TOL = CTX.num(10) ** -50
TH = sp.Symbol("theta")
SWING = LagrangianSystem("swing", [TH], sp.Matrix([[2 + sp.cos(TH)]]), -sp.cos(TH), {}, CTX)
CHAIN = LinearSystem([[2, 0], [0, 1]], [[3, -1], [-1, 2]], CTX)


def defect(method, h="0.3"):
    """||Phi^T J Phi - J|| of one step of ``method`` (a Method) at its defaults."""
    h = CTX.num(h)
    try:
        stepper = method.prepare(SWING, h, CTX)
    except TypeError as exc:                     # the linear (constant M, K) forms
        assert "LinearSystem" in str(exc)
        return mpvi.symplecticity_defect(method, CHAIN, h, CTX)

    def mass(q):
        return 2 + CTX.cos(q[0])

    def step(z):
        q, p = z[:1], z[1:]
        y = p / mass(q) if method.state == "qv" else p
        r = stepper(CTX.zero, q, y)
        return np.concatenate([r.q, r.y * mass(r.q) if method.state == "qv" else r.y])
    Phi = central_differences(step, CTX.asarray(["1.1", "0.4"]), CTX, CTX.num(10) ** -40).T
    J = np.array([[CTX.zero, CTX.one], [-CTX.one, CTX.zero]], dtype=object)
    return CTX.norm_inf(Phi.T @ J @ Phi - J)


@pytest.mark.parametrize("name", sorted(n for n, m in METHODS.items() if m.symplectic_for()))
def test_every_method_declared_symplectic_is_measured_symplectic(name):
    assert defect(METHODS[name]) <= TOL, name


@pytest.mark.parametrize("name", ["rk4", "rk2"])
def test_the_measure_refuses_a_method_that_is_not_symplectic(name):
    """RK4 on (q, p) and the explicit midpoint rule on (q, v): far from round-off, so a
    method that declared itself symplectic wrongly would fail the test above."""
    assert defect(METHODS[name]) > CTX.num(10) ** -8
