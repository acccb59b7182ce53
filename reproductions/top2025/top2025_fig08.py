"""top2025 Fig. 8: nutation theta(t) over one period for implicit midpoint, RK4 and
Simpson at h = 0.05 t_bar against the exact solution (18aa).

The caption says h = 0.05 without a unit; Sec. 4.1 says step sizes are expressed as
portions of the nutation period t_bar, so h = 0.05 t_bar (20 steps per period) -- the
same h as the first column of Tables 4-5 (ERRATA [E31]).  Recorded: each method's
max |theta_n - theta_ex(t_n)|.  Paper: "Simpson's solution correctly follows the exact one".

Run: ``mpvi run top2025_fig08`` or ``python reproductions/top2025/top2025_fig08.py``.
"""
import pandas as pd

from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr, sup_norm

from mpvi_papers.top2025._top2025 import PAPER, STYLE
from mpvi_papers.top2025._top2025_top import (CERTIFIED_STATEMENT, LoopingTop, certified_loop_runs,
                                      column_digits, loop_methods_run, series_frame)

PARAMS = {"periods": 1, "N_per_period": 20, "exact_samples": 400}
QUICK = {"exact_samples": 100}


def compute(run):
    ctx, p = run.ctx, run.params
    lt, res = loop_methods_run(run, p["periods"], p["N_per_period"])
    df = series_frame(ctx, res, ["theta"])
    k = p["exact_samples"]
    ts = [lt.tbar * p["periods"] * j / k for j in range(k + 1)]
    exact = pd.DataFrame({"t": [numstr(ctx, t) for t in ts],
                          "theta_exact": [numstr(ctx, x) for x in lt.theta_exact(ts)]})
    values = {f"{m} theta max abs error": numstr(ctx, sup_norm(sol.q[:, 1] - lt.theta_exact(sol.t)))
              for m, (sol, _) in res.items()}
    values.update({f"{m} theta max rel error": numstr(ctx, sup_norm(e["theta"])) for m, (_, e) in res.items()})
    for m in ("midpoint", "rk4"):
        values[f"simpson/{m} theta error ratio"] = numstr(
            ctx, ctx.num(values["simpson theta max abs error"]) / ctx.num(values[f"{m} theta max abs error"]))
    return Output(tables={"": df, "exact": exact}, values=values,
                  extra={"h_tbar": f"1/{p['N_per_period']}", "tbar_s": numstr(ctx, lt.tbar)})


def certify(run, out):
    """The proven digits of the runs' theta, the exact nutation's samples and every
    value (``mpvi run --certify``): the runs certified
    (:func:`mpvi_papers.top2025._top2025_top.certified_loop_runs`), the exact nutation enclosed
    at the nodes and at the sample times (the binary times the run computed,
    ``LagrangeTopNutation.enclose``)."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.certified import ball_max
    from mpvi.repro.digits import proven_digits
    ctx, p = run.ctx, run.params
    df, ex = out.tables[""], out.tables["exact"]
    digits, values, peak = {"theta": []}, {}, {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        nodes = certified_loop_runs(run, p["periods"], p["N_per_period"])
        for m, nd in nodes.items():
            digits["theta"] += column_digits(df[df["method"] == m]["theta"].tolist(),
                                             [q[1] for q in nd["cert"].q])
            peak[m] = ball_max(abs(d) for d in nd["theta_diff"])
            values[f"{m} theta max abs error"] = proven_digits(
                out.values[f"{m} theta max abs error"], peak[m])
            values[f"{m} theta max rel error"] = proven_digits(
                out.values[f"{m} theta max rel error"], ball_max(nd["theta"]))
        for m in ("midpoint", "rk4"):
            key = f"simpson/{m} theta error ratio"
            values[key] = proven_digits(out.values[key], peak["simpson"] / peak[m])
        run.progress("enclosing the exact nutation at the sample times")
        with ctx.active():
            lt = LoopingTop(ctx)
            k = p["exact_samples"]
            ts = [lt.tbar * p["periods"] * j / k for j in range(k + 1)]
        exact = [lt.nutation.enclose(t, ctx.dps)["theta"] for t in ts]
        samples = column_digits(ex["theta_exact"].tolist(), exact)
    return {"statement": CERTIFIED_STATEMENT + ("  The exact nutation's samples are enclosed "
                                                "at the binary sample times the run computed "
                                                "(t_bar j / k rounded)."),
            "columns": {"": digits, "exact": {"theta_exact": samples}}, "values": values,
            "not_certified": {"t": "the node time j h, h = t_bar/N rounded: an input",
                              "method": "an input of the study",
                              "exact.t": "the sample time t_bar j / k rounded: an input"}}


def plot(out, p):
    import matplotlib.pyplot as plt
    df, ex = out.tables[""], out.tables["exact"]
    fig, ax = plt.subplots(figsize=(7, 4.3))
    ax.plot(ex["t"].astype(float), ex["theta_exact"].astype(float), **STYLE["exact"])
    for m, g in df.groupby("method", sort=False):
        ax.plot(g["t"].astype(float), g["theta"].astype(float), marker="o", ms=3, **STYLE[m])
    ax.set_xlabel("t [s]"); ax.set_ylabel(r"$\theta$ [rad]"); ax.grid(alpha=0.3); ax.legend(fontsize=8)
    ax.set_title(rf"top2025 Fig. 8: nutation over one period, h = $\bar t$/{p['N_per_period']}", fontsize=10)
    return fig


REPRODUCTION = Reproduction(
    id="top2025_fig08", paper=PAPER, item="Fig. 8", title="nutation over one period vs the exact solution",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
