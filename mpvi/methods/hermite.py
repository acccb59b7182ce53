"""Hermite one-step variational and Galerkin methods (Sharma, Patil & Woolsey, "Hermite-
based, one-step, variational and Galerkin time integrators for mechanical systems",
Sec. 3; the paper's short id in mpvi is ``hermite``).

On each step [t_j, t_j + h] the trajectory is the Hermite polynomial of degree 2n - 1
(eqs. (17), (27)-(28)) through the position and the first n - 1 derivatives at both
ends,

    q_d(t_j + tau h) = sum_{d<n} (q^(d)(t_j) H_(0,d)(tau) + q^(d)(t_j + h) H_(1,d)(tau)) h^d

(:func:`mpvi.methods.quadrature.hermite_basis`; n = 2 is the cubic of eq. (17) with
N1, N2/h, N3, N4/h).  The state carried between steps is (q, v): the trajectory is C^1.
Given (q_j, v_j), the 2n - 2 unknown coefficient vectors are q^(d)(t_j), d = 2..n-1,
and q^(d)(t_j + h), d = 0..n-1, solved by Newton (:mod:`mpvi.methods.variational`)
from the 2n - 2 equations

* ``hermite_variational`` -- the discrete Lagrange-d'Alembert principle over the single
  step with the end positions held (delta q_j = delta q_j+1 = 0), eqs. (24)-(25) and (30):

      dS_d/dq^(d)(t_j) + g_(0,d) = 0,   dS_d/dq^(d)(t_j + h) + g_(1,d) = 0,  d = 1..n-1,

  with S_d = int_0^h L(q_d, q_d') dt (eq. 18) and the discrete forces
  g = int_0^h F(q_d, q_d') H dt of eqs. (20)-(23);
* ``hermite_galerkin`` -- the Petrov-Galerkin weighted residual, eqs. (26) and (31):

      int_0^h R(t, q_d, q_d', q_d'') P_m((t - t_j)/h) dt = 0,   m = 0..2n-3,

  with R = d/dt dL/dv - dL/dq - F (eq. 2 with the opposite sign, which changes nothing)
  and P_m the shifted Legendre polynomials on [0, 1] (P_0 = 1, P_1 = 2 tau - 1, ...).

Integrals are taken by the ``nodes``-point Gauss-Legendre rule at the context precision
(nodes and weights exact, :mod:`mpvi.methods.quadrature`).  The default, 4n nodes, integrates
exactly every integrand of a Lagrangian with a quartic potential and forces of degree
<= 3 in (q, v) (the double well, Duffing and aeroelastic systems of the paper: degree
<= 8n - 4 <= 2 (4n) - 1); more nodes change nothing there (a test), and for other
systems they are a quadrature error of order h^(8n) far below the methods' own.

Orders (measured by the tests on a driven damped oscillator with its exact solution;
the paper, Sec. 5.1, claims 2 and 4 for n = 2 and states none for n >= 3): variational
2n - 2 (2, 4, 6 for n = 2, 3, 4), Galerkin 4n - 4 (4, 8, 12): the Galerkin nodes are
superconvergent like those of continuous Galerkin methods of degree 2n - 1.
Neither method is symplectic for a nonlinear potential (Sec. 4.2; measured by
``reproductions/hermite_symplecticity.py``); for a linear system both are.  The
internal data of a step (n >= 3) are the solved higher derivatives q^(d)(t_j),
d = 2..n-1, then q^(d)(t_j + h), d = 2..n-1.
"""
from functools import lru_cache

import sympy as sp

from mpvi.methods.declarations import Discretization, GalerkinMethod, VariationalMethod
from mpvi.methods.quadrature import gauss_legendre, hermite_basis
from mpvi.methods.base import Method, check_count, register
from mpvi.methods.variational import prepare_spec


MAX_N = 8
"""The largest Hermite n mpvi builds a step for (degree 15)."""


def _check_n(n):
    return check_count(n, "a Hermite one-step method's n (degree 2n - 1 >= 3)", 2, MAX_N,
                       "building its step grows as n^4 (n = 6: about 20 s for one degree of "
                       "freedom on a 2-core machine)")


def _check_nodes(nodes, n):
    if nodes is None:
        return 4 * n
    return check_count(nodes, f"nodes (Gauss-Legendre points per step, >= n = {n})", n, 16 * n,
                       "each node adds the system's derivatives to the step's kernel")


@lru_cache(maxsize=None)
def hermite_discretization(n=2, nodes=None):
    """Hermite trial functions of degree 2n - 1 with the ``nodes``-point Gauss-Legendre rule."""
    _check_n(n)
    nodes = _check_nodes(nodes, n)
    return Discretization(f"hermite{2 * n - 1}-gl{nodes}", hermite_basis(n), gauss_legendre(nodes))


def shifted_legendre(m):
    """P_m(2 tau - 1) as a function of an exact tau (P_0 = 1, P_1 = 2 tau - 1, eq. (26))."""
    tau = sp.Symbol("tau")
    poly = sp.expand(sp.legendre(m, 2 * tau - 1))
    return lambda x: poly.subs(tau, x)


@lru_cache(maxsize=None)
def variational_spec(n=2, nodes=None):
    """The one-step variational method as data: equations on the slots of q^(d)(t_j) and
    q^(d)(t_j + h), d = 1..n-1 (eqs. (24)-(25), (30))."""
    disc = hermite_discretization(n, nodes)
    rows = tuple((i, False) for i, s in enumerate(disc.basis.slots) if s.derivative >= 1)
    return VariationalMethod(disc, "qv", rows, known_derivative=1)


@lru_cache(maxsize=None)
def galerkin_spec(n=2, nodes=None):
    """The one-step Galerkin method as data: test functions P_0..P_(2n-3) (eqs. (26), (31))."""
    disc = hermite_discretization(n, nodes)
    return GalerkinMethod(disc, tuple(shifted_legendre(m) for m in range(2 * n - 2)))


def _prepare(spec):
    def prepare(system, h, ctx, hermite_n=2, nodes=None, newton=None):
        """Prepare a Hermite variational or Galerkin step (hermite Sec. 3, eqs. (17)-(26); (27)-(31) for n >= 3).

        ``hermite_n``: the paper's n (degree 2n - 1, n >= 2); ``nodes``: Gauss-Legendre
        points per step (default 4n); ``newton``: options for :func:`mpvi.numbers.newton.solve`
        (no a-priori stability bound)."""
        _check_n(hermite_n)
        return prepare_spec(spec(hermite_n, _check_nodes(nodes, hermite_n)), system, h, ctx, newton)
    return prepare


hermite_variational = register(Method(
    name="hermite_variational", label="One-step variational", state="qv", params={"hermite_n": 2, "nodes": None},
    order=lambda p: 2 * p["hermite_n"] - 2, symplectic=False, implicit=True,
    reference="hermite eqs. (17)-(25); (27)-(30) for n >= 3", prepare=_prepare(variational_spec),
    internal="higher derivatives", doc=__doc__,
    declaration=lambda p: variational_spec(p["hermite_n"], _check_nodes(p["nodes"], p["hermite_n"])),
    order_parameter=("hermite_n", 2, MAX_N)))

hermite_galerkin = register(Method(
    name="hermite_galerkin", label="One-step Galerkin", state="qv", params={"hermite_n": 2, "nodes": None},
    order=lambda p: 4 * p["hermite_n"] - 4, symplectic=False, implicit=True,
    reference="hermite eqs. (17), (26); (27)-(29), (31) for n >= 3", prepare=_prepare(galerkin_spec),
    internal="higher derivatives", doc=__doc__,
    declaration=lambda p: galerkin_spec(p["hermite_n"], _check_nodes(p["nodes"], p["hermite_n"])),
    order_parameter=("hermite_n", 2, MAX_N)))
