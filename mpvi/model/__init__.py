"""The model: what is integrated, before any method.  The context-free symbolic
derivation of a mechanical system (:mod:`.derivation`), the mechanical system on a context
(:mod:`.mechanics`: :class:`mpvi.LagrangianSystem`), the checks on a user's callables
(:mod:`.callables`), one initial-value problem (:mod:`.problem`) and the singularities a run
must not cross (:mod:`.singular`).

May import: :mod:`mpvi.ground`, :mod:`mpvi.numbers`, :mod:`mpvi.compiled`.
"""
