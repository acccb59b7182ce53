"""Compiled Arb ball kernels: the generated Python kernels on balls, translated to C.

:class:`mpvi.ArbContext` runs the kernels of :mod:`mpvi.compiled.codegen` -- straight-line Python
printed from sympy -- on python-flint's ``flint.arb`` balls: the residual and Jacobian
of an implicit step (:class:`mpvi.engines.kernels.Kernel`, called by the Krawczyk test of
:func:`mpvi.numbers.arb.krawczyk`), the outputs of the converged step, the Hamiltonian field of
the explicit steps and the mass matrix.  In Python every ball operation costs a call of
the interpreter and a new object.  :func:`accelerated` translates such a kernel operation
by operation, in Python's order, into C calls of FLINT's Arb (``arb_add``, ``arb_mul``,
``arb_pow``, ``arb_sin``, ... each at the precision python-flint's operation would use,
``flint.ctx.prec`` at the call; Johansson 2017), compiles it into a CPython extension
and loads it in-process.  The calls are those python-flint makes for the same Python
operations -- an ``int`` operand converted exactly to a ball, ``-x`` as
``arb_neg_round``, ``abs`` as ``arb_abs`` then ``arb_set_round``, ``x**2`` as
``arb_pow``, sin, cos and tan nan unless ``|x|`` is certainly below 2^prec
(``ArbContext._periodic``) -- and Arb is deterministic, so the compiled kernel returns
**the same balls**, midpoint and radius bit for bit, as the Python kernel
(``tests/test_carb.py`` checks it on every call of certified runs).  Nothing is rounded
differently, nothing converted through a float or a midpoint: the enclosures are
Arb's own.

The binding.  FLINT is declared by ``mpvi/compiled/csrc/mpvi_flint.h``: by FLINT's own
headers where they are installed at the version of the libflint python-flint loaded
(:func:`_flint_headers`, e.g. Debian's libflint-dev), else -- python-flint's wheel ships
none -- by the few types and functions the kernels use, declared there as FLINT 3 lays
them out (an ``arb_struct``: an ``arf_struct`` midpoint and a ``mag_struct`` radius).
That layout is never trusted for being written down: before any kernel is built, a probe
(``mpvi_flintprobe.h``, :func:`layout_problem`) is compiled here with the same
declarations, linked to the loaded libflint and run: FLINT's own vector functions
(``_arb_vec_set_powers``, ``_arb_vec_set``, ``_arb_vec_add``) must read back at the
compiled stride ``sizeof(arb_struct)``, a radius FLINT sets must sit at the compiled
offset and one written there must be what ``arb_get_rad_arb`` reads; a mismatch refuses
the compiled ball kernels (one warning, the Python kernels run).  With the hand-declared
layout the FLINT version must also be :data:`VERIFIED_FLINT` (the functions' signatures),
and a ``flint.arb`` :data:`ARB_BASICSIZE` bytes, the ball its last ``sizeof(arb_struct)``
(Python's header and the Cython vtable pointer come first); and every module, once
loaded, must give python-flint's own answers through that layout (its ``probe``: a sum
of a wide inexact ball and an exact one read and written, ``arb_equal_si`` and
``arf_get_d`` of known balls).  The module links against the very libflint file
python-flint loaded (found in ``/proc/self/maps``, else python-flint's
``python_flint.libs``), so the balls it makes and frees use one library and one
allocator.  Outputs are new ``flint.arb`` objects (made by the type's own ``tp_new``,
python-flint's ``arb_init``, then ``arb_set``).  The headers: ``mpvi_flint.h``
declares, ``mpvi_arb.h`` holds the storage and helpers, ``mpvi_dual.h`` the duals,
``mpvi_arbmodule.h`` the module (setup, f, probe), included by the generated part last
(``tests/test_csrc_layers.py``: no circle).

Build, cache and trust: those of :mod:`mpvi.compiled.cbackend` (the same store, keyed by the
SHA-256 of the C source and the runtime files ``mpvi/compiled/csrc``, mode 0700, loaded only if
mpvi built it; built when :class:`mpvi.compiled.cbackend.Rental` says so unless already in
the store).

Duals.  :func:`mpvi.certify`'s Jacobian walk (Lohner's method) runs the same kernels
on :class:`mpvi.numbers.arb._Dual` -- a ball with the balls of its first derivatives -- in the
context :class:`mpvi.numbers.arb._DualContext`, and that was most of a certificate's time.  Those
are compiled too (``compiles_dual_kernels``; ``mpvi/compiled/csrc/mpvi_dual.h``).  The
elementary functions on duals are written once, in :data:`mpvi.numbers.arb.DUAL_RULES`
(per function a lambda of the value and one of the derivative): the Python functions
are made from those lambdas, and :class:`_RuleTranslator` translates the same lambdas'
``ast`` into the C function ``da_rule_<name>`` of each kernel that calls it -- the same
Arb calls in the same order.  The arithmetic is written once too:
:data:`mpvi.numbers.arb.DUAL_ARITHMETIC` (``x + y``, ``x - y``, ``1 - x`` as ``__rsub__``
does it, ``x * y``, ``x / y``: per operation the value, the factors, the derivative when
both, one or the other operand carries derivatives, or the operand's tuple shared),
``DUAL_NEGATION``, ``DUAL_POWER`` (``x**k`` for a constant k) and ``DUAL_CHAIN`` (the
chain rule of the functions) make the ``_Dual`` methods, and
:class:`_ArithmeticTranslator` translates the same lambdas into the C ``da_add``, ...,
``da_chain``, ``da_combine`` of each kernel; ``mpvi_dual.h`` holds only the glue (storage,
reading the arguments, making the results).  A constant (empty derivative tuple) is kept
apart from a dual with derivatives as the class does: the same
value and derivative balls, bit for bit (``tests/test_carb.py``).  A dual's derivatives
are read from its tuple, and its results made as new ``_Dual`` objects.

Fallback.  Compiled ball kernels are optional: without a C compiler or Python's headers,
with ``MPVI_COMPILED=0`` (or ``MPVI_COMPILED_BALLS=0``: these kernels alone), another
FLINT version, another ``flint.arb`` size, a failed
probe or a construct the translator does not know (a special function, a decimal
literal), the Python kernel runs -- the same balls, more slowly -- and the reason is said
once per process on stderr (:func:`status` keeps it).  A call whose arguments are not
all ``flint.arb`` (an ``int`` among them: Python would compute with ints) runs the
Python kernel, and so does a call on duals with a plain ball among them, or with
derivative tuples of two lengths, and a call made while the same module computes (another
thread, or a finalizer run while its results are made: the module's temporaries serve one
call at a time).
"""
from __future__ import annotations

import ast
import ctypes
import functools
import hashlib
import inspect
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

from mpvi.compiled import cbackend
from mpvi.compiled.cbackend import _libflint, _library_version
from mpvi.compiled.ctranslate import Unsupported

VERIFIED_FLINT = "3.6.0"
"""The FLINT version whose ``arb_struct`` layout and function signatures
``mpvi/compiled/csrc/mpvi_arb.h`` declares (python-flint 0.9.0's wheel bundles it); with another
version the compiled ball kernels are refused."""

ARB_BASICSIZE = 72
"""``flint.arb.__basicsize__`` whose last ``sizeof(arb_struct)`` bytes (probed:
:func:`layout_problem`) are the ball
(Python's object header and the Cython vtable pointer first)."""

PROBE_BITS = 256
"""The precision of the layout probe: a midpoint of more than two limbs (FLINT's
heap-allocated mantissa) is read and written, besides an exact small one."""

_BINARY = {ast.Add: "arb_add", ast.Sub: "arb_sub", ast.Mult: "arb_mul", ast.Div: "arb_div",
           ast.Pow: "arb_pow"}
"""Python's operators on balls and the Arb function python-flint calls for each."""

_UNARY = {"exp": "arb_exp", "log": "arb_log", "sqrt": "arb_sqrt", "atan": "arb_atan",
          "sinh": "arb_sinh", "cosh": "arb_cosh", "tanh": "arb_tanh", "asin": "arb_asin",
          "acos": "arb_acos"}
"""The functions of generated code ArbContext evaluates by the ``flint.arb`` method of
that name, and the Arb function the method calls."""

_PERIODIC = {"sin": "arb_sin", "cos": "arb_cos", "tan": "arb_tan"}
"""The functions ArbContext makes nan for a ball not certainly below 2^prec in absolute
value (``ArbContext._periodic``)."""

_lock = threading.Lock()
_status: dict = {}
_MODULES: dict = {}


def status() -> dict:
    """What this process found about compiled ball kernels: ``{"toolchain": ...}`` once
    checked (a dict with ``"error"`` when unavailable), ``"refused"``: why a module failed
    its probe, if one did."""
    with _lock:
        return dict(_status)


def _report_once(key: str, message: str) -> None:
    with _lock:
        if key in _status:
            return
        _status[key] = message
    print(f"mpvi: {message}", file=sys.stderr)


# ----- the toolchain and the layout ---------------------------------------------------------

def toolchain() -> dict:
    """The compiler, headers and libflint to build ball kernels with, or ``{"error":
    reason}``: checked once per process."""
    with _lock:
        if "toolchain" in _status:
            return _status["toolchain"]
    info = _find_toolchain()
    with _lock:
        return _status.setdefault("toolchain", info)


def _flint_headers(version: str) -> str | None:
    """The include directory of FLINT's own headers (``flint/flint.h`` and
    ``flint/arb.h``, e.g. Debian's libflint-dev) whose ``FLINT_VERSION`` is ``version``
    (the libflint python-flint loaded), or None: headers of another FLINT declare another
    library."""
    roots = [d for d in os.environ.get("CPATH", "").split(os.pathsep) if d]
    roots += [sysconfig.get_config_var("INCLUDEDIR") or "", "/usr/local/include", "/usr/include"]
    for root in roots:
        flint_h, arb_h = Path(root, "flint", "flint.h"), Path(root, "flint", "arb.h")
        if not (root and flint_h.is_file() and arb_h.is_file()):
            continue
        text = flint_h.read_text(errors="replace")
        found = re.search(r'^\s*#\s*define\s+FLINT_VERSION\s+"([0-9.]+)"', text, re.M)
        if found and found.group(1) == version:
            return root
    return None


_PROBE_LOCK = threading.Lock()
_PROBES: dict = {}


def _probe_library(tc: dict) -> Any:
    """The layout probe (``mpvi_flintprobe.h``) compiled with the toolchain ``tc`` and
    linked to its libflint, loaded by ctypes (built once per process and toolchain)."""
    key = (tc["cc"], tuple(tc["includes"]), tuple(tc["link"]), tc.get("flint_headers"))
    with _PROBE_LOCK:
        if key in _PROBES:
            return _PROBES[key]
        with tempfile.TemporaryDirectory(prefix="mpvi-flintprobe-") as tmp:
            c = Path(tmp) / "probe.c"
            defines = "#define MPVI_FLINT_HEADERS 1\n" if tc.get("flint_headers") else ""
            c.write_text(defines + '#include "mpvi_flintprobe.h"\n', encoding="ascii")
            out = Path(tmp) / "probe.so"
            cbackend.compile_c(tc, c, out, ("-O1", "-shared", "-fPIC", "-std=c99"),
                               " on the layout probe")
            lib = ctypes.CDLL(str(out))
        for name in ("mpvi_probe_size", "mpvi_probe_rad_offset"):
            getattr(lib, name).restype = ctypes.c_long
            getattr(lib, name).argtypes = []
        lib.mpvi_probe_check.restype = ctypes.c_int
        lib.mpvi_probe_check.argtypes = [ctypes.c_long, ctypes.c_long]
        _PROBES[key] = lib
        return lib


_PROBE_FAILURES = {
    1: "the sizes are impossible", 2: "no memory for the probe",
    3: "FLINT's vector of powers (_arb_vec_set_powers) does not read back at that stride",
    4: "FLINT's copy of a vector (_arb_vec_set) does not read back at that stride",
    5: "FLINT's sum of vectors (_arb_vec_add) does not read back at that stride",
    6: "the radius FLINT gives a ball (arb_add_error_2exp_si) is not at that offset",
    7: "a radius written at that offset is not the one FLINT reads (arb_get_rad_arb)"}
"""What each failed check of ``mpvi_probe_check`` means."""


def layout_problem(tc: dict, size: int | None = None, rad_offset: int | None = None
                   ) -> str | None:
    """Why the ``arb_struct`` of ``mpvi_flint.h`` as compiled by ``tc`` (or the given
    ``size`` and radius offset: a test passes wrong ones) is not the layout of the libflint
    python-flint loaded, by the probe ``mpvi_flintprobe.h`` run against it; None when the
    library reads and writes balls as assumed."""
    lib = _probe_library(tc)
    size = int(lib.mpvi_probe_size()) if size is None else int(size)
    rad_offset = int(lib.mpvi_probe_rad_offset()) if rad_offset is None else int(rad_offset)
    failed = int(lib.mpvi_probe_check(size, rad_offset))
    if failed == 0:
        return None
    return (f"the ball layout (arb_struct of {size} bytes, radius at {rad_offset}) is not "
            f"that of the libflint python-flint loaded: "
            f"{_PROBE_FAILURES.get(failed, f'check {failed} failed')}")


def _find_toolchain() -> dict:
    import flint
    version = str(getattr(flint, "__FLINT_VERSION__", "unknown"))
    size = int(flint.arb.__basicsize__)
    if size != ARB_BASICSIZE:
        return {"error": f"a flint.arb object is {size} bytes, not the {ARB_BASICSIZE} whose "
                         "layout was verified"}
    lib = _libflint()
    if lib is None:
        return {"error": "the libflint python-flint loaded was not found"}
    loaded = _library_version(lib)
    headers = _flint_headers(loaded) if loaded == version else None
    if headers is None and version != VERIFIED_FLINT:
        return {"error": f"python-flint uses FLINT {version}; the layout of its balls was "
                         f"verified for FLINT {VERIFIED_FLINT} only (and no FLINT headers of "
                         "that version are installed)"}
    if headers is None and loaded != VERIFIED_FLINT:
        return {"error": f"the libflint python-flint loaded ({lib}) is FLINT {loaded}; the "
                         f"layout of its balls was verified for FLINT {VERIFIED_FLINT} only"}
    found = cbackend.compiler()
    if "error" in found:
        return found
    tc = {"cc": found["cc"], "version": found["version"],
          "includes": [found["python_include"]] + ([headers] if headers else []),
          "link": [str(lib)], "rpath": str(lib.parent), "mpfr": f"FLINT {version}",
          "abi": sysconfig.get_config_var("EXT_SUFFIX"), "flint_headers": headers}
    try:
        problem = layout_problem(tc)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        return {"error": f"the layout probe of the ball kernels did not run: {exc}"}
    if problem is not None:
        return {"error": problem}
    tc["offset"] = size - int(_probe_library(tc).mpvi_probe_size())
    return tc


def _usable() -> dict | None:
    """The toolchain, or None when compiled kernels are off or ball kernels unavailable
    (said once)."""
    if not cbackend.balls_enabled():
        return None
    tc = toolchain()
    if "error" in tc:
        _report_once("unavailable", f"compiled ball kernels unavailable ({tc['error']}); "
                     "computing with the Python kernels")
        return None
    try:
        cbackend._runtime()
    except (OSError, RuntimeError) as exc:
        _report_once("runtime-error", f"compiled ball kernels unavailable ({exc}); computing "
                     "with the Python kernels")
        return None
    return tc


def same(a: object, b: object) -> bool:
    """Whether two results are the same: two balls of the same midpoint and radius, bit
    for bit (``arb.repr`` is exact), two duals of the same value and derivative balls, or
    two equal ints."""
    from flint import arb

    from mpvi.numbers.arb import _Dual
    if type(a) is not type(b):
        return False
    if isinstance(a, arb):
        return bool(a.repr() == b.repr())           # type: ignore[attr-defined]
    if isinstance(a, _Dual) and isinstance(b, _Dual):
        return (same(a.v, b.v) and len(a.d) == len(b.d)
                and all(same(x, y) for x, y in zip(a.d, b.d)))
    return a == b


def _verified(module: Any) -> str | None:
    """Why ``module`` does not read and write balls as python-flint does (its ``probe``
    against python-flint's own results), or None."""
    import flint
    from flint import arb
    caller = flint.ctx.prec
    flint.ctx.prec = PROBE_BITS
    try:
        wide = arb(1) / 3                             # inexact: radius, heap mantissa
        three = arb(3)
        for a, b in ((three, wide), (wide, three)):
            total, a3, b3, mid = module.probe(a, b, PROBE_BITS)
            if not same(total, a + b):
                return f"its sum of {a.repr()} and {b.repr()} is {total.repr()}"
            if (a3, b3) != (int(a is three), int(b is three)):
                return "arb_equal_si through its layout disagrees with python-flint"
            if a is three and mid != 3.0:
                return f"arf_get_d of the midpoint of 3 gives {mid!r}"
    finally:
        flint.ctx.prec = caller
    return None


# ----- the translator -----------------------------------------------------------------------

class _BallTranslator:
    """The Python source of one generated function -> the C statements of ``ma_evaluate``.

    Every Python operation on balls is one Arb call into a new temporary ``t[i]`` at the
    call's ``prec``; a name is bound to the C operand of its value (a temporary, an
    argument ``g<i>[j]``, a constant ``k[i]``), as Python binds the object; an ``int``
    literal stays an int until an operation with a ball converts it exactly (``z[i]``,
    set once when the module loads), as python-flint does.
    """

    def __init__(self, constants: Sequence[str]) -> None:
        self.constants = list(constants)
        self.temps = 0
        self.ints: dict[int, str] = {}
        self.lines: list[str] = []
        self.names: dict[str, tuple[str, Any]] = {}

    kind = "ball"
    """The kind of the operands that are not ints."""

    def temp(self) -> str:
        self.temps += 1
        return f"t[{self.temps - 1}]"

    def reading(self) -> list[str]:
        """The C lines before the arguments are read."""
        return []

    def read_done(self) -> list[str]:
        """The C lines after the arguments are read."""
        return []

    def read_scalar(self, i: int) -> tuple[list[str], str]:
        """(C lines, operand) of argument i used whole."""
        return [f"if (Py_TYPE(groups[{i}]) != arb_type) return -1;"], f"BALL(groups[{i}])"

    def read_group(self, i: int, n: int) -> tuple[list[str], list[str]]:
        """(C lines, operands) of the n items of argument i."""
        return ([f"arb_srcptr g{i}[{max(n, 1)}];",
                 f"if ((rc = ma_group(groups[{i}], {n}, g{i})) != 1) return rc;"],
                [f"g{i}[{j}]" for j in range(n)])

    def output(self, i: int, kind: str, v: Any) -> str:
        """The C statement that sets result i."""
        return (f"if (!ma_int(result, {i}, {v}L)) return 0;" if kind == "int" else
                f"if (!ma_ball(result, {i}, {v})) return 0;")

    def exact(self, n: int) -> str:
        if not -2 ** 62 < n < 2 ** 62:
            raise Unsupported(f"the integer {n} has more than 62 bits")
        if n not in self.ints:
            self.ints[n] = f"z[{len(self.ints)}]"
        return self.ints[n]

    def ball(self, kind: str, v: Any) -> str:
        return v if kind == "ball" else self.exact(v)

    def value(self, node: ast.AST) -> tuple[str, Any]:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return "int", node.value
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            if node.id in self.constants:
                return "ball", f"k[{self.constants.index(node.id)}]"
            raise Unsupported(f"unknown name {node.id!r}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            kind, v = self.value(node.operand)
            if kind == "int":
                return "int", -v if isinstance(node.op, ast.USub) else v
            out = self.temp()
            f = "arb_neg_round" if isinstance(node.op, ast.USub) else "arb_set_round"
            self.lines.append(f"{f}({out}, {v}, prec);")
            return "ball", out
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            lk, lv = self.value(node.left)
            rk, rv = self.value(node.right)
            if lk == "int" and rk == "int":
                raise Unsupported(f"integer arithmetic {ast.unparse(node)[:60]!r}")
            out = self.temp()
            self.lines.append(f"{_BINARY[type(node.op)]}({out}, {self.ball(lk, lv)}, "
                              f"{self.ball(rk, rv)}, prec);")
            return "ball", out
        if isinstance(node, ast.Call):
            return self.call(node)
        raise Unsupported(f"{type(node).__name__} ({ast.unparse(node)[:60]})")

    def argument(self, node: ast.AST, name: str) -> str:
        kind, v = self.value(node)
        if kind != "ball":
            raise Unsupported(f"{name} of an integer")
        return str(v)

    def callee(self, node: ast.Call) -> tuple[str, list[ast.expr], int | None]:
        """The called name, its arguments and, for ``mpf(n)``, the integer n (else None);
        Unsupported for anything but a plain call by name."""
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise Unsupported(f"call {ast.unparse(node)[:60]}")
        name, args = node.func.id, node.args
        if name != "mpf" or len(args) != 1:
            return name, args, None
        kind, v = self.value(args[0])
        if kind != "int":
            raise Unsupported(f"mpf of {ast.unparse(args[0])[:40]}")
        return name, args, v

    def call(self, node: ast.Call) -> tuple[str, Any]:
        name, args, n = self.callee(node)
        if n is not None:
            return "ball", self.exact(n)                # ArbContext.num(n): the exact ball
        if name in _PERIODIC and len(args) == 1:
            x = self.argument(args[0], name)
            out, scratch = self.temp(), self.temp()
            self.lines.append(f"ma_periodic({_PERIODIC[name]}, {out}, {scratch}, {x}, prec);")
            return "ball", out
        if name in _UNARY and len(args) == 1:
            x = self.argument(args[0], name)
            out = self.temp()
            self.lines.append(f"{_UNARY[name]}({out}, {x}, prec);")
            return "ball", out
        if name in ("fabs", "abs") and len(args) == 1:
            x = self.argument(args[0], name)
            out = self.temp()
            self.lines.append(f"ma_abs({out}, {x}, prec);")
            return "ball", out
        if name == "atan2" and len(args) == 2:
            y, x = self.argument(args[0], name), self.argument(args[1], name)
            out = self.temp()
            self.lines.append(f"arb_atan2({out}, {y}, {x}, prec);")
            return "ball", out
        raise Unsupported(f"{name} has no compiled ball counterpart")

    def function(self, source: str) -> tuple[list[str], list[str], list[tuple[str, Any]]]:
        """(argument reading, statements, results) of ``def name(_a0, ...): ...; return
        [...]``."""
        (fn,) = ast.parse(source).body
        if not isinstance(fn, ast.FunctionDef):
            raise Unsupported("not a function")
        groups = [a.arg for a in fn.args.args]
        body, returns = fn.body[:-1], fn.body[-1]
        if not (isinstance(returns, ast.Return) and isinstance(returns.value, ast.List)):
            raise Unsupported("the function does not end in `return [...]`")
        unpacked = {stmt.value.id for stmt in body if isinstance(stmt, ast.Assign)
                    and isinstance(stmt.targets[0], ast.List)
                    and isinstance(stmt.value, ast.Name) and stmt.value.id in groups}
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        read = ["int rc;"] + self.reading()
        for i, g in enumerate(groups):            # an argument used whole: one number (an
            if g not in unpacked and g in used:   # empty group is neither read nor checked)
                lines, operand = self.read_scalar(i)
                read += lines
                self.names[g] = (self.kind, operand)
        for stmt in body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                raise Unsupported(f"statement {ast.unparse(stmt)[:60]}")
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.List) and isinstance(value, ast.Name) \
                    and value.id in unpacked:
                i = groups.index(value.id)
                members = [e.id for e in target.elts if isinstance(e, ast.Name)]
                if len(members) != len(target.elts):
                    raise Unsupported(f"unpacking {ast.unparse(target)[:60]}")
                lines, operands = self.read_group(i, len(members))
                read += lines
                self.names.update((m, (self.kind, o)) for m, o in zip(members, operands))
                continue
            if not isinstance(target, ast.Name):
                raise Unsupported(f"assignment to {ast.unparse(target)[:60]}")
            self.names[target.id] = self.value(value)
        read += self.read_done()
        results = [self.value(e) for e in returns.value.elts]
        return read, self.lines, results


@functools.cache
def _dual_rules() -> dict[str, tuple[ast.Lambda, ast.Lambda]]:
    """The two lambdas (value, derivative) of each entry of
    :data:`mpvi.numbers.arb.DUAL_RULES`, as ``ast`` read from that module's source (parsed,
    never evaluated): what :class:`_RuleTranslator` makes C of."""
    from mpvi.numbers import arb as arb_module     # flint, heavy: loaded with the duals
    tree = ast.parse(inspect.getsource(arb_module))
    found = [node.value for node in tree.body if isinstance(node, ast.Assign)
             and [ast.unparse(t) for t in node.targets] == ["DUAL_RULES"]]
    if len(found) != 1 or not isinstance(found[0], ast.Dict):
        raise Unsupported("mpvi.numbers.arb.DUAL_RULES is not one dict literal")
    rules: dict[str, tuple[ast.Lambda, ast.Lambda]] = {}
    for key, value in zip(found[0].keys, found[0].values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)
                and isinstance(value, ast.Tuple) and len(value.elts) == 2
                and all(isinstance(e, ast.Lambda) for e in value.elts)):
            raise Unsupported("an entry of DUAL_RULES is not name: (lambda, lambda)")
        rules[key.value] = (value.elts[0], value.elts[1])   # type: ignore[assignment]
    if set(rules) != set(arb_module.DUAL_RULES):
        raise Unsupported("the source of DUAL_RULES is not the table loaded")
    return rules


class _RuleTranslator:
    """One entry of :data:`mpvi.numbers.arb.DUAL_RULES` -> the C function ``da_rule_<name>``
    of a compiled dual kernel: each Python operation of the two lambdas on balls is the Arb
    call python-flint makes for it (:data:`_BINARY`, ``-x`` ``arb_neg_round``, ``x.sin()``
    ``arb_sin``, an ``int`` an exact ball ``z[i]``), in Python's order, into the scratch
    balls ``ds[]``; the value goes into the temporary's value ``tv[i]``, the derivative
    through ``da_chain`` (one argument) or ``da_combine`` (two: the factors' tuple)."""

    def __init__(self, exact: Callable[[int], str]) -> None:
        self.exact = exact
        self.scratch = 0
        self.lines: list[str] = []
        self.names: dict[str, str] = {}

    def fresh(self) -> str:
        self.scratch += 1
        return f"ds[{self.scratch - 1}]"

    def ball(self, node: ast.AST, out: str | None = None) -> str:
        """The C operand of ``node``'s ball, its Arb calls appended (into ``out`` if
        given, else a fresh scratch)."""
        if isinstance(node, ast.Name) and node.id in self.names:
            return self.names[node.id]
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return self.exact(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            if isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
                return self.exact(-node.operand.value)
            x = self.ball(node.operand)
            return self.emit("arb_neg_round", out, x)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.ball(node.left), self.ball(node.right)
            return self.emit(_BINARY[type(node.op)], out, left, right)
        if isinstance(node, ast.NamedExpr):
            self.names[node.target.id] = self.ball(node.value)
            return self.names[node.target.id]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and not node.keywords:
            method, owner = node.func.attr, node.func.value
            if not node.args and method in {**_UNARY, **_PERIODIC}:
                x = self.ball(owner)
                return self.emit({**_UNARY, **_PERIODIC}[method], out, x)
            if method == "atan2" and isinstance(owner, ast.Name) and owner.id == "arb" \
                    and len(node.args) == 2:
                y, x = self.ball(node.args[0]), self.ball(node.args[1])
                return self.emit("arb_atan2", out, y, x)
        raise Unsupported(f"a dual rule's {ast.unparse(node)[:60]!r} has no Arb call")

    def emit(self, function: str, out: str | None, *operands: str) -> str:
        target = out if out is not None else self.fresh()
        self.lines.append(f"{function}({target}, {', '.join(operands)}, prec);")
        return target

    def function(self, name: str, value: ast.Lambda, derivative: ast.Lambda) -> list[str]:
        """The C lines of ``da_rule_<name>(i, the argument duals, prec)``."""
        params = [a.arg for a in value.args.args]
        if [a.arg for a in derivative.args.args] != params + ["v"]:
            raise Unsupported(f"the dual rule {name!r}: the derivative's parameters are not "
                              "the value's and v")
        self.names = {p: f"d{j}.v" for j, p in enumerate(params)}
        duals = ", ".join(f"dual d{j}" for j in range(len(params)))
        head = [f"/* mpvi.numbers.arb.DUAL_RULES[{name!r}]: {ast.unparse(value.body)}; "
                f"{ast.unparse(derivative.body)} */".replace("*/ ", "* /"),
                f"MPVI_UNUSED static void da_rule_{name}(int i, {duals}, slong prec) {{"]
        if name in _PERIODIC:       # ArbContext._periodic: a constant nan beyond 2^prec
            head.append("    if (!ma_below_limit(s1, d0.v, prec)) { arb_indeterminate(tv[i]); "
                        "T[i].d = NULL; return; }")
        self.lines = []
        self.ball(value.body, "tv[i]")
        self.names["v"] = "tv[i]"
        if len(params) == 1:
            slope = self.ball(derivative.body)
            self.lines.append(f"da_chain(i, d0, {slope}, prec);")
        elif len(params) == 2 and isinstance(derivative.body, ast.Tuple) \
                and len(derivative.body.elts) == 2:
            fa, fb = (self.ball(e) for e in derivative.body.elts)
            self.lines.append(f"da_combine(i, d0, d1, {fa}, {fb}, prec);")
        else:
            raise Unsupported(f"the dual rule {name!r} has no chain rule of 1 or 2 arguments")
        return head + [f"    {x}" for x in self.lines] + ["}"]


@functools.cache
def _dual_arithmetic() -> dict[str, tuple[ast.expr, ...]]:
    """The entries of :data:`mpvi.numbers.arb.DUAL_ARITHMETIC` (six expressions: lambdas,
    ``None`` or ``SHARE``), ``"neg"``, :data:`mpvi.numbers.arb.DUAL_NEGATION`, and
    ``"pow"``, :data:`mpvi.numbers.arb.DUAL_POWER` (two lambdas each), and ``"chain"``,
    :data:`mpvi.numbers.arb.DUAL_CHAIN` (three), as ``ast`` read from that module's source (parsed, never evaluated): what
    :class:`_ArithmeticTranslator` makes C of."""
    from mpvi.numbers import arb as arb_module     # flint, heavy: loaded with the duals
    tree = ast.parse(inspect.getsource(arb_module))
    found = {ast.unparse(node.targets[0]): node.value for node in tree.body
             if isinstance(node, ast.Assign) and len(node.targets) == 1}
    table, negation = found.get("DUAL_ARITHMETIC"), found.get("DUAL_NEGATION")
    power, chain = found.get("DUAL_POWER"), found.get("DUAL_CHAIN")
    if not isinstance(table, ast.Dict) or not isinstance(negation, ast.Tuple) \
            or not isinstance(power, ast.Tuple) or len(power.elts) != 2 \
            or not isinstance(chain, ast.Tuple) or len(chain.elts) != 3:
        raise Unsupported("mpvi.numbers.arb.DUAL_ARITHMETIC is not one dict literal")
    entries: dict[str, tuple[ast.expr, ...]] = {}
    for key, value in zip(table.keys, table.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)
                and isinstance(value, ast.Tuple) and len(value.elts) == 6
                and isinstance(value.elts[0], ast.Lambda)):
            raise Unsupported("an entry of DUAL_ARITHMETIC is not name: (value, fa, fb, "
                              "both, left, right)")
        entries[key.value] = tuple(value.elts)
    if set(entries) != set(arb_module.DUAL_ARITHMETIC) or len(negation.elts) != 2:
        raise Unsupported("the source of DUAL_ARITHMETIC is not the table loaded")
    entries["neg"] = tuple(negation.elts)
    entries["pow"] = tuple(power.elts)
    entries["chain"] = tuple(chain.elts)
    return entries


class _ArithmeticTranslator(_RuleTranslator):
    """One operation of :data:`mpvi.numbers.arb.DUAL_ARITHMETIC` (or the negation) -> the C
    function ``da_<name>(i, a, b, prec)`` (``da_neg(i, a, prec)``) of a compiled dual
    kernel, doing what the ``_Dual`` method made of the same lambdas does
    (:func:`mpvi.numbers.arb._arithmetic`): the value into ``tv[i]``; then per case (both
    operands with derivatives, only a, only b, none) the factors once into scratch balls
    and each derivative ball into ``td[i] + j``, or ``SHARE``: the operand's pointer, as
    Python shares its tuple."""

    @staticmethod
    def _lambda(node: ast.expr, what: str) -> ast.Lambda:
        if not isinstance(node, ast.Lambda):
            raise Unsupported(f"{what} is not a lambda")
        return node

    def into(self, node: ast.Lambda, out: str, names: dict[str, str]) -> None:
        """``node``'s body into the ball ``out``, its parameters the C operands ``names``
        (in order: the lambda's names are its own)."""
        params = [a.arg for a in node.args.args]
        if len(params) != len(names):
            raise Unsupported(f"{ast.unparse(node)!r} does not take {', '.join(names)}")
        self.names = {p: c for p, c in zip(params, names.values())}
        got = self.ball(node.body, out)
        if got != out:
            self.lines.append(f"arb_set({out}, {got});")

    def derivative(self, element: ast.expr, operands: dict[str, str],
                   factors: list[tuple[ast.expr, str]], share: str, indent: str) -> list[str]:
        """The C lines of one case: ``share`` if ``element`` is ``SHARE``, else the factors,
        then the loop over the seeds."""
        if isinstance(element, ast.Name) and element.id == "SHARE":
            return [f"{indent}T[i].d = {share};"]
        self.lines = []
        names: dict[str, str] = {}
        for factor, fname in factors:
            f = self._lambda(factor, "a factor")
            if [a.arg for a in f.args.args] != ["u", "w", "v"]:
                raise Unsupported(f"the factor {ast.unparse(f)!r} does not take u, w, v")
            self.names = {"u": "a.v", "w": "b.v", "v": "tv[i]"}
            names[fname] = self.ball(f.body)
        head = [f"{indent}{x}" for x in self.lines]
        self.lines = []
        self.into(self._lambda(element, "a derivative"), "td[i] + j", {**names, **operands})
        return head + [f"{indent}for (slong j = 0; j < m; j++) {{"] + \
            [f"{indent}    {x}" for x in self.lines] + [f"{indent}}}", f"{indent}T[i].d = td[i];"]

    def chain(self, entry: tuple[ast.expr, ...]) -> list[str]:
        """The C lines of ``da_chain(i, a, fa, prec)`` and ``da_combine(i, a, b, fa, fb,
        prec)`` of :data:`mpvi.numbers.arb.DUAL_CHAIN`: the slopes given (a rule's or the
        power's scratch balls), so the elements' scratch is ``s1, s2`` of ``mpvi_dual.h``,
        never a ``ds[]`` holding a slope."""
        both, left, right = (self._lambda(e, "the chain rule") for e in entry)
        spare = iter(["s1", "s2"])

        def fresh() -> str:
            got = next(spare, None)
            if got is None:
                raise Unsupported("the chain rule needs more than two scratch balls")
            return got
        self.fresh = fresh                                  # type: ignore[method-assign]

        def loop(node: ast.Lambda, names: dict[str, str]) -> list[str]:
            self.lines = []
            self.into(node, "td[i] + j", names)
            return (["        for (slong j = 0; j < m; j++) {"]
                    + [f"            {x}" for x in self.lines] + ["        }",
                                                             "        T[i].d = td[i];"])
        text = " ".join(ast.unparse(e) for e in entry).replace("*/", "* /")
        x, y = {"x": "a.d + j"}, {"y": "b.d + j"}
        chain = (["MPVI_UNUSED static void da_chain(int i, dual a, arb_srcptr fa, slong prec) {",
                  "    if (a.d) {"] + loop(left, {"fa": "fa", **x})
                 + ["    } else T[i].d = NULL;", "}"])
        combine = (["MPVI_UNUSED static void da_combine(int i, dual a, dual b, arb_srcptr fa, "
                    "arb_srcptr fb, slong prec) {", "    if (a.d && b.d) {"]
                   + loop(both, {"fa": "fa", "fb": "fb", **x, **y}) + ["    } else if (a.d) {"]
                   + loop(left, {"fa": "fa", **x}) + ["    } else if (b.d) {"]
                   + loop(right, {"fb": "fb", **y}) + ["    } else T[i].d = NULL;", "}"])
        return [f"/* mpvi.numbers.arb.DUAL_CHAIN: {text} */"] + chain + combine

    def operation(self, name: str, entry: tuple[ast.expr, ...]) -> list[str]:
        """The C lines of ``da_<name>``."""
        value = self._lambda(entry[0], f"the value of {name!r}")
        text = " ".join(ast.unparse(e) for e in entry).replace("*/", "* /")
        self.lines = []
        if name == "pow":
            self.into(value, "tv[i]", {"u": "a.v", "k": "k"})
            body = [f"    {x}" for x in self.lines] + ["    if (a.d) {"]
            slope = self._lambda(entry[1], "the slope of the power")
            if [a.arg for a in slope.args.args] != ["u", "k", "v"]:
                raise Unsupported("the slope of the power does not take u, k, v")
            self.lines, self.names = [], {"u": "a.v", "k": "k", "v": "tv[i]"}
            s = self.ball(slope.body)
            body += [f"        {x}" for x in self.lines]
            return ([f"/* mpvi.numbers.arb.DUAL_POWER: {text} */",
                     "MPVI_UNUSED static void da_pow(int i, dual a, arb_srcptr k, slong prec) {"]
                    + body + [f"        da_chain(i, a, {s}, prec);",
                              "    } else T[i].d = NULL;", "}"])
        if name == "neg":
            self.into(value, "tv[i]", {"u": "a.v"})
            body = [f"    {x}" for x in self.lines] + ["    if (a.d) {"]
            body += self.derivative(entry[1], {"x": "a.d + j"}, [], "a.d", "        ")
            return ([f"/* mpvi.numbers.arb.DUAL_NEGATION: {text} */",
                     "MPVI_UNUSED static void da_neg(int i, dual a, slong prec) {"]
                    + body + ["    } else T[i].d = NULL;", "}"])
        fa, fb, both, left, right = entry[1:]
        has = not (isinstance(fa, ast.Constant) and fa.value is None)
        if has == (isinstance(fb, ast.Constant) and fb.value is None):
            raise Unsupported(f"the operation {name!r} has one factor of two")
        self.into(value, "tv[i]", {"u": "a.v", "w": "b.v"})
        body = [f"    {x}" for x in self.lines]
        cases = [("a.d && b.d", both, {"x": "a.d + j", "y": "b.d + j"},
                  [(fa, "fa"), (fb, "fb")], "NULL"),
                 ("a.d", left, {"x": "a.d + j"}, [(fa, "fa")], "a.d"),
                 ("b.d", right, {"y": "b.d + j"}, [(fb, "fb")], "b.d")]
        for k, (test, element, operands, factors, share) in enumerate(cases):
            body.append(f"    {'} else if' if k else 'if'} ({test}) {{")
            body += self.derivative(element, operands, factors if has else [], share, "        ")
        body.append("    } else T[i].d = NULL;")
        return ([f"/* mpvi.numbers.arb.DUAL_ARITHMETIC[{name!r}]: {text} */",
                 f"MPVI_UNUSED static void da_{name}(int i, dual a, dual b, slong prec) {{"]
                + body + ["}"])


class _DualTranslator(_BallTranslator):
    """The Python source of one generated function on :class:`mpvi.numbers.arb._Dual` -> C
    statements on the duals of ``mpvi_dual.h``: each Python operation is the C function
    doing what the ``_Dual`` method Python would call does (``x + 1`` is
    ``_Dual.__add__(x, 1)``, ``1 - x`` is ``_Dual.__rsub__``, ``x**2`` ``_Dual.__pow__``),
    with the same Arb calls; an ``int`` operand stays an int, as Python passes it."""

    kind = "dual"

    def __init__(self, constants: Sequence[str]) -> None:
        super().__init__(constants)
        self.args = 0
        self.rules: set[str] = set()
        self.ops: set[str] = set()

    def rule_functions(self) -> tuple[list[str], int]:
        """The C functions of the chain rule (``da_chain``, ``da_combine``), of the
        arithmetic (:class:`_ArithmeticTranslator`) and of the rules of
        :data:`mpvi.numbers.arb.DUAL_RULES` (:class:`_RuleTranslator`) this kernel calls, and
        the scratch balls they need."""
        rules, scratch = _dual_rules(), 0
        arithmetic = _dual_arithmetic()
        lines = _ArithmeticTranslator(self.exact).chain(arithmetic["chain"])
        for name in sorted(self.ops):
            ar = _ArithmeticTranslator(self.exact)
            lines += ar.operation(name, arithmetic[name])
            scratch = max(scratch, ar.scratch)
        for name in sorted(self.rules):
            tr = _RuleTranslator(self.exact)
            lines += tr.function(name, *rules[name])
            scratch = max(scratch, tr.scratch)
        return lines, scratch

    def temp(self) -> str:
        self.temps += 1
        return str(self.temps - 1)

    def reading(self) -> list[str]:
        return ["da_start();"]

    def read_done(self) -> list[str]:
        return ["da_started();"]

    def read_scalar(self, i: int) -> tuple[list[str], str]:
        j, self.args = self.args, self.args + 1
        return [f"if ((rc = da_read(groups[{i}], {j})) != 1) return rc;"], f"A[{j}]"

    def read_group(self, i: int, n: int) -> tuple[list[str], list[str]]:
        first, self.args = self.args, self.args + n
        return ([f"if ((rc = da_group(groups[{i}], {n}, {first})) != 1) return rc;"],
                [f"A[{first + j}]" for j in range(n)])

    def output(self, i: int, kind: str, v: Any) -> str:
        return (f"if (!ma_int(result, {i}, {v}L)) return 0;" if kind == "int" else
                f"if (!da_out(result, {i}, {v})) return 0;")

    def value(self, node: ast.AST) -> tuple[str, Any]:
        if isinstance(node, ast.Name) and node.id not in self.names \
                and node.id in self.constants:
            return "dual", f"K[{self.constants.index(node.id)}]"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            kind, v = self.value(node.operand)
            if kind == "int":
                return "int", -v if isinstance(node.op, ast.USub) else v
            if isinstance(node.op, ast.UAdd):              # _Dual.__pos__: itself
                return "dual", v
            i = self.temp()
            self.ops.add("neg")
            self.lines.append(f"da_neg({i}, {v}, prec);")
            return "dual", f"T[{i}]"
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return self.binop(node)
        return super().value(node)

    def binop(self, node: ast.BinOp) -> tuple[str, Any]:
        lk, lv = self.value(node.left)
        rk, rv = self.value(node.right)
        if lk == "int" and rk == "int":
            raise Unsupported(f"integer arithmetic {ast.unparse(node)[:60]!r}")
        op = type(node.op)
        if op is ast.Pow:
            if lk != "dual":
                raise Unsupported(f"a power of an integer ({ast.unparse(node)[:60]})")
            self.ops.add("pow")
            if rk == "dual":                    # _Dual.__pow__ of a dual exponent
                # a constant exponent by the power rule, else _exp(k * _log(self))
                i, j1, j2 = self.temp(), self.temp(), self.temp()
                self.rules.update(("log", "exp"))
                self.ops.add("mul")
                self.lines.append(f"if ({rv}.d == NULL) da_pow({i}, {lv}, {rv}.v, prec); "
                                  f"else {{ da_rule_log({j1}, {lv}, prec); "
                                  f"da_mul({j2}, {rv}, T[{j1}], prec); "
                                  f"da_rule_exp({i}, T[{j2}], prec); }}")
                return "dual", f"T[{i}]"
            if rv == 0:                         # __pow__: the constant 1
                return "dual", f"dc({self.exact(1)})"
            if rv == 1:                         # __pow__: the dual itself
                return "dual", lv
            i = self.temp()
            self.lines.append(f"da_pow({i}, {lv}, {self.exact(rv)}, prec);")
            return "dual", f"T[{i}]"
        i = self.temp()
        name = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}[op]
        left = lv if lk == "dual" else f"dc({self.exact(lv)})"    # an int: exact, constant
        right = rv if rk == "dual" else f"dc({self.exact(rv)})"
        if lk == "int" and op in (ast.Add, ast.Mult):   # __radd__ is __add__, __rmul__ __mul__
            left, right = right, left
        elif lk == "int" and op is ast.Sub:             # __rsub__
            name = "rsub"
        self.ops.add(name)
        self.lines.append(f"da_{name}({i}, {left}, {right}, prec);")
        return "dual", f"T[{i}]"

    def call(self, node: ast.Call) -> tuple[str, Any]:
        name, args, n = self.callee(node)
        if n is not None:
            return "dual", f"dc({self.exact(n)})"       # _DualContext.num(n): a constant
        rules = _dual_rules()
        if name in rules and len(args) == len(rules[name][0].args.args):
            operands = [self.argument(a, name) for a in args]
            i = self.temp()
            self.rules.add(name)
            self.lines.append(f"da_rule_{name}({i}, {', '.join(operands)}, prec);")
            return "dual", f"T[{i}]"
        raise Unsupported(f"{name} has no compiled dual counterpart")

    def argument(self, node: ast.AST, name: str) -> str:
        kind, v = self.value(node)
        if kind != "dual":
            raise Unsupported(f"{name} of an integer")
        return str(v)


def translate(name: str, source: str, constants: Sequence[str], limit_bits: int,
              offset: int, note: str = "", duals: bool = False,
              flint_headers: bool = False) -> str:
    """The C source of the module ``name`` computing what the Python ``source`` computes on
    balls (:class:`_BallTranslator`), with the constant table ``constants`` (names, given
    to ``setup``), sin, cos and tan nan from 2^``limit_bits``, the ball at ``offset`` in a
    ``flint.arb``; ``note`` (the constants' exact values) goes into the comment, part of
    the module's identity.  With ``duals`` the numbers are :class:`mpvi.numbers.arb._Dual`
    (:class:`_DualTranslator`, ``mpvi_dual.h``); with ``flint_headers`` FLINT's own headers
    declare FLINT (``mpvi_flint.h``)."""
    tr = _DualTranslator(constants) if duals else _BallTranslator(constants)
    read, lines, results = tr.function(source)
    rules, scratch = tr.rule_functions() if isinstance(tr, _DualTranslator) else ([], 0)
    outs = [tr.output(i, kind, v) for i, (kind, v) in enumerate(results)]
    init = [f"arb_set_si({z}, {n}L);" for n, z in tr.ints.items()]
    groups = source.split("(", 1)[1].split(")", 1)[0]
    ngroups = len([g for g in groups.split(",") if g.strip()])
    defines = {"MPVI_MODULE": name, "ARB_OFFSET": offset, "LIMIT_BITS": limit_bits,
               "NTEMPS": max(tr.temps, 1), "NCONST": max(len(constants), 1),
               "NCONST_REAL": len(constants), "NZ": max(len(tr.ints), 1), "NGROUPS": ngroups,
               "NRESULTS": len(results)}
    if flint_headers:
        defines["MPVI_FLINT_HEADERS"] = 1
    if duals:
        defines.update(MPVI_DUAL=1, NARGS=max(getattr(tr, "args", 0), 1),
                       NSCRATCH=max(scratch, 1))
    body = ["(void)prec; (void)groups;"] + read + ["(void)rc;"] + lines + outs
    text = ["/* generated by mpvi.compiled.carb: a kernel of mpvi.compiled.codegen translated to Arb",
            f"   {note.replace('*/', '* /')} */"]
    text += [f"#define {k} {v}" for k, v in defines.items()]
    text.append('#include "mpvi_arb.h"')
    if duals:
        text += ['#include "mpvi_dual.h"', "static arb_t ds[NSCRATCH];  /* the rules' scratch */"]
        text += rules
        init += ["for (int j = 0; j < NSCRATCH; j++) arb_init(ds[j]);"]
    text.append("static int ma_evaluate(PyObject *const *groups, PyObject *result, slong prec) {")
    text += [f"    {x}" for x in body] + ["    return 1;", "}", "",
                                           "static void ma_init(void) {"]
    text += [f"    {x}" for x in init] + ["}", '#include "mpvi_arbmodule.h"']
    return "\n".join(text) + "\n"


# ----- building, loading, using -------------------------------------------------------------

def _plan(source: str, ctx: Any, table: dict) -> tuple[str, str, dict, list[Any], bool] | None:
    """(module name, C source, toolchain, constants, on duals) of a kernel bound to
    ``ctx`` (a ball context, or the dual context of :mod:`mpvi.proof.certify`), or None
    (compiled ball kernels off or unavailable, or a construct without a counterpart:
    said once)."""
    tc = _usable()
    if tc is None:
        return None
    duals = bool(getattr(ctx, "compiles_dual_kernels", False))
    names = sorted(table)
    try:
        balls = [_constant(table[n], duals) for n in names]
        note = "constants: " + ", ".join(f"{n} = {b.repr()}" for n, b in zip(names, balls))
        body = translate("mpvi_ball", source, names, int(ctx.prec), int(tc["offset"]), note,
                         duals, flint_headers=bool(tc.get("flint_headers")))
    except Unsupported as exc:
        cbackend._stays_in_python("dual kernel" if duals else "ball kernel", exc)
        return None
    name = f"mpvi_{'d' if duals else 'b'}{hashlib.sha256(body.encode()).hexdigest()[:16]}"
    return name, body.replace("mpvi_ball", name), tc, balls, duals


def _constant(x: Any, duals: bool) -> Any:
    """The ball of a constant of a kernel's table: the ball itself, or the value of a
    constant dual (without derivatives)."""
    from flint import arb
    if duals:
        if getattr(x, "d", None) != ():
            raise Unsupported("a constant with derivatives")
        x = x.v
    if type(x) is not arb:
        raise Unsupported(f"a constant of type {type(x).__name__}")
    return x


def _module(plan: tuple[str, str, dict, list[Any], bool]) -> Any:
    """The loaded, set up and probed module of ``plan`` (built if needed), or None (said
    once: a failed build, a failed probe)."""
    name, csource, tc, constants, duals = plan
    with _lock:
        module = _MODULES.get(name)
    if module is not None:
        return module
    import flint
    try:
        module = cbackend._load_or_build(name, csource, tc)
        if duals:
            from mpvi.numbers.arb import _Dual
            module.setup(flint.arb, constants, _Dual)
        else:
            module.setup(flint.arb, constants)
    except (OSError, RuntimeError, ImportError, TypeError, ValueError,
            subprocess.SubprocessError) as exc:
        _report_once("build-error", f"compiled ball kernels unavailable (building one failed: "
                     f"{exc}); computing with the Python kernels")
        return None
    why = _verified(module)
    if why is not None:
        _report_once("refused", f"compiled ball kernels refused: the module {name} does not "
                     f"read balls as python-flint does ({why}); computing with the Python "
                     "kernels")
        return None
    with _lock:
        return _MODULES.setdefault(name, module)


def _bind(python: Callable[..., Any], compiled: Callable[..., Any]) -> Callable[..., Any]:
    """``compiled(prec, *groups)`` at python-flint's precision of the call, ``python`` where
    it returns None (an argument that is not a ball)."""
    import flint
    context = flint.ctx

    def kernel(*groups: Any) -> Any:
        out = compiled(context.prec, *groups)
        return python(*groups) if out is None else out
    kernel.__name__ = getattr(python, "__name__", "kernel")
    kernel.__wrapped__ = python                     # type: ignore[attr-defined]
    return kernel


def compile_function(python: Callable[..., Any], source: str, ctx: Any, table: dict
                     ) -> Callable[..., Any] | None:
    """The compiled counterpart of the generated ``python`` function bound to the Arb
    context ``ctx`` (constant ``table``), built now, or None where the Python one must be
    used (said once on stderr: :func:`status`)."""
    plan = _plan(source, ctx, table)
    module = _module(plan) if plan is not None else None
    return None if module is None else _bind(python, module.f)


def accelerated(python: Callable[..., Any], source: str, ctx: Any, table: dict
                ) -> Callable[..., Any]:
    """``python`` or its compiled counterpart, the same balls either way: compiled at once
    when its module is in the store, else when its :class:`mpvi.compiled.cbackend.Rental` says
    so (``python`` meanwhile, and for good if building or the probe fails)."""
    plan = _plan(source, ctx, table)
    if plan is None:
        return python
    name, csource, tc = plan[:3]
    after = cbackend.compile_after()
    with _lock:
        loaded = name in _MODULES
    path = None if loaded else cbackend._cached_path(name, csource, tc, create=False)
    if loaded or (path is not None and os.path.lexists(path)) or after == 0:
        module = _module(plan)
        return python if module is None else _bind(python, module.f)
    rental = cbackend.Rental(csource, after)
    state: dict[str, Any] = {"f": None}

    def lazy(*groups: Any) -> Any:
        f = state["f"]
        if f is not None:
            return f(*groups)
        due, value = rental.call(python, groups)
        if not due:
            return value
        module = _module(plan)
        state["f"] = f = python if module is None else _bind(python, module.f)
        return f(*groups)
    lazy.__name__ = getattr(python, "__name__", "kernel")
    return lazy
