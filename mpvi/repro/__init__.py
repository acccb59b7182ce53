"""The reproduction framework, on top of the numerical library: studies (pure, cached
functions of their parameters), the disk cache, parallel runs (process pool, Dask), the
run of reproduction scripts with their outputs and provenance, the diff against published
values, the HTML report, and the ``mpvi`` command line.  ``import mpvi`` does not load it;
the papers' scripts (directory ``reproductions/``, installed as the package
``mpvi_papers``) sit on top of it."""
