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
(:func:`modified_equation`, :func:`modified_hamiltonian`) and the errors.  Importing mpvi
loads neither matplotlib, pandas nor the reproduction framework (:mod:`mpvi.repro`).
"""
from ._version import __version__
from .analysis import (central_differences, energy, error_norms, fit_order, matrix_defect,
                       node_errors, one_step_jacobian, one_step_matrix, relative_energy_error,
                       stability_scan, sup_errors, symplecticity_defect)
from .codegen import TIME
from .context import FPContext, GMPContext, MPContext, PrecisionError, fp, get_context, mp
from .linalg import NotPositiveDefiniteError, SingularMatrixError
from .mechanics import LagrangianSystem
from .modified import (ModifiedEquation, ModifiedHamiltonian, NotHamiltonianError,
                       ModifiedLagrangian, check_hamiltonian, modified_equation,
                       modified_frequency, modified_hamiltonian, modified_lagrangian)
from .newton import NewtonError
from .ode import FirstOrderSystem
from .problem import Problem
from .schemes import METHODS, Method, StabilityError, get_method, register
from .solution import Solution, SolutionFileError, State, load_solution
from .solution import EventRecord
from .solve import Event, IntegrationError, Progress, StorageError, solve
from .systems.linear import LinearSystem

__all__ = [
    # contexts
    "GMPContext", "MPContext", "FPContext", "mp", "fp", "get_context",
    # systems and problems
    "LagrangianSystem", "LinearSystem", "FirstOrderSystem", "TIME", "Problem",
    # the driver and its result
    "solve", "Solution", "State", "load_solution", "Event", "EventRecord", "Progress",
    # methods
    "METHODS", "Method", "register", "get_method",
    # analysis
    "error_norms", "sup_errors", "node_errors", "fit_order", "energy", "relative_energy_error",
    "one_step_matrix", "one_step_jacobian", "symplecticity_defect", "matrix_defect",
    "stability_scan", "central_differences",
    # backward error analysis
    "modified_equation", "modified_hamiltonian", "modified_lagrangian", "check_hamiltonian",
    "modified_frequency", "ModifiedEquation", "ModifiedHamiltonian", "ModifiedLagrangian",
    # errors
    "PrecisionError", "NewtonError", "IntegrationError", "StabilityError",
    "SingularMatrixError", "NotPositiveDefiniteError", "StorageError", "NotHamiltonianError",
    "SolutionFileError",
]
