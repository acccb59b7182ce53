"""hermite Sec. 5.1: the particle in a double-well potential (eqs. 38-39), Figs. 3 and 4.

m = 1, q'(0) = 0, q(0) = 0.74 (Fig. 3) or 0.995 (Fig. 4), Delta t = 0.1 (all printed).
The span is not printed; we take T = 100 (1000 steps; ERRATA [E40]).

Compared, on the nodes t_j = j Delta t:

* ``hermite_variational`` (eqs. 18-25) and ``hermite_galerkin`` (eq. 26), cubic Hermite;
* ``reference``: the benchmark, mpvi's GBS extrapolation of order 2 gbs_levels = 32 at
  H = Delta t in the run's context (the paper does not say what its benchmark is);
* ``exact``: the Jacobi elliptic solution q = A dn(A t, k), k^2 = 2 - 1/A^2
  (:class:`mpvi.systems.double_well.DoubleWellExact`); the benchmark's distance to it is
  recorded.

The energy error is absolute, E(t_j) - E(0) with E = 1/2 m q'^2 + 1/2 (q^4 - q^2): the
paper's printed magnitudes are absolute (relative to |E(0)| = 0.0049 for q(0) = 0.995
they would be 200 times larger).  "Around 10^-k" (Sec. 5.1 text) is compared in two
readings, both as "the same decade" (``magnitude``): the level of the error curve
(time mean of |E - E0| over the run) and its peak (max |E - E0|); see ERRATA [E42].

The runs of one initial condition are the cached study :func:`double_well_runs`.
"""

import pandas as pd

from mpvi.repro.studies import numstr, steps, study

from mpvi_papers.hermite._hermite import METHODS, PAPER, STYLE

PARAMS = {"q0": None, "v0": "0", "m": "1", "h": "0.1", "T": "100", "gbs_levels": 16}
QUICK = {"T": "10"}
STUDY_KEYS = ("q0", "v0", "m", "h", "T", "gbs_levels")


def energies(system, qs, vs):
    """E at every node from (q, v) (p = M v through the system)."""
    return [system.energy(q, system.momentum(q, v)) for q, v in zip(qs, vs)]


def col(a):
    """The first column of a solution's array as a 1-D array (one coordinate)."""
    return a[:, 0].copy()


@study("hermite_double_well_runs")
def double_well_runs(rec, params):
    """Both Hermite methods, the GBS benchmark and the exact solution of the double well
    (38) from q(0) = ``q0``, q'(0) = ``v0`` with mass ``m`` over [0, T] at step ``h``
    (decimal strings).  Returns ``{"t", "runs": {name: {"q", "v", "E"}}}`` (1-D arrays on
    the nodes) with names ``hermite_variational``, ``hermite_galerkin``, ``reference``,
    ``exact``."""
    from mpvi.systems.double_well import double_well_problem

    ctx, p = rec.ctx, params
    problem = double_well_problem(ctx, p["q0"], p["v0"], p["m"])
    S = problem.system
    n, h = steps(p["T"], p["h"]), ctx.num(p["h"])
    runs = {}
    for m in METHODS:
        rec.progress(f"double well q0 = {p['q0']}: {m}, {n} steps of {p['h']}")
        sol = rec.solve(problem, m, h=h, n=n)
        runs[m] = {"q": col(sol.q), "v": col(sol.v)}
    rec.progress(f"double well q0 = {p['q0']}: benchmark GBS order {2 * p['gbs_levels']}, "
                 f"{n} steps of {p['h']}")
    ref = rec.solve(problem, "gbs", h=h, n=n, levels=p["gbs_levels"])
    runs["reference"] = {"q": col(ref.q), "v": col(ref.v)}
    rec.progress(f"double well q0 = {p['q0']}: exact elliptic solution on the nodes")
    ex = problem.exact
    runs["exact"] = {"q": col(ex.q(ref.t)), "v": col(ex.v(ref.t))}
    for r in runs.values():
        r["E"] = ctx.asarray(energies(S, r["q"].reshape(-1, 1), r["v"].reshape(-1, 1)))
    return {"t": ref.t, "runs": runs, "period": ex.period if ex.period is not None else ""}


NAMES = METHODS + ["reference", "exact"]


def sup(values):
    return max(abs(x) for x in values)


def growth(values):
    """max |.| over the second half of the nodes / max |.| over the first half (after
    t = 0): about 1 for a bounded error, > 1 for a drift."""
    k = len(values) // 2
    return sup(values[k:]) / sup(values[1:k + 1])


def orbit_distance(system, q, v, dE):
    """Distance of each node (q_j, v_j) from the exact orbit E(q, v) = E0 in the phase
    plane, to first order: |E_j - E0| / |grad E(q_j, v_j)|, grad E = (V'(q), m v).  In one
    degree of freedom the orbits are the energy levels, so this is what a phase portrait
    shows (valid while it is small against the orbit's radius of curvature; the orbits
    of Figs. 3-4 stay away from the saddle q = v = 0 where grad E vanishes)."""
    ctx = system.ctx
    out = []
    for x, u, e in zip(q, v, dE):
        xv, uv = ctx.vector([x]), ctx.vector([u])
        g = system.grad_potential(xv)[0]
        pm = system.momentum(xv, uv)[0]
        out.append(abs(e) / ctx.sqrt(g * g + pm * pm))
    return out


def double_well_output(run):
    """The table, values and provenance of Fig. 3 or 4 (parameters of ``run``)."""
    from mpvi.repro.declare import Output

    from mpvi.systems.double_well import double_well

    ctx, p = run.ctx, run.params
    S = double_well(ctx, p["m"])
    res = run.kept["study"] = run.study(double_well_runs, {k: p[k] for k in STUDY_KEYS})
    t, runs = res["t"], res["runs"]
    E0 = runs["exact"]["E"][0]
    ex = runs["exact"]
    frames, values = [], {}
    amplitude = sup(ex["q"])
    for name in NAMES:
        r = runs[name]
        dE = [e - E0 for e in r["E"]]
        frames.append(pd.DataFrame({
            "t": [numstr(ctx, x) for x in t], "method": name,
            "q": [numstr(ctx, x) for x in r["q"]], "v": [numstr(ctx, x) for x in r["v"]],
            "energy": [numstr(ctx, x) for x in r["E"]],
            "energy_error": [numstr(ctx, x) for x in dE]}))
        values[f"{name} max abs energy error"] = numstr(ctx, sup(dE))
        if name == "exact":
            continue
        values[f"{name} mean abs energy error"] = numstr(
            ctx, ctx.fsum(abs(x) for x in dE[1:]) / (len(dE) - 1))
        values[f"{name} max abs q error"] = numstr(ctx, sup(r["q"] - ex["q"]))
        values[f"{name} max abs v error"] = numstr(ctx, sup(r["v"] - ex["v"]))
        values[f"{name} relative q deviation"] = numstr(ctx, sup(r["q"] - ex["q"]) / amplitude)
        values[f"{name} relative orbit deviation"] = numstr(
            ctx, sup(orbit_distance(S, r["q"], r["v"], dE)) / amplitude)
        if name in METHODS:
            values[f"{name} energy error growth"] = numstr(ctx, growth(dE))
    values["variational/galerkin max energy error ratio"] = numstr(
        ctx, ctx.num(values["hermite_variational max abs energy error"])
        / ctx.num(values["hermite_galerkin max abs energy error"]))
    for m, s in run.newton_summary().items():
        values[f"{m} newton max final residual"] = f"{s['max_final_residual']:.3e}"
        values[f"{m} newton max iterations"] = str(s["max_iterations"])
    values["exact energy"] = numstr(ctx, E0)
    if res["period"] != "":
        values["exact period"] = numstr(ctx, res["period"])
    extra = {"steps": steps(p["T"], p["h"]),
             "benchmark": f"gbs, order {2 * p['gbs_levels']}, H = {p['h']}",
             "energy_error": "absolute, E(t) - E(0)",
             "span_T": p["T"] + " (not printed in the paper)"}
    return Output(tables={"": pd.concat(frames, ignore_index=True)}, values=values, extra=extra)


def double_well_plot(out, p, item):
    """(a) phase portrait q-v of both methods over the benchmark, (b) |E(t) - E(0)| of both
    methods on a log axis (the exact and benchmark curves sit at the round-off level)."""
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11.5, 4.6))
    for name in ["reference"] + METHODS[::-1]:
        g = df[df["method"] == name]
        ax1.plot(g["q"].astype(float), g["v"].astype(float), **STYLE[name])
    ax1.set_xlabel(r"$q$"); ax1.set_ylabel(r"$\dot q$"); ax1.grid(alpha=0.3); ax1.legend(fontsize=8)
    ax1.set_title("(a) phase portrait", fontsize=10)
    for name in METHODS:
        g = df[df["method"] == name].iloc[1:]
        ax2.semilogy(g["t"].astype(float), g["energy_error"].astype(float).abs(), lw=0.9,
                     **{k: v for k, v in STYLE[name].items() if k != "lw"})
    v = out.values
    ax2.set_xlabel(r"$t$"); ax2.set_ylabel(r"$|E(t) - E(0)|$"); ax2.grid(alpha=0.3, which="both")
    ax2.legend(fontsize=8, loc="lower right")
    ev, eg = (float(v[f"{m} max abs energy error"]) for m in METHODS)
    ax2.set_title(f"(b) energy error (max: variational {ev:.1e}, Galerkin {eg:.1e})", fontsize=10)
    fig.suptitle(f"hermite {item}: double well (38), q(0) = {p['q0']}, " + r"$\dot q(0)$" +
                 f" = {p['v0']}, m = {p['m']}, " + r"$\Delta t$" + f" = {p['h']}, T = {p['T']} "
                 f"(benchmark: GBS order {2 * p['gbs_levels']}; its distance to the exact "
                 f"solution: {float(v['reference max abs q error']):.0e})", fontsize=9.5)
    fig.tight_layout()
    return fig


def double_well_reproduction(number, q0):
    """The Reproduction of Fig. ``number`` (q(0) = ``q0``)."""
    from mpvi.repro.declare import Reproduction

    item = f"Fig. {number}"
    return Reproduction(
        id=f"hermite_fig0{number}", paper=PAPER, item=item,
        title=f"double well, q(0) = {q0}: phase portrait and energy error of both one-step methods",
        params={**PARAMS, "q0": q0}, quick=QUICK,
        compute=double_well_output, plot=lambda out, p: double_well_plot(out, p, item),
        certify=double_well_certify)


# ----- certified (mpvi run --certify) ---------------------------------------------------------

CERTIFIED_STATEMENT = (
    "Both one-step methods' runs certified (mpvi.certify, Lohner's method on Arb balls): each "
    "state is an enclosure of the method's exact discrete trajectory from the run's data (q(0), "
    "Delta t as the binary numbers the run used, its rounding excluded); E = 1/2 m v^2 + "
    "1/2 (q^4 - q^2) (eq. 38, m exact) evaluated on those balls, E0 the energy of the initial "
    "state; the mean, peak, growth and ratio of |E - E0| and the orbit distance |E - E0| / "
    "|grad E| over the amplitude are balls.  The amplitude max_j |q(t_j)| of the exact "
    "solution q = A dn(A t, k) is q(0) = A exactly (0 < dn <= 1, dn(0) = 1, for "
    "k^2 = 2 - 1/A^2 in [0, 1]).")


def double_well_certify(run, out):
    """``mpvi run --certify`` of Figs. 3-4: every energy-error value of the two one-step
    methods and their orbit deviation proven (:data:`CERTIFIED_STATEMENT`); the benchmark's
    and the exact solution's own values are not (the GBS benchmark is not certifiable,
    :data:`mpvi_papers.hermite._hermite_certified.BENCHMARK_NOT_NEEDED`)."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.systems.double_well import double_well_problem

    from mpvi_papers.hermite._hermite_certified import (BENCHMARK_NOT_NEEDED, certified_run, digits_of,
                                                mean_abs, rational, sup_abs, velocities)
    from mpvi_papers.hermite._hermite_certified import growth as ball_growth

    ctx, p = run.ctx, run.params
    res = run.kept["study"]                 # the runs compute() reported
    problem = double_well_problem(ctx, p["q0"], p["v0"], p["m"])
    n, h = steps(p["T"], p["h"]), ctx.num(p["h"])
    values, not_certified = {}, {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        m = rational(p["m"], "m")
        if not (rational(p["v0"], "v0") == 0 and 2 * rational(p["q0"], "q0") ** 2 >= 1):
            raise ValueError("the amplitude argument needs q'(0) = 0 and q(0)^2 >= 1/2 "
                             "(motion in one well, turning at q(0))")

        def energy(q, v):
            return m * v * v / 2 + (q ** 4 - q * q) / 2

        sups = {}
        for name in METHODS:
            run.progress(f"certifying {name}: {n} steps of {p['h']}")
            sol, cert = certified_run(problem, name, h, n, res["runs"][name], f"{name}, q0 = {p['q0']}")
            qs = [q[0] for q in cert.q]
            vs = [v[0] for v in velocities(sol, cert, m)]
            E = [energy(q, v) for q, v in zip(qs, vs)]
            dE = [e - E[0] for e in E]
            amplitude = abs(qs[0])
            orbit = [abs(e) / (((2 * q ** 3 - q) ** 2 + (m * v) ** 2).sqrt())
                     for q, v, e in zip(qs, vs, dE)]
            sups[name] = sup_abs(dE)
            for key, ball in ((f"{name} max abs energy error", sups[name]),
                              (f"{name} mean abs energy error", mean_abs(dE[1:])),
                              (f"{name} energy error growth", ball_growth(dE)),
                              (f"{name} relative orbit deviation", sup_abs(orbit) / amplitude)):
                values[key] = digits_of(out, key, ball)
        key = "variational/galerkin max energy error ratio"
        values[key] = digits_of(out, key, sups[METHODS[0]] / sups[METHODS[1]])
    for key in out.values:
        if key in values:
            continue
        if key.startswith("reference"):
            not_certified[key] = BENCHMARK_NOT_NEEDED
        elif key.startswith("exact"):
            not_certified[key] = ("the exact elliptic solution's own value (its energy, period, "
                                  "error 0), not a certified run's; not a published value")
        elif "newton" in key:
            not_certified[key] = "a statistic of the Newton iterations, not a mathematical value"
        else:
            not_certified[key] = ("its distance to the exact solution needs q(t_j) = A dn(A t_j, "
                                  "k) enclosed on the nodes; not a published value")
    for column in ("t", "method"):
        not_certified[column] = "an input of the run (the nodes, the method's name)"
    for column in ("q", "v", "energy", "energy_error"):
        not_certified[column] = ("the long table mixes the certified methods with the GBS "
                                 "benchmark (not certified here) and the exact solution; the "
                                 "methods' published values are certified above")
    return {"statement": CERTIFIED_STATEMENT, "values": values, "not_certified": not_certified}
