"""The mutze reproductions: U. Mutze, "A Simple Variational Integrator for General Holonomic
Mechanical Systems".

A paper folder (docs/guide/extending.md): the scripts ``mutze_<item>.py`` (one per figure
or table, each defining ``REPRODUCTION``), the shared modules ``_mutze*.py``, and the data
mpvi reads for them: ``published/*.csv`` (the printed numbers), ``ERRATA.md``,
``discrepancies.csv`` and ``runtimes.json``.
"""
