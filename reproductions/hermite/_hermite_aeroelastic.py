"""hermite Sec. 5.3: the nonlinear aeroelastic section (Figs. 9-12), shared by
hermite_fig09 .. hermite_fig12.

The system is :mod:`mpvi.systems.aeroelastic` (eqs. (42)-(46) corrected, ERRATA [E50],
[E51]) with the candidate NATA parameter set (an assumption, ERRATA [E53]).  The paper
studies the section at U = 0.9 U_f, U_f the linear flutter speed, from
(h, h', alpha, alpha') = (0.01, 0, 0.1, 0), and states neither the time step nor the
span (ERRATA [E54]):

* time step dt = 0.01 s (no direct evidence for another value; about 37 steps per period
  of the limit cycle); a scan repeats both methods at dt = 0.005 and 0.02 s
  (``dt_scan``) to show how the energy errors scale;
* span T = 10 s: the benchmark's pitch amplitude changes by less than 1e-3 (relative)
  per cycle from t = 6.43 s on ("the LCO is established", the criterion
  ``lco_tolerance``), leaving about 9 cycles of the established limit cycle;
* benchmark: mpvi's ``gbs`` (order 2 levels = 32) at the same step dt, so that it has a
  value at every node of the methods; its error is estimated by a second run at dt/2
  (``gbs check``, about 2e-47 for the positions).

The cached study :data:`aeroelastic_runs` computes everything once for the four scripts:
the flutter speed, the benchmark and its check, both Hermite methods (cubic, n = 2), the
turning points of the benchmark (alpha' = 0, h' = 0: events of the benchmark's
:func:`mpvi.solve`, each located to full precision on its dense output, a GBS step from
the preceding node), the limit-cycle measures, and a
run from a small perturbation (0.001, 0, 0.01, 0) that shows the origin attracts small
motions at the same speed (the LCO is subcritical).

Energy: E = 1/2 v^T M v + V(q) of the corrected Lagrangian (42) (kinetic + potential).
The energy error of a method is E_method(t_j) - E_benchmark(t_j) at the nodes (absolute,
in J); in the CSV the benchmark's own ``energy_error`` column is its error
estimate E_gbs(dt) - E_gbs(dt/2).
"""
import numpy as np
import pandas as pd

from mpvi import Event, certify, solve
from mpvi.analysis.measures import energy
from mpvi.repro.studies import Task, fraction, numstr, steps, study
from mpvi.systems.aeroelastic import (DEFAULT_PARAMETERS, aeroelastic_section, flutter_speed,
                                      linear_matrix, max_real_part)

from mpvi_papers.hermite._hermite import METHODS, PAPER, STYLE

BENCHMARK = "benchmark"

PARAMS = {
    "section": {k: (list(v) if isinstance(v, tuple) else v) for k, v in DEFAULT_PARAMETERS.items()},
    "U_over_Uf": "0.9",
    "q0": ["0.01", "0.1"], "v0": ["0", "0"],
    "T": "10", "dt": "0.01",
    "methods": METHODS,
    "gbs_levels": 16,
    "lco_tolerance": "1e-3",
    "small_q0": ["0.001", "0.01"], "small_levels": 8,
    "dt_scan": ["0.005", "0.02"],
}
"""The full parameter set (module docstring)."""

QUICK = {"T": "4", "dt": "0.02", "gbs_levels": 8, "small_levels": 6, "dt_scan": ["0.04"]}
"""Coarser and shorter: the limit cycle is not yet established at T = 4 s, so the
LCO-phase values are absent from quick runs (``mpvi diff --quick`` reports them skipped)."""

STUDY_KEYS = tuple(PARAMS)
STEP_SECONDS = 0.177
"""Seconds per step of dt of the whole study (benchmark, check, methods, scan, small
perturbation) at 64 digits on one core of the development machine: its cost hint."""


def study_params(p):
    return {k: p[k] for k in STUDY_KEYS}


def tasks(p):
    """The study of Figs. 9-12, a :class:`mpvi.repro.studies.Task` (computed once for the four
    scripts by ``mpvi run --jobs N``)."""
    return [Task(aeroelastic_runs, study_params(p),
                 label=f"hermite_aeroelastic T={p['T']} s dt={p['dt']} s",
                 cost=steps(p["T"], p["dt"]) * STEP_SECONDS)]


# ----- turning points of the benchmark ------------------------------------------------------

COORDINATES = ("h", "alpha")
"""The names of the coordinates q = (h, alpha), as in the events' names."""


def turning_point_events(component):
    """The events of :func:`mpvi.solve` at the maxima and minima of coordinate
    ``component``: g(t, q, v) = v[component] falling through zero (direction -1, a
    maximum) and rising through zero (direction +1, a minimum).  The solver locates each
    to the context's precision on the run's dense output -- for ``gbs`` one GBS step of
    the method's order from the preceding node."""
    name = COORDINATES[component]

    def velocity(t, q, v):
        return v[component]
    return [Event(velocity, direction=-1, name=f"{name} max"),
            Event(velocity, direction=1, name=f"{name} min")]


def turning_points(sol, component, window=None):
    """The maxima and minima of coordinate ``component`` found by the events of
    :func:`turning_point_events` in the solution ``sol``: a list of (kind, t, value),
    kind 'max' or 'min', in time order; ``window`` = (t_start, t_end) keeps those with
    t_start <= t <= t_end."""
    prefix = f"{COORDINATES[component]} "
    return [(e.name.removeprefix(prefix), e.t, e.q[component]) for e in sol.events
            if e.name.startswith(prefix) and (window is None or window[0] <= e.t <= window[1])]


def lco_cycles(points, ctx):
    """Pitch cycles between successive maxima: a list of dicts t_start, t_end, max (at the
    start), min, amplitude (max_next - min)/2 and the relative change of the amplitude
    from the previous cycle (None for the first)."""
    maxima = [(t, x) for k, t, x in points if k == "max"]
    cycles = []
    for (t0, x0), (t1, x1) in zip(maxima[:-1], maxima[1:]):
        mins = [x for k, t, x in points if k == "min" and t0 < t < t1]
        if not mins:
            continue
        lo = min(mins)
        amp = (x1 - lo) / 2
        change = abs(amp - cycles[-1]["amplitude"]) / amp if cycles else None
        cycles.append({"t_start": t0, "t_end": t1, "max": x1, "min": lo, "amplitude": amp,
                       "change": change})
    return cycles


def lco_onset(cycles, tol):
    """Start of the first cycle from which every per-cycle relative amplitude change is
    below ``tol`` (the LCO is established); None if the last change is not."""
    onset = None
    for c in cycles:
        if c["change"] is None or c["change"] >= tol:
            onset = None
        elif onset is None:
            onset = c["t_start"]
    return onset


# ----- the study ------------------------------------------------------------------------------

@study("hermite_aeroelastic")
def aeroelastic_runs(rec, params):
    """hermite Sec. 5.3 runs (module docstring).  Returns a dict: ``U_f``, ``omega_f``,
    ``U``, ``max_real_part_at_U``, ``t``, per method (``benchmark`` and each Hermite
    method) ``q``, ``v``, ``energy``, ``energy_error``; ``gbs_check`` ({'q', 'p'}: max
    over the nodes of |GBS(dt) - GBS(dt/2)|); ``newton`` (per method max_residual as a
    string, max_iterations); ``alpha_points``, ``h_points`` (turning points of the
    benchmark, h only over the last pitch cycle); ``small`` (max |alpha| over the last
    second of the small-perturbation run and its initial alpha); ``dt_scan``: for each
    method and step d of ``params["dt_scan"]`` (multiples of dt/2) the nodes ``t`` and the
    energy error against the dt/2 benchmark run."""
    ctx, p = rec.ctx, params
    rec.progress("flutter speed (eigenvalues of the linearization, 64 digits)")
    U_f, omega_f = flutter_speed(p["section"], ctx)
    U = U_f * ctx.num(fraction(p["U_over_Uf"]))
    sec = aeroelastic_section(ctx, U, p["section"], p["q0"], p["v0"])
    S = sec.system
    dt, n, lv = ctx.num(fraction(p["dt"])), steps(p["T"], p["dt"]), p["gbs_levels"]
    rec.progress(f"U_f = {ctx.to_str(U_f, 12)} m/s, U = {p['U_over_Uf']} U_f; benchmark: GBS "
                 f"order {2 * lv}, {n} steps of {p['dt']} s, with its turning points")
    bench = rec.solve(sec, "gbs", h=dt, n=n, levels=lv,
                      events=turning_point_events(1) + turning_point_events(0))
    rec.progress(f"benchmark check: GBS order {2 * lv}, {2 * n} steps of {p['dt']}/2 s")
    half = rec.solve(sec, "gbs", h=dt / 2, n=2 * n, levels=lv)
    Eb = energy(S, bench)
    Eh_all = energy(S, half)
    Eh = Eh_all[::2]
    out = {"U_f": U_f, "omega_f": omega_f, "U": U, "max_real_part_at_U": max_real_part(U, ctx, p["section"]),
           "t": bench.t,
           "gbs_check": {"q": ctx.norm_inf(bench.q - half.q[::2]), "p": ctx.norm_inf(bench.p - half.p[::2])},
           BENCHMARK: {"q": bench.q, "v": bench.v, "energy": Eb, "energy_error": Eb - Eh},
           "newton": {}}
    for m in p["methods"]:
        rec.progress(f"{m}: {n} steps of {p['dt']} s")
        sol = rec.solve(sec, m, h=dt, n=n)
        E = energy(S, sol)
        out[m] = {"q": sol.q, "v": sol.v, "energy": E, "energy_error": E - Eb}
        nw = sol.stats["newton"]
        out["newton"][m] = {"max_residual": repr(nw["max_residual"]),
                            "max_iterations": nw["max_iterations"],
                            "mean_iterations": repr(nw["mean_iterations"])}
    out["dt_scan"] = {}
    for d in p["dt_scan"]:
        stride = steps(d, fraction(p["dt"]) / 2)
        ref = Eh_all[::stride]
        nd = steps(p["T"], d)
        for m in p["methods"]:
            rec.progress(f"time-step scan: {m}, {nd} steps of {d} s")
            sol = rec.solve(sec, m, h=ctx.num(fraction(d)), n=nd)
            out["dt_scan"][f"{m} dt={d}"] = {"t": sol.t, "energy_error": energy(S, sol) - ref}
    apts = turning_points(bench, 1)
    out["alpha_points"] = [[k, t, x] for k, t, x in apts]
    cycles = lco_cycles(apts, ctx)
    window = (cycles[-1]["t_start"], cycles[-1]["t_end"]) if cycles else (bench.t[0], bench.t[-1])
    out["h_points"] = [[k, t, x] for k, t, x in turning_points(bench, 0, window)]
    rec.progress(f"small perturbation {p['small_q0']} at rest: GBS order {2 * p['small_levels']}")
    small = rec.solve(sec.replace(q0=p["small_q0"]), "gbs", h=dt, n=n, levels=p["small_levels"])
    last = [abs(x) for t, x in zip(small.t, small.q[:, 1]) if t >= small.t[-1] - 1]
    out["small"] = {"alpha_last_second": max(last), "alpha0": ctx.num(p["small_q0"][1])}
    return out


# ----- tables and values --------------------------------------------------------------------

def frame(ctx, res, methods):
    """Long table t, method, h, hdot, alpha, alphadot, energy, energy_error of ``methods``
    (full-precision strings)."""
    t = [numstr(ctx, x) for x in res["t"]]
    frames = []
    for m in methods:
        r = res[m]
        frames.append(pd.DataFrame({
            "t": t, "method": m,
            "h": [numstr(ctx, x) for x in r["q"][:, 0]], "hdot": [numstr(ctx, x) for x in r["v"][:, 0]],
            "alpha": [numstr(ctx, x) for x in r["q"][:, 1]],
            "alphadot": [numstr(ctx, x) for x in r["v"][:, 1]],
            "energy": [numstr(ctx, x) for x in r["energy"]],
            "energy_error": [numstr(ctx, x) for x in r["energy_error"]]}))
    return pd.concat(frames, ignore_index=True)


def lco_summary(ctx, res, tol):
    """The limit-cycle measures of the benchmark: cycles, onset, last-cycle values."""
    apts = [tuple(x) for x in res["alpha_points"]]
    cycles = lco_cycles(apts, ctx)
    onset = lco_onset(cycles, ctx.num(tol))
    return cycles, onset


def lco_errors(errors, times, onset):
    """|energy error| at the nodes t >= onset."""
    return [abs(e) for e, x in zip(errors, times) if x >= onset]


def median(xs):
    """The median of a list of numbers (the mean of the middle two for an even count)."""
    ys = sorted(xs)
    k = len(ys) // 2
    return ys[k] if len(ys) % 2 else (ys[k - 1] + ys[k]) / 2


def values(ctx, res, p):
    """Every value the four scripts record (the same set in each JSON)."""
    two_pi = 2 * ctx.pi
    v = {"U_f": numstr(ctx, res["U_f"]), "flutter omega": numstr(ctx, res["omega_f"]),
         "flutter frequency Hz": numstr(ctx, res["omega_f"] / two_pi),
         "U": numstr(ctx, res["U"]), "U/U_f": p["U_over_Uf"],
         "largest real part at U": numstr(ctx, res["max_real_part_at_U"]),
         "gbs check q": numstr(ctx, res["gbs_check"]["q"]),
         "gbs check p": numstr(ctx, res["gbs_check"]["p"]),
         "benchmark max energy error estimate": numstr(ctx, ctx.norm_inf(res[BENCHMARK]["energy_error"])),
         "small perturbation alpha ratio": numstr(ctx, res["small"]["alpha_last_second"] / res["small"]["alpha0"])}
    E = res[BENCHMARK]["energy"]
    t = res["t"]
    cycles, onset = lco_summary(ctx, res, p["lco_tolerance"])
    v["energy E0"] = numstr(ctx, E[0])
    k_min = min(range(len(E)), key=lambda j: E[j] if onset is None or t[j] <= onset else E[0])
    v["energy initial drop"] = numstr(ctx, (E[0] - E[k_min]) / E[0])
    v["energy rise after the drop"] = numstr(ctx, (max(E[k_min:]) - E[k_min]) / E[0])
    v["cycles"] = str(len(cycles))
    for m in p["methods"]:
        err = res[m]["energy_error"]
        v[f"{m} max energy error"] = numstr(ctx, ctx.norm_inf(err))
        v[f"{m} max Newton residual"] = res["newton"][m]["max_residual"]
        v[f"{m} max Newton iterations"] = str(res["newton"][m]["max_iterations"])
        v[f"{m} mean Newton iterations"] = res["newton"][m]["mean_iterations"]
        v[f"{m} max position deviation"] = numstr(ctx, ctx.norm_inf(res[m]["q"] - res[BENCHMARK]["q"]))
    for key, r in res["dt_scan"].items():
        v[f"{key} max energy error"] = numstr(ctx, ctx.norm_inf(r["energy_error"]))
    if onset is not None:            # the LCO is established (lco_onset): its measures
        last = cycles[-1]
        v["LCO last cycle relative amplitude change"] = numstr(ctx, last["change"])
        period = last["t_end"] - last["t_start"]
        hp = [x for _, _, x in res["h_points"]]
        v.update({
            "LCO onset t": numstr(ctx, onset),
            "LCO amplitude alpha": numstr(ctx, last["amplitude"]),
            "LCO alpha max": numstr(ctx, last["max"]), "LCO alpha min": numstr(ctx, last["min"]),
            "LCO amplitude h": numstr(ctx, (max(hp) - min(hp)) / 2),
            "LCO h max": numstr(ctx, max(hp)), "LCO h min": numstr(ctx, min(hp)),
            "LCO period": numstr(ctx, period),
            "LCO omega": numstr(ctx, two_pi / period),
            "LCO frequency Hz": numstr(ctx, 1 / period),
        })
        for m in p["methods"]:
            err = lco_errors(res[m]["energy_error"], t, onset)
            v[f"{m} max energy error LCO"] = numstr(ctx, max(err))
            v[f"{m} median energy error LCO"] = numstr(ctx, median(err))
        for key, r in res["dt_scan"].items():
            err = lco_errors(r["energy_error"], r["t"], onset)
            v[f"{key} max energy error LCO"] = numstr(ctx, max(err))
            v[f"{key} median energy error LCO"] = numstr(ctx, median(err))
        ratio = (ctx.num(v[f"{p['methods'][0]} max energy error LCO"])
                 / ctx.num(v[f"{p['methods'][1]} max energy error LCO"]))
        v[f"{p['methods'][0]}/{p['methods'][1]} energy error ratio LCO"] = numstr(ctx, ratio)
    return v


def extra(ctx, res, p):
    return {"dt_s": p["dt"], "T_s": p["T"], "U_over_Uf": p["U_over_Uf"],
            "U_f_m_per_s": numstr(ctx, res["U_f"]), "benchmark": f"gbs, levels {p['gbs_levels']}",
            "parameter_set": "NATA candidate (ERRATA [E53])"}


def compute_for(methods):
    """A ``compute(run)`` writing the long table of ``methods`` (+ the benchmark); it
    declares the shared study as its ``tasks`` (:meth:`mpvi.repro.Reproduction.declared_tasks`)."""
    def compute(run):
        from mpvi.repro.declare import Output
        ctx, p = run.ctx, run.params
        res = run.kept["study"] = run.study(aeroelastic_runs, study_params(p))
        return Output(tables={"": frame(ctx, res, list(methods) + [BENCHMARK])},
                      values=values(ctx, res, p), extra=extra(ctx, res, p))
    compute.tasks = tasks
    return compute


# ----- certified (mpvi run --certify) ---------------------------------------------------------

CERTIFIED_STATEMENT = (
    "The benchmark (GBS), both one-step methods' runs and the small-perturbation run (GBS) "
    "certified (mpvi.certify, Lohner's method on Arb balls; GBS with its tableau on balls): "
    "each state encloses the exact discrete trajectory of its method from the run's data "
    "(U = 0.9 U_f and dt as the binary numbers the run used, the section's parameters exact, "
    "the rounding excluded).  E = 1/2 v^T M v + V(q) of the corrected Lagrangian (42) is "
    "evaluated on those balls.  The largest real part of the eigenvalues of the linearization "
    "A(U) at the run's U is enclosed by Arb's verified eigenvalues (Rump's method).  The LCO "
    "window (t >= onset) and the minimum's node are chosen from the run's numbers (data), the "
    "values over them are balls.  The pitch turning points of the last two cycles: the "
    "benchmark's dense output (a GBS step of size s from the node before) on balls, its pitch "
    "rate proven to change sign within 10^-(dps/2) of the located time, the turning value "
    "enclosed over that interval (intermediate values); amplitude, change and period on "
    "balls.  The benchmark is the GBS discrete trajectory: its distance "
    "to the exact solution (the halving check, ~1e-47) is estimated, not proven.")

_CERTIFIED = {}
"""(study parameters, digits) -> the certified enclosures: Figs. 9, 11 and 12 share them."""


def certified_aeroelastic(run):
    """{name: {"q", "E"}} enclosures at the nodes of the benchmark, both methods and
    ``small`` (q only), each run solved again, checked equal to the study's and certified;
    ``U`` the run's U; ``A`` the linearization's eigenvalue balls."""
    from flint import acb_mat

    from mpvi.numbers.arb import ArbContext
    from mpvi.proof.certify import _exact_params

    from mpvi_papers.hermite._hermite_certified import arb_of, certified_run

    ctx, p = run.ctx, run.params
    key = (repr(sorted(study_params(p).items())), ctx.dps)
    if key in _CERTIFIED:
        return _CERTIFIED[key]
    res = run.kept["study"]
    U = res["U"]
    sec = aeroelastic_section(ctx, U, p["section"], p["q0"], p["v0"])
    dt, n = ctx.num(fraction(p["dt"])), steps(p["T"], p["dt"])
    actx = ArbContext(ctx.dps)
    Sb = _exact_params(sec.system, actx)
    found = {}

    def balls(sol, cert):
        qs = [np.array(q, dtype=object) for q in cert.q]
        ys = [np.array(y, dtype=object) for y in cert.y]
        ps = ys if sol.state == "qp" else [Sb.momentum(q, v) for q, v in zip(qs, ys)]
        return {"q": qs, "p": ps, "E": [Sb.energy(q, p) for q, p in zip(qs, ps)]}

    runs = [(BENCHMARK, "gbs", {"levels": p["gbs_levels"]})] + [(m, m, {}) for m in p["methods"]]
    for name, method, options in runs:
        run.progress(f"certifying the aeroelastic {name}: {n} steps of {p['dt']} s")
        sol, cert = certified_run(sec, method, dt, n, res[name], f"aeroelastic {name}", **options)
        found[name] = balls(sol, cert)
    run.progress(f"certifying the small perturbation run: GBS levels {p['small_levels']}")
    small = sec.replace(q0=p["small_q0"])
    sol = solve(small, "gbs", h=dt, n=n, levels=p["small_levels"])
    last = [abs(x) for t, x in zip(sol.t, sol.q[:, 1]) if t >= sol.t[-1] - 1]
    if max(last) != res["small"]["alpha_last_second"]:
        raise ArithmeticError("the small-perturbation run solved again differs from the study's")
    cert = certify(sol, posed=False)      # the run's binary numbers (the statement)
    if not cert.complete:
        raise ArithmeticError(f"small perturbation: step {cert.failed_step} not proven: {cert.why}")
    found["small"] = {"q": cert.q, "t": list(sol.t)}
    actx.activate()
    A = linear_matrix(actx.lift(U), actx, p["section"])
    found["eigenvalues"] = acb_mat([[A[i, j] for j in range(4)] for i in range(4)]).eig(algorithm="rump")
    found["alpha0"] = arb_of(ctx.num(p["small_q0"][1]))
    found["turning"] = enclosed_turning_points(run, res, found[BENCHMARK], sec, actx)
    _CERTIFIED[key] = found
    return found


def enclosed_turning_points(run, res, bench, sec, actx):
    """Enclosures of the benchmark's pitch turning points of its last two cycles: {t: (ball
    of the time, ball of alpha there)} for the located times t of ``res["alpha_points"]``
    (data).

    The benchmark's dense output between nodes is one GBS step of size s from the node
    before (:mod:`mpvi.methods.gbs`), a continuous function of s.  For a turning point
    located at t* = t_j + s*, the step is taken on balls from the node's enclosure with
    s = s* -+ delta (delta = 10^-(dps/2)): alpha' is proven to change sign between them
    (positive before a maximum, negative before a minimum), so the dense output has a
    turning point in S = [s* - delta, s* + delta] (intermediate values), and the step
    with s = S (a ball) encloses alpha there."""
    from flint import arb

    from mpvi import get_method
    from mpvi.proof.certify import _exact_params

    from mpvi_papers.hermite._hermite_certified import arb_of

    ctx, p = run.ctx, run.params
    t = res["t"]
    points = [tuple(x) for x in res["alpha_points"]]
    cycles = lco_cycles(points, ctx)
    wanted = set()
    for c in cycles[-2:]:
        wanted |= {x for k, x, _ in points if (k == "max" and x in (c["t_start"], c["t_end"]))
                   or (k == "min" and c["t_start"] < x < c["t_end"])}
    actx.activate()
    Sb = _exact_params(sec.system, actx)
    gbs = get_method("gbs")
    delta = arb(10) ** (-(ctx.dps // 2))
    out = {}
    for kind, ts, _ in points:
        if ts not in wanted:
            continue
        j = max(i for i in range(len(t)) if t[i] <= ts)
        s_star = arb_of(ts) - arb_of(t[j])
        q0, p0 = bench["q"][j], bench["p"][j]

        def step(s):
            r = gbs.prepare(Sb, s, actx, levels=p["gbs_levels"])(actx.lift(t[j]), q0, p0)
            return r.q, Sb.velocity(r.q, r.y)
        _, v_before = step(s_star - delta)
        _, v_after = step(s_star + delta)
        sign = 1 if kind == "max" else -1
        if not (sign * v_before[1] > 0 and sign * v_after[1] < 0):
            raise ArithmeticError(f"the benchmark's pitch rate is not proven to change sign "
                                  f"around the {kind} at t = {ctx.to_str(ts, 10)}")
        S = s_star + (-delta).union(delta)
        q, _ = step(S)
        out[ts] = (arb_of(t[j]) + S, q[1])
    return out


def certify_aeroelastic(run, out):
    """``mpvi run --certify`` of Figs. 9, 11, 12 (:data:`CERTIFIED_STATEMENT`)."""
    from flint import arb

    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.certified import ball_max

    from mpvi_papers.hermite._hermite_certified import digits_of

    ctx, p = run.ctx, run.params
    res = run.kept["study"]
    values = {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        f = certified_aeroelastic(run)
        t = res["t"]
        lam = f["eigenvalues"]
        largest = lam[0].real
        for z in lam[1:]:
            largest = largest.max(z.real)
        balls = {"largest real part at U": largest}
        small = f["small"]
        balls["small perturbation alpha ratio"] = ball_max(
            [q[1] for q, x in zip(small["q"], small["t"]) if x >= small["t"][-1] - 1]) / f["alpha0"]
        E = f[BENCHMARK]["E"]
        balls["energy E0"] = E[0]
        _, onset = lco_summary(ctx, res, p["lco_tolerance"])
        Ec = res[BENCHMARK]["energy"]
        k_min = min(range(len(Ec)), key=lambda j: Ec[j] if onset is None or t[j] <= onset else Ec[0])
        low = E[0]
        for j, e in enumerate(E):
            if onset is None or t[j] <= onset:
                low = low.min(e)
        balls["energy initial drop"] = (E[0] - low) / E[0]
        high = E[k_min]
        for e in E[k_min:]:
            high = high.max(e)
        balls["energy rise after the drop"] = (high - low) / E[0]
        if onset is not None:
            turning = f["turning"]
            points = [tuple(x) for x in res["alpha_points"]]
            cycles = lco_cycles(points, ctx)

            def cycle(c):
                """(amplitude, max, min, period) of a pitch cycle on balls."""
                lo = None
                for k, x, _ in points:
                    if k == "min" and c["t_start"] < x < c["t_end"]:
                        lo = turning[x][1] if lo is None else lo.min(turning[x][1])
                top = turning[c["t_end"]][1]
                return (top - lo) / 2, top, lo, turning[c["t_end"]][0] - turning[c["t_start"]][0]
            amp, top, lo, period = cycle(cycles[-1])
            prev = cycle(cycles[-2])[0]
            balls.update({"LCO amplitude alpha": amp, "LCO alpha max": top, "LCO alpha min": lo,
                          "LCO last cycle relative amplitude change": abs(amp - prev) / amp,
                          "LCO period": period, "LCO omega": 2 * arb.pi() / period,
                          "LCO frequency Hz": 1 / period})
        lco = {}
        for m in p["methods"]:
            r = f[m]
            err = [a - b for a, b in zip(r["E"], E)]
            balls[f"{m} max energy error"] = ball_max(err)
            balls[f"{m} max position deviation"] = ball_max(
                [x for a, b in zip(r["q"], f[BENCHMARK]["q"]) for x in a - b])
            if onset is not None:
                lco[m] = ball_max([e for e, x in zip(err, t) if x >= onset])
                balls[f"{m} max energy error LCO"] = lco[m]
        if onset is not None:
            m0, m1 = p["methods"][0], p["methods"][1]
            balls[f"{m0}/{m1} energy error ratio LCO"] = lco[m0] / lco[m1]
        for key, ball in balls.items():
            if key in out.values:
                values[key] = digits_of(out, key, ball)
    located = ("located between the nodes on the GBS benchmark's dense output (events); the "
               "certificate encloses the nodes, not the turning points")
    not_certified = {}
    for key in out.values:
        if key in values:
            continue
        not_certified[key] = (
            "a statistic of the Newton iterations, not a mathematical value" if "Newton" in key
            else "the time-step scan's runs are not certified (not published values)" if "dt=" in key
            else "a median of balls (an order statistic), not enclosed here; not a published value"
            if "median" in key
            else "the flutter speed U_f (a root of the largest real part, found by regula falsi) "
                 "and the quantities built on it are not enclosed; not published values"
            if key in ("U_f", "flutter omega", "flutter frequency Hz", "U", "U/U_f")
            else "the benchmark's halving check (GBS at dt/2, not certified); not a published value"
            if key.startswith("gbs check") or "estimate" in key
            else "a count of located cycles; " + located if key == "cycles"
            else located)
    for column in ("t", "method"):
        not_certified[column] = "an input of the run (the nodes, the method's name)"
    for column in ("h", "hdot", "alpha", "alphadot", "energy", "energy_error"):
        not_certified[column] = ("the long table's states are enclosed by the certificates above; "
                                 "the published values built on them are proven")
    return {"statement": CERTIFIED_STATEMENT, "values": values, "not_certified": not_certified}


# ----- plots ------------------------------------------------------------------------------------

BENCH_STYLE = dict(STYLE["reference"], label="benchmark (GBS)")


def _columns(df, method):
    g = df[df["method"] == method]
    return {c: g[c].astype(float).to_numpy() for c in ("t", "h", "hdot", "alpha", "alphadot",
                                                       "energy", "energy_error")}


def onset_of(out):
    x = out.values.get("LCO onset t")
    return float(x) if x is not None else None


def hermite_dense(t, x, v, k=8):
    """A plotting helper on float64 arrays only: the cubic Hermite interpolant of nodal
    values x and derivatives v at k points per step, and its derivative -- between the
    nodes, the one-step methods' own C^1 trajectory (hermite eq. (17)).  The plots are
    drawn from the output table (the nodes as read back from the CSV), where no
    :class:`mpvi.Solution` and its dense output exist; no computed value goes through it."""
    dt = np.diff(t)
    tau = np.linspace(0, 1, k, endpoint=False)[None, :]
    x0, x1, v0, v1, d = x[:-1, None], x[1:, None], v[:-1, None], v[1:, None], dt[:, None]
    n1, n2, n3, n4 = 2 * tau**3 - 3 * tau**2 + 1, tau**3 - 2 * tau**2 + tau, -2 * tau**3 + 3 * tau**2, tau**3 - tau**2
    d1, d2, d3, d4 = 6 * tau**2 - 6 * tau, 3 * tau**2 - 4 * tau + 1, -6 * tau**2 + 6 * tau, 3 * tau**2 - 2 * tau
    xs = x0 * n1 + v0 * d * n2 + x1 * n3 + v1 * d * n4
    vs = (x0 * d1 + x1 * d3) / d + v0 * d2 + v1 * d4
    return np.append(xs.ravel(), x[-1]), np.append(vs.ravel(), v[-1])


def phase_portrait_plot(out, p, method, item):
    """Fig. 9 / 10: (a) plunge h vs h', (b) pitch alpha vs alpha', method vs benchmark;
    curves drawn through the nodes with :func:`hermite_dense`."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    df = out.tables[""]
    b, m = _columns(df, BENCHMARK), _columns(df, method)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    panels = (("h", "hdot", "(a) plunge", r"plunge $h$ [m]", r"$\dot h$ [m/s]"),
              ("alpha", "alphadot", "(b) pitch", r"pitch $\alpha$ [rad]", r"$\dot\alpha$ [rad/s]"))
    for ax, (x, y, title, xl, yl) in zip(axes, panels):
        ax.plot(*hermite_dense(b["t"], b[x], b[y]), **BENCH_STYLE)
        ax.plot(*hermite_dense(m["t"], m[x], m[y]), lw=0.8,
                **{k: v for k, v in STYLE[method].items() if k != "lw"})
        ax.plot(b[x][:1], b[y][:1], "ko", ms=5, label="initial state")
        ax.set_xlabel(xl); ax.set_ylabel(yl); ax.set_title(title, fontsize=10)
        ax.xaxis.set_major_locator(MaxNLocator(6))
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle(f"hermite {item}: subcritical LCO, {STYLE[method]['label']} vs benchmark; "
                 f"U = {p['U_over_Uf']} U_f = {float(out.values['U']):.4f} m/s, "
                 f"dt = {p['dt']} s, t in [0, {p['T']}] s", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def energy_plot(out, p):
    """Fig. 11: total energy against time, both methods and the benchmark."""
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(8, 4.4))
    b = _columns(df, BENCHMARK)
    ax.plot(b["t"], b["energy"], **BENCH_STYLE)
    for m in p["methods"]:
        c = _columns(df, m)
        ax.plot(c["t"], c["energy"], lw=1.0, **{k: v for k, v in STYLE[m].items() if k != "lw"})
    onset = onset_of(out)
    if onset is not None:
        ax.axvline(onset, color="k", lw=0.8, ls=":", label=f"LCO established (t = {onset:.2f} s)")
    ax.set_xlabel("t [s]"); ax.set_ylabel("total energy E [J]")
    ax.grid(alpha=0.3); ax.legend(fontsize=8)
    ax.set_title(f"hermite Fig. 11: energy of the aeroelastic section, U = {p['U_over_Uf']} U_f, "
                 f"dt = {p['dt']} s", fontsize=10)
    fig.tight_layout()
    return fig


def energy_error_plot(out, p):
    """Fig. 12: |E_method - E_benchmark| against time on a log axis."""
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(8, 4.4))
    for m in p["methods"]:
        c = _columns(df, m)
        ax.semilogy(c["t"][1:], abs(c["energy_error"][1:]), lw=0.9,
                    **{k: v for k, v in STYLE[m].items() if k != "lw"})
    est = float(out.values["benchmark max energy error estimate"])
    ax.plot([], [], " ", label=f"benchmark error estimate max|E(dt) - E(dt/2)| = {est:.1e} J")
    onset = onset_of(out)
    if onset is not None:
        ax.axvline(onset, color="k", lw=0.8, ls=":", label=f"LCO established (t = {onset:.2f} s)")
    ax.set_xlabel("t [s]"); ax.set_ylabel(r"$|E_{method}(t) - E_{benchmark}(t)|$ [J]")
    ax.grid(alpha=0.3, which="both")
    # the legend below the axes: in the lower right corner it covered the one-step
    # Galerkin curve and the LCO onset line
    ax.legend(fontsize=8, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.14),
              frameon=False)
    ax.set_title(f"hermite Fig. 12: energy error, U = {p['U_over_Uf']} U_f, dt = {p['dt']} s",
                 fontsize=10)
    fig.tight_layout()
    return fig


__all__ = ["PAPER", "PARAMS", "QUICK", "aeroelastic_runs", "compute_for",
           "phase_portrait_plot", "energy_plot", "energy_error_plot"]
