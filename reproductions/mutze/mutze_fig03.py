"""mutze Fig. 3: phase error over 20 oscillations of the anti-damped oscillator (Sec. 7),
in the interaction picture (eq. 92), for every method the text compares (see
reproductions/mutze/_mutze_oscillator.py), and -- beyond the figure -- the phase error after
20 periods as a function of g and the g at which it vanishes.

Values compared with the text (reproductions/mutze/published/mutze_fig03.csv): the direct
midpoint method's 11.5 degrees over 20 oscillations (abstract); g = 0.68 "makes the phase
error nearly vanish" and which convention for g that means (ERRATA [E64]); the midpoint
variation method's second-worst phase error; RK2 "approximately 10 times larger"; zero
iterations more accurate than RK2.

Run: ``mpvi run mutze_fig03`` or ``python reproductions/mutze/mutze_fig03.py``.
"""
import pandas as pd

from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr

from mpvi_papers.mutze._mutze_oscillator import (METHODS, PAPER, PARAMS, QUICK, STYLE, g_scan, long_table,
                                             plot_errors, sec7_errors, sensitivity)
from mpvi_papers.mutze.mutze_fig02 import CONSIDERED, worst_rank


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


def certify(run, out):
    """The proven digits of the values and tables (``mpvi run --certify``): every
    method's exact discrete trajectory walked on balls from the exact problem
    (:class:`mpvi_papers.mutze._mutze_oscillator.BallOscillator`), the zero-phase g by a proven
    sign change (:func:`mpvi_papers.mutze._mutze_oscillator.zero_phase_enclosure`)."""
    from fractions import Fraction

    from flint import arb

    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.digits import proven_digits
    from mpvi_papers.mutze._mutze_certify import exact
    from mpvi_papers.mutze._mutze_oscillator import (CERTIFIED_STATEMENT, SENSITIVITY, BallOscillator,
                                                certified_long_table, certified_walks,
                                                monotone_phase, proven_rank,
                                                zero_phase_enclosure)
    p, v = run.params, out.values
    values, not_certified = {}, {}
    scan = p["g_scan"]
    base = {k: val for k, val in p.items() if k != "g_scan"}
    with arb_precision(run.ctx.dps + GUARD_DIGITS):
        osc, walks = certified_walks(base)
        final = {name: walks[name][1][-1] for name in METHODS}
        for name in METHODS:
            values[f"final phase error {name}"] = proven_digits(
                v[f"final phase error {name}"], final[name])
        for name in ("g=0.68 (eq. 72)", "g=0.34 (0.68 halved)"):
            values[f"|final phase error| {name}"] = proven_digits(
                v[f"|final phase error| {name}"], abs(final[name]))
        run.progress("certify: the zero-phase g (a proven sign change, monotone phase)")
        g0 = zero_phase_enclosure(osc, v["g with zero final phase error (eq. 72)"],
                                  run.ctx.dps - 4)
        try:
            sign = monotone_phase(osc, scan["start"], scan["stop"])
            statement = CERTIFIED_STATEMENT + (
                f"  It is the only zero in the scanned range [{scan['start']}, "
                f"{scan['stop']}]: there the final phase error is proven strictly "
                f"{'increasing' if sign > 0 else 'decreasing'} in g (its g-derivative "
                "Im(a_n'/a_n), a_n the final amplitude and a_n' from the block matrix "
                "[[M, M'], [0, M]]^n, of one proven sign on every subinterval).")
        except ArithmeticError as exc:
            statement = CERTIFIED_STATEMENT + f"  That it is the only zero is not proven ({exc})."
        values["g with zero final phase error (eq. 72)"] = proven_digits(
            v["g with zero final phase error (eq. 72)"], g0)
        key = "2 g with zero final phase error (g a tau^2/2 convention)"
        values[key] = proven_digits(v[key], 2 * g0)
        key = "phase-error rank of midpoint_variation (1 = worst)"
        rank = proven_rank({n: abs(final[n]) for n in CONSIDERED}, "midpoint_variation")
        if rank is None:
            not_certified[key] = "the balls of the phase errors overlap: the rank is not decided"
        else:
            values[key] = proven_digits(v[key], arb(rank))
        key = "rk2 / midpoint_variation |final phase error|"
        values[key] = proven_digits(v[key], abs(final["rk2"] / final["midpoint_variation"]))
        key = "rk2 / direct_midpoint_a0 |final phase error|"
        values[key] = proven_digits(v[key], abs(final["rk2"] / final["direct_midpoint_a0"]))
        columns = {"": certified_long_table(out.tables[""], osc, walks)}
        run.progress("certify: the g scan")
        gs = out.tables["g_scan"]
        lo, hi, count = Fraction(scan["start"]), Fraction(scan["stop"]), scan["count"]
        grid = [lo + (hi - lo) * i / (count - 1) for i in range(count)]
        columns["g_scan"] = {"g": [], "final_phase_error_deg": []}
        for g, row in zip(grid, gs.itertuples(index=False)):
            if g != 0:
                columns["g_scan"]["g"].append(proven_digits(row.g, exact(g))[0])
            columns["g_scan"]["final_phase_error_deg"].append(
                proven_digits(row.final_phase_error_deg, osc.final_phase(exact(g)))[0])
        run.progress("certify: the sensitivity table")
        columns["sensitivity"] = {"direct_midpoint": [], "direct_midpoint_simple1": [],
                                  "g_zero": []}
        for (period, x0, v0), row in zip(SENSITIVITY, out.tables["sensitivity"].itertuples(
                index=False)):
            case = BallOscillator({**base, "period": period, "x0": x0, "v0": v0})
            for name in ("direct_midpoint", "direct_midpoint_simple1"):
                columns["sensitivity"][name].append(proven_digits(
                    getattr(row, name), case.errors(case.matrix(name))[1][-1])[0])
            gz = zero_phase_enclosure(case, row.g_zero, run.ctx.dps - 4)
            columns["sensitivity"]["g_zero"].append(proven_digits(row.g_zero, gz)[0])
    for c in ("method", "sensitivity.period", "sensitivity.x0", "sensitivity.v0"):
        not_certified[c] = "an input of the experiment, not a computed number"
    return {"statement": statement, "columns": columns, "values": values,
            "not_certified": not_certified}


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
    # the legend below the axes: inside, its box crosses both vertical lines
    ax2.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)
    ax2.set_title("phase error against g (exact g-family)", fontsize=10)
    return fig


REPRODUCTION = Reproduction(
    id="mutze_fig03", paper=PAPER, item="Fig. 3",
    title="phase error of the anti-damped oscillator over 20 periods; the zero-phase g",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
