"""axioms2024 Fig. 3: q(t) over ten periods.

Exact, Newmark, RK4 and Simpson over T = 10 t_bar with h = 0.1 t_bar.
Run: ``mpvi run axioms2024_fig03`` or ``python reproductions/axioms2024_fig03.py`` (``--help`` for options).
"""
from mpvi.repro import Output, Reproduction, script_main

from reproductions._axioms2024 import PAPER, plot_time_series, problem, run_methods

PARAMS = {"T_tbar": "10", "h_tbar": "1/10", "methods": ["newmark", "rk4", "simpson"]}


def compute(run):
    p = run.params
    df, _ = run_methods(run, problem(run.ctx), p["methods"], p["T_tbar"], p["h_tbar"])
    return Output(tables={"": df})


def plot(out, p):
    return plot_time_series(out.tables[""], ["q1", "q2"], [r"$q_1$ [rad]", r"$q_2$ [rad]"],
                            "axioms2024 Fig. 3: q(t) over ten periods (h = " + p["h_tbar"] + r" $\bar t$)",
                            p["T_tbar"])


REPRODUCTION = Reproduction(
    id="axioms2024_fig03", paper=PAPER, item="Fig. 3", title="q(t) over ten periods",
    runtime="~2 s", params=PARAMS, compute=compute, plot=plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
