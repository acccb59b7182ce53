"""Integration methods, one module per method, all in the registry ``METHODS``
(see :mod:`mpvi.schemes.base` for the method contract)."""
from .base import METHODS, Method, StabilityError, State, StepResult, get_method, register
from .gbs import gbs
from .hermite import hermite_galerkin, hermite_variational
from .implicit_midpoint import implicit_midpoint
from .lobatto import lobatto
from .midpoint import midpoint
from .mutze import mutze, mutze_parabolic_el, mutze_variation
from .newmark import newmark
from .newmark_family import newmark_family
from .rk2 import rk2
from .rk4 import rk4
from .simpson import simpson, simpson_v1
from .taylor import taylor

__all__ = ["METHODS", "Method", "StabilityError", "State", "StepResult", "get_method", "register",
           "gbs", "hermite_galerkin", "hermite_variational", "implicit_midpoint", "lobatto", "midpoint",
           "mutze", "mutze_parabolic_el", "mutze_variation", "newmark", "newmark_family", "rk2", "rk4",
           "simpson", "simpson_v1", "taylor"]
