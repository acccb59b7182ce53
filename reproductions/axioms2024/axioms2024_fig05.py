"""axioms2024 Fig. 5: phase portraits (q_i, p_i) over T = 3 t_bar with h = 0.1 t_bar,
exact vs Newmark vs Simpson.

Run: ``mpvi run axioms2024_fig05`` or ``python reproductions/axioms2024/axioms2024_fig05.py``.
"""
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main

from mpvi_papers.axioms2024._axioms2024 import PAPER, STYLE, curves, problem, run_methods

PARAMS = {"T_tbar": "3", "h_tbar": "1/10", "methods": ["newmark", "simpson"]}


def compute(run):
    p = run.params
    df, _ = run_methods(run, problem(run.ctx), p["methods"], p["T_tbar"], p["h_tbar"], fine=1200)
    return Output(tables={"": df})


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    for ax, i in zip(axes, (1, 2)):
        qs, ps = curves(df, f"q{i}"), curves(df, f"p{i}")
        for m in qs:
            ax.plot(qs[m][1], ps[m][1], **STYLE[m])
        ax.set_xlabel(f"$q_{i}$ [rad]")
        ax.set_ylabel(f"$p_{i}$ [kg m$^2$/s]")
        ax.grid(alpha=0.3)
    # the legend below both portraits: inside, the curves fill every corner
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8,
               frameon=False)
    fig.suptitle(f"axioms2024 Fig. 5: phase portraits, T = {p['T_tbar']} " + r"$\bar t$, h = "
                 + p["h_tbar"] + r" $\bar t$", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


REPRODUCTION = Reproduction(
    id="axioms2024_fig05", paper=PAPER, item="Fig. 5", title="phase portraits (q_i, p_i)",
    params=PARAMS, compute=compute, plot=plot, published=False)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
