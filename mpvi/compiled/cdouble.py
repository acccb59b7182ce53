"""A generated kernel in doubles, in Python and in C, with the same bits.

Newton's first iterations need only a few digits: :func:`mpvi.numbers.newton.double_start`
runs them on the kernel evaluated in IEEE doubles, and the iteration at the context's
precision starts from their result.  This module makes that kernel twice from one printed
source (:func:`mpvi.compiled.codegen.printed_source`, the residual and Jacobian of
:class:`mpvi.engines.kernels.Kernel`): a Python function on floats (:func:`python_kernel`)
and C statements on ``double`` (:func:`c_kernel`), each Python operation one IEEE operation
in the same order (the modules are built with ``-ffp-contract=off``), each function of
:mod:`math` the same C library function, so that the compiled iteration keeps the bits of
the Python one.

Where Python raises (a division by zero, a function outside its domain or overflowing,
CPython's ``math_1`` rules; a power that Python would make complex, overflow or divide by
zero), the C kernel returns 0 and the Python one raises, and either way the start in
doubles is abandoned and the iteration starts from its first guess.  A source outside the
subset both translate (other functions, a comparison, ...) raises :class:`Unsupported`:
that kernel has no start in doubles, in Python or in C alike (:func:`supported`).
"""
from __future__ import annotations

import ast
import math
from typing import Any, Callable, Sequence

from mpvi.compiled.ctranslate import Unsupported, _literal_int as _int

MATH_1 = ("sin", "cos", "tan", "exp", "sqrt", "atan", "sinh", "cosh", "tanh", "asin", "acos")
"""The functions of generated code evaluated by :mod:`math`'s functions of the same name:
CPython's ``math_1`` wraps the C library's, raising where the result is nan from a number,
infinite from a finite number, or errno is set (underflow aside); the C kernel tests the
same conditions."""

_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_POW = "_mpvi_pow"
"""The name the Python kernel calls for ``**`` (:func:`_power`)."""


def _power(x: float, y: float) -> float:
    """``x ** y`` in doubles as the C kernel's ``mpvi_dpow``: ValueError for a non-finite
    operand, 0 to a negative power and a negative number to a non-integer power (Python
    would divide by zero or make a complex number); else Python's float power (CPython:
    the C library's ``pow`` of |x|, negated for a negative x and an odd integer y; 1 for
    |x| = 1), whose overflow raises."""
    if not (math.isfinite(x) and math.isfinite(y)):
        raise ValueError("a non-finite operand of a power in doubles")
    if (x == 0 and y < 0) or (x < 0 and y != math.floor(y)):
        raise ValueError("a power Python would not give as a float")
    return float(x ** y)


def _check(tree: ast.Module) -> ast.FunctionDef:
    """The one function of a printed source, every statement and expression in the subset
    (else :class:`Unsupported`)."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise Unsupported("a kernel in doubles: not one function")
    fn = tree.body[0]
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.List) and isinstance(stmt.value, ast.Name):
                if not all(isinstance(e, ast.Name) for e in target.elts):
                    raise Unsupported("a kernel in doubles: an unpacking of other than names")
                continue
            if not isinstance(target, ast.Name):
                raise Unsupported("a kernel in doubles: an assignment to other than a name")
            _expression(stmt.value)
        elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.List):
            for e in stmt.value.elts:
                _expression(e)
        else:
            raise Unsupported(f"a kernel in doubles: the statement {ast.unparse(stmt)[:60]}")
    return fn


def _expression(node: Any) -> None:
    """Raise :class:`Unsupported` unless ``node`` is in the subset: names, integer
    literals (exact in a double), + - * / ** of which one operand at least is not an
    integer literal, unary minus, the functions of :data:`MATH_1`, ``log``, ``abs``,
    ``fabs`` and ``mpf`` of an integer literal."""
    if isinstance(node, ast.Name):
        return
    n = _int(node)
    if n is not None:
        if abs(n) > 2 ** 53:
            raise Unsupported(f"a kernel in doubles: the integer {n} is not exact in a double")
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _expression(node.operand)
    if isinstance(node, ast.BinOp) and (type(node.op) in _BINARY or isinstance(node.op, ast.Pow)):
        if _int(node.left) is not None and _int(node.right) is not None:
            raise Unsupported("a kernel in doubles: an operation on two integers")
        _expression(node.left)
        return _expression(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1 \
            and not node.keywords:
        name = node.func.id
        if name == "mpf" and _int(node.args[0]) is not None:
            return _expression(node.args[0])
        if name in MATH_1 or name in ("log", "abs", "fabs"):
            return _expression(node.args[0])
    raise Unsupported(f"a kernel in doubles: {ast.unparse(node)[:60]}")


def supported(source: str) -> bool:
    """Whether the printed ``source`` has a kernel in doubles (the same answer for the
    Python and the C iteration)."""
    try:
        _check(ast.parse(source))
    except (Unsupported, SyntaxError):
        return False
    return True


class _ToPython(ast.NodeTransformer):
    """``a ** b`` -> ``_mpvi_pow(a, b)`` (:func:`_power`)."""

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            return ast.copy_location(ast.Call(ast.Name(_POW, ast.Load()),
                                              [node.left, node.right], []), node)
        return node


def python_kernel(source: str, constants: dict[str, float]) -> Callable[..., list[Any]]:
    """The function of the printed ``source`` on floats: the functions of :mod:`math`,
    ``mpf`` as ``float``, ``**`` as :func:`_power`, ``constants`` (name -> float) the
    context's constants rounded to doubles.  It raises ArithmeticError or ValueError where
    the C kernel returns 0."""
    tree = ast.parse(source)
    fn = _check(tree)
    tree = ast.fix_missing_locations(_ToPython().visit(tree))
    ns: dict[str, Any] = {name: getattr(math, name) for name in MATH_1}
    ns.update(log=math.log, abs=abs, fabs=abs, mpf=float)
    ns.update(constants)
    ns[_POW] = _power
    exec(compile(tree, "<mpvi generated kernel in doubles>", "exec"), ns)
    kernel: Callable[..., list[Any]] = ns[fn.name]
    return kernel


class _ToC:
    """A printed source -> C statements on ``double`` (one temporary per operation, in
    Python's order), ``return 0;`` where Python raises."""

    def __init__(self, constants: Sequence[str], groups: Sequence[str]):
        self.constants = {name: i for i, name in enumerate(constants)}
        self.groups = dict(zip(groups, range(len(groups))))
        self.lines: list[str] = []
        self.temps = 0
        self.names: set[str] = set()
        self.unpacked: dict[str, str] = {}   # an argument's member -> its C array element

    def temp(self, c: str) -> str:
        t = f"d_t{self.temps}"
        self.temps += 1
        self.lines.append(f"const double {t} = {c};")
        return t

    def name(self, name: str) -> str:
        if name in self.unpacked:
            return self.unpacked[name]
        if name in self.names:
            return f"d_v_{name}"
        if name in self.constants:
            return f"d_k[{self.constants[name]}]"
        raise Unsupported(f"a kernel in doubles: the name {name}")

    def expr(self, node: Any) -> str:
        if isinstance(node, ast.Name):
            return self.name(node.id)
        n = _int(node)
        if n is not None:
            return repr(float(n))
        if isinstance(node, ast.UnaryOp):
            x = self.expr(node.operand)
            return self.temp(f"-{x}") if isinstance(node.op, ast.USub) else x
        if isinstance(node, ast.BinOp):
            a, b = self.expr(node.left), self.expr(node.right)
            if isinstance(node.op, ast.Pow):
                t = self.temp("0.0")
                self.lines[-1] = f"double {t};"
                self.lines.append(f"if (!mpvi_dpow({a}, {b}, &{t})) return 0;")
                return t
            if isinstance(node.op, ast.Div):
                self.lines.append(f"if ({b} == 0.0) return 0;")
            return self.temp(f"{a} {_BINARY[type(node.op)]} {b}")
        name, x = node.func.id, self.expr(node.args[0])
        if name == "mpf":
            return x
        if name in ("abs", "fabs"):
            return self.temp(f"fabs({x})")
        if name == "log":
            self.lines.append(f"if (!({x} > 0.0) && !isnan({x})) return 0;")
            return self.temp(f"log({x})")
        self.lines.append("errno = 0;")
        t = self.temp(f"{name}({x})")
        self.lines.append(f"if (mpvi_dmath_1({t}, {x})) return 0;")
        return t


def c_kernel(source: str, constants: Sequence[str], inputs: Sequence[str]) -> list[str]:
    """The C statements of the printed ``source`` in doubles: its argument groups read from
    the C arrays ``inputs`` (one per group, e.g. ``x``, ``d_kp``, ``d_pp``), its constants
    (``constants``, in the order of the module's table) from ``d_k``, its results written
    to ``d_out``; ``return 0;`` where the Python kernel raises.  (:class:`Unsupported`
    outside the subset.)"""
    tree = ast.parse(source)
    fn = _check(tree)
    groups = [a.arg for a in fn.args.args]
    if len(groups) != len(inputs):
        raise Unsupported(f"a kernel in doubles of {len(groups)} argument groups, "
                          f"{len(inputs)} given")
    tr = _ToC(constants, groups)
    for stmt in fn.body:                  # the shapes _check admitted
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.List) \
                and isinstance(stmt.value, ast.Name):
            group = stmt.value.id
            if group not in tr.groups:
                raise Unsupported(f"a kernel in doubles: unpacking {group}")
            for j, e in enumerate(stmt.targets[0].elts):
                if isinstance(e, ast.Name):
                    tr.unpacked[e.id] = f"{inputs[tr.groups[group]]}[{j}]"
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            value = tr.expr(stmt.value)
            name = stmt.targets[0].id
            if name in tr.names or name in tr.unpacked:
                raise Unsupported(f"a kernel in doubles: {name} assigned twice")
            tr.names.add(name)
            tr.lines.append(f"const double d_v_{name} = {value};")
        elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.List):
            for i, e in enumerate(stmt.value.elts):
                tr.lines.append(f"d_out[{i}] = {tr.expr(e)};")
    return tr.lines
