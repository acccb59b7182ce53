"""mpvi: arbitrary-precision variational integrators.

>>> from mpvi import MPContext, integrate, linearized_double_pendulum
>>> ctx = MPContext(64)
>>> dp = linearized_double_pendulum(ctx)
>>> traj = integrate(dp.system, "simpson", dp.q0, dp.p0, dp.tbar / 10, 10, ctx)
"""
from .analysis import (energy, error_norms, fit_order, one_step_matrix, relative_energy_error,
                       simpson_phi, stability_scan, symplecticity_defect)
from .context import FPContext, GMPContext, MPContext, fp, get_context, mp
from .integrate import Progress, Trajectory, integrate
from .schemes import SCHEMES, StabilityError, State, get_scheme
from .systems import LinearSystem, linearized_double_pendulum

__version__ = "0.1.0"

__all__ = [
    "MPContext", "GMPContext", "FPContext", "mp", "fp", "get_context",
    "integrate", "Trajectory", "Progress",
    "SCHEMES", "get_scheme", "State", "StabilityError",
    "LinearSystem", "linearized_double_pendulum",
    "energy", "error_norms", "fit_order", "one_step_matrix", "relative_energy_error",
    "simpson_phi", "stability_scan", "symplecticity_defect",
]
