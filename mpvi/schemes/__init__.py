"""Integration schemes, one module per scheme, all in the registry ``SCHEMES``."""
from .base import SCHEMES, Scheme, StabilityError, State, get_scheme, register
from .gbs import gbs
from .midpoint import midpoint
from .newmark import newmark
from .rk4 import rk4
from .simpson import simpson, simpson_v1

__all__ = ["SCHEMES", "Scheme", "StabilityError", "State", "get_scheme", "register",
           "gbs", "midpoint", "newmark", "rk4", "simpson", "simpson_v1"]
