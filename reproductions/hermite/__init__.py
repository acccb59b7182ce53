"""The hermite reproductions: Sharma, Patil, Woolsey, "Hermite-based, one-step, variational
and Galerkin time integrators".

A paper folder (docs/guide/extending.md): the scripts ``hermite_<item>.py`` (one per figure
or table, each defining ``REPRODUCTION``), the shared modules ``_hermite*.py``, and the data
mpvi reads for them: ``published/*.csv`` (the printed numbers), ``ERRATA.md``,
``discrepancies.csv`` and ``runtimes.json``.
"""
