"""Checks of the reproductions' figures, shared by the tests that draw them
(test_figures_legend.py): a figure drawn again from the committed outputs
(:func:`committed_output`), and whether a legend hides data (:func:`legend_overlaps`).

A test module imports it as ``from figurecheck import ...`` (pytest puts ``tests/`` on
``sys.path``, as for ``conftest``)."""
import csv
import json

import numpy as np

from mpvi.repro.declare import Output, output_paths

SAMPLES = 16
"""Points sampled on each drawn segment between two data points (in display space, where
the segment is straight): a line crossing the legend between its markers counts."""


def committed_output(rep, out_dir):
    """The :class:`mpvi.repro.declare.Output` of ``rep`` as its committed outputs in
    ``out_dir`` hold it: the CSV tables (cells as written: full-precision strings; a column
    of integers as integers, as most computations made it: a plot that compares one with
    strings converts it), the JSON's values and its extra entries (``Output.extra``, which
    ``mpvi run`` writes beside the provenance fields: here the whole record but its values,
    files and digest; a plot reads only the keys it set) -- what its ``plot(output,
    params)`` draws, without computing anything -- and the JSON record."""
    import pandas as pd                  # pandas loaded lazily: only the figure tests need it
    paths = output_paths(rep, out_dir)
    record = json.loads(paths["json"].read_text(encoding="utf-8"))
    tables = {}
    for name in record["files"]:
        if not name.endswith(".csv"):
            continue
        with open(paths["dir"] / name, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        frame = pd.DataFrame(rows[1:], columns=rows[0])
        for column in frame.columns:
            if frame[column].str.fullmatch(r"-?\d+").all() and len(frame):
                frame[column] = frame[column].astype(int)
        key = "" if name == f"{rep.id}.csv" else name[len(rep.id) + 1:-len(".csv")]
        tables[key] = frame
    extra = {k: v for k, v in record.items() if k not in ("values", "files", "digest")}
    return Output(tables=tables, values=record["values"], extra=extra), record


def _segments(xy):
    """``xy`` (display points of a line, in order) with :data:`SAMPLES` points on each
    segment between two finite neighbours."""
    xy = np.asarray(xy, dtype=float)
    if len(xy) < 2:
        return xy
    s = np.linspace(0, 1, SAMPLES, endpoint=False)[:, None, None]
    a, b = xy[:-1], xy[1:]
    sampled = (a + s * (b - a)).reshape(-1, 2)
    return np.concatenate([sampled, xy[-1:]])


def legend_overlaps(fig):
    """What the legends of ``fig`` (of its axes and of the figure) cover of the data drawn
    in its axes: one line per legend and artist, ``"<legend> covers n points of <label>"``
    (a line's markers and the segments between them, sampled; a scatter's points), empty
    if no legend hides data.  Measured on the drawn figure, in display coordinates: only
    what is inside the axes (drawn, not clipped) counts."""
    if not hasattr(fig.canvas, "get_renderer"):       # a bare Figure: draw it with Agg
        # matplotlib's Agg canvas loaded lazily, as the figure itself
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        FigureCanvasAgg(fig)
    # laid out as drawn (3D projections, tight layout, legend placement) but not rasterized:
    # the window extents are those of a full draw, at a third of the time
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        legends = [leg for leg in [ax.get_legend(), *fig.legends] if leg is not None]
        frame = ax.get_window_extent(renderer)
        artists = [(line.get_label(), _segments(line.get_transform().transform(
                        np.asarray(line.get_xydata(), dtype=float))))
                   for line in ax.get_lines() if line.get_visible()]
        artists += [(c.get_label(), c.get_offset_transform().transform(c.get_offsets()))
                    for c in ax.collections if len(c.get_offsets())]
        for leg in legends:
            box = leg.get_window_extent(renderer)
            for label, xy in artists:
                xy = xy[np.isfinite(xy).all(axis=1)]
                shown = (xy[:, 0] >= frame.x0) & (xy[:, 0] <= frame.x1) & \
                    (xy[:, 1] >= frame.y0) & (xy[:, 1] <= frame.y1)
                hidden = shown & (xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & \
                    (xy[:, 1] >= box.y0) & (xy[:, 1] <= box.y1)
                if hidden.any():
                    found.append(f"the legend of {ax.get_title() or 'an axes'!r} covers "
                                 f"{int(hidden.sum())} points of {label!r}")
    return found
