"""hermite Sec. 5.2: the Duffing oscillator with linear damping (eqs. 40-41), Figs. 6 and 7.

    x'' + delta x' + alpha x + beta x^3 = 0,   L = 1/2 x'^2 - 1/2 alpha x^2 - 1/4 beta x^4,
    f = -delta x',   delta in {0.025, 0.05, 0.1},   Delta t = 0.1  (printed).

Parameters the paper leaves open or prints twice (ERRATA [E41]):

* alpha = -1, beta = 2, as in the captions of Figs. 6-7 (the text says alpha = 1,
  beta = 0.5): only these make eq. (40) the double well (38)-(39) "with dissipation", as
  the text itself calls it (potential -1/2 x^2 + 1/2 x^4);
* x(0) = 0, x'(0) = 1 (not printed): energy 1/2, above the hump, so the particle first
  crosses between the wells and the damping then traps it in one of them.  The Sec. 5.1
  initial data x(0) = 0.995 or 0.74 (at rest) are excluded by the paper's own numbers:
  with delta -> 0 they reproduce Figs. 3-4, whose errors the paper calls 1e-5/1e-8 and
  1e-7/1e-10, not the 1e-4/1e-6 printed for Fig. 7; the candidates tried and their
  numbers are in ERRATA [E41];
* span T = 100 (not printed), as for Figs. 3-4.

Energy error of a damped system: the energy E = 1/2 x'^2 + 1/2 alpha x^2 + 1/4 beta x^4
decays, so E(t) - E(0) measures the dissipation, not the method.  We use
E_method(t_j) - E_benchmark(t_j) (absolute, signed in the CSV; |.| in the plot): the
energy the method gains or loses against the benchmark's at the same time.

The benchmark (``reference``) is mpvi's GBS extrapolation of order 2 gbs_levels = 32 at
H = Delta t, checked by a second run at H/2 (their difference is recorded).  The runs of
each delta are the cached study :func:`duffing_run` (one per delta, so that a parallel
run computes them side by side), shared by Figs. 6 and 7: the second figure to run
reads them from the cache.
"""
from fractions import Fraction

import pandas as pd

from mpvi.numbers.arbref import exact_rational
from mpvi.repro.studies import Task, numstr, steps, study

from mpvi_papers.hermite._hermite import METHODS, PAPER, STYLE
from mpvi_papers.hermite._hermite_double_well import col, energies, growth, sup

PARAMS = {"alpha": "-1", "beta": "2", "x0": "0", "v0": "1", "deltas": ["0.025", "0.05", "0.1"],
          "h": "0.1", "T": "100", "gbs_levels": 16, "start": "10"}
QUICK = {"T": "10"}
STUDY_KEYS = ("alpha", "beta", "x0", "v0", "h", "T", "gbs_levels")
NAMES = METHODS + ["reference"]
STEP_SECONDS = 0.042
"""Seconds per step of h of one delta's runs (both methods, the benchmark and its check)
at 64 digits on one core of the development machine: the cost hint of its task."""


@study("hermite_duffing_run")
def duffing_run(rec, params):
    """For delta = ``params["delta"]``: both Hermite methods and the GBS benchmark (with
    its check at half the step) on the damped Duffing oscillator (40)-(41) from x(0) =
    ``x0``, x'(0) = ``v0`` over [0, T] at step ``h``.  Returns ``{"t", "runs": {name:
    {"q", "v", "E"}}, "check": {"q", "v"}}`` (1-D arrays on the nodes; check: max over
    the nodes of |GBS(h) - GBS(h/2)|)."""
    from mpvi import Problem
    from mpvi.systems.double_well import duffing

    ctx, p, d = rec.ctx, params, params["delta"]
    n, h = steps(p["T"], p["h"]), ctx.num(p["h"])
    lv = p["gbs_levels"]
    S = duffing(ctx, p["alpha"], p["beta"], d)
    problem = Problem(S, [p["x0"]], v0=[p["v0"]])
    runs = {}
    for m in METHODS:
        rec.progress(f"Duffing delta = {d}: {m}, {n} steps of {p['h']}")
        sol = rec.solve(problem, m, h=h, n=n)
        runs[m] = {"q": col(sol.q), "v": col(sol.v)}
    rec.progress(f"Duffing delta = {d}: benchmark GBS order {2 * lv}, {n} steps of {p['h']} "
                 f"and {2 * n} of half of it")
    ref = rec.solve(problem, "gbs", h=h, n=n, levels=lv)
    half = rec.solve(problem, "gbs", h=h / 2, n=2 * n, levels=lv)
    runs["reference"] = {"q": col(ref.q), "v": col(ref.v)}
    check = {"q": sup(ref.q[:, 0] - half.q[::2, 0]), "v": sup(ref.v[:, 0] - half.v[::2, 0])}
    for r in runs.values():
        r["E"] = ctx.asarray(energies(S, r["q"].reshape(-1, 1), r["v"].reshape(-1, 1)))
    return {"t": ref.t, "runs": runs, "check": check}


def run_params(p):
    """The parameters of :func:`duffing_run` for every delta of ``p``."""
    return [dict({k: p[k] for k in STUDY_KEYS}, delta=d) for d in p["deltas"]]


def tasks(p):
    """One :class:`mpvi.repro.studies.Task` per delta (shared by Figs. 6 and 7)."""
    return [Task(duffing_run, q, label=f"hermite_duffing_run delta={q['delta']}",
                 cost=steps(q["T"], q["h"]) * STEP_SECONDS) for q in run_params(p)]


def duffing_data(run):
    """The runs for ``run``'s parameters (``{"t", "runs": {delta: {name: {"q", "v",
    "E"}}}, "check": {delta: {"q", "v"}}}``), the long table (t, delta, method, q, v,
    energy, energy_error = E_method - E_benchmark) and the energy errors
    ``{delta: {method: list}}``."""
    ctx, p = run.ctx, run.params
    res = {"runs": {}, "check": {}}
    for q in run_params(p):
        one = run.kept[q["delta"]] = run.study(duffing_run, q)
        res["t"] = one["t"]
        res["runs"][q["delta"]], res["check"][q["delta"]] = one["runs"], one["check"]
    t = res["t"]
    frames, errors = [], {}
    ts = [numstr(ctx, x) for x in t]
    for d in p["deltas"]:
        Eref = res["runs"][d]["reference"]["E"]
        errors[d] = {}
        for name in NAMES:
            r = res["runs"][d][name]
            dE = [e - er for e, er in zip(r["E"], Eref)]
            errors[d][name] = dE
            frames.append(pd.DataFrame({
                "t": ts, "delta": d, "method": name,
                "q": [numstr(ctx, x) for x in r["q"]], "v": [numstr(ctx, x) for x in r["v"]],
                "energy": [numstr(ctx, x) for x in r["E"]],
                "energy_error": [numstr(ctx, x) for x in dE]}))
    return res, pd.concat(frames, ignore_index=True), errors


def provenance(run, res):
    p = run.params
    extra = {"steps": steps(p["T"], p["h"]),
             "benchmark": f"gbs, order {2 * p['gbs_levels']}, H = {p['h']} (checked at H/2)",
             "energy_error": "absolute, E_method(t) - E_benchmark(t)",
             "not_printed_in_the_paper": "x0, v0 and T (ERRATA [E41]); alpha, beta printed twice"}
    values = {}
    for d, c in res["check"].items():
        for k in ("q", "v"):
            values[f"delta={d} reference halving difference {k}"] = numstr(run.ctx, c[k])
    for m, s in run.newton_summary().items():
        values[f"{m} newton max final residual"] = f"{s['max_final_residual']:.3e}"
        values[f"{m} newton max iterations"] = str(s["max_iterations"])
    return values, extra


def trajectory_output(run):
    """Fig. 6: per delta and method, max |x - x_ref| and its ratio to max |x_ref|."""
    from mpvi.repro.declare import Output

    ctx = run.ctx
    res, df, _ = duffing_data(run)
    values, extra = provenance(run, res)
    for d, runs in res["runs"].items():
        ref = runs["reference"]
        amp = sup(ref["q"])
        values[f"delta={d} reference amplitude"] = numstr(ctx, amp)
        for m in METHODS:
            dev = sup(runs[m]["q"] - ref["q"])
            values[f"delta={d} {m} max abs x deviation"] = numstr(ctx, dev)
            values[f"delta={d} {m} relative x deviation"] = numstr(ctx, dev / amp)
            values[f"delta={d} {m} max abs v deviation"] = numstr(ctx, sup(runs[m]["v"] - ref["v"]))
    return Output(tables={"": df}, values=values, extra=extra)


def window(t, values, a, b):
    """The values at the nodes a < t <= b (a = 0 excludes the initial node)."""
    return [v for x, v in zip(t, values) if a < x <= b]


def energy_output(run):
    """Fig. 7: per delta and method the energy error against the benchmark at the start
    (0 < t <= start: level = mean |.|, peak = max |.|), its overall max and, for runs of
    at least twice the start window (not the quick set), its peak at the end (last
    ``start`` time units), growth (second half / first half) and decay (end peak / start
    peak); per method whether the decay is faster for larger delta."""
    from mpvi.repro.declare import Output

    ctx, p = run.ctx, run.params
    res, df, errors = duffing_data(run)
    values, extra = provenance(run, res)
    t = res["t"]
    T, s = ctx.num(p["T"]), ctx.num(p["start"])
    long_run = T >= 2 * s           # the quick set (T = start) has no end to compare with
    for m in METHODS:
        decays = []
        for d in p["deltas"]:
            e = errors[d][m]
            start, end = window(t, e, 0, s), window(t, e, T - s, T)
            key = f"delta={d} {m}"
            values[f"{key} start energy error level"] = numstr(
                ctx, ctx.fsum(abs(x) for x in start) / len(start))
            values[f"{key} start energy error peak"] = numstr(ctx, sup(start))
            values[f"{key} max abs energy error"] = numstr(ctx, sup(e))
            if long_run:
                values[f"{key} end energy error peak"] = numstr(ctx, sup(end))
                values[f"{key} energy error growth"] = numstr(ctx, growth(e))
                decays.append(sup(end) / sup(start))
                values[f"{key} energy error decay"] = numstr(ctx, decays[-1])
        if long_run:
            values[f"{m} decay ratio larger/smaller delta"] = numstr(
                ctx, max(b / a for a, b in zip(decays[:-1], decays[1:])))
    extra["start_window"] = f"0 < t <= {p['start']}"
    return Output(tables={"": df}, values=values, extra=extra)


def _panels(n):
    import matplotlib.pyplot as plt
    return plt.subplots(1, n, figsize=(4.2 * n, 4.0), sharey=True)


def trajectory_plot(out, p):
    """Fig. 6: x(t) of both methods over the benchmark, one panel per delta."""
    df = out.tables[""]
    fig, axes = _panels(len(p["deltas"]))
    for ax, d in zip(axes, p["deltas"]):
        for name in ["reference"] + METHODS[::-1]:
            g = df[(df["delta"] == d) & (df["method"] == name)]
            ax.plot(g["t"].astype(float), g["q"].astype(float), **STYLE[name])
        dev = max(float(out.values[f"delta={d} {m} relative x deviation"]) for m in METHODS)
        ax.set_title(rf"$\delta$ = {d} (max |x - x_ref| / max |x_ref| = {dev:.1e})", fontsize=9)
        ax.set_xlabel(r"$t$"); ax.grid(alpha=0.3)
    axes[0].set_ylabel(r"$x(t)$"); axes[-1].legend(fontsize=8, loc="upper right")
    fig.suptitle(_heading("Fig. 6", p), fontsize=9.5)
    fig.tight_layout()
    return fig


def energy_plot(out, p):
    """Fig. 7: |E_method(t) - E_benchmark(t)| on a log axis, one panel per delta."""
    df = out.tables[""]
    fig, axes = _panels(len(p["deltas"]))
    for ax, d in zip(axes, p["deltas"]):
        for name in METHODS:
            g = df[(df["delta"] == d) & (df["method"] == name)].iloc[1:]
            ax.semilogy(g["t"].astype(float), g["energy_error"].astype(float).abs(), lw=0.9,
                        **{k: v for k, v in STYLE[name].items() if k != "lw"})
        ax.set_title(rf"$\delta$ = {d}", fontsize=10)
        ax.set_xlabel(r"$t$"); ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel(r"$|E_{method}(t) - E_{benchmark}(t)|$")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle(_heading("Fig. 7", p) + "; energy error against the benchmark's energy "
                 "at the same time", fontsize=9.5)
    fig.tight_layout()
    return fig


def _heading(item, p):
    return (f"hermite {item}: Duffing (40), " + rf"$\alpha$ = {p['alpha']}, $\beta$ = {p['beta']}, "
            f"x(0) = {p['x0']}, " + r"$\dot x(0)$" + f" = {p['v0']}, " + r"$\Delta t$" +
            f" = {p['h']}, T = {p['T']} (benchmark: GBS order {2 * p['gbs_levels']})")


def duffing_reproduction(rid, item, title, compute, plot):
    from mpvi.repro.declare import Reproduction
    return Reproduction(id=rid, paper=PAPER, item=item, title=title,
                        params=PARAMS, quick=QUICK, compute=compute, plot=plot, tasks=tasks,
                        certify=duffing_certify)


# ----- certified (mpvi run --certify) ---------------------------------------------------------

CERTIFIED_STATEMENT = (
    "Both one-step methods' runs certified for every delta (mpvi.certify, Lohner's method on "
    "Arb balls): each state is an enclosure of the method's exact discrete trajectory from the "
    "run's data (delta, Delta t, x(0), x'(0) as the binary numbers the run used, its rounding "
    "excluded), and E = 1/2 x'^2 + 1/2 alpha x^2 + 1/4 beta x^4 (alpha, beta exact) is "
    "evaluated on those balls.  The GBS benchmark is certified the same way (its "
    "extrapolation tableau on balls): every deviation and energy error is proven against "
    "its exact discrete trajectory; the benchmark's own distance to the exact solution (its "
    "halving check, ~1e-40) is estimated, not proven.")

_CERTIFIED = {}
"""(delta, study parameters, digits) -> the balls of :func:`certified_duffing`: Figs. 6 and
7 share the runs, so a process that runs both certifies them once."""


def certified_duffing(run, q):
    """For the study parameters ``q`` (one delta): {method: {"x", "v", "E"}} enclosures at
    the nodes for both methods (certified runs) and the benchmark (its numbers as data),
    and "t" the nodes the run used (exact binary numbers, for the windows)."""
    from mpvi import Problem
    from mpvi.systems.double_well import duffing

    from mpvi_papers.hermite._hermite_certified import certified_run, rational

    key = (repr(sorted(q.items())), run.ctx.dps)
    if key in _CERTIFIED:
        return _CERTIFIED[key]
    ctx = run.ctx
    one = run.kept[q["delta"]]              # the runs compute() reported
    n, h = steps(q["T"], q["h"]), ctx.num(q["h"])
    problem = Problem(duffing(ctx, q["alpha"], q["beta"], q["delta"]), [q["x0"]], v0=[q["v0"]])
    alpha, beta = rational(q["alpha"], "alpha"), rational(q["beta"], "beta")

    def energy(x, v):
        return v * v / 2 + alpha * x * x / 2 + beta * x ** 4 / 4

    found = {"t": list(one["t"])}
    for m in METHODS:
        run.progress(f"certifying Duffing delta = {q['delta']}: {m}, {n} steps of {q['h']}")
        sol, cert = certified_run(problem, m, h, n, one["runs"][m], f"Duffing delta = {q['delta']}, {m}")
        if sol.state != "qv":
            raise ValueError(f"{m} carries {sol.state}, not (q, v)")
        xs, vs = [x[0] for x in cert.q], [v[0] for v in cert.y]
        found[m] = {"x": xs, "v": vs, "E": [energy(x, v) for x, v in zip(xs, vs)]}
    run.progress(f"certifying Duffing delta = {q['delta']}: the GBS benchmark, {n} steps")
    sol, cert = certified_run(problem, "gbs", h, n, one["runs"]["reference"],
                              f"Duffing delta = {q['delta']}, benchmark", levels=q["gbs_levels"])
    if sol.state != "qp" or sol.system.dof != 1:
        raise ValueError(f"the benchmark carries {sol.state}, not (q, p)")
    xs, vs = [x[0] for x in cert.q], [p[0] for p in cert.y]     # mass 1 (eq. 40): v = p
    found["reference"] = {"x": xs, "v": vs, "E": [energy(x, v) for x, v in zip(xs, vs)]}
    _CERTIFIED[key] = found
    return found


def duffing_certify(run, out):
    """``mpvi run --certify`` of Figs. 6-7: every deviation and energy-error value of the two
    one-step methods from the benchmark proven (:data:`CERTIFIED_STATEMENT`)."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision

    from mpvi_papers.hermite._hermite_certified import digits_of, mean_abs, sup_abs
    from mpvi_papers.hermite._hermite_certified import growth as ball_growth

    ctx, p = run.ctx, run.params
    values, not_certified = {}, {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        T, s = Fraction(p["T"]), Fraction(p["start"])
        balls = {}
        for q in run_params(p):
            d = q["delta"]
            found = certified_duffing(run, q)
            ref = found["reference"]
            t = [Fraction(exact_rational(x, "t")) for x in found["t"]]
            amp = sup_abs(ref["x"])
            balls[(d, "reference", "amplitude")] = amp
            for m in METHODS:
                r = found[m]
                balls[(d, m, "relative x deviation")] = (
                    sup_abs([a - b for a, b in zip(r["x"], ref["x"])]) / amp)
                balls[(d, m, "max abs x deviation")] = sup_abs([a - b for a, b in zip(r["x"], ref["x"])])
                balls[(d, m, "max abs v deviation")] = sup_abs([a - b for a, b in zip(r["v"], ref["v"])])
                e = [a - b for a, b in zip(r["E"], ref["E"])]
                start = [x for tj, x in zip(t, e) if 0 < tj <= s]
                end = [x for tj, x in zip(t, e) if T - s < tj <= T]
                balls[(d, m, "start energy error level")] = mean_abs(start)
                balls[(d, m, "start energy error peak")] = sup_abs(start)
                balls[(d, m, "max abs energy error")] = sup_abs(e)
                if T >= 2 * s:
                    balls[(d, m, "end energy error peak")] = sup_abs(end)
                    balls[(d, m, "energy error growth")] = ball_growth(e)
                    balls[(d, m, "energy error decay")] = sup_abs(end) / sup_abs(start)
        for (d, m, what), ball in balls.items():
            key = f"delta={d} {m} {what}"
            if key in out.values:
                values[key] = digits_of(out, key, ball)
        for m in METHODS:
            key = f"{m} decay ratio larger/smaller delta"
            if key in out.values:
                decays = [balls[(d, m, "energy error decay")] for d in p["deltas"]]
                ratio = None
                for a, b in zip(decays[:-1], decays[1:]):
                    ratio = b / a if ratio is None else ratio.max(b / a)
                values[key] = digits_of(out, key, ratio)
    for key in out.values:
        if key in values:
            continue
        if "halving" in key:
            not_certified[key] = ("the benchmark's GBS run at half the step is not certified; "
                                  "not a published value")
        elif "newton" in key:
            not_certified[key] = "a statistic of the Newton iterations, not a mathematical value"
    for column in ("t", "delta", "method"):
        not_certified[column] = "an input of the run (the nodes, delta, the method's name)"
    for column in ("q", "v", "energy", "energy_error"):
        not_certified[column] = ("the long table's states are enclosed by the certificates "
                                 "above; the published values built on them are proven")
    return {"statement": CERTIFIED_STATEMENT, "values": values, "not_certified": not_certified}
