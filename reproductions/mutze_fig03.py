"""mutze Fig. 3: phase error over 20 oscillations of the anti-damped oscillator (Sec. 7),
in the interaction picture (eq. 92), for every method the text compares (see
reproductions/_mutze_oscillator.py), and -- beyond the figure -- the phase error after
20 periods as a function of g and the g at which it vanishes.

Values compared with the text (reproductions/published/mutze_fig03.csv): the direct
midpoint method's 11.5 degrees over 20 oscillations (abstract); g = 0.68 "makes the phase
error nearly vanish" and which convention for g that means (ERRATA [E64]); the midpoint
variation method's second-worst phase error; RK2 "approximately 10 times larger"; zero
iterations more accurate than RK2.

Run: ``mpvi run mutze_fig03`` or ``python reproductions/mutze_fig03.py``.
"""
import pandas as pd

from mpvi.repro.run import Output, Reproduction, script_main
from mpvi.repro.studies import numstr

from mpvi_papers._mutze_oscillator import (METHODS, PAPER, PARAMS, QUICK, STYLE, g_scan, long_table,
                                             plot_errors, sec7_errors, sensitivity)
from mpvi_papers.mutze_fig02 import CONSIDERED, worst_rank


def compute(run):
    ctx, p = run.ctx, run.params
    res = run.study(sec7_errors, {k: v for k, v in p.items() if k != "g_scan"})
    scan = run.study(g_scan, p)
    final = {name: res[name]["phase"][-1] for name in METHODS}
    values = {}
    for name in METHODS:
        values[f"final phase error {name}"] = numstr(ctx, final[name])
    for name in ("g=0.68 (eq. 72)", "g=0.34 (0.68 halved)"):
        values[f"|final phase error| {name}"] = numstr(ctx, abs(final[name]))
    values["g with zero final phase error (eq. 72)"] = numstr(ctx, scan["g_zero"])
    values["2 g with zero final phase error (g a tau^2/2 convention)"] = numstr(ctx, 2 * scan["g_zero"])
    values["phase-error rank of midpoint_variation (1 = worst)"] = str(
        worst_rank({n: abs(final[n]) for n in CONSIDERED}, "midpoint_variation"))
    values["rk2 / midpoint_variation |final phase error|"] = numstr(ctx, abs(final["rk2"] / final["midpoint_variation"]))
    values["rk2 / direct_midpoint_a0 |final phase error|"] = numstr(ctx, abs(final["rk2"] / final["direct_midpoint_a0"]))
    gs = pd.DataFrame({"g": [numstr(ctx, g) for g in scan["g"]],
                       "final_phase_error_deg": [numstr(ctx, x) for x in scan["phase"]]})
    sens = pd.DataFrame([{k: (numstr(ctx, v) if k not in ("period", "x0", "v0") else v) for k, v in row.items()}
                         for row in run.study(sensitivity, {k: v for k, v in p.items() if k != "g_scan"})])
    return Output(tables={"": long_table(ctx, res), "g_scan": gs, "sensitivity": sens}, values=values)


def plot(out, p):
    fig = plot_errors(out, p, "phase_error_deg", "phase error (degrees)",
                      f"Phase error over {p['periods']} oscillations (mutze Fig. 3; eq. 92)")
    ax = fig.axes[0]
    fig.set_size_inches(12, 5)
    ax.set_position([0.06, 0.11, 0.56, 0.8])
    ax2 = fig.add_axes([0.69, 0.11, 0.29, 0.8])
    gs = out.tables["g_scan"]
    ax2.plot(pd.to_numeric(gs["g"]), pd.to_numeric(gs["final_phase_error_deg"]), "o-", ms=3,
             color=STYLE["g=0.68 (eq. 72)"]["color"])
    g0 = float(out.values["g with zero final phase error (eq. 72)"])
    ax2.axhline(0, color="0.5", lw=0.8)
    ax2.axvline(g0, color="tab:cyan", ls="--", lw=1, label=f"zero at g = {g0:.4f} (2g = {2 * g0:.4f})")
    ax2.axvline(0.68, color="tab:blue", ls=":", lw=1, label="g = 0.68")
    ax2.set_xlabel("g in eq. (72)")
    ax2.set_ylabel(f"phase error after {p['periods']} periods (degrees)")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    ax2.set_title("phase error against g (exact g-family)", fontsize=10)
    return fig


REPRODUCTION = Reproduction(
    id="mutze_fig03", paper=PAPER, item="Fig. 3",
    title="phase error of the anti-damped oscillator over 20 periods; the zero-phase g",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
