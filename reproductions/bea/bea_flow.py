"""Backward error analysis, modified flows (beyond the four papers): the numerical solution
and the exact flow of the truncated modified equation agree to O(h^s), s the first power
of h left out, over a fixed time.

For the midpoint, Simpson and 4-point Lobatto variational integrators, Mutze's direct
midpoint method and classical RK4 on the pendulum H = p^2/2 - cos q from (q, p) = (1, 0):
the modified equation y' = f_1 + h f_2 + ... + h^r f_(r+1) is derived exactly by
:func:`mpvi.modified_equation` (each method's own declaration), h is set to the step, and
its exact flow over [0, T] is computed by Gragg-Bulirsch-Stoer (order 2 ``levels``,
checked by halving its step); the gap is max |y_N - z(T)| over the state components.

Backward error analysis (Hairer, Lubich & Wanner, *Geometric Numerical Integration*,
Sec. IX.1) says that one step of the method and one step of the truncated flow differ by
O(h^(s+1)), s the first power of h whose term f_(s+1) is not zero beyond r, so the gap
over a fixed T is O(h^s): s = r + 1 for RK4, r + 2 for the symmetric methods (their odd
terms vanish).  The fitted orders are least-squares slopes over the steps.

Run: ``mpvi run bea_flow`` or ``python reproductions/bea/bea_flow.py``.
"""
from fractions import Fraction

import pandas as pd

from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import Task, numstr, steps

from mpvi_papers.bea._bea import METHODS, PAPER, asymptotic_order, modified_flow_gap, roundoff_threshold

CASES = {"midpoint": [2, 4, 6], "simpson": [4, 6, 8], "lobatto": [6, 8], "mutze": [2, 4, 6],
         "rk4": [4, 5, 6]}
PARAMS = {"q0": "1", "p0": "0", "T": "1", "steps": ["1/10", "1/20", "1/40", "1/80"],
          "gbs_h": "1/16", "levels": 16, "cases": CASES}
QUICK = {"steps": ["1/10", "1/20", "1/40"], "levels": 12,
         "cases": {"midpoint": [2, 4], "simpson": [4], "rk4": [4, 5]}}
RK4 = ("classical RK4", 4, {})


def _info(method):
    return METHODS.get(method, RK4)


def _params(p, method, h):
    return {"method": method, "h": h, "T": p["T"], "q0": p["q0"], "p0": p["p0"],
            "truncations": p["cases"][method],
            "gbs_h": p["gbs_h"], "levels": p["levels"]}


def tasks(p):
    return [Task(modified_flow_gap, _params(p, m, h), label=f"bea flow {m} h={h}",
                 cost=2 + steps(p["T"], p["gbs_h"]) * p["levels"] ** 2 * 2e-4)
            for m in p["cases"] for h in p["steps"]]


def compute(run):
    ctx, p = run.ctx, run.params
    rows, values = [], {}
    threshold = roundoff_threshold(ctx.dps)
    for m, rs in p["cases"].items():
        res = [run.study(modified_flow_gap, _params(p, m, h)) for h in p["steps"]]
        expected = res[0]["first_omitted"]
        for r in rs:
            gaps = [x["gaps"][str(r)] for x in res]
            checks = [x["checks"][str(r)] for x in res]
            slope, _ = asymptotic_order(p["steps"], [_mp(ctx, g) for g in gaps], threshold,
                                        points=len(p["steps"]))
            s = expected[str(r)]
            for h, g, c in zip(p["steps"], gaps, checks):
                rows.append({"method": m, "through_power": r, "h": h, "gap": numstr(ctx, g),
                             "gbs_check": numstr(ctx, c), "expected_order": s,
                             "order": "" if slope is None else f"{slope:.3f}"})
            if slope is not None:
                values[f"{m} through h^{r}: order of the gap (expected {s})"] = f"{slope:.3f}"
        worst = max(c / g for x in res for g, c in zip(x["gaps"].values(), x["checks"].values())
                    if g != 0)
        values[f"{m} largest GBS check / gap"] = numstr(ctx, worst)
    return Output(tables={"": pd.DataFrame(rows)}, values=values)


def _mp(ctx, x):
    import mpmath
    return mpmath.mpf(ctx.to_str(x))


def plot(out, p):
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter
    df = out.tables[""]
    methods = list(dict.fromkeys(df["method"]))
    fig, axes = plt.subplots(1, len(methods), figsize=(3.6 * len(methods), 3.8), squeeze=False)
    for ax, m in zip(axes[0], methods):
        sub = df[df["method"] == m]
        for r, grp in sub.groupby("through_power"):
            hs = [float(Fraction(h)) for h in grp["h"]]
            order = grp["order"].iloc[0]
            ax.loglog(hs, [float(g) for g in grp["gap"]], marker="o", ms=3, lw=1,
                      label=f"through h^{r}: {float(order):.2f} (exp. {grp['expected_order'].iloc[0]})")
            ax.loglog(hs, [max(float(c), 1e-300) for c in grp["gbs_check"]], ls=":", lw=0.8,
                      color="0.6")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(_info(m)[0], fontsize=9)
        ax.set_xlabel("h")
        ax.set_ylabel(f"|y_N - z(T)|, T = {p['T']}")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6)
    fig.suptitle("Pendulum: the numerical solution against the exact flow of its truncated "
                 "modified equation (dotted: GBS reference check)", fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="bea_flow", paper=PAPER, item="modified flows",
    title="the numerical solution follows the exact flow of its truncated modified equation "
          "to O(h^s)", params=PARAMS, quick=QUICK, compute=compute,
    plot=plot, tasks=tasks, published=False)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
