"""mpvi: arbitrary-precision variational integrators.

A high-precision study in five lines::

    import sympy as sp, mpvi
    ctx = mpvi.GMPContext(64)
    q = sp.Symbol("q")
    pendulum = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
    sol = mpvi.solve(mpvi.Problem(pendulum, ["1/2"], v0=[0]), "simpson", h="1/10", n=100)

The public surface: number contexts (:class:`GMPContext` -- fast, MPFR --,
:class:`MPContext` -- the mpmath reference --, :class:`FPContext` -- float64), systems
(:class:`LagrangianSystem`, :class:`LinearSystem`, :class:`FirstOrderSystem`), the problem
(:class:`Problem`), the driver (:func:`solve`) and its result (:class:`Solution`,
:func:`load_solution`), the method registry (:data:`METHODS`, :class:`Method`,
:func:`register`, :func:`get_method`), analysis functions, backward error analysis
(:func:`modified_equation`, :func:`modified_hamiltonian`) and the errors.

``import mpvi`` is cheap: it loads neither sympy, numpy, the methods nor the compiled
kernels.  Each public name is imported from its module when it is first used (PEP 562),
and ``from mpvi import solve`` works as an eager import would.  The library never loads
matplotlib, pandas nor the reproduction framework (:mod:`mpvi.repro`).
"""
from __future__ import annotations

import sys as _sys
from importlib import import_module as _import_module
from importlib.util import find_spec as _find_spec
from types import ModuleType as _ModuleType
from typing import TYPE_CHECKING

from ._version import __version__

# The public names, listed once, in the order of __all__: name -> the module (relative to
# mpvi) that defines it.  The TYPE_CHECKING imports below tell static type checkers the
# same (tests/test_import_time.py checks that the two agree).
_WHERE = {
    # contexts
    "GMPContext": "context", "MPContext": "context", "FPContext": "context",
    "mp": "context", "fp": "context", "get_context": "context", "ArbContext": "arb",
    # systems and problems
    "LagrangianSystem": "mechanics", "LinearSystem": "systems.linear",
    "FirstOrderSystem": "ode", "TIME": "codegen", "Problem": "problem",
    # the driver and its result
    "solve": "solve", "Solution": "solution", "State": "solution",
    "load_solution": "solution", "Event": "solve", "EventRecord": "solution",
    "Progress": "solve",
    # proven digits
    "certify": "certify", "Certificate": "certify", "EventEnclosure": "certify",
    "verify": "verification", "Verification": "verification",
    # methods
    "METHODS": "schemes", "Method": "schemes", "register": "schemes",
    "get_method": "schemes",
    # analysis
    "error_norms": "analysis", "sup_errors": "analysis", "node_errors": "analysis",
    "fit_order": "analysis", "energy": "analysis", "relative_energy_error": "analysis",
    "one_step_matrix": "analysis", "one_step_jacobian": "analysis",
    "symplecticity_defect": "analysis", "matrix_defect": "analysis",
    "stability_scan": "analysis", "central_differences": "analysis",
    # backward error analysis
    "modified_equation": "modified", "modified_hamiltonian": "modified",
    "modified_lagrangian": "modified", "check_hamiltonian": "modified",
    "modified_frequency": "modified", "ModifiedEquation": "modified",
    "ModifiedHamiltonian": "modified", "ModifiedLagrangian": "modified",
    # errors
    "PrecisionError": "context", "NewtonError": "newton", "IntegrationError": "solve",
    "StabilityError": "schemes", "SingularMatrixError": "linalg",
    "NotPositiveDefiniteError": "linalg", "StorageError": "solve",
    "NotHamiltonianError": "modified", "SolutionFileError": "solution",
    "KrawczykError": "arb", "WrongStepError": "certify", "UndecidedComparison": "arb",
}

__all__ = list(_WHERE)

if TYPE_CHECKING:
    from .analysis import (central_differences, energy, error_norms, fit_order, matrix_defect,
                           node_errors, one_step_jacobian, one_step_matrix,
                           relative_energy_error, stability_scan, sup_errors,
                           symplecticity_defect)
    from .arb import ArbContext, KrawczykError, UndecidedComparison
    from .certify import Certificate, EventEnclosure, WrongStepError, certify
    from .verification import Verification, verify
    from .codegen import TIME
    from .context import FPContext, GMPContext, MPContext, PrecisionError, fp, get_context, mp
    from .linalg import NotPositiveDefiniteError, SingularMatrixError
    from .mechanics import LagrangianSystem
    from .modified import (ModifiedEquation, ModifiedHamiltonian, ModifiedLagrangian,
                           NotHamiltonianError, check_hamiltonian, modified_equation,
                           modified_frequency, modified_hamiltonian, modified_lagrangian)
    from .newton import NewtonError
    from .ode import FirstOrderSystem
    from .problem import Problem
    from .schemes import METHODS, Method, StabilityError, get_method, register
    from .solution import EventRecord, Solution, SolutionFileError, State, load_solution
    from .solve import Event, IntegrationError, Progress, StorageError, solve
    from .systems.linear import LinearSystem


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use and then kept here; a
    submodule (``mpvi.analysis``), imported on first use as ``import mpvi`` once did."""
    module = _WHERE.get(name)
    if module is not None:
        value = getattr(_import_module(f"{__name__}.{module}"), name)
    elif not name.startswith("__") and _find_spec(f"{__name__}.{name}") is not None:
        value = _import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(_ModuleType):
    """mpvi's module type: the import system binds every submodule it loads to the
    package under the submodule's name, and ``mpvi.solve`` (the function) must keep its
    name over the module mpvi/solve.py that defines it."""

    def __setattr__(self, name: str, value: object) -> None:
        if (isinstance(value, _ModuleType) and name in _WHERE
                and value.__name__ == f"{__name__}.{name}"):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
