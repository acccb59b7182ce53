"""The one code generator of mpvi: sympy expressions to a Python function that computes
with a number context's own functions.

:func:`generate` prints ``exprs`` as straight-line Python after common subexpression
elimination (``sympy.cse``), with every non-integer rational coefficient computed once in
the context (``_r0 = 1/3`` at the context's precision, not at every call) and the
functions (``sin``, ``sqrt``, ``mpf``, ``pi``...) bound to the context
(:meth:`mpvi.context.Context.namespace`): nothing is evaluated at a precision other than
the context's, and no float appears.  ``stages`` are assignments evaluated before the
CSE'd body (``x_k = a_k0 c_0 + a_k1 c_1`` at each quadrature node): the expressions then
stay small -- the system's derivatives with node symbols -- instead of growing with the
node values substituted into them, which keeps the build of a kernel for a system with
many degrees of freedom in seconds.

Generated functions are cached per process (:func:`compile_exprs`): a system built again
with the same expressions (a sweep that makes a new system per run, a fresh instance in a
worker process) reuses them.  Arguments, constants and subexpressions get fixed names, so
the order of the operations -- and their rounding -- is the same in every process.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

import sympy as sp
from sympy.printing.pycode import MpmathPrinter

from . import cbackend

TIME = sp.Symbol("t")
"""The time symbol of generated expressions (use it in L(t, q, v) and F(t, q, v))."""


class ContextPrinter(MpmathPrinter):
    """Prints ``sin(x)``, ``mpf(1)/mpf(3)`` with bare names, bound later to a context."""

    def _module_format(self, fqn, register=True):
        return fqn.split(".")[-1]


def _hoist_rationals(expr, constants):
    """``expr`` with every non-integer rational coefficient replaced by a symbol (recorded
    in ``constants``): the generated code then reads a context number computed once
    instead of dividing two numbers at every call.  Exponents are left alone (x**(1/2)
    stays a square root)."""
    if expr.is_Rational and not expr.is_Integer:
        if expr not in constants:
            constants[expr] = sp.Symbol(f"_r{len(constants)}")
        return constants[expr]
    if expr.is_Pow:
        return sp.Pow(_hoist_rationals(expr.base, constants), expr.exp)
    if expr.is_Atom or not expr.args:
        return expr
    return expr.func(*(_hoist_rationals(a, constants) for a in expr.args))


WIDE = 64
"""The most terms (factors) one printed sum (product) has: wider ones are split into partial
sums on lines of their own, so that neither Python's compiler nor the C backend's
translator recurses once per term (a modified Hamiltonian has thousands)."""


def _narrow(e, lines, names):
    """``e`` with every sum or product of more than :data:`WIDE` arguments replaced by one
    of partial ones, each appended to ``lines`` as (new symbol, partial expression)."""
    if e.is_Atom or not e.args:
        return e
    args = [_narrow(a, lines, names) for a in e.args]
    if (e.is_Add or e.is_Mul) and len(args) > WIDE:
        while len(args) > WIDE:
            parts = []
            for i in range(0, len(args), WIDE):
                sym = next(names)
                lines.append((sym, e.func(*args[i:i + WIDE])))
                parts.append(sym)
            args = parts
        return e.func(*args)
    if any(a is not b for a, b in zip(args, e.args)):
        return e.func(*args)
    return e


def generate(arg_groups: Sequence, exprs: Sequence, ctx: Any, name: str = "kernel",
             stages: Sequence = (), compiled: bool | None = None):
    """One Python function ``name(*args)`` returning the list ``exprs`` evaluated with
    ``ctx``'s functions.

    Parameters
    ----------
    arg_groups : sequence
        One entry per argument: a list of symbols (the argument is a sequence unpacked
        into them) or a single symbol (a scalar argument).
    exprs : sequence of sympy expressions in the arguments' and the stages' symbols
    ctx : number context
    name : the function's name (shown in tracebacks)
    stages : sequence of (symbol, expression)
        Assignments evaluated in order after the arguments are unpacked and before the
        CSE'd body; each expression may use the arguments and earlier stages.
    compiled : bool, optional
        In the gmp context, whether to return the function compiled to C against MPFR
        (:mod:`mpvi.cbackend`: bit-identical, faster).  Default (None): compiled when
        available and not switched off (``MPVI_COMPILED=0``) -- at once if its module is
        in the disk cache, else after :data:`mpvi.cbackend.COMPILE_AFTER` calls; True:
        compiled now; False: the Python function.

    Returns
    -------
    callable
    """
    return function(*generate_source(arg_groups, exprs, ctx, name, stages), ctx, name, compiled)


def generate_source(arg_groups: Sequence, exprs: Sequence, ctx: Any, name: str = "kernel",
                    stages: Sequence = ()) -> tuple[str, dict]:
    """The source printed by :func:`generate` and its constant table: (Python source of
    ``def name(*args)``, {name: context number} of the hoisted rationals, ``pi``, ``E``
    and ``e``)."""
    subs, groups = {}, []
    for g, group in enumerate(arg_groups):
        if isinstance(group, sp.Basic):
            fixed = sp.Symbol(f"_a{g}")
            subs[group] = fixed
            groups.append(fixed)
            continue
        fixed = [sp.Symbol(f"_a{g}_{i}") for i in range(len(group))]
        subs.update(zip(group, fixed))
        groups.append(fixed)
    staged = []
    for i, (sym, e) in enumerate(stages):
        fixed = sp.Symbol(f"_s{i}")
        staged.append((fixed, sp.sympify(e, strict=True).xreplace(subs)))
        subs[sym] = fixed
    exprs = [sp.sympify(e, strict=True).xreplace(subs) for e in exprs]
    known = set(subs.values())
    free = set().union(set(), *(e.free_symbols for e in exprs),
                       *(e.free_symbols for _, e in staged)) - known
    if free:
        raise ValueError(f"generate {name}: symbols {sorted(map(str, free))} are not "
                         "arguments (or collide with the generated names _a*, _c*, _r*, _s*, _w*)")
    constants = {}
    staged = [(s, _hoist_rationals(e, constants)) for s, e in staged]
    exprs = [_hoist_rationals(e, constants) for e in exprs]
    replacements, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("_c"), order="none")
    names, narrow = sp.numbered_symbols("_w"), []
    for sym, e in replacements:
        narrow.append((sym, _narrow(e, narrow, names)))
    reduced = [_narrow(e, narrow, names) for e in reduced]
    replacements = narrow
    pr = ContextPrinter()
    lines = [f"def {name}({', '.join(f'_a{i}' for i in range(len(groups)))}):"]
    for i, group in enumerate(groups):
        if isinstance(group, list) and group:
            lines.append(f"    [{', '.join(pr.doprint(d) for d in group)}] = _a{i}")
    lines += [f"    {pr.doprint(sym)} = {pr.doprint(e)}" for sym, e in staged]
    lines += [f"    {pr.doprint(sym)} = {pr.doprint(e)}" for sym, e in replacements]
    lines.append(f"    return [{', '.join(pr.doprint(e) for e in reduced)}]")
    ns = ctx.namespace()
    table = {pr.doprint(d): ctx.num(Fraction(int(r.p), int(r.q))) for r, d in constants.items()}
    table.update(pi=ns["pi"], E=ns["E"], e=ns["e"])
    return "\n".join(lines), table


def function(source: str, table: dict, ctx: Any, name: str, compiled: bool | None = None):
    """The function ``name`` defined by ``source`` (from :func:`generate_source`) with the
    context's functions and the constant ``table``; ``compiled`` as in :func:`generate`."""
    ns = ctx.namespace()
    ns.update(table)
    exec(compile(source, f"<mpvi generated {name}>", "exec"), ns)
    if compiled is False or not cbackend.active(ctx):
        return ns[name]
    if compiled:
        return cbackend.compile_function(source, ctx.prec, table) or ns[name]
    return cbackend.accelerated(ns[name], source, ctx.prec, table)


_FUNCTIONS: dict = {}
"""Every function made by :func:`compile_exprs` in this process, keyed by (context key,
arguments, expressions)."""


def compile_exprs(args: Sequence, exprs: Sequence, ctx: Any, name: str = "compiled",
                  stages: Sequence = ()):
    """:func:`generate` with a per-process cache: ``f(*args)`` returns the list ``exprs``
    (each argument a scalar symbol or a list of symbols; ``stages`` as in :func:`generate`)."""
    key = (ctx.key, cbackend.active(ctx), name,
           tuple(a if isinstance(a, sp.Basic) else tuple(a) for a in args),
           tuple(sp.sympify(e, strict=True) for e in exprs), tuple(stages))
    f = _FUNCTIONS.get(key)
    if f is None:
        f = _FUNCTIONS[key] = generate(args, exprs, ctx, name, stages)
    return f
