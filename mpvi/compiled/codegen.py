"""The one code generator of mpvi: sympy expressions to a Python function that computes
with a number context's own functions.

:func:`generate` prints ``exprs`` as straight-line Python after common subexpression
elimination (``sympy.cse``), with every non-integer rational coefficient computed once in
the context (``_r0 = 1/3`` at the context's precision, not at every call) and the
functions (``sin``, ``sqrt``, ``mpf``, ``pi``...) bound to the context
(:meth:`mpvi.numbers.context.Context.namespace`): nothing is evaluated at a precision other than
the context's, and no float appears.  ``stages`` are assignments evaluated before the
CSE'd body (``x_k = a_k0 c_0 + a_k1 c_1`` at each quadrature node): the expressions then
stay small -- the system's derivatives with node symbols -- instead of growing with the
node values substituted into them, which keeps the build of a kernel for a system with
many degrees of freedom in seconds.

Special functions (erf, gamma, Bessel, Heaviside, ...: the context's
``SPECIAL_FUNCTIONS_OF_CODE``) print as the context's functions, and the derivatives sympy
leaves unevaluated (of Abs, sign, zeta, floor) are first written in functions the printer
knows (:func:`evaluable`); a function no context evaluates is refused by name, when a
system is built (:func:`check_functions`) or here, never by a ``NameError`` at the first
call.

Generated functions are cached per process (:func:`compile_exprs`): a system built again
with the same expressions (a sweep that makes a new system per run, a fresh instance in a
worker process) reuses them.  Arguments, constants and subexpressions get fixed names, so
the order of the operations -- and their rounding -- is the same in every process.
"""
from __future__ import annotations

import builtins
import re
from fractions import Fraction
from typing import Any, Sequence

import sympy as sp
from sympy.core.function import AppliedUndef, ArgumentIndexError
from sympy.printing.codeprinter import PrintMethodNotImplementedError
from sympy.printing.pycode import MpmathPrinter

from mpvi.compiled import cbackend

TIME = sp.Symbol("t")
"""The time symbol of generated expressions (use it in L(t, q, v) and F(t, q, v))."""


class _ZetaDerivative(sp.Function):
    """zeta^(k)(s), the k-th derivative of Riemann's zeta function: sympy leaves
    ``Derivative(zeta(s), s)`` unevaluated, mpmath evaluates it (``zeta(s, 1, k)``).
    Printed ``zetaderiv(k, s)``."""

    nargs = 2

    def fdiff(self, argindex=2):
        if argindex != 2:
            raise ArgumentIndexError(self, argindex)
        k, s = self.args
        return _ZetaDerivative(k + 1, s)


class _DiracComb(sp.Function):
    """The k-th derivative of the Dirac comb sum_n DiracDelta(x - n), the derivative of
    floor and ceiling: 0 off the integers, undefined (nan) on them.  Printed
    ``diraccomb(x)``."""

    nargs = 2

    def fdiff(self, argindex=1):
        if argindex != 1:
            raise ArgumentIndexError(self, argindex)
        x, k = self.args
        return _DiracComb(x, k + 1)


class _Floor(sp.Function):
    """floor while a derivative is taken (sympy leaves Derivative(floor(x), x) unevaluated)."""

    def fdiff(self, argindex=1):
        return _DiracComb(self.args[0], 0)


class _Ceiling(sp.Function):
    """ceiling while a derivative is taken."""

    def fdiff(self, argindex=1):
        return _DiracComb(self.args[0], 0)


_WHILE_DIFFERENTIATED = ((lambda e: isinstance(e, sp.zeta) and len(e.args) == 1,
                          lambda e: _ZetaDerivative(0, e.args[0]), _ZetaDerivative,
                          lambda k, s: sp.zeta(s) if k == 0 else _ZetaDerivative(k, s)),
                         (sp.floor, _Floor, _Floor, sp.floor),
                         (sp.ceiling, _Ceiling, _Ceiling, sp.ceiling))
"""(query, differentiable form, its class, back): functions whose derivatives sympy leaves
unevaluated, replaced while a ``Derivative`` of them is evaluated (:func:`evaluable`)."""


def _evaluate_derivative(d):
    body = d.expr
    for query, form, _, _ in _WHILE_DIFFERENTIATED:
        body = body.replace(query, form)
    result = sp.Derivative(body, *d.variable_count).doit()
    for _, _, cls, back in _WHILE_DIFFERENTIATED:
        result = result.replace(cls, back)
    return result


def evaluable(expr):
    """``expr`` with the unevaluated derivatives and complex parts that differentiation
    leaves evaluated, the symbols taken as real (the values of generated code are).

    ``diff(Abs(x), x)`` of a symbol without assumptions is written with ``re(x)``,
    ``im(x)`` and their derivatives: it becomes ``sign(x)``; ``Derivative(sign(x), x)``
    becomes ``2 DiracDelta(x)``, ``Derivative(zeta(u), x)`` ``zeta'(u) u'`` (the private
    ``_ZetaDerivative``), ``Derivative(floor(u), x)`` a Dirac comb ``_DiracComb``, and the
    ``Subs`` of the chain rule are done.  A derivative sympy cannot evaluate (of an
    undefined function) stays.  An expression without ``Derivative``, ``Subs``, ``re`` or
    ``im`` is returned as it is.

    Parameters
    ----------
    expr : sympy expression

    Returns
    -------
    sympy expression
    """
    if not expr.has(sp.Derivative, sp.Subs, sp.re, sp.im):
        return expr
    real = {s: sp.Dummy(s.name, real=True) for s in expr.free_symbols}
    e = expr.xreplace(real).replace(lambda a: isinstance(a, sp.Derivative), _evaluate_derivative)
    e = e.replace(lambda a: isinstance(a, sp.Subs), lambda a: a.doit())  # of the chain rule
    return e.xreplace({d: s for s, d in real.items()})


class ContextPrinter(MpmathPrinter):
    """Prints ``sin(x)``, ``mpf(1)/mpf(3)`` with bare names, bound later to a context.

    The special functions print as the names of ``Context.SPECIAL_FUNCTIONS_OF_CODE``; an
    unevaluated ``Derivative`` is never printed (:func:`evaluable` writes the ones mpvi
    evaluates)."""

    def _module_format(self, fqn, register=True):
        return fqn.split(".")[-1]

    def _call(self, name, args):
        return f"{name}({', '.join(self._print(a) for a in args)})"

    def _print_airyaiprime(self, expr):
        return self._call("airyai", (expr.args[0], 1))

    def _print_airybiprime(self, expr):
        return self._call("airybi", (expr.args[0], 1))

    def _print_DiracDelta(self, expr):
        return self._call("diracdelta", expr.args[:1])  # any order: 0 off 0, nan at 0

    def _print__DiracComb(self, expr):
        return self._call("diraccomb", expr.args[:1])

    def _print_Derivative(self, expr):
        raise PrintMethodNotImplementedError(f"Unsupported by {type(self)}: {expr}")


_PRINTED_AS = {"zeta": "zeta", "_ZetaDerivative": "zetaderiv", "LambertW": "lambertw",
               "polygamma": "polygamma", "Heaviside": "heaviside", "erfi": "erfi", "Ei": "ei",
               "expint": "expint", "li": "li", "Si": "si", "Ci": "ci", "Shi": "shi",
               "Chi": "chi", "airyai": "airyai", "airybi": "airybi", "elliptic_k": "ellipk",
               "elliptic_e": "ellipe", "elliptic_f": "ellipf"}
"""sympy functions printed as a call of the context's function of the same arguments (the
others as sympy's MpmathPrinter prints them)."""
for _sympy_name, _code_name in _PRINTED_AS.items():
    setattr(ContextPrinter, f"_print_{_sympy_name}",
            lambda self, expr, _name=_code_name: self._call(_name, expr.args))

_ELEMENTARY = (sp.sin, sp.cos, sp.tan, sp.exp, sp.log, sp.sinh, sp.cosh, sp.tanh, sp.asin,
               sp.acos, sp.atan, sp.atan2, sp.asinh, sp.acosh, sp.atanh, sp.erf, sp.erfc)
"""Functions whose derivatives are elementary functions of the same arguments."""


def _calls(e) -> set:
    return e.atoms(sp.Function, sp.Derivative)


def _refusal(f, ns) -> str | None:
    """Why the call ``f`` (an atom of a system's expressions) cannot be evaluated, or None."""
    if isinstance(f, AppliedUndef):
        return (f"{f.func} is an undefined function ({f}): mpvi evaluates explicit "
                f"expressions only; write {f.func}'s formula")
    if isinstance(f, sp.Derivative):
        return (f"{f} cannot be evaluated: sympy does not differentiate "
                f"{getattr(f.expr, 'func', f.expr)} there, and mpvi has no formula for it")
    try:
        text = ContextPrinter().doprint(f)
    except (PrintMethodNotImplementedError, ValueError, TypeError):
        return f"the function {f.func} ({f}) has no evaluation in mpvi"
    missing = _missing_names(text, ns)
    if missing:
        return f"the function {f.func} ({f}) has no evaluation in mpvi ({', '.join(missing)})"
    return None


def _missing_names(source: str, ns: dict) -> list:
    """The names called in ``source`` that neither ``ns`` nor Python's builtins bind."""
    called = set(re.findall(r"\b([A-Za-z_]\w*)\(", source))
    return sorted(n for n in called if n not in ns and not hasattr(builtins, n))


def check_functions(exprs: Sequence, what: str, ctx: Any, variables: Sequence | None = None,
                    order: int = 3) -> None:
    """Refuse a function that no path can evaluate, in ``exprs`` or in their derivatives.

    The calls in ``exprs`` and in their derivatives by ``variables`` up to ``order`` (a
    system uses those of L up to the third: the residual's Jacobian differentiates L_vv),
    written by :func:`evaluable`, must print (:class:`ContextPrinter`) to functions that
    ``ctx`` binds (:meth:`mpvi.numbers.context.Context.namespace`).  Only the calls are
    differentiated, not the whole expressions: a call's derivative is its function's
    derivative times those of its arguments, whose calls are in ``exprs`` too.

    Parameters
    ----------
    exprs : sequence of sympy expressions
        E.g. a Lagrangian and the components of a force.
    what : str
        Who the expressions belong to (a system's name), for the message.
    ctx : Context
        The number context that will evaluate them.
    variables : sequence of sympy symbols, optional
        The symbols derivatives are taken by (a system's coordinates, velocities and
        time; not its parameters).  Default: every free symbol.
    order : int, default 3
        The highest derivative checked.

    Raises
    ------
    ValueError
        An undefined function (``sympy.Function('f')(q)``), a function without an
        evaluation in mpvi, or a derivative sympy leaves unevaluated and mpvi cannot
        evaluate; the message names it and ``what``.
    """
    check_calls(function_calls(exprs, variables, order), what, ctx)


def function_calls(exprs: Sequence, variables: Sequence | None = None, order: int = 3) -> list:
    """The calls :func:`check_functions` checks, in the order it checks them: those in
    ``exprs`` and in their derivatives by ``variables`` up to ``order``, depth by depth.
    Context-free (a system's model finds them once; :func:`check_calls` checks them
    against each context)."""
    frontier = set().union(*(_calls(evaluable(sp.sympify(e, strict=True))) for e in exprs))
    seen: set = set()
    found = []
    for depth in range(order + 1):
        following = set()
        for f in sorted(frontier - seen, key=sp.default_sort_key):
            seen.add(f)
            found.append(f)
            if (depth < order and not isinstance(f, _ELEMENTARY)
                    and not isinstance(f, (AppliedUndef, sp.Derivative))):
                by = f.free_symbols if variables is None else f.free_symbols & set(variables)
                for s in sorted(by, key=sp.default_sort_key):
                    following |= _calls(evaluable(sp.diff(f, s)))
        frontier = following
    return found


_NON_FINITE = {sp.nan: "nan (not a number)", sp.oo: "oo (infinity)", -sp.oo: "-oo (infinity)",
               sp.zoo: "zoo (complex infinity: sympy's value of log(0), 1/0, tan(pi/2), ...)"}
"""The non-finite sympy constants, with what to call them in a message."""

_STRUCTURE = (sp.Symbol, sp.Number, sp.NumberSymbol, sp.core.numbers.ImaginaryUnit,
              sp.logic.boolalg.BooleanAtom, sp.Add, sp.Mul, sp.Pow, sp.Function, sp.Derivative,
              sp.Subs, sp.Tuple, sp.core.relational.Relational,
              sp.logic.boolalg.BooleanFunction, sp.functions.elementary.piecewise.ExprCondPair,
              sp.functions.elementary.miscellaneous.MinMaxBase)
"""The kinds of sympy node generated code evaluates: numbers, symbols and constants, the
arithmetic, function calls (each checked by :func:`check_calls`), the derivatives and
substitutions :func:`evaluable` resolves, and Piecewise's conditions."""


def check_expressions(exprs: Sequence, what: str) -> None:
    """Refuse a non-finite constant (``nan``, ``oo``, ``zoo`` -- what sympy makes of
    ``log(0)``) or a sympy object that generated code cannot evaluate (``Sum``,
    ``Integral``, ``Limit``, a matrix symbol, ...) anywhere in ``exprs``: context-free,
    at construction, before any number is computed (``nan * q`` in V was integrated as if
    V were 0, ``zoo`` or ``Sum`` failed later with sympy's KeyError or a NameError).

    Parameters
    ----------
    exprs : sequence of sympy expressions
        E.g. a potential, the entries of a mass matrix, the components of a force.
    what : str
        Whose expressions they are, for the message.

    Raises
    ------
    ValueError
        Naming ``what``, the offending object and the remedy.
    """
    for e in exprs:
        for node in sp.preorder_traversal(sp.sympify(e, strict=True)):
            if isinstance(node, sp.Atom) and node in _NON_FINITE:
                raise ValueError(f"{what}: the constant {_NON_FINITE[node]} in {_short(e)} leaves "
                                 "it undefined: write a finite expression")
            if not isinstance(node, _STRUCTURE):
                raise ValueError(f"{what}: {type(node).__name__} ({_short(node)}) cannot be "
                                 "evaluated by mpvi: write it out as a formula (for a Sum or an "
                                 "Integral with known limits, sympy's .doit())")


def _short(e, width=60):
    text = str(e)
    return text if len(text) <= width else text[:width - 3] + "..."


def check_calls(calls: Sequence, what: str, ctx: Any) -> None:
    """Refuse the first of ``calls`` (from :func:`function_calls`) that ``ctx`` cannot
    evaluate.

    Raises
    ------
    ValueError
        As :func:`check_functions`.
    """
    ns = ctx.namespace()
    for f in calls:
        why = _refusal(f, ns)
        if why is not None:
            raise ValueError(f"{what}: {why}")


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
        CSE'd body; each expression may use the arguments and earlier stages.  A stage
        that no expression needs, directly or through a later stage, is left out.
    compiled : bool, optional
        In the gmp context, whether to return the function compiled to C against MPFR
        (:mod:`mpvi.compiled.cbackend`: bit-identical, faster).  Default (None): compiled when
        available and not switched off (``MPVI_COMPILED=0``) -- at once if its module is
        in the disk cache, else when its :class:`mpvi.compiled.cbackend.Rental` says so; True:
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
    and ``e``).

    The printing (CSE, the hoisted rationals) does not depend on the context and is done
    once per process (:func:`printed_source`); only the names are checked against ``ctx``
    and the constants converted into it."""
    return bound_source(printed_source(arg_groups, exprs, name, stages), ctx, name)


def bound_source(printed: tuple, ctx: Any, name: str) -> tuple[str, dict]:
    """A source of :func:`printed_source` bound to ``ctx``: its names checked against the
    context's, its constants converted into it.  (source, {name: context number}).

    Raises
    ------
    ValueError
        A call the context cannot evaluate, naming it.
    """
    source, constants, calls = printed
    ns = ctx.namespace()
    if isinstance(source, Exception):       # a call the printer refused: say which
        why = next(filter(None, (_refusal(f, ns) for f in calls)), None)
        raise ValueError(f"generate {name}: {why or 'an expression mpvi cannot print'}")
    missing = _missing_names(source.split("\n", 1)[1], ns)
    if missing:
        raise ValueError(f"generate {name}: no function {', '.join(missing)} in the "
                         f"{ctx.name} context")
    table = {d: ctx.num(r) for d, r in constants}
    table.update(pi=ns["pi"], E=ns["E"], e=ns["e"])
    return source, table


_PRINTED: dict = {}
"""Every source printed by :func:`printed_source` in this process, keyed by (name,
arguments, expressions, stages): context-free."""

PRINTS = [0]
"""How many sources :func:`printed_source` has printed (not found in its cache): binding a
system to another context prints none (tests count them)."""


def printed_source(arg_groups: Sequence, exprs: Sequence, name: str = "kernel",
                   stages: Sequence = ()) -> tuple:
    """The context-free part of :func:`generate_source`, cached per process: (Python
    source, [(constant name, Fraction)] of the hoisted rationals, the calls in the
    expressions).  The source is a ``ValueError`` for expressions the printer refuses
    (:func:`generate_source` then names the call).  The cache is keyed by the expressions
    with the arguments renamed to their fixed names, so kernels built again with fresh
    symbols (sympy Dummies) find their source.

    Raises
    ------
    ValueError
        Symbols that are not arguments.
    """
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
    exprs = tuple(sp.sympify(e, strict=True).xreplace(subs) for e in exprs)
    key = (name, tuple(g if isinstance(g, sp.Basic) else len(g) for g in groups),
           tuple(staged), exprs)
    found = _PRINTED.get(key)
    if found is None:
        found = _PRINTED[key] = _print_source(groups, subs, staged, exprs, name)
        PRINTS[0] += 1
    return found


def _print_source(groups, subs, staged, exprs, name):
    staged = [(s, evaluable(e)) for s, e in staged]
    exprs = [evaluable(e) for e in exprs]
    known = set(subs.values())
    free = set().union(set(), *(e.free_symbols for e in exprs),
                       *(e.free_symbols for _, e in staged)) - known
    if free:
        raise ValueError(f"generate {name}: symbols {sorted(map(str, free))} are not "
                         "arguments (or collide with the generated names _a*, _c*, _r*, _s*, _w*)")
    # a stage no expression needs (not even through a later stage) is not computed: a
    # kernel's variant may read only some of its nodes (C compilers warned "set but not used")
    needed = set().union(set(), *(e.free_symbols for e in exprs))
    kept = []
    for sym, e in reversed(staged):
        if sym in needed:
            kept.append((sym, e))
            needed |= e.free_symbols
    staged = kept[::-1]
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
    try:
        lines += [f"    {pr.doprint(sym)} = {pr.doprint(e)}" for sym, e in staged]
        lines += [f"    {pr.doprint(sym)} = {pr.doprint(e)}" for sym, e in replacements]
        lines.append(f"    return [{', '.join(pr.doprint(e) for e in reduced)}]")
    except PrintMethodNotImplementedError as exc:
        calls = [f for e in exprs + [e for _, e in staged]
                 for f in sorted(_calls(e), key=sp.default_sort_key)]
        return exc, [], calls
    constants = [(pr.doprint(d), Fraction(int(r.p), int(r.q))) for r, d in constants.items()]
    return "\n".join(lines), constants, []


def function(source: str, table: dict, ctx: Any, name: str, compiled: bool | None = None):
    """The function ``name`` defined by ``source`` (from :func:`generate_source`) with the
    context's functions and the constant ``table``; ``compiled`` as in :func:`generate`."""
    ns = ctx.namespace()
    ns.update(table)
    exec(compile(source, f"<mpvi generated {name}>", "exec"), ns)
    if compiled is not False and getattr(ctx, "compiles_ball_kernels", False):
        from mpvi.compiled import carb
        if compiled:
            return carb.compile_function(ns[name], source, ctx, table) or ns[name]
        return carb.accelerated(ns[name], source, ctx, table)
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
    key = (ctx.key, cbackend.active(ctx), cbackend.balls_active(ctx), name,
           tuple(a if isinstance(a, sp.Basic) else tuple(a) for a in args),
           tuple(sp.sympify(e, strict=True) for e in exprs), tuple(stages))
    f = _FUNCTIONS.get(key)
    if f is None:
        f = _FUNCTIONS[key] = generate(args, exprs, ctx, name, stages)
    return f
