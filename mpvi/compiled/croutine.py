"""A numerical routine of mpvi written once, in Python, and translated to MPFR C.

The routines of the library that the compiled modules also run (the dense elimination of
:func:`mpvi.numbers.linalg.gauss_eliminate`, the LDL^T test of
:func:`mpvi.numbers.linalg.ldl_positive`) are Python functions in a small subset, the one
implementation for every context (gmpy2, mpmath, float, Arb).  :func:`translate_routine`
turns such a function into a static C function on ``mpfr_t``, operation by operation in
Python's evaluation order, each operation one correctly rounded MPFR call at ``PREC``
(the module's precision): the same bits as the Python on the gmp context, whose numbers
are correctly rounded at the same precision.  The C is generated when a module is built,
from the source of the function as it is then, so the two cannot drift apart.

The subset (anything else is :class:`~mpvi.compiled.ctranslate.Unsupported`):

* arguments annotated ``int``, ``Real`` (a number), ``list[Real]`` (a vector),
  ``list[list[Real]]`` (a matrix, a list of rows), ``Callable[[Real, list[Real],
  list[Real]], bool]`` (a field ``f(t, y, out)``, called only as a condition: ``if not
  f(t, y, out): ...``); the return annotated ``int`` or ``bool``; a docstring;
* statements: ``x = e``, ``x op= e``, ``v[i] = e``, ``m[i][j] = e``, ``r = m[i]`` (a row
  bound by reference, as Python binds the list), the swaps ``x, y = y, x`` (of rows, of
  a vector's numbers or of ints), ``for i in range(...)``, ``while``, ``if/elif/else``,
  ``break``, ``continue``, ``return``;
* expressions: ints and their ``+ - *``, numbers and their ``+ - * /``, an int mixed
  into a number operation (exact, as gmpy2 converts it), ``abs``, unary minus,
  comparisons, ``not``, ``and``, ``or``.

Values have Python's meaning: a number name holds its own copy (``mpfr_set`` at the same
precision is exact, and a Python number is immutable, so a copy behaves as the bound
object), a row is a pointer to the row (a list is shared), a swap of two rows swaps the
pointers.  Comparisons with a nan are false and ``!=`` true, as in Python.  Every number
the routine reads must already be at ``PREC`` (the compiled modules' numbers are).
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, Callable

from mpvi.compiled.ctranslate import Unsupported

_TYPES = {"int": "int", "bool": "int", "Real": "num", "list[Real]": "vec",
          "list[list[Real]]": "mat",
          "Callable[[Real, list[Real], list[Real]], bool]": "field"}
"""The annotations of the subset and the kinds they declare."""
_C_TYPES = {"int": "long", "vec": "mpfr_t *", "mat": "mpfr_t **", "row": "mpfr_t *"}
_FIELD = "int (*{name})(mpfr_srcptr, mpfr_t *, mpfr_t *)"
"""The C of a field argument ``f(t, y, out) -> bool`` (writes f(t, y) into out; false
where it cannot)."""
_NUM_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
_INT_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
_CMP_NUM = {ast.Gt: "mpfr_greater_p", ast.GtE: "mpfr_greaterequal_p", ast.Lt: "mpfr_less_p",
            ast.LtE: "mpfr_lessequal_p", ast.Eq: "mpfr_equal_p"}
_CMP_C = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}


def routine_source(func: Callable[..., Any]) -> str:
    """The source of ``func`` (a module-level function), dedented."""
    return textwrap.dedent(inspect.getsource(func))


class _Routine:
    """One function of the subset -> one static C function ``name`` and its storage."""

    def __init__(self, name: str):
        self.name = name
        self.kinds: dict[str, str] = {}       # Python name -> int, num, vec, mat, row
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
            if base == "mat":
                return "row"
            if base in ("vec", "row"):
                return "num"
            raise Unsupported(f"{self.name}: subscript of a {base} ({ast.unparse(node)})")
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return "bool"
            if isinstance(node.op, ast.USub):
                return self.kind(node.operand)
        if isinstance(node, ast.BinOp):
            kinds = {self.kind(node.left), self.kind(node.right)}
            if kinds == {"int"}:
                return "int"
            if kinds <= {"int", "num"}:
                return "num"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "abs" and len(node.args) == 1:
            return self.kind(node.args[0])
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            return "bool"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and self.kinds.get(node.func.id) == "field":
            return "bool"
        raise Unsupported(f"{self.name}: {ast.unparse(node)[:60]!r} (line "
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
        if isinstance(node, ast.BinOp):
            op = _INT_OPS.get(type(node.op))
            if op is None:
                raise Unsupported(f"{self.name}: int operator {type(node.op).__name__}")
            return f"({self.int(node.left)} {op} {self.int(node.right)})"
        raise Unsupported(f"{self.name}: int {ast.unparse(node)!r}")

    def num(self, node: Any, dest: str | None = None) -> str:
        """Emit the operations of the number ``node`` (the last into ``dest`` if given) and
        return the C operand holding its value."""
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
        if isinstance(node, ast.BinOp) and type(node.op) in _NUM_OPS:
            op = _NUM_OPS[type(node.op)]
            lk, rk = self.kind(node.left), self.kind(node.right)
            if lk == "int" and rk == "int":
                raise Unsupported(f"{self.name}: int arithmetic used as a number "
                                  f"({ast.unparse(node)})")
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
            raise Unsupported(f"{self.name}: comparison of a {lk} and a {rk}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and self.kinds.get(node.func.id) == "field":
            return self.field_call(node)
        if self.kind(node) == "int":
            return f"({self.int(node)} != 0)"
        raise Unsupported(f"{self.name}: the condition {ast.unparse(node)[:60]!r}")

    def field_call(self, node: Any) -> str:
        """``f(t, y, out)`` of a field argument: t a number (computed first), y and out
        vectors or rows."""
        if len(node.args) != 3 or node.keywords:
            raise Unsupported(f"{self.name}: a field takes (t, y, out) ({ast.unparse(node)})")
        t, y, out = node.args
        if self.kind(t) not in ("num",) or self.kind(y) not in ("vec", "row") \
                or self.kind(out) not in ("vec", "row"):
            raise Unsupported(f"{self.name}: a field takes a number and two vectors "
                              f"({ast.unparse(node)})")
        return f"{self.c(node.func.id)}({self.num(t)}, {self.ref(y)}, {self.ref(out)})"

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
            elif kind == "row":
                self.emit(f"{self.c(target.id)} = {self.ref(value)};")
            else:
                raise Unsupported(f"{self.name}: a {kind} bound to {target.id!r}")
            return
        if isinstance(target, ast.Subscript) and self.kind(target) == "num" and kind in ("num", "int"):
            self.num(value, self.ref(target))
            return
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
        if kind != self.kind(y) or kind not in ("row", "num", "int") and not (
                names and kind in ("vec", "mat")):
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
    def function(self, fn: ast.FunctionDef) -> tuple[str, str]:
        """(the C function, its storage and init) of ``fn``."""
        if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.defaults:
            raise Unsupported(f"{self.name}: only plain arguments")
        signature = []
        for a in fn.args.args:
            note = ast.unparse(a.annotation) if a.annotation is not None else ""
            kind = _TYPES.get(note.strip("'\""))
            if kind is None or kind == "int" and note == "bool":
                raise Unsupported(f"{self.name}: the argument {a.arg} is annotated "
                                  f"{note or 'nothing'} (one of {sorted(_TYPES)})")
            self.kinds[a.arg] = kind
            self.params.append(a.arg)
            if kind == "field":
                signature.append(_FIELD.format(name=f"v_{a.arg}"))
                continue
            ctype = "mpfr_srcptr" if kind == "num" else _C_TYPES[kind]
            signature.append(f"{ctype} v_{a.arg}" if not ctype.endswith("*") else
                             f"{ctype}v_{a.arg}")
        returns = ast.unparse(fn.returns) if fn.returns is not None else ""
        if returns.strip("'\"") not in ("int", "bool"):
            raise Unsupported(f"{self.name}: returns {returns or 'nothing'} (int or bool)")
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


def translate_routine(source: str, name: str) -> str:
    """The C of the Python function ``source`` (one ``def`` of the subset of this module):
    its storage, ``static void NAME_init(void)`` (``mpfr_init2`` at ``PREC`` of the
    storage, called once when the module loads) and ``static int NAME(...)``.  The
    arguments keep their order: an ``int`` is a ``long``, a ``Real`` an ``mpfr_srcptr``, a
    vector an ``mpfr_t *``, a matrix an ``mpfr_t **`` (row pointers: a swap of rows is a
    swap of pointers)."""
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise Unsupported("not one function")
    text, setup = _Routine(name).function(tree.body[0])
    return setup + "\n" + text + "\n"


def routine_c(func: Callable[..., Any], name: str | None = None) -> str:
    """:func:`translate_routine` of the current source of ``func``, named
    ``mpvi_<function name>``."""
    return translate_routine(routine_source(func), name or f"mpvi_{func.__name__}")


__all__ = ["Unsupported", "routine_c", "routine_source", "translate_routine"]
