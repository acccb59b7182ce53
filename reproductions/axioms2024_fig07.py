"""axioms2024 Fig. 7: absolute error |phi_j - phi_0| of the quadratic form phi(p, q) of
Prop. 7 (eq. 42, xi_s and zeta_s of Sec. 6.3) along Simpson trajectories.

The paper reports ~1e-15 in double precision and calls it round-off.  We show the same
runs in float64 and in the requested mp context (64 digits by default) side by side: the
float64 curve sits near 1e-16..1e-15, the 64-digit one near 1e-64, which proves the
paper's reading.  T = 10 t_bar (not stated in the paper), h = 0.1 and 0.01 t_bar.

Run: ``mpvi run axioms2024_fig07`` or ``python reproductions/axioms2024_fig07.py``.
"""
import pandas as pd

from mpvi import fp, solve
from mpvi.schemes.simpson import simpson_phi
from mpvi.repro.run import Output, Reproduction, script_main
from mpvi.repro.studies import numstr, steps

from mpvi_papers._axioms2024 import PAPER, problem, step

PARAMS = {"T_tbar": "10", "h_tbar": ["1/10", "1/100"]}
QUICK = {"T_tbar": "4"}


def compute(run):
    p = run.params
    contexts = [run.ctx] if not run.ctx.is_mp else [fp, run.ctx]
    rows, values = [], {}
    for ctx in contexts:
        prob = problem(ctx)
        for h_tbar in p["h_tbar"]:
            h = step(ctx, prob, h_tbar)
            n = steps(p["T_tbar"], h_tbar)
            run.progress(f"simpson in {ctx.precision_name}: {n} steps of h = {h_tbar} t_bar")
            sol = solve(prob, "simpson", h=h, n=n)
            phi = simpson_phi(prob.system, h, ctx)
            vals = [phi(q, pp) for q, pp in zip(sol.q, sol.p)]
            err = [abs(v - vals[0]) for v in vals]
            rows.append(pd.DataFrame({"context": ctx.precision_name, "h_tbar": h_tbar,
                                      "t": [numstr(ctx, t) for t in sol.t],
                                      "phi": [numstr(ctx, v) for v in vals],
                                      "abs_error": [numstr(ctx, e) for e in err]}))
            values[f"{ctx.precision_name} max abs error h={h_tbar}"] = numstr(ctx, max(err))
            values[f"{ctx.precision_name} max rel error h={h_tbar}"] = numstr(ctx, max(err) / abs(vals[0]))
    return Output(tables={"": pd.concat(rows, ignore_index=True)}, values=values,
                  extra={"T_tbar_used": p["T_tbar"]})


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(7.5, 4))
    styles = {"1/10": "-", "1/100": "--"}
    for (c, h_tbar), g in df.groupby(["context", "h_tbar"], sort=False):
        y = g["abs_error"].astype(float).clip(lower=1e-80)
        ax.semilogy(g["t"].astype(float), y, styles.get(h_tbar, "-"), lw=0.9,
                    color="tab:orange" if c == "fp" else "tab:red",
                    label=f"{'float64' if c == 'fp' else c}, h = {h_tbar} " + r"$\bar t$")
    ax.set_xlabel(r"$t$ [$\bar t$]")
    ax.set_ylabel(r"$|\phi(p_j, q_j) - \phi(p_0, q_0)|$")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    ax.set_title("axioms2024 Fig. 7: Simpson conserves the quadratic form of Prop. 7 "
                 "to round-off", fontsize=10)
    return fig


REPRODUCTION = Reproduction(
    id="axioms2024_fig07", paper=PAPER, item="Fig. 7",
    title="error of the conserved quadratic form phi, float64 and 64 digits",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
