"""hermite Sec. 4.2: symplecticity of the one-step methods.

(a) Harmonic oscillator L = 1/2 q'^2 - 1/2 q^2 (m = omega = 1): the Jacobian d phi/d y_k
of the one-step map in the ordering of eq. (37) (rows p_k+1, q_k+1; columns p_k, q_k),
derived symbolically from each method's own equations (:mod:`mpvi.symbolic`; with
m = 1, p = v), and the check (d phi)^T J (d phi) = J, exact.  The printed Jacobians are
compared entry by entry (reproductions/published/hermite_analysis.csv): ERRATA [E38].

(b) The nonlinear double well L = 1/2 q'^2 - 1/2 (q^4 - q^2) (eq. 38): the paper says
neither method is symplectic.  Quantified here: the defect ||Phi^T J Phi - J||_F of the
Jacobian Phi of one 64-digit step (central differences at 2 x 64 + 10 digits,
:func:`mpvi.analysis.one_step_jacobian`) at two points, against dt, with its fitted order;
Simpson's variational integrator as the symplectic control (defect at the 1e-64 level).

Run: ``mpvi run hermite_symplecticity`` or ``python reproductions/hermite_symplecticity.py``.
"""
from fractions import Fraction

import pandas as pd
import sympy as sp

from mpvi.analysis import fit_order, matrix_defect, one_step_jacobian
from mpvi.mechanics import LagrangianSystem
from mpvi.repro.run import Output, Reproduction, needs_mp, script_main
from mpvi.repro.studies import numstr
from mpvi.symbolic import DT, oscillator_map

from mpvi_papers._hermite import PAPER, STYLE
from mpvi_papers._hermite_analysis import ANALYSED, formula

PARAMS = {"symbolic": ["hermite_variational", "hermite_galerkin"],
          "methods": ["hermite_variational", "hermite_galerkin", "hermite_variational_n3",
                      "hermite_galerkin_n3", "simpson"],
          "points": [["0.74", "0"], ["0.74", "0.3"]],
          "dt": ["0.4", "0.2", "0.1", "0.05", "0.025", "0.0125"]}
QUICK = {"methods": ["hermite_variational", "hermite_galerkin", "simpson"], "dt": ["0.2", "0.1", "0.05"]}

_Q = sp.Symbol("q")


def double_well(ctx):
    """hermite eq. (38) with m = 1."""
    return LagrangianSystem("double well", [_Q], sp.Matrix([[1]]), (_Q ** 4 - _Q ** 2) / 2, {}, ctx)


def compute(run):
    ctx, p = run.ctx, run.params
    values, rows = {}, []
    for name in p["symbolic"]:
        run.progress(f"{name}: Jacobian of the one-step map on the harmonic oscillator")
        Phi = oscillator_map(ANALYSED[name][0](), h=DT, omega=1)
        for (i, j), key in zip(((0, 0), (0, 1), (1, 0), (1, 1)), ("J11", "J12", "J21", "J22")):
            values[f"{name} {key}"] = formula(Phi[i, j])
        J = sp.Matrix([[0, 1], [-1, 0]])
        D = (Phi.T * J * Phi - J).applyfunc(lambda e: sp.factor(sp.cancel(e)))
        values[f"{name} phi^T J phi - J"] = "0" if D == sp.zeros(2, 2) else sp.sstr(D)
    for name in p["methods"]:
        _, scheme, options, _ = ANALYSED[name]
        for q, v in p["points"]:
            run.progress(f"{name}: symplecticity defect on the double well at (q, v) = ({q}, {v})")
            defects = []
            for dt in p["dt"]:
                h = ctx.num(Fraction(dt))
                Phi = one_step_jacobian(scheme, double_well, h, [q], [v], ctx, **options)
                d = matrix_defect(Phi, ctx)
                defects.append(d)
                rows.append({"method": name, "q": q, "v": v, "dt": dt, "defect": numstr(ctx, d)})
                if q == "0.74" and v == "0" and dt == "0.1":
                    values[f"{name} double well defect at dt=0.1"] = numstr(ctx, d)
            big = [(Fraction(h), d) for h, d in zip(p["dt"], defects) if d > ctx.eps * 10 ** 6]
            if len(big) >= 2:
                values[f"{name} defect order at ({q}, {v})"] = ctx.to_str(
                    fit_order(ctx, [ctx.num(h) for h, _ in big[-3:]], [d for _, d in big[-3:]]), 4)
            else:
                values[f"{name} max defect at ({q}, {v})"] = numstr(ctx, max(defects))
    return Output(tables={"": pd.DataFrame(rows)}, values=values)


def plot(out, p):
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter
    df = out.tables[""]
    fig, axes = plt.subplots(1, len(p["points"]), figsize=(11, 4.2), sharey=True)
    for ax, (q, v) in zip(axes, p["points"]):
        for m, g in df[(df["q"] == q) & (df["v"] == v)].groupby("method", sort=False):
            base = m.replace("_n3", "")
            st = STYLE[base]
            y = g["defect"].astype(float).clip(lower=1e-66)
            ax.loglog(g["dt"].astype(float), y, marker="o" if m.endswith("n3") else "s", ms=4,
                      color=st["color"], ls=":" if m.endswith("n3") else "-", label=ANALYSED[m][3])
        ax.set_xlabel(r"$\Delta t$")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"double well, one step from (q, v) = ({q}, {v})", fontsize=9)
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel(r"$\|\Phi^T J \Phi - J\|_F$ (64 digits)")
    axes[0].legend(fontsize=7)
    fig.suptitle("Symplecticity defect of the one-step map (hermite Sec. 4.2)", fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="hermite_symplecticity", paper=PAPER, item="Sec. 4.2",
    title="Jacobians on the oscillator; symplecticity defect on the double well",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot,
    refuse=needs_mp("the one-step Jacobian is taken by central differences at 2 dps + 10 digits"))

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
