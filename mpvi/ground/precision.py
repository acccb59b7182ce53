"""The caller's precision is left as it was: :func:`entry` and :func:`entry_class` mark
mpvi's public names (``with ctx.active():`` runs a block in a context).

gmpy2 rounds every operation to the precision of the calling thread's gmpy2 context.
mpvi's contexts make their own precision the thread's while they compute
(:meth:`mpvi.numbers.context.GMPContext.activate`); every name of mpvi's public surface (the
names of ``mpvi``, the documented functions of its modules, the factories of
:mod:`mpvi.systems`) is an entry point, marked where it is defined with :func:`entry` or
:func:`entry_class`, that makes its arguments' context the thread's and restores the
caller's gmpy2 context when it returns or raises, so that a call into mpvi never changes
the precision of the caller's own arithmetic.  Code called from an entry point runs
inside it; the internal modules are not wrapped (a framework running user code in a
context uses ``with ctx.active():``, as :mod:`mpvi.repro` does for each reproduction and
study).  (mpmath's global ``mpmath.mp`` is never changed: every mpvi context
computes in a private mpmath context.)

One call changes it on purpose, and only upwards: **creating a context**
(``GMPContext(64)``, ``get_context("gmp", 64)``) raises the thread's gmpy2 precision to that
context's if it is lower, so that ``ctx.num(2) * ctx.pi / 96`` right after it carries 64
digits (:func:`request_handoff`), and never lowers it: after ``GMPContext(30)``, bare
arithmetic on the numbers of a 64-digit context made before still carries 64 digits (it
followed the context made last, and was good to 30 digits only).  Bare arithmetic thus
never drops below the precision of the contexts made so far; ``with ctx.active():`` is the
explicit switch to one context's precision, lower or higher, for a block.  A context
created inside another mpvi call (a ``--check-digits`` rerun, ``ctx.with_dps``) changes
nothing for the caller.  This module
depends on nothing else of mpvi, so that every module, :mod:`mpvi.numbers.linalg` included, can
use it.
"""
from __future__ import annotations

import functools
import inspect
import sys
import threading
from typing import Any, Callable, TypeVar, cast

try:
    import gmpy2
except ImportError:                     # pragma: no cover - gmpy2 is a dependency
    gmpy2 = None

_CONTEXT_TYPES: tuple[type, ...] = ()
"""The number context classes (set by :mod:`mpvi.numbers.context`: ``register_context_type``)."""


def register_context_type(cls: type[_C]) -> type[_C]:
    """Let :func:`boundary` recognise instances of ``cls`` as number contexts."""
    global _CONTEXT_TYPES
    _CONTEXT_TYPES = _CONTEXT_TYPES + (cls,)
    return cls


_F = TypeVar("_F", bound=Callable[..., Any])
_C = TypeVar("_C")

_depth = threading.local()


def _flint_prec():
    """python-flint's global precision, or None while flint is not imported (mpvi imports
    it only for :class:`mpvi.ArbContext`)."""
    flint = sys.modules.get("flint")
    return None if flint is None else flint.ctx.prec


def _restore_flint(prec):
    """Give python-flint back the caller's precision (its default 53 bits if flint was
    imported inside the call)."""
    flint = sys.modules.get("flint")
    if flint is not None:
        prec = 53 if prec is None else prec
        if flint.ctx.prec != prec:
            flint.ctx.prec = prec


def request_handoff(gmpy2_context: Any) -> None:
    """Ask the outermost entry point, if it is a context constructor (``handoff=True``), to
    leave ``gmpy2_context`` as the thread's context instead of restoring the caller's, if
    the caller's precision is not higher: what :class:`mpvi.GMPContext` does when it is
    created (module doc)."""
    _depth.handoff = gmpy2_context


def _context_of(args):
    """The number context a call computes in: a context among its first arguments, or the
    ``ctx`` of one (a problem, a system, a solution); None if there is none."""
    for a in args[:4]:
        if isinstance(a, _CONTEXT_TYPES):
            return a
        c = getattr(a, "ctx", None) if not isinstance(a, (int, str, float)) else None
        if isinstance(c, _CONTEXT_TYPES):
            return c
    return None


def boundary(f: _F, own: bool = False, find: bool = True, handoff: bool = False) -> _F:
    """Decorate a public entry point of mpvi: the caller's gmpy2 thread context is the same
    object, at the same precision, after the call as before.

    Inside, mpvi computes at the precision of its contexts: the outermost entry point
    makes the context of its arguments (:func:`_context_of`) the thread's, and every
    context method used inside makes its own the thread's (:meth:`GMPContext.activate`;
    ``own=True``: the method of a context, which activates ``self`` at every call, nested
    or not; ``find=False``: none, for a constructor).  Nested entry points pay one
    thread-local look-up and restore nothing: the outermost restores the caller's context
    when it returns or raises, and python-flint's global precision if flint is loaded (the
    Arb context sets it) -- except an outermost ``handoff=True`` entry point (a
    context constructor) that returns normally after :func:`request_handoff`: it leaves
    the requested context, at the new context's precision, unless the caller's precision
    is higher (a new context never lowers it).  (The global ``mpmath.mp`` is
    never changed: every mpvi context computes in a private mpmath context.)"""
    if gmpy2 is None:                   # pragma: no cover - gmpy2 is a dependency
        return f

    def restore(caller, done, flint_prec):
        _depth.inside = False
        _restore_flint(flint_prec)
        target = getattr(_depth, "handoff", None) if (handoff and done) else None
        _depth.handoff = None
        if target is None or caller.precision > target.precision:
            target = caller             # a new context never lowers the bare precision
        if gmpy2.get_context() is not target:
            gmpy2.set_context(target)

    if own:
        @functools.wraps(f)
        def method(self, *args, **kwargs):
            if getattr(_depth, "inside", False):
                self.activate()
                return f(self, *args, **kwargs)
            _depth.inside, _depth.handoff = True, None
            caller, done, flint_prec = gmpy2.get_context(), False, _flint_prec()
            try:
                self.activate()
                result = f(self, *args, **kwargs)
                done = True
                return result
            finally:
                restore(caller, done, flint_prec)
        method.mpvi_entry = True            # type: ignore[attr-defined]
        return cast("_F", method)

    @functools.wraps(f)
    def entry(*args, **kwargs):
        if getattr(_depth, "inside", False):
            return f(*args, **kwargs)
        _depth.inside, _depth.handoff = True, None
        caller, done, flint_prec = gmpy2.get_context(), False, _flint_prec()
        try:
            ctx = _context_of(args) if find else None
            if ctx is not None:
                ctx.activate()
            result = f(*args, **kwargs)
            done = True
            return result
        finally:
            restore(caller, done, flint_prec)
    entry.mpvi_entry = True                 # type: ignore[attr-defined]
    return cast("_F", entry)


def boundary_class(cls: type[_C], own: bool = False) -> type[_C]:
    """Make every public method of ``cls`` (and ``__init__``, ``__call__``, the getters of
    its properties) a :func:`boundary`; ``own=True`` for the number contexts (each method
    activates its context)."""
    if vars(cls).get("_guarded"):
        return cls
    cls._guarded = True                     # type: ignore[attr-defined]
    for name, attr in list(vars(cls).items()):
        if name.startswith("_") and name not in ("__init__", "__call__", "__getitem__"):
            continue
        if name == "__init__":                  # self is not built yet
            setattr(cls, name, boundary(attr, find=False, handoff=own))
        elif (isinstance(attr, property) and attr.fget is not None
              and not getattr(attr.fget, "_sticky", False)):
            setattr(cls, name, property(boundary(attr.fget, own), attr.fset, attr.fdel,
                                        attr.__doc__))
        elif isinstance(attr, staticmethod) and not getattr(attr.__func__, "_sticky", False):
            setattr(cls, name, staticmethod(boundary(attr.__func__)))
        elif isinstance(attr, classmethod):
            setattr(cls, name, classmethod(boundary(attr.__func__)))
        elif inspect.isfunction(attr) and not getattr(attr, "_sticky", False):
            setattr(cls, name, boundary(attr, own))
    return cls


def context_class(cls: type[_C]) -> type[_C]:
    """:func:`boundary_class` for a number context (and register its type)."""
    register_context_type(cls)
    return boundary_class(cls, own=True)


def entry(f: _F) -> _F:
    """Mark ``f`` as a public entry point of mpvi: :func:`boundary` (it computes at its
    arguments' context and leaves the caller's precision as it was).  Written on every
    name of mpvi's public surface -- the names of ``mpvi.__all__``, the documented
    functions of :mod:`mpvi.analysis.jets`, :mod:`mpvi.analysis.symbolic`, :mod:`mpvi.ground.expressions`,
    :mod:`mpvi.model.singular`, :mod:`mpvi.model.callables` and the factories of :mod:`mpvi.systems`
    (``tests/test_guards.py`` lists them) -- and nowhere else: code called from an entry
    point runs inside it and pays nothing."""
    return boundary(f)


def entry_class(cls: type[_C]) -> type[_C]:
    """Mark the public class ``cls`` as entry points: every public method, constructor
    and property (:func:`boundary_class`)."""
    return boundary_class(cls)


def sticky(f: _F) -> _F:
    """Mark a method (or a property's getter) that :func:`boundary_class` leaves alone:
    ``activate``, whose purpose is to change the thread's precision, and methods called
    in the hot loop that neither compute at the thread's precision nor leave it changed
    (``isfinite``, ``eps``), where the wrapper would cost 7 % of a Simpson step."""
    f._sticky = True                        # type: ignore[attr-defined]
    return f
