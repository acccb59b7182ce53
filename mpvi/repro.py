"""The reproduction framework.

A reproduction script ``reproductions/<paper>_<item>.py`` defines ``REPRODUCTION``, a
:class:`Reproduction`: a parameter set (``params``, with smaller ``quick`` overrides), a
``compute(run)`` function that calls the library and returns an :class:`Output`, and a
``plot(output, params)`` function that returns a matplotlib figure.  :func:`execute`
does the rest: number context, progress, timing, and the atomic writing of

    <out>/<paper>/<id>.csv    the main table (64-digit numbers as full-precision strings)
    <out>/<paper>/<id>_<name>.csv   further tables, if any
    <out>/<paper>/<id>.png    the plot
    <out>/<paper>/<id>.json   provenance (version, git commit, context, digits,
                              parameters, wall time) and the values compared by ``mpvi diff``

Each script also runs on its own: ``python reproductions/axioms2024_fig02.py --help``.
"""
from __future__ import annotations

import argparse
import copy
import importlib
import pkgutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import io
from .context import get_context


@dataclass
class Output:
    """What a reproduction computed: ``tables`` (name -> DataFrame; '' is the main
    table), ``values`` (key -> number string, compared by ``mpvi diff``), and
    ``extra`` provenance entries (e.g. the T used, Newton statistics)."""

    tables: dict
    values: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)


@dataclass
class Reproduction:
    id: str
    paper: str
    item: str
    title: str
    runtime: str
    params: dict
    compute: Callable
    plot: Callable
    quick: dict = field(default_factory=dict)

    def parameters(self, quick=False):
        p = copy.deepcopy(self.params)
        if quick:
            p.update(copy.deepcopy(self.quick))
        return p


class Run:
    """Handed to ``compute``: the context, the parameters and a progress printer."""

    def __init__(self, ctx, params, quick, stream=None):
        self.ctx = ctx
        self.params = params
        self.quick = quick
        self.stream = stream if stream is not None else sys.stderr
        self._t0 = time.perf_counter()
        self.newton = {}

    def progress(self, message):
        print(f"  [{time.perf_counter() - self._t0:7.1f} s] {message}", file=self.stream, flush=True)

    def integrate(self, system, scheme, q0, p0, h, n, **options):
        """:func:`mpvi.integrate` with progress for long runs; Newton statistics of every
        implicit run are pooled per scheme into the provenance (``newton``)."""
        from .integrate import Progress, integrate
        bar = Progress(f"{get_scheme_name(scheme)} n={n}", n, self.stream) if n >= 5000 else None
        traj = integrate(system, scheme, q0, p0, h, n, self.ctx, progress=bar, **options)
        self.add_newton(traj.scheme, traj.stats.get("newton"))
        return traj

    def add_newton(self, scheme, summary):
        """Pool one trajectory's Newton summary (``traj.stats["newton"]``) under ``scheme``."""
        if not summary or not summary.get("solves"):
            return
        pool = self.newton.setdefault(scheme, {"solves": 0, "iterations": 0,
                                               "max_iterations": 0, "max_residual": 0.0})
        pool["solves"] += summary["solves"]
        pool["iterations"] += summary["total_iterations"]
        pool["max_iterations"] = max(pool["max_iterations"], summary["max_iterations"])
        pool["max_residual"] = max(pool["max_residual"], summary["max_residual"])

    def newton_summary(self):
        """Per scheme: Newton solves (= steps), mean and max iterations per step, and the
        largest final residual norm over all steps of this reproduction."""
        return {m: {"steps": s["solves"], "mean_iterations_per_step": s["iterations"] / s["solves"],
                    "max_iterations": s["max_iterations"], "max_final_residual": s["max_residual"],
                    "context_eps": float(self.ctx.eps)}
                for m, s in self.newton.items()}


def get_scheme_name(scheme):
    return getattr(scheme, "name", scheme)


def default_out_dir():
    root = io.project_root()
    return (root / "figures") if root is not None else Path.cwd() / "figures"


def all_reproductions():
    """``{id: Reproduction}`` for every module of the ``reproductions`` package."""
    import reproductions
    found = {}
    for mod in sorted(pkgutil.iter_modules(reproductions.__path__), key=lambda m: m.name):
        if mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"reproductions.{mod.name}")
        rep = getattr(module, "REPRODUCTION", None)
        if isinstance(rep, Reproduction):
            if rep.id != mod.name:
                raise RuntimeError(f"reproductions/{mod.name}.py declares id {rep.id!r}")
            found[rep.id] = rep
    return found


def get_reproduction(rid):
    reps = all_reproductions()
    if rid not in reps:
        raise KeyError(f"unknown reproduction id {rid!r}; known ids: {', '.join(reps)}")
    return reps[rid]


def output_paths(rep, out_dir):
    base = Path(out_dir) / rep.paper
    return {"dir": base, "csv": base / f"{rep.id}.csv", "png": base / f"{rep.id}.png",
            "json": base / f"{rep.id}.json"}


def execute(rep, context="mp", dps=64, quick=False, out_dir=None, stream=None):
    """Run one reproduction and write its files atomically; returns the paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ctx = get_context(context, dps)
    params = rep.parameters(quick)
    run = Run(ctx, params, quick, stream)
    run.progress(f"{rep.id}: {rep.item} of {rep.paper} in context {ctx.name}"
                 f"{' (quick)' if quick else ''}")
    t0 = time.perf_counter()
    out = rep.compute(run)
    wall = time.perf_counter() - t0
    paths = output_paths(rep, out_dir or default_out_dir())
    for name, df in out.tables.items():
        target = paths["csv"] if name == "" else paths["dir"] / f"{rep.id}_{name}.csv"
        io.write_csv(df, target)
    fig = rep.plot(out, params)
    io.save_figure(fig, paths["png"])
    plt.close(fig)
    extra = dict(out.extra)
    if run.newton:
        extra["newton"] = run.newton_summary()
    record = io.provenance(ctx, params, wall, {"reproduction": rep.id, "paper": rep.paper,
                                               "item": rep.item, "quick": quick, **extra})
    record["values"] = out.values
    io.write_json(record, paths["json"])
    run.progress(f"{rep.id}: done in {wall:.1f} s -> {paths['csv'].parent}")
    return paths


def script_main(rep, argv=None):
    """Command line of a single reproduction script."""
    ap = argparse.ArgumentParser(
        prog=f"python reproductions/{rep.id}.py",
        description=f"{rep.item} of {rep.paper}: {rep.title}. Writes <out>/{rep.paper}/{rep.id}"
                    ".csv, .png and .json (provenance). Expected run time: " + rep.runtime)
    add_run_options(ap)
    args = ap.parse_args(argv)
    execute(rep, args.context, args.dps, args.quick, args.out)
    return 0


def add_run_options(ap):
    ap.add_argument("--dps", type=positive_int, default=64,
                    help="significant digits of the mp context (default 64)")
    ap.add_argument("--context", choices=["mp", "fp"], default="mp",
                    help="number context: mp (mpmath, --dps digits) or fp (float64); default mp")
    ap.add_argument("--quick", action="store_true",
                    help="smaller parameter set (fewer steps) for a fast check")
    ap.add_argument("--out", type=Path, default=None,
                    help="output directory (default: figures/ of the source checkout)")


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v
