"""Backward error analysis, the oscillator (beyond the four papers): for every
trial-function method, the modified frequency from the modified equation equals, term by
term, the exact one read off the method's amplification matrix.

On q'' = -q a method's modified field is linear, y' = A~(h) y, and its frequency
Omega(h) = sqrt(det A~ - (tr A~)^2 / 4) (:func:`mpvi.modified_frequency`) is a series in
h.  The amplification matrix A(z) of the method (:func:`mpvi.analysis.symbolic.amplification_matrix`,
derived without power series from the method's trial basis, quadrature and equations)
gives the same frequency exactly: cos(Omega z) = tr A / 2 for det A = 1, in general
Omega z = arccos(tr A / (2 sqrt(det A))) (:func:`mpvi.analysis.symbolic.amplification_frequency`).
The table lists the coefficients of h^0 .. h^order of both, as exact rationals; the plot
shows, up to the method's stability limit, the exact frequency of the amplification
matrix minus the series truncated after each even power k: a gap of order h^(k+2) (or
less where the next coefficients vanish) shows the terms agree one by one.

Run: ``mpvi run bea_oscillator`` or ``python reproductions/bea/bea_oscillator.py``.
"""
import math

import mpmath
import pandas as pd
import sympy as sp

from mpvi.ground.expressions import parse_expression
from mpvi.analysis.modified import H, modified_equation, modified_frequency
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import study
from mpvi.analysis.symbolic import Z, amplification_frequency, amplification_matrix

from mpvi_papers.bea._bea import PAPER

CASES = {
    "midpoint": {}, "simpson": {}, "simpson_v1": {}, "lobatto 2": {"points": 2},
    "lobatto 3": {"points": 3}, "lobatto 4": {"points": 4}, "lobatto 5": {"points": 5},
    "hermite_variational n=2": {"hermite_n": 2}, "hermite_variational n=3": {"hermite_n": 3},
    "hermite_galerkin n=2": {"hermite_n": 2}, "hermite_galerkin n=3": {"hermite_n": 3},
}
PARAMS = {"order": 8, "cases": list(CASES)}
QUICK = {"order": 6, "cases": ["midpoint", "simpson", "lobatto 3", "hermite_galerkin n=2"]}
_W = sp.Symbol("omega", positive=True)


def _oscillator(method):
    """q'' = -omega^2 q as the system ``method`` takes (a LinearSystem for the methods
    defined on linear systems only)."""
    import mpvi
    ctx = mpvi.GMPContext(30)
    if method == "simpson_v1":
        return mpvi.LinearSystem([[1]], [[1]], ctx, name="oscillator")
    q = sp.Symbol("q")
    return mpvi.LagrangianSystem("oscillator", [q], sp.Matrix([[1]]), _W ** 2 * q ** 2 / 2,
                                 {_W: "1"}, ctx)


@study("bea_oscillator_frequency")
def frequency(rec, params):
    """The coefficients of h^0 .. h^order of the modified frequency of ``params["case"]``
    (:data:`CASES`) from its modified equation and from its amplification matrix, exact
    rationals as strings, and the amplification matrix's trace and determinant."""
    import mpvi
    case = params["case"]
    method, options = case.split()[0], CASES[case]
    order = int(params["order"])
    rec.progress(f"{case}: modified equation through h^{order}, amplification matrix")
    system = _oscillator(method)
    me = modified_equation(method, system, order, **options)
    values = dict(zip(system.param_symbols, [1] * len(system.param_symbols)))
    values[_W] = 1
    omega_me, damping_me = modified_frequency(me, values)
    m = mpvi.get_method(method)
    decl = m.declaration(m.parameters(**options))
    A = amplification_matrix(getattr(decl, "declaration", decl))
    omega_A, damping_A = amplification_frequency(A, order)
    return {"equation": [str(omega_me.coeff(H, k)) for k in range(order + 1)],
            "amplification": [str(omega_A.coeff(Z, k)) for k in range(order + 1)],
            "damping_equation": str(damping_me), "damping_amplification": str(damping_A.subs(Z, H)),
            "trace": str(sp.cancel(A.trace())), "det": str(sp.cancel(A.det()))}


def _read(text, what):
    """A formula of the study's value or table (text in h or z) as a sympy expression, read
    by the closed grammar of :mod:`mpvi.ground.expressions` (never as code)."""
    return parse_expression(text, {"h": H, "z": Z}, what=f"bea_oscillator {what}")


def compute(run):
    p = run.params
    rows, values = [], {}
    for case in p["cases"]:
        res = run.study(frequency, {"case": case, "order": p["order"]})
        same = all(sp.Rational(a) == sp.Rational(b)
                   for a, b in zip(res["equation"], res["amplification"]))
        damping = [_read(res[k], k) for k in ("damping_equation", "damping_amplification")]
        same_damping = sp.expand(damping[0] - damping[1]) == 0
        for k, (a, b) in enumerate(zip(res["equation"], res["amplification"])):
            rows.append({"method": case, "power": k, "from_modified_equation": a,
                         "from_amplification_matrix": b, "equal": a == b,
                         "trace": res["trace"] if k == 0 else "", "det": res["det"] if k == 0 else ""})
        values[f"{case}: frequency equal through h^{p['order']}"] = "1" if same else "0"
        values[f"{case}: damping equal through h^{p['order']}"] = "1" if same_damping else "0"
        first = next((k for k in range(1, len(res["equation"]))
                      if sp.Rational(res["equation"][k]) != 0), None)
        if first is not None:
            values[f"{case}: first correction h^{first} coefficient"] = res["equation"][first]
    return Output(tables={"": pd.DataFrame(rows)}, values=values)


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    cases = list(dict.fromkeys(df["method"]))
    cols = min(4, len(cases))
    nrows = math.ceil(len(cases) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 3.2 * nrows), squeeze=False)
    for ax, case in zip(axes.ravel(), cases):
        sub = df[df["method"] == case]
        coeffs = [sp.Rational(c) for c in sub["from_modified_equation"]]
        with mpmath.workdps(60):
            half_trace = sp.lambdify(Z, _read(sub["trace"].iloc[0], "trace")
                                     / (2 * sp.sqrt(_read(sub["det"].iloc[0], "det"))), "mpmath")
            zs = [mpmath.mpf(10) ** (-2 + mpmath.mpf(2) * i / 60) for i in range(61)]
            exact = [mpmath.acos(half_trace(z)) / z if abs(half_trace(z)) <= 1 else None
                     for z in zs]
            for top in range(0, len(coeffs), 2):
                gap = [abs(e - mpmath.fsum(mpmath.mpf(c.p) / c.q * z ** k
                                           for k, c in enumerate(coeffs[:top + 1])))
                       if e is not None else None for z, e in zip(zs, exact)]
                pts = [(float(z), float(g)) for z, g in zip(zs, gap) if g]
                ax.loglog([a for a, _ in pts], [b for _, b in pts], lw=1,
                          label=f"series through h^{top}")
        ax.set_title(case, fontsize=9)
        ax.set_xlabel("omega h")
        ax.set_ylabel("|Omega_exact - Omega_series|")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=5.5)
    for ax in axes.ravel()[len(cases):]:
        ax.set_visible(False)
    fig.suptitle("Oscillator: arccos(tr A / (2 sqrt(det A))) / h minus the modified frequency "
                 "of the modified equation truncated after h^k (60 digits)", fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="bea_oscillator", paper=PAPER, item="modified frequencies",
    title="the modified frequency of every trial-function method equals, term by term, "
          "arccos(tr A / 2) / h", params=PARAMS, quick=QUICK,
    compute=compute, plot=plot, published=False)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
