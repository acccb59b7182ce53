"""Taylor-series steps on a mechanical system's equations of motion, by automatic
differentiation in Taylor mode (Jorba & Zou, *Experimental Mathematics* 14 (2005) 99-117;
Moore, *Interval Analysis*, 1966), with a fixed step or Jorba & Zou's adaptive one.

The field of an M, V system is y' = f(t, y) on y = (q, p), the same generated code as the
field of RK4 and GBS (:func:`mpvi.engines.kernels.hamiltonian_field`): up to three degrees of
freedom one function returning v = adj(M) p / det M and p' = dL/dq(q, v) + F(t, q, v);
beyond, M(q) and the force, with v from M v = p.  A system given by a general Lagrangian
is integrated on y = (q, v) with its equations of motion q' = v, L_vv v' = L_q + F -
L_vq v - L_vt (one generated function returning L_vv and the right-hand side; v' from the
linear solve below).  :func:`build_tape` turns that code into a *tape*: elementary
operations on Taylor series in the time offset tau, each series truncated at a runtime
order.  One step of order P from (t, y) computes the Taylor coefficients y_0 = y,
y_{k+1} = f_k / (k + 1), k = 0 .. P - 1 (f_k the k-th coefficient of f(t + tau, y(t +
tau)), which needs y_0 .. y_k only), and sums y(t + h) = sum_k y_k h^k by Horner's rule.
Local error O(h^(P+1)), order P; every coefficient is exact rational arithmetic on the
field's values, so the method runs at any precision.

**The adaptive step** (:meth:`TaylorEvaluator.adaptive`; Jorba & Zou 2005, Sec. 3.2, the
rule of heyoka.py) crosses [t, t + h] in as many substeps as the solution needs.  From the
last two coefficients of a substep of order P it estimates the radius of convergence of
the solution in complex time,

    rho = min over k in {P - 1, P} of (s / |y_k|_inf)^(1/k),   s = max(1, |y_0|_inf)

(absolute error control while the state is below 1, relative beyond), and takes the
substep tau = rho tol^(1/P) exp(-0.7 / (P - 1)): the first neglected term s (tau /
rho)^(P+1) is then below s tol.  The order that makes a unit of time cheapest for a
tolerance tol is P = ceil(-ln(tol) / 2 + 1) (:func:`jorba_zou_order`; then tol^(1/P) is
about e^-2).  The last substep is cut to land exactly on t + h.  A substep that no longer
moves the time (the solution runs into a singularity) raises :class:`StepSizeCollapse`.

**The tiers** (:func:`precision_schedule`).  In an adaptive substep the k-th term y_k tau^k
is about s (tau / rho)^k = s ``factor``^k, so order k needs the context's relative accuracy
times ``factor``^-k only: in a context that allows it (the gmp context: ``ctx.tiers``) order
k is computed at prec + 24 - k log2(1 / factor) bits, raised to the next tier of 64 m - 1
bits (where MPFR's operations on numbers of equal precision take their fast paths), each
coefficient kept as computed for the substep and rounded into the tiers below for the
later orders.  At 64 digits and tol 1e-57 the 68 orders are 18 at 216 bits, 22 at 191,
23 at 127 and 5 at 63 (at 128 digits, 142 orders from 429 bits down to 63); the sums of
products, most of a substep, cost about half.  The assumption is checked once the
substep size is known (:func:`mpvi.numbers.series.series_tiers_hold`: sum_k |y_k| tau^k
2^-p_k at most 2^-8 eps s); where it fails (the lower orders above the envelope the last
two imply: an entire solution), the substep and the rest of the step are computed at the
context's precision, and the run takes its next steps without tiers
(:data:`mpvi.methods.taylor.TIER_PAUSE`).

The recurrences (c = a op b; a_k the k-th coefficient; sums from j = 1 unless stated):

* a +- b, -a, a * fixed: coefficient by coefficient;
* a * b: c_k = sum_{j=0..k} a_j b_{k-j};  a^2: the same sum folded (2 sum_{j<k/2} + the
  middle square);
* a / b: c_k = (a_k - sum_{j=1..k} b_j c_{k-j}) / b_0;
* sin, cos of a (one pair): s_k = sum j a_j c_{k-j} / k,  c_k = -sum j a_j s_{k-j} / k;
* exp a: e_k = sum j a_j e_{k-j} / k;  log a: l_k = (a_k - sum_{j<k} j l_j a_{k-j} / k) / a_0;
* sqrt a: r_k = (a_k - sum_{j=1..k-1} r_j r_{k-j}) / (2 r_0);
* a^alpha (alpha fixed): c_k = sum (alpha j - (k - j)) a_j c_{k-j} / (k a_0), summed as
  ((alpha + 1) sum j a_j c_{k-j} - k sum a_j c_{k-j}) / (k a_0);
  integer powers of a series by products, negative ones by a division;
* x from M x = b (v from M v = p beyond three degrees of freedom; v' from L_vv v' = r):
  M_0 x_k = b_k - sum_{j=1..k} M_j x_{k-j} by :func:`mpvi.numbers.linalg.solve_dense`.

Each sum of products is rounded once (:func:`mpvi.numbers.series.series_dot`: the exact
sum rounded to nearest, not a rounding per product and per addition); in the compiled
modules the products of the significands are accumulated exactly in GMP limbs, about
twice as fast as MPFR's multiplication and addition per term.

Operations on the parameters and constants alone are done once per step.  The Python
evaluation here and the compiled one (:func:`mpvi.compiled.cbackend.translate_taylor`) run the same
operations in the same order, the adaptive rule included, so they give the same bits.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from mpvi.numbers.linalg import solve_dense
from mpvi.numbers.series import (series_adaptive, series_div, series_exp, series_horner,
                                 series_log, series_mul, series_powc, series_sincos,
                                 series_solve_row, series_sqr, series_sqrt)
from mpvi.model.singular import SingularityCrossed


class TaylorUnsupported(ValueError):
    """The field uses an operation without a Taylor recurrence here (a function other than
    sin, cos, exp, log, sqrt; a power of a series with a varying exponent; ...).  The
    message names it.  A ``ValueError``."""


class StepSizeCollapse(SingularityCrossed):
    """An adaptive Taylor step that cannot be completed: a substep too small to move the
    time (the estimated radius of convergence of the solution vanishes there: it runs into
    a singularity, a collision, a pole of the field), or, at the pace of the substeps, more
    than :data:`MAX_SUBSTEPS` of them in one step.  :func:`mpvi.solve` reports it as
    :class:`mpvi.IntegrationError` with the step and the time."""


MAX_SUBSTEPS = 10000
"""The most adaptive substeps in one step of :func:`mpvi.solve`: a step whose remainder
would need more at the pace of the current substep is refused at once (rather than
computing for minutes), naming a smaller h."""


def substep_limit(ctx: Any, h: Any, tau: Any, hs: Any) -> StepSizeCollapse:
    """The error for a step of ``h`` that would need more than :data:`MAX_SUBSTEPS`
    substeps at the pace of the substep ``hs`` at ``tau``.

    Parameters
    ----------
    ctx : context
        The number context.
    h, tau, hs : number
        The step, the time reached, the substep there.

    Returns
    -------
    StepSizeCollapse
        The error to raise.
    """
    return StepSizeCollapse(
        f"the step h = {ctx.to_str(h, 5)} would need more than {MAX_SUBSTEPS} adaptive "
        f"Taylor substeps at the pace of the substep {ctx.to_str(hs, 3)} at t = "
        f"{ctx.to_str(tau, 10)}: the solution's radius of convergence is that small there "
        f"(near a singularity of the solution -- a collision, a pole of the field -- or "
        f"against a large h: then take a smaller h, the substeps between the nodes adapt)")


SERIES_FUNCTIONS = ("sin", "cos", "exp", "log", "sqrt")
"""The functions a series may be passed to (the others are taken on fixed values only)."""

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}


@dataclass
class Tape:
    """The field as operations on Taylor series (see the module docstring).

    Operands are ``("s", i)``, a series slot, or ``("f", i)``, a fixed slot (one value,
    constant in tau: parameters, constants, operations on them).

    Attributes
    ----------
    n : degrees of freedom (the state has 2 n components).
    nseries, nfixed : the numbers of series and fixed slots.
    time : the series slot of t + tau, or None when the field does not depend on t.
    state : the series slots of the state y: q and p (``form`` "qp") or q and v ("qv").
    fixed : instructions run once per step, in order: ``("param", d, i)``, ``("const",
        d, i)`` (the i-th of ``constants``), ``("int", d, n)``, ``("mpf", d, text)``, ``(op, d, a, b)`` for op in
        add, sub, mul, div, ``("neg", d, a)``, ``("pow_i", d, a, n)``, ``("pow", d, a, b)``,
        ``("fun", d, name, a)``.
    series : instructions run at every order k: ``(op, d, a, b)`` for add, sub, mul, div,
        ``("neg", d, a)``, ``("sqr", d, a)``, ``("sincos", s, c, a, da)``,
        ``("exp", d, a, da)``, ``("log", d, a)``, ``("sqrt", d, a)``, ``("powc", d, a,
        alpha, da)``, ``("solve", x, M, b)`` (x n series slots, M n x n operands row by row,
        b n operands: M x = b).  ``da`` is a series slot holding j a_j.
    outputs : the 2 n operands of y' = f.
    constants : the numbers of the generated functions' constant tables, in slot order
        (two functions may bind the same name to different values).
    form : "qp" (Hamilton's equations of an M, V system) or "qv" (the equations of motion
        of a general Lagrangian).
    max_substeps : the most adaptive substeps of one step (:data:`MAX_SUBSTEPS`; carried by
        the tape so that the compiled step, :func:`mpvi.compiled.cbackend.translate_taylor`, needs
        no import of this module).
    copies : the series slots whose coefficients the tiers round into the lower levels
        (the state and the slots a recurrence reads at later orders, :func:`_convolved`).
    """

    n: int
    nseries: int
    nfixed: int
    time: int | None
    state: list
    fixed: list = field(default_factory=list)
    series: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    constants: list = field(default_factory=list)
    form: str = "qp"
    max_substeps: int = MAX_SUBSTEPS
    copies: list = field(default_factory=list)


class _Builder:
    """Generated Python source (from :func:`mpvi.compiled.codegen.generate_source`) -> tape
    instructions, operation by operation in Python's evaluation order."""

    def __init__(self):
        self.nseries = 0
        self.nfixed = 0
        self.fixed: list = []
        self.series: list = []
        self.ints: dict = {}
        self.constants: list = []

    def new_series(self) -> tuple:
        self.nseries += 1
        return ("s", self.nseries - 1)

    def new_fixed(self) -> tuple:
        self.nfixed += 1
        return ("f", self.nfixed - 1)

    def int_slot(self, v: int) -> tuple:
        if v not in self.ints:
            d = self.new_fixed()
            self.fixed.append(("int", d, v))
            self.ints[v] = d
        return self.ints[v]

    def function(self, source: str, args: Sequence, table: dict) -> list:
        """The operands of the results of ``source``; ``args``: per argument group, a list
        of operands (or one operand for a scalar group)."""
        (fn,) = ast.parse(source).body
        groups = [a.arg for a in fn.args.args]
        env = {}
        for g, a in zip(groups, args):
            env[g] = a
        for name, value in table.items():
            d = self.new_fixed()
            self.fixed.append(("const", d, len(self.constants)))
            self.constants.append(value)
            env[name] = d
        *body, ret = fn.body
        for stmt in body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                raise TaylorUnsupported(f"statement {ast.unparse(stmt)[:60]}")
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.List):
                vals = env[value.id]
                if len(vals) != len(target.elts):
                    raise TaylorUnsupported(f"unpacking {ast.unparse(stmt)[:60]}")
                env.update({t.id: v for t, v in zip(target.elts, vals)})
                continue
            env[target.id] = self.value(value, env)
        if not (isinstance(ret, ast.Return) and isinstance(ret.value, ast.List)):
            raise TaylorUnsupported("the function does not end in `return [...]`")
        return [self.operand(self.value(e, env)) for e in ret.value.elts]

    def operand(self, v) -> tuple:
        """An operand for a value: integers become exact fixed slots."""
        return self.int_slot(v) if isinstance(v, int) else v

    def value(self, node, env):
        """An operand (tuple) or a Python int for ``node``."""
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise TaylorUnsupported(f"unknown name {node.id!r}")
            return env[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
            return self.value(node.operand, env)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            a = self.value(node.operand, env)
            return -a if isinstance(a, int) else self.emit("neg", a)
        if isinstance(node, ast.BinOp):
            a, b = self.value(node.left, env), self.value(node.right, env)
            if isinstance(a, int) and isinstance(b, int):
                raise TaylorUnsupported(f"integer arithmetic {ast.unparse(node)!r}")
            if isinstance(node.op, ast.Pow):
                return self.power(a, b, node)
            op = _BINARY.get(type(node.op))
            if op is None:
                raise TaylorUnsupported(f"operator {type(node.op).__name__}")
            return self.emit(op, self.operand(a), self.operand(b))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and not node.keywords and len(node.args) == 1:
            name = node.func.id
            if name == "mpf":
                arg = node.args[0]
                sign = 1
                if (isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.USub)
                        and isinstance(arg.operand, ast.Constant)
                        and type(arg.operand.value) is int):   # mpf(-3): a negative integer
                    arg, sign = arg.operand, -1
                if not (isinstance(arg, ast.Constant) and isinstance(arg.value, (int, str))):
                    raise TaylorUnsupported(f"mpf of {ast.unparse(arg)[:40]}")
                d = self.new_fixed()
                self.fixed.append(("mpf", d, -arg.value if sign < 0 else arg.value))
                return d
            a = self.operand(self.value(node.args[0], env))
            if a[0] == "f":
                d = self.new_fixed()
                self.fixed.append(("fun", d, name, a))
                return d
            if name not in SERIES_FUNCTIONS:
                raise TaylorUnsupported(
                    f"{name}() of a varying quantity: Taylor recurrences exist here for "
                    f"{', '.join(SERIES_FUNCTIONS)} only")
            return self.function_of_series(name, a)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            raise TaylorUnsupported(
                f"{node.func.id}() of {len(node.args)} arguments ({ast.unparse(node)[:60]}): "
                f"Taylor recurrences exist here for {', '.join(SERIES_FUNCTIONS)} only")
        raise TaylorUnsupported(f"{type(node).__name__} ({ast.unparse(node)[:60]})")

    def emit(self, op: str, *operands) -> tuple:
        if all(o[0] == "f" for o in operands):
            d = self.new_fixed()
            self.fixed.append((op, d, *operands))
        else:
            d = self.new_series()
            self.series.append((op, d, *operands))
        return d

    def power(self, a, b, node) -> tuple:
        if isinstance(b, int):
            a = self.operand(a)
            if a[0] == "f":
                d = self.new_fixed()
                self.fixed.append(("pow_i", d, a, b))
                return d
            if b == 0:
                return self.int_slot(1)
            result = self.integer_power(a, abs(b))
            return self.emit("div", self.int_slot(1), result) if b < 0 else result
        a = self.operand(a)
        if b[0] == "s":
            raise TaylorUnsupported(f"a power with a varying exponent ({ast.unparse(node)[:60]})")
        if a[0] == "f":
            d = self.new_fixed()
            self.fixed.append(("pow", d, a, b))
            return d
        d = self.new_series()
        self.series.append(("powc", d, a, b, self.new_series()))
        return d

    def integer_power(self, a: tuple, e: int) -> tuple:
        """a^e (e >= 1) of a series by squarings and products, the bits of e from the top."""
        result = a
        for bit in bin(e)[3:]:
            result = self.emit("sqr", result)
            if bit == "1":
                result = self.emit("mul", result, a)
        return result

    def function_of_series(self, name: str, a: tuple) -> tuple:
        if name in ("sin", "cos"):
            for ins in self.series:                  # one pair per argument
                if ins[0] == "sincos" and ins[3] == a:
                    return ins[1] if name == "sin" else ins[2]
            s, c, da = self.new_series(), self.new_series(), self.new_series()
            self.series.append(("sincos", s, c, a, da))
            return s if name == "sin" else c
        d = self.new_series()
        if name == "exp":
            self.series.append(("exp", d, a, self.new_series()))
        else:
            self.series.append((name, d, a))
        return d


def build_tape(sources: Sequence[str], tables: Sequence[dict], n: int, npar: int,
               form: str = "qp") -> Tape:
    """The tape of a mechanical system's equations of motion from generated sources.

    Parameters
    ----------
    sources : sequence of str
        ``form`` "qp": the sources of :func:`mpvi.engines.kernels._field_parts`,
        ``hamiltonian_field(t, q, p, params)`` returning [det M, M, v, p'], or ``M(q,
        params)`` and ``force(t, q, v, params)``; ``form`` "qv": one source
        ``motion(t, q, v, params)`` returning [L_vv row by row, r] with L_vv v' = r.
    tables : sequence of dict
        Their constant tables.
    n, npar : int
        Degrees of freedom, number of parameters.
    form : {"qp", "qv"}
        The state: (q, p) or (q, v).

    Returns
    -------
    Tape

    Raises
    ------
    TaylorUnsupported
        An operation without a recurrence here (the message names it).
    """
    b = _Builder()
    time = b.new_series()
    q = [b.new_series() for _ in range(n)]
    p = [b.new_series() for _ in range(n)]          # p, or v for the "qv" form
    params = []
    for i in range(npar):
        d = b.new_fixed()
        b.fixed.append(("param", d, i))
        params.append(d)
    if form == "qv":
        if len(sources) != 1:
            raise TaylorUnsupported(f"equations of motion of {len(sources)} functions")
        out = b.function(sources[0], [[time], q, p, params], tables[0])
        if len(out) != n * n + n:
            raise TaylorUnsupported(f"equations of motion of {n} degrees of freedom return "
                                    f"{len(out)} values")
        a = [b.new_series() for _ in range(n)]
        b.series.append(("solve", a, out[:n * n], out[n * n:]))
        outputs = p + a
    elif form != "qp":
        raise ValueError(f"a tape's form is 'qp' or 'qv', not {form!r}")
    elif len(sources) == 1:
        out = b.function(sources[0], [[time], q, p, params], tables[0])
        if len(out) != 1 + n * n + 2 * n:
            raise TaylorUnsupported(f"a Hamiltonian field of {n} degrees of freedom returns "
                                    f"{len(out)} values")
        outputs = out[1 + n * n:]
    elif len(sources) == 2:
        M = b.function(sources[0], [q, params], tables[0])
        v = [b.new_series() for _ in range(n)]
        b.series.append(("solve", v, M, p))
        outputs = v + b.function(sources[1], [[time], q, v, params], tables[1])
    else:
        raise TaylorUnsupported(f"a Hamiltonian field of {len(sources)} functions")
    outputs = _simplify(b, outputs)
    used = time in outputs or any(time in operands(ins) for ins in b.series)
    state = [s[1] for s in q + p]
    return Tape(n=n, nseries=b.nseries, nfixed=b.nfixed, time=time[1] if used else None,
                state=state, fixed=b.fixed, series=b.series,
                outputs=outputs, constants=b.constants, form=form,
                copies=sorted(set(state) | _convolved(b.series)))


def _convolved(series: list) -> set:
    """The series slots whose lower coefficients a recurrence reads at a later order: the
    ones the tiers round into the levels below (:meth:`TaylorEvaluator._tiered`).  A sum,
    a negation or a product by a constant reads the k-th coefficient at order k only;
    the others read (:mod:`mpvi.numbers.series`): a product both series, a square its
    operand, a quotient the divisor and itself, sin/cos themselves and j a_j, exp itself
    and j a_j, log itself and its operand, sqrt itself, a power itself, its operand and
    j a_j, a solve the matrix's series and the unknowns."""
    out = set()
    for ins in series:
        op = ins[0]
        if op == "mul" and ins[2][0] == "s" and ins[3][0] == "s":
            found = [ins[2], ins[3]]
        elif op == "sqr":
            found = [ins[2]]
        elif op == "div" and ins[3][0] == "s":
            found = [ins[1], ins[3]]
        elif op == "sincos":
            found = [ins[1], ins[2], ins[4]]
        elif op == "exp":
            found = [ins[1], ins[3]]
        elif op == "log":
            found = [ins[1], ins[2]]
        elif op == "sqrt":
            found = [ins[1]]
        elif op == "powc":
            found = [ins[1], ins[2], ins[4]]
        elif op == "solve":
            found = list(ins[1]) + list(ins[2])
        else:
            found = []
        out.update(o[1] for o in found if o[0] == "s")
    return out


def _writes(ins) -> list:
    """The series slots an instruction sets."""
    op = ins[0]
    if op == "solve":
        return list(ins[1])
    if op == "sincos":
        return [ins[1], ins[2], ins[4]]
    if op in ("exp", "powc"):
        return [ins[1], ins[-1]]
    return [ins[1]]


def _reads(ins) -> list:
    """The operands an instruction reads (its own j a_j series aside)."""
    op = ins[0]
    if op == "solve":
        return list(ins[2]) + list(ins[3])
    if op in ("sincos", "exp"):
        return [ins[3] if op == "sincos" else ins[2]]
    if op == "powc":
        return [ins[2], ins[3]]
    return [x for x in ins[2:] if isinstance(x, tuple)]


def _linear_key(form: dict) -> tuple:
    """(the linear form made canonical -- its terms sorted, the first coefficient positive
    -- , the sign that gives it back)."""
    terms = tuple(sorted((a, c) for a, c in form.items() if c != 0))
    sign = 1 if not terms or terms[0][1] > 0 else -1
    return tuple((a, c * sign) for a, c in terms), sign


def _simplify(b: "_Builder", outputs: list) -> list:
    """Rewrite the series instructions of ``b`` so that each product of two series, each
    square and each quotient of a constant by a power is computed once and cheaply, the
    generated field being written as a sympy expression prints: the forces of the N-body
    problem say (x_i - x_j) r_ij^-3 for body i and (x_j - x_i) r_ij^-3 for body j, and
    G m_i m_j / (r_ij^2)^(3/2) for the common factor.

    * Sums, differences and negations are followed as linear forms of the other slots
      (integer coefficients): two slots with the same form up to its sign are one series,
      the second a negation of the first (an operation per order instead of a product of
      series: a sum over the orders).
    * A product of two series, or a square, of operands known up to their signs is computed
      once for each pair of operands, the others its negation; any other operation
      repeated on the same operands is computed once.
    * A constant over a power a^alpha read nowhere else becomes the constant times
      a^-alpha (one recurrence instead of a power and a quotient).
    * A solve with a constant diagonal matrix (the equations of motion of L = |v|^2 / 2
      - V, of point masses) becomes a quotient by the diagonal, x_i = b_i where it is 1:
      the numbers the elimination gives, without an elimination at every order.
    * Operations whose results nothing reads are dropped.

    The tape stays the one both the Python steps and the compiled ones run.  Returns
    ``outputs`` with the slots renamed."""
    uses: dict = {}
    for ins in b.series:
        for o in _reads(ins):
            uses[o] = uses.get(o, 0) + 1
    for o in outputs:
        uses[o] = uses.get(o, 0) + 1
    defined = {}
    alias: dict = {}
    forms: dict = {}               # a slot of a sum -> its linear form
    canon: dict = {}               # canonical form -> (slot, tau): the slot is tau * form
    seen: dict = {}                # (op, operands) -> the slot computed
    targets: set = set()           # the slots others were made aliases of
    new: list = []

    def get(o):
        while o in alias:
            o = alias[o]
        return o

    def form_of(o):
        o = get(o)
        return forms.get(o, {o: 1})

    def rep(o):
        """(slot r, sign): the value of o is sign times that of r."""
        o = get(o)
        key, sign = _linear_key(form_of(o))
        if key not in canon:
            return o, 1
        r, tau = canon[key]
        return r, sign * tau

    def register(d):
        key, sign = _linear_key(form_of(d))
        if key not in canon:
            canon[key] = (d, sign)

    def product_of(d, key, ra, rb, sign):
        if key in seen:
            m = seen[key]
        else:
            m = d if sign == 1 else b.new_series()
            new.append(("mul", m, ra, rb) if key[0] == "mul" else ("sqr", m, ra))
            seen[key] = m
            register(m)
        if sign == 1:
            if m != d:
                alias[d] = m
                targets.add(m)
        else:
            new.append(("neg", d, m))
            forms[d] = {m: -1}
            register(d)

    ints = {ins[1]: ins[2] for ins in b.fixed if ins[0] == "int"}
    for ins in b.series:
        op = ins[0]
        if op == "solve":
            xs, M, rhs = ins[1], [get(o) for o in ins[2]], [get(o) for o in ins[3]]
            n = len(xs)
            if all(M[i * n + j][0] == "f" and (i == j or ints.get(M[i * n + j]) == 0)
                   for i in range(n) for j in range(n)):
                for i in range(n):           # a constant diagonal M: x_i = b_i / M_ii, the
                    mii = M[i * n + i]       # elimination's own rounding (x_i = b_i at 1)
                    if ints.get(mii) == 1 and rhs[i][0] == "s":
                        alias[xs[i]] = rhs[i]
                        targets.add(rhs[i])
                    else:
                        new.append(("div", xs[i], rhs[i], mii))
                continue
            new.append(("solve", xs, M, rhs))
            continue
        d = ins[1]
        args = [get(x) if isinstance(x, tuple) else x for x in ins[2:]]
        if op in ("add", "sub", "neg"):
            fa = form_of(args[0])
            if op == "neg":
                f = {a: -c for a, c in fa.items()}
            else:
                f = dict(fa)
                for a, c in form_of(args[1]).items():
                    f[a] = f.get(a, 0) + (c if op == "add" else -c)
            key, sign = _linear_key(f)
            if key in canon and canon[key][1] == sign:
                alias[d] = canon[key][0]
                targets.add(alias[d])
                continue
            new.append((op, d, *args))
            forms[d] = {a: c for a, c in f.items() if c != 0}
            register(d)
            continue
        if op == "mul" and args[0][0] == "s" and args[1][0] == "s":
            (ra, sa), (rb, sb) = rep(args[0]), rep(args[1])
            ra, rb = min(ra, rb), max(ra, rb)
            product_of(d, ("mul", ra, rb), ra, rb, sa * sb)
            continue
        if op == "sqr":
            ra, _ = rep(args[0])
            product_of(d, ("sqr", ra), ra, ra, 1)
            continue
        if op == "div" and args[0][0] == "f" and args[1][0] == "s" and uses.get(args[1]) == 1 \
                and args[1] not in targets and defined.get(args[1], ("",))[0] == "powc":
            power = defined[args[1]]
            new.remove(power)
            minus = b.new_fixed()
            b.fixed.append(("neg", minus, power[3]))
            inverse = b.new_series()
            new.append(("powc", inverse, power[2], minus, power[4]))
            new.append(("mul", d, args[0], inverse))
            continue
        if op == "sincos":                # (s, c, a, da): one pair per argument
            key = (op, args[1])
        elif op == "exp":                 # (d, a, da)
            key = (op, args[0])
        elif op == "powc":                # (d, a, alpha, da)
            key = (op, args[0], args[1])
        else:
            key = (op, *args)
        if key in seen:
            if op == "sincos":
                s0, c0 = seen[key]
                alias[ins[1]], alias[ins[2]] = s0, c0
                targets.update((s0, c0))
            else:
                alias[d] = seen[key]
                targets.add(seen[key])
            continue
        seen[key] = (ins[1], ins[2]) if op == "sincos" else d
        rebuilt = (op, d, *args)
        defined[d] = rebuilt
        new.append(rebuilt)
    outputs = [get(o) for o in outputs]
    live = set(outputs)
    kept = []
    for ins in reversed(new):
        if ins[0] == "solve" or any(w in live for w in _writes(ins)):
            kept.append(ins)
            live.update(o for o in _reads(ins) if o[0] == "s")
    b.series[:] = kept[::-1]
    return outputs


def operands(ins) -> list:
    """Every operand an instruction reads or writes (the slots of a solve included)."""
    out = []
    for x in ins[1:]:
        if isinstance(x, tuple):
            out.append(x)
        elif isinstance(x, list):
            out.extend(x)
    return out


def jorba_zou_order(tol: Any, ctx: Any, rate: int = 2) -> int:
    """The Taylor order for a tolerance: P = ceil(-ln(tol) / 2 + 1), the order that makes
    a unit of time cheapest (Jorba & Zou 2005, Sec. 3.2; heyoka.py's rule).

    Parameters
    ----------
    tol : number
        The tolerance, a context number in (0, 1).
    ctx : context
        Its number context.
    rate : int, default 2
        P = ceil(-ln(tol) / rate + 1) in general: the order whose substeps are about
        e^-rate of the radius of convergence.

    Returns
    -------
    int
        The order (at least 2): 34 at tol = 1e-28, 75 at 1e-64, 149 at 1e-128; 76 at
        the eps of 64 digits (1.9e-65), heyoka.py's order there.
    """
    from mpvi.numbers.context import floor
    x = 1 - ctx.log(tol) / rate
    return max(2, -floor(-x))


def step_factor(order: int, tol: Any, ctx: Any) -> Any:
    """tol^(1/P) exp(-7 / (10 (P - 1))): the adaptive substep over the estimated radius of
    convergence (Jorba & Zou 2005, Sec. 3.2, with their safety factor; about e^-2
    exp(-0.7 / (P - 1)) at the order of :func:`jorba_zou_order`).

    Parameters
    ----------
    order : int
        The Taylor order P (at least 2).
    tol : number
        The tolerance, a context number in (0, 1).
    ctx : context
        Its number context.

    Returns
    -------
    number
        The factor, a context number in (0, 1).
    """
    with ctx.active():
        return tol ** (ctx.one / order) * ctx.exp(ctx.num(-7) / (10 * (order - 1)))


TIER_GUARD = 24
"""Bits above the need of the schedule (:func:`precision_schedule`): the k-th order is
computed with 2^-24 of the context's eps relative to s tol^(k/P), the size the adaptive
step gives its contribution."""

TIER_ALLOWED = 8
"""The tiered coefficients of a substep are kept where their estimated error is at most
2^-8 eps s (:func:`mpvi.numbers.series.series_tiers_hold`); else the substep and the rest
of the step are computed at the context's precision."""

LIMB_BITS = 64
"""MPFR's limb (GMP_NUMB_BITS on 64-bit machines): the tiers are 64 m - 1 bits, below a
limb boundary, where MPFR's arithmetic on operands of equal precision takes its fast
paths (mpfr_mul_1, _2, _3 and their kin)."""


def precision_schedule(prec: int, order: int, factor: Any) -> list[int]:
    """The working precision of each order k = 0 .. ``order`` of an adaptive Taylor
    substep at the context's precision ``prec`` (bits): the tiers of the recurrences.

    The adaptive step makes the k-th term of the substep about s ``factor``^k (``factor``
    = :func:`step_factor`, the substep over the radius of convergence), so order k needs
    the context's relative accuracy times ``factor``^-k only: prec + :data:`TIER_GUARD` -
    k log2(1 / factor) bits, raised to the next tier 64 m - 1 (:data:`LIMB_BITS`), or
    ``prec`` where that reaches it.  Order 0 is at ``prec``; the list does not increase.
    Where a series grows faster than the schedule assumes (the lower orders larger than
    its radius of convergence implies: an entire solution), the substep's check finds it
    (:func:`mpvi.numbers.series.series_tiers_hold`) and recomputes at ``prec``.

    Parameters
    ----------
    prec : int
        The context's precision in bits.
    order : int
        The Taylor order P.
    factor : number
        The step factor, in (0, 1).

    Returns
    -------
    list of int
        ``order + 1`` precisions in bits, from ``prec`` down.
    """
    decay = -math.log2(float(factor))
    out = []
    for k in range(order + 1):
        need = prec + TIER_GUARD - math.floor(k * decay)
        bits = prec
        if need < prec:
            bits = min(prec, LIMB_BITS * max(1, -(-(need + 1) // LIMB_BITS)) - 1)
        out.append(min(bits, out[-1]) if out else bits)
    return out


class TaylorEvaluator:
    """Taylor steps on a :class:`Tape` in a number context (Python numbers: the reference
    of the compiled steps, :func:`mpvi.compiled.cbackend.translate_taylor`): the coefficients of
    the solution through a point, one step of fixed size, and Jorba & Zou's adaptive
    substeps across a step."""

    def __init__(self, tape: Tape, ctx: Any):
        self.tape, self.ctx = tape, ctx
        self.ns = ctx.namespace()
        self._schedule: tuple = (None, None, None)     # (order, factor, schedule) last made

    def fixed_values(self, params: Sequence) -> list:
        ctx, ns = self.ctx, self.ns
        F: list = [None] * self.tape.nfixed
        for ins in self.tape.fixed:
            op, d = ins[0], ins[1][1]
            if op == "param":
                F[d] = params[ins[2]]
            elif op == "const":
                F[d] = self.tape.constants[ins[2]]
            elif op == "int":
                F[d] = ctx.num(ins[2])
            elif op == "mpf":
                F[d] = ns["mpf"](ins[2])
            elif op == "fun":
                F[d] = ns[ins[2]](F[ins[3][1]])
            elif op == "neg":
                F[d] = -F[ins[2][1]]
            elif op == "pow_i":
                F[d] = F[ins[2][1]] ** ins[3]
            else:
                a, b = F[ins[2][1]], F[ins[3][1]]
                F[d] = (a + b if op == "add" else a - b if op == "sub" else
                        a * b if op == "mul" else a / b if op == "div" else a ** b)
        return F

    def coefficients(self, t, y: Sequence, order: int, params: Sequence, fixed=None) -> list:
        """The Taylor coefficients y_0 .. y_order of the solution through (t, y), as a
        list of ``order + 1`` lists of 2 n numbers (``fixed``: the values of
        :meth:`fixed_values`, if already computed)."""
        F = self.fixed_values(params) if fixed is None else fixed
        S = self._storage(order)
        self._series(t, y, order, F, S)
        return [[S[i][k] for i in self.tape.state] for k in range(order + 1)]

    def _storage(self, order: int) -> list:
        """The series of the tape's slots, ``order + 1`` coefficients each."""
        return [[None] * (order + 1) for _ in range(self.tape.nseries)]

    def _series(self, t, y: Sequence, order: int, F: list, S: list) -> bool:
        """The coefficients 0 .. order of every series of the tape through (t, y) into
        ``S`` (the state's are the solution's)."""
        tape, zero = self.tape, self.ctx.zero

        def coef(o, k):
            if o[0] == "s":
                return S[o[1]][k]
            return F[o[1]] if k == 0 else zero

        if tape.time is not None:
            S[tape.time][0] = t
            for k in range(1, order + 1):
                S[tape.time][k] = self.ctx.one if k == 1 else zero
        for i, x in zip(tape.state, y):
            S[i][0] = x
        for k in range(order):
            for ins in tape.series:
                self._order_k(ins, k, S, F, coef)
            for i, o in zip(tape.state, tape.outputs):
                S[i][k + 1] = coef(o, k) / (k + 1)
        return True

    @staticmethod
    def horner(ys: Sequence, h) -> list:
        """sum_k ys[k] h^k by Horner's rule (:func:`mpvi.numbers.series.series_horner`)."""
        order, ny = len(ys) - 1, len(ys[0])
        out: list = [None] * ny
        series_horner(ny, order, [[ys[k][i] for k in range(order + 1)] for i in range(ny)],
                      h, out)
        return out

    def adaptive(self, t, y: Sequence, h, order: int, params: Sequence, factor,
                 record: bool = False, tiers: bool = True) -> tuple:
        """Jorba & Zou's adaptive Taylor substeps of order ``order`` from (t, y) across
        [t, t + h] (module docstring; ``factor`` = :func:`step_factor`), the last one
        landing on t + h (:func:`mpvi.numbers.series.series_adaptive`).

        With ``tiers`` (and a context that has them) the orders are computed at the
        precisions of :meth:`schedule`, each substep checked
        (:func:`mpvi.numbers.series.series_tiers_hold`).

        Returns (the new y as a list, the number of substeps, None or -- with ``record``
        -- the flat list [tau_1, y(tau_1).., tau_2, ...] of the interior substep ends,
        whether the tiers held: False where a substep had to be recomputed at the
        context's precision).
        Raises :class:`StepSizeCollapse` where a substep no longer moves the time or the
        rest of the step would need more than :data:`MAX_SUBSTEPS` at its pace."""
        ctx = self.ctx
        F = self.fixed_values(params)
        S = self._storage(order)
        bounds: list = []
        precisions = self.schedule(order, factor) if tiers else None
        tiered = 1 if precisions is not None else 0
        if tiered:
            levels = sorted(set(precisions), reverse=True)
            tier = [levels.index(p) for p in precisions]
            ST = [S] + [self._storage(order) for _ in levels[1:]]
            FT = [F] + [[ctx.rounded(x, p) for x in F] for p in levels[1:]]
            lost = [ctx.zero if p == ctx.prec else ctx.two_power(-p) for p in precisions]
        else:
            levels, tier, ST, FT, lost = [], [], [], [], [ctx.zero] * (order + 1)

        def coefficients(tau, y):
            return self._tiered(tau, y, order, FT, ST, precisions, levels, tier)

        def exact(tau, y):
            return self._series(tau, y, order, F, S)

        def note(tau, y):
            if record:
                bounds.append(tau)
                bounds.extend(y)
            return True

        y, out = list(y), [None, None, None]
        nsub = series_adaptive(len(y), order, coefficients, exact, tiered, lost,
                               self.allowed(), [S[i] for i in self.tape.state],
                               note, t, y, h, factor, MAX_SUBSTEPS, ctx.one, ctx.zero,
                               ctx.one / (order - 1), ctx.one / order, out)
        if nsub == -2:
            raise substep_limit(ctx, h, out[0], out[1])
        if nsub == -3:
            raise StepSizeCollapse(
                f"the adaptive Taylor substep shrank to {ctx.to_str(out[1], 3)} at t = "
                f"{ctx.to_str(out[0], 12)}, below the resolution of the time: the "
                f"solution's radius of convergence vanishes there (it runs into a "
                f"singularity)")
        if nsub < 1:                                 # pragma: no cover (no decline here)
            raise AssertionError(f"series_adaptive: status {nsub}")
        return y, nsub, (bounds if record else None), out[2] == 0

    def schedule(self, order: int, factor) -> list[int] | None:
        """The precisions of the orders of an adaptive substep (:func:`precision_schedule`),
        or None where every order is computed at the context's precision: a context
        without tiers (``ctx.tiers``; mpmath, Arb balls, floats), or a schedule that never
        goes below it.  The compiled step takes the same list."""
        ctx = self.ctx
        if not getattr(ctx, "tiers", False):
            return None
        if self._schedule[:2] != (order, factor):      # a run asks at every step: made once
            precisions = precision_schedule(ctx.prec, order, factor)
            self._schedule = (order, factor, precisions if precisions[-1] < ctx.prec else None)
        return self._schedule[2]

    def allowed(self):
        """The error of the tiered coefficients a substep allows, relative to s: 2^-8 eps
        (:data:`TIER_ALLOWED`)."""
        return self.ctx.eps / 2 ** TIER_ALLOWED

    def _tiered(self, t, y: Sequence, order: int, FT: list, ST: list, precisions: list,
                levels: list, tier: list) -> bool:
        """:meth:`_series` with order k computed at ``precisions[k]`` bits: on the
        series ``ST[tier[k]]`` and fixed numbers ``FT[tier[k]]`` of that level (``levels``
        the distinct precisions, from the context's down), every operation rounded to it.
        The state's coefficient k + 1, computed at order k, is kept as it is in ``ST[0]``
        (the series the substep and its radius read); it and the coefficient k of every
        series a later order reads (``tape.copies``) are rounded into the lower levels."""
        tape, ctx = self.tape, self.ctx
        zero, one = ctx.zero, ctx.one
        state = set(tape.state)
        copies = [slot for slot in tape.copies if slot != tape.time]

        def coef_of(S, F):
            def coef(o, k):
                if o[0] == "s":
                    return S[o[1]][k]
                return F[o[1]] if k == 0 else zero
            return coef

        coefs = [coef_of(S, F) for S, F in zip(ST, FT)]
        for level, S in enumerate(ST):
            bits = levels[level]
            if tape.time is not None:
                S[tape.time][0] = t if level == 0 else ctx.rounded(t, bits)
                for k in range(1, order + 1):
                    S[tape.time][k] = one if k == 1 else zero
            for i, x in zip(tape.state, y):
                S[i][0] = x if level == 0 else ctx.rounded(x, bits)
        for k in range(order):
            lv = tier[k]
            S, F, coef = ST[lv], FT[lv], coefs[lv]
            with ctx.rounding_at(precisions[k]):
                for ins in tape.series:
                    self._order_k(ins, k, S, F, coef)
                for i, o in zip(tape.state, tape.outputs):
                    S[i][k + 1] = coef(o, k) / (k + 1)
            for slot in copies:
                kk = k + 1 if slot in state else k
                x = S[slot][kk]
                if x is None:                # j a_j at j = 0: never set, never read
                    continue
                if lv > 0 and slot in state:
                    ST[0][slot][kk] = x
                for lower in range(lv + 1, len(ST)):
                    ST[lower][slot][kk] = ctx.rounded(x, levels[lower])
        return True

    def _order_k(self, ins, k, S, F, coef):
        """The k-th coefficient of the result of ``ins`` (all lower ones known): the
        recurrence of its operation (:data:`_RECURRENCES`)."""
        rule = _RECURRENCES.get(ins[0])
        if rule is None:                             # pragma: no cover (the builder's ops)
            raise TaylorUnsupported(f"tape operation {ins[0]}")
        rule(self, ins, k, S, F, coef)

    def step(self, t, y: Sequence, h, order: int, params: Sequence) -> list:
        """y(t + h) by the Taylor polynomial of degree ``order`` (Horner's rule)."""
        S = self._storage(order)
        self._series(t, y, order, self.fixed_values(params), S)
        out: list = [None] * len(self.tape.state)
        series_horner(len(out), order, [S[i] for i in self.tape.state], h, out)
        return out


# ----- the Taylor recurrences of the tape's operations ---------------------------------------
# Each sets S[d][k], the k-th coefficient of the result of ``ins`` (all lower ones known):
# S the series of the tape's slots, F its fixed numbers, coef(x, k) the k-th coefficient of
# an operand (a slot or a fixed number).

def _k_solve(tape, ins, k, S, F, coef):
    v, M, p = ins[1], ins[2], ins[3]
    n = len(v)
    rhs: list = [None] * n
    for i in range(n):
        terms = [m for m in range(n) if M[i * n + m][0] == "s"]
        series_solve_row(k, len(terms), [S[M[i * n + m][1]] for m in terms],
                         [S[v[m][1]] for m in terms], coef(p[i], k), rhs, i)
    x = solve_dense([[coef(M[i * n + m], 0) for m in range(n)] for i in range(n)],
                    rhs, tape.ctx)
    for i in range(n):
        S[v[i][1]][k] = x[i]


def _k_add_sub(tape, ins, k, S, F, coef):
    op, d, a, b = ins[0], ins[1][1], ins[2], ins[3]
    if k > 0 and a[0] == "f":
        S[d][k] = S[b[1]][k] if op == "add" else -S[b[1]][k]
    elif k > 0 and b[0] == "f":
        S[d][k] = S[a[1]][k]
    else:
        S[d][k] = coef(a, k) + coef(b, k) if op == "add" else coef(a, k) - coef(b, k)


def _k_neg(tape, ins, k, S, F, coef):
    S[ins[1][1]][k] = -S[ins[2][1]][k]


def _k_mul(tape, ins, k, S, F, coef):
    d, a, b = ins[1][1], ins[2], ins[3]
    if a[0] == "f":
        S[d][k] = F[a[1]] * S[b[1]][k]
    elif b[0] == "f":
        S[d][k] = S[a[1]][k] * F[b[1]]
    else:
        series_mul(S[d], S[a[1]], S[b[1]], k)


def _k_div(tape, ins, k, S, F, coef):
    d, a, b = ins[1][1], ins[2], ins[3]
    if b[0] == "f":
        S[d][k] = S[a[1]][k] / F[b[1]]
    else:
        series_div(S[d], coef(a, k), S[b[1]], k)


def _k_sqr(tape, ins, k, S, F, coef):
    series_sqr(S[ins[1][1]], S[ins[2][1]], k)


def _k_sincos(tape, ins, k, S, F, coef):
    s, c, A, DA = S[ins[1][1]], S[ins[2][1]], S[ins[3][1]], S[ins[4][1]]
    if k == 0:
        s[0], c[0] = tape.ns["sin"](A[0]), tape.ns["cos"](A[0])
    else:
        series_sincos(s, c, A, DA, k)


def _k_exp(tape, ins, k, S, F, coef):
    e, A, DA = S[ins[1][1]], S[ins[2][1]], S[ins[3][1]]
    if k == 0:
        e[0] = tape.ns["exp"](A[0])
    else:
        series_exp(e, A, DA, k)


def _k_log(tape, ins, k, S, F, coef):
    L, A = S[ins[1][1]], S[ins[2][1]]
    if k == 0:
        L[0] = tape.ns["log"](A[0])
    else:
        series_log(L, A, k)


def _k_sqrt(tape, ins, k, S, F, coef):
    R, A = S[ins[1][1]], S[ins[2][1]]
    if k == 0:
        R[0] = tape.ns["sqrt"](A[0])
    else:
        series_sqrt(R, A, k)


def _k_powc(tape, ins, k, S, F, coef):
    C, A, alpha, DA = S[ins[1][1]], S[ins[2][1]], F[ins[3][1]], S[ins[4][1]]
    if k == 0:
        C[0] = A[0] ** alpha
    else:
        series_powc(C, A, DA, alpha, k)


_RECURRENCES = {"solve": _k_solve, "add": _k_add_sub, "sub": _k_add_sub, "neg": _k_neg,
                "mul": _k_mul, "div": _k_div, "sqr": _k_sqr, "sincos": _k_sincos,
                "exp": _k_exp, "log": _k_log, "sqrt": _k_sqrt, "powc": _k_powc}
"""Operation of the tape -> its Taylor recurrence (the same rules, in the same order of
operations, as the compiled tape: :func:`mpvi.compiled.cbackend.translate_taylor`)."""
