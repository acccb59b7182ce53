"""One script per published figure or table (``<paper>_<item>.py``); see docs/guide/extending.md.

This package is an mpvi *reproduction package*: pyproject.toml declares it in the entry
point group ``mpvi.reproductions``, through which mpvi finds it (mpvi never imports it
by name).  ``ROOT`` is where mpvi finds the scripts' data: ``published/*.csv`` (the
printed numbers), ``ERRATA.md`` and ``discrepancies.csv``.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent
