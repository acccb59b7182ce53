"""The axioms2024 reproductions: Rojas-Quintero, Dubois, Cabrera-Díaz, *Axioms* 13 (2024)
255.

A paper folder (docs/guide/extending.md): the scripts ``axioms2024_<item>.py`` (one per figure
or table, each defining ``REPRODUCTION``), the shared modules ``_axioms2024*.py``, and the data
mpvi reads for them: ``published/*.csv`` (the printed numbers), ``ERRATA.md``,
``discrepancies.csv`` and ``runtimes.json``.
"""
