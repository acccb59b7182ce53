"""The singularities of a system, so that no run crosses one silently.

A variational integrator, an RK4 or a GBS step evaluates the system's field at a few
points of each step -- the nodes, the quadrature nodes of its trial function, its stages.
If a denominator of the field vanishes *between* two such points, nothing is infinite
where the method looks: ``V = -1/q`` started at q = 1 runs through the collision to
q = -31, ``V = -tan q`` passes its pole, ``V = -log q`` under GBS gains ten orders of
magnitude of energy.  The remedy is cheap: the quantities whose zero is a singularity
keep their sign along a regular trajectory, so their signs at every point a step
evaluates are compared with their signs at the initial point.

:func:`singularities` finds them once per system, symbolically:

* the bases of negative and fractional powers (denominators 1/D, square roots and other
  radicals sqrt(D)), the arguments of ``log``, the poles of ``tan``, ``cot``, ``sec``,
  ``csc`` (cos or sin of the argument), the kinks of ``Abs``, ``sign``, ``Heaviside``, the
  branch points of ``atanh``, ``acoth``, ``asin``, ``acos``, ``acosh``, ``LambertW``, ``li``,
  the pole of ``zeta``, the singularity at 0 of ``Ei``, ``Ci``, ``Chi``, ``expint``,
  ``bessely``, ``besselk``, the poles of ``gamma``, ``loggamma``, ``digamma``, ``polygamma``
  at 0 and every negative integer (the factor gamma(x): it changes sign at each pole), the
  jumps of ``floor`` and ``ceiling`` (the factor (-1)^floor(x), +-1 between the jumps) and
  the switches of ``Piecewise`` (lhs - rhs of each condition) -- in the Lagrangian (V and M,
  or a general L), the force, and their first derivatives (which hold what the field
  divides by: 1/sqrt(1 - x^2) of asin);
* the determinant of each diagonal block of the mass matrix (L_vv; the connected components
  of its nonzero pattern, whose determinants multiply to det M) of up to
  :data:`DETERMINANT_DOF` degrees of freedom, in a system of any size (M = diag(1, 1, 1,
  w^2): the factor w; a dense 4 x 4 block R diag(1, 1, 1, d^2) R^T: the factor d), beyond
  three by elimination over the polynomial ring of the block's atoms.  A larger block whose
  entries move with the coordinates and the time (its determinant is too costly to factor:
  a dense 7 x 7 block of cos(q_i - q_j) takes 43 s) is instead shown positive definite
  along each step's path (:meth:`Singularities.block_failure`: the block over a box around
  each segment of the path, in ball arithmetic, its midpoint matrix minus the Frobenius
  norm of its radii factored by Cholesky); one whose entries read the velocities is an
  :class:`UnguardedSingularityWarning` and is tested for positive definiteness at the nodes
  only;
* each split into its irreducible factors over Q (``sympy.factor_list``), so that a
  factor of even power (``M = q^2``: the factor q) is seen changing sign;
* minus the factors that cannot reach zero: an interval evaluation (mpmath's ``iv``, sin
  and cos in [-1, 1], coordinates, velocities and time unbounded, parameters at their
  values) that excludes 0 (``2 - cos(q1 - q2)^2``, ``1 + q^2``); a factor quadratic in the
  coordinates is classified exactly instead (its Hessian H and minimum): definite away
  from 0, dropped; changing sign, kept; semidefinite with minimum 0 (a squared distance
  ``x^2 + y^2``, ``(x - 1)^2 + y^2``), a *touching* factor: it reaches its zero without
  changing sign.  So is a factor of the coordinates whose interval reaches 0 at one end
  (``1 - cos q`` in [0, 2]) and whose Hessian's interval bounds ||H/2||; one without such
  a bound (``q^4 + y^2``) or with velocities is kept for its sign only.

:class:`Singularities` evaluates the factors (one generated function, compiled to MPFR
with the rest) and compares signs; :func:`mpvi.solve` checks them at every node and at the
points each method evaluates inside a step, and a change raises
:class:`mpvi.IntegrationError` naming the factor, where it comes from, the step and the
time.  A touching factor f is checked along each step's path: where the path can come
near its zero (``|f(q_j)| <= ||H/2|| D^2``, D a bound of the path's distance from q_j), the
parabola through f at the ends and the midpoint of each chord of the path -- exact for a
quadratic f -- must not reach 0 (to 16 eps), nor along the tangents q_j + s h v_j and
q_j+1 - s h v_j+1 (a step that jumps over the zero and back).  A collision at a point
(Kepler from rest) is seen so; a near miss that a step cannot resolve (an orbit of
angular momentum 1e-12) is refused by the driver's resolution check there
(``check_stability``).  For a touching factor that is not quadratic (``1 - cos q``) the
parabola is not exact; there ``sqrt(abs(f))`` is Lipschitz along a chord of length l with constant
sqrt(||H/2||) l, and the chord must be covered by the cones of its three points
(:meth:`Singularities.reaches_zero`): a step that comes within about a quarter of its
length of the zero is refused.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Sequence

import sympy as sp
from flint import arb
from sympy.polys.matrices import DomainMatrix

from mpvi.compiled import cbackend
from mpvi.compiled.codegen import TIME, compile_exprs
from mpvi.ground.precision import sticky
from mpvi.ground.precision import entry, entry_class

if TYPE_CHECKING:
    import sympy

    from mpvi.ground.types import Number, NumberLike, Real, VectorLike
    from mpvi.model.mechanics import LagrangianSystem

class SingularityCrossed(ArithmeticError):
    """A step evaluated the system on the other side of one of its singularities (raised
    inside a step; :func:`mpvi.solve` reports it as :class:`mpvi.IntegrationError` with the
    step and the time)."""


DETERMINANT_DOF = 5
"""The factors of det M (det L_vv) are guarded for each diagonal block of M (its connected
components: det M is their product) of up to this many degrees of freedom; a larger block
that moves is shown positive definite along each step's path
(:meth:`Singularities.block_failure`), or, if it reads the velocities, is an
:class:`UnguardedSingularityWarning` when the system's singularities are found."""

BLOCK_DIGITS = 30
"""The digits of the ball arithmetic in which a large block of M is shown positive definite
along a step's path (a bound, not a result: the run keeps its own precision)."""

BLOCK_DEPTH = 12
"""A segment of a step's path over which a large block of M is not shown positive definite
at once is halved, down to pieces of 2^-BLOCK_DEPTH of its length; a piece that still fails
is a singularity the step may cross (:meth:`Singularities.block_failure`)."""


class UnguardedSingularityWarning(UserWarning):
    """A singularity of the system that :func:`singularities` cannot guard between nodes (a
    block of the mass matrix beyond :data:`DETERMINANT_DOF` coordinates whose entries read
    the velocities): runs go on, tested at the nodes only."""

_POLES = {sp.tan: sp.cos, sp.sec: sp.cos, sp.cot: sp.sin, sp.csc: sp.sin}
_AT_ZERO = (sp.Ei, sp.Ci, sp.Chi, sp.expint, sp.bessely, sp.besselk)
"""Functions singular where their (last) argument is 0."""
_GAMMA = (sp.gamma, sp.loggamma, sp.digamma, sp.polygamma)
"""Functions with the poles of gamma, at 0 and every negative integer: gamma of the (last)
argument changes sign at each (and has no zero), so it is their factor."""
_JUMPS = (sp.floor, sp.ceiling, sp.frac)
"""Functions that jump at every integer value of their argument: (-1)^floor(x) (ceiling:
(-1)^ceiling(x)) changes sign at each jump and is exactly +-1 between them, so a run
started on a jump is in the cell the function gives there."""


def _singular_bases(expr) -> list:
    """(base, what) pairs of ``expr``: the quantities whose zero is a singularity of it."""
    out, stack = [], [sp.sympify(expr, strict=True)]
    while stack:
        x = stack.pop()
        if x.is_Atom:
            continue
        stack.extend(x.args)
        if x.is_Pow:
            e = x.exp
            if not e.is_number:
                out.append((x.base, f"the base of {x}"))
            elif e.is_negative:
                out.append((x.base, f"the denominator {x.base ** -e}"))
            elif not e.is_integer:
                out.append((x.base, f"the radicand of {x}"))
        elif isinstance(x, sp.log):
            out.append((x.args[0], f"the argument of {x}"))
        elif type(x) in _POLES:
            out.append((_POLES[type(x)](x.args[0]), f"the pole of {x}"))
        elif isinstance(x, (sp.Abs, sp.sign, sp.Heaviside, sp.DiracDelta)):
            out.append((x.args[0], f"the kink of {x}"))
        elif isinstance(x, (sp.atanh, sp.acoth)):
            out += [(1 - x.args[0], f"the branch point of {x}"), (1 + x.args[0], f"the branch point of {x}")]
        elif isinstance(x, (sp.asin, sp.acos)):
            out.append((1 - x.args[0] ** 2, f"the branch point of {x}"))
        elif isinstance(x, sp.acosh):
            out.append((x.args[0] - 1, f"the branch point of {x}"))
        elif isinstance(x, sp.LambertW):
            out.append((x.args[0] + sp.exp(-1), f"the branch point of {x}"))
        elif isinstance(x, sp.zeta):
            out.append((x.args[0] - 1, f"the pole of {x}"))
        elif isinstance(x, _AT_ZERO):
            out.append((x.args[-1], f"the singularity at 0 of {x}"))
        elif isinstance(x, _GAMMA):
            out.append((sp.gamma(x.args[-1]), f"the poles of {x}"))
        elif isinstance(x, _JUMPS):
            jump = sp.ceiling if isinstance(x, sp.ceiling) else sp.floor
            out.append((sp.Integer(-1) ** jump(x.args[0]), f"the jumps of {x}"))
        elif isinstance(x, sp.Mod):
            out.append((sp.Integer(-1) ** sp.floor(x.args[0] / x.args[1]), f"the jumps of {x}"))
            out.append((x.args[1], f"the divisor of {x}"))
        elif isinstance(x, sp.Piecewise):
            switches = x.atoms(sp.core.relational.Relational)
            out += [(r.lhs - r.rhs, f"the switch of {x}")
                    for r in sorted(switches, key=sp.default_sort_key)]
        elif isinstance(x, sp.li):
            out += [(x.args[0], f"the branch point of {x}"), (x.args[0] - 1, f"the pole of {x}")]
    return out


def _block_det(block):
    """The determinant of a diagonal block of M: Berkowitz's, factored, up to three
    coordinates; beyond, by elimination over the polynomial ring whose generators are the
    block's symbols and non-polynomial atoms (``cos(q1 - q2)``, ``sqrt(q)``: a 5 x 5 block
    of trigonometric entries in a tenth of a second, where sympy's EX domain takes 30 s)."""
    if block.rows <= 3:
        return sp.factor(block.det(method="berkowitz"))
    atoms = block.atoms(sp.Function) | {p for p in block.atoms(sp.Pow)
                                          if not (p.exp.is_Integer and p.exp > 0)}
    atoms = sorted(atoms, key=sp.default_sort_key)
    gens = [sp.Dummy(f"g{i}") for i in range(len(atoms))]
    matrix = DomainMatrix.from_Matrix(block.xreplace(dict(zip(atoms, gens))))
    return matrix.domain.to_sympy(matrix.det()).xreplace(dict(zip(gens, atoms)))


def _factors(base):
    try:
        _, factors = sp.factor_list(base)
        return [f for f, _ in factors]
    except (sp.PolynomialError, sp.polys.polyerrors.PolificationFailed, NotImplementedError,
            TypeError, ValueError):
        return [base]


def _interval(e, env):
    """An interval enclosing ``e`` (mpmath ``iv``) over ``env`` (symbol -> interval, other
    symbols unbounded), or None where this small evaluator does not know an operation."""
    from mpmath import inf, iv
    if e.is_Symbol:
        return env.get(e, iv.mpf([-inf, inf]))
    if e.is_Rational:
        return iv.mpf(int(e.p)) / int(e.q)
    if e is sp.pi:
        return iv.pi
    if e is sp.E:
        return iv.e
    args = [_interval(a, env) for a in e.args]
    if any(a is None for a in args):
        return None
    if e.is_Add:
        total = args[0]
        for a in args[1:]:
            total = total + a
        return total
    if e.is_Mul:
        total = args[0]
        for a in args[1:]:
            total = total * a
        return total
    if e.is_Pow and e.exp.is_Integer:
        return args[0] ** int(e.exp)
    if isinstance(e, (sp.sin, sp.cos)):
        return iv.mpf([-1, 1])
    if isinstance(e, sp.exp):
        return iv.exp(args[0])
    return None


def _interval_kind(factor, env, coords):
    """For a factor that is not quadratic: "sign" when its interval over all states (module
    doc) can change sign or is not known, "never" when it excludes 0; ("touch", b, False)
    when it reaches 0 at an end of its range (``1 - cos q`` in [0, 2]) and depends on the
    coordinates only, b >= ||H/2|| everywhere (the interval of its Hessian); "sign" again
    for such a factor whose curvature has no bound (``q^4 + y^2``) or that reads the
    velocities or the time (kept at the points a step evaluates, not along its path)."""
    from mpmath import inf
    from mpmath.libmp import to_rational
    box = _interval(factor, env)
    if box is None or box.a != box.a or box.a < 0 < box.b:
        return "sign"
    if box.a > 0 or box.b < 0:
        return "never"
    if factor.has(TIME) or not factor.free_symbols <= set(coords) | set(env):
        return "sign"
    bound = 0
    for a in coords:
        row = 0
        for b in coords:
            h = _interval(sp.diff(factor, a, b), env)
            if h is None or h.a != h.a or not -inf < h.a <= h.b < inf:
                return "sign"
            row += max(abs(sp.Rational(*map(int, to_rational(end)))) for end in h._mpi_)
        bound = max(bound, row)        # ||H|| <= its largest absolute row sum (symmetric)
    return ("touch", bound / 2, False)


def _quadratic_kind(factor, coords, params):
    """For a factor quadratic in the coordinates (parameters at their exact ``params``
    values): ("touch", ||H/2||_F) when it is semidefinite with minimum 0 (a squared
    distance ``(x - 1)^2 + y^2``: it reaches 0 without changing sign), "never" when it is
    definite away from 0 (``1 + q^2``), "sign" when it can change sign; None for any other
    factor.  H is its Hessian: ``|f(q)| >= (sqrt|f(q0)| - ||H/2||^(1/2) |q - q0|)^2``."""
    f = sp.expand(factor.subs(params, simultaneous=True))
    if f.has(TIME) or not f.free_symbols <= set(coords):
        return None
    try:
        poly = sp.Poly(f, *coords)
    except sp.PolynomialError:
        return None
    if poly.total_degree() != 2:
        return None
    H = sp.hessian(f, coords)
    if not H.is_positive_semidefinite:
        if not (-H).is_positive_semidefinite:
            return "sign"
        f, H = -f, -H
    g = sp.Matrix([sp.diff(f, c) for c in coords]).subs({c: 0 for c in coords})
    try:
        sol, free = H.gauss_jordan_solve(-g)              # the minimizer, when f is bounded
    except ValueError:
        return "sign"                                     # unbounded below along a null direction
    low = f.subs(dict(zip(coords, sol.subs({t: 0 for t in free}))), simultaneous=True)
    if low > 0:
        return "never"
    if low < 0:
        return "sign"
    half = H / 2                 # ||H/2||_2 <= its largest absolute row sum (symmetric)
    return ("touch", max(sum(abs(x) for x in half.row(i)) for i in range(half.rows)), True)


@entry_class
class Singularities:
    """The factors of a system whose zeros are singularities (module doc), with what they
    come from, and their evaluation.

    Parameters
    ----------
    system : LagrangianSystem
        The system (:func:`singularities` makes one per system signature and context).
    factors : list of (sympy expression, str)
        Each factor with a phrase saying where it comes from.
    """

    def __init__(self, system: LagrangianSystem, factors: Sequence[tuple[sympy.Expr, str]],
                 touching: Sequence[tuple[sympy.Expr, str, sympy.Expr]] = (),
                 blocks: Sequence[Sequence[int]] = ()) -> None:
        self.system = system
        self.blocks = [list(b) for b in blocks]
        """The diagonal blocks of M (lists of coordinate indices) beyond
        :data:`DETERMINANT_DOF` coordinates whose entries move: shown positive definite
        along each step's path (:meth:`block_failure`)."""
        self._block_f: Any = None
        self.factors = [f for f, _ in factors]
        self.origins = [w for _, w in factors]
        touching = [(*x, True)[:4] for x in touching]     # (factor, origin, bound, quadratic)
        self.touching = [x[0] for x in touching]
        self.touching_origins = [x[1] for x in touching]
        ctx = system.ctx
        bound = max((x[2] for x in touching), default=sp.Integer(0))   # ||H/2||, rational
        self.touching_bound = ctx.num(str(bound))
        """An upper bound of ||H/2|| over the touching factors: a factor f >= 0 at q0 cannot
        reach 0 within ``|q - q0| <= D`` while ``|f(q0)| > touching_bound D^2`` (sqrt f is
        Lipschitz with constant sqrt ||H/2||: exactly for a quadratic f, and for any f >= 0
        since ``|grad f|^2 <= 2 ||H|| f``)."""
        self.touching_roots = [None if x[3] else ctx.sqrt(ctx.num(str(x[2])))
                               for x in touching]
        """Per touching factor: None for a quadratic one (:meth:`passes_zero` is exact along
        a chord), else sqrt of its ||H/2|| bound (:meth:`reaches_zero`)."""
        self._g = self._chord = None
        self._reach: dict = {}
        x = set(system.coords) | {TIME}
        self.uses_velocity = any(f.has(*system.velocity_symbols) for f in self.factors)
        self.uses_time = any(f.has(TIME) for f in self.factors)
        self._free = x
        self._f = None

    def __len__(self):
        return len(self.factors)

    @property
    def exprs_args(self) -> tuple[list[Any], list[sympy.Expr]]:
        """(argument groups, expressions): ``([t], q, v, params) -> [factors]``."""
        S = self.system
        return [[TIME], S.coords, S.velocity_symbols, S.param_symbols], list(self.factors)

    def values(self, t: NumberLike, q: VectorLike, v: VectorLike) -> list[Real]:
        """The factors at (t, q, v) (v is not read by factors without velocities).

        Parameters
        ----------
        t : number
            Time.
        q : sequence of numbers
            Positions.
        v : sequence of numbers
            Velocities (anything of length n when :attr:`uses_velocity` is False).

        Returns
        -------
        list
            One number of the system's context per factor.
        """
        if self._f is None:
            with cbackend.kernels_of(self.system.name):   # a kernel that stays in Python names it
                self._f = compile_exprs(*self.exprs_args, self.system.ctx, "singular_factors")
        return self._f([t], q, v, self.system.param_values)

    @sticky                     # the driver's hot loop, inside solve's precision
    def touching_values(self, t: NumberLike, q: VectorLike, qa: VectorLike | None = None
                        ) -> list[Real]:
        """The :attr:`touching` factors at (t, q): quadratic factors of the positions that
        reach zero without changing sign (``x^2 + y^2``), whose zero a step can pass through
        (:meth:`passes_zero`); then, one generated function, ``|q - qa|^2`` (qa None: q)."""
        if self._g is None:
            S = self.system
            start = [sp.Dummy(f"a{i}") for i in range(len(S.coords))]
            exprs = list(self.touching) + [sum((c - a) ** 2 for a, c in zip(start, S.coords))]
            with cbackend.kernels_of(S.name):
                self._g = compile_exprs([[TIME], start, S.coords, S.param_symbols], exprs,
                                        S.ctx, "touching_factors")
        return self._g([t], q if qa is None else qa, q, self.system.param_values)

    @sticky                     # the driver's hot loop, inside solve's precision
    def path_reach(self, weights: Sequence[Real], shifts: Sequence[bool],
                   coeffs: Sequence[VectorLike], q: VectorLike) -> Real:
        """``sum_i weights_i |coeffs_i - [shifts_i] q|^2``: one generated function per number of
        coefficient vectors and shifts (the bound of a trial path's distance from q)."""
        key = tuple(shifts)
        f = self._reach.get(key)
        if f is None:
            S, n = self.system, len(self.system.coords)
            w = [sp.Dummy(f"w{i}") for i in range(len(key))]
            cs = [[sp.Dummy(f"c{i}_{k}") for k in range(n)] for i in range(len(key))]
            x = [sp.Dummy(f"x{k}") for k in range(n)]
            expr = sum(wi * sum((c - (xk if shift else 0)) ** 2 for c, xk in zip(ci, x))
                       for wi, ci, shift in zip(w, cs, key))
            with cbackend.kernels_of(S.name):
                f = self._reach[key] = compile_exprs([w, *cs, x], [expr], S.ctx, "path_reach")
        return f(weights, *coeffs, q)[0]

    @sticky                     # the driver's hot loop, inside solve's precision
    def chord_values(self, ta: NumberLike, tb: NumberLike, qa: VectorLike, qb: VectorLike
                     ) -> list[Real]:
        """The :attr:`touching` factors at the end (tb, qb) of a chord, then at its midpoint
        ((ta + tb)/2, (qa + qb)/2): one generated function."""
        if self._chord is None:
            S = self.system
            ends = [sp.Dummy(f"a{i}") for i in range(len(S.coords))]
            ta_, tb_ = sp.Dummy("ta"), sp.Dummy("tb")
            mid = {TIME: (ta_ + tb_) / 2, **{c: (a + c) / 2 for a, c in zip(ends, S.coords)}}
            exprs = ([f.subs(TIME, tb_) for f in self.touching]
                     + [f.subs(mid, simultaneous=True) for f in self.touching])
            with cbackend.kernels_of(S.name):
                self._chord = compile_exprs([[ta_, tb_], ends, S.coords, S.param_symbols], exprs,
                                            S.ctx, "touching_chord")
        return self._chord([ta, tb], qa, qb, self.system.param_values)

    @staticmethod
    @sticky
    def passes_zero(f0: Real, fm: Real, f1: Real, eps: Real) -> bool:
        """Whether the parabola through (0, f0), (1/2, fm), (1, f1) -- a factor at the two
        nodes of a step and at its chord midpoint, exact for a factor quadratic in q along
        the chord (a squared distance) -- reaches zero inside the step, to the rounding of
        the three values (16 eps their sum); f0, f1 of one sign."""
        f0, fm, f1 = (x if f0 > 0 or f1 > 0 else -x for x in (f0, fm, f1))   # as if >= 0
        if 4 * fm > f0 + f1:    # at a zero inside, fm = (sqrt f0 - sqrt f1)^2 / 4: not so
            return False
        a = 2 * (f0 + f1) - 4 * fm           # f(s) = f0 + b s + a s^2
        b = 4 * fm - 3 * f0 - f1
        if not a > 0 or not (0 < -b < 2 * a):              # no minimum inside the step
            return False
        return f0 - b * b / (4 * a) <= 16 * eps * (abs(f0) + abs(fm) + abs(f1))

    @sticky
    def reaches_zero(self, i: int, f0: Real, fm: Real, f1: Real, chord2: Real, eps: Real) -> bool:
        """Whether touching factor ``i`` can reach zero along a chord of squared length
        ``chord2``, given its values at the ends and midpoint: :meth:`passes_zero` (exact) for
        a quadratic factor; for another (``1 - cos q``), ``sqrt(abs(f))`` is Lipschitz along
        the chord with constant c = sqrt(||H/2|| chord2), so the chord is clear when the three
        points' cones cover it, ``sqrt(abs(f0)) + sqrt(abs(fm)) > c/2`` and ``sqrt(abs(fm)) +
        sqrt(abs(f1)) > c/2`` (with 16 eps to spare); else it may pass through the zero and is
        refused (it comes within about a quarter of its length of it, which the step does not
        resolve)."""
        root = self.touching_roots[i]
        if root is None:
            return self.passes_zero(f0, fm, f1, eps)
        sqrt = self.system.ctx.sqrt
        half: Any = root * sqrt(chord2) * (1 + 16 * eps) / 2
        r0, rm, r1 = (sqrt(abs(x)) for x in (f0, fm, f1))
        return not (r0 + rm > half and rm + r1 > half)

    @staticmethod
    @sticky                     # comparisons only, after every step: no entry-point wrapper
    def signs(values: Sequence[Real]) -> list[int]:
        """-1, 0 or +1 for each value (0 also for nan: no sign to keep)."""
        return [1 if x > 0 else (-1 if x < 0 else 0) for x in values]

    @staticmethod
    @sticky
    def crossed(values: Sequence[Real], signs: list[int]) -> int | None:
        """The index of the first value whose sign differs from ``signs`` (kept signs; a 0
        in ``signs``, a list then, takes the value's sign once it has one), or None.
        ``values`` may hold several points' factors one after the other (len(signs) each):
        the index is then that of the value in ``values``."""
        m = len(signs)
        for i, x in enumerate(values):
            s = signs[i % m]
            if s == 0:
                signs[i % m] = 1 if x > 0 else (-1 if x < 0 else 0)
            elif not (x > 0 if s > 0 else x < 0):
                return i
        return None

    def describe_touch(self, i: int, values: Sequence[Real]) -> str:
        """A sentence naming touching factor ``i`` and its values at the step's nodes and
        chord midpoint."""
        ctx = self.system.ctx
        return (f"{self.touching[i]} (from {self.touching_origins[i]}) is "
                f"{', '.join(ctx.to_str(x, 5) for x in values)} at the step's start, chord "
                "midpoint and end: the step passed through its zero, a singularity of the system")

    def describe(self, i: int, value: Number) -> str:
        """A sentence naming factor ``i`` (modulo their number), where it comes from and its
        value."""
        ctx = self.system.ctx
        i %= len(self.factors)
        return (f"{self.factors[i]} (from {self.origins[i]}) changed sign to "
                f"{ctx.to_str(value, 5)}: the step crossed a singularity of the system")

    def _block_kernel(self) -> tuple[Any, Any, list[Any]]:
        """(ball context, f, parameter balls): ``f([t], q, params)`` gives the upper triangles
        of :attr:`blocks`, row by row, in balls (one generated function)."""
        if self._block_f is None:
            from mpvi.numbers.arb import ArbContext
            S = self.system
            mass = sp.Matrix(S.mass_expr) if S.mass_expr is not None else sp.Matrix(S._Lvv)
            exprs = [mass[b[i], b[k]] for b in self.blocks for i in range(len(b))
                     for k in range(i, len(b))]
            balls = ArbContext(BLOCK_DIGITS)
            with cbackend.kernels_of(S.name):
                f = compile_exprs([[TIME], S.coords, S.param_symbols], exprs, balls,
                                  "mass_blocks")
            self._block_f = (balls, f, [_ball(balls, x) for x in S.param_values])
        return self._block_f

    @sticky                     # the driver's loop, inside solve's precision
    def block_failure(self, segments: Sequence[tuple[NumberLike, VectorLike, NumberLike,
                                                     VectorLike]]) -> str | None:
        """Whether every block of :attr:`blocks` is positive definite along the segments
        (ta, qa, tb, qb) of a step's path: None, or a sentence naming the first block and
        piece where that could not be shown.

        Over the box that holds a piece (each coordinate the ball joining its ends, the
        time likewise) the block's entries are balls, so every matrix the block takes there
        is A = C + E with C the symmetric matrix of their midpoints and ``abs(E_ik) <= r_ik``
        their radii: ``lambda_min(A) >= lambda_min(C) - ||r||_F``, so A is positive definite
        where C - ``||r||_F`` I has a Cholesky factor, every pivot a ball above 0.  A piece
        that fails is halved, down to 2^-:data:`BLOCK_DEPTH` of its segment."""
        if not self.blocks:
            return None
        balls, f, params = self._block_kernel()

        def indefinite(t: Any, q: Sequence[Any]) -> int | None:
            entries = f([t], q, params)
            return _indefinite_block(self.blocks, [_ball(balls, x) for x in entries])

        with balls.active():
            # first the box holding the whole path: two balls a coordinate
            times = [x for seg in segments for x in (seg[0], seg[2])]
            coords = zip(*[x for seg in segments for x in (seg[1], seg[3])])
            if indefinite(_box(balls, times), [_box(balls, c) for c in coords]) is None:
                return None
            pieces = [((_ball(balls, ta), [_ball(balls, x) for x in qa]),
                       (_ball(balls, tb), [_ball(balls, x) for x in qb]), 0)
                      for ta, qa, tb, qb in segments]
            while pieces:
                (t0, q0), (t1, q1), depth = pieces.pop()
                k = indefinite(t0.union(t1), [a.union(b) for a, b in zip(q0, q1)])
                if k is None:
                    continue
                if depth == BLOCK_DEPTH:
                    return self._describe_block(k, t0.union(t1))
                mid = ((t0 + t1) / 2, [(a + b) / 2 for a, b in zip(q0, q1)])
                pieces += [((t0, q0), mid, depth + 1), (mid, (t1, q1), depth + 1)]
        return None

    def _describe_block(self, k: int, t: Any) -> str:
        """A sentence naming block ``k`` and the time ``t`` (a ball) where it failed."""
        S, block = self.system, self.blocks[k]
        names = [str(S.coords[i]) for i in block]
        if len(names) > 4:
            names = names[:2] + ["...", names[-1]]
        return (f"the mass matrix's block of {', '.join(names)} ({len(block)} coordinates) is "
                f"not shown positive definite on the step's path near t = {t.mid().str(6)}: "
                "the step reaches a singularity of the system (det M = 0) or comes too close "
                f"to one to tell (within 2^-{BLOCK_DEPTH} of a segment of its path); take a "
                "smaller h")


def _ball(balls: Any, x: Any) -> Any:
    """``x`` (a number of any context) as a ball of the context ``balls``."""
    if isinstance(x, arb):
        return x
    if isinstance(x, float):
        return arb(x)
    return balls.num(x)


def _box(balls: Any, values: Sequence[Any]) -> Any:
    """A ball holding every number of ``values`` (numbers of one context)."""
    if isinstance(values[0], arb):
        box = values[0]
        for x in values[1:]:
            box = box.union(x)
        return box
    return _ball(balls, min(values)).union(_ball(balls, max(values)))


def _indefinite_block(blocks: Sequence[Sequence[int]], entries: Sequence[Any]) -> int | None:
    """The index of the first block whose entries (upper triangles in balls, row by row)
    are not shown positive definite (:meth:`Singularities.block_failure`), or None."""
    at = 0
    for k, block in enumerate(blocks):
        n = len(block)
        C = [[arb(0)] * n for _ in range(n)]
        spread = arb(0)
        for i in range(n):
            for m in range(i, n):
                e = entries[at]
                at += 1
                if not e.is_finite():
                    return k
                C[i][m] = C[m][i] = arb(e.mid())
                r = arb(e.rad())
                spread += r * r if i == m else 2 * r * r
        shift = spread.sqrt()
        L = [[arb(0)] * n for _ in range(n)]
        for i in range(n):
            for m in range(i + 1):
                x = C[i][m] - sum((L[i][p] * L[m][p] for p in range(m)), arb(0))
                if i == m:
                    x -= shift
                    if not x > 0:
                        return k
                    L[i][i] = x.sqrt()
                else:
                    L[i][m] = x / L[m][m]
    return None


_FACTORS: dict = {}
"""The singular factors per (system signature, parameter values to 30 digits): the sympy
work is context-free, so a system bound to another context finds them again here."""


def _singular_factors(system, values):
    """([(factor, origin)], [(touching factor, origin, bound, quadratic)], [large block])
    of :func:`singularities`, the parameters in intervals around ``values`` (30-digit
    strings)."""
    q, v = list(system.coords), list(system.velocity_symbols)
    sources = [(system.lagrangian_expr, "L")]
    if system.mass_expr is not None:
        sources = [(system.potential_expr, "V")] + [(e, "M") for e in system.mass_expr]
        mass = sp.Matrix(system.mass_expr)
    else:
        mass = sp.Matrix(system._Lvv)
    if system.has_force:
        sources += [(e, "F") for e in system.force_expr]
    exprs, blocks = list(sources), []
    moving = set(q) | set(v) | {TIME}
    for e, where in sources:
        exprs += [(sp.diff(e, s), f"d{where}/d{s}") for s in q + v if e.has(s)]
    if not system.constant_mass:
        name = "det M" if system.mass_expr is not None else "det L_vv"
        for block in mass.connected_components():     # det M: the product of the blocks'
            sub = mass.extract(block, block)
            if not sub.free_symbols & moving:
                continue
            coords = ", ".join(str(q[i]) for i in block)
            if len(block) > DETERMINANT_DOF:
                if not sub.free_symbols & set(v):
                    blocks.append(block)          # shown definite along each step's path
                    continue
                warnings.warn(UnguardedSingularityWarning(
                    f"{system.name}: the mass matrix's block of {coords} ({len(block)} "
                    f"coordinates, more than {DETERMINANT_DOF}, reading the velocities) is "
                    "tested for positive definiteness at the nodes only: a determinant that "
                    "reaches zero between two nodes is not seen"), stacklevel=2)
                continue
            # a factor of a block's det is det M's: named so up to three degrees of
            # freedom (as before blocks), by its block beyond
            exprs.append((1 / _block_det(sub), name if system.dof <= 3 else
                          f"{name} (its block of {coords})"))
    from mpmath import iv
    env = {s: iv.mpf(x) for s, x in zip(system.param_symbols, values)}  # intervals around them
    exact = {s: sp.Rational(x) for s, x in zip(system.param_symbols, values)}
    found, touching, seen = [], [], set()
    for e, where in exprs:
        for base, what in _singular_bases(e):
            for f in _factors(base):
                if not (f.free_symbols & moving) or f in seen or -f in seen:
                    continue
                seen.add(f)
                kind = _quadratic_kind(f, q, exact)
                if kind is None:
                    kind = _interval_kind(f, env, q)
                if kind == "sign":
                    found.append((f, f"{what} in {where}"))
                elif kind != "never":
                    touching.append((f, f"{what} in {where}", *kind[1:]))
    return found, touching, blocks


_CACHE: dict = {}


@entry
def singularities(system: LagrangianSystem) -> Singularities:
    """The :class:`Singularities` of a mechanical system (cached per signature, parameter
    values and context).

    Parameters
    ----------
    system : LagrangianSystem
        The system.

    Returns
    -------
    Singularities
        Possibly empty.
    """
    found = system.__dict__.get("_singularities")
    if found is not None:                   # this system's, found before
        return found
    key = (system.ctx.key, system.signature, tuple(map(str, system.param_values)))
    found = _CACHE.get(key)
    if found is not None:
        system.__dict__["_singularities"] = found
        return found
    ctx = system.ctx
    text = ctx.decimal if getattr(ctx, "verified", False) else ctx.to_str  # a ball: its midpoint
    values = tuple(text(x, 30) for x in system.param_values)
    found = _FACTORS.get((system.signature, values))
    if found is None:
        found = _FACTORS[system.signature, values] = _singular_factors(system, values)
    result = _CACHE[key] = system.__dict__["_singularities"] = Singularities(system, *found)
    return result
