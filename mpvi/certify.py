"""Proven digits of a run: its steps walked again on Arb balls.

:func:`certify` takes a :class:`mpvi.Solution` and re-walks the run step by step with
the same method and the same step h in an :class:`mpvi.ArbContext`: the initial data
and h are the exact values the run used (its numbers, converted exactly), the system's
parameters the tightest balls of the values it was given.  An explicit step is simply
evaluated on balls; an implicit one is proven by the parametric Krawczyk test
(:func:`mpvi.arb.krawczyk`: a unique solution of the step equations in a ball, for
every state in the previous ball).  The balls so carried enclose the method's exact
discrete trajectory from those data -- rounding excluded -- at every node.

Each saved computed state is then compared with its enclosure: the distance bounds the
error of the printed number against the exact discrete trajectory, and the proven digits
of each component are ``-log10(|computed - enclosure|_upper / scale)`` (``scale`` the
state's largest component, at least 1; 0 where the enclosure is wider than ``scale``).
A computed state farther from its enclosure than
the run's own round-off could take it -- the Newton tolerance of its context
(:func:`mpvi.newton.tolerance`, 2^10 eps) per step, summed over the steps so far, relative
to ``scale`` -- is judged by its own step: the step from the run's saved state one node
before, on balls.  Within one step's allowance of that, the step is right and the gap is
the run's own rounding carried by the flow (on a chaotic orbit it grows like
exp(lambda t), faster than the sum); the proven digits say how much is left.  Otherwise (or
where the node before is not saved) it is a wrong step: :class:`WrongStepError` names it.  A step whose proof
fails (a ball too wide, a Jacobian not invertible on the ball) ends the certificate
there: it says which step and why, and claims nothing from there on.

The state set is carried by Lohner's method (Lohner 1987; the mean-value form in a moving
basis, :func:`_lohner`): the step from the midpoint on balls plus the step's Jacobian on
balls (forward derivatives, :class:`mpvi.arb._DualContext`; an implicit step
differentiated by the implicit function theorem over its Krawczyk ball) times the set in
its own basis.  The basis is the midpoint of the Jacobian times the previous basis (the
parallelepiped form: nothing wraps), orthonormalized when its condition grows
(:data:`BASIS_CONDITION`; on a saddle).  ``propagation="box"`` carries plain boxes instead
(the step on the previous balls): their radii grow by wrapping and by the lost dependency
between an implicit step's output and the previous state, 2.4 (midpoint) to 7 (Simpson)
times per step measured on the pendulum at h = 1/5, where Lohner's grow about linearly in
time.  ``Certificate.widths`` records the growth.

**Reused Jacobian.**  A step Jacobian enclosed over a box Y* is valid for every step whose
set lies in Y*: after the first step, a hull of the run's own states (and a margin,
:data:`HULL_MARGIN`) is tried, with the step's Jacobian over it and its image of the
hull's centre, both over every time of the run and at twice the working digits
(:func:`_hull`).  Where both are as narrow as a step's own (:data:`HULL_WIDENING`; an
affine step map such as every method on a linear constant-coefficient system), each step
inside Y* is Phi(c) + [DPhi(Y*)] (y - c), a few ball-matrix products, by the mean-value
theorem; each step checks that its set lies inside, and one that leaves it takes its own
Jacobian and a hull over both is tried.  An implicit step's equations are proven over the
whole hull by one Krawczyk test, which must hold the root of the centre's (the same root).
A nonlinear step (its Jacobian varies over the hull) or one that depends on the time (its
image of the centre over every time is wide) is refused: every step differentiates its
own box.  ``Certificate.jacobians``
counts both kinds; ``certify(..., reuse=False)`` turns the hull off.

Cost (``benchmarks/certify_cost.py``: CPU time at 64 digits, ratio to the plain run with
its compiled MPFR kernels, before -> after the reused Jacobian, the parallelepiped basis
and the dual step's Krawczyk test on balls): axioms2024's linear pendulum (an affine step,
one hull Jacobian) 15-33x -> 6x at 300 steps, 17-35x -> 5x at 4000 (midpoint and Gauss
on it 9x -> 1.3x and 0.7x: the walk is cheaper than their Newton iterations), and its
Table 2 certified in 2.8-3.3x the plain reproduction's wall time in four runs (before 87 s
beside 9.6 s, after 17-22 s beside 6.1-6.8 s; proven digits 54 -> 57 at the fewest, none
fewer); the nonlinear pendulum,
double pendulum and Lagrange top (each step its own Jacobian) 9-29x -> 8-26x, top2025
Fig. 11's 39 runs 17.4 s -> 11.4 s of certified walks.  With the compiled Arb kernels
too, whole reproductions plain against ``--certify`` in one process
(``certify_cost.py --reproductions``): Table 2 3.3x, Fig. 11 4.4x.  The steps run the generated
kernels on balls and on duals, compiled against Arb where a C compiler is available
(:mod:`mpvi.carb`: the same balls as the Python kernels, bit for bit); the point step's Newton iteration
starts from the run's own solution of the step (its q_{j+1} and internal coefficients,
when every node was saved), the Jacobian walk's Krawczyk test is centred at the point
step's centre with its preconditioner and runs on the balls of the values
(:func:`mpvi.arb._krawczyk_dual`: no derivative carried through the test; F_y from one
residual on duals).  Those are only starts and shortcuts of evaluation: any centre and
any preconditioner are valid, the test decides.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from flint import arb, arb_mat, fmpq

from .arb import GUARD_BITS, ArbContext, KrawczykError, _Dual, _DualContext, _hand_over, _watch
from .context import PrecisionError, _mpfr_type
from .linalg import NotPositiveDefiniteError, SingularMatrixError
from .newton import tolerance
from .precision import entry, entry_class
from .schemes import get_method

if TYPE_CHECKING:
    from .mechanics import LagrangianSystem
    from .solution import Solution


class WrongStepError(ArithmeticError):
    """A computed state lies outside the proven enclosure of its step.

    Farther than the run's round-off allows (module doc of :mod:`mpvi.certify`): the
    step computed a wrong value.  An ``ArithmeticError``.

    Parameters
    ----------
    message : str
        Which step, which component, how far.
    step : int
        Index j of the step j -> j+1 that produced the state.
    """

    def __init__(self, message: str, step: int) -> None:
        self.step = step
        super().__init__(message)


@entry_class
class Certificate:
    """The enclosures of a run's saved states and their proven digits (:func:`certify`).

    Made by :func:`certify`, which fills it point by point.

    Parameters
    ----------
    method : str
        The method's name.
    context : ArbContext
        The ball context of the walk.
    nodes : list of int
        The node index of each saved point.

    Attributes
    ----------
    method : str
        The method's name.
    context : ArbContext
        The ball context of the walk.
    nodes : list of int
        The node index of each saved point.
    t : list of flint.arb
        The saved times, as balls (of the points certified).
    q, y : list of numpy.ndarray
        The enclosures of the saved positions and of p or v (y None for a first-order
        system), for the points certified.
    digits : list of numpy.ndarray
        Per certified saved point, the proven digits of each component of (q, y) of the
        computed solution (module doc); ``numpy.inf`` for an exact value.
    widths : list of float
        Per certified saved point, the largest radius of the enclosure (the wrapping).
    failed_step : int or None
        The step j (j -> j+1) whose proof failed, or None.
    why : str or None
        Why it failed.
    jacobians : list of int
        Lohner's method: [hull Jacobians made, steps by a hull Jacobian, steps by their
        own Jacobian] (:func:`certify`'s ``reuse``).
    """

    def __init__(self, method: str, context: ArbContext, nodes: list[int]) -> None:
        self.method, self.context, self.nodes = method, context, nodes
        self.t: list[Any] = []
        self.q: list[Any] = []
        self.y: list[Any] = []
        self.digits: list[Any] = []
        self.widths: list[float] = []
        self.failed_step: int | None = None
        self.why: str | None = None
        self.jacobians = [0, 0, 0]

    @property
    def complete(self) -> bool:
        """Whether every saved point is certified."""
        return self.failed_step is None and len(self.t) == len(self.nodes)

    @property
    def min_digits(self) -> list[float]:
        """The smallest proven digits per certified saved point."""
        return [float(np.min(d)) if len(d) else math.inf for d in self.digits]

    def __getstate__(self) -> dict[str, Any]:
        """The state with every ball as exact integers (a ball does not pickle)."""
        state = dict(self.__dict__)
        state["t"] = [_pack(b) for b in self.t]
        state["q"] = [[_pack(b) for b in v] for v in self.q]
        state["y"] = [None if v is None else [_pack(b) for b in v] for v in self.y]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state["t"] = [_unpack(b) for b in state["t"]]
        state["q"] = [np.array([_unpack(b) for b in v], dtype=object) for v in state["q"]]
        state["y"] = [None if v is None else np.array([_unpack(b) for b in v], dtype=object)
                      for v in state["y"]]
        self.__dict__.update(state)

    def __repr__(self) -> str:
        done = f"{len(self.t)}/{len(self.nodes)} saved points certified"
        digits = self.min_digits
        least = f", at least {min(digits):.1f} digits" if digits else ""
        fail = f"; step {self.failed_step} not proven: {self.why}" if self.why else ""
        return f"<Certificate {self.method}: {done}{least}{fail}>"


def _pack(b):
    """A finite ball as exact integers ((mantissa, exponent) of its midpoint and radius),
    read at a precision that holds every bit of the midpoint."""
    import flint
    caller = flint.ctx.prec
    flint.ctx.prec = max(caller, int(b.bits()) + 2)
    try:
        (m, e), (rm, re) = b.mid().man_exp(), b.rad().man_exp()
    finally:
        flint.ctx.prec = caller
    return int(m), int(e), int(rm), int(re)


def _unpack(t):
    return arb((t[0], t[1]), (t[2], t[3]))


def _saved_nodes(sol: Solution) -> list[int]:
    steps, saveat = sol.steps, sol.saveat
    if saveat is None:
        return list(range(steps + 1))
    if isinstance(saveat, (int, np.integer)) and not isinstance(saveat, bool):
        k = int(saveat)
        nodes = list(range(0, steps + 1, k))
        return nodes if nodes[-1] == steps else nodes + [steps]
    raise ValueError("certify: the solution saved times between nodes (saveat = a list of "
                     "times, through the dense output); only node values are certified: solve "
                     "with saveat=None or an integer")


@entry
def certify(solution: Solution, dps: int | None = None, propagation: str = "lohner", *,
            reuse: bool = True) -> Certificate:
    """Enclose every saved state of a run on Arb balls and prove its digits.

    Module doc of :mod:`mpvi.certify`: the run re-walked with its method and h on
    balls (Arb: Johansson 2017), implicit steps proven by the parametric Krawczyk test
    (Krawczyk 1969; Rump 1983), box propagation (Moore 1966).

    Parameters
    ----------
    solution : Solution
        A run of :func:`mpvi.solve` (saved at nodes: ``saveat`` None or an integer).
    dps : int, optional
        The working digits of the balls (plus :data:`mpvi.arb.GUARD_BITS`); default the
        run's.  More digits narrow the enclosures: the widths start at the working
        precision and grow by wrapping.
    propagation : {"lohner", "box"}, default "lohner"
        How the balls are carried from step to step: Lohner's method (the mean-value
        form in a moving orthonormal basis, Lohner 1987), or the plain box of balls (each
        step on the previous balls; wraps much faster).
    reuse : bool, default True
        Lohner's method only: reuse one step Jacobian enclosed over a hull of the run's
        states for every step inside it, where it is as narrow as a step's own (an
        affine step map: a linear system; module doc); False differentiates every step
        on its own box.  Either way the enclosures are proven.

    Returns
    -------
    Certificate
        The enclosures, the proven digits per component and per saved point, and the
        first step whose proof failed (with why), if any.

    Raises
    ------
    TypeError
        Not a solution, or a solution without its problem (read from a file).
    ValueError
        A solution saved between nodes, one of a context that is not multiprecision, or
        one of a first-order system; an unknown ``propagation``.
    WrongStepError
        A computed state outside its enclosure beyond the run's round-off, naming the
        step.
    """
    from .solution import Solution
    if not isinstance(solution, Solution):
        raise TypeError(f"certify takes an mpvi.Solution, got {type(solution).__name__}")
    problem = solution.problem
    if problem is None:
        raise TypeError("certify: the solution has no problem (read from a file): solve again")
    run_ctx = solution.ctx
    if not run_ctx.is_mp:
        raise ValueError(f"certify: a run in the {run_ctx.name} context is not certified "
                         "(float64 rounding: use a gmp or mp context)")
    if problem.system.first_order:
        raise ValueError("certify: first-order systems are not certified yet (their field "
                         "has no Arb binding); a mechanical system's run is")
    nodes = _saved_nodes(solution)
    if propagation not in ("lohner", "box"):
        raise ValueError(f"certify: propagation must be 'lohner' or 'box', got {propagation!r}")
    if not isinstance(reuse, bool):
        raise TypeError(f"certify: reuse must be True or False, got {reuse!r}")
    ctx = ArbContext(run_ctx.dps if dps is None else dps)
    method = get_method(solution.method)
    cert = Certificate(method.name, ctx, nodes)
    ctx.activate()
    h = ctx.lift(solution.h)
    t0 = ctx.lift(problem.t0)
    system = _exact_params(cast("LagrangianSystem", problem.system), ctx)
    q, y = _initial(problem, system, method.state, ctx)
    args = {k: v for k, v in solution._prepare_args.items() if k != "newton"}
    stepper = method.prepare(system, h, ctx, **args)
    walk = (_box(stepper, q, y, t0, h, solution.steps) if propagation == "box" else
            _lohner(stepper, method, solution, args, ctx, q, y, t0, h, solution.steps, reuse,
                    cert.jacobians))
    saved = {k: i for i, k in enumerate(nodes)}
    # a ball's radius from exact data is the rounding of its arithmetic at the working
    # precision (to first order proportional to the unit): times this, at the run's
    rounds = ctx.lift(run_ctx.eps) / ctx.eps

    def local(i, k):
        """The step k-1 -> k from the run's own saved state at node k-1, on balls, and
        per component the step's rounding at the run's precision (the ball's radius times
        ``rounds``: a running error bound of the step's own arithmetic, e.g. a GBS
        tableau's); None where node k-1 is not saved or the step fails there."""
        before = saved.get(k - 1)
        if before is None:
            return None
        qb = _arr([_exact(x, ctx) for x in solution.q[before]])
        yb = None if solution.y is None else _arr([_exact(x, ctx) for x in solution.y[before]])
        try:
            r = stepper(t0 + (k - 1) * h, qb, yb, None)
        except _STEP_FAILURES:
            return None
        step = _state(r.q, r.y)
        return step, [arb(b.rad()) * rounds for b in step]

    # the run's round-off per step, relative to the state's size: the Newton tolerance of
    # its context, and the first step's own rounding at the run's precision (the largest
    # of the two; module doc)
    allowance = ctx.lift(tolerance(run_ctx))      # exactly, a ball whatever the run's context
    first = local(None, 1) if solution.steps else None
    if first is not None:
        size = ctx.one
        for c in _state(q, y):
            size = size.max(abs(c))
        for r in first[1]:
            allowance = allowance.max(r / size)

    for k, q, y, failure in walk:
        if failure is not None:
            cert.failed_step, cert.why = k - 1, failure
            return cert
        i = saved.get(k)
        if i is not None:
            _record(cert, solution, i, k, t0 + k * h, q, y, ctx, run_ctx, allowance, local)
    return cert


_STEP_FAILURES = (KrawczykError, SingularMatrixError, NotPositiveDefiniteError, ArithmeticError)


def _box(stepper, q, y, t0, h, steps):
    """Box propagation: the step on the previous balls.  Yields (node, q, y, None), or
    (node, None, None, why) for the node whose step failed."""
    yield 0, q, y, None
    carry = None
    for j in range(steps):
        try:
            r = stepper(t0 + j * h, q, y, carry)
        except _STEP_FAILURES as exc:
            yield j + 1, None, None, str(exc)
            return
        q, y, carry = r.q, r.y, r.carry
        if not all(b.is_finite() for b in _state(q, y)):
            yield j + 1, None, None, "the enclosure is not finite (the balls grew unbounded)"
            return
        yield j + 1, q, y, None


HULL_MARGIN = Fraction(1, 8)
"""How far the hull of a reused step Jacobian reaches beyond the run's own states, as a
fraction of their range per component (room for the nodes between saved points).  Any
hull is valid: each step checks that its set lies inside, and makes a new hull when it
does not (:func:`_lohner`)."""

BASIS_CONDITION = 2 ** (GUARD_BITS // 4)
"""Lohner's basis is the midpoint of B = [DPhi] A (the parallelepiped form: Q^-1 B is
then the identity up to B's radii, nothing wraps) while its condition estimate
max|Q| max|Q^-1| (checked every d steps, d the state's dimension) stays below this, a quarter of the guard bits (the enclosure's rounding is
amplified by up to that much); beyond, B's columns are orthonormalized (QR: a conditioned
basis, at the price of some wrapping at that step).  Any invertible point matrix is
valid: a choice of accuracy, never of a proof."""

HULL_PRECISION = 2
"""A hull's Jacobian and its image of the centre are computed with this many times the
walk's working digits (:func:`_hull`)."""

HULL_WIDENING = 2
"""How much wider, relative to its size, a hull's Jacobian (and its image of the hull's
centre over every time of the run) may be than a step's own Jacobian over its box (and the
image of the centre at one time), each at least the context's rounding unit: beyond it the hull is refused and every step
differentiates its own box (a nonlinear step: its Jacobian varies over the hull).  An
affine step's hull Jacobian is as narrow as a step's own, only rounded otherwise.  A
factor of rounding only, never of a proof."""


def _lohner(stepper, method, solution, args, ctx, q, y, t0, h, steps, reuse, counts):
    """Lohner's method (Lohner 1987; the mean-value form with a moving basis): the state
    set is y^ + A R (y^ a point, A an invertible point matrix, R a ball vector containing
    0).  A step maps it into

        Phi(y^) + [DPhi(Y)] A R,    Y = the balls of y^ + A R,

    (mean-value theorem, component by component), Phi(y^) the step from the point on balls
    and [DPhi(Y)] the balls of the step's Jacobian over Y (forward differentiation on
    balls, :class:`mpvi.arb._DualContext`; an implicit step by the implicit function
    theorem).  With B = [DPhi(Y)] A, the new basis is Q = mid(B) (orthonormalized when
    its condition passes :data:`BASIS_CONDITION`), and
    R <- (Q^-1 B) R + Q^-1 (Phi(y^) - mid Phi(y^)): the rotation of the set is carried by
    Q, not wrapped into a box.  The enclosure of the state is y^ + Q R, intersected with
    the Jacobian step's own (box) image when the step made one.

    With ``reuse``, a Jacobian enclosed once over a hull box Y* of the run's states and
    every time of the run, with the step's image Phi(c) of the hull's centre c over every
    time (:func:`_hull`), serves each step whose box lies in Y*: by the mean-value theorem
    Phi(t, y) lies in Phi(c) + [DPhi(Y*)] (y - c) for every y in Y* and t in the run, so
    the step is a few ball-matrix products.  The hull is refused (and every step
    differentiates its own box) when its Jacobian or its image of c is relatively wider
    than :data:`HULL_WIDENING` times a step's own (a nonlinear system: the Jacobian varies
    over the hull; a step that depends on the time); a step whose box leaves Y* makes its
    own Jacobian and a new hull is tried over both.  An implicit step's box test must hold
    the point step's root in its Krawczyk ball (:meth:`mpvi.arb._DualContext.verified_solve`:
    the mean-value form joins the two), the hull's that of its centre.  ``counts``
    (a list of three ints) accumulates the hulls made, the steps by a hull Jacobian and the
    steps by their own."""
    dctx = _DualContext(ctx.dps)
    dsystem = _exact_params(cast("LagrangianSystem", solution.problem.system), ctx, dctx)
    dstepper = method.prepare(dsystem, dctx.num(h), dctx, **args)
    n = len(q)
    state = _state(q, y)
    d = len(state)
    yhat = arb_mat([[b] for b in state]).mid()
    A = arb_mat(d, d, [1 if i == j else 0 for i in range(d) for j in range(d)])
    R = arb_mat([[b] for b in state]) - yhat
    hull, tried = None, not reuse
    yield 0, q, y, None
    carry = None
    for j in range(steps):
        box = yhat + A * R
        if hull is not None and hull.Y.contains(box):
            J = hull.J
            image = hull.Pc + J * (yhat - hull.c)
            boxed = None
            counts[1] += 1
        else:
            t = t0 + j * h
            yh = _column(yhat)
            bx = _column(box)
            _watch(ctx, _run_guess(stepper, solution, j, ctx))
            try:
                point = stepper(t, _arr(yh[:n]), _arr(yh[n:]) if y is not None else None, carry)
                # the box's implicit equations start Newton from the point step's centres
                _hand_over(ctx, dctx)
                seeds = [_Dual(b, tuple(ctx.one if i == k else ctx.zero for i in range(d)))
                         for k, b in enumerate(bx)]
                r = dstepper(dctx.num(t), _arr(seeds[:n]), _arr(seeds[n:]) if y is not None
                             else None, None)
            except _STEP_FAILURES as exc:
                _hand_over(ctx, None)
                yield j + 1, None, None, str(exc)
                return
            carry = point.carry
            counts[2] += 1
            image = arb_mat([[b] for b in _state(point.q, point.y)])
            duals = [dctx.num(v) for v in _state(r.q, r.y)]
            J = arb_mat([[u.d[i] if u.d else ctx.zero for i in range(d)] for u in duals])
            boxed = [u.v for u in duals]
            if not tried:
                base = box if hull is None else _union(hull.Y, box)
                hull = _hull(method, solution, args, ctx, base, J, n, y is None)
                tried = hull is None
                counts[0] += hull is not None
        B = J * A
        yhat = image.mid()
        Q = B.mid()
        Qinv = _inverse(Q)
        # the condition estimate every d steps (it grows by about cond(DPhi) per step)
        if Qinv is None or (j % d == 0 and _condition(Q, Qinv) > BASIS_CONDITION):
            Q = _orthonormal(B, d)
            Qinv = _inverse(Q)
            if Qinv is None:
                yield j + 1, None, None, "Lohner's basis became singular"
                return
        R = (Qinv * B) * R + Qinv * (image - yhat)
        A = Q                     # the set is now yhat + Q R: the next step starts from it
        enclosure = _column(yhat + Q * R)
        if boxed is not None:
            enclosure = [_meet(a, b) for a, b in zip(enclosure, boxed)]
        if not all(b.is_finite() for b in enclosure):
            yield j + 1, None, None, "the enclosure is not finite (the balls grew unbounded)"
            return
        q, y = _arr(enclosure[:n]), (_arr(enclosure[n:]) if y is not None else None)
        yield j + 1, q, y, None


class _Hull:
    """A hull box ``Y`` (ball column), its centre ``c`` (a point column), the step's image
    ``Pc`` of c over every time of the run and the step's Jacobian ``J`` over Y and every
    time: Phi(t, y) in Pc + J (y - c) for every y in Y."""

    __slots__ = ("Y", "c", "Pc", "J")

    def __init__(self, Y, c, Pc, J):
        self.Y, self.c, self.Pc, self.J = Y, c, Pc, J


def _hull(method, solution, args, ctx, base, own_J, n, first_order):
    """A :class:`_Hull` over the run's saved states and ``base`` (a ball column), enlarged
    by :data:`HULL_MARGIN` of each component's range (and by the run's rounding unit of its
    size), with the step's image of its centre and its Jacobian over it, both for every
    time of the run; None if a step on it fails, or if the hull's Jacobian or its image
    of the centre is relatively wider (:func:`_accuracy`) than :data:`HULL_WIDENING` times
    a step's own Jacobian over its box (``own_J``) or the image of the centre at the first
    time alone (a step that depends on the time).  Computed at :data:`HULL_PRECISION`
    times the working digits (made once, it may cost more): its images then add no more
    than the working precision's rounding to a step's."""
    problem = solution.problem
    hctx = ArbContext(ctx.dps * HULL_PRECISION)
    dctx = _DualContext(hctx.dps)
    system = cast("LagrangianSystem", problem.system)
    hctx.activate()
    h = cast(arb, hctx.lift(solution.h))
    t0 = cast(arb, hctx.lift(problem.t0))
    span = t0.union(t0 + h * solution.steps)            # every time of the run
    d = base.nrows()
    lo, hi = [b.lower() for b in _column(base)], [b.upper() for b in _column(base)]
    for k, (a, b) in enumerate(_run_states(solution, n, first_order, hctx)):
        lo[k], hi[k] = lo[k].min(a), hi[k].max(b)
    margin = hctx.num(HULL_MARGIN)
    unit = ctx.eps * 2 ** GUARD_BITS
    cells = []
    for a, b in zip(lo, hi):
        # the margin, and the run's own rounding unit of the component's size (a component
        # that does not move: its balls still grow)
        room = (b - a) * margin + unit * a.abs_upper().max(b.abs_upper()).max(ctx.one)
        cells.append((a - room).union(b + room))
    Y = arb_mat([[b] for b in cells])
    c = Y.mid()
    cs = _column(c)
    seeds = [_Dual(b, tuple(arb(1) if i == k else arb(0) for i in range(d)))
             for k, b in enumerate(cells)]
    try:
        stepper = method.prepare(_exact_params(system, hctx), h, hctx, **args)
        dstepper = method.prepare(_exact_params(system, hctx, dctx), dctx.num(h), dctx,
                                  **args)
        _watch(hctx, None)
        point = stepper(span, _arr(cs[:n]), None if first_order else _arr(cs[n:]), None)
        # an implicit step: the hull's equations start from the centre's root, and their
        # Krawczyk ball must hold it (the same root: the mean-value form joins them)
        _hand_over(hctx, dctx)
        r = dstepper(dctx.num(span), _arr(seeds[:n]), None if first_order else
                     _arr(seeds[n:]), None)
        fixed = stepper(t0, _arr(cs[:n]), None if first_order else _arr(cs[n:]), None)
    except (*_STEP_FAILURES, PrecisionError, TypeError, ValueError):
        _hand_over(hctx, None)        # not made here: every step differentiates its own box
        return None
    finally:
        ctx.activate()
    Pc = arb_mat([[b] for b in _state(point.q, point.y)])
    duals = [dctx.num(v) for v in _state(r.q, r.y)]
    J = arb_mat([[u.d[i] if u.d else hctx.zero for i in range(d)] for u in duals])
    if not (_finite(Pc) and _finite(J)):
        return None
    P0 = arb_mat([[b] for b in _state(fixed.q, fixed.y)])
    if _accuracy(J, ctx) <= HULL_WIDENING * _accuracy(own_J, ctx) and \
            _accuracy(Pc, ctx) <= HULL_WIDENING * _accuracy(P0, ctx):
        return _Hull(Y, c, Pc, J)
    return None


def _finite(m):
    return all(v.is_finite() for v in m.entries())


def _accuracy(m, ctx):
    """The relative width of a ball matrix: its largest radius over its largest entry (at
    least the context's rounding unit), as an upper bound."""
    rad, size = arb(0), arb(0)
    for v in m.entries():
        rad, size = rad.max(arb(v.rad())), size.max(arb(v.abs_upper()))
    if not size > 0:
        return ctx.eps
    return (rad / size).max(ctx.eps).upper()


def _run_states(solution, n, first_order, ctx):
    """Per state component, the least and the largest of the run's saved values of it,
    exactly (as balls)."""
    rows = [solution.q] if first_order else [solution.q, solution.y]
    out = []
    for values in rows:
        for k in range(len(values[0])):
            column = [v[k] for v in values]
            out.append((ctx.lift(min(column)), ctx.lift(max(column))))
    return out


def _union(Y, box):
    return arb_mat([[a.union(b)] for a, b in zip(_column(Y), _column(box))])


def _exact_params(system, ctx, dctx=None):
    """``system`` on the balls of ``ctx`` (or on the duals of ``dctx`` over them), its
    parameters as the run had them, exactly: a value rounded to the run's digits is that
    binary number, one given exactly is enclosed at ``ctx``'s precision.  (Plain
    ``with_context`` refuses a number of the run's context in a context of more digits: a
    certificate at more digits than the run is of the same computation.)"""
    params = {k: ctx.lift(v) for k, v in system._params.items()}
    if dctx is None:
        return system.with_context(ctx, params=params)
    return system.with_context(dctx, params={k: dctx.num(v) for k, v in params.items()})


def _run_guess(stepper, solution, j, ctx):
    """The unknowns of step j as the run computed them (its q_{j+1} and internal
    coefficients, exactly), the first guess of the point step's Newton iteration; None where
    the run did not keep them all (saved nodes only, a stepper without slots).  Only a start:
    the Krawczyk test decides."""
    if solution.saveat is not None or not hasattr(stepper, "unknown"):
        return None
    internal = stepper._internal_rows
    if stepper.v1 is not None or (internal is not None and solution.internal is None):
        return None
    rows = iter([] if internal is None else solution.internal[j])
    guess = []
    for u in stepper.unknown:
        guess.extend(solution.q[j + 1] if u == stepper.q1 else next(rows))
    return [ctx.lift(x) for x in guess]


def _arr(values):
    return np.array(values, dtype=object)


def _mid(b):
    return arb(b.mid())


def _column(m):
    return m.entries()


def _meet(a, b):
    """The intersection of two enclosures of the same number (the tighter if one
    contains the other)."""
    try:
        return a.intersection(b)
    except ValueError:            # disjoint: impossible for two enclosures of one value
        raise ArithmeticError("two enclosures of one state component are disjoint") from None


def _inverse(Q):
    """The enclosure of the inverse of a point matrix, None if it is not provably
    invertible."""
    try:
        return Q.inv()
    except ZeroDivisionError:
        return None


def _condition(Q, Qinv):
    """max|Q| max|Q^-1| (an upper bound, a float): a cheap estimate of Q's condition."""
    big, inv = arb(0), arb(0)
    for x in Q.entries():
        big = big.max(abs(x))
    for x in Qinv.entries():
        inv = inv.max(x.abs_upper())
    return float((big * inv).upper())


def _orthonormal(B, d):
    """The midpoint of B with its columns orthonormalized: M = mid(B), its Gram matrix
    M^T M = L L^T (Cholesky on balls), Q = mid(M L^-T).  A point matrix, nearly
    orthogonal; any invertible point matrix is valid for Lohner's method, orthogonality
    keeps its inverse well conditioned.  Gram-Schmidt on the columns where a pivot of the
    Cholesky factorization is not provably positive (a nearly dependent B)."""
    M = B.mid()
    G = (M.transpose() * M).tolist()
    L = [[0] * d for _ in range(d)]
    for i in range(d):
        for k in range(i + 1):
            s = G[i][k]
            for m in range(k):
                s -= L[i][m] * L[k][m]
            if i == k:
                if not s > 0:
                    return _gram_schmidt(M, d)
                L[i][i] = s.sqrt()
            else:
                L[i][k] = s / L[k][k]
    try:
        return (M * arb_mat(L).transpose().inv()).mid()
    except ZeroDivisionError:
        return _gram_schmidt(M, d)


def _gram_schmidt(M, d):
    """The columns of the point matrix M orthonormalized by Gram-Schmidt on balls, then
    the midpoints."""
    cols = [[M[i, k] for i in range(d)] for k in range(d)]
    out: list[list[Any]] = []
    for c in cols:
        for u in out:
            dot = sum((x * y for x, y in zip(c, u)), arb(0))
            c = [x - dot * y for x, y in zip(c, u)]
        norm = sum((x * x for x in c), arb(0)).sqrt()
        out.append([arb((x / norm).mid()) for x in c])
    return arb_mat([[out[k][i] for k in range(d)] for i in range(d)])


def _initial(problem, system, state, ctx):
    """The initial (q, y) as balls: the run's numbers exactly; a momentum computed by the
    run from a given velocity is computed again on balls."""
    q = np.array([ctx.lift(x) for x in problem.q0], dtype=object)
    if problem.given == "y":
        return q, None
    if state == "qp" and problem.given == "v":
        v = np.array([ctx.lift(x) for x in problem.v0], dtype=object)
        return q, system.momentum(q, v, ctx.lift(problem.t0))
    if state == "qv" and problem.given == "p":
        p = np.array([ctx.lift(x) for x in problem.p0], dtype=object)
        return q, system.velocity(q, p, ctx.lift(problem.t0))
    given = problem.p0 if state == "qp" else problem.v0
    return q, np.array([ctx.lift(x) for x in given], dtype=object)


def _state(q, y):
    return list(q) + ([] if y is None else list(y))


def _record(cert, solution, i, k, t, q, y, ctx, run_ctx, allowance, local):
    """Compare saved point i (node k) with its enclosure: refuse a wrong step, else record
    the enclosure and the proven digits.

    A computed state farther from its enclosure than the allowance summed over the steps
    is judged by its own step where node k-1 is saved: ``local(i, k)``, the step from the
    run's saved state at k-1 on balls.  Within one step's allowance of it, the step is
    right and the gap is the run's rounding carried by the flow (on a chaotic orbit it
    grows like exp(lambda t), not k): the digits say so.  Otherwise, or where node k-1 is
    not saved, :class:`WrongStepError`."""
    balls = _state(q, y)
    computed = [_exact(x, ctx) for x in _state(solution.q[i], None if solution.y is None
                                               else solution.y[i])]
    scale = ctx.one
    for c in computed:
        scale = scale.max(abs(c))                 # exact: the largest |component|, or 1
    limit = allowance * k * scale
    size = _log10(scale, -1)
    gaps = [abs(c - b) for c, b in zip(computed, balls)]
    far = [n for n, gap in enumerate(gaps) if gap.lower() > limit]
    if far:
        judged = local(i, k)
        step, rounding = judged if judged is not None else (None, None)
        one = allowance * scale
        wrong = [n for n in far if judged is None or
                 abs(computed[n] - step[n]).lower() > one + rounding[n]]
        if wrong:
            n = wrong[0]
            if judged is not None:
                one = one + rounding[n]
            what = "q" if n < len(q) else ("p" if solution.state == "qp" else "v")
            index = n if n < len(q) else n - len(q)
            value = (solution.q[i] if n < len(q) else solution.y[i])[index]
            why = (f"and at least {_sci(abs(computed[n] - step[n]).lower())} from the step "
                   f"taken from the run's own node {k - 1}, beyond one step's allowance "
                   f"{_sci(one)} (the run's Newton tolerance and the step's rounding at the "
                   "run's precision)" if judged is not None else
                   f"beyond the run's round-off allowance {_sci(limit)} (node {k - 1} not "
                   "saved: the step cannot be judged alone)")
            raise WrongStepError(
                f"certify: step {k - 1} (node {k}) computed {what}[{index}] = "
                f"{run_ctx.to_str(value, 20)} outside its proven enclosure "
                f"{ctx.to_str(balls[n], 20)}: distance at least {_sci(gaps[n].lower())}, "
                + why, k - 1)
    digits = []
    widest = ctx.zero
    for gap, b in zip(gaps, balls):
        bound = gap.upper()
        digits.append(math.inf if bound == 0 else max(0.0, size - _log10(bound, 1)))
        widest = widest.max(b.rad())
    cert.t.append(t)
    cert.q.append(np.array(q, dtype=object))
    cert.y.append(None if y is None else np.array(y, dtype=object))
    cert.digits.append(np.array(digits, dtype=float))
    cert.widths.append(float(widest))


_LOG10_2 = math.log10(2)


def _log10(x, direction):
    """log10 of a positive exact ball, from its binary mantissa and exponent in floats,
    moved by 16 units of the float's last place up (``direction`` 1) or down (-1): a count
    of digits is reported, not computed with."""
    m, e = x.man_exp()
    v = math.log10(int(m)) + int(e) * _LOG10_2
    return v + direction * 16 * math.ulp(v)


def _exact(x, ctx):
    """A run's number as a ball: a gmpy2 mpfr exactly (:meth:`mpvi.ArbContext.lift`'s
    conversion without its call overhead), anything else by ``ctx.lift``."""
    if type(x) is _mpfr_type and x.is_finite():
        n, d = x.as_integer_ratio()
        return arb(fmpq(int(n), int(d)))
    return ctx.lift(x)


def _sci(x):
    return x.str(3, radius=False)
