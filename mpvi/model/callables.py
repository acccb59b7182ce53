"""What a user's callable returns is checked like initial data.

mpvi calls functions a researcher writes: event functions ``g(t, q, v)``, exact solutions
``t -> (q, p)``, first-order right-hand sides ``rhs(t, y)``, callbacks.  A value they return
at a lower precision than the run's -- a Python float, an mpmath number of the global
``mp`` (15 digits), a gmpy2 number computed at 53 bits -- would silently cap every result
it touches (an event time, an error curve, a whole first-order run) at about 16 digits.
Two checks keep them out:

* :func:`returned` converts every number a callable returns with the context's
  :meth:`~mpvi.numbers.context.MPContext.num`, which refuses exactly what it refuses for initial
  data (:class:`mpvi.PrecisionError`, naming the callable), and refuses what is not a
  number at all (``TypeError``);
* :func:`check_literals` looks at the callable's code once, before the run, for float
  literals that are not the decimal they are written as (``0.9`` is
  0.90000000000000002220...; ``0.5`` and ``2.0`` are exact and allowed): ``q[0] - 0.9``
  returns a number of the run's precision whose value is wrong in the 17th digit, which
  no check of the value can see.  It reads the function's constants (and those of the
  functions and lambdas defined inside it), its closure cells and the module globals it
  names; a callable it cannot read (a builtin, a C function) passes.

In the float64 context neither check applies: floats are its numbers.
"""
from __future__ import annotations

import functools
import types
from fractions import Fraction
from typing import TYPE_CHECKING, Callable

import numpy as np

from mpvi.numbers.context import PrecisionError
from mpvi.ground.precision import entry

if TYPE_CHECKING:
    from mpvi.ground.types import Real
    from mpvi.numbers.context import Context


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _inexact(x) -> bool:
    """A float that is not the decimal it prints as (0.9, 0.1; not 0.5, 2.0, 1e3)."""
    try:
        return Fraction(repr(x)) != Fraction(x)
    except (ValueError, OverflowError):          # nan, inf
        return True


def _code_objects(code):
    stack = [code]
    while stack:
        c = stack.pop()
        yield c
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


def _functions(fn):
    """The Python functions behind ``fn``: itself, the function of a bound method, of a
    ``functools.partial``, or a callable object's ``__call__``."""
    seen = 0
    while seen < 8:
        seen += 1
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif isinstance(fn, types.MethodType):
            fn = fn.__func__
        elif isinstance(fn, types.FunctionType):
            return [fn]
        elif callable(fn) and isinstance(getattr(type(fn), "__call__", None), types.FunctionType):
            fn = type(fn).__call__
        else:
            return []
    return []


@entry
def float_literals(fn: Callable[..., object]) -> list[float]:
    """The float constants reachable from ``fn``'s code that are not exact decimals.

    Parameters
    ----------
    fn : callable
        A Python function, method, ``functools.partial`` or callable object.

    Returns
    -------
    list of float
        In order of appearance, without repetitions (empty for a callable whose code
        cannot be read).
    """
    found = []
    for f in _functions(fn):
        for code in _code_objects(f.__code__):
            found += [k for k in code.co_consts if type(k) is float and _inexact(k)]
            names = code.co_names
            glob = f.__globals__
            found += [glob[n] for n in names if type(glob.get(n)) is float and _inexact(glob[n])]
        for cell in f.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:                   # an empty cell
                continue
            if type(value) is float and _inexact(value):
                found.append(value)
    out = []
    for x in found:
        if not any(x == y or (x != x and y != y) for y in out):
            out.append(x)
    return out


@entry
def check_literals(fn: Callable[..., object], ctx: Context, what: str) -> None:
    """Refuse a callable whose code holds a float literal that is not an exact decimal.

    Parameters
    ----------
    fn : callable
        The user's function.
    ctx : Context
        The run's context (nothing is checked in the float64 context).
    what : str
        What the callable is, for the message (e.g. "event 'apex'").

    Raises
    ------
    PrecisionError
        Naming the callable and the literal(s).
    """
    if not ctx.is_mp:
        return
    bad = float_literals(fn)
    if bad:
        shown = ", ".join(repr(x) for x in bad[:4])
        raise PrecisionError(
            f"{what} ({_name(fn)}) uses the float literal(s) {shown}, which carry 53 bits "
            f"(0.9 is 0.900000000000000022...): in a {ctx.dps}-digit run the result would be "
            "wrong from the 17th digit. Write ctx.num('0.9'), fractions.Fraction(9, 10) or "
            "pass the value as a parameter")


@entry
def returned(ctx: Context, value: object, what: str) -> Real:
    """A number a callable returned, converted and checked like initial data.

    Parameters
    ----------
    ctx : Context
        The run's context.
    value : object
        What the callable returned.
    what : str
        The callable and where it was called, for the message.

    Returns
    -------
    number
        ``value`` as a number of ``ctx`` (its own numbers unchanged).

    Raises
    ------
    PrecisionError
        A float, an mpmath number of another context, a number of fewer bits.
    TypeError
        Not a number (a string, a bool, None, a sequence).
    """
    if _as_is(ctx, value):
        return value
    if ctx.is_number(value):                     # a gmpy2 number of fewer bits: refused
        return ctx.number(value, what)
    if isinstance(value, (str, bytes, bool, np.bool_)) or value is None:
        raise TypeError(f"{what} returned {value!r}, not a number")
    try:
        return ctx.number(value, what)
    except PrecisionError:
        raise
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} returned {value!r}, not a number ({exc})") from None


@entry
def returned_vector(ctx: Context, values: object, n: int, what: str) -> list[Real]:
    """A vector a callable returned: ``n`` numbers, each as :func:`returned`.

    Parameters
    ----------
    ctx : Context
        The run's context.
    values : sequence
        What the callable returned.
    n : int
        The length expected.
    what : str
        The callable, for the message.

    Returns
    -------
    list
        The numbers of ``ctx``.

    Raises
    ------
    PrecisionError, TypeError
        As :func:`returned`.
    ValueError
        Not a sequence of ``n`` values.
    """
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or np.ndim(values) != 1:
        raise ValueError(f"{what} returned {values!r}, not a vector of {n} numbers")
    if len(values) != n:
        raise ValueError(f"{what} returned {len(values)} values, expected {n}")
    # a number of the context at its precision kept as it is without returned()'s entry
    # point and message; anything else goes through returned(), which names it
    return [x if _as_is(ctx, x) else returned(ctx, x, f"{what}[{i}]")
            for i, x in enumerate(values)]


def _as_is(ctx: Context, value: object) -> bool:
    """Whether a returned ``value`` is a number of ``ctx`` at (at least) its precision,
    kept as it is by :func:`returned`."""
    return ctx.is_number(value) and not (
        ctx.is_mp and getattr(value, "precision", ctx.prec) < ctx.prec)


@entry
def stop_flag(value: object, what: str) -> bool:
    """A callback's answer to "stop here?": True, False, None (go on) or a numpy bool.

    Parameters
    ----------
    value : object
        What the callback returned.
    what : str
        The callback, for the message.

    Returns
    -------
    bool
        Whether to stop.

    Raises
    ------
    TypeError
        Anything else (a number, a string: ``"no"`` is not False).
    """
    if value is None:
        return False
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{what} returned {value!r}: a callback returns True to stop, False or "
                    "None to go on")
