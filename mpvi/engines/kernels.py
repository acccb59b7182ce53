"""Generated Newton kernels: residual and Jacobian of one implicit step in one function.

The reference path of an implicit scheme (:mod:`mpvi.methods.variational`,
:mod:`mpvi.methods.mutze`) evaluates the system's derivatives node by node and assembles
the Newton residual and Jacobian with numpy object arrays: clear, checked against finite
differences, and slow at 64 digits (most of the time goes into Python-level array
bookkeeping, not into arithmetic).  A *kernel* is the same computation written out once,
symbolically:

1. the scheme states its residual *and its Jacobian* (by the chain rule, from the
   system's symbolic derivative blocks :meth:`mpvi.model.mechanics.LagrangianSystem.symbolic`)
   as sympy expressions in node symbols -- x_k, x'_k at each quadrature node, computed
   from the unknowns ``X`` and the step's numeric inputs ``K`` by *stages* -- and in the
   system's parameters ``P``;
2. :func:`mpvi.compiled.codegen.generate` eliminates common subexpressions of residual and
   Jacobian together and prints one Python function calling the context's own functions;
3. Newton (:func:`mpvi.numbers.newton.solve_info`, the one Newton of mpvi) runs on plain lists
   with the one dense solve (:func:`mpvi.numbers.linalg.solve_dense`), so the iteration counts
   are those of the reference path.  In the gmp context the whole iteration -- kernel,
   elimination, stopping rule, residual check, the step's outputs and the extrapolated
   first guess -- also exists compiled to C against MPFR
   (:func:`mpvi.compiled.cbackend.newton_function`): the same operations in the same order, so the
   same bits and iteration counts; wherever the Python iteration would raise, the
   compiled one hands over to it, which raises its own error.

Differentiating the system's expressions before the node values are put in (rather than
differentiating the assembled residual) keeps the expressions the size of the system's
own: a Simpson kernel of an 8-link pendulum builds in seconds, not minutes.

A kernel depends on the system (its expressions and its context) and on the *structure*
of the scheme (which table entries are nonzero), never on the step size: the numbers
enter through ``K``.  Kernels are cached per process by (context, system signature,
structure), so a sweep over step sizes builds each kernel once.

Which path a context takes is its attribute ``kernels``: True for the gmpy2 context
(``get_context("gmp")``), False for the mpmath reference and float64.  Setting it on an
instance (``ctx.kernels = True``) runs the kernels in that context; the tests use this to
check kernel against reference in the same context.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
import sympy as sp

from mpvi.compiled import cbackend, cdouble
from mpvi.ground import environment
from mpvi.compiled.codegen import TIME as TIME_SYMBOL, bound_source, function, generate_source, printed_source
from mpvi.numbers.linalg import SingularMatrixError, hadamard_regular, solve_dense
from mpvi.numbers.newton import DEFAULT_MAX_ITER, RESIDUAL_SLACK, solve_info, tolerance


ENV_START = "MPVI_NEWTON_START"
"""``MPVI_NEWTON_START=0`` (read when a kernel is bound to a context) turns Newton's start in
doubles off (:func:`mpvi.numbers.newton.double_start`): every iteration at the context's
precision, as the assembled reference path iterates (``tests/test_kernels.py`` compares
their iteration counts)."""


class Kernel:
    """``both(X, K, P)`` -> residual followed by the Jacobian's rows (flat list) and
    ``residual(X, K, P)`` -> residual, generated from sympy expressions; ``outputs(X, K, P)``
    -> further expressions of the converged step (e.g. the new momentum), if any.

    Parameters
    ----------
    X, K, P : lists of symbols: the unknowns, the step's numeric inputs, the parameters.
    residual : n expressions.
    jacobian : n x n expressions (rows index the residual, columns X), or None to let
        sympy differentiate ``residual`` (fine for small expressions).
    ctx : number context.
    outputs : expressions of the converged step.
    stages : (symbol, expression) pairs computed before the rest (node values).
    steady : how many of K's last entries stay the same through a run of steps (a step's
        table numbers): the compiled module computes what depends on them alone once per
        batch of steps.
    """

    def __init__(self, X: Sequence, K: Sequence, P: Sequence, residual: Sequence, ctx: Any,
                 outputs: Sequence = (), jacobian=None, stages: Sequence = (), steady: int = 0):
        self.n = len(X)
        if len(residual) != self.n:
            raise ValueError(f"a kernel needs as many equations as unknowns, got "
                             f"{len(residual)} and {self.n}")
        if jacobian is None:
            if stages:
                raise ValueError("a kernel with stages needs its Jacobian given")
            jacobian = [[sp.diff(r, x) for x in X] for r in residual]
        jac = [e for row in jacobian for e in row]
        args = [list(X), list(K), list(P)]
        parts = [("residual_and_jacobian", list(residual) + jac), ("residual", list(residual))]
        if outputs:
            parts.append(("outputs", list(outputs)))
        self.names = [name for name, _ in parts]
        self.printed = [printed_source(args, exprs, name, stages) for name, exprs in parts]
        self.nk, self.np = len(K), len(P)
        if not 0 <= steady <= self.nk:
            raise ValueError(f"steady = {steady}: K has {self.nk} entries")
        self.steady = steady
        self._bind(ctx)

    def _bind(self, ctx):
        """Make the functions of the printed sources in ``ctx`` (no sympy work)."""
        sources = [bound_source(p, ctx, name) for p, name in zip(self.printed, self.names)]
        self.both, self.residual, *rest = [function(source, table, ctx, name) for
                                           name, (source, table) in zip(self.names, sources)]
        self.outputs = rest[0] if rest else None
        # the residual and Jacobian in doubles, Newton's start (the compiled iteration
        # makes the same decision from the same source: mpvi.compiled.cdouble)
        self.double = None
        if not getattr(ctx, "verified", False) and environment.flag(ENV_START, True) \
                and cdouble.supported(sources[0][0]):
            try:
                constants = {name: float(v) for name, v in sources[0][1].items()}
            except (ArithmeticError, ValueError, TypeError):
                constants = None
            if constants is not None:
                self.double = cdouble.python_kernel(sources[0][0], constants)
        # what the compiled iteration is made of (benchmarks/scaling.py counts its calls)
        self.sources = [s for s, _ in sources]
        self.constant_names = [sorted(t) for _, t in sources]
        self.prec = getattr(ctx, "prec", None)
        self.newton, self._tolerance = None, (None, None)
        if cbackend.active(ctx):
            self.newton = cbackend.newton_function(
                self.sources, [t for _, t in sources], ctx.prec, self.n, self.nk, self.np,
                start=self.double is not None, steady=self.steady)

    def in_context(self, ctx: Any) -> "Kernel":
        """This kernel in another number context: the same printed code, its constants
        and functions bound to ``ctx`` (a system bound to another context reuses its
        kernels: :func:`cached_kernel`)."""
        new = copy.copy(self)
        new._bind(ctx)
        return new

    def start(self, K, P) -> Callable | None:
        """``start(xs)`` -> (residual, Jacobian rows) in doubles at the floats ``xs``, the
        step's inputs ``K`` and parameters ``P`` rounded to doubles (Newton's start,
        :func:`mpvi.numbers.newton.double_start`); None without a kernel in doubles."""
        double, n = self.double, self.n
        if double is None:
            return None
        try:
            kd, pd = [float(v) for v in K], [float(v) for v in P]
        except (ArithmeticError, ValueError, TypeError):
            return None

        def start(xs):
            out = double(xs, kd, pd)
            return out[:n], [out[n + i * n:n + (i + 1) * n] for i in range(n)]
        return start

    def equations(self, K, P):
        """``fun(X, jacobian)`` for :func:`mpvi.numbers.newton.solve_info`: (residual, Jacobian
        rows) or the residual, on lists (an :class:`Equations`)."""
        return Equations(self, K, P)

    def twin(self, ctx: Any) -> "Kernel":
        """:meth:`in_context` ``ctx``, made once per context and kept."""
        twins = self.__dict__.setdefault("_twins", {})
        if ctx.key not in twins:
            twins[ctx.key] = self.in_context(ctx)
        return twins[ctx.key]

    def solve(self, X0, K, P, ctx, *, extrapolate=None, outputs=False, **newton):
        """Newton from ``X0``: (X, iterations, final residual norm), X a list; with
        ``outputs=True`` (X, iterations, residual, outputs at X or None).  Compiled
        (:func:`mpvi.compiled.cbackend.newton_function`, the same bits) where it can be, else
        :func:`mpvi.numbers.newton.solve_info`.

        ``X0`` may be a function returning the first guess; with ``extrapolate = (C, E, m)``
        the compiled iteration computes it as ``X0[u n + d] = sum(C[i n + d] * E[u m + i]
        for i < m)`` (the extrapolation of a step's trial function; ``X0()`` must compute
        the same, for the Python iteration)."""
        if self.newton is not None and not newton.get("damped"):
            head = (None if extrapolate is not None else (X0() if callable(X0) else X0), K, P,
                    *self.iteration_options(ctx, newton))
            out = self.newton(*head, *extrapolate) if extrapolate is not None else self.newton(*head)
            if out is not None:
                if not outputs:
                    return out[:3]
                return out if self.outputs is not None else (*out, None)
        X, iterations, residual = solve_info(self.equations(K, P), X0() if callable(X0) else X0,
                                             ctx, start=self.start(K, P), **newton)
        if outputs:
            return X, iterations, residual, self.outputs(X, K, P) if self.outputs else None
        return X, iterations, residual

    def iteration_options(self, ctx, newton):
        """(eps, rtol, scale, max_iter, slack) of the compiled iteration for the Newton
        options ``newton`` (:func:`mpvi.numbers.newton.solve_info`'s defaults where unset)."""
        rtol, scale = newton.get("rtol"), newton.get("scale")
        eps = ctx.eps
        if rtol is None:                          # 2^10 eps, computed once per precision
            if self._tolerance[0] is not eps:
                self._tolerance = (eps, tolerance(ctx))
            rtol = self._tolerance[1]
        else:
            rtol = ctx.num(rtol)
        return (eps, rtol, ctx.one if scale is None else scale,
                newton.get("max_iter", DEFAULT_MAX_ITER), RESIDUAL_SLACK)

    def batch(self, newton):
        """The compiled module's ``steps`` (several steps of a trial-function stepper with
        no Python between them: ``mpvi_newton.h``), or None: not compiled, not loaded yet,
        or a damped iteration (Python's)."""
        if newton.get("damped"):
            return None
        return cbackend.module_function(self.newton, "steps")


class Equations:
    """A kernel's step equations with the step's inputs ``K`` and parameters ``P``:
    ``fun(X, jacobian)`` for :func:`mpvi.numbers.newton.solve_info` -> (residual, Jacobian rows),
    or the residual, on lists.  :meth:`rebound` gives the same equations on other numbers
    (:mod:`mpvi.numbers.arb`: a step on duals runs its Krawczyk test on the balls of their
    values)."""

    __slots__ = ("kernel", "K", "P")

    def __init__(self, kernel: Kernel, K: Sequence, P: Sequence) -> None:
        self.kernel, self.K, self.P = kernel, K, P

    def __call__(self, X, jacobian):
        kernel = self.kernel
        if not jacobian:
            return kernel.residual(X, self.K, self.P)
        n = kernel.n
        out = kernel.both(X, self.K, self.P)
        return out[:n], [out[n + i * n:n + (i + 1) * n] for i in range(n)]

    def rebound(self, ctx: Any, convert: Callable[[Any], Any]) -> "Equations":
        """These equations in ``ctx`` (the kernel's :meth:`Kernel.twin`), every input and
        parameter converted by ``convert``."""
        return Equations(self.kernel.twin(ctx), [convert(v) for v in self.K],
                         [convert(v) for v in self.P])


def _entries(v):
    """A vector's entries (the same objects) as a list for a compiled module: ``tolist`` of
    a 1-d object array is one C call, where the module reading the array itself would
    iterate it, one Python call per entry.  Anything else (a list, None) as it is."""
    if type(v) is np.ndarray and v.dtype == object and v.ndim == 1:
        return v.tolist()
    return v


_KERNELS: dict = {}
"""Every kernel built in this process, keyed by (context, system signature, scheme
structure): systems built again with the same expressions (a sweep over a parameter, a
new instance per run) reuse it; parameter values are inputs."""


def cached_kernel(system, key: tuple, build: Callable):
    """The kernel ``key`` of ``system`` in its context (built by ``build()`` on first use,
    then shared by every system with the same expressions in a context of the same name:
    generated code binds the context's functions and constants, e.g. pi, at its precision)."""
    ctx = system.ctx
    full = (ctx.key, cbackend.active(ctx), system.signature) + tuple(key) + (
        cbackend.balls_active(ctx),)
    if full not in _KERNELS:
        with cbackend.kernels_of(system.name):    # a kernel that stays in Python names it
            other = _ANY_CONTEXT.get((system.signature,) + tuple(key))
            if other is not None:
                _KERNELS[full] = other.in_context(ctx)
            else:
                built = _KERNELS[full] = build()
                if isinstance(built, Kernel):
                    _ANY_CONTEXT[(system.signature,) + tuple(key)] = built
    return _KERNELS[full]


_ANY_CONTEXT: dict = {}
"""A :class:`Kernel` of any context per (system signature, scheme structure): its printed
code serves every context (:meth:`Kernel.in_context`), so binding a system to another
context builds no kernel again."""


def node_symbols(prefix: str, n: int) -> list:
    """n fresh symbols ``prefix0..prefix{n-1}`` (Dummies: they never collide with a
    system's own names; generate() renames them)."""
    return list(sp.symbols(f"{prefix}0:{n}", cls=sp.Dummy))


def at_node(system, exprs, x, v, t=None, a=None):
    """``exprs`` (nested lists of the system's expressions) with q -> x, v -> v, t -> t,
    a -> a (node symbols): a cheap symbol-for-symbol replacement."""
    m = dict(zip(system.coords, x))
    m.update(zip(system.velocity_symbols, v))
    if t is not None:
        m[TIME_SYMBOL] = t
    if a is not None:
        m.update(zip(system.acceleration_symbols, a))

    def sub(e):
        if isinstance(e, (list, tuple)):
            return [sub(f) for f in e]
        return sp.sympify(e, strict=True).xreplace(m)
    return sub(exprs)


# ----- list-based pieces of the explicit parts ------------------------------------------------

def acceleration(system, t, q, v):
    """a = q'' (as :meth:`mpvi.model.mechanics.LagrangianSystem.acceleration`) on lists: the
    system's compiled L_vv and right-hand side, then :func:`mpvi.numbers.linalg.solve_dense`."""
    n, ctx = system.dof, system.ctx
    vals = system._acceleration_parts(t, q, v, system.param_values)
    rows = [vals[i * n:(i + 1) * n] for i in range(n)]
    try:
        return solve_dense(rows, vals[n * n:], ctx)
    except SingularMatrixError:             # the reference path raises, naming the point
        return list(system.acceleration(t, np.array(q, dtype=object), np.array(v, dtype=object)))


SYMBOLIC_INVERSE_DOF = 3
"""Up to this many degrees of freedom the Hamiltonian field solves M v = p symbolically
(adjugate over determinant, CSE'd with the rest); beyond, :func:`solve_dense`."""


def _field_factors(system):
    """The singular factors the Hamiltonian field's functions also return (one elimination
    of common subexpressions with the field: they cost next to nothing), or () when the
    system has none or one depends on the velocities (checked apart, :mod:`mpvi.model.singular`)."""
    from mpvi.model.singular import singularities
    sing = singularities(system)
    return () if sing.uses_velocity else tuple(sing.factors)


def _field_parts(system):
    """The generated functions of the Hamiltonian field of an M, V system (cached per
    system signature and context): ``(symbolic, [(source, table, name)], [function])`` --
    ``hamiltonian_field(t, q, p, params)`` returning [det M, M, v, p'] up to
    :data:`SYMBOLIC_INVERSE_DOF` degrees of freedom, else ``M(q, params)`` and
    ``force(t, q, v, params)``, the last one followed by the singular factors at (t, q)
    (:func:`_field_factors`).  The Python functions and the compiled steps
    (:func:`explicit_steps`) are made from the same sources."""
    n, ctx = system.dof, system.ctx
    symbolic = n <= SYMBOLIC_INVERSE_DOF or (getattr(ctx, "verified", False)
                                             and _constant_numeric_mass(system))
    factors = _field_factors(system)

    def build():
        parts = _field_sources(system, symbolic, factors)
        return symbolic, parts, [function(src, table, ctx, name) for src, table, name in parts]
    return cached_kernel(system, ("hamiltonian field", symbolic, tuple(factors)), build)


def _constant_numeric_mass(system) -> bool:
    """Whether the mass matrix is a matrix of numbers (free of q and of parameters): its
    adjugate and determinant are then numbers too, and the ball contexts of
    :func:`mpvi.certify` take v = adj(M) p / det M in the generated field at any number of
    degrees of freedom -- the same v as the dense solve of the point run, as exact values,
    without eliminating on balls and duals at every evaluation (a 3-body system)."""
    return all(not getattr(e, "free_symbols", ()) for e in system.mass_expr)


def _field_sources(system, symbolic, extra=()):
    """[(source, table, name)] of the generated functions of the Hamiltonian field
    (:func:`_field_parts`), the expressions ``extra`` in (t, q) returned after the last
    function's values."""
    n, ctx = system.dof, system.ctx
    G = [g + f for g, f in zip(system._G, system.force_expr)]
    if symbolic:
        p = sp.symbols(f"p0:{n}", cls=sp.Dummy)
        M = sp.Matrix(system.mass_expr)
        det = M.det(method="berkowitz")
        v = list(M.adjugate() * sp.Matrix(p) / det)
        Gv = [g.xreplace(dict(zip(system.velocity_symbols, v))) for g in G]
        specs = [([[TIME_SYMBOL], system.coords, p, system.param_symbols],
                  [det] + list(M) + v + Gv + list(extra), "hamiltonian_field")]
    else:
        specs = [([system.coords, system.param_symbols], list(system.mass_expr), "M"),
                 ([[TIME_SYMBOL], system.coords, system.velocity_symbols,
                   system.param_symbols], G + list(extra), "force")]
    return [(*generate_source(args, exprs, ctx, name), name) for args, exprs, name in specs]


def hamiltonian_field(system, factors: bool = False):
    """f(t, y) = (q', p') for y = (q, p) as plain lists: v = M(q)^-1 p and
    p' = dL/dq(q, v) + F(t, q, v) from generated code.  Up to
    :data:`SYMBOLIC_INVERSE_DOF` degrees of freedom v = adj(M) p / det M is part of one
    generated function; the step falls back to the reference field (which raises
    :class:`SingularMatrixError` naming q) when |det M| <= n eps prod_i sum_j |M_ij|
    (Hadamard's bound), i.e. when M is singular to working precision.  Beyond, M(q) is
    evaluated and solved by :func:`solve_dense`.  With ``factors``, f(t, y) returns
    ((q', p'), the system's singular factors at (t, q) or None where the field took the
    reference path or the factors are checked apart: :func:`_field_factors`).  None when
    the system is not of the M, V form (its velocity needs Newton: the reference field is
    used)."""
    if getattr(system, "mass_expr", None) is None:
        return None
    n, ctx = system.dof, system.ctx
    params = system.param_values
    symbolic, _, funs = _field_parts(system)
    ng = len(_field_factors(system))
    eps = ctx.eps
    # the singularity test compares numbers: a context of numbers with derivatives (the
    # duals of mpvi.numbers.arb) gives their values, the derivatives are not needed there
    plain = getattr(ctx, "plain", None)

    def reference(t, y):                     # raises, naming q, when M is singular
        y = np.array(y, dtype=object)
        return list(np.concatenate(system.hamiltonian_rhs(y[:n], y[n:], t))), None

    def f_symbolic(t, y):
        try:
            out = fun([t], y[:n], y[n:], params)
        except ZeroDivisionError:                # mpmath raises where MPFR gives inf
            return reference(t, y)
        head = out[:1 + n * n] if plain is None else [plain(v) for v in out[:1 + n * n]]
        if not hadamard_regular(n, head[0], head[1:], eps):
            return reference(t, y)
        return out[1 + n * n:1 + n * n + 2 * n], out[1 + n * n + 2 * n:] if ng else None

    def f_dense(t, y):
        q, p = y[:n], y[n:]
        m = mass(q, params)
        try:
            v = solve_dense([m[i * n:(i + 1) * n] for i in range(n)], p, ctx)
        except SingularMatrixError:
            return reference(t, y)
        out = force([t], q, v, params)
        return v + out[:n], out[n:] if ng else None
    if symbolic:
        (fun,) = funs
        f = f_symbolic
    else:
        mass, force = funs
        f = f_dense
    return f if factors else lambda t, y: f(t, y)[0]


def explicit_steps(system):
    """The RK4 and GBS steps on the Hamiltonian field of an M, V system compiled to MPFR
    (:func:`mpvi.compiled.cbackend.explicit_steps`), bound to the system's parameters:
    ``(rk4(t, y, h, signs), gbs(t, y, H, levels, signs))``, each returning the new y as a
    list, bit-identical to :func:`mpvi.engines.ode.rk4_step` and :func:`mpvi.engines.ode.gbs_step` on
    :func:`hamiltonian_field`, or None (then the caller runs the Python step: the field's
    other path, a singular factor that left its sign at a stage -- ``signs``, one per factor
    of :func:`mpvi.model.singular.singularities`, None: not checked --, or not compiled yet).
    None when compiled kernels are not active in the system's context, the system is not
    of the M, V form, or a singular factor depends on the velocities."""
    module = _explicit_module(system)
    if module is None:
        return None
    (rk4, gbs), factors = module
    params, eps = list(system.param_values), system.ctx.eps
    if not factors:
        return (lambda t, y, h, signs: rk4(t, y, h, params, eps),
                lambda t, y, H, levels, signs: gbs(t, y, H, levels, params, eps))
    return (lambda t, y, h, signs: rk4(t, y, h, params, eps, signs),
            lambda t, y, H, levels, signs: gbs(t, y, H, levels, params, eps, signs))


def explicit_batch(system):
    """RK4 steps in a batch, with no Python between them, by the module of
    :func:`explicit_steps` once it is loaded (``mpvi_explicit.h``, ``rk4_steps``), bound to
    the system's parameters: an :class:`ExplicitBatch`, or None where
    :func:`explicit_steps` is None."""
    module = _explicit_module(system)
    if module is None:
        return None
    (rk4, _), factors = module
    return ExplicitBatch(rk4, bool(factors), list(system.param_values), system.ctx.eps)


class ExplicitBatch:
    """RK4 steps in a batch (:func:`explicit_batch`).

    ``batch(starts, ends, y, h, check, head, signs)`` -> None (the module is not loaded
    yet) or (steps done, their y flat): step i from (starts[i], the y before) as
    :func:`explicit_steps`' rk4 takes it (the same bits), followed by the compiled step
    check ``check(ends[i], q, p, *head)`` (``...`` in head: the q before); the batch ends
    before a step that declines or fails the check.  :meth:`ready`: the module is loaded.
    """

    def __init__(self, rk4, signed: bool, params: list, eps) -> None:
        self.rk4, self.signed, self.params, self.eps = rk4, signed, params, eps

    def ready(self) -> bool:
        return cbackend.module_function(self.rk4, "rk4_steps") is not None

    def __call__(self, starts, ends, y, h, check, head, signs):
        steps = cbackend.module_function(self.rk4, "rk4_steps")
        if steps is None:
            return None
        if not self.signed:
            return steps(starts, ends, y, h, self.params, self.eps, check, head)
        return steps(starts, ends, y, h, self.params, self.eps, check, head, signs)


def _explicit_module(system):
    """((rk4, gbs) of :func:`mpvi.compiled.cbackend.explicit_steps`, the singular factors
    of the field), or None: compiled kernels not active, not an M, V system, or a singular
    factor that depends on the velocities."""
    ctx = system.ctx
    if getattr(system, "mass_expr", None) is None or not cbackend.active(ctx):
        return None
    from mpvi.model.singular import singularities
    if singularities(system).uses_velocity:
        return None
    factors = _field_factors(system)
    _, parts, _ = _field_parts(system)
    steps = cached_kernel(system, ("explicit steps", tuple(map(str, factors))), lambda:
                          cbackend.explicit_steps([src for src, _, _ in parts],
                                                  [t for _, t, _ in parts], ctx.prec,
                                                  system.dof, len(system.param_symbols),
                                                  len(factors)))
    return None if steps is None else (steps, factors)


class TaylorSteps(NamedTuple):
    """The Taylor steps of a mechanical system (:func:`taylor_steps`).

    Attributes
    ----------
    form : "qp" (an M, V system, on y = (q, p)) or "qv" (a general Lagrangian, on
        y = (q, v)).
    python : the steps in Python: ``step(t, y, h, order)`` -> the new y as a list,
        ``adaptive(t, y, h, order, factor, record, tiers=True)`` -> (the new y, substeps,
        the interior substep ends or None, whether the tiers held),
        ``coefficients(t, y, order)`` -> the list of the
        coefficients y_0 .. y_order (lists of 2 n numbers)
        (:class:`mpvi.engines.taylor.TaylorEvaluator`).
    compiled : the same compiled (:func:`mpvi.compiled.cbackend.taylor_step`, bit-identical; each
        returns None where the Python one must run), or None.
    """

    form: str
    python: Any
    compiled: Any


def taylor_steps(system):
    """The Taylor steps of :mod:`mpvi.engines.taylor` on a mechanical system's equations of motion,
    bound to the system's parameters: Hamilton's equations of an M, V system on (q, p), the
    equations of motion L_vv v' = L_q + F - L_vq v - L_vt of a general Lagrangian on
    (q, v).  ``compiled`` is None when compiled kernels are not active.

    Returns
    -------
    TaylorSteps

    Raises
    ------
    mpvi.engines.taylor.TaylorUnsupported
        The field has an operation without a Taylor recurrence (named)."""
    from types import SimpleNamespace

    from mpvi.engines.taylor import TaylorEvaluator, build_tape
    ctx, n = system.ctx, system.dof
    form = "qv" if getattr(system, "mass_expr", None) is None else "qp"

    def build():
        if form == "qp":
            parts = _field_sources(system, n <= SYMBOLIC_INVERSE_DOF)   # no factors
        else:
            Lvv, r = system.symbolic("motion")
            parts = [(*generate_source([[TIME_SYMBOL], system.coords, system.velocity_symbols,
                                        system.param_symbols],
                                       [e for row in Lvv for e in row] + list(r), ctx,
                                       "motion"), "motion")]
        tape = build_tape([src for src, _, _ in parts], [t for _, t, _ in parts], n,
                          len(system.param_symbols), form)
        compiled = cbackend.taylor_step(tape, ctx.prec) if cbackend.active(ctx) else None
        return TaylorEvaluator(tape, ctx), compiled
    evaluator, compiled = cached_kernel(system, ("taylor", form), build)
    params, eps = list(system.param_values), ctx.eps
    python = SimpleNamespace(
        step=lambda t, y, h, order: evaluator.step(t, y, h, order, params),
        adaptive=lambda t, y, h, order, factor, record, tiers=True:
            evaluator.adaptive(t, y, h, order, params, factor, record, tiers),
        coefficients=lambda t, y, order: evaluator.coefficients(t, y, order, params))
    if compiled is None:
        return TaylorSteps(form, python, None)
    step, adaptive, coefficients = compiled
    ny = 2 * n
    allowed = evaluator.allowed()

    def coefficients_lists(t, y, order):
        flat = coefficients(t, y, order, params, eps)
        return None if flat is None else [flat[k * ny:(k + 1) * ny] for k in range(order + 1)]
    return TaylorSteps(form, python, SimpleNamespace(
        step=lambda t, y, h, order: step(t, y, h, order, params, eps),
        adaptive=lambda t, y, h, order, factor, record, tiers=True:
            adaptive(t, y, h, order, params, eps, factor, record,
                     evaluator.schedule(order, factor) if tiers else None, allowed),
        coefficients=coefficients_lists))


def step_check(system):
    """The checks :func:`mpvi.solve` runs after every step of an M, V system -- a finite
    state, the growth guard, V and M(q) finite and M(q) positive definite
    (:meth:`mpvi.LagrangianSystem.irregularity`), and the signs of its singular factors at
    the node and at the chord midpoint (:mod:`mpvi.model.singular`) -- compiled to MPFR
    (:func:`mpvi.compiled.cbackend.step_check`), bound to the system's parameters:
    ``check(t, q, y, bound, signs, qprev)`` -> True when every check passes, False when
    the caller must run its own checks (which raise with the message; also before the
    module is built).  None when compiled kernels are not active, the system is not of
    the M, V form, or a singular factor depends on the velocities (checked in Python)."""
    from mpvi.model.singular import singularities
    ctx = system.ctx
    if getattr(system, "mass_expr", None) is None or not cbackend.active(ctx):
        return None
    sing = singularities(system)
    if sing.uses_velocity:
        return None

    def build():
        args, exprs = system._regularity_exprs
        source, table = generate_source(args, exprs + sing.factors, ctx, "regularity")
        guard = generate_source(*sing.exprs_args, ctx, "singular_factors") if len(sing) else None
        return cbackend.step_check(source, table, ctx.prec, system.dof, guard)
    check = cached_kernel(system, ("step check", tuple(map(str, sing.factors))), build)
    if check is None:
        return None
    params = list(system.param_values)
    if not len(sing):
        def checked(t, q, y, bound, signs, qprev):
            return check(t, _entries(q), _entries(y), params, bound)
    else:
        def checked(t, q, y, bound, signs, qprev):
            return check(t, _entries(q), _entries(y), params, bound, signs, _entries(qprev))
    # for steps taken in C (mpvi.methods.variational): the module's check once it is
    # loaded, and its parameters
    checked.compiled = lambda: cbackend.module_function(check, "check")  # type: ignore[attr-defined]
    checked.params = params                # type: ignore[attr-defined]
    return checked
