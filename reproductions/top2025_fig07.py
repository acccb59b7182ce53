"""top2025 Fig. 7: the reference top motion over 5 nutation periods (Table 3, loops).

The symmetry axis tip e_z = (sin th sin phi, -sin th cos phi, cos th) (ZXZ Euler angles)
traced over 5 nutation periods, from Simpson's scheme at h = t_bar/100 (its nutation
error against the exact solution is recorded), with the exact nutation theta(t) of
eq. (18aa).  Loops appear because phi' changes sign during a period; the recorded
values are the extreme phi' of the exact solution, the range of theta (the paper:
0 < theta <= theta0 = pi/3) and the nutation period t_bar (printed 1.84671 s).

Run: ``mpvi run top2025_fig07`` or ``python reproductions/top2025_fig07.py``.
"""
import numpy as np
import pandas as pd

from mpvi.repro.run import Output, Reproduction, script_main
from mpvi.repro.studies import numstr, sup_norm

from mpvi_papers._top2025 import PAPER
from mpvi_papers._top2025_top import LoopingTop

PARAMS = {"periods": 5, "N_per_period": 100, "method": "simpson", "exact_samples_per_period": 200}
QUICK = {"periods": 2, "N_per_period": 40}


def compute(run):
    ctx, p = run.ctx, run.params
    lt = LoopingTop(ctx)
    sol = lt.run(run, p["method"], p["N_per_period"], p["periods"])
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
    ax2.set_xlabel("t [s]"); ax2.set_ylabel(r"$\theta$ [rad]"); ax2.legend(fontsize=8); ax2.grid(alpha=0.3)
    fig.suptitle(f"top2025 Fig. 7: Lagrange top, Table 3, {p['periods']} nutation periods "
                 f"(Simpson, h = t_bar/{p['N_per_period']})", fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="top2025_fig07", paper=PAPER, item="Fig. 7", title="top motion with loops over 5 nutation periods",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
