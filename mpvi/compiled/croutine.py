"""A numerical routine of mpvi written once, in Python, and translated to MPFR C.

The routines of the library that the compiled modules also run (the dense elimination and
the tests of :mod:`mpvi.numbers.linalg`, Newton's iteration of :mod:`mpvi.numbers.newton`,
the RK4 and GBS steps of :mod:`mpvi.numbers.explicit`, the Taylor recurrences of
:mod:`mpvi.numbers.series`; :data:`mpvi.compiled.cmodules.ROUTINES`) are Python functions
in a small subset, the one implementation for every context (gmpy2, mpmath, float, Arb).  :func:`translate_routine`
turns such a function into a static C function on ``mpfr_t``, operation by operation in
Python's evaluation order, each operation one correctly rounded MPFR call at ``PREC``
(the module's precision): the same bits as the Python on the gmp context, whose numbers
are correctly rounded at the same precision.  The C is generated when a module is built,
from the source of the function as it is then, so the two cannot drift apart.

The subset (anything else is :class:`~mpvi.compiled.ctranslate.Unsupported`):

* arguments annotated ``int``, ``Real`` (a number), ``list[Real]`` (a vector),
  ``list[list[Real]]`` (a matrix, a list of rows), ``float``, ``list[float]`` and
  ``list[list[float]]`` (doubles), or ``Callable[[...], bool]`` of these
  (a callback, e.g. a field ``f(t, y, out)`` that writes f(t, y) into ``out`` and returns
  whether it could); the return annotated ``int`` or ``bool``; a docstring;
* calls of the callbacks and of other routines of the subset (module-level functions
  the routine's module defines, translated alongside: ``mpvi_<name>``), as a statement,
  a condition or an int;
* statements: ``x = e``, ``x op= e``, ``v[i] = e``, ``m[i][j] = e``, ``r = m[i]`` (a row
  bound by reference, as Python binds the list), the swaps ``x, y = y, x`` (of rows, of
  a vector's numbers or of ints), ``for i in range(...)``, ``while``, ``if/elif/else``,
  ``break``, ``continue``, ``return``;
* expressions: ints and their ``+ - *``, ``//`` and ``%`` by a positive literal (with
  Python's floor), numbers and their ``+ - * /``, ``x ** k`` (an int k: ``mpfr_pow_si``)
  and ``x ** y`` (``mpfr_pow``), an int mixed into a number operation (exact, as gmpy2
  converts it), ``abs``, unary minus, comparisons, ``not``, ``and``, ``or``;
* doubles: ``float(x)`` of a number (``mpfr_get_d``, to nearest, as gmpy2's ``float``),
  their ``+ - * /`` and ``abs`` (one IEEE operation each: the modules are built with
  ``-ffp-contract=off``), a number with a float (``mpfr_add_d`` and its kin: the float
  converted exactly and the result rounded once, as gmpy2 and mpmath do), comparisons
  with floats and int literals.  A routine of the subset called on floats is also
  translated with its numbers as doubles (``mpvi_<name>_d``): the same Python function
  run on Python floats (:func:`mpvi.numbers.newton.refined_update` solves with
  :func:`mpvi.numbers.linalg.gauss_eliminate` so).

Values have Python's meaning: a number name holds its own copy (``mpfr_set`` at the same
precision is exact, and a Python number is immutable, so a copy behaves as the bound
object), a row is a pointer to the row (a list is shared), a swap of two rows swaps the
pointers.  Comparisons with a nan are false and ``!=`` true, as in Python.  Every number
the routine reads must already be at ``PREC`` (the compiled modules' numbers are).
"""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from typing import Any, Callable

from mpvi.compiled.ctranslate import Unsupported

_TYPES = {"int": "int", "bool": "int", "Real": "num", "list[Real]": "vec",
          "list[list[Real]]": "mat", "float": "flt", "list[float]": "fvec",
          "list[list[float]]": "fmat"}
"""The annotations of the subset and the kinds they declare (and ``Callable[[...],
bool]`` of these: a callback, kind ``fn``)."""
_DOUBLES = {"num": "flt", "vec": "fvec", "mat": "fmat", "row": "frow"}
"""The kinds of a routine's numbers translated in doubles (:func:`translate_routine`
with ``doubles``): a ``Real`` becomes a ``float``."""
_C_TYPES = {"int": "long", "vec": "mpfr_t *", "mat": "mpfr_t **", "row": "mpfr_t *",
            "flt": "double", "fvec": "double *", "fmat": "double **", "frow": "double *"}
_C_PARAM = {"int": "long", "num": "mpfr_srcptr", "vec": "mpfr_t *", "mat": "mpfr_t **",
            "flt": "double", "fvec": "double *", "fmat": "double **"}
"""The C type of an argument of each kind."""
_FLOATS = ("flt", "fvec", "fmat", "frow")
_MIXED = {"add": ("mpfr_add_d", "mpfr_add_d"), "sub": ("mpfr_sub_d", "mpfr_d_sub"),
          "mul": ("mpfr_mul_d", "mpfr_mul_d"), "div": ("mpfr_div_d", "mpfr_d_div")}
"""A number and a float: (number op float, float op number); the float is converted
exactly, as gmpy2 and mpmath convert it, and the result rounded once."""
_NUM_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
_INT_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
_CMP_NUM = {ast.Gt: "mpfr_greater_p", ast.GtE: "mpfr_greaterequal_p", ast.Lt: "mpfr_less_p",
            ast.LtE: "mpfr_lessequal_p", ast.Eq: "mpfr_equal_p"}
_CMP_C = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}


def routine_source(func: Callable[..., Any]) -> str:
    """The source of ``func`` (a module-level function), dedented: read once per code
    object (a function defined again has a new one)."""
    return _source_of_code(func.__code__, func)


@functools.lru_cache(maxsize=None)
def _source_of_code(code: Any, func: Callable[..., Any]) -> str:
    return textwrap.dedent(inspect.getsource(func))


class _Signature:
    """The arguments' kinds of a routine or a callback (a callback's kinds are its
    parameters': ``fn``), the kinds of its callback arguments, its return kind."""

    def __init__(self, c: str, kinds: list[str], callbacks: dict[int, list[str]],
                 returns: str):
        self.c, self.kinds, self.callbacks, self.returns = c, kinds, callbacks, returns


def _annotation_kind(where: str, arg: str, node: Any,
                     doubles: bool = False) -> tuple[str, list[str] | None]:
    """(kind, the parameter kinds of a callback or None) of the annotation ``node``; with
    ``doubles``, a ``Real`` is a ``float`` (and a callback refused)."""
    kind, params = _annotation(where, arg, node)
    if not doubles:
        return kind, params
    if params is not None:
        raise Unsupported(f"{where}: the callback {arg} in a routine translated in doubles")
    return _DOUBLES.get(kind, kind), None


def _annotation(where: str, arg: str, node: Any) -> tuple[str, list[str] | None]:
    note = ast.unparse(node).strip("'\"") if node is not None else ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        node = ast.parse(node.value, mode="eval").body
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
            and node.value.id == "Callable" and isinstance(node.slice, ast.Tuple) \
            and len(node.slice.elts) == 2 and isinstance(node.slice.elts[0], ast.List) \
            and ast.unparse(node.slice.elts[1]) == "bool":
        kinds = [_TYPES.get(ast.unparse(e)) for e in node.slice.elts[0].elts]
        if all(k is not None and ast.unparse(e) != "bool"
               for k, e in zip(kinds, node.slice.elts[0].elts)):
            return "fn", [k for k in kinds if k is not None]
    kind = _TYPES.get(note)
    if kind is None or note == "bool":
        raise Unsupported(f"{where}: the argument {arg} is annotated {note or 'nothing'} "
                          f"(one of {sorted(_TYPES)} or Callable[[...], bool] of them)")
    return kind, None


def _signature(fn: ast.FunctionDef, c: str, doubles: bool = False) -> _Signature:
    """The :class:`_Signature` of the routine ``fn`` (C name ``c``; its numbers doubles
    with ``doubles``)."""
    if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.defaults:
        raise Unsupported(f"{c}: only plain arguments")
    kinds, callbacks = [], {}
    for i, a in enumerate(fn.args.args):
        kind, params = _annotation_kind(c, a.arg, a.annotation, doubles)
        kinds.append(kind)
        if params is not None:
            callbacks[i] = params
    returns = ast.unparse(fn.returns).strip("'\"") if fn.returns is not None else ""
    if returns not in ("int", "bool"):
        raise Unsupported(f"{c}: returns {returns or 'nothing'} (int or bool)")
    return _Signature(c, kinds, callbacks, returns)


def _callback_c(name: str, kinds: list[str]) -> str:
    """The C declaration of a callback argument ``name`` whose arguments are ``kinds``."""
    return f"int (*{name})({', '.join(_C_PARAM[k] for k in kinds) or 'void'})"


class _Routine:
    """One function of the subset -> one static C function ``name`` and its storage."""

    def __init__(self, name: str, callees: dict[str, _Signature] | None = None,
                 double_callees: dict[str, _Signature] | None = None):
        self.name = name
        self.callees = dict(callees or {})    # routines it may call: Python name -> signature
        self.double_callees = dict(double_callees or {})    # ... translated in doubles
        self.used_doubles: list[str] = []     # the routines it calls in doubles
        self.callbacks: dict[str, list[str]] = {}   # callback argument -> its arguments' kinds
        self.kinds: dict[str, str] = {}       # Python name -> int, num, vec, mat, row, flt,
        #                                       fvec, fmat, frow
        self.params: list[str] = []
        self.temps = 0                        # temporaries used by the current statement
        self.max_temps = 0
        self.loops = 0                        # for-loop bounds (one long each)
        self.out: list[str] = []
        self.depth = 1
        self.looping: set[str] = set()        # the variables of the loops being translated
        self.after: set[str] = set()          # loop variables read after their loop: refused

    # -- names and storage ------------------------------------------------------------
    def c(self, name: str) -> str:
        """The C name of the Python name ``name``: a number local is module storage."""
        if self.kinds.get(name) == "num" and name not in self.params:
            return f"{self.name}_n_{name}"
        return f"v_{name}"

    def temp(self) -> str:
        self.temps += 1
        self.max_temps = max(self.max_temps, self.temps)
        return f"{self.name}_t[{self.temps - 1}]"

    def emit(self, line: str) -> None:
        self.out.append("    " * self.depth + line)

    def declare(self, name: str, kind: str, where: Any) -> None:
        known = self.kinds.get(name)
        if known is None:
            self.kinds[name] = kind
        elif known != kind:
            raise Unsupported(f"{self.name}: {name!r} is a {known} and then a {kind} "
                              f"(line {where.lineno})")

    # -- expressions ------------------------------------------------------------------
    def kind(self, node: Any) -> str:
        """The kind of the value of ``node``: int, num, bool, row, vec, mat."""
        if isinstance(node, ast.Constant):
            if type(node.value) is bool:
                return "bool"
            if type(node.value) is int:
                return "int"
            raise Unsupported(f"{self.name}: the constant {node.value!r}")
        if isinstance(node, ast.Name):
            if node.id not in self.kinds:
                raise Unsupported(f"{self.name}: unknown name {node.id!r} (line {node.lineno})")
            if node.id in self.after:         # C leaves the end value, Python the last one
                raise Unsupported(f"{self.name}: the loop variable {node.id!r} is read after "
                                  f"its loop (line {node.lineno})")
            return self.kinds[node.id]
        if isinstance(node, ast.Subscript):
            base = self.kind(node.value)
            if self.kind(node.slice) != "int":
                raise Unsupported(f"{self.name}: an index that is not an int "
                                  f"({ast.unparse(node)})")
            if base in ("mat", "fmat"):
                return "row" if base == "mat" else "frow"
            if base in ("vec", "row", "fvec", "frow"):
                return "num" if base in ("vec", "row") else "flt"
            raise Unsupported(f"{self.name}: subscript of a {base} ({ast.unparse(node)})")
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return "bool"
            if isinstance(node.op, ast.USub):
                return self.kind(node.operand)
        if isinstance(node, ast.BinOp):
            kinds = {self.kind(node.left), self.kind(node.right)}
            if isinstance(node.op, ast.Pow):
                if self.kind(node.left) == "num" and kinds <= {"int", "num"}:
                    return "num"
                raise Unsupported(f"{self.name}: a power of an int ({ast.unparse(node)})")
            if kinds == {"int"}:
                return "int"
            if type(node.op) in _NUM_OPS:     # a float with a number: a number
                if kinds <= {"int", "num"} or kinds == {"num", "flt"}:
                    return "num"
                if kinds <= {"int", "flt"}:
                    return "flt"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "abs" and len(node.args) == 1:
            return self.kind(node.args[0])
        if self._to_float(node):
            return "flt"
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            return "bool"
        called = self.signature(node.func.id) if isinstance(node, ast.Call) \
            and isinstance(node.func, ast.Name) else None
        if called is not None:
            return called.returns
        raise Unsupported(f"{self.name}: {ast.unparse(node)[:60]!r} (line "
                          f"{getattr(node, 'lineno', '?')})")

    def _to_float(self, node: Any) -> bool:
        """Whether ``node`` is ``float(x)`` of a number x (rounded to nearest: gmpy2's
        ``float`` of an ``mpfr``, MPFR's ``mpfr_get_d``)."""
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "float" and "float" not in self.kinds
                and len(node.args) == 1 and not node.keywords
                and self.kind(node.args[0]) == "num")

    def flt(self, node: Any) -> str:
        """The C (double) expression of a float ``node`` or of an int operand mixed into
        one (converted as Python converts it); numbers it reads (``float(x)``) are
        computed first.  Each Python operation is one IEEE operation of C (built with
        ``-ffp-contract=off``: no fused multiply-add), so the same bits."""
        kind = self.kind(node)
        if kind == "int":
            return f"((double){self.int(node)})"
        if kind != "flt":
            raise Unsupported(f"{self.name}: {ast.unparse(node)[:60]!r} is a {kind}, not a "
                              f"float")
        if isinstance(node, (ast.Name, ast.Subscript)):
            return self.ref(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return f"(-{self.flt(node.operand)})"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "abs":
            return f"fabs({self.flt(node.args[0])})"
        if isinstance(node, ast.Call):       # float(x)
            return f"mpfr_get_d({self.num(node.args[0])}, MPFR_RNDN)"
        if isinstance(node, ast.BinOp) and type(node.op) in _NUM_OPS:
            op = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[_NUM_OPS[type(node.op)]]
            return f"({self.flt(node.left)} {op} {self.flt(node.right)})"
        raise Unsupported(f"{self.name}: the float {ast.unparse(node)[:60]!r} (line "
                          f"{getattr(node, 'lineno', '?')})")

    def ref(self, node: Any) -> str:
        """The C of a name, a subscript, a row: an lvalue or an ``mpfr_t``."""
        if isinstance(node, ast.Name):
            return self.c(node.id)
        if isinstance(node, ast.Subscript):
            return f"{self.ref(node.value)}[{self.int(node.slice)}]"
        raise Unsupported(f"{self.name}: {ast.unparse(node)[:60]!r}")

    def int(self, node: Any) -> str:
        """The C (long) expression of an int ``node``."""
        if self.kind(node) != "int":
            raise Unsupported(f"{self.name}: {ast.unparse(node)!r} is not an int")
        if isinstance(node, ast.Constant):
            return f"{_literal(node)}L"
        if isinstance(node, ast.Name):
            return self.c(node.id)
        if isinstance(node, ast.UnaryOp):
            return f"(-{self.int(node.operand)})"
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            d = _literal(node.right)          # Python's floor, and no division by 0
            if d is None or d <= 0 or any(isinstance(n, ast.Call) for n in ast.walk(node)):
                raise Unsupported(f"{self.name}: {type(node.op).__name__} other than by a "
                                  f"positive literal of a call-free int ({ast.unparse(node)})")
            a = self.int(node.left)
            if isinstance(node.op, ast.FloorDiv):
                return f"({a} >= 0 ? {a} / {d}L : -((-{a} + {d - 1}L) / {d}L))"
            return f"((({a} % {d}L) + {d}L) % {d}L)"
        if isinstance(node, ast.BinOp):
            op = _INT_OPS.get(type(node.op))
            if op is None:
                raise Unsupported(f"{self.name}: int operator {type(node.op).__name__}")
            return f"({self.int(node.left)} {op} {self.int(node.right)})"
        if isinstance(node, ast.Call):
            return self.call(node)
        raise Unsupported(f"{self.name}: int {ast.unparse(node)!r}")

    def num(self, node: Any, dest: str | None = None) -> str:
        """Emit the operations of the number ``node`` (the last into ``dest`` if given) and
        return the C operand holding its value."""
        if self.kind(node) == "flt":          # Python would store the float itself
            raise Unsupported(f"{self.name}: the float {ast.unparse(node)[:60]!r} where a "
                              f"number is wanted (a number times it is one)")
        if self.kind(node) == "int" and not isinstance(node, ast.Constant):
            out = dest or self.temp()         # an int as a number: exact up to PREC bits
            self.emit(f"mpfr_set_si({out}, {self.int(node)}, MPFR_RNDN);")
            return out
        if isinstance(node, (ast.Name, ast.Subscript)):
            if self.kind(node) != "num":
                raise Unsupported(f"{self.name}: {ast.unparse(node)!r} is not a number")
            src = self.ref(node)
            if dest is not None and dest != src:
                self.emit(f"mpfr_set({dest}, {src}, MPFR_RNDN);")
                return dest
            return src
        out = dest or self.temp()
        if isinstance(node, ast.Constant) and type(node.value) is int:
            self.emit(f"mpfr_set_si({out}, {node.value}L, MPFR_RNDN);")
            return out
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            if self.kind(node.operand) == "int":
                self.emit(f"mpfr_set_si({out}, {self.int(node)}, MPFR_RNDN);")
            else:
                x = self.num(node.operand)
                self.emit(f"mpfr_neg({out}, {x}, MPFR_RNDN);")
            return out
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "abs" and len(node.args) == 1:
            x = self.num(node.args[0])
            self.emit(f"mpfr_abs({out}, {x}, MPFR_RNDN);")
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            self.kind(node)
            a = self.num(node.left)
            if self.kind(node.right) == "int":
                self.emit(f"mpfr_pow_si({out}, {a}, {self.int(node.right)}, MPFR_RNDN);")
            else:
                b = self.num(node.right)
                self.emit(f"mpfr_pow({out}, {a}, {b}, MPFR_RNDN);")
            return out
        if isinstance(node, ast.BinOp) and type(node.op) in _NUM_OPS:
            op = _NUM_OPS[type(node.op)]
            lk, rk = self.kind(node.left), self.kind(node.right)
            if lk == "int" and rk == "int":
                raise Unsupported(f"{self.name}: int arithmetic used as a number "
                                  f"({ast.unparse(node)})")
            if {lk, rk} == {"num", "flt"}:    # the float converted exactly, one rounding
                a = self.num(node.left) if lk == "num" else self.num(node.right)
                d = self.flt(node.right) if lk == "num" else self.flt(node.left)
                self.emit(f"{_MIXED[op][0 if lk == 'num' else 1]}({out}, "
                          + (f"{a}, {d}" if lk == "num" or op in ("add", "mul") else f"{d}, {a}")
                          + ", MPFR_RNDN);")
                return out
            if lk == "int":                   # an int is exact in gmpy2's operation
                b = self.num(node.right)
                a = self.int(node.left)
                if op in ("add", "mul"):
                    self.emit(f"mpfr_{op}_si({out}, {b}, {a}, MPFR_RNDN);")
                else:
                    self.emit(f"mpfr_si_{op}({out}, {a}, {b}, MPFR_RNDN);")
            elif rk == "int":
                a = self.num(node.left)
                self.emit(f"mpfr_{op}_si({out}, {a}, {self.int(node.right)}, MPFR_RNDN);")
            else:
                a = self.num(node.left)
                b = self.num(node.right)
                self.emit(f"mpfr_{op}({out}, {a}, {b}, MPFR_RNDN);")
            return out
        raise Unsupported(f"{self.name}: the number {ast.unparse(node)[:60]!r} (line "
                          f"{getattr(node, 'lineno', '?')})")

    def cond(self, node: Any) -> str:
        """The C (int) expression of a condition, with Python's meaning (nan compares false,
        ``!=`` true).  Operations its numbers need are emitted first."""
        if isinstance(node, ast.Constant) and type(node.value) is bool:
            return "1" if node.value else "0"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return f"!({self.cond(node.operand)})"
        if isinstance(node, ast.BoolOp):
            join = " && " if isinstance(node.op, ast.And) else " || "
            parts = [self.cond(node.values[0])]
            for v in node.values[1:]:         # evaluated only as Python would: in the C
                emitted = len(self.out)       # condition itself, so no operation first
                parts.append(self.cond(v))
                if len(self.out) != emitted:
                    raise Unsupported(f"{self.name}: an operand after the first of "
                                      f"{'and' if join == ' && ' else 'or'} computes a number "
                                      f"({ast.unparse(v)[:60]}): compute it before")
            return "(" + join.join(parts) + ")"
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise Unsupported(f"{self.name}: a chained comparison ({ast.unparse(node)})")
            left, right, op = node.left, node.comparators[0], type(node.ops[0])
            lk, rk = self.kind(left), self.kind(right)
            if op not in _CMP_C:
                raise Unsupported(f"{self.name}: comparison {op.__name__}")
            if lk == rk == "int":
                return f"({self.int(left)} {_CMP_C[op]} {self.int(right)})"
            if {lk, rk} <= {"int", "num"}:
                return self.compare(left, lk, right, rk, op)
            if "flt" in (lk, rk) and {lk, rk} <= {"int", "flt"} and all(
                    k == "flt" or _literal(n) is not None for n, k in ((left, lk), (right, rk))):
                return f"({self.flt(left)} {_CMP_C[op]} {self.flt(right)})"   # nan: as Python
            raise Unsupported(f"{self.name}: comparison of a {lk} and a {rk}")
        if isinstance(node, ast.Call) and self.kind(node) == "bool":
            return self.call(node)
        if self.kind(node) == "int":
            return f"({self.int(node)} != 0)"
        raise Unsupported(f"{self.name}: the condition {ast.unparse(node)[:60]!r}")

    def signature(self, name: str) -> _Signature | None:
        """The signature of a callback argument or a routine named ``name``, or None."""
        if name in self.callbacks:
            return _Signature(self.c(name), self.callbacks[name], {}, "bool")
        if name in self.kinds:
            return None
        return self.callees.get(name)

    def call(self, node: Any) -> str:
        """The C call of a callback or a routine (its number arguments computed first,
        into temporaries: each argument holds its value, as Python's)."""
        sig = self.signature(node.func.id) if isinstance(node.func, ast.Name) else None
        double = self.double_callees.get(node.func.id) if sig is not None \
            and sig.c.startswith("mpvi_") else None
        if double is not None and len(node.args) == len(double.kinds) and all(
                self.kind(a) in (k, "frow" if k == "fvec" else k)
                for a, k in zip(node.args, double.kinds)) and any(
                k in _FLOATS for k in double.kinds):
            sig = double                      # the routine on floats: its doubles' C
            if node.func.id not in self.used_doubles:
                self.used_doubles.append(node.func.id)
        if sig is None or node.keywords or len(node.args) != len(sig.kinds):
            raise Unsupported(f"{self.name}: the call {ast.unparse(node)[:60]!r} (a callback "
                              f"or a routine of the subset, with its "
                              f"{len(sig.kinds) if sig else '?'} arguments by position)")
        args = []
        for i, (arg, kind) in enumerate(zip(node.args, sig.kinds)):
            have = self.kind(arg)
            if kind == "num" and have in ("num", "int"):
                args.append(self.num(arg))
            elif kind == "int" and have == "int":
                args.append(self.int(arg))
            elif kind == "vec" and have in ("vec", "row") or kind == "mat" and have == "mat" \
                    or kind == "fvec" and have in ("fvec", "frow") or kind == have == "fmat":
                args.append(self.ref(arg))
            elif kind == have == "flt":
                args.append(self.flt(arg))
            elif kind == "fn" and isinstance(arg, ast.Name) \
                    and self.callbacks.get(arg.id) == sig.callbacks[i]:
                args.append(self.c(arg.id))
            else:
                raise Unsupported(f"{self.name}: argument {i + 1} of "
                                  f"{ast.unparse(node)[:60]!r} is a {have}, not a {kind}")
        return f"{sig.c}({', '.join(args)})"

    def compare(self, left: Any, lk: Any, right: Any, rk: Any, op: Any) -> str:
        if lk == "int":                       # k < x is x > k
            flip = {ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE, ast.LtE: ast.GtE}
            return self.compare(right, rk, left, lk, flip.get(op, op))
        a = self.num(left)
        if rk == "int":
            k = self.int(right)
            if op is ast.NotEq:
                return f"(mpfr_nan_p({a}) || mpfr_cmp_si({a}, {k}) != 0)"
            return f"(!mpfr_nan_p({a}) && mpfr_cmp_si({a}, {k}) {_CMP_C[op]} 0)"
        b = self.num(right)
        if op is ast.NotEq:
            return f"!mpfr_equal_p({a}, {b})"
        return f"{_CMP_NUM[op]}({a}, {b})"

    # -- statements -------------------------------------------------------------------
    def block(self, body: Any) -> None:
        for stmt in body:
            self.temps = 0
            self.statement(stmt)

    def statement(self, stmt: Any) -> None:
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1:
                raise Unsupported(f"{self.name}: chained assignment (line {stmt.lineno})")
            target = stmt.targets[0]
            if isinstance(target, ast.Tuple):
                return self.swap(target, stmt.value, stmt)
            return self.assign(target, stmt.value, stmt)
        if isinstance(stmt, ast.AugAssign):
            value = ast.BinOp(left=_load(stmt.target), op=stmt.op, right=stmt.value)
            ast.copy_location(value, stmt)
            return self.assign(stmt.target, value, stmt)
        if isinstance(stmt, ast.For):
            return self.for_range(stmt)
        if isinstance(stmt, ast.While):
            if stmt.orelse:
                raise Unsupported(f"{self.name}: while ... else (line {stmt.lineno})")
            self.emit("for (;;) {")
            self.depth += 1
            self.emit(f"if (!({self.cond(stmt.test)})) break;")
            self.block(stmt.body)
            self.depth -= 1
            self.emit("}")
            return None
        if isinstance(stmt, ast.If):
            self.emit(f"if ({self.cond(stmt.test)}) {{")
            self.depth += 1
            self.block(stmt.body)
            self.depth -= 1
            if stmt.orelse:
                self.emit("} else {")
                self.depth += 1
                self.block(stmt.orelse)
                self.depth -= 1
            self.emit("}")
            return None
        if isinstance(stmt, ast.Return):
            if stmt.value is None:
                raise Unsupported(f"{self.name}: a bare return (line {stmt.lineno})")
            kind = self.kind(stmt.value)
            if kind == "int":
                self.emit(f"return {self.int(stmt.value)};")
            elif kind == "bool":
                self.emit(f"return {self.cond(stmt.value)};")
            else:
                raise Unsupported(f"{self.name}: returns a {kind} (line {stmt.lineno})")
            return None
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            return self.emit(f"(void){self.call(stmt.value)};")
        if isinstance(stmt, ast.Break):
            return self.emit("break;")
        if isinstance(stmt, ast.Continue):
            return self.emit("continue;")
        raise Unsupported(f"{self.name}: the statement {ast.unparse(stmt)[:60]!r} (line "
                          f"{stmt.lineno})")

    def assign(self, target: Any, value: Any, stmt: Any) -> None:
        kind = self.kind(value)
        if isinstance(target, ast.Name):
            if target.id in self.looping:     # Python's range would not see it
                raise Unsupported(f"{self.name}: the loop variable {target.id!r} is assigned "
                                  f"in its loop (line {stmt.lineno})")
            self.after.discard(target.id)
            if target.id in self.params and self.kinds[target.id] != "int":
                raise Unsupported(f"{self.name}: the argument {target.id!r} is rebound "
                                  f"(line {stmt.lineno})")
            if kind == "bool":
                raise Unsupported(f"{self.name}: a bool bound to {target.id!r}")
            self.declare(target.id, kind, stmt)
            if kind == "int":
                self.emit(f"{self.c(target.id)} = {self.int(value)};")
            elif kind == "num":
                self.num(value, self.c(target.id))
            elif kind in ("row", "frow"):
                self.emit(f"{self.c(target.id)} = {self.ref(value)};")
            elif kind == "flt":
                self.emit(f"{self.c(target.id)} = {self.flt(value)};")
            else:
                raise Unsupported(f"{self.name}: a {kind} bound to {target.id!r}")
            return
        if isinstance(target, ast.Subscript) and self.kind(target) == "num" and kind in ("num", "int"):
            self.num(value, self.ref(target))
            return
        if isinstance(target, ast.Subscript) and self.kind(target) == "flt" and kind == "flt":
            self.emit(f"{self.ref(target)} = {self.flt(value)};")
            return
        if isinstance(target, ast.Subscript) and {self.kind(target), kind} == {"num", "flt"}:
            raise Unsupported(f"{self.name}: a {kind} stored among {self.kind(target)}s "
                              f"({ast.unparse(stmt)[:60]}): a number times a float is a "
                              f"number, float(x) a float")
        raise Unsupported(f"{self.name}: assignment {ast.unparse(stmt)[:60]!r} (line "
                          f"{stmt.lineno})")

    def swap(self, target: Any, value: Any, stmt: Any) -> None:
        """``x, y = y, x``: rows, vectors or matrices (pointers), a vector's numbers
        (``mpfr_swap``) or ints."""
        if not (isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts) == 2
                and ast.unparse(target.elts[0]) == ast.unparse(value.elts[1])
                and ast.unparse(target.elts[1]) == ast.unparse(value.elts[0])):
            raise Unsupported(f"{self.name}: a tuple assignment other than a swap "
                              f"({ast.unparse(stmt)[:60]})")
        x, y = target.elts
        kind = self.kind(x)
        names = isinstance(x, ast.Name) and isinstance(y, ast.Name)
        if kind != self.kind(y) or kind not in ("row", "num", "int", "frow", "flt") and not (
                names and kind in ("vec", "mat", "fvec", "fmat")):
            raise Unsupported(f"{self.name}: a swap of {kind}s ({ast.unparse(stmt)[:60]})")
        a, b = self.ref(x), self.ref(y)
        if kind == "num":
            self.emit(f"mpfr_swap({a}, {b});")
        else:
            self.emit(f"{{ {_C_TYPES[kind]} sw = {a}; {a} = {b}; {b} = sw; }}")

    def for_range(self, stmt: Any) -> None:
        it = stmt.iter
        if not (isinstance(stmt.target, ast.Name) and isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name) and it.func.id == "range"
                and 1 <= len(it.args) <= 3 and not stmt.orelse):
            raise Unsupported(f"{self.name}: a loop other than for i in range(...) "
                              f"(line {stmt.lineno})")
        args = list(it.args)
        start = args[0] if len(args) > 1 else ast.Constant(0)
        stop = args[1] if len(args) > 1 else args[0]
        step = 1
        if len(args) == 3:
            literal = _literal(args[2])
            if not literal:
                raise Unsupported(f"{self.name}: a range step that is not a nonzero literal")
            step = literal
        if stmt.target.id in self.looping:
            raise Unsupported(f"{self.name}: a loop over {stmt.target.id!r} inside its own "
                              f"loop (line {stmt.lineno})")
        self.declare(stmt.target.id, "int", stmt)
        i = self.c(stmt.target.id)
        end = f"e{self.loops}"                # range(...) is evaluated once, as in Python
        self.loops += 1
        cmp = "<" if step > 0 else ">"
        self.emit(f"{end} = {self.int(stop)};")
        self.emit(f"for ({i} = {self.int(start)}; {i} {cmp} {end}; {i} += {step}L) {{")
        self.after.discard(stmt.target.id)
        self.looping.add(stmt.target.id)
        self.depth += 1
        self.block(stmt.body)
        self.depth -= 1
        self.looping.discard(stmt.target.id)
        self.after.add(stmt.target.id)
        self.emit("}")

    # -- the function -----------------------------------------------------------------
    def function(self, fn: ast.FunctionDef, doubles: bool = False) -> tuple[str, str]:
        """(the C function, its storage and init) of ``fn`` (its numbers doubles with
        ``doubles``)."""
        sig = _signature(fn, self.name, doubles)
        signature = []
        for i, (a, kind) in enumerate(zip(fn.args.args, sig.kinds)):
            self.kinds[a.arg] = kind
            self.params.append(a.arg)
            if kind == "fn":
                self.callbacks[a.arg] = sig.callbacks[i]
                signature.append(_callback_c(f"v_{a.arg}", sig.callbacks[i]))
                continue
            ctype = _C_PARAM[kind]
            signature.append(f"{ctype} v_{a.arg}" if not ctype.endswith("*") else
                             f"{ctype}v_{a.arg}")
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]                   # the docstring
        self.block(body)
        if not body or not isinstance(body[-1], ast.Return):
            raise Unsupported(f"{self.name}: the function does not end in a return")
        for p in self.params:
            if self.kinds[p] == "num" and any(
                    isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == p
                    for n in ast.walk(fn)):
                raise Unsupported(f"{self.name}: the number argument {p!r} is rebound")
        locals_ = [n for n in self.kinds if n not in self.params]
        decl = []
        ints = [self.c(n) for n in locals_ if self.kinds[n] == "int"]
        ints += [f"e{k}" for k in range(self.loops)]
        if ints:
            decl.append(f"long {', '.join(ints)};")
        decl += [f"mpfr_t *{self.c(n)};" for n in locals_ if self.kinds[n] == "row"]
        floats = [self.c(n) for n in locals_ if self.kinds[n] == "flt"]
        decl += [f"double {', '.join(floats)};"] if floats else []
        decl += [f"double *{self.c(n)};" for n in locals_ if self.kinds[n] == "frow"]
        nums = [self.c(n) for n in locals_ if self.kinds[n] == "num"]
        nt = max(self.max_temps, 1)
        storage = [f"static mpfr_t {self.name}_t[{nt}];"]
        storage += [f"static mpfr_t {n};" for n in nums]
        init = [f"for (int i = 0; i < {nt}; i++) mpfr_init2({self.name}_t[i], PREC);"]
        init += [f"mpfr_init2({n}, PREC);" for n in nums]
        head = (f"/* generated by mpvi.compiled.croutine from the Python {fn.name}: the same "
                f"operations in the same order */\n"
                f"MPVI_UNUSED static int {self.name}({', '.join(signature)}) {{")
        text = "\n".join([head] + [f"    {d}" for d in decl] + self.out + ["}"])
        setup = "\n".join(storage + [f"MPVI_UNUSED static void {self.name}_init(void) {{"]
                          + [f"    {x}" for x in init] + ["}"])
        # the working precision of the storage (at most PREC, so never reallocated; the
        # values are lost): a routine run on numbers of fewer bits, as the same Python
        # under a context of that precision (the Taylor recurrences' tiers)
        prec = [f"for (int i = 0; i < {nt}; i++) mpfr_set_prec({self.name}_t[i], p);"]
        prec += [f"mpfr_set_prec({n}, p);" for n in nums]
        setup += "\n".join(["", f"MPVI_UNUSED static void {self.name}_prec(mpfr_prec_t p) {{"]
                            + [f"    {x}" for x in prec] + ["}"])
        return text, setup


def _literal(node: Any) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _literal(node.operand)
        return None if v is None else -v
    return None


def _load(target: Any) -> Any:
    """``target`` (a Name or Subscript being stored) as an expression that reads it."""
    node = ast.parse(ast.unparse(target), mode="eval").body
    return ast.copy_location(node, target)


def translate_routine(source: str, name: str, callees: dict[str, str] | None = None,
                      doubles: bool = False) -> str:
    """The C of the Python function ``source`` (one ``def`` of the subset of this module):
    its storage, ``static void NAME_init(void)`` (``mpfr_init2`` at ``PREC`` of the
    storage, called once when the module loads), ``static void NAME_prec(mpfr_prec_t p)``
    (the storage set to ``p`` <= ``PREC`` bits: the routine then rounds every operation
    to ``p`` bits, as its Python under a context of that precision) and ``static int
    NAME(...)``.  The
    arguments keep their order: an ``int`` is a ``long``, a ``Real`` an ``mpfr_srcptr``, a
    vector an ``mpfr_t *``, a matrix an ``mpfr_t **`` (row pointers: a swap of rows is a
    swap of pointers), a ``float`` a ``double`` (``list[float]`` a ``double *``, and so
    on), a callback a pointer to a function returning int.  ``callees``: the Python name
    -> the source of each routine it calls (translated separately, as ``mpvi_<name>``,
    and as ``mpvi_<name>_d`` where it is called on floats).  With ``doubles`` the
    routine's numbers are floats: its C works on doubles (the same function run on
    Python floats)."""
    return _translate(source, name, callees, doubles)[0]


def _translate(source: str, name: str, callees: dict[str, str] | None,
               doubles: bool) -> tuple[str, list[str]]:
    """(:func:`translate_routine`, the callees it calls on floats): a function of the
    texts only, so translated once per process for each (source, name, callees, doubles)
    -- every generated module carries the same routines."""
    text, on_floats = _translated(source, name, tuple((callees or {}).items()), doubles)
    return text, list(on_floats)


@functools.lru_cache(maxsize=None)
def _translated(source: str, name: str, callees: tuple[tuple[str, str], ...],
                doubles: bool) -> tuple[str, tuple[str, ...]]:
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise Unsupported("not one function")
    known, known_d = {}, {}
    for callee, text in callees:
        fn = ast.parse(text).body[0]
        if not isinstance(fn, ast.FunctionDef):
            raise Unsupported(f"{callee}: not a function")
        known[callee] = _signature(fn, f"mpvi_{callee}")
        try:
            known_d[callee] = _signature(fn, f"mpvi_{callee}_d", doubles=True)
        except Unsupported:                   # a callback: no version on floats
            pass
    routine = _Routine(name, known, known_d)
    text, setup = routine.function(tree.body[0], doubles)
    return setup + "\n" + text + "\n", tuple(routine.used_doubles)


NATIVE_ROUTINES = {("mpvi.numbers.series", "series_dot"): "mpvi_dot.h"}
"""The routines of the subset whose C is written by hand, (module, name) -> the header of
``csrc`` that defines ``mpvi_<name>``: their signature is read from the Python as any
routine's, their body is not translated (:func:`mpvi.numbers.series.series_dot`, the
correctly rounded sum of products, works on the significands with GMP's mpn functions).
:func:`routines_c` includes the header where the translated routines first call it."""


def native_header(func: Callable[..., Any]) -> str | None:
    """The header of ``func``'s hand-written C (:data:`NATIVE_ROUTINES`), or None."""
    return NATIVE_ROUTINES.get((func.__module__, func.__name__))


def routine_calls(func: Callable[..., Any]) -> list[Callable[..., Any]]:
    """The routines ``func`` calls: the functions of its module's globals it calls by name
    (its own callback arguments and the builtins aside), in the order of the calls; none
    for a routine written in C by hand (:data:`NATIVE_ROUTINES`)."""
    found: list[Callable[..., Any]] = []
    if native_header(func) is not None:
        return found
    for name in _called_names(func.__code__, func):
        target = func.__globals__.get(name)
        if not inspect.isfunction(target):
            raise Unsupported(f"{func.__name__}: calls {name!r}, not a routine")
        if target not in found:
            found.append(target)
    return found


@functools.lru_cache(maxsize=None)
def _called_names(code: Any, func: Callable[..., Any]) -> tuple[str, ...]:
    """The names ``func`` calls (not its parameters, not ``abs``/``range``/``float``), in
    the order of the calls, read once per code object."""
    fn = ast.parse(routine_source(func)).body[0]
    if not isinstance(fn, ast.FunctionDef):
        raise Unsupported(f"{func.__name__}: not a function")
    params = {a.arg for a in fn.args.args}
    return tuple(node.func.id for node in ast.walk(fn)
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                 and node.func.id not in params
                 and node.func.id not in ("abs", "range", "float"))


def routine_c(func: Callable[..., Any], name: str | None = None, doubles: bool = False) -> str:
    """:func:`translate_routine` of the current source of ``func``, named
    ``mpvi_<function name>`` (``..._d`` with ``doubles``); the routines it calls
    (:func:`routine_calls`) must be translated before it (as ``mpvi_<their names>``, or
    ``..._d`` where it calls them on floats: :func:`routines_c` does)."""
    return _routine_c(func, name, doubles)[0]


def _routine_c(func: Callable[..., Any], name: str | None,
               doubles: bool) -> tuple[str, list[str]]:
    callees = {f.__name__: routine_source(f) for f in routine_calls(func)}
    default = f"mpvi_{func.__name__}" + ("_d" if doubles else "")
    return _translate(routine_source(func), name or default, callees, doubles)


def routines_c(funcs: Any) -> list[str]:
    """The C of the routines ``funcs`` and, before each, of the routines it calls (on
    numbers, or on floats: in doubles), each once, callees first."""
    done: dict[tuple[Callable[..., Any], bool], None] = {}
    out: list[str] = []

    def visit(f: Callable[..., Any], doubles: bool,
              path: tuple[Callable[..., Any], ...] = ()) -> None:
        if f in path:
            raise Unsupported(f"{f.__name__}: a recursive call")
        if (f, doubles) in done:
            return
        header = native_header(f)
        if header is not None:
            if doubles:
                raise Unsupported(f"{f.__name__}: written in C on numbers, not on floats")
            done[(f, doubles)] = None
            out.append(f'#include "{header}"')
            return
        for g in routine_calls(f):
            visit(g, doubles, path + (f,))
        text, on_floats = _routine_c(f, None, doubles)
        for name in on_floats:               # the callees it runs on floats, before it
            visit(f.__globals__[name], True, path + (f,))
        if (f, doubles) not in done:
            done[(f, doubles)] = None
            out.append(text)

    for f in funcs:
        visit(f, False)
    return out


__all__ = ["NATIVE_ROUTINES", "Unsupported", "native_header", "routine_c", "routine_calls",
           "routine_source", "routines_c", "translate_routine"]
