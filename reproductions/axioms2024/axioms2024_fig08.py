"""axioms2024 Fig. 8: convergence, max_j |e_j|_2 against h for Newmark, RK4 and Simpson,
with least-squares orders.

The paper decreases h from 0.1 t_bar to 0.001 t_bar but does not state T; we use
T = 1 t_bar and h = t_bar/N for N in PARAMS["N"] (log-spaced from 10 to 1000).  The
error is e(t) = q(t) - q_ex(t) (Sec. 6.4); the p error is kept in the CSV too.
Published claims (text and caption): orders 2, 4, 4.

Run: ``mpvi run axioms2024_fig08`` or ``python reproductions/axioms2024/axioms2024_fig08.py``.
"""
import pandas as pd

from mpvi.repro.certified import least_squares_order
from mpvi.repro.digits import proven_digits
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr

from mpvi_papers.axioms2024._axioms2024 import (CERTIFIED_STATEMENT, PAPER, STYLE, certified_errors,
                                       linear_pendulum_convergence, problem)

PARAMS = {"T_tbar": "1", "N": [10, 16, 25, 40, 63, 100, 160, 250, 400, 630, 1000],
          "methods": ["newmark", "rk4", "simpson"]}
QUICK = {"N": [10, 25, 63, 160, 400, 1000]}


def compute(run):
    ctx, p = run.ctx, run.params
    prob = problem(ctx)
    rows = run.study(linear_pendulum_convergence,
                     {"T_tbar": p["T_tbar"], "N": p["N"], "methods": p["methods"]})
    df = pd.DataFrame({"method": [r["method"] for r in rows],
                       "variable": [r["variable"] for r in rows],
                       "N": [r["N"] for r in rows],
                       "h_tbar": [numstr(ctx, r["h"] / prob.tbar) for r in rows],
                       "error": [numstr(ctx, r["error"]) for r in rows],
                       "order": [numstr(ctx, r["order"]) for r in rows]})
    values = {f"{r['method']} {r['variable']} order": numstr(ctx, r["order"]) for r in rows}
    return Output(tables={"": df}, values=values, extra={"T_tbar_used": p["T_tbar"]})


def certify(run, out):
    """The proven digits of every error and order of ``out`` (``mpvi run --certify``):
    :func:`mpvi_papers.axioms2024._axioms2024.certified_errors` per N (the runs of Table 2's
    certificate at other steps), :func:`mpvi.repro.certified.least_squares_order` per
    method and variable; the columns method, variable and N are inputs, h_tbar = 1/N
    rounded is the run's step."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    ctx, p = run.ctx, run.params
    df = out.tables[""]
    digits = {"error": [], "order": []}
    values, balls, steps = {}, {}, {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        for N in p["N"]:
            run.progress(f"certifying T = {p['T_tbar']} t_bar, N = {N}")
            steps[N], found = certified_errors(ctx, p["T_tbar"], N, p["methods"])
            for m, e in found.items():
                for v in "pq":
                    balls[(m, v, N)] = e[v]
        for m in p["methods"]:
            for v in "pq":
                errs = [balls[(m, v, N)] for N in p["N"]]
                order = least_squares_order([steps[N] for N in p["N"]], errs)
                for N, e in zip(p["N"], errs):
                    row = df[(df["method"] == m) & (df["variable"] == v) & (df["N"] == N)].iloc[0]
                    digits["error"].append(proven_digits(row["error"], e)[0])
                    digits["order"].append(proven_digits(row["order"], order)[0])
                key = f"{m} {v} order"
                values[key] = proven_digits(out.values[key], order)
    inputs = "an input of the study (exact), not a computed number"
    return {"statement": CERTIFIED_STATEMENT, "columns": {"": digits}, "values": values,
            "not_certified": {**{c: inputs for c in ("method", "variable", "N")},
                              "h_tbar": "the step in units of t_bar, 1/N rounded: an input"}}


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for m, g in df[df["variable"] == "q"].groupby("method", sort=False):
        ax.loglog(g["h_tbar"].astype(float), g["error"].astype(float),
                  **dict(STYLE[m], label=f"{STYLE[m]['label']} (order {float(g['order'].iloc[0]):.2f})"))
    ax.set_xlabel(r"$h$ [$\bar t$]")
    ax.set_ylabel(r"$\|e\|_\infty = \max_j |q_j - q_{ex}(t_j)|_2$")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    ax.set_title(f"axioms2024 Fig. 8: convergence (T = {p['T_tbar']} " + r"$\bar t$)", fontsize=10)
    return fig


REPRODUCTION = Reproduction(
    id="axioms2024_fig08", paper=PAPER, item="Fig. 8", title="error against h with fitted orders",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
