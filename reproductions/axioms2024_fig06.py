"""axioms2024 Fig. 6: relative energy error |H_j - H_0|/|H_0| over time for RK4, Newmark
and Simpson at h = 0.1 t_bar and h = 0.01 t_bar.

The paper does not state the simulated length; we use T = 10 t_bar (the length of
Figs. 3-4).  Its claims, compared by ``mpvi diff``: Simpson's error is about 1e-3 at
h = 0.1 t_bar, four orders lower at h/10, and bounded; Newmark conserves H exactly;
RK4's error grows.

Run: ``mpvi run axioms2024_fig06`` or ``python reproductions/axioms2024_fig06.py``.
"""
import pandas as pd

from mpvi import relative_energy_error, solve
from mpvi.repro.run import Output, Reproduction, script_main
from mpvi.repro.studies import numstr, steps

from mpvi_papers._axioms2024 import PAPER, STYLE, problem, step

PARAMS = {"T_tbar": "10", "h_tbar": ["1/10", "1/100"], "methods": ["rk4", "newmark", "simpson"]}
QUICK = {"T_tbar": "4"}


def compute(run):
    ctx, p = run.ctx, run.params
    prob = problem(ctx)
    rows, values, peak = [], {}, {}
    for h_tbar in p["h_tbar"]:
        n = steps(p["T_tbar"], h_tbar)
        for m in p["methods"]:
            run.progress(f"{m}: {n} steps of h = {h_tbar} t_bar")
            sol = solve(prob, m, h=step(ctx, prob, h_tbar), n=n)
            err = relative_energy_error(prob.system, sol)
            rows.append(pd.DataFrame({"h_tbar": h_tbar, "method": m,
                                      "t": [numstr(ctx, t) for t in sol.t],
                                      "rel_energy_error": [numstr(ctx, e) for e in err]}))
            peak[(m, h_tbar)] = max(err)
            half = len(err) // 2
            if m == "rk4":
                # growth: max over the second half / max over the first half
                values[f"rk4 growth h={h_tbar}"] = numstr(ctx, max(err[half:]) / max(err[1:half]))
            if m == "simpson":
                values[f"simpson bounded h={h_tbar}"] = numstr(ctx, max(err[half:]) / max(err[1:half]))
    for (m, h_tbar), v in peak.items():
        values[f"{m} max h={h_tbar}"] = numstr(ctx, v)
    h0, h1 = p["h_tbar"]
    values["simpson ratio h/10"] = numstr(ctx, peak[("simpson", h0)] / peak[("simpson", h1)])
    return Output(tables={"": pd.concat(rows, ignore_index=True)}, values=values,
                  extra={"T_tbar_used": p["T_tbar"]})


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, axes = plt.subplots(1, len(p["h_tbar"]), figsize=(10, 3.8), sharey=True)
    for ax, h_tbar in zip(axes, p["h_tbar"]):
        sub = df[df["h_tbar"] == h_tbar]
        for m, g in sub.groupby("method", sort=False):
            y = g["rel_energy_error"].astype(float).clip(lower=1e-70)
            style = dict(STYLE[m], marker=None)
            ax.semilogy(g["t"].astype(float), y, **style)
        ax.set_title(f"h = {h_tbar} " + r"$\bar t$", fontsize=9)
        ax.set_xlabel(r"$t$ [$\bar t$]")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel(r"$|H_j - H_0| / |H_0|$")
    axes[0].legend(fontsize=8)
    fig.suptitle("axioms2024 Fig. 6: relative energy error (Newmark sits at the round-off "
                 "floor of the number context)", fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="axioms2024_fig06", paper=PAPER, item="Fig. 6", title="relative energy error over time",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
