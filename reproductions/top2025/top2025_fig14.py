"""top2025 Fig. 14: convergence of the difference Simpson (complete top) - RK4 (reduced
top), ||eps_theta||_inf = sup_n |theta_SIM,n - theta_RK4,n|, as h is halved (Sec. 4.3.2).

What the paper shows.  Both methods run at the same h on the Table 6 cusp motion; "the
ratio between successive errors gives a number 2^-alpha ... The convergence order of
this difference corresponds to the closest integer to alpha", and the caption: "This
difference is fourth-order convergent."  The paper does not print T or the step sizes.

What we compute.  T = 1 s (the horizon of Fig. 13), h = 0.1 / 2^k s for k = 0..6 (N = 10
... 640 steps; the quick set k = 0..4, N <= 160), at 64 digits:

* eps_theta(h) = max_n |theta_SIM,n - theta_RK4,n| (Simpson on the complete system,
  RK4 on the reduced system (18aq)), the successive alpha_k = log2(eps_k / eps_k+1) and
  the least-squares slope of log eps against log h over all h;
* the same for each method against the GBS reference (order 32, reduced system, H equal
  to the smallest h, so every node of every run is a GBS node), so the reader sees which
  method the difference measures.  The GBS run at 2H differs from it by the error of the
  2H run (1e-52 at 2H = 1/80 s, ~1e-59 = the rounding floor at 2H = 1/320 s); the run at
  H is at least as accurate (order 32), i.e. exact for the errors >= 1e-10 measured here.

Finding: the difference is not dominated by RK4 alone.  At every h the RK4 error is
about twice Simpson's, and the two errors have the same sign at the node where the
difference peaks, so eps_theta ~ |e_RK4| - |e_SIM| is about the size of Simpson's own
error.  All three quantities are of order 4; the difference confirms the order, not
which method is more accurate.  (RK4 on the complete system gives the same nodes as RK4
on the reduced one, see top2025_fig13.)

Published claims compared (reproductions/top2025/published/top2025_reduced.csv): least-squares
order of eps_theta = 4 +- 0.3; every successive alpha_k rounds to 4 (the paper's
"closest integer" rule: max_k |alpha_k - 4| < 0.5); Simpson against GBS: order 4 +- 0.2;
RK4 against GBS: order 4 +- 0.3.

Run: ``mpvi run top2025_fig14`` or ``python reproductions/top2025/top2025_fig14.py``.
"""
from fractions import Fraction

import pandas as pd

from mpvi.analysis.measures import fit_order
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import fraction, numstr, steps, successive_orders

from mpvi_papers.top2025._top2025 import PAPER, STYLE
from mpvi_papers.top2025._top2025_reduced import (CUSP_STATEMENT, GBS_LEVELS, certified_cusp_run,
                                            cusp_top, max_abs_diff, reduced_problem,
                                            solve_reduced)

PARAMS = {"T": "1", "h0": "1/10", "halvings": 6, "gbs_levels": GBS_LEVELS}
QUICK = {"halvings": 4}


def compute(run):
    ctx, p = run.ctx, run.params
    top = cusp_top(ctx)
    reduced = reduced_problem(top)
    T, h0, lev = fraction(p["T"]), fraction(p["h0"]), p["gbs_levels"]
    hs = [h0 / 2 ** k for k in range(p["halvings"] + 1)]
    H = hs[-1]
    n_gbs = steps(T, H)
    run.progress(f"GBS reference (levels {lev}) on the reduced system, H = {H} s and 2H")
    gbs = solve_reduced(run, reduced, "gbs", H, n_gbs, levels=lev)
    gbs2 = solve_reduced(run, reduced, "gbs", 2 * H, n_gbs // 2, levels=lev)
    gbs_halving = max_abs_diff(gbs2.q[:, 1], gbs.q[::2, 1])

    eps, e_sim, e_rk4 = [], [], []
    for h in hs:
        n = steps(T, h)
        run.progress(f"h = {h} s ({n} steps): simpson (complete), rk4 (reduced)")
        sim = run.solve(top, "simpson", h=ctx.num(h), n=n)
        rk = solve_reduced(run, reduced, "rk4", h, n)
        ref = gbs.q[::steps(h, H), 1]
        eps.append(max_abs_diff(sim.q[:, 1], rk.q[:, 1]))
        e_sim.append(max_abs_diff(sim.q[:, 1], ref))
        e_rk4.append(max_abs_diff(rk.q[:, 1], ref))

    hnum = [ctx.num(h) for h in hs]
    orders = {name: fit_order(ctx, hnum, e) for name, e in
              (("difference", eps), ("simpson", e_sim), ("rk4", e_rk4))}
    alphas = {name: successive_orders(ctx, e) for name, e in
              (("difference", eps), ("simpson", e_sim), ("rk4", e_rk4))}
    orders_asym = {name: fit_order(ctx, hnum[1:], e[1:]) for name, e in
                   (("difference", eps), ("simpson", e_sim), ("rk4", e_rk4))}

    def alpha_col(a):
        return [""] + [numstr(ctx, x) for x in a]
    df = pd.DataFrame({
        "k": list(range(len(hs))), "N": [steps(T, h) for h in hs],
        "h": [str(Fraction(h)) for h in hs],
        "eps_theta_sim_minus_rk4": [numstr(ctx, e) for e in eps],
        "alpha_eps": alpha_col(alphas["difference"]),
        "simpson_err_vs_gbs": [numstr(ctx, e) for e in e_sim],
        "alpha_simpson": alpha_col(alphas["simpson"]),
        "rk4_err_vs_gbs": [numstr(ctx, e) for e in e_rk4],
        "alpha_rk4": alpha_col(alphas["rk4"]),
        "rk4_over_simpson": [numstr(ctx, a / b) for a, b in zip(e_rk4, e_sim)],
    })
    values = {
        "difference order": numstr(ctx, orders["difference"]),
        "difference order h<=h0/2": numstr(ctx, orders_asym["difference"]),
        "difference max |alpha-4|": numstr(ctx, max(abs(a - 4) for a in alphas["difference"])),
        "difference last alpha": numstr(ctx, alphas["difference"][-1]),
        "simpson order": numstr(ctx, orders["simpson"]),
        "simpson order h<=h0/2": numstr(ctx, orders_asym["simpson"]),
        "simpson last alpha": numstr(ctx, alphas["simpson"][-1]),
        "rk4 order": numstr(ctx, orders["rk4"]),
        "rk4 order h<=h0/2": numstr(ctx, orders_asym["rk4"]),
        "rk4 last alpha": numstr(ctx, alphas["rk4"][-1]),
        "rk4/simpson error ratio min": numstr(ctx, min(a / b for a, b in zip(e_rk4, e_sim))),
        "rk4/simpson error ratio max": numstr(ctx, max(a / b for a, b in zip(e_rk4, e_sim))),
        "eps at smallest h": numstr(ctx, eps[-1]),
        "gbs halving theta": numstr(ctx, gbs_halving),
    }
    return Output(tables={"": df}, values=values,
                  extra={"T_used_s": p["T"], "h_used_s": [str(Fraction(h)) for h in hs],
                         "reference": f"GBS order {2 * lev} on the reduced system, H = {H} s"})


def certify(run, out):
    """The proven digits of the table and values (``mpvi run --certify``): at every h,
    Simpson and RK4 certified on the complete top with the exact nutation at their nodes
    (:func:`mpvi_papers.top2025._top2025_reduced.certified_cusp_run`, :data:`CUSP_STATEMENT`): the
    difference eps_theta of the two exact discrete trajectories and each one's error
    against the exact solution (backing the GBS reference), the successive and
    least-squares orders on balls."""
    from flint import arb

    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.certified import ball_max, least_squares_order
    from mpvi.repro.digits import proven_digits
    ctx, p = run.ctx, run.params
    df = out.tables[""]
    T, h0 = fraction(p["T"]), fraction(p["h0"])
    hs = [h0 / 2 ** k for k in range(p["halvings"] + 1)]
    with arb_precision(ctx.dps + GUARD_DIGITS):
        steps_, errs = [], {"difference": [], "simpson": [], "rk4": []}
        for h in hs:
            n = steps(T, h)
            run.progress(f"certifying h = {h} s: simpson and rk4 on the complete top")
            hs_, sim, exact = certified_cusp_run(ctx, "simpson", h, n)
            hr, rk, _ = certified_cusp_run(ctx, "rk4", h, n)
            if hr != hs_:
                raise ArithmeticError(f"top2025 Fig. 14, h = {h}: the runs took different steps")
            steps_.append(hs_)
            ts, tr = [q[1] for q in sim.q], [q[1] for q in rk.q]
            errs["difference"].append(ball_max(a - b for a, b in zip(ts, tr)))
            errs["simpson"].append(ball_max(a - b for a, b in zip(ts, exact)))
            errs["rk4"].append(ball_max(a - b for a, b in zip(tr, exact)))
        two = arb(2).log()
        alphas = {k: [(a / b).log() / two for a, b in zip(e[:-1], e[1:])] for k, e in errs.items()}
        orders = {k: least_squares_order(steps_, e) for k, e in errs.items()}
        tail = {k: least_squares_order(steps_[1:], e[1:]) for k, e in errs.items()}
        ratios = [a / b for a, b in zip(errs["rk4"], errs["simpson"])]
        columns = {"eps_theta_sim_minus_rk4": errs["difference"],
                   "simpson_err_vs_gbs": errs["simpson"], "rk4_err_vs_gbs": errs["rk4"],
                   "rk4_over_simpson": ratios,
                   "alpha_eps": [None] + alphas["difference"],
                   "alpha_simpson": [None] + alphas["simpson"],
                   "alpha_rk4": [None] + alphas["rk4"]}
        digits = {c: [proven_digits(x, b)[0] for x, b in zip(df[c].astype(str), balls)
                      if b is not None] for c, balls in columns.items()}
        worst = ball_max(a - 4 for a in alphas["difference"])
        low, high = ratios[0], ratios[0]
        for r in ratios[1:]:
            low, high = low.min(r), high.max(r)
        found = {"difference order": orders["difference"],
                 "difference order h<=h0/2": tail["difference"],
                 "difference max |alpha-4|": worst,
                 "difference last alpha": alphas["difference"][-1],
                 "rk4/simpson error ratio min": low, "rk4/simpson error ratio max": high,
                 "eps at smallest h": errs["difference"][-1]}
        for m in ("simpson", "rk4"):
            found.update({f"{m} order": orders[m], f"{m} order h<=h0/2": tail[m],
                          f"{m} last alpha": alphas[m][-1]})
        values = {k: proven_digits(out.values[k], b) for k, b in found.items() if k in out.values}
    inputs = "an input of the study (exact), not a computed number"
    return {"statement": CUSP_STATEMENT + ("  The columns and values 'vs GBS' are enclosed "
                                           "against the exact nutation."),
            "columns": {"": digits}, "values": values,
            "not_certified": {**{c: inputs for c in ("k", "N", "h")},
                              "gbs halving theta": (
                                  "the difference of two GBS runs of the reduced system, an "
                                  "estimate of GBS's error at round-off level; the reference "
                                  "is backed by the exact nutation instead")}}


def plot(out, p):
    import matplotlib.pyplot as plt
    import numpy as np
    df = out.tables[""]
    v = out.values
    h = np.array([float(Fraction(x)) for x in df["h"]])
    fig, ax = plt.subplots(figsize=(6.8, 5))
    ax.loglog(h, df["eps_theta_sim_minus_rk4"].astype(float), "ks-", lw=1.8,
              label=r"$\|\varepsilon_\theta\|_\infty$ = sup |Simpson (complete) - RK4 (reduced)|"
                    f"  (order {float(v['difference order']):.2f})")
    ax.loglog(h, df["simpson_err_vs_gbs"].astype(float), marker="o", ms=4,
              **dict(STYLE["simpson"], label=f"Simpson vs GBS (order {float(v['simpson order']):.2f})"))
    ax.loglog(h, df["rk4_err_vs_gbs"].astype(float), marker="^", ms=4,
              **dict(STYLE["rk4"], label=f"RK4 (reduced) vs GBS (order {float(v['rk4 order']):.2f})"))
    e0 = float(df["eps_theta_sim_minus_rk4"].iloc[-1])
    ax.loglog(h, e0 * (h / h[-1]) ** 4, color="0.5", ls=":", lw=1, label=r"slope 4")
    ax.set_xlabel("h [s]")
    ax.set_ylabel(r"$\max_n |\theta_n - \theta^{\,other}_n|$ [rad]")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(f"top2025 Fig. 14: Table 6 top, T = {p['T']} s, h = ({p['h0']}) / 2^k s, "
                 f"k = 0..{p['halvings']}; GBS reference order {2 * p['gbs_levels']}", fontsize=9)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="top2025_fig14", paper=PAPER, item="Fig. 14",
    title="order of Simpson (complete) - RK4 (reduced) as h is halved, with GBS errors",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
