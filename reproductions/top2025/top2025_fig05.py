"""top2025 Fig. 5: relative energy error e_H(t) = (H(p_n, q_n) - H_0)/H_0 of the double
pendulum over 10 s at h = 0.1 s, implicit midpoint, RK4 and Simpson.

What the paper shows (Sec. 3.2.2, Fig. 5 caption): "RK4's error grows with time. The
symplectic methods (Implicit midpoint and Simpson) do not artificially dissipate
energy", "with the Simpson approximation remaining closest to zero".

Parameters: Table 1 data (l = g/omega0^2, ERRATA [E13]), 64 digits, T = 10 s and
h = 0.1 s (the window and step of Figs. 2-3; the paper states 10 s, not h).  The run
takes about 2 s, so the quick set is the full set.  The CSV holds the signed e_H at
every node; the plot shows it on a linear scale (as the paper) and |e_H| on a log scale.

Compared (reproductions/top2025/published/top2025_pendulum.csv), with growth = max |e_H| over
the second half of the run / max over the first half (nodes 1..N/2 and N/2..N; a bounded
oscillating error gives about 1, an error growing linearly in t gives 2):
* RK4 grows: growth >= 1.5; midpoint and Simpson do not: growth <= 1.5;
* Simpson closest to zero: max |e_H| of Simpson / that of midpoint and of RK4 < 1.
Also recorded: the max |e_H| of each method and the mean of e_H over the second half
(H_0 < 0 here, so e_H > 0 means energy lost: RK4 dissipates).

Run: ``mpvi run top2025_fig05`` or ``python reproductions/top2025/top2025_fig05.py``.
"""
import pandas as pd

from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import energy_error, numstr

from mpvi_papers.top2025._top2025 import METHODS, PAPER, STYLE
from mpvi_papers.top2025._top2025_pendulum import (ENERGY_STATEMENT, certified_energy_errors,
                                            double_pendulum, run_methods)

PARAMS = {"T": "10", "h": "0.1", "methods": list(METHODS)}
QUICK = {}


def compute(run):
    ctx, p = run.ctx, run.params
    prob = double_pendulum(ctx)
    sols = run_methods(run, prob, p["methods"], p["T"], p["h"])
    frames, values, peak = [], {}, {}
    for m, sol in sols.items():
        e = energy_error(prob.system, sol)
        frames.append(pd.DataFrame({"t": [numstr(ctx, t) for t in sol.t], "method": m,
                                    "e_H": [numstr(ctx, x) for x in e]}))
        a = [abs(x) for x in e]
        half = len(a) // 2
        peak[m] = max(a)
        values[f"{m} max energy error"] = numstr(ctx, peak[m])
        values[f"{m} energy growth"] = numstr(ctx, max(a[half:]) / max(a[1:half + 1]))
        values[f"{m} mean energy error second half"] = numstr(ctx, ctx.fsum(e[half:]) / (len(e) - half))
    if "simpson" in peak:
        for m in peak:
            if m != "simpson":
                values[f"simpson/{m} max energy error"] = numstr(ctx, peak["simpson"] / peak[m])
    return Output(tables={"": pd.concat(frames, ignore_index=True)}, values=values,
                  extra={"T_s": p["T"], "h_s": p["h"]})


def certify(run, out):
    """The proven digits of e_H at every node and of every value of ``out`` (``mpvi run
    --certify``): each method's run certified and e_H enclosed on it
    (:func:`mpvi_papers.top2025._top2025_pendulum.certified_energy_errors`); maxima, growths,
    means and ratios from those balls.  The rows at t = 0 are 0 by definition; t and
    method are inputs."""
    from flint import arb

    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.certified import ball_max
    from mpvi.repro.digits import proven_digits
    from mpvi.repro.studies import steps
    ctx, p = run.ctx, run.params
    df = out.tables[""]
    digits, values, peak = [], {}, {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        for m in p["methods"]:
            run.progress(f"certifying {m}: h = {p['h']} s over {p['T']} s")
            _, e = certified_energy_errors(ctx, m, p["h"], steps(p["T"], p["h"]),
                                           f"top2025 Fig. 5, {m}")
            rows = df[df["method"] == m]["e_H"].tolist()
            digits += [proven_digits(x, b)[0] for x, b in zip(rows[1:], e[1:])]
            a = [abs(x) for x in e]
            half = len(a) // 2
            peak[m] = ball_max(a)
            for key, ball in ((f"{m} max energy error", peak[m]),
                              (f"{m} energy growth", ball_max(a[half:]) / ball_max(a[1:half + 1])),
                              (f"{m} mean energy error second half",
                               sum(e[half:], arb(0)) / (len(e) - half))):
                values[key] = proven_digits(out.values[key], ball)
        if "simpson" in peak:
            for m in peak:
                if m != "simpson":
                    key = f"simpson/{m} max energy error"
                    values[key] = proven_digits(out.values[key], peak["simpson"] / peak[m])
    inputs = "an input of the study (exact), not a computed number"
    return {"statement": ENERGY_STATEMENT + "  The rows at t = 0 are 0 by definition.",
            "columns": {"": {"e_H": digits}}, "values": values,
            "not_certified": {"t": "the node time n h, h = 0.1 rounded: an input",
                              "method": inputs}}


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, (ax, axl) = plt.subplots(2, 1, figsize=(7.5, 5.6), sharex=True)
    for m, g in df.groupby("method", sort=False):
        t, e = g["t"].astype(float), g["e_H"].astype(float)
        ax.plot(t, e, **dict(STYLE[m], lw=1.1))
        axl.semilogy(t[1:], e[1:].abs().clip(lower=1e-70), **dict(STYLE[m], lw=1.1))
    ax.axhline(0, color="0.6", lw=0.8)
    ax.set_ylabel(r"$e_H = (H_n - H_0)/H_0$")
    axl.set_ylabel(r"$|e_H|$")
    axl.set_xlabel("$t$ [s]")
    axl.set_xlim(0, float(p["T"]))
    for a in (ax, axl):
        a.grid(alpha=0.3, which="both")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8, ncol=3, frameon=False)
    fig.suptitle(f"top2025 Fig. 5: relative energy error, double pendulum, h = {p['h']} s",
                 fontsize=10, y=1.0)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="top2025_fig05", paper=PAPER, item="Fig. 5",
    title="relative energy error over 10 s, h = 0.1 s",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
