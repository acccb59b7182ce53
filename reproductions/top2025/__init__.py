"""The top2025 reproductions: Rojas-Quintero, Dubois, Jourdan, "Simpson variational
integrator for nonlinear systems: a tutorial on the Lagrange top" (arXiv 2512.03330).

A paper folder (docs/guide/extending.md): the scripts ``top2025_<item>.py`` (one per figure
or table, each defining ``REPRODUCTION``), the shared modules ``_top2025*.py``, and the data
mpvi reads for them: ``published/*.csv`` (the printed numbers), ``ERRATA.md``,
``discrepancies.csv`` and ``runtimes.json``.
"""
