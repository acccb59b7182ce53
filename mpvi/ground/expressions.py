"""Expressions from text, read by a parser of a closed grammar: nothing read runs as code.

Every text that becomes a sympy expression in mpvi -- a formula of a results directory's
JSON or of a published CSV (``mpvi diff``, ``mpvi list``, ``mpvi report``), a potential,
mass matrix, Lagrangian or observable given as a string, a method parameter given as
text, a modified Hamiltonian kept in a study cache -- is read by :func:`parse_expression`,
never by ``eval``, ``exec``, ``sympy.sympify`` or
``sympy.parsing.sympy_parser.parse_expr`` (which run the text as Python).  The text is
cut into tokens and parsed by a recursive descent over the grammar below; sympy objects
are built from the tokens, nothing is looked up in a Python namespace.  (Python's own
``ast.parse`` is not used: it recurses once per term of a flat sum and fails on the
20 000-term sums of a modified Hamiltonian.)

Grammar (Python's precedence; ``^`` is a power, as in sympy's ``convert_xor``)::

    expression := term (("+" | "-") term)*
    term       := factor (("*" | "/") factor)*
    factor     := ("+" | "-") factor | power
    power      := atom (("**" | "^") factor)?
    atom       := number | name | name "(" arguments ")" | "(" expression ")"
    number     := digits ["." [digits]] [exponent] | "." digits [exponent]
    exponent   := ("e" | "E") ["+" | "-"] digits
    name       := an ASCII letter or "_", then ASCII letters, digits and "_"

A number is exact: ``0.1`` is ``Rational(1, 10)``, never a float.  A name is one of the
caller's ``names`` (name -> sympy object), a constant (:data:`CONSTANTS`) or, when the
caller asks for it (``free_symbols=True``), a new ``sympy.Symbol``; a name with ``__`` and
a Python keyword are refused.  A call is of a function of ``functions`` (default
:data:`FUNCTIONS`); ``Sum(f, (s, a, b))`` takes a tuple of its index and integer limits,
``Matrix([[...], ...])`` (only when the caller lists it) a list of rows.  Nothing else
exists: no attribute, subscript, keyword argument, string, lambda, comprehension,
starred argument.

The work is bounded: the text's length (``max_length``), the nesting of parentheses,
calls and powers (``max_depth``), the digits of a number (``max_digits``), a numeric
exponent and the numeric arguments of the functions that compute exactly on integers
(factorial, binomial, gamma) and a ``Sum``'s number of terms (``max_exponent``), and the
bits of a power of two numbers (``max_bits``): ``2**10**10`` or ``factorial(10**9)`` is
refused at once, not computed.  A chain of sums (products) is read by a loop, not a
recursion, and built by one ``sympy.Add`` (``sympy.Mul``): a sum of 200 000 terms is
read in time linear in its length, plus sympy's cost of building its terms.  Every
failure is an :class:`ExpressionError` naming what was read (``what``), the cause and
where in the text.
"""
from __future__ import annotations

import keyword
import re
from typing import TYPE_CHECKING, Callable, Mapping

import sympy as sp

from mpvi.ground.checks import check_flag, integer
from mpvi.ground.precision import entry

if TYPE_CHECKING:
    import sympy
    from typing_extensions import Unpack

    from mpvi.ground.types import ExprLike, MatrixLike, ParseOptions

__all__ = ["ExpressionError", "parse_expression", "as_expression", "as_matrix",
           "FUNCTIONS", "CONSTANTS"]

FUNCTIONS: dict = {name: getattr(sp, name) for name in (
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "exp", "log", "sqrt", "Abs", "sign", "erf", "erfc", "gamma", "factorial",
    "binomial", "Sum")}
"""The functions a text may call by default: the elementary and a few special functions
a potential may use, and ``Sum`` (finite sums of the published formulas)."""

CONSTANTS: dict = {"pi": sp.pi, "E": sp.E, "I": sp.I, "oo": sp.oo}
"""The constants a text may name by default (a caller's ``names`` take precedence)."""

MAX_LENGTH = 10_000_000
"""Default longest text (characters): a modified Hamiltonian's term runs to megabytes."""
MAX_DEPTH = 100
"""Default deepest nesting of parentheses, calls, lists and powers."""
MAX_DIGITS = 1000
"""Default most digits of a number (its numerator and its denominator as a fraction)."""
MAX_EXPONENT = 1000
"""Default largest magnitude of a numeric exponent, of a numeric argument of factorial,
binomial and gamma, and of the number of terms of a ``Sum``."""
MAX_BITS = 20_000
"""Default most bits of a power of two numbers (a numerator or denominator)."""

_INTEGER_FUNCTIONS = (sp.factorial, sp.binomial, sp.gamma)
"""Functions that compute exactly on integer (and half-integer) arguments: their
numeric arguments are bounded by ``max_exponent``."""

_TOKEN = re.compile(r"""[ \t\r\n]+
    |(?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
    |(?P<name>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<op>\*\*|[-+*/^(),\[\]])""", re.VERBOSE)
_NUMBER = re.compile(r"([0-9]*)(?:\.([0-9]*))?(?:[eE]([-+]?[0-9]+))?")
_END = "end"


class ExpressionError(ValueError):
    """A text that is not an expression of the grammar of :mod:`mpvi.ground.expressions`, or that
    exceeds one of its limits.

    Attributes
    ----------
    what : str
        What was read (the caller's label, e.g. "published value hermite_stability/trace").
    reason : str
        The cause, with the place in the text.
    """

    def __init__(self, what: str, reason: str):
        super().__init__(f"{what}: {reason}")
        self.what, self.reason = what, reason

    def __reduce__(self):                    # pickles across processes (parallel runs)
        return type(self), (self.what, self.reason)


class _Sequence:
    """A parenthesised tuple or a bracketed list: only an argument of Sum or Matrix."""

    def __init__(self, kind, items, position):
        self.kind, self.items, self.position = kind, items, position


def _short(x):
    """A number for a message: itself if short, else its start and length."""
    text = str(x)
    return text if len(text) <= 24 else f"{text[:10]}...({len(text)} characters)"


def _excerpt(text, position, width=24):
    """Where ``position`` is in ``text``, for a message: 'at character 7 of "x + y"' for a
    short text, else the characters around it."""
    if len(text) <= 2 * width:
        return f"at character {position + 1} of {text!r}"
    lo, hi = max(0, position - width), position + width
    near = ("..." if lo else "") + text[lo:hi] + ("..." if hi < len(text) else "")
    return f"at character {position + 1} of {len(text)}, near {near!r}"


class _Parser:
    """One parse: the tokens of a text and the recursive descent over them."""

    def __init__(self, text, names, what, free_symbols, functions, constants, evaluate,
                 tuples, max_depth, max_digits, max_exponent, max_bits):
        self.text, self.what, self.free, self.evaluate = text, what, free_symbols, evaluate
        self.tuples = tuples
        self.names = {**constants, **names}
        self.functions = functions
        self.max_depth, self.max_digits = max_depth, max_digits
        self.max_exponent, self.max_bits = max_exponent, max_bits
        self.symbols: dict = {}
        self.unevaluated: dict = {}          # id -> (kind, args, object): evaluate=False
        kinds, values, positions = [], [], []
        position, match = 0, _TOKEN.match
        while position < len(text):
            m = match(text, position)
            if m is None:
                self.fail(f"unexpected character {text[position]!r}", position)
            kind = m.lastgroup
            if kind is not None:
                value = m.group(kind)
                if kind == "op":
                    kind = "**" if value == "^" else value
                kinds.append(kind)
                values.append(value)
                positions.append(position)
            position = m.end()
        kinds.append(_END)
        values.append("")
        positions.append(len(text))
        self.kinds, self.values, self.positions = kinds, values, positions
        self.i = 0

    def fail(self, reason, position=None):
        where = "" if position is None else " " + _excerpt(self.text, position)
        raise ExpressionError(self.what, reason + where)

    def unexpected(self):
        i = self.i
        if self.kinds[i] == _END:
            self.fail("unexpected end of the text", self.positions[i])
        self.fail(f"unexpected {self.values[i]!r}", self.positions[i])

    def expect(self, kind):
        if self.kinds[self.i] != kind:
            self.unexpected()
        self.i += 1

    def deeper(self, depth):
        if depth >= self.max_depth:
            self.fail(f"nested more than {self.max_depth} levels deep", self.positions[self.i])
        return depth + 1

    def value(self, x, position):
        """``x`` as an operand of arithmetic: a sympy expression."""
        if not isinstance(x, sp.Basic):
            what = x.kind if isinstance(x, _Sequence) else "a Matrix"
            self.fail(f"{what} is not a value of arithmetic", position)
        return x

    # ----- the grammar -----------------------------------------------------------------
    def parse(self):
        if self.kinds[0] == _END:
            self.fail("empty expression")
        result = self.expression(0)
        if self.kinds[self.i] != _END:
            self.unexpected()
        if isinstance(result, _Sequence):
            if not (self.tuples and result.kind == "a tuple"):
                self.fail(f"{result.kind} is not an expression", result.position)
            return sp.Tuple(*(self.value(x, result.position) for x in result.items))
        return result

    def expression(self, depth):
        kinds, position = self.kinds, self.positions[self.i]
        first = self.term(depth)
        if kinds[self.i] not in ("+", "-"):
            return first
        terms = [self.value(first, position)]
        while kinds[self.i] in ("+", "-"):
            minus = kinds[self.i] == "-"
            self.i += 1
            position = self.positions[self.i]
            t = self.value(self.term(depth), position)
            terms.append(self.negative(t) if minus else t)
        return self.combine("Add", terms)

    def term(self, depth):
        kinds, position = self.kinds, self.positions[self.i]
        first = self.factor(depth)
        if kinds[self.i] not in ("*", "/"):
            return first
        factors = [self.value(first, position)]
        while kinds[self.i] in ("*", "/"):
            divide = kinds[self.i] == "/"
            self.i += 1
            position = self.positions[self.i]
            f = self.value(self.factor(depth), position)
            factors.append(sp.Pow(f, -1, evaluate=self.evaluate) if divide else f)
        return self.combine("Mul", factors)

    def factor(self, depth):
        kinds = self.kinds
        if kinds[self.i] not in ("+", "-"):
            return self.power(depth)
        minus = False
        while kinds[self.i] in ("+", "-"):          # a run of signs: no recursion
            minus ^= kinds[self.i] == "-"
            self.i += 1
        position = self.positions[self.i]
        x = self.value(self.power(depth), position)
        return -x if minus else x

    def power(self, depth):
        position = self.positions[self.i]
        base = self.atom(depth)
        if self.kinds[self.i] != "**":
            return base
        self.i += 1
        inner = self.deeper(depth)
        at = self.positions[self.i]
        exponent = self.value(self.factor(inner), at)
        return self.pow(self.value(base, position), exponent, at)

    def atom(self, depth):
        kind, i = self.kinds[self.i], self.i
        if kind == "number":
            self.i += 1
            return self.number(self.values[i], self.positions[i])
        if kind == "name":
            self.i += 1
            if self.kinds[self.i] == "(":
                return self.call(self.values[i], self.positions[i], depth)
            return self.name(self.values[i], self.positions[i])
        if kind in ("(", "["):
            self.i += 1
            inner = self.deeper(depth)
            close = ")" if kind == "(" else "]"
            items = self.items(inner, close)
            if kind == "(" and len(items) == 1 and self.values[self.i - 2] != ",":
                return items[0]
            return _Sequence("a tuple" if kind == "(" else "a list", items, self.positions[i])
        self.unexpected()

    def items(self, depth, close):
        """Comma-separated expressions up to ``close`` (consumed); at least one."""
        items = [self.expression(depth)]
        while self.kinds[self.i] == ",":
            self.i += 1
            if self.kinds[self.i] == close:
                break
            items.append(self.expression(depth))
        self.expect(close)
        return items

    # ----- the leaves ------------------------------------------------------------------
    def number(self, text, position):
        whole, fraction, exponent = _NUMBER.fullmatch(text).groups()
        fraction = fraction or ""
        digits = (whole + fraction).lstrip("0")
        if len((exponent or "").lstrip("+-")) > 12:
            self.fail(f"a number with an exponent of {len(exponent.lstrip('+-'))} digits",
                      position)
        scale = int(exponent or 0) - len(fraction)
        if len(digits) + max(scale, 0) > self.max_digits or -scale >= self.max_digits:
            self.fail(f"a number of more than {self.max_digits} digits", position)
        if not self.evaluate and (fraction or exponent or "." in text):
            return sp.Float(text)
        try:
            mantissa = int(digits or "0")
        except ValueError:                           # beyond the interpreter's int digits
            self.fail(f"a number of {len(digits)} digits", position)
        if scale >= 0:
            return sp.Integer(mantissa * 10 ** scale)
        return sp.Rational(mantissa, 10 ** -scale)

    def checked_name(self, name, position):
        if "__" in name:
            self.fail(f"the name {name!r} has '__' (no dunder names)", position)
        if keyword.iskeyword(name):
            self.fail(f"{name!r} is a Python keyword, not a name", position)

    def name(self, name, position):
        x = self.names.get(name)
        if x is not None:
            return x
        self.checked_name(name, position)
        if name in self.functions:
            self.fail(f"{name!r} is a function: call it, {name}(...)", position)
        if self.free:
            s = self.symbols.get(name)
            if s is None:
                s = self.symbols[name] = sp.Symbol(name)
            return s
        known = sorted(self.names)
        listed = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
        self.fail(f"unknown name {name!r} (known: {listed or 'none'})", position)

    def call(self, name, position, depth):
        f = self.functions.get(name)
        if f is None:
            self.checked_name(name, position)
            known = ", ".join(sorted(self.functions)) or "none"
            self.fail(f"{name!r} is not a function of the grammar (known: {known})", position)
        self.i += 1                                  # the "("
        inner = self.deeper(depth)
        if self.kinds[self.i] == ")":
            self.fail(f"{name}() without arguments", position)
        args = self.items(inner, ")")
        if f is sp.Matrix:
            return self.matrix(args, position)
        if f is sp.Sum or f is sp.Product:
            return self.finite_sum(name, f, args, position)
        args = [self.value(a, position) for a in args]
        if f in _INTEGER_FUNCTIONS:
            for a in args:
                if a.is_Number and not abs(a) <= self.max_exponent:
                    self.fail(f"{name} of {_short(a)} (the limit is {self.max_exponent})",
                              position)
        try:
            return f(*args) if self.evaluate else f(*args, evaluate=False)
        except ExpressionError:
            raise
        except Exception as exc:                     # noqa: BLE001 -- sympy's own refusal
            self.fail(f"{name}(...) is not valid: {' '.join(str(exc).split())[:200]}", position)

    def finite_sum(self, name, f, args, position):
        if len(args) != 2 or not isinstance(args[1], _Sequence) or len(args[1].items) != 3:
            self.fail(f"{name} takes a summand and (index, first, last)", position)
        summand = self.value(args[0], position)
        index, lo, hi = args[1].items
        if not isinstance(index, sp.Symbol) or not all(
                isinstance(x, sp.Basic) and x.is_Integer for x in (lo, hi)):
            self.fail(f"the limits of {name} must be (symbol, integer, integer)", position)
        if abs(hi - lo) > self.max_exponent:
            self.fail(f"{name} of {_short(hi - lo + 1)} terms (the limit is {self.max_exponent})",
                      position)
        return f(summand, (index, lo, hi))

    def matrix(self, args, position):
        rows = args[0].items if len(args) == 1 and isinstance(args[0], _Sequence) \
            and args[0].kind == "a list" else None
        if rows is None:
            self.fail("Matrix takes one list of rows, Matrix([[a, b], [c, d]])", position)
        if all(isinstance(r, _Sequence) and r.kind == "a list" for r in rows):
            rows = [[self.value(x, position) for x in r.items] for r in rows]
            if len({len(r) for r in rows}) != 1:
                self.fail("the rows of a Matrix differ in length", position)
        else:
            rows = [[self.value(x, position)] for x in rows]
        return sp.Matrix(rows)

    # ----- building ----------------------------------------------------------------------
    def combine(self, kind, args):
        """One ``sympy.Add`` or ``sympy.Mul`` of ``args``; unevaluated (evaluate=False),
        the operands that are themselves unevaluated sums (products) are spliced in, as
        ``sympy.parsing.sympy_parser.parse_expr(evaluate=False)`` writes them."""
        cls = sp.Add if kind == "Add" else sp.Mul
        if self.evaluate:
            return cls(*args)
        flat = []
        for a in args:
            entry = self.unevaluated.get(id(a))
            if entry is not None and entry[0] == kind and entry[2] is a:
                flat.extend(entry[1])
            else:
                flat.append(a)
        out = cls(*flat, evaluate=False)
        self.unevaluated[id(out)] = (kind, flat, out)
        return out

    def negative(self, x):
        if self.evaluate:
            return -x
        return self.combine("Mul", [sp.Integer(-1), x])

    def pow(self, base, exponent, position):
        if exponent.is_Rational or exponent.is_Float:
            if not abs(exponent) <= self.max_exponent:
                self.fail(f"the exponent {_short(exponent)} is larger than {self.max_exponent}",
                          position)
            if self.evaluate and base.is_Rational and exponent.is_Rational:
                bits = max(int(base.p).bit_length(), int(base.q).bit_length())
                if bits * abs(exponent) > self.max_bits:
                    self.fail(f"a power of more than {self.max_bits} bits", position)
        return sp.Pow(base, exponent, evaluate=self.evaluate)


@entry
def parse_expression(text: str, names: Mapping[str, sympy.Basic] | None = None, *,
                     what: str = "expression", free_symbols: bool = False,
                     functions: Mapping[str, Callable[..., sympy.Basic]] | None = None,
                     constants: Mapping[str, sympy.Basic] | None = None, evaluate: bool = True,
                     tuples: bool = False, max_length: int = MAX_LENGTH, max_depth: int = MAX_DEPTH,
                     max_digits: int = MAX_DIGITS, max_exponent: int = MAX_EXPONENT,
                     max_bits: int = MAX_BITS) -> sympy.Basic:
    """Read a text as a sympy expression by the closed grammar of :mod:`mpvi.ground.expressions`.

    Parameters
    ----------
    text : str
        The expression, e.g. ``"(7*z**4 - 192*z**2 + 420)/(2*z**4 + 18*z**2 + 420)"``.
    names : mapping of str to sympy object, optional
        The names the text may use (e.g. ``{"q": q, "k": k}``); they take precedence over
        ``constants``.
    what : str, default "expression"
        What the text is, for the error message (e.g. "potential of the pendulum").
    free_symbols : bool, default False
        Whether a name that is neither in ``names`` nor a constant becomes a plain
        ``sympy.Symbol`` of that name (else it is an error).
    functions : mapping of str to callable, optional
        The functions the text may call (default :data:`FUNCTIONS`); ``sympy.Matrix``
        takes a list of rows, ``sympy.Sum`` a tuple of its limits.
    constants : mapping of str to sympy object, optional
        The constants the text may name (default :data:`CONSTANTS`).
    evaluate : bool, default True
        False builds the expression as written, for display: sums, products, powers and
        function calls unevaluated, a decimal a ``sympy.Float`` of its digits.  True
        evaluates, and a decimal is the exact rational it writes.
    tuples : bool, default False
        Whether the whole text may be a tuple of expressions, ``(a, b)`` (a
        ``sympy.Tuple``), e.g. an interval shown in a report.
    max_length : int, default MAX_LENGTH
        The longest text read (characters).
    max_depth : int, default MAX_DEPTH
        The deepest nesting of parentheses, calls, lists and powers.
    max_digits : int, default MAX_DIGITS
        The most digits of the numerator or denominator of a number.
    max_exponent : int, default MAX_EXPONENT
        The largest magnitude of a numeric exponent, of a numeric argument of factorial,
        binomial and gamma, and of the number of terms of a ``Sum``.
    max_bits : int, default MAX_BITS
        The most bits of a power of two numbers.

    Returns
    -------
    sympy.Basic or sympy.Matrix
        The expression (a Matrix only if ``functions`` has ``Matrix`` and the text is one;
        a ``sympy.Tuple`` only with ``tuples``).

    Raises
    ------
    ExpressionError
        The text is not of the grammar (an unexpected character or token, an unknown name
        or function, a dunder name, a Python keyword, invalid arguments) or exceeds a
        limit; the message names ``what``, the cause and the place.
    TypeError
        A flag that is not True or False (``"no"`` is not False), a limit that is not a
        non-negative integer.
    """
    if not isinstance(text, str):
        raise ExpressionError(what, f"expected text, got a {type(text).__name__}")
    for flag, setting in (("free_symbols", free_symbols), ("evaluate", evaluate),
                          ("tuples", tuples)):
        check_flag(setting, f"parse_expression: {flag}")
    for limit, bound in (("max_length", max_length), ("max_depth", max_depth),
                         ("max_digits", max_digits), ("max_exponent", max_exponent),
                         ("max_bits", max_bits)):
        count = integer(bound)
        if count is None or count < 0:
            raise TypeError(f"parse_expression: {limit} must be a non-negative integer, "
                            f"got {bound!r}")
    if len(text) > max_length:
        raise ExpressionError(what, f"{len(text)} characters, more than the {max_length} "
                                    f"read")
    parser = _Parser(text, dict(names or {}), what, free_symbols,
                     FUNCTIONS if functions is None else dict(functions),
                     CONSTANTS if constants is None else dict(constants), evaluate, tuples,
                     max_depth, max_digits, max_exponent, max_bits)
    try:
        return parser.parse()
    except RecursionError:
        raise ExpressionError(what, "nested too deeply for the interpreter's stack") from None


@entry
def as_expression(value: ExprLike, names: Mapping[str, sympy.Basic] | None = None, *,
                  what: str = "expression", **options: Unpack[ParseOptions]) -> sympy.Expr:
    """Return a sympy expression given as text or as a sympy object or number.

    Text is read by :func:`parse_expression`; anything else is converted by
    ``sympy.sympify(value, strict=True)``, which reads no text.

    Parameters
    ----------
    value : str, sympy expression or number
        The expression.
    names : mapping of str to sympy object, optional
        The names a text may use (:func:`parse_expression`).
    what : str, default "expression"
        What the value is, for the error message.
    **options
        Further options of :func:`parse_expression` for a text.

    Returns
    -------
    sympy.Basic
        The expression.

    Raises
    ------
    ExpressionError
        A text that :func:`parse_expression` refuses, or a value that is neither text, a
        sympy object nor a number.
    """
    if isinstance(value, str):
        return parse_expression(value, names, what=what, **options)
    try:
        return sp.sympify(value, strict=True)
    except sp.SympifyError:
        raise ExpressionError(what, f"a {type(value).__name__} is not an expression") from None


@entry
def as_matrix(value: MatrixLike, names: Mapping[str, sympy.Basic] | None = None, *,
              what: str = "matrix", **options: Unpack[ParseOptions]) -> sympy.Matrix:
    """Return a sympy Matrix given as one, or as rows of texts, sympy objects or numbers.

    Every entry is read by :func:`as_expression` (a text by the closed grammar), so that
    ``sympy.Matrix``, which would run a text entry as Python, never sees one.

    Parameters
    ----------
    value : sympy.Matrix or sequence of sequences
        The matrix, or its rows (a flat sequence is a column).
    names : mapping of str to sympy object, optional
        The names a text entry may use.
    what : str, default "matrix"
        What the matrix is, for the error message.
    **options
        Further options of :func:`parse_expression` for text entries.

    Returns
    -------
    sympy.Matrix
        The matrix.

    Raises
    ------
    ExpressionError
        An entry that :func:`as_expression` refuses.
    """
    if isinstance(value, sp.MatrixBase):
        return sp.Matrix(value)
    if hasattr(value, "tolist"):                     # a numpy array
        value = value.tolist()

    def entry(x):
        if isinstance(x, (list, tuple)):
            return [entry(y) for y in x]
        return as_expression(x, names, what=what, **options)
    return sp.Matrix(entry(value))
