"""hermite Fig. 1: the four cubic Hermite basis functions over one step (eq. 17), and the
higher-order Hermite basis of eqs. (27)-(28) checked against mpvi's.

mpvi's Hermite bases (:func:`mpvi.methods.quadrature.hermite_basis`) are computed from their
defining property (phi_(e,d)^(k)(e') = [e = e'][k = d] for k < n, exact rationals), not
typed from the paper.  The CSV holds N1, N2/dt, N3, N4/dt (the paper's normalisation in
Fig. 1) at 101 points of tau = t/dt; the JSON holds mpvi's polynomials, compared
symbolically with eq. (17) and, for n = 2 and 3, with the functions that multiply
q^(j)(0) and q^(j)(dt) in eq. (27) with H_n,j of eq. (28) (reproductions/hermite/published/
hermite_analysis.csv): the right-end terms of eq. (27) lack a factor (-1)^j (ERRATA [E36]).

Run: ``mpvi run hermite_fig01`` or ``python reproductions/hermite/hermite_fig01.py``.
"""
from fractions import Fraction

import pandas as pd
import sympy as sp

from mpvi.methods.quadrature import hermite_basis
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr

from mpvi_papers.hermite._hermite import PAPER

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


def certify(run, out):
    """``mpvi run --certify``: each printed basis function (eq. 17; eqs. 27-28 for n = 2,
    3) decided against mpvi's in exact arithmetic (:mod:`mpvi_papers.hermite._hermite_exact`:
    polynomials as fmpq_poly), mpvi's polynomials checked against their defining property
    phi_(e,d)^(k)(e') = [e = e'][k = d] in fmpq arithmetic, and every CSV value of N1,
    N2/dt, N3, N4/dt proven against the exact rational value at tau = k/(points - 1)."""
    from flint import arb, fmpq

    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.digits import proven_digits

    from mpvi_papers.hermite import _hermite_exact as X
    ctx, p = run.ctx, run.params
    derived = {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        for n in sorted(set(p["orders"]) | {2}):
            basis = hermite_basis(n)
            for i, s in enumerate(basis.slots):
                P = X.ratfunc(basis.poly(i), "tau")[0] / X.ratfunc(basis.poly(i), "tau")[1]
                for e in (0, 1):
                    D = P
                    for k in range(n):
                        want = 1 if (Fraction(e) == s.tau and k == s.derivative) else 0
                        if D(fmpq(e)) != want:
                            raise ArithmeticError(f"hermite_basis({n}) slot {s}: derivative {k} "
                                                  f"at {e} is {D(fmpq(e))}, not {want}")
                        D = D.derivative()
                side = "left" if s.tau == 0 else "right"
                derived[f"n={n} {side} H_{n},{s.derivative}"] = basis.poly(i)
                if n == 2:
                    derived[NAMES[i]] = basis.poly(i)
        block = X.formula_block(run, X.printed_formulas("hermite_fig01"),
                                lambda key, printed: X.decide_rational(printed, derived[key]),
                                X.FORMULA_STATEMENT + "  mpvi's polynomials satisfy their "
                                "defining interpolation conditions exactly; each CSV value is "
                                "proven against the exact rational value of its polynomial.")
        cubic = [X.ratfunc(derived[name], "tau") for name in NAMES]
        cells = {c: [] for c in COLUMNS}
        for _, row in out.tables[""].iterrows():
            tau = Fraction(row["tau"])
            for col, (num, den) in zip(COLUMNS, cubic):
                exact = num(fmpq(tau.numerator, tau.denominator)) / den(fmpq(0))
                cells[col].append(ctx.dps if exact == 0 and Fraction(row[col]) == 0
                                  else proven_digits(row[col], arb(exact))[0])
    block["columns"] = {"": cells}
    block["not_certified"]["tau"] = "the abscissa k/(points - 1), an input"
    for key in out.values:
        if key not in block["values"] and key not in block["not_certified"]:
            block["not_certified"][key] = X.NOT_PUBLISHED
    return block


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
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
