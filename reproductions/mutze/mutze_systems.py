"""Beyond the paper: Mutze's direct midpoint method on the systems of top2025 -- the
nonlinear double pendulum (top2025 Sec. 3, Table 1) and the looping Lagrange top
(top2025 Sec. 4.2, Table 3) -- next to Simpson's variational integrator, the variational
implicit midpoint rule (top2025 App. B) and the ODE implicit midpoint rule on (x, v).

Methods (keys of ``METHODS``): ``simpson``, ``midpoint`` (variational, state (q, p)),
``implicit_midpoint`` (ODE, state (x, v)), ``mutze`` (the g-family of mutze eq. (72) with
g = 0, the direct midpoint method eqs. (77)-(78), a solved by Newton to the context's
precision) and ``mutze_iter1`` (the same with one simple round of the paper's iteration
(80), a_1 = A(t + tau, x + v tau, v + a_0 tau): explicit, two evaluations of A per step).

Measured, at the run's precision (64 digits by default):

* **orders** -- the error at a fixed time T for a sequence of halved steps and its
  least-squares order (:func:`mpvi.analysis.measures.fit_order`):
  double pendulum: |q(T) - q_ref(T)|_2 (and p) against GBS of order 2 ``gbs_levels``,
  whose own error is estimated by halving its step (``reference halving difference``);
  top: |theta(T) - theta_ex(T)| against the exact Weierstrass-p nutation (top2025
  eq. 18aa, :class:`mpvi.systems.lagrange_top_exact.LagrangeTopNutation`) at
  T = 5/4 t_bar (t_bar the nutation period; 5/4 keeps T off the turning points of theta,
  where a phase error enters only quadratically), and the sup over the nodes of
  [0, T] of |theta - theta_ex|;
* **energy behaviour** -- e_H(t) = (H(t) - H_0)/H_0 over a long run at a fixed moderate
  step (H from the Legendre map for the (x, v) methods).  Time unit P: the fast linear
  mode of the double pendulum, P = 2 pi / (omega0 sqrt(2 + sqrt 2)) (the linearization's
  larger frequency, axioms2024), and t_bar for the top.  With M(t) = max_{s <= t} |e_H(s)|:
  ``energy growth exponent`` = least-squares slope of log M(t) against log t at
  t = T, T/2, T/4, ... down to ``min_periods`` P (0: bounded, 1: linear drift, 1/2:
  random walk), ``energy decade ratio`` = M(T)/M(T/10), ``energy drift per 100 periods``
  = 100 P times the least-squares slope of e_H(t) against t, and ``energy max``;
  for the top also the largest relative errors of the cyclic momenta p_phi, p_psi;
* **reversibility** -- one step from (q0, y0) followed by one step from (q1, -y1) must
  return (q0, -y0) for a method that is symmetric on these time-reversible systems
  (L even in v, no forces, no explicit t): ``reversibility defect`` is the distance.
  The g-family is symmetric for every L and F (eq. 72 with eq. 74): the step from
  (t + h, x1, v1) with -h has t + h - tau = t + tau, x1 - tau v1 = x + tau v and
  v1 - a tau = v + a tau, so it solves the same equation for a and returns to (x, v)
  (Newton finding the same root); only the truncated iteration (``mutze_iter1``) breaks
  it.  So g = 0 is not symplectic here (position-dependent mass), but symmetric;
* **robustness** -- every run is one solve, stopped when it diverges (an energy check
  every ``check_every`` steps, or a failed step: :func:`guarded_solve`); the top's
  nutation comes down to theta_min = 0.047 rad, near the pole theta = 0 where M(q) is
  singular: a discrete trajectory that reaches the other side of the pole stops there
  (the singular factor sin(theta) of det M changes sign: :mod:`mpvi.model.singular`), and
  ``min theta`` is the smallest theta before;
* **cost** -- wall time per step of each method in the long energy runs (same run) and
  its ratio to Simpson's: printed and kept in the ``cost`` table and the provenance, not
  in ``values`` (they change from run to run).

Tables: '' (orders, long form: system, method, variable, T, N, h, error, order_step,
order, diverged), ``energy`` (run, system, method, h, t, t_periods, energy_error at every
``stride``-th node, window_max = max |e_H| over the nodes since the previous row),
``cost``.  Nothing of this is printed in the papers: there is no published CSV.

Measured (full run, 64 digits): orders 2.00 (Mutze, both systems; finest three steps),
4.0 (Simpson); energy errors bounded for every Newton-solved method (growth exponents
<= 0.04) but the one-iteration variant drifts (double pendulum: exponent 0.11,
1.2e-3 per 100 P) and blows up on the top at h = t_bar/20 and t_bar/40; Mutze's energy
error is 5-6 times the variational midpoint's, its cyclic momenta are not conserved
(p_phi: 7e-4 at t_bar/40), and at t_bar/20 it crosses the pole in the third period (step
46, t = 4.34 s), where the run stops; a step costs ~0.2 Simpson steps.  (Before mpvi
checked singular factors, the run went on through the pole to theta = -1.13 and a Newton
failure after 35 periods: numbers without meaning.)

Run: ``mpvi run mutze_systems`` or ``python reproductions/mutze/mutze_systems.py``.
"""
from fractions import Fraction

import numpy as np
import pandas as pd

from mpvi.analysis.measures import fit_order
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import fraction, numstr, steps
from mpvi.methods import get_method
from mpvi.systems.double_pendulum import nonlinear_double_pendulum

from mpvi_papers.mutze._mutze import PAPER
from mpvi_papers.top2025._top2025_top import LoopingTop

#: key -> (registered method, options)
METHODS = {
    "simpson": ("simpson", {}),
    "midpoint": ("midpoint", {}),
    "implicit_midpoint": ("implicit_midpoint", {}),
    "mutze": ("mutze", {"g": 0, "solver": "newton"}),
    "mutze_iter1": ("mutze", {"g": 0, "solver": "iterate", "iterations": 1, "variant": "simple"}),
}
STYLE = {
    "simpson": {"color": "tab:green", "ls": "-", "marker": "o", "label": "Simpson (variational)"},
    "midpoint": {"color": "tab:blue", "ls": "--", "marker": "s", "label": "midpoint (variational)"},
    "implicit_midpoint": {"color": "tab:purple", "ls": ":", "marker": "^",
                          "label": "implicit midpoint (ODE, x-v)"},
    "mutze": {"color": "tab:red", "ls": "-", "marker": "D", "label": "Mutze g=0 (Newton)"},
    "mutze_iter1": {"color": "tab:orange", "ls": "-.", "marker": "v",
                    "label": "Mutze g=0, 1 simple iteration"},
}
SYSTEMS = ("double_pendulum", "top")
FINEST = 3
"""The least-squares order is also fitted over the FINEST smallest steps."""
TITLES = {"double_pendulum": "double pendulum (top2025 Table 1)",
          "top": "Lagrange top (top2025 Table 3)"}

PARAMS = {
    "methods": list(METHODS),
    # orders: T in s, N steps over [0, T]; GBS reference of order 2 gbs_levels, gbs_N steps
    "pendulum_T": "2", "pendulum_N": [40, 80, 160, 320, 640],
    "gbs_N": 80, "gbs_levels": 16,
    # orders on the top: T = T_tbar t_bar, h = t_bar / N
    "top_T_tbar": "5/4", "top_N": [20, 40, 80, 160, 320],
    # energy: double pendulum over energy_T s at step energy_h; top over ``periods`` t_bar
    # at h = t_bar / N for each entry of top_energy (the first is plotted and timed; the
    # second, coarser one shows what happens at top2025's coarsest step)
    "pendulum_energy_T": "100", "pendulum_energy_h": "1/50",
    "top_energy": [{"N": 40, "periods": 100}, {"N": 20, "periods": 40}],
    "energy_points": 200, "min_periods": 10, "check_every": 8,
}
QUICK = {
    "pendulum_T": "1", "pendulum_N": [20, 40, 80], "gbs_N": 20, "gbs_levels": 12,
    "top_N": [20, 40, 80],
    "pendulum_energy_T": "10", "top_energy": [{"N": 40, "periods": 5}, {"N": 20, "periods": 5}],
    "energy_points": 100, "min_periods": 2,
}


# ----- helpers ---------------------------------------------------------------------------

class GuardedRun:
    """The kept points of a guarded run: t, q, p (arrays), the relative energy error e_H,
    the wall time of the solve (``stats["wall_time_s"]``: the steps and the divergence
    checks, not the Legendre maps and energy errors computed afterwards), and
    ``diverged`` (None, or the reason and the time it was noticed)."""

    def __init__(self, t, q, p, e, wall, diverged):
        self.t, self.q, self.p, self.e, self.wall, self.diverged = t, q, p, e, wall, diverged


def guarded_solve(run, problem, key, h, n, saveat=None):
    """``run.solve`` of METHODS[key] on ``problem`` over n steps of h, one run, stopped when
    it diverges: a relative energy error above 1 at a check (every ``run.params
    ["check_every"]``-th node and the last), or a failed step (Newton, singular matrix,
    non-finite state).  mpmath does not overflow, so an unstable explicit method would
    otherwise grow its exponents without bound, each step slower than the last.  The
    points kept are those up to the last node that passed a check (after a failed step,
    from the partial solution the error carries).  ``saveat`` as for :func:`mpvi.solve`
    (None: every node).  Returns a :class:`GuardedRun`."""
    from mpvi import IntegrationError, NewtonError
    ctx, every = run.ctx, run.params["check_every"]
    name, opts = METHODS[key]
    S = problem.system
    qv = get_method(name).state == "qv"
    H0 = S.energy(problem.q0, problem.p0)
    done = {"steps": 0, "passed": 0}           # steps taken; the last node that passed

    def check(t, q, y):
        """The divergence check after each step; True stops the run."""
        done["steps"] += 1
        k = done["steps"]
        if k % every and k != n:
            return False
        p = S.momentum(q, y, t) if qv else y
        if abs(S.energy(q, p) - H0) > abs(H0):
            return True
        done["passed"] = k
        return False

    diverged = None
    try:
        # this run has its own divergence test (the energy, above): the driver's state
        # guard would stop some runs a few steps earlier and change the recorded times
        sol = run.solve(problem, name, h=h, n=n, saveat=saveat, callback=check,
                        max_growth=None, **opts)
        if sol.stopped is not None:
            diverged = ("relative energy error above 1", done["steps"] * h)
    except (NewtonError, IntegrationError) as exc:
        diverged = (f"step failed: {type(exc).__name__}: {' '.join(str(exc).split())}",
                    done["passed"] * h)
        sol = exc.solution                     # the points saved before the failing step
    end = problem.t0 + done["passed"] * h
    keep = [i for i, t in enumerate(sol.t) if t <= end]
    T, Q, P, wall = sol.t[keep], sol.q[keep], sol.p[keep], sol.stats["wall_time_s"]
    Qa, Pa = np.array(Q, dtype=ctx.dtype), np.array(P, dtype=ctx.dtype)
    e = np.array([(S.energy(a, b) - H0) / H0 for a, b in zip(Qa, Pa)], dtype=ctx.dtype)
    if diverged is not None:
        run.progress(f"    {key}: diverged at t = {ctx.to_str(diverged[1], 6)} ({diverged[0]})")
    return GuardedRun(np.array(T, dtype=ctx.dtype), Qa, Pa, e, wall, diverged)


def fast_period(ctx, prob):
    """P = 2 pi / omega_fast, omega_fast^2 = omega0^2 (2 + sqrt 2): the faster normal mode
    of the linearized double pendulum with m1 = m2, l1 = l2 (axioms2024)."""
    return 2 * ctx.pi / (prob.omega0 * ctx.sqrt(2 + ctx.sqrt(2)))


def reversibility_defect(system, key, q0, y0, h, ctx):
    """|(q2, y2) - (q0, -y0)| after one step from (q0, y0) and one from (q1, -y1): zero
    (to rounding) for a method symmetric on a time-reversible system."""
    name, opts = METHODS[key]
    method = get_method(name)
    stepper = method.prepare(system, h, ctx, **opts)
    y = y0 if method.state == "qp" else system.velocity(q0, y0)
    r1 = stepper(ctx.zero, q0, y)
    r2 = stepper(h, r1.q, -r1.y)
    return max(ctx.norm2(r2.q - q0), ctx.norm2(r2.y + y))


def energy_growth(ctx, h, e, period, min_periods):
    """Growth measures of a signed relative energy error e at nodes t_j = j h (module doc):
    (growth exponent, decade ratio, drift per 100 periods, max |e|)."""
    n = len(e) - 1
    M, run_max = [], ctx.zero
    for x in e:
        run_max = max(run_max, abs(x))
        M.append(run_max)
    ts, ms = [], []
    k = n
    while k >= 1 and k * h >= min_periods * period:
        ts.append(k * h)
        ms.append(M[k])
        k //= 2
    exponent = fit_order(ctx, ts, ms) if len(ts) >= 2 and all(m > 0 for m in ms) else None
    decade = M[n] / M[n // 10] if n >= 10 and M[n // 10] > 0 else None
    t = [j * h for j in range(n + 1)]
    tm, em = ctx.fsum(t) / (n + 1), ctx.fsum(e) / (n + 1)
    slope = (ctx.fsum((a - tm) * (b - em) for a, b in zip(t, e))
             / ctx.fsum((a - tm) ** 2 for a in t))
    return exponent, decade, 100 * period * slope, M[n]


def energy_rows(ctx, system_key, key, h, e, period, points):
    """Every ``stride``-th node of e_H with the max |e_H| since the previous kept node."""
    n = len(e) - 1
    stride = max(1, -(-n // points))
    rows, wmax = [], ctx.zero
    for j in range(n + 1):
        wmax = max(wmax, abs(e[j]))
        if j % stride == 0 or j == n:
            t = j * h
            rows.append({"system": system_key, "method": key, "h": numstr(ctx, h),
                         "t": numstr(ctx, t), "t_periods": numstr(ctx, t / period),
                         "energy_error": numstr(ctx, e[j]), "window_max": numstr(ctx, wmax)})
            wmax = ctx.zero
    return rows


def order_rows(ctx, system_key, key, variable, T, Ns, hs, errs, why, values):
    """Rows of the orders table; ``errs[i]`` is None where the run diverged (``why[i]``),
    and the least-squares order uses the other steps (at least two); the value
    ``order <variable> finest k`` fits only the k = FINEST smallest of them (the coarsest
    steps on the top are far from the asymptotic regime)."""
    ok = [i for i, e in enumerate(errs) if e is not None]
    order = fit_order(ctx, [hs[i] for i in ok], [errs[i] for i in ok]) if len(ok) >= 2 else None
    if order is not None:
        values[f"{system_key} {key} order {variable}"] = numstr(ctx, order)
    fine = ok[-FINEST:]
    if len(fine) >= 2 and len(fine) < len(ok):
        values[f"{system_key} {key} order {variable} finest {len(fine)}"] = numstr(
            ctx, fit_order(ctx, [hs[i] for i in fine], [errs[i] for i in fine]))
    rows = []
    for i, (N, h, e) in enumerate(zip(Ns, hs, errs)):
        step = ""
        if e is not None:
            values[f"{system_key} {key} error {variable} N={N}"] = numstr(ctx, e)
            if i > 0 and errs[i - 1] is not None:
                step = numstr(ctx, ctx.log(errs[i - 1] / e) / ctx.log(hs[i - 1] / h))
        else:
            values[f"{system_key} {key} diverged N={N}"] = why[i]
        rows.append({"system": system_key, "method": key, "variable": variable,
                     "T": numstr(ctx, T), "N": N, "h": numstr(ctx, h),
                     "error": "" if e is None else numstr(ctx, e), "order_step": step,
                     "order": "" if order is None else numstr(ctx, order),
                     "diverged": why[i] or ""})
    return rows


def diverged_note(ctx, tr, period=None):
    """'' for a complete run, else the reason and time (in periods if given)."""
    if tr.diverged is None:
        return ""
    reason, t = tr.diverged
    where = f"t = {ctx.to_str(t, 6)} s"
    if period is not None:
        where += f" = {ctx.to_str(t / period, 4)} periods"
    return f"{reason} at {where}"


# ----- the two systems ---------------------------------------------------------------------

def pendulum_orders(run, prob, values):
    """Errors at T against GBS (checked by halving its step); rows of the orders table."""
    ctx, p = run.ctx, run.params
    T = fraction(p["pendulum_T"])
    nr, lv = p["gbs_N"], p["gbs_levels"]
    run.progress(f"double pendulum: GBS reference of order {2 * lv}, {nr} and {2 * nr} steps "
                 f"over T = {p['pendulum_T']} s")
    ref = run.solve(prob, "gbs", h=ctx.num(T / nr), n=nr, saveat=nr, levels=lv)
    half = run.solve(prob, "gbs", h=ctx.num(T / (2 * nr)), n=2 * nr, saveat=2 * nr, levels=lv)
    check = max(ctx.norm2(ref.q[-1] - half.q[-1]), ctx.norm2(ref.p[-1] - half.p[-1]))
    values["double_pendulum reference halving difference"] = numstr(ctx, check)
    q_ref, p_ref = half.q[-1], half.p[-1]
    rows, Ns = [], p["pendulum_N"]
    hs = [ctx.num(T / N) for N in Ns]
    for key in p["methods"]:
        eq, ep, why = [], [], []
        for N, h in zip(Ns, hs):
            run.progress(f"double pendulum orders: {key}, N = {N}")
            tr = guarded_solve(run, prob, key, h, N, saveat=N)
            why.append(diverged_note(ctx, tr))
            eq.append(None if why[-1] else ctx.norm2(tr.q[-1] - q_ref))
            ep.append(None if why[-1] else ctx.norm2(tr.p[-1] - p_ref))
        rows += order_rows(ctx, "double_pendulum", key, "q", ctx.num(T), Ns, hs, eq, why, values)
        rows += order_rows(ctx, "double_pendulum", key, "p", ctx.num(T), Ns, hs, ep, why, values)
    return rows, check


def top_orders(run, lt, values):
    """theta errors at T = T_tbar t_bar and over the nodes against the exact nutation."""
    ctx, p = run.ctx, run.params
    Tt = fraction(p["top_T_tbar"])
    T = ctx.num(Tt) * lt.tbar
    Ns = p["top_N"]
    for N in Ns:
        if (Tt * N).denominator != 1:
            raise ValueError(f"top_T_tbar = {p['top_T_tbar']} is not a whole number of steps "
                             f"t_bar/{N}")
    hs = [lt.tbar / N for N in Ns]
    theta_T = lt.nutation.theta(T)
    exact_cache = {}

    def theta_ex(N, j):
        key = Fraction(j, N)
        if key not in exact_cache:
            exact_cache[key] = lt.nutation.theta(lt.tbar * key.numerator / key.denominator)
        return exact_cache[key]

    rows = []
    for key in p["methods"]:
        eT, esup, why = [], [], []
        for N, h in zip(Ns, hs):
            n = int(Tt * N)
            run.progress(f"top orders: {key}, h = t_bar/{N} ({n} steps)")
            tr = guarded_solve(run, lt.top, key, h, n)
            why.append(diverged_note(ctx, tr, lt.tbar))
            eT.append(None if why[-1] else abs(tr.q[-1, 1] - theta_T))
            esup.append(None if why[-1] else
                        max(abs(tr.q[j, 1] - theta_ex(N, j)) for j in range(n + 1)))
        rows += order_rows(ctx, "top", key, "theta", T, Ns, hs, eT, why, values)
        rows += order_rows(ctx, "top", key, "theta_sup", T, Ns, hs, esup, why, values)
    return rows


def energy_study(run, system_key, label, problem, h, n, period, values, cost=None,
                 extra_fn=None):
    """Long runs of every method on ``problem`` at step h (``label`` names the step in the
    value keys): energy rows, growth values and, if ``cost`` is a list, cost rows."""
    ctx, p = run.ctx, run.params
    rows, walls = [], {}
    for key in p["methods"]:
        run.progress(f"{system_key} energy: {key}, {n} steps of {label}")
        tr = guarded_solve(run, problem, key, h, n)
        done = len(tr.t) - 1
        walls[key] = (tr.wall, done)
        pre = f"{system_key} {label} {key} energy"
        note = diverged_note(ctx, tr, period)
        if note:
            values[f"{pre} diverged"] = note
        else:
            ex, dec, drift, mx = energy_growth(ctx, h, tr.e, period, p["min_periods"])
            values[f"{pre} max"] = numstr(ctx, mx)
            if ex is not None:
                values[f"{pre} growth exponent"] = numstr(ctx, ex)
            if dec is not None:
                values[f"{pre} decade ratio"] = numstr(ctx, dec)
            values[f"{pre} drift per 100 periods"] = numstr(ctx, drift)
            run.progress(f"  {key}: max |e_H| = {ctx.to_str(mx, 3)}, growth exponent "
                         f"{'-' if ex is None else ctx.to_str(ex, 3)}, drift/100 periods "
                         f"{ctx.to_str(drift, 3)}")
        if extra_fn is not None:
            extra_fn(f"{system_key} {label} {key}", tr, values)
        for r in energy_rows(ctx, system_key, key, h, tr.e, period, p["energy_points"]):
            rows.append({"run": label, **r})
    if cost is not None:
        ref = walls.get("simpson")
        for key, (w, done) in walls.items():
            ratio = "" if ref is None else round((w / done) / (ref[0] / ref[1]), 3)
            cost.append({"system": system_key, "method": key, "steps": done,
                         "wall_s": round(w, 3), "ms_per_step": round(1000 * w / done, 4),
                         "ratio_vs_simpson": ratio})
            run.progress(f"{system_key} cost: {key} {1000 * w / done:.3f} ms/step"
                         + ("" if ref is None else f" = {ratio} x Simpson"))
    return rows


# ----- compute and plot ----------------------------------------------------------------------

def compute(run):
    ctx, p = run.ctx, run.params
    for key in p["methods"]:
        if key not in METHODS:
            raise ValueError(f"unknown method key {key!r}; use some of {', '.join(METHODS)}")
    values, cost, extra = {}, [], {}
    prob = nonlinear_double_pendulum(ctx)
    lt = LoopingTop(ctx)
    P = fast_period(ctx, prob)
    extra["double_pendulum_period_P_s"] = numstr(ctx, P)
    extra["top_tbar_s"] = numstr(ctx, lt.tbar)

    hd = ctx.num(fraction(p["pendulum_energy_h"]))
    top_runs = p["top_energy"]
    ht = lt.tbar / top_runs[0]["N"]
    for key in p["methods"]:
        values[f"double_pendulum {key} reversibility defect"] = numstr(
            ctx, reversibility_defect(prob.system, key, prob.q0, prob.p0, hd, ctx))
        values[f"top {key} reversibility defect"] = numstr(
            ctx, reversibility_defect(lt.system, key, lt.top.q0, lt.top.p0, ht, ctx))

    rows, _ = pendulum_orders(run, prob, values)
    rows += top_orders(run, lt, values)

    nd = steps(p["pendulum_energy_T"], p["pendulum_energy_h"])
    erows = energy_study(run, "double_pendulum", f"h={p['pendulum_energy_h']}", prob, hd, nd,
                         P, values, cost)
    p0 = lt.top.p0

    def top_extra(prefix, tr, vals):
        """Cyclic momenta (exact for the variational methods) and min theta (a crossing
        of the pole theta = 0, where M(q) is singular, stops the run)."""
        vals[f"{prefix} max rel p_phi error"] = numstr(
            ctx, max(abs((x - p0[0]) / p0[0]) for x in tr.p[:, 0]))
        vals[f"{prefix} max rel p_psi error"] = numstr(
            ctx, max(abs((x - p0[2]) / p0[2]) for x in tr.p[:, 2]))
        vals[f"{prefix} min theta"] = numstr(ctx, min(tr.q[:, 1]))

    for i, spec in enumerate(top_runs):
        N, k = spec["N"], spec["periods"]
        erows += energy_study(run, "top", f"h=t_bar/{N}", lt.top, lt.tbar / N, N * k, lt.tbar,
                              values, cost if i == 0 else None, top_extra)
    extra["cost_ms_per_step"] = {f"{c['system']} {c['method']}": c["ms_per_step"] for c in cost}
    extra["cost_ratio_vs_simpson"] = {f"{c['system']} {c['method']}": c["ratio_vs_simpson"]
                                      for c in cost}
    extra["energy_runs"] = {"double_pendulum": f"{nd} steps of h = {p['pendulum_energy_h']} s "
                                               f"= {ctx.to_str(nd * hd / P, 5)} P",
                            "top": [f"{s['N'] * s['periods']} steps of h = t_bar/{s['N']} "
                                    f"= {s['periods']} t_bar" for s in top_runs]}
    timing = "a measured wall time"
    return Output(tables={"": pd.DataFrame(rows), "energy": pd.DataFrame(erows),
                          "cost": pd.DataFrame(cost)},
                  values=values, extra=extra,
                  unchecked={"wall_s": timing, "ms_per_step": timing,
                             "ratio_vs_simpson": "a ratio of measured wall times"})


ORDER_VARIABLE = {"double_pendulum": ("q", r"$|q(T) - q_{\rm ref}(T)|_2$"),
                  "top": ("theta", r"$|\theta(T) - \theta_{\rm ex}(T)|$")}


def plot(out, p):
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter
    df, en = out.tables[""], out.tables["energy"]
    # every panel's legend below it (inside, those of the energy panels covered the faint
    # window maxima and Simpson's running maximum, those of the error panels come close to
    # Simpson's points); the figure is taller to make the room
    fig, axes = plt.subplots(2, 2, figsize=(12, 12))
    below = dict(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)
    for col, sk in enumerate(SYSTEMS):
        ax = axes[0, col]
        var, ylabel = ORDER_VARIABLE[sk]
        d = df[(df["system"] == sk) & (df["variable"] == var)]
        for key, g in d.groupby("method", sort=False):
            st = STYLE[key]
            g = g[g["error"] != ""]
            if g.empty:
                continue
            fine = out.values.get(f"{sk} {key} order {var} finest {FINEST}")
            lab = f"{st['label']} (order {float(g['order'].iloc[0]):.2f}" + (
                "" if fine is None else f", finest {FINEST}: {float(fine):.2f}") + ")"
            ax.loglog(g["h"].astype(float), g["error"].astype(float), color=st["color"],
                      ls=st["ls"], marker=st["marker"], ms=4, label=lab)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("h [s]")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{TITLES[sk]}: error at T = {float(d['T'].iloc[0]):.4g} s", fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(ncol=1, **below)     # long labels: one column
        ax = axes[1, col]
        d = en[en["system"] == sk]
        d = d[d["run"] == d["run"].iloc[0]]
        for key, g in d.groupby("method", sort=False):
            st = STYLE[key]
            t, w = g["t_periods"].astype(float), g["window_max"].astype(float)
            keep = (t > 0) & (w > 0) & np.isfinite(w)
            pre = f"{sk} {g['run'].iloc[0]} {key} energy"
            v = out.values.get(f"{pre} growth exponent")
            lab = st["label"] + ("" if v is None else f" (growth exp. {float(v):.2f})")
            if f"{pre} diverged" in out.values:
                lab = st["label"] + " (diverged)"
            ax.loglog(t[keep], w[keep], color=st["color"], ls="-", lw=0.6, alpha=0.3)
            ax.loglog(t[keep], w[keep].cummax(), color=st["color"], ls=st["ls"], lw=1.6,
                      label=lab)
        unit = "P (fast mode period)" if sk == "double_pendulum" else r"$\bar t$ (nutation period)"
        ax.set_xlabel(f"t [{unit}]")
        ax.set_ylabel(r"$|H - H_0|/|H_0|$: running max (bold), window max (faint)")
        ax.set_title(f"{TITLES[sk]}: energy error, h = {float(d['h'].iloc[0]):.4g} s", fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(ncol=2, **below)
    fig.suptitle("Mutze's direct midpoint method (g = 0) on the top2025 systems, beyond the paper",
                 fontsize=11)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="mutze_systems", paper=PAPER, item="beyond the paper: other systems",
    title="direct midpoint method vs Simpson and midpoint rules on the double pendulum and "
          "the Lagrange top: orders, energy behaviour, reversibility, cost",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot,
    published=False)                                 # beyond the paper: nothing printed

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
