"""Generated Python -> C statements on MPFR: the translator of :mod:`mpvi.compiled.cbackend`.

:func:`mpvi.compiled.codegen.generate` prints a kernel as straight-line Python on a context's
numbers; :class:`_Translator` turns one such function, statement by statement and
operation by operation in Python's evaluation order, into C statements on ``mpfr_t``
(each operation one correctly rounded MPFR call at the context's precision: the same
bits).  :mod:`mpvi.compiled.cmodules` places the statements in the module of their kind, and
:mod:`mpvi.compiled.cbackend` builds and loads it.
"""
from __future__ import annotations

import ast
from typing import Any, Sequence

_FUNCTIONS = {"sin": "mpvi_sin", "cos": "mpvi_cos", "tan": "mpfr_tan", "exp": "mpfr_exp",
              "log": "mpfr_log", "sqrt": "mpfr_sqrt", "atan": "mpfr_atan",
              "sinh": "mpfr_sinh", "cosh": "mpfr_cosh", "tanh": "mpfr_tanh",
              "asin": "mpfr_asin", "acos": "mpfr_acos", "fabs": "mpfr_abs", "abs": "mpfr_abs",
              "erf": "mpfr_erf", "erfc": "mpfr_erfc", "gamma": "mpfr_gamma", "zeta": "mpfr_zeta",
              "atanh": "mpfr_atanh", "asinh": "mpfr_asinh", "acosh": "mpfr_acosh",
              "floor": "mpfr_rint_floor", "ceil": "mpfr_rint_ceil", "ei": "mpfr_eint",
              "airyai": "mpfr_ai"}
"""The one-argument functions of generated code and their MPFR counterparts (the context's
``namespace``: the same MPFR functions, through gmpy2; sin and cos the runtime's
``mpvi_sin`` and ``mpvi_cos``, MPFR's values by Arb where it decides them,
``mpvi_trig.h``)."""
_NAN_UNLESS_POSITIVE = {"loggamma": "mpfr_lngamma({out}, {x}, MPFR_RNDN)",
                        "bessely": "mpfr_yn({out}, {n}L, {x}, MPFR_RNDN)"}
"""Functions of generated code that are nan for x <= 0 (the context's loggamma, and bessely
of an integer order), with their MPFR call elsewhere."""
_PERIODIC = {"sin", "cos", "tan"}
"""Functions that return nan for |x| >= 2^prec, as the context's (``Context._periodic``)."""
_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}


class Unsupported(ValueError):
    """A construct of the generated source that the translator does not know."""


_TWO_ARGUMENTS = ("atan2", "heaviside", "besselj", "bessely", "polygamma")
"""Functions of generated code translated with two arguments."""

_USER_NAMES = {"lambertw": "LambertW", "ei": "Ei", "si": "Si", "ci": "Ci", "shi": "Shi",
               "chi": "Chi", "ellipk": "elliptic_k", "ellipe": "elliptic_e",
               "ellipf": "elliptic_f", "heaviside": "Heaviside", "airyai": "airyai",
               "zetaderiv": "the derivative of zeta", "diracdelta": "DiracDelta",
               "fabs": "Abs", "ceil": "ceiling"}
"""The sympy names of the functions of generated code whose printed names differ (the
others are the same), for the messages."""


def _user_name(name: str) -> str:
    """The sympy name of the generated code's function ``name`` (:data:`_USER_NAMES`)."""
    return _USER_NAMES.get(name, name)


def _literal_int(node) -> int | None:
    """The integer a literal ``node`` is (``3``, ``-3``), or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        n = _literal_int(node.operand)
        return None if n is None else (-n if isinstance(node.op, ast.USub) else n)
    return None


PW_MAX_NUMERATOR = 2 ** 20
"""The largest |p| of an exponent p/2^m computed by roots and a power (:func:`_dyadic_exponent`);
beyond, ``mpfr_pow`` itself."""
PW_MAX_ROOTS = 8
"""The most square roots (m of p/2^m) taken for an exponent; beyond, ``mpfr_pow`` itself."""


def _dyadic_exponent(node) -> tuple[int, int] | None:
    """(p, m) if ``node`` is the exponent ``mpf(p)/mpf(2**m)`` that :mod:`mpvi.compiled.codegen`
    prints for the rational p/2^m (m >= 1, p odd, |p| <= :data:`PW_MAX_NUMERATOR`, m <=
    :data:`PW_MAX_ROOTS`): its value is exact at every precision, so x**e is x^(p/2^m)
    correctly rounded, computable by square roots (``pw_dyadic``); else None."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    parts = []
    for side in (node.left, node.right):
        if not (isinstance(side, ast.Call) and isinstance(side.func, ast.Name)
                and side.func.id == "mpf" and len(side.args) == 1 and not side.keywords):
            return None
        parts.append(_literal_int(side.args[0]))
    p, q = parts
    if p is None or q is None or q < 2 or q & (q - 1) or p % 2 == 0:
        return None
    m = q.bit_length() - 1
    if abs(p) > PW_MAX_NUMERATOR or m > PW_MAX_ROOTS:
        return None
    return p, m


def _nan_if(x: str, out: str, otherwise: str, also: str = "") -> str:
    """The C statement: ``out`` is nan if ``x`` is nan (or the C condition ``also``
    holds), else the statement ``otherwise`` -- the context's nan where MPFR would give
    a number (a function outside its domain, sign and heaviside of a nan)."""
    test = f"mpfr_nan_p({x}) || {also}" if also else f"mpfr_nan_p({x})"
    return f"if ({test}) mpfr_set_nan({out}); else {otherwise}"


def _pw_margin(p: int) -> int:
    """Bits lost by ``pw_dyadic`` at its working precision: its error is below 2|p| + 2 ulps,
    and the result's exponent may be one above the exact value's."""
    return (2 * abs(p) + 2 - 1).bit_length() + 1


class _Translator:
    """Python source of one generated function -> C statements on ``mpfr_t``.

    Every named variable is an ``mpfr_ptr``: a bare name assigned to another aliases it (as
    Python binds the same object, without rounding); every operation writes a temporary of
    the context's precision.  Integer literals are exact (``mpfr_*_si`` forms, or an exact
    64-bit temporary).  C names carry ``prefix`` (several functions share a module).

    Two rewrites keep the bits and lower the cost.  ``sin(x)`` and ``cos(x)`` of the same
    operand are one ``mpvi_sin_cos`` (both correctly rounded, as the two calls are), and
    ``x**2`` is ``mpfr_sqr``.  With ``varying`` (the argument groups that change between
    calls, e.g. Newton's unknowns), every operation that depends on none of them goes to
    :attr:`pre`, run once per Newton solve instead of at every iteration: the trigonometry
    of the step's known values, the products of table coefficients.  Python computes the
    same operations on the same operands, so the values are the same, only computed once.
    """

    def __init__(self, constants: Sequence[str], prefix: str = "", varying=None,
                 shared: dict | None = None, scope: str | None = None, values: dict | None = None,
                 stepping: tuple[int, int] | None = None):
        self.shared, self.scope = shared, scope   # values of other functions (see share())
        self.values = values or {}                # constant name -> its exact value
        self.canon: dict = {}                     # name -> canonical id of its value
        self.constants = list(constants)          # names read from the constant table
        self.prefix = prefix
        self.hoisting = varying is not None
        self.varying_groups = set(varying or ())
        self.temps = 0
        self.init: list[str] = []                 # operations on literals alone (module load)
        self.pre: list[str] = []                  # operations on the fixed arguments only
        # with ``stepping`` = (group, count): the first ``count`` members of that argument
        # group change from one step of a run to the next, the other fixed arguments stay
        # through the run; operations on those alone go to ``steady`` (run once per run
        # of steps), the rest of the fixed ones to ``pre`` (once per step)
        self.stepping_spec = stepping
        self.steady: list[str] = []
        self.stepping: set[str] = set()           # names whose values depend on a step's inputs
        self.lines: list[str] = []                # the rest (everything without hoisting)
        self.names: set[str] = set()
        self.ints: dict = {}
        self.used: set[str] = set()
        self.int_names: dict = {}
        self.varying: set[str] = set()            # names whose values depend on a varying group
        self.fusable: set[str] = set()
        self.fused: dict = {}
        self.scalars: set[str] = set()            # the arguments that are not unpacked
        self._reads: dict = {}                    # node -> the names it reads (reads())

    def temp(self) -> str:
        self.temps += 1
        return f"{self.prefix}t[{self.temps - 1}]"

    def region(self, node) -> list:
        """Where the operations of ``node`` go: :attr:`init` (run once, when the module is
        loaded) when ``node`` reads no name at all (``mpf(-3)/mpf(2)``, the exponent of a
        rational power), :attr:`pre` when hoisting and ``node`` reads no varying name, else
        :attr:`lines`."""
        names = self.reads(node)
        if not names:
            return self.init
        if self.hoisting and not any(n in self.varying for n in names):
            if self.stepping_spec is not None and not any(n in self.stepping for n in names):
                return self.steady
            return self.pre
        return self.lines

    def reads(self, node) -> frozenset:
        """The names ``node`` reads (a called function's name aside), found once per node
        of the tree (a walk of the subtree at every operation would be quadratic in the
        depth of an expression)."""
        memo = self._reads
        if node in memo:
            return memo[node]
        stack = [(node, False)]                   # post-order, without recursion
        while stack:
            n, children_done = stack.pop()
            if n in memo:
                continue
            skip = n.func if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) else None
            kids = [c for c in ast.iter_child_nodes(n) if c is not skip]
            if isinstance(n, ast.Name):
                memo[n] = frozenset((n.id,))
            elif children_done:
                memo[n] = frozenset().union(*(memo[c] for c in kids))
            else:
                stack.append((n, True))
                stack.extend((c, False) for c in kids if c not in memo)
        return memo[node]

    def value(self, node) -> tuple[str, Any]:
        """``("mpfr", c_expression)`` for an mpfr operand, ``("int", n)`` for an integer."""
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return "int", node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            kind, v = self.value(node.operand)
            if kind == "int":
                return "int", -v
            out = self.temp()
            self.region(node).append(f"mpfr_neg({out}, {v}, MPFR_RNDN);")
            return "mpfr", out
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
            return self.value(node.operand)
        if isinstance(node, ast.Name):
            if node.id in self.int_names:         # a name bound to an int stays an int
                return "int", self.int_names[node.id]
            if node.id in self.names:
                self.used.add(node.id)
                return "mpfr", f"{self.prefix}v_{node.id}"
            if node.id in self.constants:
                return "mpfr", f"{self.prefix}k[{self.constants.index(node.id)}]"
            raise Unsupported(f"unknown name {node.id!r}")
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise Unsupported(f"{type(node).__name__} ({ast.unparse(node)[:60]})")

    def mpfr(self, node) -> str:
        """An mpfr operand for ``node`` (an integer is converted exactly)."""
        kind, v = self.value(node)
        if kind == "mpfr":
            return v
        return self.exact_int(v)

    def exact_int(self, n: int) -> str:
        """An integer operand as an exact 64-bit constant, set once when the module loads."""
        if not -2 ** 63 < n < 2 ** 63:
            raise Unsupported(f"the integer {n} has more than 64 bits")
        if n not in self.ints:
            self.ints[n] = f"{self.prefix}z[{len(self.ints)}]"
        return self.ints[n]

    def binop(self, node) -> tuple[str, Any]:
        lk, lv = self.value(node.left)
        rk, rv = self.value(node.right)
        if lk == "int" and rk == "int":
            raise Unsupported(f"integer arithmetic {ast.unparse(node)!r} (Python would not "
                              "round it)")
        out, emit = self.temp(), self.region(node).append
        if isinstance(node.op, ast.Pow):
            dyadic = _dyadic_exponent(node.right)
            if lk == "mpfr" and dyadic is not None:    # x**(mpf(-3)/mpf(2)): one mpfr_pow
                p, m = dyadic
                emit(f"pw_dyadic({out}, {lv}, {rv}, {p}L, {m}, {_pw_margin(p)});")
            elif rk == "int" and rv == 2:
                emit(f"mpfr_sqr({out}, {lv}, MPFR_RNDN);")
            elif rk == "int":
                emit(f"mpfr_pow_si({out}, {lv}, {rv}L, MPFR_RNDN);")
            elif lk == "int":
                emit(f"mpfr_pow({out}, {self.exact_int(lv)}, {rv}, MPFR_RNDN);")
            else:
                emit(f"mpfr_pow({out}, {lv}, {rv}, MPFR_RNDN);")
            return "mpfr", out
        op = _BINARY.get(type(node.op))
        if op is None:
            raise Unsupported(f"operator {type(node.op).__name__}")
        scale, x = (self.power_of_two(node.right), lv) if lk == "mpfr" else (None, None)
        if scale is None and op == "mul" and rk == "mpfr":
            scale, x = self.power_of_two(node.left), rv
        if op in ("mul", "div") and scale is not None:
            sign, e = scale                       # x * (+-2^e), x / (+-2^e): x scaled, exactly
            emit(f"mpfr_mul_2si({out}, {x}, {e if op == 'mul' else -e}L, MPFR_RNDN);")
            if sign < 0:
                emit(f"mpfr_neg({out}, {out}, MPFR_RNDN);")
        elif rk == "int" and -2 ** 62 < rv < 2 ** 62:
            emit(f"mpfr_{op}_si({out}, {lv}, {rv}L, MPFR_RNDN);")
        elif lk == "int" and -2 ** 62 < lv < 2 ** 62:
            if op in ("add", "mul"):
                emit(f"mpfr_{op}_si({out}, {rv}, {lv}L, MPFR_RNDN);")
            else:
                emit(f"mpfr_si_{op}({out}, {lv}L, {rv}, MPFR_RNDN);")
        else:
            a = lv if lk == "mpfr" else self.exact_int(lv)
            b = rv if rk == "mpfr" else self.exact_int(rv)
            emit(f"mpfr_{op}({out}, {a}, {b}, MPFR_RNDN);")
        return "mpfr", out

    def power_of_two(self, node) -> tuple[int, int] | None:
        """(sign, e) if ``node`` is +-2^e: an integer literal (e >= 1) or a constant of the
        table whose exact value is one (``_r0`` = 1/2); else None.  x * 2^e is then
        ``mpfr_mul_2si``: the correctly rounded product, exactly as ``mpfr_mul`` or
        ``mpfr_mul_si`` computes it, an eighth of the time."""
        n = _literal_int(node)
        if n is not None:
            m = abs(n)
            return (1 if n > 0 else -1, m.bit_length() - 1) if m >= 2 and not m & (m - 1) else None
        if isinstance(node, ast.Name) and node.id not in self.names and node.id in self.values:
            p, q = self.values[node.id]
            m, d = abs(p), abs(q)
            if m and d and not m & (m - 1) and not d & (d - 1) and m != d:
                return 1 if (p > 0) == (q > 0) else -1, m.bit_length() - d.bit_length()
        return None

    def call(self, node) -> tuple[str, Any]:
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise Unsupported(f"call {ast.unparse(node)[:60]}")
        name, args = node.func.id, node.args
        if name in ("sin", "cos") and len(args) == 1 and ast.unparse(args[0]) in self.fusable:
            return "mpfr", self.sin_cos(node)[name]
        out, emit = self.temp(), self.region(node).append
        if name == "mpf" and len(args) == 1:
            a = args[0]
            n = _literal_int(a)
            if n is not None:                     # mpf(-3): correctly rounded, as gmpy2.mpfr
                emit(f"mpfr_set_si({out}, {n}L, MPFR_RNDN);" if -2 ** 62 < n < 2 ** 62 else
                     f'mpfr_set_str({out}, "{n}", 10, MPFR_RNDN);')
                return "mpfr", out
            if isinstance(a, ast.Constant) and isinstance(a.value, str):
                text = a.value
                if not all(ch in "0123456789.eE+-" for ch in text):
                    raise Unsupported(f"mpf({text!r})")
                emit(f'mpfr_set_str({out}, "{text}", 10, MPFR_RNDN);')
                return "mpfr", out
            raise Unsupported(f"mpf of {ast.unparse(a)[:40]}")
        if name == "atan2" and len(args) == 2:
            y, x = self.mpfr(args[0]), self.mpfr(args[1])
            emit(f"mpfr_atan2({out}, {y}, {x}, MPFR_RNDN);")
            return "mpfr", out
        if name == "sign" and len(args) == 1:
            x = self.mpfr(args[0])
            emit(_nan_if(x, out, f"mpfr_set_si({out}, mpfr_sgn({x}), MPFR_RNDN);"))
            return "mpfr", out
        if name == "heaviside" and len(args) == 2:
            x = self.mpfr(args[0])
            kind, h0 = self.value(args[1])
            at0 = (f"mpfr_set_si({out}, {h0}L, MPFR_RNDN);" if kind == "int" and abs(h0) < 2 ** 62
                   else f"mpfr_set({out}, {h0 if kind == 'mpfr' else self.exact_int(h0)}, "
                        "MPFR_RNDN);")
            emit(_nan_if(x, out, f"if (mpfr_sgn({x}) < 0) mpfr_set_zero({out}, 1); "
                                 f"else if (mpfr_sgn({x}) > 0) mpfr_set_si({out}, 1, MPFR_RNDN); "
                                 f"else {at0}"))
            return "mpfr", out
        if name in ("diracdelta", "diraccomb", "besselj", "bessely", "polygamma", "loggamma"):
            done = self.special(name, args, out, emit)
            if done is not None:
                return done
        if name in _FUNCTIONS and len(args) == 1:
            x = self.mpfr(args[0])
            call = f"{_FUNCTIONS[name]}({out}, {x}, MPFR_RNDN);"
            if name in _PERIODIC:                 # nan beyond 2^prec, as the context's
                call = _nan_if(x, out, call, f"mpfr_cmpabs({x}, limit) >= 0")
            emit(call)
            return "mpfr", out
        if name in _FUNCTIONS or name in _TWO_ARGUMENTS:
            raise Unsupported(f"{_user_name(name)} of {len(args)} arguments "
                              f"({ast.unparse(node)[:60]}) has no counterpart in MPFR")
        raise Unsupported(f"{_user_name(name)} has no counterpart in MPFR")

    def special(self, name: str, args, out: str, emit) -> tuple[str, Any] | None:
        """The distributions (nan on their support, else 0), the Bessel functions of an
        integer order, digamma and loggamma (nan for x <= 0, as the context's) into
        ``out``; None for another number of arguments."""
        if name in ("diracdelta", "diraccomb") and len(args) == 1:
            x = self.mpfr(args[0])
            support = (f"mpfr_zero_p({x})" if name == "diracdelta" else
                       f"mpfr_inf_p({x}) || mpfr_integer_p({x})")
            emit(_nan_if(x, out, f"mpfr_set_zero({out}, 1);", support))
            return "mpfr", out
        if name in ("besselj", "bessely", "polygamma") and len(args) == 2:
            kind, n = self.value(args[0])          # an integer order: gmpy2's jn, yn, digamma
            if kind != "int" or not -2 ** 31 < n < 2 ** 31 or (name == "polygamma" and n != 0):
                raise Unsupported(
                    "polygamma of an order other than 0 has no counterpart in MPFR (only "
                    "digamma)" if name == "polygamma" else
                    f"{name} of a non-integer order has no counterpart in MPFR (only integer "
                    "orders)")
            x = self.mpfr(args[1])
            if name == "besselj":
                emit(f"mpfr_jn({out}, {n}L, {x}, MPFR_RNDN);")
            elif name == "polygamma":
                emit(f"mpfr_digamma({out}, {x}, MPFR_RNDN);")
            else:
                emit(_nan_if(x, out, f"{_NAN_UNLESS_POSITIVE[name].format(out=out, n=n, x=x)};",
                             f"mpfr_sgn({x}) <= 0"))
            return "mpfr", out
        if name == "loggamma" and len(args) == 1:
            x = self.mpfr(args[0])
            emit(_nan_if(x, out, f"{_NAN_UNLESS_POSITIVE[name].format(out=out, x=x)};",
                         f"mpfr_sgn({x}) <= 0"))
            return "mpfr", out
        return None

    def key(self, node) -> str:
        """The value of ``node`` as text independent of the function's own names: a
        name bound in the function by the canonical id of its value, a constant by its
        exact value (two functions' ``_r0`` may be different rationals)."""
        def token(name):
            if name in self.canon:
                return self.canon[name]
            if name in self.values:
                return f"={self.values[name]}"
            return name                           # an argument: the same in every function
        tree = ast.parse(ast.unparse(node), mode="eval")
        for m in ast.walk(tree):
            if isinstance(m, ast.Name):
                m.id = token(m.id)
        return ast.unparse(tree)

    def share(self, node, region) -> tuple[str, str | None]:
        """(key, C operand) of ``node`` in the shared table of a Newton module: operations on
        the fixed arguments (:attr:`pre`, run once for every function of the module) are
        shared by all its functions; with a ``scope``, operations on the unknowns are shared
        by the functions evaluated at the same point (the residual and the outputs of the
        converged step).  None when not computed yet (or nothing is shared)."""
        if self.shared is None or region is self.init:
            return "", None
        scope = "pre" if region is self.pre or region is self.steady else self.scope
        if scope is None:
            return "", None
        ids = self.shared.setdefault("#ids", {})   # keys interned: they stay short
        key = f"{scope}:{self.key(node)}"
        key = f"{scope}#{ids.setdefault(key, len(ids))}"
        return key, self.shared.get(key)

    def sin_cos(self, node) -> dict:
        """{"sin": temp, "cos": temp} of the operand of ``node``: one ``mpvi_sin_cos`` at its
        first use (nan beyond 2^prec, as the context's sin and cos)."""
        key = ast.unparse(node.args[0])
        region = self.region(node)
        skey, _ = self.share(node.args[0], region)
        if key not in self.fused and skey and f"sincos:{skey}" in self.shared:
            self.fused[key] = self.shared[f"sincos:{skey}"]
        if key not in self.fused:
            x = self.mpfr(node.args[0])
            s, c = self.temp(), self.temp()
            self.region(node).append(
                f"if (mpfr_nan_p({x}) || mpfr_cmpabs({x}, limit) >= 0) {{ mpfr_set_nan({s}); "
                f"mpfr_set_nan({c}); }} else mpvi_sin_cos({s}, {c}, {x}, MPFR_RNDN);")
            self.fused[key] = {"sin": s, "cos": c}
            if skey:
                self.shared[f"sincos:{skey}"] = self.fused[key]
        return self.fused[key]

    def function(self, source: str) -> dict:
        """Translate the source of ``def name(_a0, ...): ...; return [...]``."""
        tree = ast.parse(source)
        (fn,) = tree.body
        if not isinstance(fn, ast.FunctionDef):
            raise Unsupported("not a function")
        groups = [a.arg for a in fn.args.args]
        unpack: dict = {}
        body, returns = fn.body[:-1], fn.body[-1]
        if not (isinstance(returns, ast.Return) and isinstance(returns.value, ast.List)):
            raise Unsupported("the function does not end in `return [...]`")
        targets = [t.id for stmt in body if isinstance(stmt, ast.Assign)
                   for t in stmt.targets if isinstance(t, ast.Name)]
        if len(targets) == len(set(targets)):     # each name bound once: an operand's text
            calls = [(c.func.id, ast.unparse(c.args[0])) for c in ast.walk(tree)  # is its value
                     if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                     and c.func.id in ("sin", "cos") and len(c.args) == 1]
            self.fusable = ({a for f, a in calls if f == "sin"}
                            & {a for f, a in calls if f == "cos"})
        unpacked = {stmt.value.id for stmt in body if isinstance(stmt, ast.Assign)
                    and isinstance(stmt.value, ast.Name) and stmt.value.id in groups}
        self.scalars = {g for g in groups if g not in unpacked}
        self.names.update(self.scalars)                               # scalar arguments
        self.varying.update(groups[i] for i in self.varying_groups if i < len(groups))
        stepping_group = None
        if self.stepping_spec is not None and self.stepping_spec[0] < len(groups):
            stepping_group = groups[self.stepping_spec[0]]
            self.stepping.add(stepping_group)     # the group read whole
        for stmt in body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                raise Unsupported(f"statement {ast.unparse(stmt)[:60]}")
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.List) and isinstance(value, ast.Name) \
                    and value.id in groups:
                unpack[value.id] = [t.id for t in target.elts]
                self.names.update(t.id for t in target.elts)
                if value.id in self.varying:
                    self.varying.update(t.id for t in target.elts)
                if value.id == stepping_group:
                    self.stepping.update(t.id for t in target.elts[:self.stepping_spec[1]])
                continue
            if not isinstance(target, ast.Name):
                raise Unsupported(f"assignment to {ast.unparse(target)}")
            region = self.region(value)
            if region is self.init:               # a literal's value, bound where it is used
                region = self.lines if not self.hoisting else (
                    self.pre if self.stepping_spec is None else self.steady)
            if region is self.lines:
                self.varying.add(target.id)
            elif region is self.pre and self.stepping_spec is not None:
                self.stepping.add(target.id)
            skey, known = self.share(value, region)
            if known is not None:                 # the same value, computed by another function
                self.canon[target.id] = skey
                region.append(f"{self.prefix}v_{target.id} = {known};")
                self.names.add(target.id)
                continue
            kind, v = self.value(value)
            if kind == "int":                     # Python keeps an int: so do we
                self.int_names[target.id] = v
                continue
            self.int_names.pop(target.id, None)
            region.append(f"{self.prefix}v_{target.id} = {v};")
            self.names.add(target.id)
            if skey:
                self.canon[target.id] = skey
                self.shared.setdefault(skey, v)
        results = []
        for e in returns.value.elts:              # an int result is returned as an int,
            kind, v = self.value(e)               # as the Python function returns it
            results.append(("int", v) if kind == "int" else ("mpfr", v))
        return {"groups": groups, "unpack": unpack, "results": results}
