"""The installed reproduction packages and their folders: entry point group
``mpvi.reproductions``, each a package of scripts with their data files (published
values, errata, discrepancies, measured run times).

A package's scripts live at its top level or in its *paper folders*: sub-packages
(``reproductions/<paper>/``, e.g. ``mpvi_papers.hermite.hermite``), each holding one paper's
scripts, shared modules (``_<paper>*.py``) and data files, so that a new figure touches
one folder.  Every folder, the package's own directory included, is a
:class:`ReproductionFolder`; a reproduction's data are those of the folder of its
script (:func:`folder_of`).  The bottom module of :mod:`mpvi.repro`: it imports no
other."""
from __future__ import annotations

import importlib.metadata
import pkgutil
from dataclasses import dataclass
from pathlib import Path

ENTRY_POINT_GROUP = "mpvi.reproductions"
"""Entry point group of the reproduction packages."""


class PluginError(RuntimeError):
    """No reproduction package is installed, or one is broken."""


@dataclass(frozen=True)
class ReproductionFolder:
    """A folder of reproduction scripts with their data files: ``name`` (the entry point
    name, then ``/<paper>`` for a paper folder), the importable ``module`` and ``root``,
    the directory of its data files."""

    name: str
    module: str
    root: Path

    @property
    def published(self):
        """The printed values (``published/*.csv``, :mod:`mpvi.repro.published`)."""
        return self.root / "published"

    @property
    def errata(self):
        return self.root / "ERRATA.md"

    @property
    def discrepancies(self):
        return self.root / "discrepancies.csv"

    @property
    def runtimes(self):
        """The measured run times of its reproductions (:mod:`mpvi.repro.runtimes`)."""
        return self.root / "runtimes.json"


@dataclass(frozen=True)
class ReproductionPackage(ReproductionFolder):
    """An installed package of reproduction scripts (entry point ``name``): its own
    directory is a folder, and so is each of its sub-packages (:meth:`folders`)."""

    def folders(self):
        """This package's folders: itself, then its sub-packages not starting with ``_``
        by name (data at ``root/<name>``)."""
        found = [self]
        for sub in sorted(pkgutil.iter_modules([str(p) for p in self.paths()]),
                          key=lambda m: m.name):
            if sub.ispkg and not sub.name.startswith("_"):
                found.append(ReproductionFolder(f"{self.name}/{sub.name}",
                                                f"{self.module}.{sub.name}", self.root / sub.name))
        return found

    def paths(self):
        """The directories of the package's modules (its ``__path__``)."""
        module = importlib.import_module(self.module)
        return [Path(p) for p in module.__path__]


def reproduction_packages():
    """The installed reproduction packages (entry point group ``mpvi.reproductions``),
    sorted by entry point name."""
    packages, seen = [], set()
    for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP),
                     key=lambda e: (e.name, e.value)):
        if (ep.name, ep.value) in seen:
            continue
        seen.add((ep.name, ep.value))
        try:
            module = ep.load()
        except Exception as exc:            # any import error of a plugin, named
            raise PluginError(f"reproduction package {ep.name!r} ({ep.value}) cannot be "
                              f"imported: {type(exc).__name__}: {exc}") from None
        if not hasattr(module, "__path__"):
            raise PluginError(f"reproduction package {ep.name!r}: {ep.value} is not a package")
        root = Path(getattr(module, "ROOT", module.__path__[0]))
        packages.append(ReproductionPackage(ep.name, module.__name__, root))
    if not packages:
        raise PluginError(f"no reproduction package is installed (entry point group "
                          f"{ENTRY_POINT_GROUP!r}); install mpvi from its source checkout: "
                          f"pip install -e .")
    return packages


def all_folders(packages):
    """Every folder of ``packages`` (:meth:`ReproductionPackage.folders`), in order."""
    return [f for pkg in packages for f in pkg.folders()]


def folder_of(rep, packages):
    """The folder of ``packages`` whose module holds ``rep``'s script (the first package
    for a reproduction without a module)."""
    parent = rep.module.rpartition(".")[0] if rep.module else None
    for folder in all_folders(packages):
        if folder.module == parent:
            return folder
    return packages[0]
