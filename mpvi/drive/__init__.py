"""The driver and its result: :func:`mpvi.solve` (:mod:`.solve`), :class:`mpvi.Solution`
with its lossless file format (:mod:`.solution`) and the check of a saved proof,
:func:`mpvi.verify` (:mod:`.verification`).

May import: every layer below it (ground to proof, and the papers' systems).
"""
