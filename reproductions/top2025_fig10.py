"""top2025 Fig. 10: relative errors of the conserved momenta p_phi and p_psi (eq. 18s)
over 10 nutation periods, h = 0.05 t_bar.

Paper: the symplectic integrators (implicit midpoint, Simpson) preserve these momenta
exactly; at 64 digits "exactly" means round-off, ~1e-63.  phi and psi are cyclic, so
p_phi' = p_psi' = 0 in the Hamiltonian equations: RK4 applied to (q, p), as here,
keeps them exactly too (every stage increment of p_phi and p_psi is zero) -- see
ERRATA [E32] for what the paper's figure suggests about its RK4.

Run: ``mpvi run top2025_fig10`` or ``python reproductions/top2025_fig10.py``.
"""
from mpvi.repro import Output, Reproduction, script_main
from mpvi.studies import numstr

from reproductions._top2025 import PAPER, STYLE, loop_methods_run, series_frame, sup

PARAMS = {"periods": 10, "N_per_period": 20}
QUICK = {"periods": 4}


def compute(run):
    ctx, p = run.ctx, run.params
    lt, res = loop_methods_run(run, p["periods"], p["N_per_period"])
    values = {}
    for m, (_, e) in res.items():
        for k in ("p_phi", "p_psi"):
            values[f"{m} max rel {k} error"] = numstr(ctx, sup(e[k]))
    return Output(tables={"": series_frame(ctx, res, ["p_phi", "p_psi"])}, values=values,
                  extra={"h_tbar": f"1/{p['N_per_period']}"})


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    floor = 1e-70     # exact zeros (RK4) are drawn at this level on the log axis
    for ax, k in zip(axes, ("p_phi", "p_psi")):
        for m, g in df.groupby("method", sort=False):
            ax.semilogy(g["t"].astype(float), abs(g[k].astype(float)).clip(lower=floor), **STYLE[m])
        name = {"p_phi": r"\varphi", "p_psi": r"\psi"}[k]
        ax.set_title(rf"$|p_{name} - p_{name}(0)| / |p_{name}(0)|$", fontsize=9)
        ax.set_xlabel("t [s]"); ax.grid(alpha=0.3); ax.legend(fontsize=8)
    fig.suptitle(rf"top2025 Fig. 10: conserved momenta, h = $\bar t$/{p['N_per_period']} "
                 f"(exact zeros drawn at {floor:g})", fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="top2025_fig10", paper=PAPER, item="Fig. 10", title="relative errors of p_phi and p_psi",
    runtime="~5 s", params=PARAMS, quick=QUICK, compute=compute, plot=plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
