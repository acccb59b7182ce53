"""Code: the one code generator (:mod:`.codegen`: sympy expressions to straight-line
Python on a context), its translator to C on MPFR (:mod:`.ctranslate`), the C sources of the
compiled modules (:mod:`.cmodules`, the runtime headers in ``csrc/``), their build and
trusted loading (:mod:`.cbackend`) and the compiled Arb ball kernels (:mod:`.carb`).

May import: :mod:`mpvi.ground`, :mod:`mpvi.numbers`.
"""
