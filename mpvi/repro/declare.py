"""The declaration of a reproduction and its discovery (the reproduction framework, bottom).

Reproductions live in installed *reproduction packages*: packages that declare an entry
point in the group ``mpvi.reproductions`` (this project's ``reproductions/``, installed as
the package ``mpvi_papers``, does so in pyproject.toml: ``mpvi-papers = "mpvi_papers"``).
mpvi never imports such a package by name; :func:`mpvi.repro.packages.reproduction_packages`
finds them through the entry points.  A package holds one script per figure or table,
``<paper>_<item>.py``, in a paper folder ``<paper>/`` (or at its top level), and next to
the scripts their data: ``published/*.csv``, ``ERRATA.md``, ``discrepancies.csv`` and
``runtimes.json`` (see :mod:`mpvi.repro.published`, :mod:`mpvi.repro.runtimes`).

A script defines ``REPRODUCTION``, a :class:`Reproduction`: a parameter set (``params``,
with smaller ``quick`` overrides), a ``compute(run)`` function that calls the library and
returns an :class:`Output`, a ``plot(output, params)`` function that returns a matplotlib
figure and, optionally, ``refuse(ctx)``: the reason it cannot run in a number context
(checked before any computation), and ``tasks(params)``: the independent studies
``compute`` will ask for (:class:`mpvi.repro.studies.Task`), which ``mpvi run --jobs N`` /
``--scheduler`` (:mod:`mpvi.repro.parallel`) computes side by side before ``compute`` runs.

Discovery (:func:`all_reproductions`) imports every script of every folder of every
installed package (:func:`mpvi.repro.packages.ReproductionPackage.folders`: the package's
top level and its paper folders ``reproductions/<paper>/``); the catalogues (``mpvi
list``, the table of docs/guide/reproductions.md) and the per-paper tests are made from
what it finds, so a new script is found with nothing else edited.  Where a
reproduction's outputs go (:func:`output_paths`): ``<out>/<paper>/<id>.*``, with
``<out>`` ``figures/`` of the source checkout for full runs and ``quick-figures/`` for
``--quick`` runs (:func:`default_out_dir`).
"""
from __future__ import annotations

import copy
import difflib
import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mpvi.ground import io
from mpvi.repro.packages import PluginError, all_folders, reproduction_packages
from mpvi.repro.studies import Task

DEFAULT_CONTEXT = "gmp"
"""The number context of the reproductions: gmpy2 numbers with generated kernels.  Every
committed output also agrees with the mpmath reference context (``--context mp``) to the
tolerance of ``benchmarks/compare_outputs.py``."""


class Refused(Exception):
    """A reproduction declared that it cannot run in the requested number context."""

    def __init__(self, rid, context, reason):
        super().__init__(f"{rid}: refused in {context}: {reason}")
        self.rid, self.context, self.reason = rid, context, reason


@dataclass
class Output:
    """What a reproduction computed: ``tables`` (name -> DataFrame; '' is the main
    table), ``values`` (key -> number string, compared by ``mpvi diff``), ``extra``
    provenance entries (e.g. the T used), and ``unchecked``: the columns and value keys
    that are not computed numbers, name -> why (a wall time, the digits of a row's own
    run), which ``--check-digits`` (:mod:`mpvi.repro.digits`) leaves out."""

    tables: dict
    values: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    unchecked: dict = field(default_factory=dict)


NO_CERTIFY_HOOK = "it declares no certified computation (no certify hook)"
"""The default ``Reproduction.not_certifiable``: no more said than that there is no hook."""


NOT_DECLARED = "not declared certifiable by the reproduction"
"""The ``not_certified`` reason of a column or value that the reproduction's certify hook
neither certified nor said why not (:func:`mpvi.repro.run.certified_block`)."""


@dataclass
class Reproduction:
    """One figure or table: ``params`` (with ``quick`` overrides), ``compute(run)`` ->
    :class:`Output`, ``plot(output, params)`` -> figure, ``refuse(ctx)`` -> the reason
    it cannot run in context ``ctx`` (None: it can; see :func:`needs_mp`), and
    ``tasks(params)`` -> the :class:`mpvi.repro.studies.Task` list of the studies ``compute``
    will ask for through ``run.study`` (see :meth:`declared_tasks`), ``certify(run, output)``
    -> the proven digits of the columns and values it can certify (``mpvi run --certify``,
    :func:`certified_block`; None, the default: ``not_certifiable`` says why none are).
    ``published``: whether
    the paper prints numbers of this item, listed in its package's ``published/*.csv``
    (default True: ``mpvi diff`` reports an error if none are, e.g. a deleted file; False
    for a figure with nothing to compare, and then none may be).  ``module`` is the
    importable module that defines ``REPRODUCTION`` (set by :func:`all_reproductions`;
    a worker process finds the reproduction through it)."""

    id: str
    paper: str
    item: str
    title: str
    params: dict
    compute: Callable
    plot: Callable
    quick: dict = field(default_factory=dict)
    refuse: Callable | None = None
    tasks: Callable | None = None
    published: bool = True
    certify: Callable | None = None
    not_certifiable: str = NO_CERTIFY_HOOK
    module: str | None = field(default=None, compare=False)

    def parameters(self, quick=False):
        p = copy.deepcopy(self.params)
        if quick:
            p.update(copy.deepcopy(self.quick))
        return p

    def refusal(self, ctx):
        """Why this reproduction cannot run in ``ctx``, or None."""
        return self.refuse(ctx) if self.refuse is not None else None

    def declared_tasks(self, params):
        """The studies ``compute`` will ask for with ``params``, as a list of
        :class:`mpvi.repro.studies.Task`: from ``tasks``, or else from ``compute.tasks`` (a
        compute function made by a helper shared by several scripts carries the tasks for
        all of them).  Declaring a task is an optimisation only: a study that is not
        declared is computed by ``compute`` itself, and one that is declared but not
        asked for is wasted work."""
        declare = self.tasks if self.tasks is not None else getattr(self.compute, "tasks", None)
        if declare is None:
            return []
        tasks = list(declare(params))
        for t in tasks:
            if not isinstance(t, Task):
                raise TypeError(f"{self.id}: tasks() must return mpvi.repro.studies.Task objects, "
                                f"not {type(t).__name__}")
        return tasks


def needs_mp(reason):
    """A ``refuse`` hook for a reproduction that cannot run in float64: it refuses every
    context that is not an mp context, giving ``reason``."""
    return lambda ctx: None if ctx.is_mp else reason


def project_path(name):
    """``name`` at the root of the source checkout, or in the working directory outside
    one."""
    return (io.project_root() or Path.cwd()) / name


def default_out_dir(quick=False):
    """``figures/`` (full runs) or ``quick-figures/`` (``--quick``) at the root of the
    source checkout, or of the working directory outside one."""
    return project_path("quick-figures" if quick else "figures")


def all_reproductions():
    """``{id: Reproduction}`` for every script of every folder of every installed
    reproduction package (:func:`mpvi.repro.packages.all_folders`): a module not starting
    with ``_`` that defines ``REPRODUCTION``, whose id must be its module name."""
    found = {}
    for folder in all_folders(reproduction_packages()):
        module = importlib.import_module(folder.module)
        for mod in sorted(pkgutil.iter_modules(module.__path__), key=lambda m: m.name):
            if mod.name.startswith("_") or mod.ispkg:
                continue
            script = importlib.import_module(f"{folder.module}.{mod.name}")
            rep = getattr(script, "REPRODUCTION", None)
            if not isinstance(rep, Reproduction):
                continue
            if rep.id != mod.name:
                raise PluginError(f"{folder.module}/{mod.name}.py declares id {rep.id!r}")
            if rep.id in found:
                raise PluginError(f"reproduction id {rep.id!r} is defined twice (folder "
                                  f"{folder.name!r} and an earlier one)")
            rep.module = script.__name__
            found[rep.id] = rep
    return found


def get_reproduction(rid):
    reps = all_reproductions()
    if rid not in reps:
        raise KeyError(unknown_id(rid, reps))
    return reps[rid]


def unknown_id(rid, reps, papers=()):
    """One line for an id that is not one of ``reps`` (nor one of ``papers``, the names
    that select a paper's reproductions): the closest id or paper (:mod:`difflib`), or
    where to find the ids, never the list of all of them."""
    close = difflib.get_close_matches(rid, [*reps, *papers], n=1)
    hint = f"did you mean {close[0]!r}?" if close else "`mpvi list` lists the ids"
    return f"unknown reproduction {rid!r}; {hint}"


def output_paths(rep, out_dir):
    base = Path(out_dir) / rep.paper
    return {"dir": base, "csv": base / f"{rep.id}.csv", "png": base / f"{rep.id}.png",
            "json": base / f"{rep.id}.json"}
