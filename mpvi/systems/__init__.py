"""Mechanical systems, one module per system (see README: adding a system)."""
from .double_pendulum import LinearDoublePendulum, linearized_double_pendulum
from .linear import LinearSystem, ModalSolution

__all__ = ["LinearSystem", "ModalSolution", "LinearDoublePendulum", "linearized_double_pendulum"]
