"""top2025 Fig. 9: relative energy error e_H = (H - H0)/H0 over 10 nutation periods,
h = 0.05 t_bar, for implicit midpoint, RK4 and Simpson.

Paper: the variational integrators do not dissipate energy, Simpson is closest to
zero, RK4 dissipates.  Recorded: max |e_H| per method, the growth factor (max over the
second half / max over the first half) and RK4's final e_H (its sign: negative =
dissipation).

Run: ``mpvi run top2025_fig09`` or ``python reproductions/top2025/top2025_fig09.py``.
"""
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr, sup_norm

from mpvi_papers.top2025._top2025_top import growth, series_reproduction

PARAMS = {"periods": 10, "N_per_period": 20}
QUICK = {"periods": 4}


def summarize(ctx, res):
    values = {}
    for m, (_, e) in res.items():
        values[f"{m} max |e_H|"] = numstr(ctx, sup_norm(e["H"]))
        values[f"{m} e_H growth"] = numstr(ctx, growth(e["H"]))
        values[f"{m} final e_H"] = numstr(ctx, e["H"][-1])
    for m in ("midpoint", "rk4"):
        values[f"simpson/{m} max |e_H| ratio"] = numstr(
            ctx, sup_norm(res["simpson"][1]["H"]) / sup_norm(res[m][1]["H"]))
    return values


def certify_values(ctx, nodes, out):
    """The values of :func:`summarize` enclosed from the certified runs' e_H
    (:func:`mpvi_papers.top2025._top2025_top.certified_loop_runs`)."""
    from mpvi.repro.certified import ball_max
    from mpvi.repro.digits import proven_digits
    values, peak = {}, {}
    for m, nd in nodes.items():
        a = [abs(x) for x in nd["e_H"]]
        n = len(a) // 2
        peak[m] = ball_max(a)
        for key, b in ((f"{m} max |e_H|", peak[m]),
                       (f"{m} e_H growth", ball_max(a[n:]) / ball_max(a[1:n + 1])),
                       (f"{m} final e_H", nd["e_H"][-1])):
            values[key] = proven_digits(out.values[key], b)
    for m in ("midpoint", "rk4"):
        key = f"simpson/{m} max |e_H| ratio"
        values[key] = proven_digits(out.values[key], peak["simpson"] / peak[m])
    return values, "Growths: max |e_H| over the second half / over the first half of the run.", {}


REPRODUCTION = series_reproduction(
    "top2025_fig09", "Fig. 9", "relative energy error over 10 nutation periods", ["H"],
    summarize, panels=[("H", False, r"$e_H = (H - H_0)/H_0$", None),
                       ("H", True, r"$|e_H|$", None)],
    heading="relative energy error over {periods} periods",
    params=PARAMS, quick=QUICK, certify_values=certify_values)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
