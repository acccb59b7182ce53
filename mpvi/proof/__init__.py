"""Proofs: a run walked again on Arb balls (:mod:`.certify`: :func:`mpvi.certify`,
:class:`mpvi.Certificate`).  A proof reads a run by its fields (times, states, the problem,
the method's declaration), so it sits under the driver, which certifies on request and
saves the certificate with the solution.

May import: every layer below it (ground, numbers, compiled, model, engines, methods).
"""
