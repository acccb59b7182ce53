"""The bea reproductions: Backward error analysis, beyond the four papers (Hairer, Lubich &
Wanner, *Geometric Numerical Integration*, Ch. IX; Vermeeren, *Numer. Math.* 137 (2017)).

A paper folder (docs/guide/extending.md): the scripts ``bea_<item>.py`` (one per figure
or table, each defining ``REPRODUCTION``), the shared modules ``_bea*.py``, and the data
mpvi reads for them: ``published/*.csv`` (the printed numbers), ``ERRATA.md``,
``discrepancies.csv`` and ``runtimes.json``.
"""
