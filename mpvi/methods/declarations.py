"""A method as data: the declaration types every executor reads.

A method registered in :data:`mpvi.METHODS` names its declaration
(:attr:`mpvi.methods.Method.declaration`, a function of its parameters returning one of
the types below).  The declaration is written once, by the method's module; the
executors read it: the numeric steppers of the trial-function engine
(:func:`mpvi.methods.variational.prepare_spec`), the step series of the backward error
analysis (:mod:`mpvi.analysis.modified`: one series executor per declaration type, chosen by the
type) and the exact linear analysis (:mod:`mpvi.analysis.symbolic`).

The types are plain frozen data (numbers, tuples, rules of :mod:`mpvi.methods.quadrature`, the
method's own step code); nothing here computes.  This module sits below the schemes
and above the quadrature rules, so that a scheme module imports it at its top and the
analyses that read a declaration import it (and the registry) downward.

* :class:`Discretization`, :class:`VariationalMethod`, :class:`GalerkinMethod`: a
  trial-function method (a trial basis, a quadrature rule and the equations);
* :class:`ButcherTableau`: a Runge-Kutta method;
* :class:`StepFunction`: a method given by its own step code (RK4, GBS), run on exact
  numbers (:data:`EXACT`) or on jets;
* :class:`ParabolicPath`, :class:`ParabolicAction`: Mutze's parabolic-path methods;
* :class:`NewmarkScheme`: Newmark's (beta, gamma) family;
* :class:`TaylorSeries`: the Taylor polynomial of the exact flow;
* :class:`LinearOnly`: any of them, declared for linear systems only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import sympy as sp

from mpvi.methods.quadrature import Basis, Quadrature


class _ExactNumbers:
    """A stand-in for a number context in a method's own step code run on jets:
    ``num`` makes exact sympy rationals."""

    @staticmethod
    def num(x):
        return sp.Rational(x)


EXACT = _ExactNumbers()
"""The exact "context" a :class:`StepFunction`'s code is given for its constants."""


# ----- trial-function methods ---------------------------------------------------------------

@dataclass(frozen=True)
class Discretization:
    """A trial basis and a quadrature rule: the data of one step of a trial-function scheme."""

    name: str
    basis: Basis
    quadrature: Quadrature


@dataclass(frozen=True)
class VariationalMethod:
    """A variational scheme as data: its discretization, which state derivatives are
    known at the left end (0: q only, for (q, p) methods; 1: q and v), and its equations
    as (slot, add the momentum p_j) pairs."""

    disc: Discretization
    state: str
    equations: tuple
    known_derivative: int = 0


@dataclass(frozen=True)
class GalerkinMethod:
    """A weighted-residual scheme as data: discretization, test functions psi_m(tau)
    (callables on exact numbers), state (q, v) known at the left end."""

    disc: Discretization
    tests: tuple
    state: str = "qv"
    known_derivative: int = 1


# ----- other one-step methods ---------------------------------------------------------------

@dataclass(frozen=True)
class ButcherTableau:
    """A Runge-Kutta method on y' = f(y) as data: y_new = y + h sum_i b_i k_i,
    k_i = f(y + h sum_j a_ij k_j) (implicit where a_ij != 0 for j >= i)."""

    a: tuple
    b: tuple
    form: str = "qv"            # the first-order form it is applied to: (q, v) or (q, p)


@dataclass(frozen=True)
class StepFunction:
    """A one-step method given by its own code ``step(f, t, y, h)`` on lists of numbers
    (here: jets), on the first-order form ``form``."""

    step: Callable
    form: str = "qp"


@dataclass(frozen=True)
class ParabolicPath:
    """Mutze's g-family on (x, v) (mutze eqs. 72-74): tau = h/2, the acceleration
    parameter a solves a = A(x + v tau + g tau^2 a, v + tau a) (G = 0 at the midpoint data,
    A the system's acceleration), then v_new = v + 2 tau a, x_new = x + tau (v + v_new)."""

    g: Any
    form: str = "qv"


@dataclass(frozen=True)
class ParabolicAction:
    """Mutze's action-based methods on (x, v): the parabolic path x + v s + a s^2/2 over
    s in [0, h], a from int_0^h R(s) ds = 0 by the ``quadrature`` rule on [0, 1], then as
    the g-family (eq. 74).  ``integrand(system)`` returns the integrand's pieces: a dict
    with R (one expression per coordinate) in the path's position and velocity symbols X,
    V, the acceleration symbols a, the path parameter s and tau = h/2
    (:func:`mpvi.methods.mutze.action_integrand`; eq. (54) or (44)); ``label`` names the
    equation."""

    kind: str
    quadrature: Any
    integrand: Callable = field(repr=False, compare=False, default=None)
    label: str = ""
    form: str = "qv"


@dataclass(frozen=True)
class NewmarkScheme:
    """Newmark's (beta, gamma) family on (q, v): a_j = A(q_j, v_j) and
    q_new = q + h v + h^2 ((1/2 - beta) a_j + beta a_new),
    v_new = v + h ((1 - gamma) a_j + gamma a_new),  a_new = A(q_new, v_new).
    ``form="qp"`` reports (q, p = M v) (constant M)."""

    beta: Any
    gamma: Any
    form: str = "qv"


@dataclass(frozen=True)
class TaylorSeries:
    """The Taylor polynomial of degree ``order`` of the exact flow (the Taylor scheme)."""

    order: int
    form: str = "qp"


@dataclass(frozen=True)
class LinearOnly:
    """A declaration that holds for linear systems only (the method refuses others):
    the derivation refuses them too."""

    declaration: Any
