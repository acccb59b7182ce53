"""mpvi: arbitrary-precision variational integrators.

A high-precision study in five lines::

    import sympy as sp, mpvi
    ctx = mpvi.GMPContext(64)
    q = sp.Symbol("q")
    pendulum = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
    sol = mpvi.solve(mpvi.Problem(pendulum, ["1/2"], v0=[0]), "simpson", h="1/10", n=100)

The public surface: number contexts (:class:`GMPContext` -- fast, MPFR --,
:class:`MPContext` -- the mpmath reference --, :class:`FPContext` -- float64), systems
(:func:`Lagrangian`, :class:`LagrangianSystem`, :class:`LinearSystem`, :class:`FirstOrderSystem`), the problem
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

from importlib import import_module as _import_module
from importlib.util import find_spec as _find_spec
from typing import TYPE_CHECKING

from mpvi._version import __version__

# The public names, listed once, in the order of __all__: name -> the module (relative to
# mpvi) that defines it.  The TYPE_CHECKING imports below tell static type checkers the
# same (tests/test_import_time.py checks that the two agree).
_WHERE = {
    # contexts
    "GMPContext": "numbers.context", "MPContext": "numbers.context", "FPContext": "numbers.context",
    "mp": "numbers.context", "fp": "numbers.context", "get_context": "numbers.context", "ArbContext": "numbers.arb",
    # systems and problems
    "LagrangianSystem": "model.mechanics", "Lagrangian": "model.mechanics", "LinearSystem": "systems.linear",
    "FirstOrderSystem": "model.first_order", "TIME": "compiled.codegen", "Problem": "model.problem",
    # the driver and its result
    "solve": "drive.solve", "Solution": "drive.solution", "State": "drive.solution",
    "load_solution": "drive.solution", "Event": "drive.solve", "EventRecord": "drive.solution",
    "Progress": "drive.solve",
    # proven digits
    "certify": "proof.certify", "Certificate": "proof.certify", "EventEnclosure": "proof.certify",
    "verify": "drive.verification", "Verification": "drive.verification",
    # methods
    "METHODS": "methods", "Method": "methods", "register": "methods",
    "get_method": "methods",
    # analysis
    "error_norms": "analysis.measures", "sup_errors": "analysis.measures", "node_errors": "analysis.measures",
    "fit_order": "analysis.measures", "energy": "analysis.measures", "relative_energy_error": "analysis.measures",
    "one_step_matrix": "analysis.measures", "one_step_jacobian": "analysis.measures",
    "symplecticity_defect": "analysis.measures", "matrix_defect": "analysis.measures",
    "stability_scan": "analysis.measures", "central_differences": "analysis.measures",
    # backward error analysis
    "modified_equation": "analysis.modified", "modified_hamiltonian": "analysis.modified",
    "modified_lagrangian": "analysis.modified", "check_hamiltonian": "analysis.modified",
    "modified_frequency": "analysis.modified", "ModifiedEquation": "analysis.modified",
    "ModifiedHamiltonian": "analysis.modified", "ModifiedLagrangian": "analysis.modified",
    # errors
    "PrecisionError": "numbers.context", "NewtonError": "numbers.newton", "IntegrationError": "drive.solve",
    "StabilityError": "methods", "SingularMatrixError": "numbers.linalg",
    "NotPositiveDefiniteError": "numbers.linalg", "StorageError": "drive.solve",
    "NotHamiltonianError": "analysis.modified", "SolutionFileError": "drive.solution",
    "KrawczykError": "numbers.arb", "WrongStepError": "proof.certify", "UndecidedComparison": "numbers.arb",
}

__all__ = list(_WHERE)

if TYPE_CHECKING:
    from mpvi.analysis.measures import (central_differences, energy, error_norms, fit_order, matrix_defect,
                           node_errors, one_step_jacobian, one_step_matrix,
                           relative_energy_error, stability_scan, sup_errors,
                           symplecticity_defect)
    from mpvi.numbers.arb import ArbContext, KrawczykError, UndecidedComparison
    from mpvi.proof.certify import Certificate, EventEnclosure, WrongStepError, certify
    from mpvi.drive.verification import Verification, verify
    from mpvi.compiled.codegen import TIME
    from mpvi.numbers.context import FPContext, GMPContext, MPContext, PrecisionError, fp, get_context, mp
    from mpvi.numbers.linalg import NotPositiveDefiniteError, SingularMatrixError
    from mpvi.model.mechanics import Lagrangian, LagrangianSystem
    from mpvi.analysis.modified import (ModifiedEquation, ModifiedHamiltonian, ModifiedLagrangian,
                           NotHamiltonianError, check_hamiltonian, modified_equation,
                           modified_frequency, modified_hamiltonian, modified_lagrangian)
    from mpvi.numbers.newton import NewtonError
    from mpvi.model.first_order import FirstOrderSystem
    from mpvi.model.problem import Problem
    from mpvi.methods import METHODS, Method, StabilityError, get_method, register
    from mpvi.drive.solution import EventRecord, Solution, SolutionFileError, State, load_solution
    from mpvi.drive.solve import Event, IntegrationError, Progress, StorageError, solve
    from mpvi.systems.linear import LinearSystem


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use and then kept here; a
    layer package (``mpvi.analysis``), imported on first use as ``import mpvi`` once did."""
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

