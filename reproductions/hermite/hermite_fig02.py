"""hermite Fig. 2: linear stability of the one-step methods -- the spectral radius of the
amplification matrix A(z), z = omega dt (eq. 35), against z, over ranges that show every
stable interval (n = 2: z in (0, 9]; beyond the paper, n = 3: z in (0, 21]).

rho(z) is evaluated at the context precision from the exact A(z) that mpvi derives from
each method's equations (:mod:`mpvi.analysis.symbolic`, the same derivation as hermite_stability):
with det A = 1, rho = 1 where |tr A| <= 2 and rho = |tr A|/2 + sqrt(tr^2/4 - 1) otherwise.
As an independent check, rho is also measured from the numerical one-step matrix of the
registered 64-digit method at every ``check_every``-th grid point
(:func:`mpvi.analysis.measures.stability_scan`); the largest difference is recorded
(``... max |rho derived - rho numerical|``).  The paper's Fig. 2 plots the eigenvalues;
which stable set it shows beyond the first limits is not stated (ERRATA [E61]).

Run: ``mpvi run hermite_fig02`` or ``python reproductions/hermite/hermite_fig02.py``.
"""
from fractions import Fraction

import pandas as pd

from mpvi.analysis.measures import stability_scan
from mpvi.compiled.codegen import compile_exprs
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr
from mpvi.analysis.symbolic import Z

from mpvi_papers.hermite._hermite import PAPER, STYLE
from mpvi_papers.hermite._hermite_analysis import ANALYSED, trace_det

PARAMS = {"panels": [{"methods": ["hermite_galerkin", "hermite_variational"], "z_max": 9, "points": 900},
                     {"methods": ["hermite_galerkin_n3", "hermite_variational_n3"], "z_max": 21, "points": 1050}],
          "check_every": 30}
QUICK = {"panels": [{"methods": ["hermite_galerkin", "hermite_variational"], "z_max": 9, "points": 180},
                    {"methods": ["hermite_galerkin_n3", "hermite_variational_n3"], "z_max": 21, "points": 210}],
         "check_every": 30}


def compute(run):
    ctx, p = run.ctx, run.params
    rows, values = [], {}
    for panel in p["panels"]:
        grid = [Fraction(panel["z_max"] * k, panel["points"]) for k in range(1, panel["points"] + 1)]
        for name in panel["methods"]:
            run.progress(f"{name}: spectral radius at {len(grid)} values of z")
            tr_f = compile_exprs([Z], list(trace_det(name)), ctx)
            _, scheme, options, _ = ANALYSED[name]
            check = grid[p["check_every"] - 1::p["check_every"]]
            scan = {z: r[1] for z, r in zip(check, stability_scan(scheme, check, ctx, **options))}
            worst = ctx.zero
            for z in grid:
                tr, det = tr_f(ctx.num(z))
                half = abs(tr) / 2
                rho = ctx.sqrt(det) if half <= 1 else half + ctx.sqrt(half * half - det)
                rows.append({"method": name, "z": numstr(ctx, ctx.num(z)), "spectral_radius": numstr(ctx, rho),
                             "stable": bool(half < 1)})
                if z in scan:
                    worst = max(worst, abs(rho - scan[z]))
            values[f"{name} max |rho derived - rho numerical|"] = numstr(ctx, worst)
    return Output(tables={"": pd.DataFrame(rows)}, values=values)


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, axes = plt.subplots(1, len(p["panels"]), figsize=(12, 4.2))
    for ax, panel in zip(axes, p["panels"]):
        for name in panel["methods"]:
            g = df[df["method"] == name]
            st = STYLE[name.replace("_n3", "")]
            ax.plot(g["z"].astype(float), g["spectral_radius"].astype(float), color=st["color"],
                    ls=st["ls"], lw=1.3, label=ANALYSED[name][3])
        ax.set_yscale("log")
        ax.set_xlim(0, panel["z_max"])
        ax.set_xlabel(r"$z = \omega\,\Delta t$")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    axes[0].set_ylabel(r"spectral radius of $A(z)$")
    axes[0].set_title("cubic Hermite (n = 2): hermite Fig. 2", fontsize=9)
    axes[1].set_title("n = 3 (beyond the paper)", fontsize=9)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="hermite_fig02", paper=PAPER, item="Fig. 2",
    title="spectral radius of A(z) of both one-step methods (n = 2, 3)",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, published=False)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
