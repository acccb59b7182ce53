"""axioms2024 Table 2: ||e||_inf of p and q for T = 1, 10, 100, 1000 t_bar with 10, 20
and 40 meshes per t_bar, and the least-squares convergence orders, for Newmark, RK4
and Simpson.

Conventions (found from the table itself, see ERRATA.md [E1]-[E2]): t_bar = 2 pi/omega0
= 1 s, m1 = 1 kg, g = 9.81 m/s^2, ||e||_inf = max over nodes j = 0..N of the Euclidean
norm of the error vector, N = total number of steps.  The CSV is long format:
T,method,variable,N,error,order (T in t_bar; order repeated on its group's rows).

Run: ``mpvi run axioms2024_tab02`` or ``python reproductions/axioms2024/axioms2024_tab02.py``.
"""
import pandas as pd

from mpvi.repro.certified import least_squares_order
from mpvi.repro.digits import proven_digits
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import Task, convergence_rows, numstr

from mpvi_papers.axioms2024._axioms2024 import (CERTIFIED_STATEMENT, PAPER, STEP_SECONDS, STYLE,
                                       certified_errors,
                                       linear_pendulum_errors, linear_pendulum_grid, problem)

PARAMS = {"T_tbar": [1, 10, 100, 1000], "meshes_per_tbar": [10, 20, 40],
          "methods": ["newmark", "rk4", "simpson"]}
QUICK = {"T_tbar": [1, 10, 100]}


def runs(p):
    """The parameters of :func:`mpvi_papers.axioms2024._axioms2024.linear_pendulum_errors`: one study per span
    and step (all methods against the exact solution computed once on its nodes)."""
    return [{"T_tbar": T, "N": k * T, "methods": p["methods"]}
            for T in p["T_tbar"] for k in p["meshes_per_tbar"]]


def tasks(p):
    """One :class:`mpvi.repro.studies.Task` per span and step."""
    return [Task(linear_pendulum_errors, q, label=f"linear_pendulum_errors T={q['T_tbar']} "
                                                  f"t_bar N={q['N']}",
                 cost=q["N"] * (STEP_SECONDS["exact"] + sum(STEP_SECONDS[m] for m in p["methods"])))
            for q in runs(p)]


def compute(run):
    ctx, p = run.ctx, run.params
    prob = problem(ctx)
    errors = {(q["T_tbar"], q["N"]): run.study(linear_pendulum_errors, q) for q in runs(p)}
    rows = []
    for T in p["T_tbar"]:
        Ns = [k * T for k in p["meshes_per_tbar"]]
        errs = {(m, v): [errors[(T, N)][m][v] for N in Ns] for m in p["methods"] for v in "pq"}
        grid = [linear_pendulum_grid(ctx, prob, T, N) for N in Ns]
        new = convergence_rows(ctx, p["methods"], ["p", "q"], grid, errs)
        rows += [dict(r, T_tbar=T) for r in new]
    df = pd.DataFrame({"T": [r["T_tbar"] for r in rows],
                       "method": [r["method"] for r in rows],
                       "variable": [r["variable"] for r in rows],
                       "N": [r["N"] for r in rows],
                       "error": [numstr(ctx, r["error"]) for r in rows],
                       "order": [numstr(ctx, r["order"]) for r in rows]})
    values = {}
    for r in rows:
        values[f"T={r['T_tbar']} {r['method']} {r['variable']} N={r['N']}"] = numstr(ctx, r["error"])
        values[f"T={r['T_tbar']} {r['method']} {r['variable']} order"] = numstr(ctx, r["order"])
    return Output(tables={"": df}, values=values)


def certify(run, out):
    """The proven digits of every error and order of ``out`` (``mpvi run --certify``):
    :func:`mpvi_papers.axioms2024._axioms2024.certified_errors` per span and step,
    :func:`mpvi.repro.certified.least_squares_order` per group; the columns T, method,
    variable and N are the inputs; the proven digits against time of the longest span's
    runs (T = 1000 t_bar in the full set) are the growth series."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    ctx, p = run.ctx, run.params
    df = out.tables[""]
    digits = {"error": [], "order": []}
    values, growth = {}, {}
    longest = max(p["T_tbar"])
    with arb_precision(ctx.dps + GUARD_DIGITS):
        balls, steps = {}, {}
        for q in runs(p):
            run.progress(f"certifying T = {q['T_tbar']} t_bar, N = {q['N']}")
            steps[(q["T_tbar"], q["N"])], found = certified_errors(
                ctx, q["T_tbar"], q["N"], q["methods"],
                growth=growth if q["T_tbar"] == longest else None)
            for m, e in found.items():
                for v in "pq":
                    balls[(q["T_tbar"], m, v, q["N"])] = e[v]
        for T in p["T_tbar"]:
            Ns = [k * T for k in p["meshes_per_tbar"]]
            hs = [steps[(T, N)] for N in Ns]
            for m in p["methods"]:
                for v in "pq":
                    errs = [balls[(T, m, v, N)] for N in Ns]
                    order = least_squares_order(hs, errs)
                    for N, e in zip(Ns, errs):
                        row = df[(df["T"] == T) & (df["method"] == m) & (df["variable"] == v)
                                 & (df["N"] == N)].iloc[0]
                        d, text = proven_digits(row["error"], e)
                        digits["error"].append(d)
                        values[f"T={T} {m} {v} N={N}"] = (d, text)
                        d, _ = proven_digits(row["order"], order)
                        digits["order"].append(d)
                    key = f"T={T} {m} {v} order"
                    values[key] = proven_digits(out.values[key], order)
    inputs = "an input of the study (exact), not a computed number"
    return {"statement": CERTIFIED_STATEMENT, "columns": {"": digits}, "values": values,
            "not_certified": {c: inputs for c in ("T", "method", "variable", "N")},
            "growth": growth}


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    markers = {1: "o", 10: "s", 100: "^", 1000: "D"}
    for ax, var in zip(axes, "pq"):
        for (T, m), g in df[df["variable"] == var].groupby(["T", "method"], sort=False):
            st = STYLE[m]
            ax.loglog(g["N"] / T, g["error"].astype(float), color=st["color"],
                      marker=markers.get(T, "o"), ms=4, lw=0.9,
                      label=f"{st['label']}, T = {T}" + r" $\bar t$")
        ax.set_xlabel(r"meshes per $\bar t$")
        ax.set_title(f"$\\|e\\|_\\infty$ of {var}", fontsize=9)
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel(r"$\max_j |e_j|_2$")
    # the legend below both panels: its twelve entries cover some points wherever inside
    fig.legend(*axes[1].get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=7,
               frameon=False)
    fig.suptitle("axioms2024 Table 2: error norms against simulation length", fontsize=10)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


REPRODUCTION = Reproduction(
    id="axioms2024_tab02", paper=PAPER, item="Table 2",
    title="error norms and orders for T = 1..1000 periods",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, tasks=tasks, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
