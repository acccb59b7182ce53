"""Mechanical systems, one module per system (see README: adding a system)."""
from .aeroelastic import aeroelastic_section, flutter_speed
from .damped import DampedOscillatorExact, damped_oscillator, damped_pendulum
from .double_pendulum import LinearDoublePendulum, linearized_double_pendulum
from .double_well import double_well, double_well_exact, double_well_problem, duffing
from .linear import LinearSystem, ModalSolution
from .pendulums import angle_addition, n_link_pendulum, pendulum_chain, trig_arguments

__all__ = ["LinearSystem", "ModalSolution", "LinearDoublePendulum", "linearized_double_pendulum",
           "double_well", "double_well_exact", "double_well_problem", "duffing", "aeroelastic_section", "flutter_speed",
           "damped_oscillator", "DampedOscillatorExact", "damped_pendulum", "pendulum_chain",
           "n_link_pendulum", "angle_addition", "trig_arguments"]
