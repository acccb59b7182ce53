"""hermite Fig. 1: the four cubic Hermite basis functions over one step (eq. 17), and the
higher-order Hermite basis of eqs. (27)-(28) checked against mpvi's.

mpvi's Hermite bases (:func:`mpvi.quadrature.hermite_basis`) are computed from their
defining property (phi_(e,d)^(k)(e') = [e = e'][k = d] for k < n, exact rationals), not
typed from the paper.  The CSV holds N1, N2/dt, N3, N4/dt (the paper's normalisation in
Fig. 1) at 101 points of tau = t/dt; the JSON holds mpvi's polynomials, compared
symbolically with eq. (17) and, for n = 2 and 3, with the functions that multiply
q^(j)(0) and q^(j)(dt) in eq. (27) with H_n,j of eq. (28) (reproductions/published/
hermite_analysis.csv): the right-end terms of eq. (27) lack a factor (-1)^j (ERRATA [E36]).

Run: ``mpvi run hermite_fig01`` or ``python reproductions/hermite_fig01.py``.
"""
from fractions import Fraction

import pandas as pd
import sympy as sp

from mpvi.quadrature import hermite_basis
from mpvi.repro.run import Output, Reproduction, script_main
from mpvi.repro.studies import numstr

from mpvi_papers._hermite import PAPER

PARAMS = {"points": 101, "orders": [2, 3]}
QUICK = {"points": 21}

NAMES = ["N1", "N2/dt", "N3", "N4/dt"]
COLUMNS = ["N1", "N2_over_dt", "N3", "N4_over_dt"]


def compute(run):
    ctx, p = run.ctx, run.params
    cubic = hermite_basis(2)          # slots (0,0), (0,1), (1,0), (1,1) = N1, N2/dt, N3, N4/dt
    values = {name: sp.sstr(cubic.poly(i)) for i, name in enumerate(NAMES)}
    for n in p["orders"]:
        basis = hermite_basis(n)
        for i, s in enumerate(basis.slots):
            side = "left" if s.tau == 0 else "right"
            values[f"n={n} {side} H_{n},{s.derivative}"] = sp.sstr(basis.poly(i))
    taus = [Fraction(k, p["points"] - 1) for k in range(p["points"])]
    rows = []
    for tau in taus:
        row = {"tau": numstr(ctx, ctx.num(tau))}
        for i, col in enumerate(COLUMNS):
            row[col] = numstr(ctx, ctx.num(Fraction(str(cubic.value(i, sp.Rational(tau.numerator, tau.denominator))))))
        rows.append(row)
    return Output(tables={"": pd.DataFrame(rows)}, values=values)


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    tau = df["tau"].astype(float)
    for col, name, ls in zip(COLUMNS, (r"$N_1$", r"$N_2/\Delta t$", r"$N_3$", r"$N_4/\Delta t$"),
                             ("-", "--", "-.", ":")):
        ax.plot(tau, df[col].astype(float), ls=ls, lw=1.6, label=name)
    ax.set_xlabel(r"$t/\Delta t$")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.2, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    ax.set_title("Cubic Hermite polynomials over one time step (hermite Fig. 1, eq. 17)", fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="hermite_fig01", paper=PAPER, item="Fig. 1",
    title="cubic Hermite basis functions over one step; eqs. (17), (27)-(28) checked",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
