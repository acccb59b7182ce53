"""A reference trajectory of top2025's double pendulum at 64 or 128 digits: mpvi against heyoka.py.

    python benchmarks/pendulum_reference.py                 # 64 digits, 10 s, target 1e-55
    python benchmarks/pendulum_reference.py --dps 128       # 128 digits, target 1e-119
    python benchmarks/pendulum_reference.py --json          # one JSON object on stdout
    python benchmarks/pendulum_reference.py --method gbs    # mpvi's GBS instead of Taylor
    python benchmarks/pendulum_reference.py --context mp --no-check

The system is top2025's nonlinear double pendulum with its Table 1 data
(:func:`mpvi.systems.double_pendulum.nonlinear_double_pendulum`: l = g/omega0^2,
q(0) = (pi/4, pi/3), p(0) = 0), integrated over [0, T] = [0, 10 s] to an accuracy of
``--target`` (default 10^-(dps-9), i.e. 1e-55 at 64 digits, 1e-119 at 128) by two codes
at the same precision:

* **mpvi**, in the number context ``--context`` (mp: mpmath; gmp: gmpy2 where mpvi
  provides it, with the step compiled to MPFR C by :mod:`mpvi.compiled.cbackend` where a C
  compiler is found, bit-identical to the Python step; ``MPVI_COMPILED=0`` times the
  Python step), by one of two methods:

  - ``--method taylor`` (default): the Taylor-series scheme "taylor"
    (:mod:`mpvi.engines.taylor`: automatic differentiation of the generated field) with Jorba &
    Zou's adaptive step to the tolerance ``--taylor-tol`` (default the target / 100;
    ``eps``: the context's eps) and their order ceil(-ln(tol) / 2 + 1) (``--taylor-order``
    fixes another), its nodes -- only where the state is saved; the substeps between
    them adapt -- every ``--taylor-H`` (default 1 s); or, with ``--taylor-tol fixed``,
    the fixed step ``--taylor-H`` (default 0.0125 s) of order ``--taylor-order`` (default
    ceil(-ln(target) / 2));
  - ``--method gbs``: the Gragg-Bulirsch-Stoer extrapolation scheme "gbs", the method
    top2025's Figs. 2-3 build their reference with (``pendulum_reference`` of
    reproductions/top2025/_top2025_pendulum.py), at step ``--gbs-H`` with ``--gbs-levels``
    levels (order 2 levels).  Its rounding error is ctx.eps amplified by the Lebesgue
    constant of the extrapolation (3.6e7 at 24 levels, 2.3e10 at 32 for the harmonic
    step sequence), which limits the levels worth using: at 128 digits it cannot reach
    the default target 1e-119 (see benchmarks/README.md).

  Its error is *shown*, not assumed: a second run (not timed; ``--no-check`` skips it)
  gives max_j |X - X'| over the common nodes t_j = j H, which estimates the error of the
  timed run: for the adaptive Taylor method a run at the tolerance tol / 10^6 (its error
  is that much smaller; with 10 digits more when that is below 16 eps, so that rounding
  does not hide it), for the fixed steps a run at H/2 (its truncation error is 2^order
  times smaller).
* **heyoka.py** (optional; ``pip install heyoka``): ``taylor_adaptive`` with
  ``fp_type=heyoka.real`` at ``ctx.prec`` bits (216 for 64 digits), tolerance
  ``--heyoka-tol`` (default the context's eps, which is also heyoka's default).  Its
  equations of motion are formed by heyoka (``heyoka.lagrangian``) from mpvi's own sympy
  Lagrangian of the system (``system.lagrangian_expr``, converted by
  ``heyoka.from_sympy``, which refuses any constant that is not exact in binary), with
  the parameters m1, m2, g, l1, l2 as runtime parameters holding the context's values bit
  for bit.  Before anything is timed they are checked against mpvi's
  ``system.acceleration`` at random states (agreement a small multiple of ``ctx.eps``).
  heyoka's state is (q, q'); its end state is turned into (q, p) with mpvi's
  ``system.momentum``.

mpvi's compiled step is built (or loaded from the disk cache) by one untimed warm-up step
(``MPVI_COMPILE_AFTER`` defaults to 0 here), counted in its setup time.  Printed: the wall
time of each integration, heyoka's one-off JIT compilation time (shown
separately, and in a second ratio: it is paid once per system and precision), the ratios
mpvi / heyoka, mpvi's error estimate, the agreement |q_mpvi(T) - q_heyoka(T)|_2 and
|p_mpvi(T) - p_heyoka(T)|_2, the precision.  Progress lines go to stderr.  The exit status
is 1 if the error estimate or the agreement exceeds the target (the times then do not
compare equal accuracies), 0 otherwise -- also when heyoka.py is missing, after printing
how to install it and the mpvi time alone.

The last lines put the ratio in numbers: the steps taken and ms per step of both Taylor
methods (for mpvi's adaptive one its substeps); for GBS, mpvi's time per right-hand side
evaluation against one evaluation of the same equations in heyoka's compiled code
(``heyoka.cfunc``), and what the GBS evaluations would cost at that speed.  Measured
numbers and the choice of H, order and levels: ``benchmarks/README.md``.  The machine is noisy: compare ratios of one
run, not absolute times across runs.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from unittest import mock

import numpy as np

from mpvi import get_context, solve
from mpvi.compiled.cbackend import ENV_COMPILE_AFTER
from mpvi.engines.kernels import explicit_steps, taylor_steps
from mpvi.engines.taylor import jorba_zou_order
from mpvi.repro.studies import fraction, steps
from mpvi.systems.double_pendulum import nonlinear_double_pendulum

try:
    import heyoka
except ImportError:                        # the benchmark's optional dependency
    heyoka = None

INSTALL_HINT = "pip install heyoka"
WARM_UP_H = "1/1000"
"""One untimed step of this size builds the compiled step (or loads it from the disk
cache) before the timed run: counted in the setup time."""
PROGRESS_LINES = 10
"""A GBS run prints a progress line after each tenth of its steps."""
CHECK_STATES = 8
"""Random states at which heyoka's equations of motion are compared with mpvi's."""
CHECK_SEED = 20250
TIMING_BATCH = 2000
"""States in the batch that times one compiled evaluation of the equations of motion."""
CHECK_ULPS = 2 ** 10
"""Allowed disagreement of the two acceleration formulas, in units of ctx.eps times the
size of the terms (they are evaluated in different orders; each rounds at ctx.eps)."""


def say(message):
    """A progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


# ----- contexts ---------------------------------------------------------------------------

def default_context_name(dps):
    """'gmp' if mpvi provides that context at ``dps`` digits, else 'mp'."""
    try:
        get_context("gmp", dps)
    except (ValueError, ImportError):
        return "mp"
    return "gmp"


def default_target(dps):
    """10^-(dps - 9): 1e-55 at 64 digits, the accuracy asked of the reference."""
    return f"1e-{dps - 9}"


# ----- mpvi: the Taylor and GBS references -----------------------------------------------

TOL_MARGIN = 100
"""The default Taylor tolerance is the target over this: the global error over 10 s stays
within a few tol (measured: tol 1e-57 gives 1.4e-57 at 64 digits)."""
CHECK_TIGHTER = 10 ** 6
"""The check run of the adaptive Taylor method is at tol / CHECK_TIGHTER ..."""
CHECK_EPS = 16
CHECK_DIGITS = 10
"""... in a context CHECK_DIGITS digits wider when that is below CHECK_EPS eps."""


def default_taylor_tol(target):
    """The adaptive Taylor method's default tolerance: the target / TOL_MARGIN."""
    return target / TOL_MARGIN


def default_order(target):
    """The Taylor order for an accuracy ``target`` (a float): ceil(-ln(target) / 2), the
    most economical order of Jorba & Zou (2005), Sec. 3.2 (64 at 1e-55, 138 at 1e-119)."""
    return math.ceil(-math.log(target) / 2)


def method_run(prob, method, H, n, params, label, check_stability=True):
    """``n`` steps of ``method`` of size ``H`` (decimal string) from the problem's initial
    state (one :func:`mpvi.solve` run), with a progress line after each tenth of the
    steps.  Returns (Q, P, wall seconds, the solution's stats): the states at every node."""
    ctx = prob.system.ctx
    h = ctx.num(H)
    marks = {round(n * k / PROGRESS_LINES) for k in range(1, PROGRESS_LINES + 1)}
    done = [0]
    start = time.perf_counter()

    def tick(t, q, p):                     # after every step
        done[0] += 1
        if done[0] in marks:
            say(f"  {label}: t = {ctx.to_float(t):g} s ({100 * done[0] // n}%), "
                f"{time.perf_counter() - start:.1f} s")
    sol = solve(prob, method, h=h, n=n, callback=tick, check_stability=check_stability,
                **params)
    wall = time.perf_counter() - start
    return sol.q, sol.p, wall, sol.stats


def halve(H):
    """H/2 as a decimal string ('0.025' -> '0.0125'), or as a fraction ('1/40' -> '1/80')."""
    try:
        return str(Decimal(str(H)) / 2)
    except InvalidOperation:
        return str(fraction(H) / 2)


def rhs_evaluations(levels):
    """Right-hand side evaluations of one GBS step (:func:`mpvi.engines.ode.gbs_step`): one at the
    start, then n_i - 1 = 2 i - 1 more for each level i = 1..levels: 1 + levels^2."""
    return 1 + levels ** 2


def compiled_at_first_call():
    """``MPVI_COMPILE_AFTER=0`` for the duration unless it is set: the steps are compiled at
    their first call, in the setup time.  The environment is put back afterwards, so that
    a caller in the same process (a test running :func:`main`) keeps its own rule: left
    set, it had every later kernel of that process compiled at its first call."""
    return mock.patch.dict(os.environ, {ENV_COMPILE_AFTER: os.environ.get(ENV_COMPILE_AFTER, "0")})


def mpvi_reference(ctx, T, method, H, order_param, check, tol=None):
    """mpvi's reference over [0, T] by ``method`` ("taylor": ``order_param`` is the order,
    None for Jorba & Zou's from ``tol``, and ``tol`` the tolerance of the adaptive step or
    None for fixed steps; "gbs": the levels) and, if ``check``, its error estimate from a
    second run (a tighter tolerance, or H/2).  Returns a dict of plain values and the end
    state (q, p) in ``ctx``.  The steps are compiled at their first call
    (:func:`compiled_at_first_call`)."""
    with compiled_at_first_call():
        return _mpvi_reference(ctx, T, method, H, order_param, check, tol)


def _mpvi_reference(ctx, T, method, H, order_param, check, tol):
    t0 = time.perf_counter()
    prob = nonlinear_double_pendulum(ctx)
    prob.system.hamiltonian_rhs(prob.q0, prob.p0)      # sympy derivation + lambdify, once
    n = steps(T, H)
    adaptive = method == "taylor" and tol is not None
    if method == "taylor":
        params = {"degree": order_param, "tol": tol}
        order = order_param or jorba_zou_order(tol, ctx)
        compiled = taylor_steps(prob.system).compiled is not None
        evaluations = None
    else:
        params, order = {"levels": order_param}, 2 * order_param
        compiled = explicit_steps(prob.system) is not None
        evaluations = n * rhs_evaluations(order_param)
    name = {"taylor": "Taylor", "gbs": "GBS"}[method]
    method_run(prob, method, WARM_UP_H, 1, params, f"mpvi {name} warm-up", False)
    setup = time.perf_counter() - t0                   # the step's compilation included
    what = (f"adaptive (tol {ctx.to_str(tol, 3)}), nodes every H = {H} s" if adaptive else
            f"{n} steps of H = {H} s")
    say(f"mpvi: {name} of order {order}, {what}, context {ctx.name}")
    # the adaptive substeps resolve the motion: the nodes are only where the state is saved
    Q, P, wall, stats = method_run(prob, method, H, n, params, f"mpvi {name}",
                                   check_stability=not adaptive)
    out = {"scheme": method, "order": order, "H": H, **params, "adaptive": adaptive,
           "steps": n, "substeps": stats.get("substeps"),
           "compiled": compiled, "rhs_evaluations": evaluations, "setup_s": setup,
           "time_s": wall, "q_end": Q[-1], "p_end": P[-1], "prob": prob}
    if adaptive:
        out["tol"] = ctx.to_float(tol)
    if check:
        if adaptive:
            tight = tol / CHECK_TIGHTER
            # below the rounding of ctx: the check runs with CHECK_DIGITS more digits
            wide = (ctx if tight >= CHECK_EPS * ctx.eps else
                    type(ctx)(ctx.dps + CHECK_DIGITS))
            ctx.activate()                     # (a new context made its precision current)
            say(f"mpvi check (not timed): {name} at tol {ctx.to_str(tight, 3)}, "
                f"{wide.dps} digits")
            Qc, Pc, wall_c, _ = method_run(nonlinear_double_pendulum(wide), method, H, n,
                                           {"tol": wide.num(ctx.dump(tight))},
                                           f"mpvi {name} check", check_stability=False)
            Qc, Pc = ([[ctx.num(wide.dump(z)) for z in row] for row in X] for X in (Qc, Pc))
            Qc, Pc = ctx.matrix(Qc), ctx.matrix(Pc)
            ctx.activate()
            out["check_tol"] = ctx.to_float(tight)
            out["check_dps"] = wide.dps
            kind = "tol"
        else:
            half = halve(H)
            say(f"mpvi check (not timed): {name} of order {order}, {2 * n} steps of H/2 = {half} s")
            Qc, Pc, wall_c, _ = method_run(prob, method, half, 2 * n, params,
                                           f"mpvi {name} check")
            Qc, Pc = Qc[::2], Pc[::2]
            out["check_H"] = half
            kind = "H/2"
        out["check_time_s"] = wall_c
        out["check_kind"] = kind
        out["error_estimate"] = {
            "q": max(ctx.norm2(a - b) for a, b in zip(Q, Qc)),
            "p": max(ctx.norm2(a - b) for a, b in zip(P, Pc))}
    return out


# ----- heyoka.py: the Taylor reference ----------------------------------------------------

def to_real(ctx, x):
    """A context number as a heyoka ``real`` of ``ctx.prec`` bits, bit for bit (raises if
    the decimal round trip lost anything)."""
    r = heyoka.real(ctx.dump(x), ctx.prec)
    if ctx.num(str(r)) != x:
        raise ArithmeticError(f"the number {ctx.dump(x)} did not pass exactly into a "
                              f"{ctx.prec}-bit heyoka real")
    return r


def from_real(ctx, r):
    """A heyoka ``real`` of ``ctx.prec`` bits as a context number, bit for bit."""
    x = ctx.num(str(r))
    if heyoka.real(ctx.dump(x), ctx.prec) != r:
        raise ArithmeticError(f"heyoka's {r.prec}-bit real {r} did not pass exactly into "
                              f"the {ctx.name} context")
    return x


def heyoka_equations(system):
    """heyoka's equations of motion of ``system`` from its sympy Lagrangian.

    Returns (equations, q variables, v variables): the list of (variable, right-hand
    side) pairs of ``heyoka.lagrangian`` for the state (q, q'), with the system's
    parameters as ``heyoka.par[i]`` in the order of ``system.param_symbols``."""
    qs = list(heyoka.make_vars(*[str(c) for c in system.coords]))
    vs = list(heyoka.make_vars(*[str(v) for v in system.velocity_symbols]))
    names = dict(zip(system.coords + system.velocity_symbols, qs + vs))
    names.update({s: heyoka.par[i] for i, s in enumerate(system.param_symbols)})
    L = heyoka.from_sympy(system.lagrangian_expr, s_dict=names)
    return heyoka.lagrangian(L, qs, vs), qs, vs


def acceleration_cfunc(system, equations, qs, vs):
    """heyoka's accelerations (the right-hand sides of the v variables) compiled as a
    ``heyoka.cfunc`` of (q, v) at ``ctx.prec`` bits, the parameters as ``pars``."""
    rhs = dict((str(lhs), r) for lhs, r in equations)
    return heyoka.cfunc([rhs[str(v)] for v in vs], qs + vs, fp_type=heyoka.real,
                        prec=system.ctx.prec)


def random_states(ctx, n, count, seed=CHECK_SEED):
    """``count`` reproducible states (q, v): q in [-pi, pi]^n, v in [-4, 4]^n (1/s),
    from exact rationals."""
    rng = random.Random(seed)
    million = 10 ** 6

    def draw(bound):
        return ctx.num(Fraction(rng.randint(-bound * million, bound * million), million))
    with ctx.active():                     # pi * x below is bare arithmetic
        return [(ctx.asarray([ctx.pi * draw(1) for _ in range(n)]),
                 ctx.asarray([draw(4) for _ in range(n)])) for _ in range(count)]


def check_equations(system, fn, pars, states):
    """Compare heyoka's accelerations ``fn`` (:func:`acceleration_cfunc`) with
    ``system.acceleration`` at ``states``; raise ArithmeticError if they differ by more
    than CHECK_ULPS * eps * (1 + |a|).  Returns the largest difference relative to 1 + |a|."""
    ctx = system.ctx
    worst = ctx.zero
    for q, v in states:
        a_mpvi = system.acceleration(ctx.zero, q, v)
        inputs = np.array([to_real(ctx, x) for x in list(q) + list(v)], dtype=heyoka.real)
        a_hy = ctx.asarray([from_real(ctx, r) for r in fn(inputs, pars=pars)])
        worst = max(worst, ctx.norm2(a_hy - a_mpvi) / (1 + ctx.norm2(a_mpvi)))
    if worst > CHECK_ULPS * ctx.eps:
        raise ArithmeticError(
            f"heyoka's equations of motion differ from mpvi's system.acceleration by "
            f"{ctx.to_str(worst, 3)} (relative to 1 + |a|), more than {CHECK_ULPS} eps = "
            f"{ctx.to_str(CHECK_ULPS * ctx.eps, 3)}: the two codes do not integrate the same system")
    return worst


def compiled_evaluation_seconds(fn, ctx, pars, states):
    """Wall seconds of one compiled evaluation of the accelerations: ``fn`` in batch mode
    on TIMING_BATCH states (``states`` repeated), best of 3.  This is what one evaluation
    of the equations of motion costs without an interpreter, for comparison with the time
    per right-hand side evaluation of mpvi's GBS."""
    cols = [[to_real(ctx, x) for x in list(q) + list(v)] for q, v in states]
    batch = [cols[j % len(cols)] for j in range(TIMING_BATCH)]
    inputs = np.array(batch, dtype=heyoka.real).T.copy()
    par_batch = np.array([list(pars)] * TIMING_BATCH, dtype=heyoka.real).T.copy()
    best = None
    for _ in range(3):
        t0 = time.perf_counter()
        fn(inputs, pars=par_batch)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best / TIMING_BATCH


def heyoka_reference(prob, T, tol):
    """heyoka's Taylor integration of ``prob`` over [0, T] at ``ctx.prec`` bits with
    tolerance ``tol`` (a context number).  Returns a dict of plain values and the end
    state (q, p) in the problem's context."""
    system = prob.system
    ctx = system.ctx
    say(f"heyoka {heyoka.__version__}: equations of motion from mpvi's Lagrangian")
    equations, qs, vs = heyoka_equations(system)
    pars = np.array([to_real(ctx, x) for x in system.param_values], dtype=heyoka.real)
    fn = acceleration_cfunc(system, equations, qs, vs)
    states = random_states(ctx, system.dof, CHECK_STATES)
    worst = check_equations(system, fn, pars, states)
    say(f"  checked against mpvi's system.acceleration at {CHECK_STATES} random states: "
        f"{ctx.to_str(worst, 3)} (relative)")
    per_eval = compiled_evaluation_seconds(fn, ctx, pars, states)
    order = [str(lhs) for lhs, _ in equations]
    start = dict(zip(map(str, qs), prob.q0))
    start.update(zip(map(str, vs), system.velocity(prob.q0, prob.p0)))
    state = [to_real(ctx, start[name]) for name in order]
    say(f"heyoka: JIT compilation (taylor_adaptive, real, {ctx.prec} bits, "
        f"tol {ctx.to_str(tol, 3)})")
    t0 = time.perf_counter()
    ta = heyoka.taylor_adaptive(equations, state, fp_type=heyoka.real, prec=ctx.prec,
                                tol=to_real(ctx, tol), pars=list(pars))
    jit = time.perf_counter() - t0
    say(f"heyoka: integration to t = {T} s (Taylor order {ta.order})")
    t_end = to_real(ctx, ctx.num(fraction(T)))
    t0 = time.perf_counter()
    outcome, _, _, nsteps, *_ = ta.propagate_until(t_end)
    wall = time.perf_counter() - t0
    if outcome != heyoka.taylor_outcome.time_limit or ta.time != t_end:
        raise ArithmeticError(f"heyoka stopped at t = {ta.time} with outcome {outcome}, "
                              f"not at t = {T}")
    end = dict(zip(order, (from_real(ctx, r) for r in ta.state)))
    q = ctx.asarray([end[str(x)] for x in qs])
    v = ctx.asarray([end[str(x)] for x in vs])
    return {"version": heyoka.__version__, "fp_type": "real", "prec_bits": ctx.prec,
            "tol": tol, "taylor_order": ta.order, "steps": nsteps, "jit_s": jit,
            "time_s": wall, "equation_check": worst, "compiled_evaluation_us": per_eval * 10 ** 6,
            "q_end": q, "p_end": system.momentum(q, v)}


# ----- report ----------------------------------------------------------------------------

def build_report(ctx, args, target, mpvi, hy):
    """The JSON-able report: plain floats for times and error sizes, full-precision
    strings for the end states."""
    f = ctx.to_float
    rep = {"system": "top2025 nonlinear double pendulum (Table 1, l = g/omega0^2)",
           "T": args.T, "context": ctx.name, "dps": ctx.dps, "prec_bits": ctx.prec,
           "eps": f(ctx.eps), "target": f(target)}
    m = {k: v for k, v in mpvi.items() if k not in ("q_end", "p_end", "prob", "error_estimate")}
    m["ms_per_step"] = mpvi["time_s"] / (mpvi["substeps"] or mpvi["steps"]) * 10 ** 3
    if mpvi["rhs_evaluations"]:
        m["us_per_rhs_evaluation"] = mpvi["time_s"] / mpvi["rhs_evaluations"] * 10 ** 6
    m["q_end"] = [ctx.to_str(x) for x in mpvi["q_end"]]
    m["p_end"] = [ctx.to_str(x) for x in mpvi["p_end"]]
    if "error_estimate" in mpvi:
        m["error_estimate"] = {k: f(v) for k, v in mpvi["error_estimate"].items()}
    rep["mpvi"] = m
    errors = list(mpvi.get("error_estimate", {}).values())
    if hy is None:
        rep["heyoka"] = None
        rep["heyoka_missing"] = f"heyoka.py is not installed: {INSTALL_HINT}"
        rep["ratio"] = rep["ratio_with_jit"] = rep["agreement"] = None
    else:
        h = {k: v for k, v in hy.items() if k not in ("q_end", "p_end")}
        h["tol"] = f(hy["tol"])
        h["equation_check"] = f(hy["equation_check"])
        h["q_end"] = [ctx.to_str(x) for x in hy["q_end"]]
        h["p_end"] = [ctx.to_str(x) for x in hy["p_end"]]
        rep["heyoka"] = h
        agree = {"q": ctx.norm2(mpvi["q_end"] - hy["q_end"]),
                 "p": ctx.norm2(mpvi["p_end"] - hy["p_end"])}
        errors += list(agree.values())
        rep["agreement"] = {k: f(v) for k, v in agree.items()}
        rep["ratio"] = mpvi["time_s"] / hy["time_s"]
        rep["ratio_with_jit"] = mpvi["time_s"] / (hy["time_s"] + hy["jit_s"])
        if mpvi["rhs_evaluations"]:
            # what mpvi's GBS evaluations would cost at heyoka's compiled speed (the "why")
            rep["gbs_evaluations_at_compiled_cost_s"] = (
                mpvi["rhs_evaluations"] * hy["compiled_evaluation_us"] / 10 ** 6)
        rep["heyoka"]["ms_per_step"] = hy["time_s"] / hy["steps"] * 10 ** 3
    # None: neither the H/2 check nor heyoka ran, so nothing shows the accuracy
    rep["target_met"] = all(e <= target for e in errors) if errors else None
    return rep


def print_report(rep):
    m, h = rep["mpvi"], rep["heyoka"]
    print(f"{rep['system']}, [0, {rep['T']}] s")
    print(f"precision: {rep['dps']} digits = {rep['prec_bits']} bits (eps {rep['eps']:.3g}), "
          f"mpvi context {rep['context']}; target accuracy {rep['target']:.0e}")
    path = "compiled MPFR steps" if m["compiled"] else "Python steps"
    if m["scheme"] == "gbs":
        what = (f"GBS order {m['order']} (levels {m['levels']}), {m['steps']} steps of "
                f"H = {m['H']} s, {m['rhs_evaluations']} rhs evaluations")
    elif m["adaptive"]:
        what = (f"Taylor order {m['order']}, adaptive (tol {m['tol']:.3g}): {m['substeps']} "
                f"steps, nodes every H = {m['H']} s")
    else:
        what = f"Taylor order {m['order']}, {m['steps']} steps of H = {m['H']} s"
    print(f"mpvi   {what}: {m['time_s']:.2f} s, {m['ms_per_step']:.2f} ms per step ({path}; "
          f"+ {m['setup_s']:.2f} s setup: sympy, code generation, compilation)")
    if "error_estimate" in m:
        e = m["error_estimate"]
        against = (f"X(tol {m['check_tol']:.3g}, {m['check_dps']} digits)"
                   if m.get("check_kind") == "tol" else "X(H/2)")
        print(f"       error estimate max_j |X - {against}|: q {e['q']:.2e}, p {e['p']:.2e}")
    else:
        print("       error estimate: not computed (--no-check)")
    status = {True: "met", False: "NOT met", None: "not shown (no check run, no heyoka)"}
    if h is None:
        print(f"heyoka.py is not installed ({INSTALL_HINT}); it is an optional dependency of "
              "this benchmark only, so only the mpvi time is reported")
        print(f"target accuracy {rep['target']:.0e}: {status[rep['target_met']]}")
        return
    print(f"heyoka {h['version']} taylor_adaptive(real, {h['prec_bits']} bits), tol "
          f"{h['tol']:.3g}, Taylor order {h['taylor_order']}, {h['steps']} steps: "
          f"{h['time_s']:.2f} s, {h['ms_per_step']:.2f} ms per step (+ {h['jit_s']:.2f} s "
          "one-off JIT compilation)")
    print(f"agreement at t = {rep['T']} s: |q_mpvi - q_heyoka| {rep['agreement']['q']:.2e}, "
          f"|p_mpvi - p_heyoka| {rep['agreement']['p']:.2e}")
    print(f"ratio mpvi / heyoka: {rep['ratio']:.3g} (integration), "
          f"{rep['ratio_with_jit']:.3g} (heyoka's JIT compilation included)")
    faster = (f"heyoka is {rep['ratio']:.3g} times faster" if rep["ratio"] > 1 else
              f"mpvi is {1 / rep['ratio']:.3g} times faster")
    if m["scheme"] == "gbs":
        print(f"{faster}.  Per evaluation of the equations of motion mpvi's GBS spends "
              f"{m['us_per_rhs_evaluation']:.1f} us ({path}, context {rep['context']}), "
              f"heyoka's compiled MPFR code {h['compiled_evaluation_us']:.1f} us; mpvi's "
              f"{m['rhs_evaluations']} evaluations at the compiled cost would take "
              f"{rep['gbs_evaluations_at_compiled_cost_s']:.2f} s against heyoka's "
              f"{h['time_s']:.2f} s for {h['steps']} Taylor steps of order {h['taylor_order']}.")
    else:
        kind = "adaptive" if m["adaptive"] else "fixed-step"
        print(f"{faster}.  mpvi's {kind} Taylor method takes {m['substeps'] or m['steps']} "
              f"steps of order {m['order']} at {m['ms_per_step']:.2f} ms, heyoka's adaptive "
              f"one {h['steps']} steps of order {h['taylor_order']} at {h['ms_per_step']:.2f} ms.")
    print(f"target accuracy {rep['target']:.0e}: {status[rep['target_met']]}")


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="heyoka.py is an optional dependency of this benchmark only: "
               f"{INSTALL_HINT}.  Exit status 1 if the target accuracy is not met.")
    ap.add_argument("--dps", type=int, default=64, help="significant digits (default 64)")
    ap.add_argument("--context", choices=("mp", "gmp"), default=None,
                    help="mpvi's number context (default: gmp if mpvi provides it, else mp)")
    ap.add_argument("--T", default="10", help="final time in s (default 10)")
    ap.add_argument("--target", default=None,
                    help="accuracy the reference must reach (default 10^-(dps-9): 1e-55 at 64 digits)")
    ap.add_argument("--method", choices=("taylor", "gbs"), default="taylor",
                    help="mpvi's reference method (default taylor)")
    ap.add_argument("--taylor-tol", default=None,
                    help="tolerance of the adaptive Taylor step (default the target / 100; "
                         "'eps': the context's eps; 'fixed': fixed steps of --taylor-H)")
    ap.add_argument("--taylor-H", default=None,
                    help="spacing of the Taylor nodes in s (default 1; with --taylor-tol "
                         "fixed the step, default 0.0125; see benchmarks/README.md)")
    ap.add_argument("--taylor-order", type=int, default=None,
                    help="Taylor order (default: adaptive ceil(-ln(tol) / 2 + 1), fixed "
                         "ceil(-ln(target) / 2): 64 at 1e-55, 138 at 1e-119)")
    ap.add_argument("--gbs-H", default="0.02",
                    help="GBS step in s (default 0.02; chosen for 64 digits, see benchmarks/README.md)")
    ap.add_argument("--gbs-levels", type=int, default=24,
                    help="GBS levels, order 2 levels (default 24; chosen for 64 digits)")
    ap.add_argument("--heyoka-tol", default=None,
                    help="heyoka's tolerance (default: the context's eps, heyoka's own default)")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the (untimed) run at H/2 that estimates mpvi's error")
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    args = ap.parse_args(argv)
    if args.target is None and args.dps < 10:
        ap.error(f"--dps {args.dps} leaves no room for the default target 10^-(dps-9): "
                 "give --target")
    if args.taylor_order is not None and args.taylor_order < 1:
        ap.error(f"--taylor-order must be positive, got {args.taylor_order}")
    if args.gbs_levels < 1:
        ap.error(f"--gbs-levels must be positive, got {args.gbs_levels}")

    name = args.context or default_context_name(args.dps)
    ctx = get_context(name, args.dps)
    with ctx.active():         # the differences of end states below are bare arithmetic
        return run(ctx, args)


def run(ctx, args):
    """The benchmark in ``ctx`` (active): the exit status."""
    target = ctx.num(args.target or default_target(args.dps))
    if args.method == "taylor" and args.taylor_tol == "fixed":
        order = args.taylor_order or default_order(ctx.to_float(target))
        mpvi = mpvi_reference(ctx, args.T, "taylor", args.taylor_H or "0.0125", order,
                              not args.no_check)
    elif args.method == "taylor":
        tol = (default_taylor_tol(target) if args.taylor_tol is None else
               ctx.eps if args.taylor_tol == "eps" else ctx.num(args.taylor_tol))
        mpvi = mpvi_reference(ctx, args.T, "taylor", args.taylor_H or "1", args.taylor_order,
                              not args.no_check, tol)
    else:
        mpvi = mpvi_reference(ctx, args.T, "gbs", args.gbs_H, args.gbs_levels, not args.no_check)
    hy = None
    if heyoka is None:
        say(f"heyoka.py is not installed: {INSTALL_HINT} (optional, for this benchmark only)")
    else:
        tol = ctx.eps if args.heyoka_tol is None else ctx.num(args.heyoka_tol)
        hy = heyoka_reference(mpvi["prob"], args.T, tol)
    rep = build_report(ctx, args, target, mpvi, hy)
    if args.json:
        print(json.dumps(rep, indent=1))
    else:
        print_report(rep)
    if rep["target_met"] is False:
        say(f"target accuracy {args.target or default_target(args.dps)} NOT met (see the error "
            "estimate and the agreement): choose a smaller --taylor-tol (with --taylor-tol "
            "fixed a smaller --taylor-H, a higher --taylor-order), a smaller --gbs-H (other "
            "--gbs-levels) or a smaller --heyoka-tol")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
