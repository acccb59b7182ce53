"""Integration methods, one module per method family, all in the registry ``METHODS``
(see :mod:`mpvi.methods.base` for the method contract).

The modules are discovered, not listed: importing the package imports every module of
it (in sorted order, so the registry's order does not depend on the file system), and a
module that calls :func:`register` at its top is in ``METHODS``.  Adding a method family
is one new file ``mpvi/methods/<family>.py``; nothing here changes.  Each registered
:class:`Method` is also a name of the package (``from mpvi.methods import lobatto`` is
the method, as :func:`get_method` returns it).  A method is declared as data
(:mod:`.declarations`: trial bases and quadrature rules of :mod:`.quadrature`, Butcher
tableaux, Newmark's parameters, Taylor series), which every executor reads.

May import: :mod:`mpvi.ground`, :mod:`mpvi.numbers`, :mod:`mpvi.compiled`, :mod:`mpvi.model`,
:mod:`mpvi.engines`.
"""
import importlib
import pkgutil

from mpvi.methods.base import METHODS, Method, StabilityError, State, StepResult, get_method, register


def _discover():
    """Import every module of the package, sorted by name; return the methods each
    defines at its top (name -> Method, in module then definition order)."""
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.update((name, obj) for name, obj in vars(module).items()
                     if isinstance(obj, Method) and METHODS.get(obj.name) is obj)
    return found


_METHODS_BY_NAME = _discover()
globals().update(_METHODS_BY_NAME)

__all__ = ["METHODS", "Method", "StabilityError", "State", "StepResult", "get_method",
           "register", *sorted(_METHODS_BY_NAME)]
