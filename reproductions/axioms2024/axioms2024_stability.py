"""Beyond axioms2024: the exact linear stability set of Simpson's scheme on the scalar
oscillator q'' + omega^2 q = 0 for omega h in (0, 6].

The paper proves only the sufficient condition omega_max h < 2 sqrt 2 (eq. 40).  For
the scalar oscillator Phi = A^-1 B has det Phi = 1 and tr Phi = 2 (X - Y)/(X + Y), with
X = 2/h - h omega^2/6 and Y = h omega^2/3 (1/L + 1/2), L = 1 - (omega h)^2/8; so it is
stable iff X Y > 0, i.e. omega h in (0, 2 sqrt 2) U (2 sqrt 3, 2 sqrt 6).  This script
measures the spectral radius of the one-step matrix on a fine grid and reports the
stable intervals it finds, next to Newmark and RK4.

Run: ``mpvi run axioms2024_stability`` or ``python reproductions/axioms2024/axioms2024_stability.py``.
"""
from fractions import Fraction

import pandas as pd

from mpvi import stability_scan
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr

from mpvi_papers.axioms2024._axioms2024 import PAPER, STYLE

PARAMS = {"omega_h_max": 6, "points": 1200, "methods": ["simpson", "newmark", "rk4"]}
QUICK = {"points": 300}


def intervals(rows):
    """Maximal runs of consecutive stable grid points, as (first, last) pairs."""
    runs, start, prev = [], None, None
    for wh, _, _, ok in rows:
        if ok and start is None:
            start = wh
        if not ok and start is not None:
            runs.append((start, prev))
            start = None
        prev = wh
    if start is not None:
        runs.append((start, prev))
    return runs


def compute(run):
    ctx, p = run.ctx, run.params
    # grid avoids the singular point omega h = 2 sqrt 2 (irrational, never on a rational grid)
    grid = [Fraction(p["omega_h_max"] * k, p["points"]) for k in range(1, p["points"] + 1)]
    frames, values = [], {}
    for m in p["methods"]:
        run.progress(f"{m}: spectral radius at {len(grid)} values of omega h")
        rows = stability_scan(m, grid, ctx)
        frames.append(pd.DataFrame({"method": m, "omega_h": [numstr(ctx, r[0]) for r in rows],
                                    "spectral_radius": [numstr(ctx, r[1]) for r in rows],
                                    "half_trace": [numstr(ctx, r[2]) for r in rows],
                                    "stable": [r[3] for r in rows]}))
        for k, (a, b) in enumerate(intervals(rows)):
            values[f"{m} stable interval {k + 1}"] = f"{ctx.to_str(a, 8)} .. {ctx.to_str(b, 8)}"
    return Output(tables={"": pd.concat(frames, ignore_index=True)},
                  extra={"stable_intervals_found_on_grid": values})


def plot(out, p):
    import matplotlib.pyplot as plt
    import numpy as np
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for m, g in df.groupby("method", sort=False):
        ax.semilogy(g["omega_h"].astype(float), g["spectral_radius"].astype(float),
                    color=STYLE[m]["color"], lw=1.1, label=STYLE[m]["label"])
    for x, lab in ((2 * np.sqrt(2), r"$2\sqrt{2}$"), (2 * np.sqrt(3), r"$2\sqrt{3}$"),
                   (2 * np.sqrt(6), r"$2\sqrt{6}$")):
        ax.axvline(x, color="gray", ls=":", lw=0.8)
        ax.text(x, 1.02, lab, transform=ax.get_xaxis_transform(), ha="center", fontsize=8)
    ax.set_xlabel(r"$\omega h$")
    ax.set_ylabel(r"spectral radius of $\Phi(\omega h)$")
    ax.set_xlim(0, p["omega_h_max"])
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    ax.set_title("Exact stability set on the scalar oscillator (beyond axioms2024 eq. 40)",
                 fontsize=10, pad=14)
    return fig


REPRODUCTION = Reproduction(
    id="axioms2024_stability", paper=PAPER, item="eq. (40)",
    title="exact stability set of Simpson's scheme, omega h in (0, 6]",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, published=False)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
