"""Analysis of methods and runs: errors, orders, invariants, symplecticity and linear
stability (:mod:`.measures`), the exact one-step map of a trial-function method on the
oscillator (:mod:`.symbolic`), and backward error analysis (:mod:`.modified`: modified
equations, Hamiltonians and Lagrangians) on truncated power series (:mod:`.jets`), and
sparse polynomials such as a modified Hamiltonian's terms evaluated at many points by Horner's
rule on the trie of their exponents (:mod:`.horner`).

May import: every layer below it (ground to drive).
"""
