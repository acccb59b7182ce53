"""Proven digits of a run: its steps walked again on Arb balls.

:func:`certify` takes a :class:`mpvi.Solution` and re-walks the run step by step with
the same method in an :class:`mpvi.ArbContext`, on **the problem as posed**: every input
the user wrote exactly -- h = ``"1/10"``, a parameter ``"9.81"``, q0 = ``sympy.pi/6``, a
``Fraction`` (:func:`mpvi.model.problem.posed_value`, kept as ``Problem.posed`` and
``Solution.posed``) -- enters as a ball of its exact value; an input given as a float or a
number of a context enters as the run's number, exactly (``posed=False``: every input
so).  ``Certificate.statement`` names both kinds.  An explicit step is simply
evaluated on balls; an implicit one is proven by the parametric Krawczyk test
(:func:`mpvi.numbers.arb.krawczyk`: a unique solution of the step equations in a ball, for
every state in the previous ball).  The balls so carried enclose the method's exact
discrete trajectory from those data -- rounding excluded -- at every node.

Each saved computed state is then compared with its enclosure: the distance bounds the
error of the printed number against the exact discrete trajectory, and the proven digits
of each component are ``-log10(|computed - enclosure|_upper / scale)`` (``scale`` the
state's largest component, at least 1; 0 where the enclosure is wider than ``scale``).
A computed state farther from its enclosure than the run's own round-off could take it
is judged by its own step.  That round-off allowance is derived from the states: the
inputs' rounding (the computed start against the posed one) and the Newton tolerance of
the run's context (:func:`mpvi.numbers.newton.tolerance`, 2^10 eps) per step, relative to the
state's size, carried by the step Jacobians of Lohner's walk (:func:`_lohner`), so that it
grows as the round-off does -- like exp(lambda t) on a chaotic orbit, never linearly in the
steps (box propagation, which carries no Jacobian, sums it).  The step is judged from the
run's saved state one node before, on balls; where that node is not saved (``saveat=k``),
the point run is solved again in the run's context from the saved node before it, each of
its steps judged on balls, and the saved state must be its state up to the rounding of the
steps solved again (:class:`_Judge`).  Within that, the step is right and the gap is the
run's own rounding carried by the flow; the proven digits say how much is left.
Otherwise it is a wrong step: :class:`WrongStepError` names it.  A step whose proof
fails (a ball too wide, a Jacobian not invertible on the ball) ends the certificate
there: it says which step and why, and claims nothing from there on.

**Between nodes** (``saveat`` a list of times; the last point of a run stopped by a
terminal event) the method's interpolant (:mod:`mpvi.engines.dense`) is evaluated on the balls of
the two nodes of its step, at the time as posed (:class:`_Dense`): an enclosure of the
interpolant of the exact discrete trajectory.  **Events**: the time of each located event
is enclosed by a sign change of the event function (called on balls) proven at both ends
of an interval around the run's time, on that enclosed interpolant
(``Certificate.events``).

One step's allowance is the larger of the Newton tolerance and, for an explicit step, its
rounding at the run's precision (relative to the state's size), and the judge of a step
adds that step's own rounding, derived from its own arithmetic: the step from the run's exact state
on balls has a radius that is a running error bound of that arithmetic at the working
precision (first order in the unit), times run eps / working eps.  A GBS step's extrapolation
tableau amplifies rounding by its Lebesgue constant: at 16 levels on the pendulum the
allowance is some 200 times the Newton tolerance, and the run's error stays within it.

The walk is of the run's own discrete map: choices a run makes from point values are
the run's, not made again on balls -- an adaptive Taylor run's order and substep ends
are recomputed by its point steps from its saved states and the balls carried along
them (:func:`_own_choices`).  Every system kind is walked: a first-order system given as
expressions or by ``rhs(t, y, ctx)`` is bound to the balls
(:meth:`mpvi.FirstOrderSystem.with_context`); one of a Python ``rhs(t, y)`` of the run's
numbers is refused, as no ball can be put through it.

The state set is carried by Lohner's method (Lohner 1987; the mean-value form in a moving
basis, :func:`_lohner`): the step from the midpoint on balls plus the step's Jacobian on
balls (forward derivatives, :class:`mpvi.numbers.arb._DualContext`; an implicit step
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
(:mod:`mpvi.compiled.carb`: the same balls as the Python kernels, bit for bit); the point step's Newton iteration
starts from the run's own solution of the step (its q_{j+1} and internal coefficients,
when every node was saved), the Jacobian walk's Krawczyk test is centred at the point
step's centre with its preconditioner and runs on the balls of the values
(:func:`mpvi.numbers.arb._krawczyk_dual`: no derivative carried through the test; F_y from one
residual on duals).  Those are only starts and shortcuts of evaluation: any centre and
any preconditioner are valid, the test decides.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

import numpy as np

from flint import arb, arb_mat, fmpq

from mpvi.numbers.arb import GUARD_BITS, ArbContext, KrawczykError, _Dual, _DualContext, _hand_over, _watch
from mpvi.numbers.context import PrecisionError, _mpfr_type, floor
from mpvi.numbers.linalg import NotPositiveDefiniteError, SingularMatrixError
from mpvi.numbers.newton import tolerance
from mpvi.ground.precision import entry, entry_class
from mpvi.model.problem import posed_text, posed_value
from mpvi.methods import get_method
from mpvi.ground.checks import check_flag, integer

if TYPE_CHECKING:
    from mpvi.model.mechanics import LagrangianSystem
    from mpvi.model.first_order import FirstOrderSystem


class Run(Protocol):
    """A run as :func:`certify` reads it, by its fields: an :class:`mpvi.Solution` is one.
    (The driver's module imports this one to certify and to save a certificate; a proof
    names no class of the layer above it.)"""
    problem: Any
    method: Any
    ctx: Any
    h: Any
    t: Any
    q: Any
    y: Any
    steps: int
    saveat: Any
    t0: Any
    events: Any
    _prepare_args: Any


class WrongStepError(ArithmeticError):
    """A computed state lies outside the proven enclosure of its step.

    Farther than the run's round-off allows (module doc of :mod:`mpvi.proof.certify`): the
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
        The node index of each saved point (of a point between nodes: the step j holding
        it, t_j <= t <= t_j+1).

    Attributes
    ----------
    method : str
        The method's name.
    context : ArbContext
        The ball context of the walk.
    nodes : list of int
        The node index of each saved point (of a point between nodes: its step j).
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
    events : list of EventEnclosure
        The time of each event the run located (``Solution.events``), enclosed: a proven
        root of the event function on the method's interpolant of the enclosed step.
    statement : str
        What is enclosed, in plain words: the exact discrete trajectory of the problem as
        posed (``h = 1/10, q0 = (pi/6), g = 9.81``), naming each input that entered as the
        run's rounded number instead (a float or a context number).
    """

    statement: str | None = None
    events: list[Any] = []

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
        self.events: list[EventEnclosure] = []

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
        state["events"] = [tuple(e[:2]) + (None if e.t is None else _pack(e.t),) + tuple(e[3:])
                           for e in self.events]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state["t"] = [_unpack(b) for b in state["t"]]
        state["q"] = [np.array([_unpack(b) for b in v], dtype=object) for v in state["q"]]
        state["y"] = [None if v is None else np.array([_unpack(b) for b in v], dtype=object)
                      for v in state["y"]]
        state["events"] = [EventEnclosure(e[0], e[1], None if e[2] is None else _unpack(e[2]),
                                          e[3], e[4]) for e in state.get("events", [])]
        self.__dict__.update(state)

    def __repr__(self) -> str:
        done = f"{len(self.t)}/{len(self.nodes)} saved points certified"
        digits = self.min_digits
        least = f", at least {min(digits):.1f} digits" if digits else ""
        fail = f"; step {self.failed_step} not proven: {self.why}" if self.why else ""
        events = (f", {sum(e.t is not None for e in self.events)}/{len(self.events)} event "
                  "times enclosed" if self.events else "")
        return f"<Certificate {self.method}: {done}{least}{events}{fail}>"


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


def _saved_nodes(sol: Run) -> tuple[list[int], set[int]]:
    """The node of each saved point, and the saved points that lie between nodes: for
    those, the step j whose interval holds the point (t_j <= t <= t_j+1) -- every point of
    a solution saved at times (``saveat`` a list of times, through the dense output), and
    the last point of a run stopped by a terminal event (saved at the event's time, in
    place of the node after it)."""
    steps, saveat = sol.steps, sol.saveat
    if saveat is None or (isinstance(saveat, (int, np.integer)) and not isinstance(saveat, bool)):
        k = 1 if saveat is None else int(saveat)
        nodes = list(range(0, steps + 1, k))
        nodes = nodes if nodes[-1] == steps else nodes + [steps]
        with sol.ctx.active():
            cut = (steps > 0 and len(sol.t) == len(nodes) and bool(sol.events)
                   and sol.t[-1] == sol.events[-1].t and sol.t[-1] != sol.t0 + steps * sol.h)
        if cut:
            nodes[-1] = steps - 1
        return nodes, {len(nodes) - 1} if cut else set()
    return [_step_of(sol, t) for t in sol.t], set(range(len(sol.t)))


def _step_of(sol, t):
    """The step j whose interval [t_j, t_j+1] holds the run's time t (the last for its
    end)."""
    j = int(floor((t - sol.t0) / sol.h))
    return min(max(j, 0), sol.steps - 1)


@entry
def certify(solution: Run, dps: int | None = None, propagation: str = "lohner", *,
            reuse: bool = True, posed: bool = True) -> Certificate:
    """Enclose every saved state of a run on Arb balls and prove its digits.

    Module doc of :mod:`mpvi.proof.certify`: the run re-walked with its method and h on
    balls (Arb: Johansson 2017), implicit steps proven by the parametric Krawczyk test
    (Krawczyk 1969; Rump 1983), box propagation (Moore 1966).

    Parameters
    ----------
    solution : Solution
        (any :class:`Run`: what is read is its fields)
        A run of :func:`mpvi.solve` (saved at nodes, every k-th node or at times between
        nodes; its events are enclosed too).
    dps : int, optional
        The working digits of the balls (plus :data:`mpvi.numbers.arb.GUARD_BITS`); default the
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
    posed : bool, default True
        Walk the problem as posed: every input the user wrote exactly (h = ``"1/10"``, a
        parameter ``"9.81"``, q0 = ``sympy.pi/6``; ``Problem.posed``, ``Solution.posed``)
        enters as a ball of its exact value, so the enclosures hold the exact discrete
        trajectory of that problem (and the computed run within its proven digits); an
        input given as a float or a context number enters as the run's number, and
        ``Certificate.statement`` says which.  False: every input as the run's rounded
        number (the enclosures are then of the run's own inputs).

    Returns
    -------
    Certificate
        The enclosures, the proven digits per component and per saved point, the event
        times enclosed, the statement of what is enclosed, and the first step whose
        proof failed (with why), if any.

    Raises
    ------
    TypeError
        Not a solution, or a solution without its problem (a file saved without one).
    RunMismatchError
        A solution whose times, step count or saved points are not those of its own run
        (changed after it: :func:`_check_run`); a changed state is a WrongStepError.
    ValueError
        One of a context that is not multiprecision, or
        one of a first-order system whose field cannot be evaluated on balls (a Python
        ``rhs(t, y)`` of the run's numbers); an unknown ``propagation``.
    WrongStepError
        A computed state outside its enclosure beyond the run's round-off, naming the
        step.
    """
    # what a run is, by its fields (mpvi.drive.solution imports this module to save and read a
    # certificate: no import back)
    if not all(hasattr(solution, name) for name in _SOLUTION_FIELDS):
        raise TypeError(f"certify takes an mpvi.Solution, got {type(solution).__name__}")
    problem = solution.problem
    if problem is None:
        why = getattr(solution, "_unproven", None) or "it was made without one"
        raise TypeError(f"certify: the solution has no problem ({why}): solve again")
    run_ctx = solution.ctx
    if not run_ctx.is_mp:
        raise ValueError(f"certify: a run in the {run_ctx.name} context is not certified "
                         "(float64 rounding: use a gmp or mp context)")
    if problem.system.first_order and not cast("FirstOrderSystem", problem.system).rebinds:
        raise ValueError(f"certify: the first-order system {problem.system.name!r} has a "
                         "right-hand side rhs(t, y) of the run's numbers, which cannot be "
                         "evaluated on balls: give the field as expressions (FirstOrderSystem."
                         "from_expressions) or as rhs(t, y, ctx) computing with ctx's "
                         "operations")
    _check_fields(solution)
    nodes, between = _saved_nodes(solution)
    if propagation not in ("lohner", "box"):
        raise ValueError(f"certify: propagation must be 'lohner' or 'box', got {propagation!r}")
    reuse = check_flag(reuse, "certify: reuse")
    posed = check_flag(posed, "certify: posed")
    ctx = ArbContext(run_ctx.dps if dps is None else dps)
    method = get_method(solution.method)
    cert = Certificate(method.name, ctx, nodes)
    ctx.activate()
    inputs = _Inputs(solution, ctx, posed)
    h, t0 = inputs.h, inputs.t0
    system = _exact_params(cast("LagrangianSystem", problem.system), ctx, posed=posed)
    q, y = _initial(problem, system, method.state, ctx, inputs)
    _check_run(solution, problem, nodes, h, t0, ctx, between)
    cert.statement = _statement(solution, method.name, inputs, run_ctx, posed, ctx)
    args = _own_choices(method, solution,
                        {k: v for k, v in solution._prepare_args.items() if k != "newton"},
                        t0, h)
    stepper = method.prepare(system, h, ctx, **args)
    saved = {k: i for i, k in enumerate(nodes) if i not in between}
    # an explicit step's ball radius from exact data is the rounding of its arithmetic at
    # the working precision (to first order proportional to the unit): times this, at the
    # run's.  (An implicit step's run stops its Newton iteration at the tolerance, and its
    # Krawczyk ball's radius is no bound of the run's arithmetic.)
    rounds = ctx.zero if method.implicit else ctx.lift(run_ctx.eps) / ctx.eps
    judge = _Judge(solution, method, stepper, saved, ctx, t0, h, rounds)
    # the run's round-off per step, relative to the state's size: the Newton tolerance of
    # its context, and the first step's own rounding at the run's precision (the largest
    # of the two; module doc)
    allowance = cast(arb, ctx.lift(tolerance(run_ctx)))   # exactly, a ball in any context
    first = (judge.step(0, solution.q[saved[0]], None if solution.y is None
                        else solution.y[saved[0]])
             if solution.steps and not method.implicit and 0 in saved else None)
    if first is not None:
        size = cast(arb, ctx.one)
        for c in _state(q, y):
            size = size.max(abs(c))
        for r in first[1]:
            allowance = allowance.max(r / size)
    judge.allowance = allowance
    start = _arr([_exact(x, ctx) for x in _state(*problem.initial_state(method.state))])
    # the computed start's distance from the posed one (the inputs' rounding), per component
    gaps = [abs(c - b).upper() for c, b in zip(start, _state(q, y))]
    walk = (_box(stepper, q, y, t0, h, solution.steps, gaps, allowance, ctx)
            if propagation == "box" else
            _lohner(stepper, method, solution, args, ctx, q, y, t0, h, solution.steps, reuse,
                    cert.jacobians, gaps, allowance, posed))
    dense = _Dense(solution, method, stepper, system, ctx, inputs, args)
    steps_wanted = {nodes[i] for i in between} | set(dense.event_steps)
    before = None
    for k, q, y, failure, limits in walk:
        if failure is not None:
            cert.failed_step, cert.why = k - 1, failure
            dense.unreached(cert, k - 1)
            return cert
        if k - 1 in steps_wanted:
            segment = dense.segment(k - 1, before, (q, y))
            found = dense.events(cert, k - 1, segment)
            for i in sorted(i for i in between if nodes[i] == k - 1):
                # a run stopped by a terminal event: its last point is the state at the
                # event's time, enclosed over the ball of that time
                at = found[-1].t if (found and i == len(nodes) - 1 and solution.saveat != "times"
                                     and found[-1].t is not None) else None
                if not dense.record(cert, i, segment, at):
                    dense.unreached(cert, k)          # nothing is claimed from there on
                    return cert
        before = (q, y)
        point = saved.get(k)
        if point is not None:
            _record(cert, solution, point, k, t0 + k * h, q, y, ctx, run_ctx, limits, judge)
    return cert


class EventEnclosure(NamedTuple):
    """The enclosure of one located event's time (an entry of ``Certificate.events``).

    Parameters
    ----------
    event : int
        Its entry in ``Solution.events``.
    name : str
        The event's name.
    t : flint.arb or None
        A ball holding a root of the event function on the method's interpolant of the
        exact discrete trajectory (a sign change in the event's direction proven on balls
        at both ends of the ball: the intermediate value theorem); None where none was
        proven.
    digits : float
        The proven digits of the computed time: ``-log10`` of its distance from the ball
        over ``max(1, |t|)`` (0 where not proven).
    why : str or None
        Why the time was not enclosed, or None.
    """

    event: int
    name: str
    t: Any
    digits: float
    why: str | None


class _Dense:
    """The method's interpolant between two enclosed nodes, on balls (:mod:`mpvi.engines.dense`
    with the walk's ball system, h and stepper), for the saved times between nodes and the
    events of a run.

    The interpolant of every trajectory in the nodes' balls -- the exact discrete one among
    them -- lies in the interpolant evaluated on the balls: the Hermite kind from the
    nodes' jets (q, v and the Taylor coefficients of the flow on balls), the trial kind
    from the step's coefficients solved on the balls of the node before (the Krawczyk
    step), the substep kind by the method's step of theta h on balls, the fixed Taylor
    method's polynomial from its coefficients on the balls of the node before.  The
    adaptive Taylor method's is refused, named (which substep holds a time is decided by
    comparing times, which balls may leave undecided)."""

    def __init__(self, solution, method, stepper, system, ctx, inputs, args):
        from mpvi.engines.dense import StepData
        self.solution, self.ctx, self.stepper = solution, ctx, stepper
        self.t0, self.h = inputs.t0, inputs.h
        self.data = StepData(method, stepper, system, ctx, inputs.h, args)
        times = (getattr(solution, "posed", None) or {}).get("times") if inputs.as_posed else None
        self.times = times if times is not None and len(times) == len(solution.t) else None
        self.functions = getattr(solution, "_event_functions", None)
        self.event_steps: dict[int, list[int]] = {}
        for n, e in enumerate(solution.events):
            self.event_steps.setdefault(_step_of(solution, e.t), []).append(n)

    def segment(self, j, a, b):
        """The dense output of step j on balls between the node enclosures a and b
        ((q, y) each), or the reason it cannot be made."""
        from mpvi.engines.dense import Segment
        t = self.t0 + j * self.h
        carry = None
        try:
            if self.data.dense == "trial":
                carry = self.stepper(t, a[0], a[1], None).carry
            elif self.data.dense == "taylor":
                carry = self.data.substeps(t, a[0], a[1])
                if not carry.fixed:
                    return ("the adaptive Taylor method's interpolant is not enclosed (the "
                            "substep holding a time is chosen by comparing times)")
            return Segment(self.data, t, a[0], a[1], b[0], b[1], carry)
        except (*_STEP_FAILURES, PrecisionError, TypeError, ValueError) as exc:
            return f"the step's interpolant fails on balls: {exc}"

    def at(self, segment, theta):
        q, v = segment.at(theta)
        t = segment.t + theta * self.h
        return q, self.data.y_of(t, q, v), v

    def record(self, cert, i, segment, at=None):
        """Saved point i (a time between nodes): its time as posed (or the ball ``at``), the
        interpolant's enclosure there and the proven digits of the computed (q, y).  False
        (the certificate ended at its step, with why) where it cannot be enclosed."""
        sol, ctx = self.solution, self.ctx
        if isinstance(segment, str):
            cert.failed_step, cert.why = cert.nodes[i], segment
            return False
        exact = None if self.times is None else self.times[i]
        s = _enclose(exact, sol.t[i], ctx)[0] if at is None else at
        try:
            q, y, _ = self.at(segment, (s - segment.t) / self.h)
        except (*_STEP_FAILURES, PrecisionError, TypeError, ValueError) as exc:
            cert.failed_step, cert.why = cert.nodes[i], f"the interpolant fails on balls: {exc}"
            return False
        _digits(cert, sol, i, s, q, None if sol.y is None else y, ctx)
        return True

    def events(self, cert, j, segment):
        """Enclose the time of every event the run located in step j (and return them)."""
        found = [self.event(n, j, segment) for n in self.event_steps.get(j, ())]
        cert.events.extend(found)
        return found

    def event(self, n, j, segment):
        """The time of event record n (in step j) enclosed: theta_c the run's theta, the
        event function on balls at theta_c -/+ w with w growing by 16 until its signs there
        are proven opposite, in the event's direction (a root of the continuous function
        between them: the intermediate value theorem, for every trajectory in the nodes'
        balls)."""
        sol, ctx = self.solution, self.ctx
        record = sol.events[n]
        fail = lambda why: EventEnclosure(n, record.name, None, 0.0, why)  # noqa: E731
        if isinstance(segment, str):
            return fail(segment)
        if self.functions is None or record.index >= len(self.functions):
            return fail("the event function is not kept with the solution (solve again)")
        g = self.functions[record.index]
        with sol.ctx.active():
            theta = _exact((record.t - sol.t0 - j * sol.h) / sol.h, ctx)
        zero, one = arb(0), arb(1)

        def sign(x):
            try:
                q, _, v = self.at(segment, x)
                value = g(segment.t + x * self.h, q, v)
            except Exception as exc:       # a user's function on balls: whatever it raised
                raise _NoSign(f"the event function fails on balls: {type(exc).__name__}: "
                              f"{exc}") from None
            if not isinstance(value, arb):
                value = ctx.num(value)
            return 1 if value > 0 else (-1 if value < 0 else 0)

        w = arb(2) ** (4 - ctx.prec)
        try:
            while True:
                lo, hi = (theta - w).max(zero), (theta + w).min(one)
                lo, hi = arb(lo.lower()).max(zero), arb(hi.upper()).min(one)
                a, b = sign(lo), sign(hi)
                if a * b < 0 and (record.direction == 0 or record.direction == b):
                    break
                if lo == zero and hi == one:
                    return fail("no sign change of the event function proven on the "
                                "enclosed interpolant of its step")
                w = w * 16
        except _NoSign as exc:
            return fail(str(exc))
        t = segment.t + lo.union(hi) * self.h
        te = _exact(record.t, ctx)
        scale = ctx.one.max(abs(te))
        bound = abs(te - t).upper()
        digits = math.inf if bound == 0 else max(0.0, _log10(scale, -1) - _log10(bound, 1))
        return EventEnclosure(n, record.name, t, digits, None)

    def unreached(self, cert, j):
        """The events from step j on (after a failed proof): not enclosed."""
        done = {e.event for e in cert.events}
        for step, ns in sorted(self.event_steps.items()):
            if step >= j:
                for n in (n for n in ns if n not in done):
                    cert.events.append(EventEnclosure(
                        n, self.solution.events[n].name, None, 0.0,
                        f"step {cert.failed_step} not proven: {cert.why}"))


class _NoSign(Exception):
    """The event function could not be evaluated on balls."""


class _Judge:
    """The step k-1 -> k of the run judged alone (:func:`_record`): from the run's own
    saved state at node k-1, or, where that node is not saved, from the point run solved
    again in the run's context from the saved node before it -- every step of which is
    judged on balls the same way, and whose state at k must be the saved one up to the
    rounding of the steps solved again (the walk keeps every node it needs).

    A step's allowance per component is the run's round-off per step (``allowance``,
    relative: times the state's size) plus the step's own rounding at the run's precision
    (its ball's radius from exact data times ``rounds``: a running error bound of an
    explicit step's arithmetic, e.g. a GBS tableau's; 0 for an implicit step)."""

    def __init__(self, solution, method, stepper, saved, ctx, t0, h, rounds):
        self.solution, self.method, self.stepper, self.saved = solution, method, stepper, saved
        self.ctx, self.t0, self.h, self.rounds = ctx, t0, h, rounds
        self.allowance = ctx.zero      # set by certify once the first step is known
        self.point = None

    def step(self, k, q, y):
        """The step k -> k+1 from the exact point (q, y) (run numbers) on balls and per
        component its rounding at the run's precision, or None where it fails."""
        ctx = self.ctx
        qb = _arr([_exact(x, ctx) for x in q])
        yb = None if y is None else _arr([_exact(x, ctx) for x in y])
        try:
            r = self.stepper(self.t0 + k * self.h, qb, yb, None)
        except _STEP_FAILURES:
            return None
        step = _state(r.q, r.y)
        return step, [arb(b.rad()) * self.rounds for b in step]

    def __call__(self, i, k, scale):
        """(balls, allowed distance per component, what they are) for saved point i at
        node k: the step from the run's node k-1 within one step's allowance; else the
        saved state solved again from the saved node before, within the allowances of the
        steps solved again (each of them judged on balls).  None where no judgement can be
        made."""
        sol, saved = self.solution, self.saved
        one = self.allowance * scale
        before = saved.get(k - 1)
        if before is not None:
            found = self.step(k - 1, sol.q[before], None if sol.y is None else sol.y[before])
            if found is None:
                return None
            step, rounding = found
            return (step, [one + r for r in rounding],
                    f"the step taken from the run's own node {k - 1}")
        k0 = max((m for m in saved if m < k), default=None)
        if k0 is None:
            return None
        run_ctx = sol.ctx
        if self.point is None:
            self.point = self.method._prepare(sol.problem.system, sol.h, run_ctx,
                                              **sol._prepare_args)
        i0 = saved[k0]
        q, y, carry = sol.q[i0], None if sol.y is None else sol.y[i0], None
        slack = None
        try:
            for j in range(k0, k):
                with run_ctx.active():
                    r = self.point(sol.t0 + j * sol.h, q, y, carry)
                found = self.step(j, q, y)
                if found is None:
                    return None
                step, rounding = found
                allowed = [one + x for x in rounding]
                if any(abs(_exact(x, self.ctx) - b).lower() > a
                       for x, b, a in zip(_state(r.q, r.y), step, allowed)):
                    return None
                slack = allowed if slack is None else [s + a for s, a in zip(slack, allowed)]
                q, y, carry = r.q, r.y, r.carry
        except (*_STEP_FAILURES, ValueError):
            return None
        finally:
            self.ctx.activate()
        again = [_exact(x, self.ctx) for x in _state(q, y)]
        return (again, slack, f"the run solved again from its saved node {k0} "
                f"(each of its {k - k0} steps judged on balls)")


def _own_choices(method, solution, args, t0, h):
    """The method's arguments for the walk on balls: the run's, without its stability
    precondition (checked by the run).  An adaptive Taylor run
    (``tol`` given) chooses its order and substeps from point values: the walk takes the
    run's own (the degree it used; the substep ends of each step, recomputed by the same
    point steps from the run's saved states -- from the replay's own where a node is not
    saved -- exactly as numbers of the run), and on balls each substep is one Taylor
    polynomial of that degree between them (:class:`_Schedule`); no choice is made on
    balls."""
    if "check_stability" in args:
        # the run's precondition (it took its steps; an eigen-decomposition of the
        # linearized system, which no step of the map needs), not part of the map walked
        args = {**args, "check_stability": False}
    if method.name != "taylor" or args.get("tol") is None:
        return args
    from mpvi.numbers.arbref import exact_rational
    problem, run_ctx = solution.problem, solution.ctx
    point = method.prepare(problem.system, solution.h, run_ctx, **args)
    nodes, between = _saved_nodes(solution)
    saved = {k: i for i, k in enumerate(nodes) if i not in between}
    q, y = solution.q[0], solution.y[0]
    ends = []
    with run_ctx.active():
        for j in range(solution.steps):
            i = saved.get(j)
            if i is not None:
                q, y = solution.q[i], solution.y[i]
            r, taus = point.substep_ends(problem.t0 + j * solution.h, q, y)
            ends.append([exact_rational(tau, "a substep end") for tau in taus])
            q, y = r.q, r.y
    return {**args, "tol": None, "degree": point.degree, "schedule": _Schedule(t0, h, ends)}


class _Schedule:
    """``schedule(t)``: the interior substep ends of the step from node j (exact
    Fractions), j the one node whose time t0 + j h (the walk's balls: the problem as
    posed) the ball ``t`` (or a dual's value) meets.  ValueError for a ball of times that
    meets no node time or is wider than half a step (a hull over every time of the run:
    each step has its own substeps)."""

    def __init__(self, t0, h, ends):
        self.t0, self.h, self.ends = t0, h, ends

    def __call__(self, t):
        ball = getattr(t, "v", t)
        j = round(_fraction(((ball - self.t0) / self.h).mid()))
        if not (0 <= j < len(self.ends) and ball.overlaps(self.t0 + j * self.h)
                and 2 * ball.rad() < abs(self.h).lower()):
            raise ValueError(f"taylor: the times {ball} are not one node of the run: its "
                             "adaptive substeps differ from step to step")
        return self.ends[j]


def _fraction(x):
    """An exact arb (a midpoint or a radius) as the Fraction it is."""
    m, e = x.man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


class RunMismatchError(ValueError):
    """A solution that is not its own run: its times, step count or saved points do not
    match its h, t0 and steps (changed after the run).  A ``ValueError``."""


def _check_fields(solution):
    """Refuse a run whose fields cannot be a run's (:class:`RunMismatchError`), before any
    is used: ``steps`` and ``steps_planned`` integers with 0 <= steps <= steps_planned,
    ``saveat`` None, an integer >= 1 or ``"times"`` (saved at requested times), the step h finite and not 0,
    as many saved states as times, every saved time and state finite."""
    where = "certify: the solution does not match its own run"
    steps, planned = solution.steps, getattr(solution, "steps_planned", solution.steps)
    if integer(steps) is None or integer(planned) is None or not 0 <= steps <= planned:
        raise RunMismatchError(f"{where}: steps = {steps!r} of steps_planned = {planned!r} are "
                               "not integers with 0 <= steps <= steps_planned")
    saveat = solution.saveat
    if not (saveat is None or (integer(saveat) or 0) >= 1
            or (isinstance(saveat, str) and saveat == "times")):
        raise RunMismatchError(f"{where}: saveat = {saveat!r} is neither None, an integer >= 1 "
                               "nor 'times'")
    ctx = solution.ctx
    if not ctx.is_number(solution.h) or not ctx.isfinite(solution.h) or solution.h == 0:
        raise RunMismatchError(f"{where}: its step h = {solution.h!r} is not a finite nonzero "
                               f"number of {ctx.name}")
    ys = [] if solution.y is None else solution.y     # a first-order run keeps its state in q
    if len(solution.q) != len(solution.t) or (solution.y is not None
                                              and len(ys) != len(solution.t)):
        raise RunMismatchError(f"{where}: {len(solution.t)} saved times, {len(solution.q)} "
                               f"saved q and {len(ys)} saved p or v")
    for name, rows in (("t", [[x] for x in solution.t]), ("q", solution.q), ("y", ys)):
        for i, row in enumerate(rows):
            if not ctx.all_finite(row):
                raise RunMismatchError(f"{where}: its saved {name}[{i}] is not finite")


def _check_run(solution, problem, nodes, h, t0, ctx, between=frozenset()):
    """Refuse a solution whose bookkeeping is not that of its own run
    (:class:`RunMismatchError`): t0 the problem's; 0 <= steps <= steps_planned, steps ==
    steps_planned unless the run stopped early, and the step count of its statistics;
    one saved point per node of ``nodes`` (one more where a stopped run saved where it
    stopped); and every node time t_i = t0 + k h, from the exact t0 and h on balls,
    within the two roundings of the run's own ``t0 + k*h`` (2 eps (|t0| + 2 |k h|), eps
    the run context's; :func:`mpvi.solve` computes the times so) -- but for the saved
    points ``between`` nodes (at requested times or an event's), which lie in their step."""
    where = "certify: the solution does not match its own run"
    steps, planned = solution.steps, solution.steps_planned
    if solution.t0 != problem.t0:
        raise RunMismatchError(f"{where}: its t0 is not its problem's t0")
    if not 0 <= steps <= planned or (solution.stopped is None and steps != planned):
        raise RunMismatchError(f"{where}: {steps} steps of {planned} planned, and it did not "
                               f"stop early")
    counted = solution.stats.get("steps") if isinstance(solution.stats, dict) else None
    if counted is not None and counted != steps:
        raise RunMismatchError(f"{where}: {steps} steps, its statistics count {counted}")
    n, extra = len(solution.t), 1 if solution.stopped is not None else 0
    if not len(nodes) <= n <= len(nodes) + extra or len(solution.q) != n:
        raise RunMismatchError(f"{where}: {n} saved times and {len(solution.q)} saved states "
                               f"for the {len(nodes)} saved nodes of {steps} steps (saveat = "
                               f"{solution.saveat})")
    eps = _exact(solution.ctx.eps, ctx)
    h_gap = abs(_exact(solution.h, ctx) - h)
    if not h_gap <= 2 * eps * abs(h):
        raise RunMismatchError(f"{where}: its h = {solution.ctx.to_str(solution.h, 20)} is not "
                               f"the step it was posed with, {ctx.to_str(h, 20)}")
    end = t0 + steps * h
    lo, hi = (t0, end) if h > 0 else (end, t0)
    slack = 2 * eps * (abs(t0) + 2 * abs(steps * h))
    for i, t in enumerate(solution.t):
        ti = _exact(t, ctx)
        if not (ti >= lo - slack and ti <= hi + slack):
            raise RunMismatchError(
                f"{where}: t[{i}] = {solution.ctx.to_str(t, 20)} is outside the run "
                f"[t0, t0 + {steps} h] = [{ctx.to_str(lo, 20)}, {ctx.to_str(hi, 20)}]")
    for i, k in enumerate(nodes):
        if i in between:
            continue
        exact_t = t0 + k * h
        gap = abs(_exact(solution.t[i], ctx) - exact_t)
        if not gap <= 2 * eps * (abs(t0) + 2 * abs(k * h)):
            raise RunMismatchError(
                f"{where}: t[{i}] = {solution.ctx.to_str(solution.t[i], 20)} is not node {k}, "
                f"t0 + {k} h = {ctx.to_str(exact_t, 20)} (h = "
                f"{solution.ctx.to_str(solution.h, 20)}): off by {_sci(gap)}, more than the "
                f"run's rounding of the time")


_SOLUTION_FIELDS = ("problem", "method", "ctx", "h", "t", "q", "y", "steps", "saveat",
                    "_prepare_args")
"""The fields of an :class:`mpvi.Solution` that :func:`certify` reads."""

_STEP_FAILURES = (KrawczykError, SingularMatrixError, NotPositiveDefiniteError, ArithmeticError)


def _box(stepper, q, y, t0, h, steps, gaps, allowance, ctx):
    """Box propagation: the step on the previous balls.  Yields (node, q, y, None,
    limits), or (node, None, None, why, None) for the node whose step failed.  ``limits``,
    the round-off allowance per component: the inputs' rounding ``gaps`` and the run's
    tolerance ``allowance`` summed over the steps, relative to the state's size (a box
    carries no Jacobian to propagate it with, as :func:`_lohner` does)."""
    unit = _exact(allowance, ctx)

    def limits(k, balls):
        scale = ctx.one
        for b in balls:
            scale = scale.max(arb(b.abs_upper()))
        return [g + unit * k * scale for g in gaps]
    yield 0, q, y, None, list(gaps)
    carry = None
    for j in range(steps):
        try:
            r = stepper(t0 + j * h, q, y, carry)
        except _STEP_FAILURES as exc:
            yield j + 1, None, None, str(exc), None
            return
        q, y, carry = r.q, r.y, r.carry
        if not all(b.is_finite() for b in _state(q, y)):
            yield j + 1, None, None, "the enclosure is not finite (the balls grew unbounded)", None
            return
        yield j + 1, q, y, None, limits(j + 1, _state(q, y))


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


def _lohner(stepper, method, solution, args, ctx, q, y, t0, h, steps, reuse, counts, gaps,
            allowance, posed):
    """Lohner's method (Lohner 1987; the mean-value form with a moving basis): the state
    set is y^ + A R (y^ a point, A an invertible point matrix, R a ball vector containing
    0).  A step maps it into

        Phi(y^) + [DPhi(Y)] A R,    Y = the balls of y^ + A R,

    (mean-value theorem, component by component), Phi(y^) the step from the point on balls
    and [DPhi(Y)] the balls of the step's Jacobian over Y (forward differentiation on
    balls, :class:`mpvi.numbers.arb._DualContext`; an implicit step by the implicit function
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
    the point step's root in its Krawczyk ball (:meth:`mpvi.numbers.arb._DualContext.verified_solve`:
    the mean-value form joins the two), the hull's that of its centre.  ``counts``
    (a list of three ints) accumulates the hulls made, the steps by a hull Jacobian and the
    steps by their own.

    **The round-off allowance** (what :func:`_record` lets a computed state differ from its
    enclosure by before judging its step) is carried the same way, from the states: a set
    Q D centred at 0, D <- (Q^-1 B) D + Q^-1 [+-u], u = ``allowance`` (the run's Newton
    tolerance) times the state's scale per component, from D the inputs' rounding ``gaps``
    at node 0.  It is the round-off of a run whose every step is right within its
    tolerance, carried by the step's Jacobian: it grows as the round-off does (like
    exp(lambda t) on a chaotic orbit), not linearly in the steps.  Yielded per node as
    ``limits`` (upper bounds per component)."""
    dctx = _DualContext(ctx.dps)
    dsystem = _exact_params(cast("LagrangianSystem", solution.problem.system), ctx, dctx,
                            posed)
    dstepper = method.prepare(dsystem, dctx.num(h), dctx, **args)
    n = len(q)
    state = _state(q, y)
    d = len(state)
    yhat = arb_mat([[b] for b in state]).mid()
    A = arb_mat(d, d, [1 if i == j else 0 for i in range(d) for j in range(d)])
    R = arb_mat([[b] for b in state]) - yhat
    D = arb_mat([[arb(0, g)] for g in gaps])
    unit = _exact(allowance, ctx)
    hull, tried = None, not reuse
    yield 0, q, y, None, list(gaps)
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
                yield j + 1, None, None, str(exc), None
                return
            carry = point.carry
            counts[2] += 1
            image = arb_mat([[b] for b in _state(point.q, point.y)])
            duals = [dctx.num(v) for v in _state(r.q, r.y)]
            J = arb_mat([[u.d[i] if u.d else ctx.zero for i in range(d)] for u in duals])
            boxed = [u.v for u in duals]
            if not tried:
                base = box if hull is None else _union(hull.Y, box)
                hull = _hull(method, solution, args, ctx, base, J, n, y is None, posed)
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
                yield j + 1, None, None, "Lohner's basis became singular", None
                return
        C = Qinv * B
        R = C * R + Qinv * (image - yhat)
        scale = ctx.one
        for b in _column(image):
            scale = scale.max(arb(b.abs_upper()))
        D = C * D + Qinv * arb_mat([[arb(0, (unit * scale).upper())]] * d)
        A = Q                     # the set is now yhat + Q R: the next step starts from it
        enclosure = _column(yhat + Q * R)
        if boxed is not None:
            enclosure = [_meet(a, b) for a, b in zip(enclosure, boxed)]
        if not all(b.is_finite() for b in enclosure):
            yield j + 1, None, None, "the enclosure is not finite (the balls grew unbounded)", None
            return
        q, y = _arr(enclosure[:n]), (_arr(enclosure[n:]) if y is not None else None)
        yield j + 1, q, y, None, [arb(b.abs_upper()) for b in _column(Q * D)]


class _Hull:
    """A hull box ``Y`` (ball column), its centre ``c`` (a point column), the step's image
    ``Pc`` of c over every time of the run and the step's Jacobian ``J`` over Y and every
    time: Phi(t, y) in Pc + J (y - c) for every y in Y."""

    __slots__ = ("Y", "c", "Pc", "J")

    def __init__(self, Y, c, Pc, J):
        self.Y, self.c, self.Pc, self.J = Y, c, Pc, J


def _hull(method, solution, args, ctx, base, own_J, n, first_order, posed):
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
    inputs = _Inputs(solution, hctx, posed)
    h, t0 = cast(arb, inputs.h), cast(arb, inputs.t0)
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
        stepper = method.prepare(_exact_params(system, hctx, posed=posed), h, hctx, **args)
        dstepper = method.prepare(_exact_params(system, hctx, dctx, posed), dctx.num(h), dctx,
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


def _exact_params(system, ctx, dctx=None, posed=True):
    """``system`` on the balls of ``ctx`` (or on the duals of ``dctx`` over them), its
    parameters as posed: one given exactly (``"9.81"``, ``Fraction``, a sympy number) is
    enclosed at ``ctx``'s precision (:func:`_enclose`), any other is the run's number,
    exactly (every one, ``posed`` False).  (Plain
    ``with_context`` refuses a number of the run's context in a context of more digits: a
    certificate at more digits than the run is of the same computation.)"""
    if hasattr(system, "param_symbols"):          # given values beside the run's numbers
        pairs = [(s, system._params[s], v)
                 for s, v in zip(system.param_symbols, system.param_values)]
    else:                                         # a first-order system keeps what was given
        pairs = [(k, v, v) for k, v in system._params.items()]
    params = {s: _enclose(posed_value(given) if posed else None, v, ctx)[0]
              for s, given, v in pairs}
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


def _initial(problem, system, state, ctx, inputs):
    """The initial (q, y) as balls: the inputs as posed (:class:`_Inputs`); the momentum
    of a given velocity (or the reverse) computed on balls."""
    q = _arr(inputs.q0)
    if problem.given == "y" or inputs.given is None:
        return q, None
    given = _arr(inputs.given)
    if state == "qp" and problem.given == "v":
        return q, system.momentum(q, given, inputs.t0)
    if state == "qv" and problem.given == "p":
        return q, system.velocity(q, given, inputs.t0)
    return q, given


def _enclose(exact, run_value, ctx):
    """(ball, True) of an input the user wrote exactly (:func:`mpvi.model.problem.posed_value`),
    or (the run's number exactly, False) where it was not given exactly or has no ball
    form (a sympy function Arb is not given here)."""
    if exact is not None:
        try:
            return ctx.num(exact), True
        except (TypeError, ValueError, PrecisionError):
            pass
    return ctx.lift(run_value), False


class _Inputs:
    """The inputs of the walk as balls: h, t0 and the given initial data (q0 and p0 or v0,
    as the problem was given) of the problem as posed (``Problem.posed``,
    ``Solution.posed``); ``exact`` names those that entered exactly (with their text),
    ``rounded`` those that entered as the run's numbers (with the exact value given, if
    any: one without a ball form)."""

    def __init__(self, solution, ctx, as_posed=True):
        self.as_posed = as_posed
        problem = solution.problem
        posed = (getattr(problem, "posed", None) or {}) if as_posed else {}
        run_posed = (getattr(solution, "posed", None) or {}) if as_posed else {}
        self.exact: list[tuple[str, str]] = []
        self.rounded: list[tuple[str, Any]] = []
        self.h = self.one("h", run_posed.get("h"), solution.h, ctx)
        self.t0 = self.one("t0", posed.get("t0"), problem.t0, ctx)
        given = {"y": "q0", "p": "p0", "v": "v0"}[problem.given]
        self.q0 = self.vector("y0" if given == "q0" else "q0", posed.get("q0"), problem.q0, ctx)
        self.given = None if given == "q0" else self.vector(
            given, posed.get(given), problem.p0 if given == "p0" else problem.v0, ctx)

    def one(self, name, exact, run_value, ctx):
        ball, is_exact = _enclose(exact, run_value, ctx)
        if is_exact:
            self.exact.append((name, posed_text(exact)))
        else:
            self.rounded.append((name, exact))
        return ball

    def vector(self, name, exact, run_values, ctx):
        exact = exact if exact is not None else [None] * len(run_values)
        pairs = [_enclose(e, v, ctx) for e, v in zip(exact, run_values)]
        if all(ok for _, ok in pairs):
            self.exact.append((name, "(" + ", ".join(posed_text(e) for e in exact) + ")"))
        else:
            for k, ((_, ok), e) in enumerate(zip(pairs, exact)):
                if ok:
                    self.exact.append((f"{name}[{k}]", posed_text(e)))
                else:
                    self.rounded.append((f"{name}[{k}]", e))
        return [b for b, _ in pairs]


def _statement(solution, method, inputs, run_ctx, posed, ctx):
    """What the certificate encloses, in plain words: the exact discrete trajectory of the
    problem as posed, naming every input that entered exactly and every one that entered
    as the run's number."""
    problem = solution.problem
    system = problem.system
    exact, rounded = list(inputs.exact), list(inputs.rounded)
    for symbol, run_value in zip(getattr(system, "param_symbols", []),
                                 getattr(system, "param_values", [])):
        given = posed_value(system._params[symbol]) if posed else None
        if given is not None and _enclose(given, run_value, ctx)[1]:
            exact.append((str(symbol), posed_text(given)))
        else:
            rounded.append((str(symbol), given))
    digits = f"{run_ctx.dps}-digit number"
    if not posed:
        return (f"the exact discrete trajectory of {method} on {problem.name} from the run's "
                f"own inputs: {', '.join(name for name, _ in rounded)} as the {digits}s the "
                f"run used (certify(..., posed=False)); each saved state of the computed "
                f"{run_ctx.dps}-digit run is compared with its enclosure")
    text = (f"the exact discrete trajectory of {method} on {problem.name} with "
            + ", ".join(f"{name} = {value}" for name, value in exact))
    given = [name for name, e in rounded if e is None]
    if given:
        many = len(given) > 1
        text += (f"; {', '.join(given)} as the {digits}{'s' if many else ''} the run used "
                 f"(given as {'floats or context numbers' if many else 'a float or a context number'}"
                 f", not as {'exact values' if many else 'an exact value'})")
    for name, e in rounded:
        if e is not None:
            text += (f"; {name} as the {digits} the run used ({posed_text(e)} has no ball "
                     "form)")
    return (text + f"; each saved state of the computed {run_ctx.dps}-digit run is compared "
            "with its enclosure")


def _state(q, y):
    return list(q) + ([] if y is None else list(y))


def _record(cert, solution, i, k, t, q, y, ctx, run_ctx, limits, judge):
    """Compare saved point i (node k) with its enclosure: refuse a wrong step, else record
    the enclosure and the proven digits.

    The computed state may differ from its enclosure by the run's round-off: ``limits``,
    the allowance carried from the states by the walk (:func:`_lohner`: the inputs'
    rounding and each step's tolerance, propagated by the step Jacobians), or, for box
    propagation, the inputs' rounding and the tolerance summed over the steps.  A state
    farther than that is judged by its own step (``judge``, :class:`_Judge`: from the
    run's saved node k-1 on balls, or from the point run solved again from the saved node
    before).  Within that step's allowance, the step is right and the gap is the run's
    rounding carried by the flow: the digits say how much is left.  Otherwise, or where
    the step cannot be judged, :class:`WrongStepError`."""
    balls = _state(q, y)
    computed = [_exact(x, ctx) for x in _state(solution.q[i], None if solution.y is None
                                               else solution.y[i])]
    scale = ctx.one
    for c in computed:
        scale = scale.max(abs(c))                 # exact: the largest |component|, or 1
    gaps = [abs(c - b) for c, b in zip(computed, balls)]
    far = [n for n, gap in enumerate(gaps) if gap.lower() > limits[n]]
    if far:
        verdict = judge(i, k, scale)
        judged = verdict is not None
        step, allowed, source = verdict if verdict is not None else ([], [], None)
        wrong = [n for n in far if not judged or abs(computed[n] - step[n]).lower() > allowed[n]]
        if wrong:
            n = wrong[0]
            what = "q" if n < len(q) else ("p" if solution.state == "qp" else "v")
            index = n if n < len(q) else n - len(q)
            value = (solution.q[i] if n < len(q) else solution.y[i])[index]
            why = (f"and at least {_sci(abs(computed[n] - step[n]).lower())} from {source}, "
                   f"beyond its allowance {_sci(allowed[n])} (the run's Newton tolerance and "
                   "the steps' rounding at the run's precision)" if judged else
                   f"beyond the run's round-off allowance {_sci(limits[n])} (the step "
                   "cannot be judged alone: no saved node before it, or its step fails)")
            raise WrongStepError(
                f"certify: step {k - 1} (node {k}) computed {what}[{index}] = "
                f"{run_ctx.to_str(value, 20)} outside its proven enclosure "
                f"{ctx.to_str(balls[n], 20)}: distance at least {_sci(gaps[n].lower())}, "
                + why, k - 1)
    _digits(cert, solution, i, t, q, y, ctx)


def _digits(cert, solution, i, t, q, y, ctx):
    """Record saved point i's enclosure (q, y) at time t and the proven digits of the
    computed state against it (module doc)."""
    balls = _state(q, y)
    computed = [_exact(x, ctx) for x in _state(solution.q[i], None if solution.y is None
                                               else solution.y[i])]
    scale = ctx.one
    for c in computed:
        scale = scale.max(abs(c))
    size = _log10(scale, -1)
    digits = []
    widest = ctx.zero
    for c, b in zip(computed, balls):
        bound = abs(c - b).upper()
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
