"""The systems of the papers, one module per system (see README: adding a system): the
linear systems given by their matrices (:class:`mpvi.LinearSystem`, with the modal exact
solution), pendulums and chains, the double pendulum, the double well and Duffing, the
damped oscillator and pendulum, the aeroelastic section and the Lagrange top with its
exact Weierstrass-function reference.  Each is a :class:`mpvi.LagrangianSystem` (or a
linear or first-order system) with the paper's parameters and its exact or reference
solution where one exists.

May import: every layer below it (ground to methods); the systems use the model, the
engines (dense output, the first-order steps of a reference) and the Arb references.
"""
from mpvi.systems.aeroelastic import aeroelastic_section, flutter_speed
from mpvi.systems.damped import DampedOscillatorExact, damped_oscillator, damped_pendulum
from mpvi.systems.double_pendulum import LinearDoublePendulum, linearized_double_pendulum
from mpvi.systems.double_well import double_well, double_well_exact, double_well_problem, duffing
from mpvi.systems.linear import LinearSystem, ModalSolution
from mpvi.systems.pendulums import angle_addition, n_link_pendulum, pendulum_chain, trig_arguments

__all__ = ["LinearSystem", "ModalSolution", "LinearDoublePendulum", "linearized_double_pendulum",
           "double_well", "double_well_exact", "double_well_problem", "duffing", "aeroelastic_section", "flutter_speed",
           "damped_oscillator", "DampedOscillatorExact", "damped_pendulum", "pendulum_chain",
           "n_link_pendulum", "angle_addition", "trig_arguments"]
