"""top2025 Fig. 9: relative energy error e_H = (H - H0)/H0 over 10 nutation periods,
h = 0.05 t_bar, for implicit midpoint, RK4 and Simpson.

Paper: the variational integrators do not dissipate energy, Simpson is closest to
zero, RK4 dissipates.  Recorded: max |e_H| per method, the growth factor (max over the
second half / max over the first half) and RK4's final e_H (its sign: negative =
dissipation).

Run: ``mpvi run top2025_fig09`` or ``python reproductions/top2025_fig09.py``.
"""
from mpvi.repro import Output, Reproduction, script_main
from mpvi.studies import numstr

from reproductions._top2025 import PAPER, STYLE, growth, loop_methods_run, series_frame, sup

PARAMS = {"periods": 10, "N_per_period": 20}
QUICK = {"periods": 4}


def compute(run):
    ctx, p = run.ctx, run.params
    lt, res = loop_methods_run(run, p["periods"], p["N_per_period"])
    values = {}
    for m, (_, e) in res.items():
        values[f"{m} max |e_H|"] = numstr(ctx, sup(e["H"]))
        values[f"{m} e_H growth"] = numstr(ctx, growth(e["H"]))
        values[f"{m} final e_H"] = numstr(ctx, e["H"][-1])
    for m in ("midpoint", "rk4"):
        values[f"simpson/{m} max |e_H| ratio"] = numstr(ctx, sup(res["simpson"][1]["H"]) / sup(res[m][1]["H"]))
    return Output(tables={"": series_frame(ctx, res, ["H"])}, values=values,
                  extra={"h_tbar": f"1/{p['N_per_period']}"})


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for m, g in df.groupby("method", sort=False):
        t, e = g["t"].astype(float), g["H"].astype(float)
        axes[0].plot(t, e, **STYLE[m])
        axes[1].semilogy(t[1:], abs(e[1:]), **STYLE[m])
    axes[0].set_ylabel(r"$e_H = (H - H_0)/H_0$"); axes[1].set_ylabel(r"$|e_H|$")
    for ax in axes:
        ax.set_xlabel("t [s]"); ax.grid(alpha=0.3); ax.legend(fontsize=8)
    fig.suptitle(rf"top2025 Fig. 9: relative energy error over {p['periods']} periods, "
                 rf"h = $\bar t$/{p['N_per_period']}", fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="top2025_fig09", paper=PAPER, item="Fig. 9", title="relative energy error over 10 nutation periods",
    runtime="~5 s", params=PARAMS, quick=QUICK, compute=compute, plot=plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
