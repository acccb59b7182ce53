"""top2025 Fig. 4: convergence of the energy error of the double pendulum,
||e_H||_inf = sup_n |H(p_n, q_n) - H_0| / |H_0| against the step size h, with the
least-squares orders of implicit midpoint, RK4 and Simpson.

What the paper shows (Sec. 3.2.2, Fig. 4 and its caption): "The convergence rates of the
Implicit midpoint and Simpson methods are 2 and 4, respectively"; "RK4 showcases a
higher convergence rate than its characteristic one (of 4) because the error is high for
the larger time steps".  Neither T nor the h range is printed.

Parameters: Table 1 data (l = g/omega0^2, ERRATA [E13]), 64 digits, T = 10 s (the
window of Figs. 2, 3, 5) and h = T/N for N = 100, 160, ..., 10000: h from 0.1 s (the
step of Figs. 2-3) down to 0.001 s, log-spaced, the range the same authors use for the
convergence plot of their linear study (axioms2024 Fig. 8, "h from 0.1 to 0.001").  The
CSV holds per method and N the error, the slope against the previous step
(``order_step``) and the least-squares slope over all steps (``order``).
Quick set: N = 400, 800 (h = 0.025, 0.0125 s), two steps in the asymptotic range.

Compared (reproductions/top2025/published/top2025_pendulum.csv): ``midpoint order`` 2 +- 0.1,
``simpson order`` 4 +- 0.2 and ``rk4 order`` > 4.  Also recorded: ``<method> asymptotic
order``, the slope between the two smallest steps of the run.  Full run: 1.90, 4.03,
4.91.  The midpoint's fit depends on the range (h = 0.1 s is pre-asymptotic for it: slope
1.45 there, 1.97-2.00 for h <= 0.025 s; ERRATA [E15]); RK4's slope is lowest at the
largest steps and tends to 5, its order in energy (ERRATA [E16]).

Run: ``mpvi run top2025_fig04`` or ``python reproductions/top2025/top2025_fig04.py``.
"""
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr

from mpvi_papers.top2025._top2025 import METHODS, PAPER, STYLE
from mpvi_papers.top2025._top2025_pendulum import (ENERGY_STATEMENT, certified_orders,
                                            certify_energy_convergence, energy_convergence,
                                            energy_error_tasks, orders_digits, orders_frame)

PARAMS = {"T": "10", "N": [100, 160, 250, 400, 630, 1000, 1600, 2500, 4000, 6300, 10000],
          "methods": list(METHODS)}
QUICK = {"N": [400, 800]}


def compute(run):
    ctx, p = run.ctx, run.params
    rows = energy_convergence(run, p["T"], p["N"], p["methods"])
    values = {}
    for m in p["methods"]:
        mine = [r for r in rows if r["method"] == m]
        values[f"{m} order"] = numstr(ctx, mine[0]["order"])
        values[f"{m} asymptotic order"] = numstr(ctx, mine[-1]["order_step"])
    hs = [r["h"] for r in rows[:len(p["N"])]]
    return Output(tables={"": orders_frame(ctx, rows)}, values=values,
                  extra={"T_s": p["T"], "h_range_s": [numstr(ctx, max(hs)), numstr(ctx, min(hs))]})


def certify(run, out):
    """The proven digits of every error and order of ``out`` (``mpvi run --certify``):
    every run certified and its ||e_H||_inf enclosed
    (:func:`mpvi_papers.top2025._top2025_pendulum.certify_energy_convergence`), the orders from
    those balls (:func:`mpvi_papers.top2025._top2025_pendulum.certified_orders`).  The columns
    method, N and h (= T/N rounded) are inputs."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.digits import proven_digits
    ctx, p = run.ctx, run.params
    digits, values = {}, {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        found = certify_energy_convergence(run, p["T"], p["N"], p["methods"])
        balls, ls = certified_orders(found, p["methods"], p["N"])
        orders_digits(out.tables[""], balls, digits)
        for m in p["methods"]:
            values[f"{m} order"] = proven_digits(out.values[f"{m} order"], ls[m])
            key = f"{m} asymptotic order"
            values[key] = proven_digits(out.values[key], balls[(m, p["N"][-1])]["order_step"])
    inputs = "an input of the study (exact), not a computed number"
    return {"statement": ENERGY_STATEMENT, "columns": {"": digits}, "values": values,
            "not_certified": {**{c: inputs for c in ("method", "N")},
                              "h": "the step T/N rounded to the run's digits: an input"}}


def plot(out, p):
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(6.5, 4.6))
    for m, g in df.groupby("method", sort=False):
        order = float(g["order"].iloc[0])
        ax.loglog(g["h"].astype(float), g["error"].astype(float), marker="o", ms=3.5,
                  **dict(STYLE[m], label=f"{STYLE[m]['label']} (slope {order:.2f})"))
    hs = sorted(set(df["h"].astype(float)))
    if len(hs) <= 4:                         # less than a decade: label the steps themselves
        ax.set_xticks(hs, labels=[f"{h:g}" for h in hs])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("$h$ [s]")
    ax.set_ylabel(r"$\|e_H\|_\infty = \sup_n |H_n - H_0| / |H_0|$")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    ax.set_title(f"top2025 Fig. 4: energy error convergence, double pendulum, T = {p['T']} s",
                 fontsize=10)
    return fig


REPRODUCTION = Reproduction(
    id="top2025_fig04", paper=PAPER, item="Fig. 4",
    title="energy error norm against h with least-squares orders",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot,
    tasks=lambda p: energy_error_tasks(p["T"], p["N"], p["methods"]), certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
