"""top2025 Fig. 7: the reference top motion over 5 nutation periods (Table 3, loops).

The symmetry axis tip e_z = (sin th sin phi, -sin th cos phi, cos th) (ZXZ Euler angles)
traced over 5 nutation periods, from Simpson's scheme at h = t_bar/100 (its nutation
error against the exact solution is recorded), with the exact nutation theta(t) of
eq. (18aa).  Loops appear because phi' changes sign during a period; the recorded
values are the extreme phi' of the exact solution, the range of theta (the paper:
0 < theta <= theta0 = pi/3) and the nutation period t_bar (printed 1.84671 s).

Run: ``mpvi run top2025_fig07`` or ``python reproductions/top2025/top2025_fig07.py``.
"""
import numpy as np
import pandas as pd

from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr, sup_norm

from mpvi_papers.top2025._top2025 import PAPER
from mpvi_papers.top2025._top2025_top import (CERTIFIED_STATEMENT, LoopingTop, certified_top_nodes,
                                      column_digits)

PARAMS = {"periods": 5, "N_per_period": 100, "method": "simpson", "exact_samples_per_period": 200}
QUICK = {"periods": 2, "N_per_period": 40}


def compute(run):
    ctx, p = run.ctx, run.params
    lt = LoopingTop(ctx)
    sol = run.kept["run"] = lt.run(run, p["method"], p["N_per_period"], p["periods"])
    th_ex = lt.theta_exact(sol.t)
    phi, th = sol.q[:, 0], sol.q[:, 1]
    s = ctx.sin(th)
    df = pd.DataFrame({"t": [numstr(ctx, t) for t in sol.t],
                       "phi": [numstr(ctx, x) for x in phi], "theta": [numstr(ctx, x) for x in th],
                       "psi": [numstr(ctx, x) for x in sol.q[:, 2]],
                       "theta_exact": [numstr(ctx, x) for x in th_ex],
                       "x": [numstr(ctx, x) for x in s * ctx.sin(phi)],
                       "y": [numstr(ctx, -x) for x in s * ctx.cos(phi)],
                       "z": [numstr(ctx, x) for x in ctx.cos(th)]})
    k = p["exact_samples_per_period"]
    ts = [lt.tbar * j / k for j in range(k + 1)]
    phidot = [lt.nutation.phi_dot(t) for t in ts]
    thetas = [lt.nutation.theta(t) for t in ts]
    values = {"tbar": numstr(ctx, lt.tbar),
              "phidot min": numstr(ctx, min(phidot)), "phidot max": numstr(ctx, max(phidot)),
              "theta max - theta0": numstr(ctx, max(thetas) - lt.top.q0[1]),
              "theta min": numstr(ctx, min(thetas)),
              "simpson theta max abs error": numstr(ctx, sup_norm(th - th_ex))}
    extra = {"tbar_s": numstr(ctx, lt.tbar), "integrator": p["method"]}
    return Output(tables={"": df}, values=values, extra=extra)


def certify(run, out):
    """The proven digits of the run's table and of the values (``mpvi run --certify``):
    the run certified (:func:`mpvi_papers.top2025._top2025_top.certified_top_nodes`), x, y, z on
    its enclosures, the exact nutation enclosed at the run's binary times and at the
    sample times, t_bar by ``LagrangeTopNutation.enclose_period``."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.certified import ball_max
    from mpvi.repro.digits import proven_digits
    ctx, p = run.ctx, run.params
    df = out.tables[""]
    with arb_precision(ctx.dps + GUARD_DIGITS):
        run.progress(f"certifying {p['method']}: {p['periods']} periods")
        sol = run.kept["run"]
        nodes = certified_top_nodes(ctx, p["method"], p["N_per_period"], p["periods"], sol)
        q = nodes["cert"].q
        with ctx.active():
            lt = LoopingTop(ctx)
            k = p["exact_samples_per_period"]
            ts = [lt.tbar * j / k for j in range(k + 1)]
        run.progress("enclosing the exact nutation")
        at_nodes = [lt.nutation.enclose(t, ctx.dps)["theta"] for t in sol.t]
        samples = [lt.nutation.enclose(t, ctx.dps) for t in ts]
        phi = [x[0] for x in q]
        th = [x[1] for x in q]
        balls = {"phi": phi, "theta": th, "psi": [x[2] for x in q], "theta_exact": at_nodes,
                 "x": [a.sin() * b.sin() for a, b in zip(th, phi)],
                 "y": [-(a.sin() * b.cos()) for a, b in zip(th, phi)],
                 "z": [a.cos() for a in th]}
        digits = {c: column_digits(df[c].tolist(), b) for c, b in balls.items()}
        phidot = [e["phi_dot"] for e in samples]
        low, high = phidot[0], phidot[0]
        for x in phidot[1:]:
            low, high = low.min(x), high.max(x)
        lowest = samples[0]["theta"]
        for e in samples[1:]:
            lowest = lowest.min(e["theta"])
        found = {"tbar": lt.nutation.enclose_period(ctx.dps), "phidot min": low,
                 "phidot max": high, "theta min": lowest,
                 "simpson theta max abs error": ball_max(abs(d) for d in nodes["theta_diff"])}
        values = {k: proven_digits(out.values[k], b) for k, b in found.items()}
        above = (ball_max(e["theta"] for e in samples)
                 - nodes["cert"].context.lift(lt.top.q0[1])).str(3, radius=True)
    return {"statement": CERTIFIED_STATEMENT + ("  t_bar is the enclosed period 2 omega_1 of "
                                                "these data; the exact nutation's extremes "
                                                "are over the binary sample times t_bar j / k "
                                                "the run computed."),
            "columns": {"": digits}, "values": values,
            "not_certified": {
                "t": "the node time j h, h = t_bar/N rounded: an input",
                "theta max - theta0": (
                    "exactly 0, as recorded: the sample at t = 0 is theta(0) = theta0 itself, "
                    "the largest root of the nutation's cubic, so theta <= theta0 all along "
                    f"(eq. 18aa); enclosed: max theta - theta0 in {above}. An exact zero has "
                    "no relative digits to prove")}}


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    x, y, z = (df[c].astype(float).to_numpy() for c in "xyz")
    fig = plt.figure(figsize=(13, 4.4))
    ax = fig.add_subplot(1, 3, 1, projection="3d")
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 40), np.linspace(0, np.pi / 2.2, 15))
    ax.plot_wireframe(np.sin(v) * np.cos(u), np.sin(v) * np.sin(u), np.cos(v), color="0.85", lw=0.4)
    ax.plot(x, y, z, color="tab:green", lw=1.0)
    ax.set_xlabel("X"); ax.set_ylabel("Y"); ax.set_zlabel("Z")
    ax.set_title("tip of the symmetry axis", fontsize=9)
    ax1 = fig.add_subplot(1, 3, 2)
    ax1.plot(x, y, color="tab:green", lw=0.9)
    ax1.plot([0], [0], "k+")
    ax1.set_aspect("equal"); ax1.set_xlabel("X"); ax1.set_ylabel("Y")
    ax1.set_title("seen from above (Z axis)", fontsize=9); ax1.grid(alpha=0.3)
    ax2 = fig.add_subplot(1, 3, 3)
    t = df["t"].astype(float)
    ax2.plot(t, df["theta_exact"].astype(float), color="0.6", lw=3, alpha=0.6, label=r"$\theta$ exact (18aa)")
    ax2.plot(t, df["theta"].astype(float), "g-", lw=0.9, label=r"$\theta$ Simpson")
    ax2.set_xlabel("t [s]"); ax2.set_ylabel(r"$\theta$ [rad]"); ax2.grid(alpha=0.3)
    # the legend below the axes: the nutation fills them, the legend covered both curves
    ax2.legend(fontsize=8, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.16),
               frameon=False)
    fig.suptitle(f"top2025 Fig. 7: Lagrange top, Table 3, {p['periods']} nutation periods "
                 f"(Simpson, h = t_bar/{p['N_per_period']})", fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="top2025_fig07", paper=PAPER, item="Fig. 7", title="top motion with loops over 5 nutation periods",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
