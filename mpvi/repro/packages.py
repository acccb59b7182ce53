"""The installed reproduction packages: entry point group ``mpvi.reproductions``, each a
package of scripts with its data files (published values, errata, discrepancies, measured
run times).  A layer below :mod:`mpvi.repro.run` (which re-exports these names) and
:mod:`mpvi.repro.runtimes`."""
from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

ENTRY_POINT_GROUP = "mpvi.reproductions"
"""Entry point group of the reproduction packages."""


class PluginError(RuntimeError):
    """No reproduction package is installed, or one is broken."""


@dataclass(frozen=True)
class ReproductionPackage:
    """An installed package of reproduction scripts: the entry point ``name``, the
    importable ``module`` and ``root``, the directory of its data files."""

    name: str
    module: str
    root: Path

    @property
    def published(self):
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


def package_of(rep, packages):
    """The package of ``packages`` (:func:`reproduction_packages`) that defines ``rep``
    (the first one for a reproduction without a module)."""
    for pkg in packages:
        if rep.module and rep.module.startswith(pkg.module + "."):
            return pkg
    return packages[0]
