"""The engines a step runs on: the generated Newton kernels of an implicit step
(:mod:`.kernels`), Taylor series by automatic differentiation (:mod:`.taylor`), dense output
between nodes (:mod:`.dense`) and first-order systems with the one RK4 and GBS step
(:mod:`.ode`).  No engine knows a method by name.

May import: :mod:`mpvi.ground`, :mod:`mpvi.numbers`, :mod:`mpvi.compiled`, :mod:`mpvi.model`.
"""
