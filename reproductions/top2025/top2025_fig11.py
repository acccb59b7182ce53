"""top2025 Fig. 11: nutation and energy error norms against h over one nutation period,
with least-squares convergence orders (paper: RK4 4, implicit midpoint 2, Simpson 4).

||e_theta||_inf = sup_n |theta_n - theta_ex,n| / |theta_ex,n| and
||e_H||_inf = sup_n |H_n - H0| / |H0| (Sec. 4.2.2), T = 1 t_bar, h = t_bar/N for N in
PARAMS["N"] (the paper does not print its range; ours spans 0.05 t_bar down to
t_bar/1280, a factor sqrt 2 apart).  Orders are fitted over all h and, separately, over
h <= t_bar/FIT_FROM_N (the asymptotic range; the large-h errors of RK4 and of the
midpoint's relative nutation error are not yet in it, see the CSV).

``mpvi run top2025_fig11 --certify`` proves every error norm and order (:func:`certify`,
:data:`mpvi_papers.top2025._top2025_top.CERTIFIED_STATEMENT`).

Run: ``mpvi run top2025_fig11`` or ``python reproductions/top2025/top2025_fig11.py``.
"""
import pandas as pd

from mpvi.analysis.measures import fit_order
from mpvi.repro.certified import least_squares_order
from mpvi.repro.digits import proven_digits
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr, sup_norm

from mpvi_papers.top2025._top2025 import METHODS, PAPER, STYLE
from mpvi_papers.top2025._top2025_top import CERTIFIED_STATEMENT, LoopingTop, certified_top_errors

PARAMS = {"N": [20, 28, 40, 57, 80, 113, 160, 226, 320, 453, 640, 905, 1280], "fit_from_N": 80}
QUICK = {"N": [20, 40, 80, 160, 320]}


def compute(run):
    ctx, p = run.ctx, run.params
    lt = LoopingTop(ctx)
    rows = []
    for m in METHODS:
        for N in p["N"]:
            run.progress(f"{m}: one period, h = t_bar/{N}")
            sol = run.kept[(m, N)] = lt.run(run, m, N, 1)   # certified as they are
            e = lt.errors(sol)
            rows.append({"method": m, "N": N, "theta": sup_norm(e["theta"]), "H": sup_norm(e["H"])})
    values, orders = {}, []
    for m in METHODS:
        mine = [r for r in rows if r["method"] == m]
        for var in ("theta", "H"):
            hs = [lt.tbar / r["N"] for r in mine]
            o_all = fit_order(ctx, hs, [r[var] for r in mine])
            tail = [(h, r[var]) for h, r in zip(hs, mine) if r["N"] >= p["fit_from_N"]]
            o_tail = fit_order(ctx, [h for h, _ in tail], [e for _, e in tail])
            values[f"{m} {var} order"] = numstr(ctx, o_tail)
            values[f"{m} {var} order all h"] = numstr(ctx, o_all)
            orders.append((m, var, o_all, o_tail))
    df = pd.DataFrame({"method": [r["method"] for r in rows for _ in (0, 1)],
                       "variable": [v for r in rows for v in ("theta", "H")],
                       "N": [r["N"] for r in rows for _ in (0, 1)],
                       "h_tbar": [numstr(ctx, ctx.one / r["N"]) for r in rows for _ in (0, 1)],
                       "error": [numstr(ctx, r[v]) for r in rows for v in ("theta", "H")]})
    order_df = pd.DataFrame({"method": [o[0] for o in orders], "variable": [o[1] for o in orders],
                             "order_all_h": [numstr(ctx, o[2]) for o in orders],
                             f"order_N_ge_{p['fit_from_N']}": [numstr(ctx, o[3]) for o in orders]})
    return Output(tables={"": df, "orders": order_df}, values=values,
                  extra={"T_tbar": 1, "tbar_s": numstr(ctx, lt.tbar)})


def certify(run, out):
    """The proven digits of every error norm and order of ``out`` (``mpvi run --certify``):
    :func:`mpvi_papers.top2025._top2025_top.certified_top_errors` per step (one period),
    :func:`mpvi.repro.certified.least_squares_order` over all h and over the tail; the
    columns method, variable, N and h_tbar (= 1/N) are the inputs."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    ctx, p = run.ctx, run.params
    table, orders = out.tables[""], out.tables["orders"]
    tail = f"order_N_ge_{p['fit_from_N']}"
    digits = {"": {"error": []}, "orders": {"order_all_h": [], tail: []}}
    values = {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        balls, steps = {}, {}
        for N in p["N"]:
            run.progress(f"certifying one period, h = t_bar/{N}")
            steps[N], found = certified_top_errors(ctx, N, 1, METHODS, solutions=run.kept)
            for m, e in found.items():
                for var in ("theta", "H"):
                    balls[(m, var, N)] = e[var]
        for m in METHODS:
            for var in ("theta", "H"):
                for N in p["N"]:
                    row = table[(table["method"] == m) & (table["variable"] == var)
                                & (table["N"] == N)].iloc[0]
                    digits[""]["error"].append(proven_digits(row["error"], balls[(m, var, N)])[0])
                fits = {"order_all_h": p["N"], tail: [N for N in p["N"] if N >= p["fit_from_N"]]}
                row = orders[(orders["method"] == m) & (orders["variable"] == var)].iloc[0]
                for column, Ns in fits.items():
                    order = least_squares_order([steps[N] for N in Ns],
                                                [balls[(m, var, N)] for N in Ns])
                    digits["orders"][column].append(proven_digits(row[column], order)[0])
                    key = f"{m} {var} order" + (" all h" if column == "order_all_h" else "")
                    values[key] = proven_digits(out.values[key], order)
    inputs = "an input of the study (exact), not a computed number"
    step = "the step in units of t_bar, 1/N: an input of the study, not a computed number"
    return {"statement": CERTIFIED_STATEMENT, "columns": digits, "values": values,
            "not_certified": {**{c: inputs for c in ("method", "variable", "N")},
                              "h_tbar": step, "orders.method": inputs,
                              "orders.variable": inputs}}


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(7, 4.8))
    colors = {"theta": "tab:red", "H": "tab:green"}
    markers = {"midpoint": "s", "rk4": "^", "simpson": "o"}
    orders = out.values
    for (m, var), g in df.groupby(["method", "variable"], sort=False):
        name = r"$\|e_\theta\|$" if var == "theta" else r"$\|e_H\|$"
        ax.loglog(g["h_tbar"].astype(float), g["error"].astype(float), color=colors[var],
                  ls=STYLE[m]["ls"], marker=markers[m], ms=4,
                  label=f"{STYLE[m]['label']} {name} (order {float(orders[f'{m} {var} order']):.2f})")
    ax.set_xlabel(r"$h$ [$\bar t$]"); ax.set_ylabel(r"$\ell^\infty$ relative error")
    ax.grid(alpha=0.3, which="both"); ax.legend(fontsize=7)
    ax.set_title("top2025 Fig. 11: nutation (red) and energy (green) errors over one period", fontsize=10)
    return fig


REPRODUCTION = Reproduction(
    id="top2025_fig11", paper=PAPER, item="Fig. 11", title="nutation and energy errors against h, orders",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
