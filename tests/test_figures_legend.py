"""No legend drawn over the data, in every committed figure: each reproduction's figure
drawn again from its committed outputs (figures/, nothing computed) and measured in display
coordinates (figurecheck.py: a legend's box against every drawn point and segment inside
the axes); the same drawing is the committed PNG, byte for byte, so the PNG a run writes is
the one measured.

A figure whose legend covers data gets its legend moved (below or beside its axes, or a
figure legend), then its PNG drawn again from the committed outputs and the PNG digest of
its record restamped: its CSVs and values stay as they are (commit f34217b)."""
import hashlib
import io

import pytest

from figurecheck import committed_output, legend_overlaps
from mpvi.numbers.context import get_context
from mpvi.repro.declare import all_reproductions, default_out_dir

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

REPRODUCTIONS = all_reproductions()


def _draw(rid):
    rep = REPRODUCTIONS[rid]
    out, record = committed_output(rep, default_out_dir(False))
    with get_context("gmp", record["digits"]).active():
        return rep.plot(out, record["parameters"]), record


@pytest.mark.parametrize("rid", sorted(REPRODUCTIONS))
def test_no_legend_covers_data_and_the_committed_png_is_what_the_plot_draws(rid):
    # pyplot loaded lazily, after the Agg backend is chosen above
    import matplotlib.pyplot as plt
    fig, record = _draw(rid)
    try:
        if rid in ("top2025_tab04", "top2025_tab05"):    # the first figures measured: a
            assert len(fig.axes[0].get_lines()) == 12    # legend of twelve entries
        assert legend_overlaps(fig) == []
        png = io.BytesIO()
        fig.savefig(png, dpi=120, format="png", bbox_inches="tight")  # as mpvi run saves it
        path = f"figures/{REPRODUCTIONS[rid].paper}/{rid}.png"
        assert hashlib.sha256(png.getvalue()).hexdigest() == record["files"][f"{rid}.png"], \
            f"{path} is not what its plot draws from the committed outputs: replot it"
    finally:
        plt.close(fig)


def test_the_check_sees_a_legend_over_a_line_and_over_points():
    # matplotlib loaded lazily: heavy, and skipped above where it is missing
    from matplotlib.figure import Figure
    fig = Figure(figsize=(4, 3))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0.5, 0.5], "o-", label="level")     # markers at its ends only
    ax.scatter([0.05], [0.95], label="corner")
    ax.set_xlim(0, 1), ax.set_ylim(0, 1)
    ax.legend(loc="upper left")
    found = legend_overlaps(fig)
    assert any("'corner'" in f for f in found), found
    ax.legend(loc="center")                              # over the segment between them
    found = legend_overlaps(fig)
    assert len(found) == 1 and "'level'" in found[0], found
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))   # outside the axes
    assert legend_overlaps(fig) == []
    fig.legend(loc="center")                             # a figure legend over the axes
    found = legend_overlaps(fig)
    assert len(found) == 1 and "'level'" in found[0], found
