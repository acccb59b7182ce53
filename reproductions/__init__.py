"""The papers' reproductions: a folder per paper, ``<paper>/`` (axioms2024, hermite, mutze,
top2025, and bea for the backward-error-analysis studies); see docs/guide/extending.md.

This package is an mpvi *reproduction package*: pyproject.toml declares it in the entry
point group ``mpvi.reproductions``, through which mpvi finds it (mpvi never imports it
by name).  Each paper folder holds one script per published figure or table
(``<paper>_<item>.py``), its shared modules (``_<paper>*.py``) and its data:
``published/*.csv`` (the printed numbers), ``ERRATA.md``, ``discrepancies.csv`` and
``runtimes.json``.  ``ROOT`` is the directory under which mpvi finds the folders' data
(``ROOT/<paper>/``); ``ERRATA.md`` here is the index of the papers' errata.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent
