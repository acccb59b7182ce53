"""The ground floor: what holds no numerics.  The precision boundary (:mod:`.precision`:
a public name leaves the caller's precision as it was; :class:`PrecisionError` for inputs that
would lose digits), atomic files and provenance (:mod:`.io`), the one parser of a closed
grammar that turns text into sympy expressions (:mod:`.expressions`), the names of the
public annotations (:mod:`.types`) and the ``MPVI_*`` environment variables, validated
(:mod:`.environment`).

May import: the standard library, sympy, numpy and :mod:`mpvi._version`; nothing else of mpvi.
"""
