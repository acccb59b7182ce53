"""The two checks of an option's type that every layer uses: an integer of any integer
type (:func:`integer`) and a flag that is a real bool (:func:`check_flag`)."""
from __future__ import annotations

import operator

import numpy as np


def integer(value: object) -> int | None:
    """``value`` as an int when it is an integer of any integer type -- int, a numpy
    integer, a sympy Integer, a gmpy2 mpz: what has ``__index__`` --, else None (a bool, a
    numpy bool, a float, a string are not integers)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        return operator.index(value)            # type: ignore[arg-type]
    except TypeError:
        return None


def check_flag(value: object, name: str) -> bool:
    """A boolean option: True or False (a Python or numpy bool), else a TypeError naming
    ``name`` (``"no"`` is a truthy string, not False; 0 and 1 are numbers)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {value!r}")
